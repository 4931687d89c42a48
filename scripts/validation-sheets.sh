#!/bin/bash
# Write every built-in model's validation sheet, docs/validation/MODEL.md,
# from its figures file docs/validation/figures/MODEL.fig
# (docs/validation/README.md).  Builds the standalone ncq-sim first
# ($NCQ_MODEL_BUILD, default _build/model).  Extra arguments go to
# `ncq-sim --validate all` (e.g. --out DIR).  Exits 1, naming them, if
# some built-in model has no figures file yet.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${NCQ_MODEL_BUILD:-_build/model}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
cd "$ROOT"
# meson is the project's venv's
. "$ROOT/scripts/lib/venv.sh" || exit 1
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" tools/ncq-sim/ncq-sim >/dev/null
exec "$BUILD/tools/ncq-sim/ncq-sim" --validate all "$@"
