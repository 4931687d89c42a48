"""Every committed report (docs/report/sN.json) was made by what is here
now: the guest image, the device, the model files and the harness it
records (scenarios.inputs()) are the current ones.  The long scenarios
(3 to 6) are not rerun by the test command, so without this check their
reports could drift unseen; this one costs no guest.  A failure names
the report and what changed; regenerate it with scripts/report.py."""
import importlib
import json

import pytest

import scenarios as sc


def reports():
    return sorted(sc.REPORT_DIR.glob("s[0-9].json"))


def test_every_scenario_has_a_report():
    mods = sorted(p.stem.split("_")[0] for p in
                  (sc.REPO / "guest-tests" / "scenarios").glob("s[0-9]_*.py"))
    have = [p.stem for p in reports()]
    assert mods == have, f"scenarios {mods}, reports {have}"


@pytest.mark.parametrize("path", reports(), ids=lambda p: p.stem)
def test_report_made_by_the_current_inputs(path, guest_image):
    n = path.stem[1:]
    name = next((sc.REPO / "guest-tests" / "scenarios").glob(f"s{n}_*.py"))
    mod = importlib.import_module(f"scenarios.{name.stem}")
    saved = json.loads(path.read_text())
    if saved.get("kernel", sc.image_kernel()) != sc.image_kernel():
        pytest.skip(f"{path.name} was made on {saved['kernel']}; this image "
                    f"has {sc.image_kernel()}")
    now = sc.inputs(mod)
    made = saved.get("inputs", {})
    changed = [f"{k} (report {made.get(k, 'not recorded')}, now {v})"
               for k, v in now.items() if made.get(k) != v]
    assert not changed, (
        f"docs/report/{path.name} was made by other inputs: "
        f"{', '.join(changed)}. Regenerate it with "
        f"`{sc.report_command(n)}` and commit it")
