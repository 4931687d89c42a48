#!/bin/bash
# model-bytes.sh DEVICE-LINE: the capacity in bytes of the model an
# ncq-disk -device line names (model=NAME, a built-in model's file under
# hw/ide/ncq-model/models; model-file=PATH; neither: ncq-disk's default
# model, st3400620as), from the model file's "capacity = SECTORS" line.
# With --zoned, prints nothing (and exits 0) for a model without zones:
# only a zoned model needs an image of exactly its capacity.
# The suite runners and fuzz.sh size their disks with it; exit status 2
# and one line on stderr when the model file or its capacity is missing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
zoned=
if [ "${1:-}" = --zoned ]; then zoned=1; shift; fi
[ $# -eq 1 ] || { echo "usage: model-bytes.sh [--zoned] DEVICE-LINE" >&2; exit 2; }
model=$(echo ",$1," | sed -n 's/.*,model=\([^,]*\),.*/\1/p')
mfile=$(echo ",$1," | sed -n 's/.*,model-file=\([^,]*\),.*/\1/p')
[ -n "$mfile" ] || mfile=$ROOT/hw/ide/ncq-model/models/${model:-st3400620as}.ncqm
if [ ! -f "$mfile" ]; then
    echo "model-bytes: no model file $mfile for '$1': give the disk's size (the runners' --disk-size)" >&2
    exit 2
fi
if [ -n "$zoned" ] && ! grep -q '^\[zones\]' "$mfile"; then
    exit 0
fi
sectors=$(sed -n 's/^capacity *= *\([0-9]*\).*/\1/p' "$mfile")
if [ -z "$sectors" ]; then
    echo "model-bytes: $mfile has no capacity line: give the disk's size (the runners' --disk-size)" >&2
    exit 2
fi
echo $((sectors * 512))
