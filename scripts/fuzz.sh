#!/bin/bash
# Fuzz ncq-disk through QEMU's generic fuzzer (tests/qtest/fuzz/, libFuzzer):
# q35, ncq-disk on the ICH9 AHCI port, the fuzzer writing to AHCI's MMIO
# and I/O regions, to PCI config space and to guest memory (command lists,
# FISes, PRDTs) and stepping the virtual clock, so the model's deadlines
# fire.  docs/fuzzing.md explains it and what was found.
#
#   scripts/fuzz.sh [--minutes N | --runs N] [--seed N] [--fresh]
#                   [--props PROPS] [--jobs N] [--keep-going] [--max-len N]
#                   [--corpus DIR] [--size BYTES]
#   scripts/fuzz.sh --ci
#   scripts/fuzz.sh --replay FILE|DIR [--replay FILE|DIR ...]
#   scripts/fuzz.sh --reproduce FILE [--props PROPS]
#   scripts/fuzz.sh --check-seeds [--props PROPS]
#
#   --minutes N     run time (default 30)
#   --runs N        stop after N executions (libFuzzer's -runs) instead;
#                   with --minutes too, whichever comes first
#   --seed N        libFuzzer's random seed (default: its own pick, which
#                   the summary prints); the same seed, runs and starting
#                   corpus run the same inputs
#   --fresh         start from the seeds alone: empty the corpus first
#   --ci            the campaign scripts/test.sh runs: one leg per drive
#                   of CI_LEGS, each --runs CI_RUNS --seed CI_SEED --fresh
#                   (the values are printed below); corpora and findings
#                   in $NCQ_CACHE/fuzz/ci/
#   --props PROPS   extra ncq-disk properties, e.g. timing=off,queue-depth=8
#   --jobs N        libFuzzer processes in parallel (default 1)
#   --keep-going    run the whole time whatever is found (libFuzzer's fork
#                   mode with -ignore_crashes/-ignore_timeouts/-ignore_ooms):
#                   every finding lands in the artifacts to triage after
#   --max-len N     inputs up to N bytes from the start (libFuzzer's
#                   -max_len=N -len_control=0) instead of growing slowly
#   --corpus DIR    corpus directory, kept between runs
#                   (default $NCQ_CACHE/fuzz/corpus, NCQ_CACHE=~/.cache/ncq-disk)
#   --size BYTES    size of the null-co disk (default 400088457216, the
#                   st3400620as's capacity, so LBAs reach every zone)
#   --replay P      run each input (a file, or a folder's *.input files,
#                   e.g. tests/fuzz/fixed) once in a process of its own;
#                   fail unless each runs clean: no crash, no sanitizer
#                   report, no time-out.  Last line:
#                   "fuzz-replay: N passed, N failed"
#   --reproduce F   run one input (a crash-* artifact) with the qtest trace
#                   of what it did on stderr (QTEST_LOG), the base of a
#                   regression qtest
#   An input NAME.input with a file NAME.props beside it (one line, e.g.
#   "cdl=on") runs with those properties in --replay and --reproduce:
#   a finding of a campaign with --props keeps them.
#   --check-seeds   run each seed of scripts/fuzz-seeds.py once with the
#                   device's trace on; fail unless each completes the
#                   commands it should
#
# Every campaign starts from the seeds of scripts/fuzz-seeds.py (written to
# $NCQ_CACHE/fuzz/seeds): inputs that start port 0 and issue queued and
# non-queued commands, which blind mutation does not find on its own.
#
# Builds the fuzz flavour first (scripts/build-qemu.sh --fuzz: clang,
# libFuzzer, ASan and UBSan).  Findings land in $NCQ_CACHE/fuzz/artifacts/
# ($NCQ_CACHE/fuzz/ci/artifacts/ for --ci), each named with the command
# that reproduces it.  A campaign ends with a summary block: build, time,
# executions and exec/s, coverage, corpus, findings, log; its last line
# "fuzz: N finding(s), N executions in N s".  A single process stuck in one
# input is sent SIGABRT (libFuzzer then saves the input) 15 min after the
# time asked, or after NCQ_FUZZ_GUARD_S seconds (default 1200) with --runs.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CACHE=${NCQ_CACHE:-$HOME/.cache/ncq-disk}

die() { echo "fuzz: $*" >&2; exit 1; }

# The CI campaign (--ci): a fixed seed and number of executions, so every
# CI run draws the same random sequence; 3000 took 38-70 s on the
# 2-core machine (docs/fuzzing.md, "In CI").  They are split between three
# legs, the default drive, cdl=on (whose IDENTIFY, SET FEATURES, logs
# and limits only exist with it; finding 11 needed it) and the host-managed
# wd-hc620 (the ZAC commands, queued and not, and the zone checks of every
# write), each with its own corpus: the same executions in all, so the
# same time.
CI_RUNS=1000 CI_SEED=1
CI_LEGS=("" "cdl=on" "model=wd-hc620")
# A replayed input that runs longer than this is a time-out (the fixed
# inputs run in milliseconds).
REPLAY_TIMEOUT=30

minutes=30 props="" jobs=1 corpus=$CACHE/fuzz/corpus reproduce="" maxlen=""
size=400088457216 check_seeds="" keep_going="" runs="" seed="" fresh=""
ci="" minutes_given="" replay=() campaign_opts=() size_given=""
while [ $# -gt 0 ]; do
    case $1 in
    --minutes) minutes=$2; minutes_given=1; campaign_opts+=("$1"); shift 2 ;;
    --runs) runs=$2; campaign_opts+=("$1"); shift 2 ;;
    --seed) seed=$2; campaign_opts+=("$1"); shift 2 ;;
    --fresh) fresh=1; campaign_opts+=("$1"); shift ;;
    --ci) ci=1; shift ;;
    --props) props=,$2; shift 2 ;;
    --jobs) jobs=$2; campaign_opts+=("$1"); shift 2 ;;
    --max-len) maxlen=$2; campaign_opts+=("$1"); shift 2 ;;
    --corpus) corpus=$2; campaign_opts+=("$1"); shift 2 ;;
    --replay) replay+=("$2"); shift 2 ;;
    --reproduce) reproduce=$2; shift 2 ;;
    --size) size=$2; size_given=1; shift 2 ;;
    --check-seeds) check_seeds=1; shift ;;
    --keep-going) keep_going=1; campaign_opts+=("$1"); shift ;;
    -h|--help)
        sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'
        legs=$(printf '%s, ' "${CI_LEGS[@]}")
        legs=${legs/#, /the default drive, }
        echo "--ci runs ${#CI_LEGS[@]} legs (${legs%, }), each --runs $CI_RUNS --seed $CI_SEED --fresh"
        exit 0 ;;
    *) die "unknown option '$1' (known: --minutes N, --runs N, --seed N, --fresh, --ci, --props PROPS, --jobs N, --keep-going, --max-len N, --corpus DIR, --size BYTES, --replay FILE|DIR, --reproduce FILE, --check-seeds)" ;;
    esac
done
# scripts/fuzz-seeds.py below runs under the project's venv, as the build does
. "$HERE/lib/venv.sh" || exit 1
[[ $minutes =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || die "--minutes wants a positive whole number, not '$minutes'"
[[ $jobs =~ ^[0-9]+$ ]] && [ "$jobs" -gt 0 ] || die "--jobs wants a positive whole number, not '$jobs'"
[ -z "$runs" ] || { [[ $runs =~ ^[0-9]+$ ]] && [ "$runs" -gt 0 ]; } || die "--runs wants a positive whole number, not '$runs'"
[ -z "$seed" ] || { [[ $seed =~ ^[0-9]+$ ]] && [ "$seed" -gt 0 ]; } || die "--seed wants a positive whole number, not '$seed'"
[[ $size =~ ^[0-9]+$ ]] && [ $((size % 512)) -eq 0 ] && [ "$size" -gt 0 ] || die "--size wants a positive multiple of 512 bytes, not '$size'"
if [ -n "$ci" ]; then
    [ ${#campaign_opts[@]} = 0 ] || die "--ci is a fixed campaign; drop ${campaign_opts[*]} (or run those without --ci)"
    [ -z "$props" ] || die "--ci runs its own legs (${CI_LEGS[*]:1}); drop --props"
    if [ -z "${NCQ_FUZZ_CI_LEG+set}" ]; then
        # Each leg is this script again; the last line adds them up.
        rm -rf "$CACHE/fuzz/ci/artifacts"
        n_find=0 n_exec=0 n_secs=0 ci_rc=0
        for leg in "${CI_LEGS[@]}"; do
            set +e
            NCQ_FUZZ_CI_LEG=$leg "$0" --ci | tee "$CACHE/fuzz/.ci-leg-$$"
            [ "${PIPESTATUS[0]}" = 0 ] || ci_rc=1
            set -e
            l=$(tail -1 "$CACHE/fuzz/.ci-leg-$$")
            rm -f "$CACHE/fuzz/.ci-leg-$$"
            if [[ $l =~ ^fuzz:\ ([0-9]+)\ finding\(s\),\ ([0-9]+)\ executions\ in\ ([0-9]+)\ s ]]; then
                n_find=$((n_find + BASH_REMATCH[1]))
                n_exec=$((n_exec + BASH_REMATCH[2]))
                n_secs=$((n_secs + BASH_REMATCH[3]))
            else
                ci_rc=1
            fi
        done
        echo "fuzz: ${n_find} finding(s), $n_exec executions in $n_secs s (--ci: ${#CI_LEGS[@]} legs)"
        exit $ci_rc
    fi
    props=${NCQ_FUZZ_CI_LEG:+,$NCQ_FUZZ_CI_LEG}
    leg=${NCQ_FUZZ_CI_LEG:+-${NCQ_FUZZ_CI_LEG//[=,]/-}}
    runs=$CI_RUNS seed=$CI_SEED fresh=1 corpus=$CACHE/fuzz/ci/corpus$leg
fi
artifacts=$CACHE/fuzz/artifacts
[ -n "$ci" ] && artifacts=$CACHE/fuzz/ci/artifacts

build=$("$HERE/build-qemu.sh" --fuzz | tail -1)
fuzzer=$build/qemu-fuzz-x86_64
[ -x "$fuzzer" ] || die "$fuzzer was not built; see $build/ninja.log"

# x-host-wait-ms=1000: a command whose DMA the fuzzer pointed at MMIO can
# take minutes byte by byte through the bounce buffer; the drive holds
# virtual time (and the main loop, so libFuzzer's -timeout alarm too)
# while it waits at the deadline, so give up after 1 s instead of 30.
# The generic fuzzer takes its machine from the environment.  null-co reads
# zeroes and writes nowhere: the host side costs nothing, the device and
# the AHCI glue get the time.  Only AHCI's regions are fuzzed; ncq-disk has
# none of its own and is reached through them.
fuzz_args() {
    echo "-machine q35 -nodefaults \
-drive file=null-co://,if=none,format=raw,id=disk0,file.read-zeroes=on,file.size=$size \
-device ncq-disk,id=disk0,drive=disk0,bus=ide.0,x-host-wait-ms=1000$1"
}
# The null-co disk of a host-managed model (--props model=) is its capacity
# exactly: the drive refuses any other at startup.
if [ -z "$size_given" ]; then
    zoned_size=$("$HERE/model-bytes.sh" --zoned "ncq-disk$props") || exit 2
    size=${zoned_size:-$size}
fi
export QEMU_FUZZ_ARGS
QEMU_FUZZ_ARGS=$(fuzz_args "$props")
# input_props F: ",PROPS" from F's NAME.props beside it (see above), if any
input_props() {
    local p=${1%.input}.props
    [ -f "$p" ] && echo ",$(tr -d ' \n' <"$p")"
    return 0
}
export QEMU_FUZZ_OBJECTS="*ahci*"
# Guest memory read twice by the device would be a QEMU-wide class of
# findings, not this device's (upstream's predefined configs set it too).
export QEMU_AVOID_DOUBLE_FETCH=1
# Halt on the first UBSan report too, with a stack, so libFuzzer keeps it.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# quarantine_size_mb=64: ASan keeps freed blocks poisoned until 64 MB of
# requested bytes were freed after them (256 by default), so that a late
# use is caught.  It counts the bytes asked for, but an aligned block holds
# far more: the IDE core's PIO path takes a 4 KiB-aligned 512-byte buffer
# per sector, about 6 KiB each under ASan, so 256 MB of them hold some
# 3 GB and a campaign's peak size grew with them (docs/fuzzing.md, "The
# long campaign").  max_allocation_size_mb=2048: one allocation of 2 GB is
# a finding (an ASan report); libFuzzer's own -malloc_limit_mb needs its
# malloc hooks, which it installs only when it looks for leaks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:quarantine_size_mb=64:max_allocation_size_mb=2048}

# finding_kind LOG: one line naming what a fuzzer log reports (a sanitizer
# report, libFuzzer's time-out, out-of-memory or deadly signal, a failed
# assertion), nothing when it reports none.
finding_kind() {
    local l
    l=$(grep -m1 -oE "ERROR: (AddressSanitizer|LeakSanitizer): [^(]*[a-z-]+" "$1") && { echo "${l#ERROR: }"; return; }
    l=$(grep -m1 -oE "runtime error: .*" "$1") && { echo "UBSan: ${l#runtime error: }"; return; }
    l=$(grep -m1 -oE "Assertion .* failed" "$1") && { echo "$l"; return; }
    l=$(grep -m1 -oE "ERROR: libFuzzer: [a-z -]+" "$1") && { echo "libFuzzer: ${l#ERROR: libFuzzer: }"; return; }
    return 0
}

if [ -n "$reproduce" ]; then
    [ -f "$reproduce" ] || die "no such input: $reproduce"
    [ -n "$props" ] || QEMU_FUZZ_ARGS=$(fuzz_args "$(input_props "$reproduce")")
    QTEST_LOG=1 exec "$fuzzer" --fuzz-target=generic-fuzz -detect_leaks=0 \
        "$reproduce"
fi

if [ ${#replay[@]} -gt 0 ]; then
    inputs=()
    for p in "${replay[@]}"; do
        if [ -d "$p" ]; then
            for f in "$p"/*.input; do [ -f "$f" ] && inputs+=("$f"); done
        elif [ -f "$p" ]; then
            inputs+=("$p")
        else
            die "--replay: no such input or folder: $p"
        fi
    done
    [ ${#inputs[@]} -gt 0 ] || die "--replay: no *.input files in ${replay[*]}"
    mkdir -p "$CACHE/fuzz/replay"
    pass=0 fail=0
    for f in "${inputs[@]}"; do
        log=$CACHE/fuzz/replay/$(basename "$f").log
        # libFuzzer's -timeout alarm reaches it only through QEMU's main
        # loop (a stuck input may never see it): timeout(1) is the backstop,
        # SIGABRT so that libFuzzer still says where it was.
        t0=$(date +%s%N)
        QEMU_FUZZ_ARGS=$(fuzz_args "$props$(input_props "$f")")
        set +e
        timeout -s ABRT -k 10 $((REPLAY_TIMEOUT * 4)) "$fuzzer" \
            --fuzz-target=generic-fuzz -detect_leaks=0 \
            -timeout=$REPLAY_TIMEOUT "$f" >"$log" 2>&1
        rc=$?
        set -e
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        why=$(finding_kind "$log")
        [ $rc = 124 ] && why="no end after $((REPLAY_TIMEOUT * 4)) s (killed)${why:+; $why}"
        if [ $rc = 0 ] && [ -z "$why" ]; then
            took=$(sed -n 's/^Executed .* in \([0-9]*\) ms$/\1 ms/p' "$log")
            echo "fuzz-replay: ok $f (input ${took:-?}, $ms ms with QEMU's start)"
            pass=$((pass + 1))
        else
            echo "fuzz-replay: FAILED $f: ${why:-exit status $rc}; log $log; reproduce: scripts/fuzz.sh --reproduce $f"
            fail=$((fail + 1))
        fi
    done
    echo "fuzz-replay: $pass passed, $fail failed"
    [ $fail = 0 ]
    exit
fi

seeds=$CACHE/fuzz/seeds
if [ -n "$check_seeds" ]; then
    exec python3 "$HERE/fuzz-seeds.py" --check "$fuzzer" "$seeds"
fi
python3 "$HERE/fuzz-seeds.py" "$seeds" >/dev/null

[ -n "$fresh" ] && rm -rf "$corpus"
mkdir -p "$corpus" "$artifacts"
before=$(find "$corpus" -type f | wc -l)
log=$CACHE/fuzz/fuzz-$(date +%Y%m%d-%H%M%S).log
[ -n "$ci" ] && log=$CACHE/fuzz/ci/fuzz$leg.log
start_mark=$CACHE/fuzz/.start-$$
# The checkout the build came from, for the summary (taken now: the
# checkout may move during a long run).
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "not a git checkout")
git -C "$ROOT" diff --quiet HEAD 2>/dev/null || commit="$commit with uncommitted changes"
touch "$start_mark"
what="$minutes min"
[ -n "$runs" ] && what="$runs executions${minutes_given:+ or $minutes min}"
echo "fuzz: $what, ${jobs} job(s)${seed:+, seed $seed}, corpus $corpus${fresh:+ (emptied first)}, log $log" >&2
t0=$(date +%s)
# -detect_leaks=0: leaks are not looked for (see ASAN_OPTIONS above), and
# libFuzzer would otherwise run an input twice whenever it saw more mallocs
# than frees during it.
# -rss_limit_mb=4096: libFuzzer's "rss" is the process's peak size, which
# ASan's quarantine (above) and the corpus raise over a long campaign: the
# 2-hour campaign of 2026-11-26 with the default quarantine reached
# libFuzzer's default 2048 MB after 63,797 executions with 43 MB of live
# heap (docs/fuzzing.md).
args=(-timeout=60 -detect_leaks=0 -artifact_prefix="$artifacts/"
      -print_final_stats=1 -rss_limit_mb=4096)
if [ -n "$runs" ]; then
    args+=(-runs="$runs")
    [ -n "$minutes_given" ] && args+=(-max_total_time=$((minutes * 60)))
else
    args+=(-max_total_time=$((minutes * 60)))
fi
[ -n "$seed" ] && args+=(-seed="$seed")
# Backstop for a job stuck in one input (docs/fuzzing.md, finding 9:
# libFuzzer's -timeout never fired): a single process gets SIGABRT, which
# libFuzzer answers by saving that input as a crash-* artifact.
guard=$((minutes * 60 + 900)) guard_sig=TERM
[ -n "$runs" ] && [ -z "$minutes_given" ] && guard=${NCQ_FUZZ_GUARD_S:-1200}
if [ -n "$keep_going" ]; then
    # Fork mode: each job a child process; a finding is kept and the
    # campaign goes on.
    args+=(-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
elif [ "$jobs" -gt 1 ]; then
    # In -jobs mode each worker writes fuzz-N.log in the working directory.
    args+=(-jobs="$jobs" -workers="$jobs")
else
    guard_sig=ABRT
fi
[ -n "$maxlen" ] && args+=(-max_len="$maxlen" -len_control=0)
set +e
(cd "$CACHE/fuzz" && timeout -s $guard_sig -k 30 $guard "$fuzzer" \
    --fuzz-target=generic-fuzz "${args[@]}" "$corpus" "$seeds" >"$log" 2>&1)
rc=$?
set -e
secs=$(( $(date +%s) - t0 ))
if [ "$jobs" -gt 1 ] && [ -z "$keep_going" ]; then
    cat "$CACHE"/fuzz/fuzz-[0-9]*.log >>"$log" 2>/dev/null || true
    rm -f "$CACHE"/fuzz/fuzz-[0-9]*.log
fi
# This run's findings: the crash-, leak-, timeout- and oom- files written
# since it started (slow-unit- files are libFuzzer's notes, not findings).
findings=() slow=0
while IFS= read -r f; do
    case $(basename "$f") in
    crash-*|leak-*|timeout-*|oom-*) findings+=("$f") ;;
    slow-unit-*) slow=$((slow + 1)) ;;
    esac
done < <(find "$artifacts" -maxdepth 1 -type f -newer "$start_mark" | sort)
rm -f "$start_mark"
last=$(awk '/^#[0-9]+/ {l = $0} END {print l}' "$log")
if [ -n "$keep_going" ]; then
    # fork mode prints no final stats; its status lines start "#EXECS:"
    execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<<"$last")
else
    execs=$(awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}' "$log")
    [ "$execs" != 0 ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$last")
fi
execs=${execs:-0}
rate=$(awk -v e="$execs" -v s="$secs" 'BEGIN { printf "%.1f", s ? e / s : 0 }')
cov=$(grep -oE "cov: [0-9]+ ft: [0-9]+" <<<"$last" || true)
used_seed=$(sed -n 's/^INFO: Seed: \([0-9]*\).*/\1/p' "$log" | head -1)
corp_n=$(find "$corpus" -type f | wc -l)
corp_b=$(du -sb "$corpus" | cut -f1)
patches=$(ls "$ROOT"/patches/qemu/*/*.patch | wc -l)

if [ $rc -ne 0 ]; then
    grep -h -m1 -A30 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error" "$log" >&2 || tail -30 "$log" >&2
fi
extra=${props#,}; extra=${extra:-none}
echo "fuzz: ==== summary ===="
echo "fuzz: build       checkout $commit, $patches patches, $fuzzer"
echo "fuzz: campaign    $what, $jobs job(s)${keep_going:+ (fork mode, --keep-going)}, libFuzzer seed ${used_seed:-see log}, extra props ${extra}"
echo "fuzz: time        $secs s"
echo "fuzz: executions  $execs ($rate/s)"
echo "fuzz: coverage    ${cov:-none printed} (last status line: ${last:-none})"
echo "fuzz: corpus      $corp_n inputs, $corp_b bytes, $((corp_n - before)) new this run, in $corpus/"
echo "fuzz: findings    ${#findings[@]}, in $artifacts/"
for f in "${findings[@]}"; do
    kind=$(basename "$f"); kind=${kind%%-*}
    [ ${#findings[@]} = 1 ] && [ -z "$keep_going" ] && kind="$kind: $(finding_kind "$log")"
    echo "fuzz:   $f ($kind)"
    echo "fuzz:     reproduce: scripts/fuzz.sh --reproduce $f${props:+ --props ${props#,}}"
done
if [ ${#findings[@]} -gt 0 ] && [ -n "$ci" ]; then
    echo "fuzz:     the same campaign again (a finding may need what earlier inputs left): scripts/fuzz.sh --ci"
    [ -z "$props" ] || echo "fuzz:     this leg alone: NCQ_FUZZ_CI_LEG=${props#,} scripts/fuzz.sh --ci"
fi
[ "$slow" = 0 ] || echo "fuzz: slow units  $slow (libFuzzer's slow-unit-* notes, not findings)"
if [ $rc = 124 ]; then
    echo "fuzz: stopped     by the backstop after $guard s (a job stuck in one input?)"
elif [ $rc -ne 0 ] && [ ${#findings[@]} = 0 ]; then
    echo "fuzz: stopped     libFuzzer exited with $rc and saved no input; see the log"
fi
echo "fuzz: log         $log"
echo "fuzz: ${#findings[@]} finding(s), $execs executions in $secs s"
[ $rc -eq 0 ] && [ ${#findings[@]} = 0 ]
