# Sourced by the suite runners (scripts/run-blktests.sh, run-cdl-tools.sh,
# run-zonefs-tests.sh, run-conformance.sh, run-in-guest.sh): their one
# shape and their one option set.  A runner
#   1. sets its defaults (SUITE_KERNEL, SUITE_DEVICE, ... below) and parses
#      its arguments, handing each to suite_option first;
#   2. checks them (suite_check) and prepares its own files on the host;
#   3. builds QEMU and the image with its additions (suite_build);
#   4. runs its Python module in the guest harness (suite_run MODULE ARGS),
#      which prints the verdicts and ends with the runner's exit status:
#      0 passed, 1 a test failed, 2 the run did not complete.
#
# The options every runner takes (suite_help prints them):
SUITE_HELP='Options every runner takes (scripts/lib/suite.sh):
  --kernel 6.1|6.12|PATH    the guest kernel: Debian 12'"'"'s 6.1, Debian 13'"'"'s
                            6.12, or your own bzImage (with --modules DIR, its
                            lib/modules/<version> tree)
  --debian bookworm|trixie  the same as --kernel 6.1|6.12 (older spelling)
  --modules DIR             with --kernel PATH: its modules tree
  --device LINE             the drive'"'"'s -device line without drive=/bus=/id=
  --model NAME              the drive'"'"'s model (model= of the -device line)
  --disk-size SIZE          the drive'"'"'s capacity (a zoned model needs exactly
                            its own: the default for one)
  --memory SIZE             guest RAM
  --smp N                   guest CPUs
  --timeout S               the run'"'"'s bound in guest seconds
  --package NAME            one more Debian package in the image (repeatable)
  --module NAME             one more kernel module in the image, with its
                            dependencies (repeatable)
  --add SRC[:DEST]          a file or directory copied into the image at DEST
                            (default: SRC'"'"'s absolute path; repeatable)
  --out DIR                 where the results go (--output: the same)'
#
# After suite_check: SUITE_IMAGE_ARGS (the kernel's images/build-image.sh
# arguments), the values below; after suite_build: NCQ_QEMU_BUILD and
# NCQ_IMAGE_DIR, exported.

SUITE_KERNEL=6.1 SUITE_MODULES_DIR= SUITE_DEVICE=ncq-disk,model=st3400620as
SUITE_MODEL= SUITE_DISK_SIZE= SUITE_MEMORY=1G SUITE_SMP=1 SUITE_TIMEOUT=3600
SUITE_OUT=
SUITE_ADDS=()
SUITE_IMAGE_EXTRA=()

suite_die() { echo "$SUITE_TOOL: error: $*" >&2; exit 2; }
suite_help() { echo; echo "$SUITE_HELP"; }

# suite_option ARGS...: when $1 is a common option, take it (and its
# value) and set SUITE_SHIFT to the number of arguments taken; else
# SUITE_SHIFT=0.
suite_option() {
    SUITE_SHIFT=0
    case $1 in
        --kernel | --debian | --modules | --device | --model | --disk-size | \
            --memory | --smp | --timeout | --package | --module | --add | \
            --out | --output) ;;
        *) return 0 ;;
    esac
    [ $# -ge 2 ] || suite_die "$1 needs a value (--help)"
    case $1 in
        --kernel) SUITE_KERNEL=$2 ;;
        --debian)
            case $2 in
                bookworm) SUITE_KERNEL=6.1 ;; trixie) SUITE_KERNEL=6.12 ;;
                *) suite_die "--debian wants bookworm or trixie, got '$2'" ;;
            esac ;;
        --modules) SUITE_MODULES_DIR=$2 ;;
        --device) SUITE_DEVICE=$2 ;;
        --model) SUITE_MODEL=$2 ;;
        --disk-size) SUITE_DISK_SIZE=$2 ;;
        --memory) SUITE_MEMORY=$2 ;;
        --smp) SUITE_SMP=$2 ;;
        --timeout) SUITE_TIMEOUT=$2 ;;
        --package) SUITE_IMAGE_EXTRA+=(--package "$2") ;;
        --module) SUITE_IMAGE_EXTRA+=(--module "$2") ;;
        --add) SUITE_ADDS+=("$2") ;;
        --out | --output) SUITE_OUT=$2 ;;
    esac
    SUITE_SHIFT=2
}

# suite_device LINE MODEL: LINE with its model= or model-file= replaced by
# model=MODEL (LINE unchanged without a MODEL)
suite_device() {
    local line=$1 model=$2
    [ -n "$model" ] || { echo "$line"; return; }
    line=$(sed -E 's/,model(-file)?=[^,]*//g' <<<"$line")
    echo "$line,model=$model"
}

# suite_check: the common values checked, one line each for what is wrong
suite_check() {
    case $SUITE_KERNEL in
        6.1) SUITE_IMAGE_ARGS=(--debian bookworm) ;;
        6.12) SUITE_IMAGE_ARGS=(--debian trixie) ;;
        *)  [ -f "$SUITE_KERNEL" ] \
                || suite_die "--kernel wants 6.1, 6.12 or a bzImage file, got '$SUITE_KERNEL'"
            SUITE_IMAGE_ARGS=(--kernel "$SUITE_KERNEL")
            [ -z "$SUITE_MODULES_DIR" ] || SUITE_IMAGE_ARGS+=(--modules "$SUITE_MODULES_DIR") ;;
    esac
    [ -z "$SUITE_MODULES_DIR" ] || [ -f "$SUITE_KERNEL" ] \
        || suite_die "--modules goes with --kernel PATH (your own kernel)"
    case $SUITE_MODEL in *[!A-Za-z0-9._-]*) suite_die "--model wants a model name (ncq-sim --list-models), got '$SUITE_MODEL'" ;; esac
    SUITE_DEVICE=$(suite_device "$SUITE_DEVICE" "$SUITE_MODEL")
    case $SUITE_SMP in '' | *[!0-9]* | 0) suite_die "--smp wants a number of CPUs, got '$SUITE_SMP'" ;; esac
    case $SUITE_TIMEOUT in '' | *[!0-9]* | 0) suite_die "--timeout wants seconds, got '$SUITE_TIMEOUT'" ;; esac
    local a
    for a in ${SUITE_ADDS[@]+"${SUITE_ADDS[@]}"}; do
        [ -e "${a%%:*}" ] || suite_die "--add $a: no such file or directory ${a%%:*}"
        case $a in
            *:*) SUITE_IMAGE_EXTRA+=(--add "$(cd "$(dirname "${a%%:*}")" && pwd)/$(basename "${a%%:*}"):${a#*:}") ;;
            *) SUITE_IMAGE_EXTRA+=(--add "$(cd "$(dirname "$a")" && pwd)/$(basename "$a")") ;;
        esac
    done
}

# suite_disk_size [--zoned]: SUITE_DISK_SIZE, when not given, from the
# device's model (scripts/model-bytes.sh; --zoned: only a zoned model's,
# else empty)
suite_disk_size() {
    [ -z "$SUITE_DISK_SIZE" ] || return 0
    SUITE_DISK_SIZE=$("$SUITE_HERE/model-bytes.sh" "$@" "$SUITE_DEVICE") || exit 2
}

# suite_build IMAGE-ARGS...: QEMU (unless NCQ_QEMU_BUILD names a build) and
# the image: the kernel's, the runner's additions (IMAGE-ARGS) and the
# user's (--package, --module, --add); both exported
suite_build() {
    if [ -z "${NCQ_QEMU_BUILD:-}" ]; then
        NCQ_QEMU_BUILD=$("$SUITE_HERE/build-qemu.sh" | tail -1) || suite_die "QEMU build failed"
    fi
    NCQ_IMAGE_DIR=$("$SUITE_ROOT/images/build-image.sh" "${SUITE_IMAGE_ARGS[@]}" \
        "$@" ${SUITE_IMAGE_EXTRA[@]+"${SUITE_IMAGE_EXTRA[@]}"} | tail -1) \
        || suite_die "guest image build failed"
    export NCQ_QEMU_BUILD NCQ_IMAGE_DIR
}

# suite_run MODULE ARGS...: the runner's Python module (guest-tests/
# suites/) with the common values and ARGS, under the project's venv
suite_run() {
    local module=$1
    shift
    mkdir -p "$SUITE_OUT"
    exec python3 "$SUITE_HERE/pyrun.py" "$module" --tool "$SUITE_TOOL" \
        --out "$SUITE_OUT" --device "$SUITE_DEVICE" \
        --disk-size "$SUITE_DISK_SIZE" --memory "$SUITE_MEMORY" \
        --smp "$SUITE_SMP" --timeout "$SUITE_TIMEOUT" "$@"
}
