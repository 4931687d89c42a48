#!/bin/bash
# The whole test suite: model unit tests, style, QEMU qtests (also under
# ASan/UBSan), the fuzzer (fixed findings replayed, a short campaign),
# repository checks, validation sheets, guest tests on Debian 12's 6.1
# and Debian 13's 6.12 (the scenarios among them compared with the
# committed report, docs/report/sN.json).
#
#   scripts/test.sh [options] [pytest args...]
#
# Installs what is missing (scripts/install-deps.sh, needs root), builds
# QEMU with the overlay, the standalone model build and the guest images,
# then runs every suite.  Ends with one summary line:
#   summary: N passed, N failed, N skipped
#
# Other arguments go to the guest tests' pytest.  A selection among them
# (-k EXPR, -m EXPR, --deselect, --ignore, or tests such as
# guest-tests/test_device.py::test_ncq_and_ncq_priority_detected) runs
# only the guest tests it selects, on the kernels --kernel names, with only the builds they need
# (QEMU's release build and those kernels' images): no qtests, no sanitizer
# chain, no series walk, no other suite unless --with names it.  A
# selection that picks no test on a kernel leaves that kernel out.  Other
# pytest options (-v, -x, --junitxml=FILE) select nothing: the whole suite
# runs.  --junitxml=FILE: FILE holds 6.1's results, FILE-6.12.xml 6.12's.
#
#   --kernel 6.1|6.12|both|DIR  the guest tests' kernels: Debian 12's 6.1,
#                          Debian 13's 6.12 (its list, GUEST_TESTS_612
#                          below, unless the arguments name test files),
#                          both (default), or the image in DIR
#                          (images/build-image.sh's output; = NCQ_IMAGE_DIR)
#   --with STEP[,STEP]     add whole steps to a selection: unit, checkpatch,
#                          repo, icount, validation, compare, fit, qtests,
#                          asan (the sanitizer chain and the fuzzer), walk
#   --plan                 print what would run, one "plan:" line a step,
#                          and exit (nothing is installed or built)
#   -h, --help             this text
#
# Environment: NCQ_TEST_ASAN=0 leaves out the sanitizer chain,
# NCQ_TEST_FUZZ=0 its fuzz steps, NCQ_TEST_SECOND_KERNEL=0 the 6.12 run,
# NCQ_TEST_JOBS=1 runs the guest tests one at a time, NCQ_SKIP_INSTALL=1
# the dependency step.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
cd "$ROOT"

# The guest tests that run again on Debian 13's 6.12: the kernel checks,
# the device tests (queue depth 8 among them), IDENTIFY (hdparm -I), CDL,
# the image's tools and modules (f2fs with its soft dependencies),
# host-managed ZAC (zone write plugging), zonefs and zoned btrfs, power
# modes, SCT, the log directories (smartctl, sg_sat_read_gplog), RAID with
# and without ERC and scenario 1.
GUEST_TESTS_612=(
    guest-tests/test_kernels.py guest-tests/test_device.py
    guest-tests/test_identify.py
    guest-tests/test_cdl.py guest-tests/test_image_tools.py
    guest-tests/test_image_modules.py
    guest-tests/test_zac.py guest-tests/test_zac_ata.py
    guest-tests/test_zoned_fs.py
    guest-tests/test_power_modes.py
    guest-tests/test_sct.py guest-tests/test_logs.py
    guest-tests/test_raid_erc.py
    "guest-tests/test_scenarios.py::test_scenario[s1-depth]"
    "guest-tests/test_scenarios.py::test_scenario_matches_report[s1-depth]"
)
die() { echo "test: $*" >&2; exit 1; }
# kill_tree PID: PID and every process under it
kill_tree() {
    local c
    for c in $(pgrep -P "$1"); do kill_tree "$c"; done
    kill "$1" 2>/dev/null
}
# each step says when it began, from the start of the suite: where the
# time goes shows in any CI log
step() { printf '=== [%dm%02ds] %s ===\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

usage() { sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit "${1:-0}"; }

# ------------------------------------------------------------- arguments
KERNEL_ARG=both WITH= PLAN=0
PYARGS=()
while [ $# -gt 0 ]; do
    case $1 in
        --kernel) [ $# -ge 2 ] || die "--kernel needs 6.1, 6.12, both or an image directory"
            KERNEL_ARG=$2; shift 2 ;;
        --kernel=*) KERNEL_ARG=${1#*=}; shift ;;
        --with) [ $# -ge 2 ] || die "--with needs step names (--help)"
            WITH+=,$2; shift 2 ;;
        --with=*) WITH+=,${1#*=}; shift ;;
        --plan) PLAN=1; shift ;;
        -h | --help) usage 0 ;;
        *) PYARGS+=("$1"); shift ;;
    esac
done
# NCQ_IMAGE_DIR set, or --kernel DIR: the guest tests run on that image
# (your own kernel, images/build-image.sh --kernel ...), once.
case $KERNEL_ARG in
    6.1 | 6.12 | both) ;;
    *)  [ -d "$KERNEL_ARG" ] || die "--kernel wants 6.1, 6.12, both or an image directory (images/build-image.sh prints one), got '$KERNEL_ARG'"
        NCQ_IMAGE_DIR=$(cd "$KERNEL_ARG" && pwd); export NCQ_IMAGE_DIR ;;
esac
if [ -n "${NCQ_IMAGE_DIR:-}" ]; then
    [ -f "$NCQ_IMAGE_DIR/vmlinuz" ] && [ -f "$NCQ_IMAGE_DIR/initrd.img" ] \
        || die "NCQ_IMAGE_DIR=$NCQ_IMAGE_DIR holds no vmlinuz and initrd.img; build an image with images/build-image.sh and pass the directory it prints"
    USER_IMAGE=1
else
    USER_IMAGE=0
fi
# The steps, each 1 (runs) or 0.  A selection (pytest arguments that
# choose tests) runs the guest tests alone, plus what --with names.
# names_files: the arguments name test files or directories (an argument
# that is no option's value and exists as a path, "::test" aside).
SELECTION=0 names_files=0 prev=
for a in ${PYARGS[@]+"${PYARGS[@]}"}; do
    case $a in
        -k | -m | --deselect | --ignore | -k?* | -m?* | --deselect=* | --ignore=*) SELECTION=1 ;;
    esac
    case $prev in
        -k | -m | -n | -p | -o | -c | --junitxml | --junit-xml | --deselect | \
            --durations | --maxfail | --basetemp | --rootdir | --ignore) ;;
        *) [[ $a == -* ]] || [ ! -e "${a%%::*}" ] || names_files=1 ;;
    esac
    prev=$a
done
[ $names_files = 0 ] || SELECTION=1
ALL_STEPS="unit checkpatch repo icount validation compare fit qtests asan walk"
for s in $ALL_STEPS; do
    declare "do_$s=$((1 - SELECTION))"
done
for s in ${WITH//,/ }; do
    case " $ALL_STEPS " in
        *" $s "*) declare "do_$s=1" ;;
        *) die "--with $s: no such step (steps: ${ALL_STEPS// /, })" ;;
    esac
done
[ "${NCQ_TEST_ASAN:-1}" != 0 ] || do_asan=0
do_guest61=1 do_guest612=1
case $KERNEL_ARG in 6.1) do_guest612=0 ;; 6.12) do_guest61=0 ;; esac
if [ "$USER_IMAGE" = 1 ] || [ "${NCQ_TEST_SECOND_KERNEL:-1}" = 0 ]; then
    do_guest612=0
fi
[ "$USER_IMAGE" = 0 ] || do_guest61=1

# The arguments for each kernel's pytest run.  Test files named among the
# arguments: those, on each kernel; else guest-tests (6.1) and
# GUEST_TESTS_612.  A JUnit XML file is renamed FILE-6.12.xml for 6.12 so
# that it does not overwrite 6.1's.
args61=() args612=() junit_next=0
for a in ${PYARGS[@]+"${PYARGS[@]}"}; do
    args61+=("$a")
    if [ $junit_next = 1 ]; then
        a=${a%.xml}-6.12.xml
        junit_next=0
    elif [ "$a" = --junitxml ] || [ "$a" = --junit-xml ]; then
        junit_next=1
    elif [[ $a == --junitxml=* || $a == --junit-xml=* ]]; then
        a=${a%%=*}=$(v=${a#*=}; echo "${v%.xml}-6.12.xml")
    fi
    args612+=("$a")
done
if [ $names_files = 0 ]; then
    args61=(guest-tests ${args61[@]+"${args61[@]}"})
    args612=("${GUEST_TESTS_612[@]}" ${args612[@]+"${args612[@]}"})
fi
# selected ARGS...: how many tests pytest collects with ARGS (a selection
# that collects none on a kernel leaves the kernel out; nothing printed,
# when the collection itself failed: the run shows why)
selected() {
    python3 -m pytest --collect-only -q -p no:cacheprovider "$@" 2>/dev/null \
        | sed -nE 's/^([0-9]+)(\/[0-9]+)? tests? (collected|selected).*/\1/p; s/^no tests (collected|ran).*/0/p' \
        | tail -1
}

# The plan: what runs, one line a step (--plan prints it and stops)
plan() {
    local s n
    echo "plan: install dependencies$([ "${NCQ_SKIP_INSTALL:-0}" = 1 ] && echo ' (skipped: NCQ_SKIP_INSTALL=1)')"
    echo "plan: build QEMU (release)"
    [ "$do_guest61" = 0 ] || [ "$USER_IMAGE" = 1 ] || echo "plan: build the guest image (Debian 12, 6.1)"
    [ "$USER_IMAGE" = 0 ] || echo "plan: guest image NCQ_IMAGE_DIR=$NCQ_IMAGE_DIR"
    [ "$do_guest612" = 0 ] || echo "plan: build the guest image (Debian 13, 6.12)"
    [ "$do_unit" = 0 ] || echo "plan: build the standalone model; model unit tests (meson test)"
    [ "$do_checkpatch" = 0 ] || echo "plan: style (scripts/checkpatch.sh)"
    [ "$do_qtests" = 0 ] || echo "plan: qtests (scripts/run-qtests.sh) on the release build$([ "$do_asan" = 1 ] && echo ': ahci-test@ncq-off and @ncq-on, the sanitizer chain runs the others')"
    [ "$do_asan" = 0 ] || echo "plan: the sanitizer chain: QEMU build (clang, ASan/UBSan, fuzzer), qtests under ASan/UBSan, fuzz steps"
    [ "$do_walk" = 0 ] || echo "plan: the series walk (scripts/build-qemu.sh --walk)"
    for s in repo icount validation compare fit; do
        n=do_$s
        [ "${!n}" = 0 ] || echo "plan: pytest tests/$s"
    done
    [ "$do_guest61" = 0 ] || echo "plan: guest tests$([ "$USER_IMAGE" = 1 ] && echo ' on NCQ_IMAGE_DIR' || echo ' on 6.1'): pytest ${args61[*]}"
    [ "$do_guest612" = 0 ] || echo "plan: guest tests on 6.12: pytest ${args612[*]}"
}

# The step table (printed at the end): each piece of work, foreground or
# background, appends "name<TAB>began<TAB>ended" (seconds from the start)
# to $STEPS; timed NAME COMMAND... runs COMMAND and records it.
T0=$(date +%s)
STEPS=$ROOT/_build/steps.tsv
mkdir -p "$ROOT/_build"
: >"$STEPS"
timed() {
    local name=$1 b rc=0
    shift
    b=$(($(date +%s) - T0))
    "$@" || rc=$?
    printf '%s\t%d\t%d\n' "$name" "$b" $(($(date +%s) - T0)) >>"$STEPS"
    return $rc
}
# step_table: the steps in the order they began, their wall times, how
# long the suite ran with none, one and two or more of them at once (on
# two cores, "one" is a core left idle unless the step uses both), and
# the total
step_table() {
    echo "step table (wall clock; 'began' from the start of the suite):"
    sort -t$'\t' -k2,2n "$STEPS" | awk -F'\t' '
        { printf "  %-58s began %3dm%02ds  took %3dm%02ds\n", $1,
                 int($2 / 60), $2 % 60, int(($3 - $2) / 60), ($3 - $2) % 60 }'
    awk -F'\t' -v total=$(($(date +%s) - T0)) '
        { for (t = $2; t < $3; t++) n[t]++ }
        END {
            for (t = 0; t < total; t++) c[n[t] >= 2 ? 2 : n[t] + 0]++
            printf "  seconds with no step running: %d, one: %d, two or more: %d\n",
                   c[0], c[1], c[2]
        }' "$STEPS"
    printf '  total %dm%02ds\n' $((($(date +%s) - T0) / 60)) $((($(date +%s) - T0) % 60))
}

# narrow_selection: a selection that collects no test on a kernel leaves
# that kernel out (collected with no image or QEMU build named, so that
# nothing is built to count)
narrow_selection() {
    [ "$SELECTION" = 1 ] || return 0
    local n
    if [ "$do_guest61" = 1 ]; then
        n=$(NCQ_IMAGE_DIR=${NCQ_IMAGE_DIR:-/nonexistent} NCQ_QEMU_BUILD=/nonexistent selected "${args61[@]}")
        if [ "$n" = 0 ]; then
            do_guest61=0
            echo "plan: guest tests on $([ "$USER_IMAGE" = 1 ] && echo NCQ_IMAGE_DIR || echo 6.1): none selected (left out)"
        fi
    fi
    if [ "$do_guest612" = 1 ]; then
        n=$(NCQ_IMAGE_DIR=/nonexistent NCQ_QEMU_BUILD=/nonexistent selected "${args612[@]}")
        if [ "$n" = 0 ]; then
            do_guest612=0
            echo "plan: guest tests on 6.12: none selected (left out)"
        fi
    fi
}
if [ "$PLAN" = 1 ]; then
    . "$HERE/lib/venv.sh" || exit 1
    narrow_selection
    plan
    exit 0
fi

if [ "${NCQ_SKIP_INSTALL:-0}" != 1 ]; then
    step "install dependencies"
    timed "install dependencies" "$HERE/install-deps.sh" || die "installing dependencies failed"
fi
# python3, pytest and meson from here on are the project's venv's
. "$HERE/lib/venv.sh" || exit 1
narrow_selection >&2
plan | sed 's/^/test: /' >&2

# One session of the guest harness's snapshot cache (guest-tests/ncqsnapshot.py):
# no run prunes while the suite runs, and the clean-up at the end spares every
# entry the suite used, so the next run finds them all.
NCQ_SNAPSHOT_SESSION=${NCQ_SNAPSHOT_SESSION:-$(date +%s)}
export NCQ_SNAPSHOT_SESSION

passed=0 failed=0 skipped=0
tally() {   # tally PASSED FAILED SKIPPED
    passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + $3))
}

# The pinned source first: the QEMU build and checkpatch (below, in the
# background) both read it, and two fetches from nothing would race.
step "fetch the pinned QEMU source"
timed "fetch the pinned QEMU source" "$HERE/fetch-qemu.sh" >/dev/null || die "fetching the QEMU source failed"

mkdir -p "$ROOT/_build"

# The steps that need no QEMU (the model's unit tests, style, the plain
# pytest suites, both guest images) run in the background from here, one
# after the other, beside the QEMU build: its series walk keeps one core
# of two idle most of the time (a link, a meson regeneration, a qtest run
# per patch).  Each writes its output to a file; the suite prints and
# tallies each where it stood in the suite's order, waiting for it there
# if it is still running.
# BUILD_MODEL: the standalone model build the unit tests and the pytest
# suites share.
BUILD_MODEL=$ROOT/_build/model
early_dir=$ROOT/_build/early
rm -rf "$early_dir"; mkdir -p "$early_dir"
# early_step NAME COMMAND...: one background step, its output in
# $early_dir/NAME.out (first line: when it began), its exit status in
# $early_dir/NAME.rc
early_step() {
    local name=$1; shift
    { printf '=== [%dm%02ds] (in the background, beside the QEMU build) ===\n' \
          $((SECONDS / 60)) $((SECONDS % 60))
      timed "$name" "$@"; } >"$early_dir/$name.out" 2>&1
    echo $? >"$early_dir/$name.rc"
}
unit_tests() {
    if [ ! -f "$BUILD_MODEL/build.ninja" ]; then
        meson setup "$BUILD_MODEL" >/dev/null || return 1
    fi
    meson test -C "$BUILD_MODEL" --print-errorlogs
}
pytest_run() { python3 -m pytest -q -p no:cacheprovider "$@"; }
# The images first: mostly downloads, and the guest tests wait for them.
early_steps() {
    if [ "$USER_IMAGE" = 0 ] && [ "$do_guest61" = 1 ]; then
        early_step image "$ROOT/images/build-image.sh"
    fi
    if [ "$do_guest612" = 1 ]; then
        early_step image612 "$ROOT/images/build-image.sh" --debian trixie
    fi
    [ "$do_unit" = 0 ] || early_step unit unit_tests
    [ "$do_checkpatch" = 0 ] || early_step checkpatch "$HERE/checkpatch.sh"
    if [ "$do_repo" = 1 ] && [ -d "$ROOT/tests/repo" ]; then
        early_step repo pytest_run tests/repo
    fi
    [ "$do_validation" = 0 ] || early_step validation pytest_run tests/validation
    [ "$do_compare" = 0 ] || early_step compare pytest_run tests/compare
    [ "$do_fit" = 0 ] || early_step fit pytest_run tests/fit
}
early_steps &
early_pid=$!
asan_pid=
# the suite stopped early (die, ^C): stop the background work too
trap '[ -z "$early_pid" ] || kill_tree "$early_pid"; [ -z "$asan_pid" ] || kill_tree "$asan_pid"; [ -z "${walk_pid:-}" ] || kill_tree "$walk_pid"; [ -z "${qtest_pid:-}" ] || kill_tree "$qtest_pid"' EXIT

# The fuzzer's part of the suite, each tallied: every input of
# tests/fuzz/fixed/ run alone (one check each), every seed reaching the
# device (one check each), the CI campaign (one check).  fuzz_run runs
# the three in the background (one core: the campaign has a fixed number
# of executions and a fixed seed, so the load beside it does not change
# what it does), the last steps of the sanitizer chain; fuzz_show prints
# and tallies them once the chain has ended.
fuzz_run() {
    local d=$ROOT/_build
    fuzz_begun >"$d/fuzz-replay.out"
    timed "fuzz: replay fixed findings" "$HERE/fuzz.sh" --replay tests/fuzz/fixed >>"$d/fuzz-replay.out" 2>&1
    fuzz_begun >"$d/fuzz-seeds.out"
    timed "fuzz: check seeds" "$HERE/fuzz.sh" --check-seeds >>"$d/fuzz-seeds.out" 2>&1
    fuzz_begun >"$d/fuzz-ci.out"
    timed "fuzz: CI campaign" "$HERE/fuzz.sh" --ci >>"$d/fuzz-ci.out" 2>&1
    echo $? >"$d/fuzz-ci.rc"
}
fuzz_begun() {
    printf '=== [%dm%02ds] (in the background: the sanitizer chain) ===\n' \
        $((SECONDS / 60)) $((SECONDS % 60))
}
fuzz_show() {
    local d=$ROOT/_build q ok bad
    [ -f "$d/fuzz-replay.out" ] || return 0
    step "fuzz: inputs of fixed findings replayed (NCQ_TEST_FUZZ=0 skips the fuzz steps)"
    cat "$d/fuzz-replay.out" >&2
    q=$(tail -1 "$d/fuzz-replay.out")
    if [[ $q =~ fuzz-replay:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
        tally "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" 0
    else
        tally 0 1 0
    fi
    step "fuzz: each seed reaches the device (scripts/fuzz.sh --check-seeds)"
    cat "$d/fuzz-seeds.out" >&2
    ok=$(grep -cE "^seed [^ ]+: ok," "$d/fuzz-seeds.out")
    bad=$(grep -cE "^seed [^ ]+: FAILED," "$d/fuzz-seeds.out")
    [ $((ok + bad)) -gt 0 ] || bad=1
    tally "$ok" "$bad" 0
    step "fuzz: short campaign from the seeds (scripts/fuzz.sh --ci)"
    cat "$d/fuzz-ci.out" >&2
    if [ "$(cat "$d/fuzz-ci.rc" 2>/dev/null)" = 0 ]; then
        tally 1 0 0
    else
        tally 0 1 0
    fi
}

# qtests_tally OUT: print run-qtests.sh's output OUT and tally its last
# line ("qtests: N passed, N failed, N skipped"; none counts as a failure)
qtests_tally() {
    local q
    cat "$1" >&2
    q=$(tail -1 "$1")
    if [[ $q =~ qtests:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped ]]; then
        tally "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"
    else
        tally 0 1 0
    fi
}

# The sanitizer chain: the device's qtests, and ahci-test as upstream
# (the IDE fixes' and hot-plug's reproducers run with ide-hd), under
# AddressSanitizer and UndefinedBehaviorSanitizer, every report fatal;
# then the fuzzer: the inputs of fixed findings replayed, the seeds
# checked, and a short campaign of a fixed length and seed
# (docs/fuzzing.md, "In CI").  One
# clang build serves both, the fuzz flavour: its qemu-system-x86_64 runs
# the qtests, its qemu-fuzz-x86_64 the fuzzer (docs/build.md).
# NCQ_TEST_ASAN=0 skips all of it; NCQ_TEST_FUZZ=0 only the fuzz steps.
# Each writes its output to a file in _build; asan_show prints and
# tallies them.
asan_chain() {
    local d=$ROOT/_build rc=0
    rm -f "$d/fuzz-replay.out" "$d/qtest-asan.out"
    timed "QEMU build (clang, ASan/UBSan, fuzzer)" nice -n 10 \
        "$HERE/build-qemu.sh" --fuzz >"$asan_log" 2>&1 || rc=$?
    echo $rc >"$d/asan-build.rc"
    [ $rc = 0 ] || return 1
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ASAN_OPTIONS=halt_on_error=1:abort_on_error=1 \
        timed "qtests under ASan/UBSan" "$HERE/run-qtests.sh" \
        "$(tail -1 "$asan_log")" ncq-disk-test ahci-test \
        >"$d/qtest-asan.out" 2>&1
    [ "${NCQ_TEST_FUZZ:-1}" = 0 ] || fuzz_run
}
asan_show() {
    [ -n "$asan_pid" ] || return 0
    local d=$ROOT/_build
    step "the sanitizer build (clang, ASan/UBSan, fuzzer)"
    wait "$asan_pid"
    asan_pid=
    grep -E "^build-qemu: (built|building|configuring)" "$asan_log" >&2
    if [ "$(cat "$d/asan-build.rc" 2>/dev/null)" != 0 ]; then
        tail -30 "$asan_log" >&2
        echo "test: the ASan/UBSan (fuzz flavour) build failed (log $asan_log)" >&2
        tally 0 1 0
        return
    fi
    step "qtests under ASan/UBSan (NCQ_TEST_ASAN=0 skips)"
    qtests_tally "$d/qtest-asan.out"
    fuzz_show
}

# The sanitizer chain (asan_chain above: the clang build, the qtests
# under ASan/UBSan, the fuzz steps) runs in the background from the
# start, each step as soon as the one before it has ended.  Its build
# starts at a lower priority, so that it fills what the release build
# leaves of the two cores (its links, its configure) and the release
# build, which every guest test waits for, keeps the CPU when both want
# it; once the release build is done, the chain gets the same priority
# as the rest (renice_tree).  It is shown and tallied at the end
# (asan_show).
renice_tree() {   # renice_tree PID NICE: PID and every process under it
    local c
    renice -n "$2" -p "$1" >/dev/null 2>&1
    for c in $(pgrep -P "$1"); do renice_tree "$c" "$2"; done
}
asan_log=$ROOT/_build/asan-build.log
if [ "$do_asan" = 1 ]; then
    step "the sanitizer chain (ASan/UBSan build, its qtests, the fuzzer): in the background, log $asan_log"
    rm -f "$ROOT/_build/asan-build.rc" "$ROOT/_build/fuzz-ci.rc"
    asan_chain &
    asan_pid=$!
fi

# The series walk (every patch of the mailbox that would be posted,
# applied with git am to the pristine tree, builds and passes the qtests
# it adds, on its own): only the patches patches/qemu/walked does not
# record, in a build of its own, in the background at a lower priority.
# Nothing to do on a clone whose record covers the series.
walk_log=$ROOT/_build/walk.log
walk_pid=
if [ "$do_walk" = 1 ]; then
    step "the series walk: in the background, log $walk_log"
    timed "QEMU series walk (patches/qemu/walked)" nice -n 10 "$HERE/build-qemu.sh" --walk >"$walk_log" 2>&1 &
    walk_pid=$!
fi
walk_show() {
    [ -n "$walk_pid" ] || return 0
    step "the series walk (scripts/build-qemu.sh --walk)"
    local rc=0
    wait "$walk_pid" || rc=$?
    walk_pid=
    grep -E "^build-qemu: (bisect|the series walk|walking)" "$walk_log" >&2
    if [ $rc != 0 ]; then
        tail -20 "$walk_log" >&2
        echo "test: the series walk failed (log $walk_log)" >&2
        tally 0 1 0
    fi
}

step "build QEMU (pinned, with the ncq-disk overlay)"
NCQ_QEMU_BUILD=$(timed "QEMU build (release)" \
    "$HERE/build-qemu.sh" | tail -1) || die "QEMU build failed"
export NCQ_QEMU_BUILD
# the release build is done: the sanitizer chain shares the CPU evenly now
[ -z "$asan_pid" ] || renice_tree "$asan_pid" 0

# early_wait NAME: until the background step NAME has ended (or the
# background work has, without it: then it counts as failed)
early_wait() {
    while [ ! -f "$early_dir/$1.rc" ] && kill -0 "$early_pid" 2>/dev/null; do
        sleep 1
    done
}
# early_show NAME TITLE: the step's title and its output (tallied by the
# caller), once it has ended; returns the step's exit status.
early_show() {
    step "$2"
    early_wait "$1"
    cat "$early_dir/$1.out" >&2
    return "$(cat "$early_dir/$1.rc" 2>/dev/null || echo 1)"
}

if [ "$USER_IMAGE" = 1 ]; then
    step "guest image: NCQ_IMAGE_DIR=$NCQ_IMAGE_DIR"
elif [ "$do_guest61" = 1 ]; then
    early_show image "build the guest image (Debian 12, 6.1)" \
        || die "guest image build failed"
    NCQ_IMAGE_DIR=$(tail -1 "$early_dir/image.out")
fi
[ -z "${NCQ_IMAGE_DIR:-}" ] || export NCQ_IMAGE_DIR

unit_show() {
step "model unit tests (meson test)"
early_wait unit
cp "$early_dir/unit.out" "$BUILD_MODEL/test.out" 2>/dev/null
grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Expected|Unexpected|Timeout):|^===" \
    "$early_dir/unit.out" >&2
ok=$(awk '/^Ok:/ {print $2}' "$early_dir/unit.out")
bad=$(awk '/^(Fail|Unexpected Pass|Timeout):/ {s += $NF} END {print s + 0}' "$early_dir/unit.out")
sk=$(awk '/^Skipped:/ {print $2}' "$early_dir/unit.out")
[ -n "$ok" ] || { echo "test: meson test printed no summary" >&2; bad=$((bad + 1)); ok=0; }
tally "$ok" "$bad" "${sk:-0}"
}
[ "$do_unit" = 0 ] || unit_show

checkpatch_show() {
early_show checkpatch "style (QEMU's checkpatch.pl on every C file and patch)"
cp "$early_dir/checkpatch.out" "$ROOT/_build/checkpatch.out"
q=$(tail -1 "$ROOT/_build/checkpatch.out")
if [[ $q =~ checkpatch:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
    tally "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" 0
else
    tally 0 1 0
fi
}
[ "$do_checkpatch" = 0 ] || checkpatch_show

# QEMU's qtests on the release build (one core) run in the background,
# beside the guest tests, and are shown after them (qtest_show): the
# guest tests, the longest step, start as soon as the build is done.
# The sanitizer chain runs two of the four suites on the same sources
# with every report fatal (asan_chain): with it, the release build runs
# the other two, ahci-test with ncq-disk in ide-hd's place (timing off
# and on), and the guest tests exercise the release binary; without it
# (NCQ_TEST_ASAN=0), all four.  Under the sanitizers, ncq-disk-test and
# the fuzzer drive ncq-disk's timing path; @ncq-on mostly waits for its
# completions' deadlines in host time (docs/build.md).
release_qtests=()
[ "$do_asan" = 1 ] && release_qtests=(ahci-test@ncq-off ahci-test@ncq-on)
qtest_pid=
if [ "$do_qtests" = 1 ]; then
    step "qtests (QEMU's ahci-test and the ncq-disk qtests): in the background, output _build/qtest.out"
    timed "qtests" "$HERE/run-qtests.sh" "$NCQ_QEMU_BUILD" ${release_qtests[@]+"${release_qtests[@]}"} \
        >"$ROOT/_build/qtest.out" 2>&1 &
    qtest_pid=$!
fi
qtest_show() {
    [ -n "$qtest_pid" ] || return 0
    step "qtests (QEMU's ahci-test and the ncq-disk qtests)"
    wait "$qtest_pid"
    qtest_pid=
    qtests_tally "$ROOT/_build/qtest.out"
}

# pytest_step NAME OUT ARGS...: run pytest with ARGS, its output in OUT,
# and tally its summary line (no summary line counts as one failure).
pytest_step() {
    local name=$1 out=$2; shift 2
    step "$name"
    timed "$name" python3 -m pytest -q -p no:cacheprovider "$@" 2>&1 | tee "$out" >&2
    pytest_tally "$out"
}
# pytest_tally OUT: tally pytest's summary line in OUT
pytest_tally() {
    local out=$1 line p f s
    line=$(grep -E "[0-9]+ (passed|failed|skipped|errors?|deselected).* in [0-9.]+s" "$out" | tail -1)
    p=$(grep -oE "[0-9]+ passed" <<<"$line" | cut -d' ' -f1)
    f=$(grep -oE "[0-9]+ (failed|error|errors)" <<<"$line" | awk '{s += $1} END {print s + 0}')
    s=$(grep -oE "[0-9]+ skipped" <<<"$line" | cut -d' ' -f1)
    [ -n "$line" ] || f=$((f + 1))
    tally "${p:-0}" "${f:-0}" "${s:-0}"
}

# Checks of the repository itself (layout, no citation of outside files,
# ...): plain pytest, no guest.
# early_pytest NAME TITLE: a pytest suite run in the background, shown
# and tallied
early_pytest() {
    early_show "$1" "$2"
    cp "$early_dir/$1.out" "$ROOT/_build/pytest-$1.out"
    pytest_tally "$ROOT/_build/pytest-$1.out"
}
if [ "$do_repo" = 1 ] && [ -d "$ROOT/tests/repo" ]; then
    early_pytest repo "repository checks (pytest tests/repo)"
fi

# The icount series' own reproducer (tests/icount): a small firmware under
# -icount, no guest image, no ncq-disk; two runs must print the same
# virtual times (docs/build.md, "Deterministic boots").
[ "$do_icount" = 0 ] || pytest_step "icount determinism (pytest tests/icount)" "$ROOT/_build/pytest-icount.out" tests/icount

# The validation sheets (docs/validation): each published figure of each
# model within its tolerance, one test per row; the sheets up to date.
[ "$do_validation" = 0 ] || early_pytest validation "validation sheets (pytest tests/validation)"

# scripts/compare.py's matrix parsing, metrics, baseline, shards and report,
# without a guest (its end-to-end run is guest-tests/test_compare.py).
[ "$do_compare" = 0 ] || early_pytest compare "comparison tool (pytest tests/compare)"

# tools/ncq-fit: the fitting maths on synthetic samples, the probe's
# refusals, fit-compare.py and simulate() against ncq-sim (no guest;
# docs/ncq-fit.md; the round trip in a guest is guest-tests/test_fit.py).
[ "$do_fit" = 0 ] || early_pytest fit "ncq-fit (pytest tests/fit)"

# The scenario tests among these also compare their fresh results with the
# committed docs/report/sN.json (test_scenario_matches_report[sN-...]).
# Test files run in parallel, one QEMU per core (pytest-xdist; NCQ_TEST_JOBS=1
# runs them one after the other): under -icount a guest's results do not
# depend on the host's load.
jobs=${NCQ_TEST_JOBS:-auto}
xdist=()
[ "$jobs" = 1 ] || xdist=(-n "$jobs" --dist loadfile)
# --durations: the slowest tests, for whoever keeps the suite's time down
if [ "$do_guest61" = 1 ]; then
    pytest_step "guest tests (pytest)" "$ROOT/_build/pytest.out" "${xdist[@]}" \
        --durations=20 "${args61[@]}"
fi

# GUEST_TESTS_612 (or the selection) again on Debian 13's kernel (6.12),
# unless NCQ_IMAGE_DIR chose the image, --kernel 6.1 or
# NCQ_TEST_SECOND_KERNEL=0.  The sanitizer chain, still running or ended,
# is shown after them.
if [ "$do_guest612" = 1 ]; then
    if early_show image612 "build the guest image (Debian 13, 6.12; built beside the QEMU build)"; then
        img612=$(tail -1 "$early_dir/image612.out")
        NCQ_IMAGE_DIR=$img612 pytest_step "guest tests on 6.12 (pytest)" \
            "$ROOT/_build/pytest-6.12.out" "${xdist[@]}" "${args612[@]}"
    else
        echo "test: the Debian 13 image did not build" >&2
        tally 0 1 0
    fi
fi
qtest_show
asan_show
walk_show

# the background steps have all been shown by now: reap them
wait "$early_pid" 2>/dev/null
early_pid=

step "snapshot cache: clean-up (entries this run used are kept)"
(cd "$ROOT/guest-tests" && python3 -c 'import ncqguest, ncqsnapshot
ncqsnapshot.prune(ncqsnapshot.root(ncqguest.CACHE), protect_since=ncqsnapshot.session_start())') \
    || echo "test: snapshot cache clean-up failed (nothing deleted)" >&2

step "done"
step_table >&2
echo "summary: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
