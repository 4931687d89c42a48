#!/bin/bash
# Build and run the qtests that cover ncq-disk: tests/qtest/ncq-disk-test,
# and QEMU's own ahci-test (with the series' cases), three times: as upstream (ide-hd),
# then with ncq-disk in ide-hd's place, timing off and on
# (scripts/qtest-ncq-as-ide-hd/ explains how).
#
#   scripts/run-qtests.sh BUILD_DIR [TEST...]
#   TEST: ncq-disk-test, ahci-test, ahci-test@ncq-off, ahci-test@ncq-on
#
# Last line: "qtests: N passed, N failed, N skipped".
set -uo pipefail
build=${1:?usage: run-qtests.sh BUILD_DIR [TEST...]}
shift
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(ncq-disk-test ahci-test ahci-test@ncq-off ahci-test@ncq-on)
here=$(cd "$(dirname "$0")" && pwd)
# python3 below is the project's venv's, as everywhere in the suite
. "$here/lib/venv.sh" || exit 1

targets=()
for t in "${tests[@]}"; do targets+=("tests/qtest/${t%@*}"); done
if ! ninja -C "$build" "${targets[@]}" >"$build/qtest-build.log" 2>&1; then
    grep -E "error" "$build/qtest-build.log" | head -20
    echo "qtests: 0 passed, ${#tests[@]} failed"
    exit 1
fi

export QTEST_QEMU_IMG=$build/qemu-img
export G_TEST_DBUS_DAEMON=/bin/true
export NCQ_REAL_QEMU=$build/qemu-system-x86_64
export NCQ_HALT_BIOS=$build/ncq-halt-bios.bin
# 64 KiB firmware whose reset vector is "cli; hlt; jmp back to hlt"
python3 -c "
b = bytearray(b'\xff' * 65536)
b[0xfff0:0xfff4] = b'\xfa\xf4\xeb\xfd'
open('$NCQ_HALT_BIOS', 'wb').write(b)"
pass=0 fail=0 skipped=0
for t in "${tests[@]}"; do
    log=$build/qtest-$t.log
    case $t in
    *@ncq-off) bin=$here/qtest-ncq-as-ide-hd/qemu-system-x86_64; timing=off ;;
    *@ncq-on) bin=$here/qtest-ncq-as-ide-hd/qemu-system-x86_64; timing=on ;;
    *) bin=$build/qemu-system-x86_64; timing=off ;;
    esac
    (cd "$build" && QTEST_QEMU_BINARY=$bin NCQ_TIMING=$timing \
        timeout 600 "$build/tests/qtest/${t%@*}" --tap -k) >"$log" 2>&1
    rc=$?
    p=$(grep -E "^ok " "$log" | grep -cv "# SKIP")
    s=$(grep -E "^ok " "$log" | grep -c "# SKIP")
    f=$(grep -cE "^not ok " "$log")
    if [ $rc -ne 0 ] && [ "$f" = 0 ]; then
        f=1   # crashed or timed out outside a test case
        echo "$t: exited with $rc"; tail -5 "$log"
    fi
    grep -E "^not ok " "$log"
    echo "$t: $p passed, $f failed${s:+, $s skipped}"
    pass=$((pass + p)); fail=$((fail + f)); skipped=$((skipped + s))
done
echo "qtests: $pass passed, $fail failed, $skipped skipped"
[ $fail = 0 ]
