#!/bin/bash
# Run the pinned QEMU's scripts/checkpatch.pl on every project C file and
# on the patch series; a warning counts as a failure.  Last line: "checkpatch: N passed, N failed".
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
src=$("$HERE/fetch-qemu.sh" | tail -1) || exit 1
cp=$src/scripts/checkpatch.pl
cd "$ROOT"
pass=0 fail=0
while IFS= read -r f; do
    out=$(perl "$cp" --no-tree -f "$f" 2>&1)
    if [ $? = 0 ] && ! grep -q "^WARNING" <<<"$out"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "$out"
    fi
done < <(git ls-files -co --exclude-standard '*.c' '*.h')
for p in patches/qemu/*/*.patch; do
    out=$(perl "$cp" --no-tree "$p" 2>&1)
    if [ $? = 0 ] && ! grep -q "^WARNING" <<<"$out"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1)); echo "$out"
    fi
done
echo "checkpatch: $pass passed, $fail failed"
[ $fail = 0 ]
