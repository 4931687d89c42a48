#!/bin/bash
# Build and run the qtests that cover ncq-disk: QEMU's own ahci-test
# (unchanged) and tests/qtest/ncq-disk-test.
#
#   scripts/run-qtests.sh BUILD_DIR [TEST...]
#
# Last line: "qtests: N passed, N failed".
set -uo pipefail
build=${1:?usage: run-qtests.sh BUILD_DIR [TEST...]}
shift
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(ahci-test ncq-disk-test)

targets=()
for t in "${tests[@]}"; do targets+=("tests/qtest/$t"); done
if ! ninja -C "$build" "${targets[@]}" >"$build/qtest-build.log" 2>&1; then
    grep -E "error" "$build/qtest-build.log" | head -20
    echo "qtests: 0 passed, ${#tests[@]} failed"
    exit 1
fi

export QTEST_QEMU_BINARY=$build/qemu-system-x86_64
export QTEST_QEMU_IMG=$build/qemu-img
export G_TEST_DBUS_DAEMON=/bin/true
pass=0 fail=0
for t in "${tests[@]}"; do
    log=$build/qtest-$t.log
    timeout 600 "$build/tests/qtest/$t" --tap -k >"$log" 2>&1
    rc=$?
    p=$(grep -cE "^ok " "$log")
    f=$(grep -cE "^not ok " "$log")
    if [ $rc -ne 0 ] && [ "$f" = 0 ]; then
        f=1   # crashed or timed out outside a test case
        echo "$t: exited with $rc"; tail -5 "$log"
    fi
    grep -E "^not ok " "$log"
    echo "$t: $p passed, $f failed"
    pass=$((pass + p)); fail=$((fail + f))
done
echo "qtests: $pass passed, $fail failed"
[ $fail = 0 ]
