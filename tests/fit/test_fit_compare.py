"""tools/ncq-fit/fit-compare.py end to end: a model against itself, and
against copies with one parameter changed; its figures against the ones
ncq-sim prints for the same runs.  Short workloads (--reads, --seconds)
keep each run to seconds."""
import json
import re
import subprocess
import sys

import pytest

from fitcmp_fixtures import (  # noqa: F401 (fixtures used by name)
    MODELS, TOOLS, model_copy, ncq_sim, ncq_sim_dir)

SHORT = ["--reads", "20", "--seconds", "5"]
CELLS = 7 * 7       # 5 depths + 2 reader groups, 7 metrics each


def fit_compare(ncq_sim, tmp_path, original, fitted, *extra, plots=False):
    out = tmp_path / "out"
    extra = list(extra) + ([] if plots else ["--no-plots"])
    r = subprocess.run([sys.executable, str(TOOLS / "fit-compare.py"),
                        str(original), str(fitted), "--out", str(out),
                        "--ncq-sim", str(ncq_sim)] + SHORT + list(extra),
                       capture_output=True, text=True, timeout=300)
    return r, out


def outside(stdout):
    """{'table-v d1 IOPS': diff %, ...} of the rows marked OUTSIDE."""
    found, workload = {}, None
    for line in stdout.splitlines():
        if line.startswith("Table V workload"):
            workload = "table-v"
        elif line.startswith("Starvation workload"):
            workload = "starvation"
        w = line.split()
        if w and w[-1] == "OUTSIDE":
            found[f"{workload} {w[0]} {w[1]}"] = float(w[-2])
    return found


def test_a_model_against_itself_passes_with_no_difference(ncq_sim,
                                                          tmp_path):
    r, out = fit_compare(ncq_sim, tmp_path, MODELS / "st3400620as.ncqm",
                         "st3400620as", plots=True)
    assert r.returncode == 0, r.stdout + r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last == f"fit-compare: 0 of {CELLS} cells outside 5 %"
    diffs = re.findall(r" ([+-]\d+\.\d\d) +(within|OUTSIDE)$", r.stdout,
                       re.M)
    assert len(diffs) == CELLS
    assert all(d == ("+0.00", "within") for d in diffs)
    md = (out / "compare.md").read_text()
    pngs = re.findall(r"!\[[^]]*\]\(([^)]+\.png)\)", md)
    assert len(pngs) == 7, md
    for p in pngs:
        assert (out / p).stat().st_size > 5000, p
    assert last in md


def test_no_plots_writes_the_report_without_them(ncq_sim, tmp_path):
    r, out = fit_compare(ncq_sim, tmp_path, "st3400620as", "st3400620as")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not list(out.glob("*.png"))
    assert "![" not in (out / "compare.md").read_text()


def test_seek_times_20_percent_longer_fail_and_name_the_cells(
        ncq_sim, tmp_path, model_copy):
    slow = model_copy("st3400620as", {k: 1.2 for k in
                                      ("a_ms", "b_ms", "c_ms", "e_ms")})
    r, _ = fit_compare(ncq_sim, tmp_path, "st3400620as", slow)
    assert r.returncode == 1, r.stdout + r.stderr
    out = outside(r.stdout)
    # at depth 1 a read is one seek and a rotation: slower seeks cost
    # throughput and lengthen every response time
    assert out.get("table-v d1 IOPS", 0) < -5, out
    assert out.get("table-v d1 mean", 0) > 5, out
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith(f"fit-compare: {len(out)} of {CELLS} cells "
                           "outside 5 %: "), last
    assert "table-v d1 IOPS" in last and "table-v d1 mean" in last


def test_rpm_10_percent_higher_fails_at_depth_1(ncq_sim, tmp_path,
                                                model_copy):
    """A rotation 10 % shorter: depth 1's reads (a seek, half a rotation,
    the transfer) gain about 3 %, caught at a 2 % tolerance."""
    fast = model_copy("st3400620as", {"rpm": 1.1})
    r, _ = fit_compare(ncq_sim, tmp_path, "st3400620as", fast,
                       "--tolerance", "2")
    assert r.returncode == 1, r.stdout + r.stderr
    out = outside(r.stdout)
    assert out.get("table-v d1 IOPS", 0) > 2, out
    assert out.get("table-v d1 mean", 0) < -2, out


def test_halved_starvation_timeout_fails_the_far_reads(ncq_sim, tmp_path,
                                                       model_copy):
    half = model_copy("fujitsu-max3036rc", {"starvation_timeout_ms": 0.5})
    r, _ = fit_compare(ncq_sim, tmp_path, "fujitsu-max3036rc", half)
    assert r.returncode == 1, r.stdout + r.stderr
    out = outside(r.stdout)
    # the far read waits for the time-out: half of it, half the wait
    for metric in ("max", "p99.9"):
        assert -55 < out.get(f"starvation far {metric}", 0) < -45, out
    last = r.stdout.strip().splitlines()[-1]
    assert "starvation far max" in last and "starvation far p99.9" in last


def test_bad_model_is_one_line_and_status_2(ncq_sim, tmp_path):
    r, _ = fit_compare(ncq_sim, tmp_path, "st3400620as",
                       tmp_path / "missing.ncqm")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"fit-compare: {tmp_path / 'missing.ncqm'}: no such model file "
        "(give the path of an .ncqm file, or a built-in model name such "
        "as st3400620as)"]
    bad = tmp_path / "bad.ncqm"
    bad.write_text("[drive]\nname = x\n")
    r, _ = fit_compare(ncq_sim, tmp_path, bad, "st3400620as")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fit-compare: ncq-sim:")


def test_metrics_choose_the_cells_and_compare_json_holds_them(ncq_sim,
                                                             tmp_path,
                                                             model_copy):
    half = model_copy("fujitsu-max3036rc", {"starvation_timeout_ms": 0.5})
    r, out = fit_compare(ncq_sim, tmp_path, "fujitsu-max3036rc", half,
                         "--metrics", "IOPS,p50")
    assert r.returncode == 1, r.stdout + r.stderr
    cells = json.loads((out / "compare.json").read_text())
    assert len(cells) == 7 * 2
    assert {c["metric"] for c in cells} == {"IOPS", "p50"}
    far = {c["metric"]: c for c in cells if c["series"] == "far"}
    assert not far["p50"]["within"] and far["p50"]["diff_pct"] < -45
    assert r.stdout.strip().splitlines()[-1].startswith(
        f"fit-compare: {sum(not c['within'] for c in cells)} of 14 cells")


@pytest.mark.parametrize("args, message", [
    (["--metrics", "p50,p95"], "--metrics p95: choose among "),
    (["--tolerance", "-1"], "--tolerance must be >= 0"),
    (["--runs", "0"], "--runs >= 1"),
])
def test_bad_arguments_are_one_line_and_status_2(ncq_sim, tmp_path, args,
                                                 message):
    r, out = fit_compare(ncq_sim, tmp_path, "st3400620as", "st3400620as",
                         *args)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert not out.exists()




def _printed(ncq_sim, model, args):
    """ncq-sim's own host-latency figures of a run: mean, p50, p90, p99,
    max (ms, as printed) and IOPS."""
    p = subprocess.run([str(ncq_sim), "--model", model] + args,
                       capture_output=True, text=True, check=True)
    lat = re.search(r"^latency ms +mean (\S+) +p50 (\S+) +p90 (\S+) +p99 "
                    r"(\S+) +max (\S+)", p.stdout, re.M)
    iops = re.search(r"^throughput +(\S+) IOPS", p.stdout, re.M)
    return [float(x) for x in lat.groups()] + [float(iops.group(1))]


@pytest.mark.parametrize("model", ["st3400620as", "fujitsu-max3036rc"])
def test_response_times_are_ncq_sims_own(ncq_sim, model):
    """The host response times fit-compare reconstructs from the trace
    give the figures ncq-sim prints for the same run, at every depth of
    Table V and for the starvation workload."""
    import fit_compare as fc
    fw = fc.fw
    runs = fw.table_v(model, [3], 50, ncq_sim) + \
        fw.starvation(model, [3], 8, ncq_sim)
    checked = 0
    for s in runs:
        if s.workload == "starvation" and s.key == "far":
            continue        # ncq-sim prints the whole run's figures only
        mine = list(s.latencies_ns)
        if s.workload == "starvation":
            mine += runs[-1].latencies_ns
        f = fc.figures(fw.Series(s.workload, s.key, s.label, mine, 0, ""))
        want = _printed(ncq_sim, model, ["--seed", "3"] + s.command.split())
        got = [f["mean"], f["p50"], f["p90"], f["p99"], f["max"]]
        assert [round(x, 2) for x in got] == want[:5], s.key
        if s.workload == "table-v":
            assert round(s.iops, 1) == want[5], s.key
        checked += 1
    assert checked == 6
