"""ncq-fit's round trip (issue 16, docs/ncq-fit.md): the probe runs in a
guest against ncq-disk emulating a shipped model, ncq-fit fits its
samples on the host, and the fitted model must give back the original's
figures within the issue's tolerances.  The fit sees only the samples;
the original model file is read here, by the test, to compare.

- rpm within 0.5 %;
- every zone's media rate (a stream's, at the middle of each original
  zone) within 3 %;
- the seek profile within 5 % (median over the sampled distances of the
  positioning time between the measured LBA pairs: seek or head switch
  plus the mean settle jitter, which is what a pair of reads sees);
- the starvation time-out within 2 %; the policy class (FCFS or SPTF);
- the device's trace shows the probe's queue at depth 32 reaching the
  drive (31 queued behind the one being served);
- the fitted model in ncq-sim (tools/ncq-fit/fit-compare.py) on the
  Table V and the starvation workloads within 5 % of the original's
  throughput, mean and latency percentiles up to p99 (four seeds pooled)
  for the full budget, within 10 % for the short one.

The README's test command runs st3400620as and fujitsu-max3036rc with a
short budget; NCQ_LONG_SCENARIOS=1 adds every shipped hard-disk model
and the full 30-minute budget.
"""
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from ncqguest import Guest, Workload, read_trace

ROOT = Path(__file__).resolve().parent.parent
FIT_DIR = ROOT / "tools/ncq-fit"
from ncqfit import layout
from ncqfit import fit as ncqfit_fit, samples as ncqfit_samples

MODELS = ROOT / "hw/ide/ncq-model/models"
LONG = os.environ.get("NCQ_LONG_SCENARIOS") == "1"
SHORT_MINUTES = 3
FULL_MINUTES = 30
# fit-compare's tolerance for a short budget's coarse fit, in %: its SPTF
# costs come from a few hundred reads per depth, and the starvation
# workload's near readers' p50 moves 3 % per 0.1 ms of the planned settle
# (st3400620as); the full budget is held to the 5 %
SHORT_TOLERANCE = 10
# every shipped hard-disk model (intel-530 is the one SSD) but the
# host-managed ones, whose zones refuse the probe's random reads, and the
# drive-managed SMR ones, whose media cache the probe's writes would fill
# (a fit of a conventional drive cannot describe it, docs/smr.md)
SHIPPED_HDDS = sorted(p.stem for p in MODELS.glob("*.ncqm")
                      if p.stem != "intel-530" and
                      "[zones]" not in p.read_text() and
                      "[media_cache]" not in p.read_text())


def _cases():
    cases = [(m, SHORT_MINUTES) for m in ("st3400620as",
                                          "fujitsu-max3036rc")]
    if LONG:
        cases += [(m, FULL_MINUTES) for m in SHIPPED_HDDS]
    return cases


SCRIPT = """
ncq-fit-probe /dev/sda --minutes {minutes} --allow-writes \
    --out /results/samples.jsonl
echo "probe-rc $?"
"""


def _run(model, minutes, tmp):
    orig = layout.load(MODELS / f"{model}.ncqm")
    trace = tmp / "trace.csv"
    # the model file's write cache state, which the fit must read back
    # from IDENTIFY (the device's default since write-cache=auto means
    # the model's; given explicitly all the same)
    wc = _key((MODELS / f"{model}.ncqm").read_text(), "write_cache")
    g = Guest(tmp / "guest", device=f"ncq-disk,model={model},"
              f"trace={trace},write-cache={wc}",
              disk_size=str(orig.capacity * 512),
              timeout_s=3600 if minutes > 5 else 900)
    res = g.run(Workload(script=SCRIPT.format(minutes=minutes)))
    assert "probe-rc 0" in res.output, res.output + g.tail()
    samples = tmp / "samples.jsonl"
    samples.write_bytes(res.files["samples.jsonl"])
    host_us = _host_us(samples, trace)
    out = tmp / "fit"
    r = subprocess.run([sys.executable, str(FIT_DIR / "ncq-fit"), "fit",
                        str(samples), "--out", str(out), "--name",
                        f"fit-{model}", "--host-us", f"{host_us:.1f}"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    fitted = out / f"fit-{model}.ncqm"
    return dict(orig_path=MODELS / f"{model}.ncqm", orig=orig,
                minutes=minutes,
                fitted_path=fitted, fitted=layout.load(fitted),
                text=fitted.read_text(), samples=samples, trace=trace,
                wall=res.wall_s, out=out, host_us=host_us)


def _host_us(samples, trace):
    """The guest's own time per command (block layer, AHCI, interrupt),
    which ncq-fit cannot tell from the drive's (docs/ncq-fit.md,
    --host-us): a 4 KiB buffer hit's response as the probe measured it in
    the guest, less the same hits' time in the drive, arrival to
    completion in the device's trace (every such hit takes the same
    time there: the hit overhead and the transfer)."""
    f = ncqfit_fit.fit(ncqfit_samples.load(samples))
    _, recs = read_trace(trace)
    drive = [r["complete_ns"] - r["arrival_ns"] for r in recs
             if r["op"] == "R" and r["cache"] == "hit" and r["sectors"] == 8]
    assert f.data.get("hit_ns") and drive, "no 4 KiB buffer hits measured"
    return (f.data["hit_ns"] - statistics.median(drive)) / 1e3


@pytest.fixture(scope="module", params=_cases(),
                ids=lambda c: f"{c[0]}-{c[1]}min")
def trip(request, tmp_path_factory):
    model, minutes = request.param
    tmp = tmp_path_factory.mktemp(f"fit-{model}-{minutes}")
    t = _run(model, minutes, tmp)
    print(f"\nncq-fit round trip {model} {minutes} min: guest run "
          f"{t['wall']:.0f} s wall")
    return t


def _key(text, key):
    for line in text.splitlines():
        if line.split("=")[0].strip() == key:
            return line.split("=", 1)[1].split("#")[0].strip()
    raise KeyError(key)


def test_rpm(trip):
    o, f = trip["orig"].rpm, trip["fitted"].rpm
    assert abs(f - o) / o <= 0.005, (o, f)


def test_zone_rates(trip):
    o, f = trip["orig"], trip["fitted"]
    errs = []
    for z in o.zones:
        mid = z["first_lba"] + z["lbas"] // 2
        if mid >= o.capacity:
            continue
        errs.append((mid, o.rate_at(mid) / 1e6, f.rate_at(mid) / 1e6))
    worst = max(abs(b - a) / a for _, a, b in errs)
    assert worst <= 0.03, errs


def test_hit_overhead(trip):
    # with the host's share given (--host-us), the drive's own: within
    # 20 us (old SCSI drives spend 0.3 to 1.4 ms on a hit, SATA ones
    # 0.05 to 0.1)
    o = float(_key(trip["orig_path"].read_text(), "read_hit_ms"))
    f = float(_key(trip["text"], "read_hit_ms"))
    assert 10 <= trip["host_us"] <= 500, trip["host_us"]
    ob, fb = trip["orig"].bus_bps, trip["fitted"].bus_bps
    if abs(fb - ob) > 0.1 * ob:
        # a hit's 4 KiB over the bus is part of its response: with the
        # bus not found, that time is taken for the drive's overhead
        # (quantum-atlas-iii's 4.83 MB/s bus, 0.85 ms a hit)
        pytest.xfail(f"the bus was not measured ({ob / 1e6:g} MB/s, "
                     f"fitted {fb / 1e6:g})")
    assert abs(f - o) <= 0.02, (o, f, trip["host_us"])


def test_seek_profile(trip):
    import json
    o, f = trip["orig"], trip["fitted"]
    pairs = set()
    for line in trip["samples"].read_text().splitlines():
        r = json.loads(line)
        if r["type"] == "seek" and r["a"] != r["b"]:
            pairs.add((r["a"], r["b"]))
    # pairs on one track of the original (a distance shorter than its
    # track) cost it no positioning: nothing to compare a ratio with
    moving = [(a, b) for a, b in pairs if o.positioning_ns(a, b) > 0]
    assert len(moving) >= 0.8 * len(pairs)
    errs = sorted(abs(f.positioning_ns(a, b) / o.positioning_ns(a, b) - 1)
                  for a, b in moving)
    assert len(errs) >= 10
    assert statistics.median(errs) <= 0.05, errs


def test_policy_and_starvation(trip):
    o_text = trip["orig_path"].read_text()
    text = trip["text"]
    o_pol = _key(o_text, "policy")
    cls = {"fcfs": "fcfs"}.get(o_pol, "sptf")
    assert _key(text, "policy") == cls
    try:
        o_to = float(_key(o_text, "starvation_timeout_ms"))
    except KeyError:
        o_to = 0.0          # an FCFS drive's file: nothing starves
    f_to = float(_key(text, "starvation_timeout_ms"))
    if cls == "sptf" and o_to:
        assert abs(f_to - o_to) / o_to <= 0.02, (o_to, f_to)


def test_write_cache_and_capacity(trip):
    o_text, text = trip["orig_path"].read_text(), trip["text"]
    assert _key(text, "write_cache") == _key(o_text, "write_cache")
    assert int(_key(text, "capacity")) == trip["orig"].capacity


def test_write_cache_size(trip):
    """--allow-writes: the write cache's size, measured when it is on;
    the default, and the reason in the report, when it is off."""
    o_text, text = trip["orig_path"].read_text(), trip["text"]
    want = float(_key(o_text, "write_cache_kib"))
    got = float(_key(text, "write_cache_kib"))
    line = next(ln for ln in text.splitlines()
                if ln.split("=")[0].strip() == "write_cache_kib")
    orig = trip["orig"]
    link_ns = 65536 / orig.bus_bps * 1e9
    if _key(o_text, "write_cache") == "on" and link_ns > orig.rev_ns / 2:
        # a link slower than half a turn per 64 KiB (DiskSim's SCSI-era
        # buses): the drive destages a far place before the next write
        # arrives, so the burst cannot fill the cache
        assert "never filled" in line, (link_ns, line)
    elif _key(o_text, "write_cache") == "on":
        # the burst's writes to far places are separate extents, and the
        # model keeps up to 128 (docs/model.md): that many 64 KiB writes
        # fill a larger cache (seagate-exos-x18's 128 MiB)
        want = min(want, 128 * 64)
        assert abs(got - want) <= max(0.05 * want, 64), (want, line)
        assert "before the first wait" in line, line
    else:
        assert "default" in line, line
        rep = (trip["out"] / "report.md").read_text()
        assert "the write cache is off" in rep


def test_queue_reaches_the_drive(trip):
    _, recs = read_trace(trip["trace"])
    assert max(r["queue_len"] for r in recs) >= 30


def test_report(trip):
    rep = (trip["out"] / "report.md").read_text()
    assert "## Could not measure" in rep
    for png in ("seek.png", "zones.png", "cdf.png"):
        assert (trip["out"] / png).stat().st_size > 1000


def test_fitted_model_in_ncq_sim(trip):
    tool = FIT_DIR / "fit-compare.py"
    if not tool.exists():
        pytest.skip("tools/ncq-fit/fit-compare.py not on this branch")
    # sixteen seeds pooled; throughput, mean and the percentiles up to p99
    # (the maximum and p99.9 are a handful of samples: they differ by more
    # than 5 % between two seeds of the same model).  With four seeds p99
    # itself moved by up to 5.3 % from one set of seeds to the next on the
    # same model, as much as the tolerance; with sixteen, by up to 2.7 %
    # (docs/ncq-fit.md, "What the comparison can tell")
    o = trip["orig"]
    if o.bus_bps < o.zone_rate(o.zones[0]):
        # the drive's own interface is slower than its media: every stream
        # runs at the interface's rate, so the zones (and with them the
        # media's share of a read) cannot be measured from the host
        # (docs/ncq-fit.md, "What is measured, and how"); quantum-atlas10k's
        # 5.2 MB/s bus
        pytest.xfail("the interface is slower than the media")
    tol = "5" if trip["minutes"] >= FULL_MINUTES else str(SHORT_TOLERANCE)
    r = subprocess.run([sys.executable, str(tool), str(trip["orig_path"]),
                        str(trip["fitted_path"]), "--runs", "16",
                        "--tolerance", tol,
                        "--metrics", "IOPS,p50,p90,p99,mean", "--out",
                        str(trip["out"] / "fit-compare")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


REFUSE_SCRIPT = r"""
D=/dev/sda
ncq-fit-probe $D --minutes 1 2>/results/short.err; echo "short $?"
printf 'o\nn\np\n1\n\n+64M\nw\n' | fdisk $D >/dev/null 2>&1
sleep 1
ncq-fit-probe /dev/sda1 --minutes 2 2>/results/part.err; echo "part $?"
mkdir -p /mnt
if mke2fs -q /dev/sda1 >/dev/null 2>&1 && mount /dev/sda1 /mnt; then
    ncq-fit-probe $D --minutes 2 2>/results/mounted.err; echo "mounted $?"
    umount /mnt
fi
if mdadm --build /dev/md9 --level=1 --force --raid-devices=1 /dev/sda1 \
        >/dev/null 2>&1; then
    ncq-fit-probe $D --minutes 2 2>/results/held.err; echo "held $?"
    ncq-fit-probe $D --minutes 2 --force --phases identify \
        --out /results/forced.jsonl 2>/dev/null; echo "forced $?"
    mdadm --stop /dev/md9 >/dev/null 2>&1
fi
"""


def test_probe_refuses_in_the_guest(tmp_path):
    """A budget too short, a partition, a mounted disk and a disk an md
    array holds: one line each and a non-zero exit; --force measures the
    held disk anyway (reads only)."""
    g = Guest(tmp_path / "guest", device="ncq-disk,model=st3400620as",
              disk_size="1G")
    res = g.run(Workload(script=REFUSE_SCRIPT))
    status = dict(line.split() for line in res.output.splitlines()
                  if len(line.split()) == 2 and line.split()[1].isdigit())
    err = {k: res.files.get(f"{k}.err", b"").decode().strip().splitlines()
           for k in ("short", "part", "mounted", "held")}
    assert status["short"] == "2" and len(err["short"]) == 1
    assert status["part"] == "1" and "is a partition" in err["part"][0]
    assert "mounted" in status or "held" in status, res.output
    for k in ("mounted", "held"):
        if k in status:
            assert status[k] == "1" and len(err[k]) == 1, (k, err[k])
            assert "in use" in err[k][0]
    if "held" in status:
        assert status["forced"] == "0"
        assert b'"type":"identify"' in res.files["forced.jsonl"]
