"""ncq-disk-test is one qtest program built from several files: its main
file and one file per concern in tests/qtest/ncq-disk/.  Its meson entry
(in the series' patch that adds the program) must list each of those files,
and main() must call each file's registration function: a file left out of
either would drop its cases without a build error."""
import re

from repopaths import ROOT

QTEST = ROOT / "tests" / "qtest"
PATCH_GLOB = "4-ncq-disk/*-tests-qtest-add-ncq-disk-test.patch"


def concern_files():
    return sorted(p.name for p in (QTEST / "ncq-disk").glob("*.c"))


def meson_entry_files():
    patches = sorted((ROOT / "patches" / "qemu").glob(PATCH_GLOB))
    assert len(patches) == 1, f"no single patch matches {PATCH_GLOB}"
    text = patches[0].read_text()
    entry = re.search(r"^\+\s*'ncq-disk-test':(.*?)\],?$", text,
                      re.S | re.M)
    assert entry, f"{patches[0].name} has no 'ncq-disk-test' meson entry"
    return sorted(re.findall(r"'ncq-disk/([\w.-]+\.c)'", entry.group(1)))


def test_meson_entry_lists_every_concern_file():
    files = concern_files()
    assert "harness.c" in files, "tests/qtest/ncq-disk/ has no harness.c"
    listed = meson_entry_files()
    assert listed == files, (
        "ncq-disk-test's meson entry and tests/qtest/ncq-disk/ differ: "
        f"unlisted {sorted(set(files) - set(listed))}, "
        f"missing {sorted(set(listed) - set(files))}; edit the patch with "
        "scripts/qemu-series.sh")


def test_main_calls_every_registration_function():
    defined = {}
    for name in concern_files():
        src = (QTEST / "ncq-disk" / name).read_text()
        for fn in re.findall(r"^void (add_\w+_tests)\(void\)$", src, re.M):
            defined[fn] = name
    assert len(defined) > 10, "no add_*_tests() found in tests/qtest/ncq-disk"
    main = (QTEST / "ncq-disk-test.c").read_text()
    called = set(re.findall(r"^\s+(add_\w+_tests)\(\);$", main, re.M))
    missing = [f"{fn} ({name})" for fn, name in sorted(defined.items())
               if fn not in called]
    assert not missing, ("main() in tests/qtest/ncq-disk-test.c does not "
                         "call: " + ", ".join(missing))
