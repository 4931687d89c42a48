"""--shard and --merge: shards' results join into one run with the same
report, junit and baseline verdict; shards of another matrix or QEMU
build, or a cell twice, are refused."""
import json
import xml.etree.ElementTree as ET

import pytest

from compare import cli, junit, report
from compare_helpers import base_metrics, cell, results


def shard_dirs(tmp_path, qemu2="q1", matrix2="m1", dup=False):
    a, b = tmp_path / "s1", tmp_path / "s2"
    for d in (a, b):
        d.mkdir()
    cells = [cell(i, (0, i, 0, 0), s) for i, s in
             enumerate(("none", "mq-deadline", "bfq", "kyber"))]
    one = results([cells[0], cells[2]], total=4)
    two = results([cells[1], cells[3]] + ([cells[0]] if dup else []),
                  qemu=qemu2, matrix_sha=matrix2, total=4)
    (a / "results.json").write_text(json.dumps(one))
    (b / "results.json").write_text(json.dumps(two))
    return a, b


def test_merge_joins_shards_in_matrix_order(tmp_path):
    a, b = shard_dirs(tmp_path)
    out = tmp_path / "merged"
    out.mkdir()
    res = cli.merge([a, b], out)
    assert [c["index"] for c in res["cells"]] == [0, 1, 2, 3]
    assert res["merged_from"] == [str(a), str(b)]
    assert res["cells"][1]["dir"] == "../s2/cells/c001"


@pytest.mark.parametrize("kw,words", [
    ({"qemu2": "q2"}, "another qemu"), ({"matrix2": "m2"}, "another matrix"),
    ({"dup": True}, "in two shards")])
def test_merge_refuses_what_does_not_belong_together(tmp_path, kw, words):
    a, b = shard_dirs(tmp_path, **kw)
    with pytest.raises(cli.Refused, match=words):
        cli.merge([a, b], tmp_path)


def test_merged_run_reports_and_compares_like_one_run(tmp_path, capsys):
    a, b = shard_dirs(tmp_path)
    out = tmp_path / "merged"
    rc = cli.main(["--merge", str(a), str(b), "--out", str(out)])
    assert rc == 0
    text = (out / "report.md").read_text()
    assert "## Workload `w`" in text and "| none<br>" not in text
    for col in ("none", "mq-deadline", "bfq", "kyber"):
        assert f"| {col} " in text.split("\n## Workload")[1] or col in text
    assert (out / "w1-throughput.png").stat().st_size > 1000
    suite = ET.parse(out / "junit.xml").getroot()
    assert suite.get("tests") == "4" and suite.get("failures") == "0"
    # its own baseline: no change, exit 0
    capsys.readouterr()
    rc = cli.main(["--merge", str(a), str(b), "--out", str(out),
                   "--baseline", str(out / "results.json")])
    assert rc == 0
    assert "no change: 4 cells within 5 % of baseline" in \
        capsys.readouterr().out


def test_merge_with_a_shard_missing_fails(tmp_path, capsys):
    a, _ = shard_dirs(tmp_path)
    rc = cli.main(["--merge", str(a), "--out", str(tmp_path / "m")])
    assert rc == 1
    assert "merged 2 of 4 cells: 2 missing" in capsys.readouterr().out


def test_baseline_of_another_build_exits_2(tmp_path, capsys):
    a, b = shard_dirs(tmp_path)
    other = json.loads((a / "results.json").read_text())
    other["qemu"]["sha256"] = "q9"
    (tmp_path / "old.json").write_text(json.dumps(other))
    rc = cli.main(["--merge", str(a), str(b), "--out", str(tmp_path / "m"),
                   "--baseline", str(tmp_path / "old.json")])
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert "another QEMU build" in err and "\n" not in err


def test_junit_marks_failed_and_moved_cells(tmp_path):
    res = results([cell(0, (0, 0, 0, 0)),
                   cell(1, (0, 1, 0, 0), "cfq", status="failed"),
                   cell(2, (0, 2, 0, 0), "bfq")])
    moved = {res["cells"][2]["id"]: ["iops 100 -> 120 (+20.0 %)"]}
    assert junit.write(tmp_path / "j.xml", res, moved) == 2
    suite = ET.parse(tmp_path / "j.xml").getroot()
    fails = {tc.get("name"): tc.find("failure").get("message")
             for tc in suite if tc.find("failure") is not None}
    assert "cell failed: scheduler cfq" in fails[res["cells"][1]["id"]]
    assert "+20.0 %" in fails[res["cells"][2]["id"]]


def test_report_marks_failed_cells(tmp_path):
    m = base_metrics()
    res = results([cell(0, (0, 0, 0, 0), metrics=m),
                   cell(1, (0, 1, 0, 0), "cfq", status="failed")])
    report.write(tmp_path, res)
    text = (tmp_path / "report.md").read_text()
    assert "| failed |" in text
    assert "Failed: 6.1 | cfq | model=x | w: scheduler cfq is not " \
        "available" in text
