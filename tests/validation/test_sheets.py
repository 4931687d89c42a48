"""The validation sheets (docs/validation/README.md): each figure of each
model's figures file within its tolerance, one test per row; a figure the
model cannot reach names its reason; every source exists; every committed
sheet is what `scripts/validation-sheets.sh` writes now."""
import re
import subprocess

import pytest

from repopaths import ROOT

FIGDIR = ROOT / "docs" / "validation" / "figures"
SHEETDIR = ROOT / "docs" / "validation"


def fig_rows(path):
    """(line, words) of each figure of a figures file: the lines that are
    neither blank nor a # comment."""
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        s = line.strip()
        if s and not s.startswith("#"):
            yield n, s.split()


def _params():
    out = []
    for fig in sorted(FIGDIR.glob("*.fig")):
        for n, w in fig_rows(fig):
            tol = w[3] if len(w) > 3 else "?"
            out.append(pytest.param(fig.stem, n, w[0],
                                    id=f"{fig.stem}:{w[0]}:{tol}"))
    return out


@pytest.mark.parametrize("model,line,key", _params())
def test_figure(model, line, key, validated):
    """Within its tolerance, or, when the model cannot reach it, with the
    reason."""
    row = validated(model)[line]
    where = f"docs/validation/figures/{model}.fig:{line}"
    assert row["key"] == key
    if row["tolerance_pct"] is None:
        assert row["note"].strip(), f"{where}: {key} is unreachable " \
            "without a reason (-- NOTE)"
        return
    mv, pub, tol = row["model_value"], row["published"], row["tolerance_pct"]
    assert mv is not None, f"{where}: no model value for {key}"
    err = (mv / pub - 1) * 100
    assert abs(err) <= tol, (
        f"{where}: {model} {key} = {mv:.6g} {row['unit']}, published "
        f"{pub:g} ({row['source']}): {err:+.2f} %, tolerance {tol:g} %")


def slug(heading):
    """GitHub's anchor for a heading (as tests/repo/test_docs.py)."""
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", s).replace(" ", "-")


def test_every_source_exists():
    """A SOURCE is a repository path, with an #anchor of a Markdown
    page's section."""
    bad = []
    for fig in sorted(FIGDIR.glob("*.fig")):
        for n, w in fig_rows(fig):
            if len(w) < 5:
                bad.append(f"{fig.name}:{n}: no SOURCE")
                continue
            path, _, frag = w[4].partition("#")
            full = ROOT / path
            if not full.is_file():
                bad.append(f"{fig.name}:{n}: {path} does not exist")
            elif frag:
                text = re.sub(r"```.*?```", "", full.read_text("utf-8"),
                              flags=re.S)
                heads = {slug(h) for h in re.findall(r"^#+\s+(.*)$", text,
                                                     re.M)}
                if frag not in heads:
                    bad.append(f"{fig.name}:{n}: {w[4]}: no such section")
    assert not bad, "\n".join(bad)


def test_every_model_has_a_figures_file(ncq_sim_dir):
    out = subprocess.run([str(ncq_sim_dir / "ncq-sim"), "--list-models"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    models = [m for m in re.split(r"[,\s]+", out) if m]
    assert models
    missing = [m for m in models if not (FIGDIR / f"{m}.fig").exists()]
    assert not missing, ("no docs/validation/figures/NAME.fig for "
                         + ", ".join(missing))


def test_sheets_are_current(ncq_sim_dir, tmp_path):
    """Each committed docs/validation/MODEL.md is what the command writes
    now, and no sheet is left of a model without a figures file."""
    r = subprocess.run([str(ncq_sim_dir / "ncq-sim"), "--validate", "all",
                        "--out", str(tmp_path)], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr.strip()
    fresh = {p.name for p in tmp_path.glob("*.md")}
    committed = {p.name for p in SHEETDIR.glob("*.md")} - {"README.md"}
    assert fresh, "the command wrote no sheet"
    stale = sorted(n for n in fresh
                   if not (SHEETDIR / n).exists()
                   or (SHEETDIR / n).read_text("utf-8")
                   != (tmp_path / n).read_text("utf-8"))
    assert not stale and committed == fresh, (
        f"sheets differ from the command's: {', '.join(stale)}; sheets of "
        f"no figures file: {', '.join(sorted(committed - fresh))}; "
        "regenerate with scripts/validation-sheets.sh")
