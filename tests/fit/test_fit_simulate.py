"""tools/ncq-fit/ncqfit_sim.py's simulate(): requests replayed through a
model in ncq-sim, one response time per request, in the caller's order."""
import random
import re

import pytest

from fitcmp_fixtures import (  # noqa: F401 (fixtures used by name)
    MODELS, model_value, ncq_sim, ncq_sim_dir)
import ncqfit_sim as ns

SECTOR = 512


def layout_rates(model):
    """(raw, sustained) media rate of the model's outer zone in bytes/s,
    from its parameter file: a revolution passes outer_spt sectors; a
    cylinder's worth of data (heads tracks) also waits heads - 1 track
    skews and one cylinder skew (fractions of a revolution)."""
    text = (MODELS / f"{model}.ncqm").read_text()
    rev_s = 60.0 / model_value(text, "rpm")
    spt = model_value(text, "outer_spt")
    heads = model_value(text, "heads")
    revs = heads + (heads - 1) * model_value(text, "track_skew") + \
        model_value(text, "cyl_skew")
    return spt * SECTOR / rev_s, heads * spt * SECTOR / (revs * rev_s)


@pytest.mark.parametrize("model", ["st3400620as", "fujitsu-max3036rc"])
def test_sequential_reads_at_depth_1_run_at_the_media_rate(ncq_sim, model):
    size = 256                               # 128 KiB reads
    n = 600                                  # 75 MiB, in the outer zone
    reqs = [{"op": "R", "lba": i * size, "sectors": size} for i in range(n)]
    lat = ns.simulate(MODELS / f"{model}.ncqm", reqs, seed=1, depth=1,
                      sim=ncq_sim)
    assert len(lat) == n and all(isinstance(x, int) for x in lat)
    raw, sustained = layout_rates(model)
    nbytes = size * SECTOR
    # none beats the platter passing under the head ...
    assert min(lat[1:]) >= nbytes / raw * 1e9 * 0.99, (min(lat), raw)
    # ... and together they stream at the layout's sustained rate
    mean_s = sum(lat[1:]) / (n - 1) / 1e9
    assert nbytes / mean_s == pytest.approx(sustained, rel=0.02)


def test_response_times_are_in_the_callers_order(ncq_sim):
    size = 256
    reqs = [(0, "R", i * size, size) for i in range(100)]
    far = 700000000                          # near the disk's end
    reqs[40] = (0, "R", far, size)
    lat = ns.simulate("st3400620as", reqs, seed=1, depth=1, sim=ncq_sim)
    # the jump out and the one back each pay a long seek
    slow = sorted(range(100), key=lambda i: -lat[i])[:3]
    assert sorted(slow) == [0, 40, 41], [lat[i] for i in slow]
    assert lat[40] > 5e6 and lat[41] > 5e6 and lat[39] < 3e6


def test_depth_keeps_that_many_commands_in_the_drive(ncq_sim):
    """Random reads all issued at 0: at depth 1 each waits for nothing but
    its own access; at depth 8 the drive reorders 8 at a time, so each
    waits behind others (longer responses) while more complete per second
    (the time of the last completion falls)."""
    draw = random.Random(5)
    reqs = [(0, "R", draw.randrange(0, 700000000, 8), 8) for _ in range(400)]
    d1 = ns.simulate("st3400620as", reqs, seed=2, depth=1, sim=ncq_sim)
    d8 = ns.simulate("st3400620as", reqs, seed=2, depth=8, sim=ncq_sim)
    assert sum(d8) / len(d8) > 4 * sum(d1) / len(d1)
    # the run lasts the sum of the responses at depth 1, and about an
    # eighth of it at depth 8 (8 in the drive all along, but the last few)
    assert sum(d8) / 8 < 0.8 * sum(d1)


def test_time_ns_delays_a_request(ncq_sim):
    """A request may not be issued before its time_ns: issued 1 s in,
    after the others are done, it meets an idle drive; issued at 0 with
    them, it waits while SPTF serves the near ones first."""
    reqs = [(0, "R", i * 4096, 8) for i in range(20)]
    alone = (10 ** 9, "R", 500000000, 8)
    with_wait = ns.simulate("st3400620as", reqs + [alone], seed=1, depth=32,
                            sim=ncq_sim)
    queued = ns.simulate("st3400620as", reqs + [(0,) + alone[1:]], seed=1,
                         depth=32, sim=ncq_sim)
    assert with_wait[20] < 30e6         # one seek and rotation, no queue
    assert queued[20] > 2 * with_wait[20]   # behind the 20 near ones


@pytest.mark.parametrize("reqs, message", [
    ([(5, "R", 0, 8), (4, "R", 8, 8)], "time_ns 4 before"),
    ([(0, "X", 0, 8)], "op 'X'"),
    ([(0, "R", -1, 8)], "must be >= 0"),
    ([(0, "R", 0)], "expected (time_ns, op, lba, sectors[, prio])"),
])
def test_bad_requests_are_refused(reqs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ns.simulate("st3400620as", reqs)


def test_a_request_beyond_the_disk_is_ncq_sims_error(ncq_sim):
    with pytest.raises(ns.SimError, match="rejected"):
        ns.simulate("st3400620as", [(0, "R", 10 ** 12, 8)], sim=ncq_sim)
