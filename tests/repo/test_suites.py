"""The suite runners' Python (guest-tests/suites/, scripts/lib/suite.sh)
without a guest: each suite's output, as the suite prints it, becomes
the verdicts and counts the runner prints; run-in-guest's script brings
back the command's status and the files it names; the common options
parse alike in every runner."""
import os
import subprocess

import pytest

from repopaths import ROOT
from suites import blktests, cdl_tools, command, conformance, zonefs


def test_blktests_verdicts_no_verdict_and_never_named():
    out = ("block/001 (stress device hotplugging)                  [passed]\n"
           "    runtime  12.3s  ...  11.9s\n"
           "block/002 => sda (remove a device while running blktrace) "
           "[not run]\n"
           "    sda is not rotational\n"
           "block/003 => sda (run fio)\r"
           "block/003 => sda (run fio)                          [failed]\n"
           "block/004 => sda (stop without a verdict)\n"
           "scsi/001 (something)  [passed]\n")
    shown, counts = blktests.verdicts(
        out, ["block/001", "block/002", "block/003", "block/004",
              "scsi/001", "scsi/002"], "/o")
    assert counts == {"passed": 2, "failed": 2, "not run": 2}
    assert shown[1] == "    runtime  12.3s  ...  11.9s"
    assert "block/004 [no verdict: the test stopped; see /o/*/block/004" \
        ".out and .full]" in shown
    assert shown[-1].startswith("scsi/002 [not run: ./check printed nothing")
    assert "./check -o $RESULTS/blktests block scsi/001" in \
        blktests.script(["block", "scsi/001"])


def test_cdl_tools_verdicts_by_colour():
    out = ("  Test 0001:  cdladm (get device information)  ... \x1b[92mPASS"
           "\x1b[0m\n"
           "  Test 0002:  cdladm (show)  ... \x1b[93mPASS\x1b[0m\n"
           "  Test 0003:  read  ... \x1b[31mFAIL\x1b[0m\n"
           "  Test 0004:  write  ... SKIP\n"
           "noise Test 0005: ... PASS\n")
    shown, counts = cdl_tools.verdicts(out)
    assert counts == {"PASS": 1, "FAILED": 1, "SKIP": 1, "WARNING": 1}
    assert shown[0] == "0001 PASS    cdladm (get device information)"
    assert shown[1].startswith("0002 WARNING cdladm (show)")
    assert "cdl-tests.sh -g 01 --quick" in cdl_tools.script(["-g", "01",
                                                               "--quick"])


def test_zonefs_verdicts_with_reasons():
    out = ("  Test 0010: mkzonefs (options)  ... \x1b[32mPASS\x1b[0m\n"
           "  Test 0020: open  ... skip\n"
           "  Test 0030: write  ... \x1b[31mFAIL\x1b[0m\n")
    logs = {"logs/0020.log": "start\n --> skipped: no conventional zone\n",
            "logs/0030.log": "a\nb\n\nc\nd\ne\nFAILED\n"}
    shown, counts = zonefs.verdicts(out, logs)
    assert counts == {"PASS": 1, "FAIL": 1, "skip": 1}
    assert shown == ["0010 PASS  mkzonefs (options)",
                     "0020 SKIP  open",
                     "      --> skipped: no conventional zone",
                     "0030 FAIL  write", "      c", "      d", "      e",
                     "      FAILED"]


def test_conformance_problems():
    listed = conformance.listed_logs("0x00 GPL,SL R/O 1 Log Directory\n"
                                     "0x04 GPL,SL R/O 8 Device Statistics\n")
    assert listed == {0x00, 0x04}
    pr, un = conformance.step_problems("smartctl-x", [
        "Read SMART Log (GP Log 0x0c) not supported",
        "Read Device Statistics (GP Log 0x04) not supported",
        "Write SCT Error Recovery Control failed: x"], listed)
    assert un == {"Read SMART Log (GP Log 0x0c) not supported"}
    assert pr == ["smartctl-x: Read Device Statistics (GP Log 0x04) not "
                  "supported", "smartctl-x: Write SCT Error Recovery "
                  "Control failed: x"]
    assert conformance.step_problems("hdparm-I", ["not supported"],
                                     listed) == ([], set())
    assert conformance.guest_line_problems([
        "gplog 04h 8 0 0 same", "gplog e1h 1 1 1 differ",
        "gplog 10h 1 0 1 differ", "smartlog 06 exit 0 0",
        "smartlog 09 exit 4 0"]) == [
        "sg_sat_read_gplog: gplog 10h 1 0 1 differ",
        "smartctl -l smartlog: smartlog 09 exit 4 0"]


def test_conformance_queue_depths():
    gib = (1 << 30) // 512
    recs = [{"op": "R", "lba": 1 * gib, "queue_len": 0},
            {"op": "R", "lba": 2 * gib + 8, "queue_len": 7},
            {"op": "R", "lba": 3 * gib, "queue_len": 30},
            {"op": "W", "lba": 3 * gib, "queue_len": 31}]
    lines, problems = conformance.depth_report(recs, 32)
    assert lines[0] == "fio iodepth 1: 1 reads, at most 1 in the drive"
    assert "fio iodepth 32: the drive held at most 31 commands, not 32" \
        in problems
    assert not [p for p in problems if p.startswith("fio iodepth 8:")]
    # a drive of depth 8: no phase is asked for more
    _, problems = conformance.depth_report(recs, 8)
    assert "fio iodepth 32: the drive held at most 31 commands, not 8" \
        in problems


def run_script(tmp_path, text):
    """Run a guest script on the host, with $RESULTS a folder."""
    res = tmp_path / "results"
    res.mkdir()
    p = subprocess.run(["bash", "-c", text], capture_output=True, text=True,
                       env=dict(os.environ, RESULTS=str(res)),
                       cwd=tmp_path)
    return p, res


def test_command_script_status_and_fetch(tmp_path):
    (tmp_path / "made").mkdir()
    text = command.script(
        ["sh", "-c", "echo 'hi there' > made/f.txt; echo out; exit 3"],
        [str(tmp_path / "made/f.txt"), "/no/such"], cwd=str(tmp_path))
    p, res = run_script(tmp_path, text)
    assert p.returncode == 3
    assert command.command_status(p.stdout, p.returncode) == 3
    assert "out" in p.stdout.splitlines()
    got = res / "fetched" / str(tmp_path / "made/f.txt").lstrip("/")
    assert got.read_text() == "hi there\n"
    assert "run-in-guest: --fetch /no/such: no such file in the guest" \
        in p.stderr
    # a harness status without the script's last line: unknown
    assert command.command_status("killed\n", 137) is None
    files = {"fetched/a/b": b"1", "output.txt": b"x"}
    assert command.fetched(files) == {"a/b": b"1"}


def lib(snippet):
    """Run bash with scripts/lib/suite.sh sourced, then @snippet."""
    return subprocess.run(
        ["bash", "-c", f'SUITE_TOOL=run-x SUITE_HERE={ROOT}/scripts '
         f'SUITE_ROOT={ROOT}; . {ROOT}/scripts/lib/suite.sh; {snippet}'],
        capture_output=True, text=True)


def test_common_options_and_aliases():
    p = lib('set -- --debian trixie --output /o --model wd-hc620 '
            '--device ncq-disk,model=x,cdl=on --package p --smp 2; '
            'while [ $# -gt 0 ]; do suite_option "$@"; '
            '[ "$SUITE_SHIFT" -gt 0 ] || exit 9; shift $SUITE_SHIFT; done; '
            'suite_check; echo "$SUITE_KERNEL|$SUITE_OUT|$SUITE_DEVICE|'
            '${SUITE_IMAGE_ARGS[*]}|${SUITE_IMAGE_EXTRA[*]}|$SUITE_SMP"')
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ("6.12|/o|ncq-disk,cdl=on,model=wd-hc620|"
                                "--debian trixie|--package p|2")


@pytest.mark.parametrize("args, message", [
    ("--kernel 5.4", "--kernel wants 6.1, 6.12 or a bzImage file"),
    ("--debian sid", "--debian wants bookworm or trixie"),
    ("--smp x", "--smp wants a number of CPUs"),
    ("--timeout 0", "--timeout wants seconds"),
    ("--add /no/such", "--add /no/such: no such file or directory"),
    ("--model 'a b'", "--model wants a model name"),
    ("--device", "--device needs a value"),
])
def test_common_options_refused_in_one_line(args, message):
    p = lib(f'set -- {args}; while [ $# -gt 0 ]; do suite_option "$@"; '
            f'shift $SUITE_SHIFT; done; suite_check')
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and \
        p.stderr.startswith(f"run-x: error: {message}"), p.stderr


RUNNERS = ["run-blktests.sh", "run-cdl-tools.sh", "run-zonefs-tests.sh",
           "run-conformance.sh", "run-in-guest.sh"]


@pytest.mark.parametrize("runner", RUNNERS)
def test_every_runner_has_the_common_options(runner):
    p = subprocess.run([str(ROOT / "scripts" / runner), "--help"],
                       capture_output=True, text=True)
    assert p.returncode == 0
    for opt in ("--kernel 6.1|6.12|PATH", "--debian bookworm|trixie",
                "--device LINE", "--model NAME", "--out DIR", "--add",
                "--package", "--module", "--timeout"):
        assert opt in p.stdout, (runner, opt)
    assert "Defaults: --kernel 6.1" in p.stdout or \
        "Defaults: --kernel 6.12" in p.stdout
