"""scripts/model-bytes.sh: the disk size the suite runners and the fuzzer
give a model, read from the model file (one place, not a copied number)."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "model-bytes.sh"
MODELS = ROOT / "hw" / "ide" / "ncq-model" / "models"


def run(*args):
    return subprocess.run([str(SCRIPT), *args], capture_output=True,
                          text=True)


def capacity(name):
    text = (MODELS / f"{name}.ncqm").read_text()
    return int(re.search(r"^capacity *= *(\d+)", text, re.M).group(1)) * 512


def test_every_built_in_model_is_its_capacity():
    for f in sorted(MODELS.glob("*.ncqm")):
        r = run(f"ncq-disk,model={f.stem},cdl=on")
        assert r.returncode == 0, r.stderr
        assert int(r.stdout) == capacity(f.stem), f.stem


def test_default_model_and_model_file(tmp_path):
    assert int(run("ncq-disk").stdout) == capacity("st3400620as")
    cut = tmp_path / "cut.ncqm"
    cut.write_text(re.sub(r"^capacity *= *\d+", "capacity = 1048576",
                          (MODELS / "wd-hc620.ncqm").read_text(),
                          flags=re.M))
    r = run(f"ncq-disk,model-file={cut}")
    assert int(r.stdout) == 1048576 * 512


def test_zoned_only_for_zoned_models():
    assert int(run("--zoned", "ncq-disk,model=wd-hc620").stdout) == \
        capacity("wd-hc620")
    r = run("--zoned", "ncq-disk,model=seagate-exos-x18")
    assert (r.returncode, r.stdout) == (0, "")


def test_unknown_model_is_one_line():
    r = run("ncq-disk,model=no-such-drive")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1
    assert "no-such-drive" in r.stderr and "--disk-size" in r.stderr
