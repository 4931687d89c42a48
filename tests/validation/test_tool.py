"""ncq-sim --validate itself: the sheet reports rows outside their
tolerance without failing; a bad figures file gets one line naming the
file, the line and the fix, and no sheet."""
import json
import subprocess

import pytest

SRC = "docs/published-figures.md#yu-et-al-2010"


def validate(ncq_sim_dir, tmp_path, text, *extra):
    fig = tmp_path / "t.fig"
    fig.write_text(text)
    return subprocess.run([str(ncq_sim_dir / "ncq-sim"), "--validate",
                           "st3400620as", "--figures", str(fig), *extra],
                          cwd=tmp_path, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)


def test_outside_is_reported_not_failed(ncq_sim_dir, tmp_path):
    r = validate(ncq_sim_dir, tmp_path,
                 f"# a comment\n\nrpm 5400 rpm 1% {SRC}\n"
                 f"rpm 7200 rpm 0% {SRC}\n"
                 f"idle_watts 7 W none {SRC} -- no power model\n", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert [(x["line"], x["verdict"]) for x in rows] == [
        (3, "outside"), (4, "within"), (5, "unreachable")]
    assert rows[0]["model_value"] == 7200
    assert rows[2]["model_value"] is None
    assert rows[2]["note"] == "no power model"


def test_sheet_is_markdown_with_the_summary(ncq_sim_dir, tmp_path):
    r = validate(ncq_sim_dir, tmp_path, f"rpm 5400 rpm 1% {SRC}\n",
                 "--out", "s.md")
    assert r.returncode == 0 and r.stdout == "", r.stderr
    text = (tmp_path / "s.md").read_text()
    assert "| `rpm` | 5400 rpm | 7200 rpm | +33.3 % | 1 % | outside |" \
        in text
    assert "0 within tolerance, 1 outside, 0 unreachable." in text


@pytest.mark.parametrize("text,msg", [
    ("rpm 7200 rpm\n", "expected KEY VALUE UNIT TOLERANCE SOURCE"),
    (f"rpm fast rpm 0% {SRC}\n", "VALUE must be a positive number"),
    (f"rpm 7200 rpm 2 {SRC}\n", "TOLERANCE must be a percentage"),
    (f"rpm 7200 rpm none {SRC}\n", "rpm has tolerance none but no reason"),
    (f"speed 7200 rpm 1% {SRC}\n", "unknown key 'speed'"),
    (f"rpm 120 Hz 1% {SRC}\n", "rpm is in rpm, not 'Hz'"),
    (f"rpm 7200 rpm 1% {SRC} because\n", "only '-- NOTE' may follow"),
    ("# nothing\n", "no figures in the file"),
])
def test_bad_figures_file(ncq_sim_dir, tmp_path, text, msg):
    r = validate(ncq_sim_dir, tmp_path, "\n" + text, "--out", "s.md")
    assert r.returncode == 2
    lines = r.stderr.strip().split("\n")
    assert len(lines) == 1 and "t.fig:" in lines[0] and msg in lines[0], \
        r.stderr
    assert not (tmp_path / "s.md").exists()


def test_missing_figures_file_names_the_fix(ncq_sim_dir, tmp_path):
    r = subprocess.run([str(ncq_sim_dir / "ncq-sim"), "--validate",
                        "st3400620as"], cwd=tmp_path, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    assert r.returncode == 2
    assert "docs/validation/figures/st3400620as.fig" in r.stderr
    assert "--figures FILE" in r.stderr


def test_a_key_a_model_cannot_give(ncq_sim_dir, tmp_path):
    fig = tmp_path / "t.fig"
    fig.write_text(f"avg_seek_ms 0.1 ms 5% {SRC}\n")
    r = subprocess.run([str(ncq_sim_dir / "ncq-sim"), "--validate",
                        "intel-530", "--figures", str(fig)], cwd=tmp_path,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    assert r.returncode == 2
    assert "avg_seek_ms cannot be computed for intel-530: the model is " \
        "not a hard disk" in r.stderr
