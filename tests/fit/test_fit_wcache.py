"""ncqfit/wcache.py: the write cache's size from a burst of writes, the
probe's wcache experiment (tools/ncq-fit/probe-wcache.c) replayed through
ncq-sim: a FLUSH, then 64 KiB writes at depth 1 to places far apart."""
import random
import re

import pytest

from fitcmp_fixtures import (  # noqa: F401 (fixtures used by name)
    MODELS, model_copy, model_value, ncq_sim, ncq_sim_dir)
import ncqfit_sim as ns
from ncqfit import wcache

WRITE_SECTORS = 128
HOST_NS = 20000              # the probe's own time between two writes


def burst_record(sim, model_path, capacity, writes=256, seed=1):
    """The probe's wcache record for the burst, timed by ncq-sim."""
    rng = random.Random(seed)
    span = (capacity - WRITE_SECTORS) // writes
    lbas = [(span * i + rng.randrange(span // 2)) & ~(WRITE_SECTORS - 1)
            for i in range(writes)]
    rng.shuffle(lbas)
    reqs = [{"op": "F", "lba": 0, "sectors": 0}]
    reqs += [{"op": "W", "lba": x, "sectors": WRITE_SECTORS} for x in lbas]
    lat = ns.simulate(model_path, reqs, seed=seed, depth=1,
                      host_delay_ns=HOST_NS, sim=sim)[1:]
    start, t = [], 0
    for x in lat:
        start.append(t)
        t += x + HOST_NS
    return {"type": "wcache", "write_kib": 64, "writes": writes,
            "start_ns": start, "r_ns": lat}


@pytest.mark.parametrize("model,factor", [
    ("st3400620as", 1), ("fujitsu-max3036rc", 1), ("st3400620as", 2),
    ("st3400620as", 0.25)])
def test_write_cache_size_recovered(model, factor, model_copy, ncq_sim):
    path = model_copy(model, {"write_cache_kib": factor})
    # the probe measures only a cache that is on (fujitsu's is off)
    text = re.sub(r"^write_cache\s*=\s*off", "write_cache = on",
                  path.read_text(), flags=re.M)
    path.write_text(text)
    want = model_value(text, "write_cache_kib")
    rev_ns = 60e9 / model_value(text, "rpm")
    rec = burst_record(ncq_sim, path, int(model_value(text, "capacity")))
    kib, how = wcache.fit_write_cache([rec], rev_ns)
    # within 5 %, or one write when the cache holds few
    assert abs(kib - want) <= max(0.05 * want, 64), (kib, want, how)
    assert "before the first wait" in how


def test_a_burst_the_cache_holds_gives_nothing(ncq_sim):
    # 48 writes of 64 KiB fit in st3400620as's 4 MiB
    path = MODELS / "st3400620as.ncqm"
    rec = burst_record(ncq_sim, path, int(model_value(path.read_text(),
                                                      "capacity")), writes=48)
    assert wcache.fit_write_cache([rec], 60e9 / 7200) is None


def test_first_wait_is_relative_to_the_fastest():
    rev = 8.33e6
    # a slow link: every write takes 6 ms, the cache fills at the fourth
    assert wcache.first_wait([6e6, 6e6, 6e6, 15e6, 14e6], rev) == 3
    assert wcache.first_wait([6e6, 6e6, 6e6], rev) is None
