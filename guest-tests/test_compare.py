"""scripts/compare.py end to end on a tiny matrix: two schedulers, one
short workload, run at once (--jobs 2); the outputs are complete; a shard
of the same matrix run again against the first run's results says
"no change" (the cells are deterministic); a scheduler the kernel lacks
fails its cell with one line naming it and the kernel."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import ncqguest

COMPARE = ncqguest.ROOT / "scripts" / "compare.py"


def compare(*args):
    return subprocess.run([sys.executable, str(COMPARE), *map(str, args)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=1800)


def matrix(tmp_path, schedulers, guest_image):
    p = tmp_path / "tiny.toml"
    p.write_text(f"""name = "tiny"
kernels = ["{guest_image}"]
schedulers = {json.dumps(schedulers)}
devices = ["ncq-disk,model=st3400620as"]
workloads = ["random-readers:depth=8"]
duration = 1
""")
    return p


def test_tiny_matrix_end_to_end(tmp_path, guest_image):
    m = matrix(tmp_path, ["none", "mq-deadline:fifo_batch=4"], guest_image)
    first = tmp_path / "first"
    p = compare(m, "--out", first, "--jobs", 2)
    assert p.returncode == 0, p.stdout
    res = json.loads((first / "results.json").read_text())
    assert [c["status"] for c in res["cells"]] == ["ok", "ok"]
    for c in res["cells"]:
        met = c["metrics"]
        assert met["iops"] > 0 and met["commands"] > 0
        assert met["lat_ms"]["p99"] >= met["lat_ms"]["p50"] > 0
        assert c["inputs"]["kernel_release"]
        assert (first / c["dir"] / "device.trace").is_file()
    out = (first / "cells" / "c001" / "output.txt").read_text()
    assert "tunable fifo_batch 4" in out
    assert "[mq-deadline]" in out
    assert len(res["qemu"]["sha256"]) == 64
    report = (first / "report.md").read_text()
    assert "mq-deadline:fifo_batch=4" in report
    assert len(list(first.glob("w1-*.png"))) == 4
    suite = ET.parse(first / "junit.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("2", "0")

    again = compare(m, "--out", tmp_path / "again", "--shard", "1/2",
                    "--baseline", first / "results.json")
    assert again.returncode == 0, again.stdout
    assert "no change: 1 cells within 5 % of baseline" in again.stdout


def test_missing_scheduler_is_one_line(tmp_path, guest_image):
    m = matrix(tmp_path, ["cfq"], guest_image)
    p = compare(m, "--out", tmp_path / "out")
    assert p.returncode == 1, p.stdout
    line = [x for x in p.stdout.splitlines()
            if x.startswith("cell failed:")]
    assert len(line) == 1
    assert "scheduler cfq is not available in kernel 6." in line[0]
    assert "(it offers: " in line[0]
