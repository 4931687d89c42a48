#!/bin/bash
# Fuzz ncq-disk through QEMU's generic fuzzer (tests/qtest/fuzz/, libFuzzer):
# q35, ncq-disk on the ICH9 AHCI port, the fuzzer writing to AHCI's MMIO
# and I/O regions, to PCI config space and to guest memory (command lists,
# FISes, PRDTs) and stepping the virtual clock, so the model's deadlines
# fire.  docs/fuzzing.md explains it and what was found.
#
#   scripts/fuzz.sh [--minutes N] [--props PROPS] [--jobs N] [--corpus DIR]
#   scripts/fuzz.sh --reproduce FILE [--props PROPS]
#   scripts/fuzz.sh --check-seeds [--props PROPS]
#
#   --minutes N     run time (default 30)
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
#   --reproduce F   run one input (a crash-* artifact) with the qtest trace
#                   of what it did on stderr (QTEST_LOG), the base of a
#                   regression qtest
#   --check-seeds   run each seed of scripts/fuzz-seeds.py once with the
#                   device's trace on; fail unless each completes the
#                   commands it should
#
# Every run starts from the seeds of scripts/fuzz-seeds.py (written to
# $NCQ_CACHE/fuzz/seeds): inputs that start port 0 and issue queued and
# non-queued commands, which blind mutation does not find on its own.
#
# Builds the fuzz flavour first (scripts/build-qemu.sh --fuzz: clang,
# libFuzzer, ASan and UBSan).  Crashes land in $NCQ_CACHE/fuzz/artifacts/.
# The last line is libFuzzer's summary: executions, time, coverage, corpus.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${NCQ_CACHE:-$HOME/.cache/ncq-disk}

die() { echo "fuzz: $*" >&2; exit 1; }

minutes=30 props="" jobs=1 corpus=$CACHE/fuzz/corpus reproduce="" maxlen=""
size=400088457216 check_seeds="" keep_going=""
while [ $# -gt 0 ]; do
    case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --props) props=,$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --max-len) maxlen=$2; shift 2 ;;
    --corpus) corpus=$2; shift 2 ;;
    --reproduce) reproduce=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --check-seeds) check_seeds=1; shift ;;
    --keep-going) keep_going=1; shift ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (known: --minutes N, --props PROPS, --jobs N, --keep-going, --max-len N, --corpus DIR, --size BYTES, --reproduce FILE, --check-seeds)" ;;
    esac
done
[[ $minutes =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || die "--minutes wants a positive whole number, not '$minutes'"
[[ $jobs =~ ^[0-9]+$ ]] && [ "$jobs" -gt 0 ] || die "--jobs wants a positive whole number, not '$jobs'"
[[ $size =~ ^[0-9]+$ ]] && [ $((size % 512)) -eq 0 ] && [ "$size" -gt 0 ] || die "--size wants a positive multiple of 512 bytes, not '$size'"

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
export QEMU_FUZZ_ARGS="-machine q35 -nodefaults \
-drive file=null-co://,if=none,format=raw,id=disk0,file.read-zeroes=on,file.size=$size \
-device ncq-disk,id=disk0,drive=disk0,bus=ide.0,x-host-wait-ms=1000$props"
export QEMU_FUZZ_OBJECTS="*ahci*"
# Guest memory read twice by the device would be a QEMU-wide class of
# findings, not this device's (upstream's predefined configs set it too).
export QEMU_AVOID_DOUBLE_FETCH=1
# Halt on the first UBSan report too, with a stack, so libFuzzer keeps it.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

if [ -n "$reproduce" ]; then
    [ -f "$reproduce" ] || die "no such input: $reproduce"
    QTEST_LOG=1 exec "$fuzzer" --fuzz-target=generic-fuzz -detect_leaks=0 \
        "$reproduce"
fi

seeds=$CACHE/fuzz/seeds
if [ -n "$check_seeds" ]; then
    exec python3 "$HERE/fuzz-seeds.py" --check "$fuzzer" "$seeds"
fi
python3 "$HERE/fuzz-seeds.py" "$seeds" >/dev/null

mkdir -p "$corpus" "$CACHE/fuzz/artifacts"
log=$CACHE/fuzz/fuzz-$(date +%Y%m%d-%H%M%S).log
echo "fuzz: $minutes min, ${jobs} job(s), corpus $corpus, log $log" >&2
t0=$(date +%s)
# -detect_leaks=0: leaks are not looked for (see ASAN_OPTIONS above), and
# libFuzzer would otherwise run an input twice whenever it saw more mallocs
# than frees during it.
args=(-max_total_time=$((minutes * 60)) -timeout=60 -detect_leaks=0
      -artifact_prefix="$CACHE/fuzz/artifacts/" -print_final_stats=1)
if [ -n "$keep_going" ]; then
    # Fork mode: each job a child process; a finding is kept and the
    # campaign goes on.
    args+=(-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
elif [ "$jobs" -gt 1 ]; then
    # In -jobs mode each worker writes fuzz-N.log in the working directory.
    args+=(-jobs="$jobs" -workers="$jobs")
fi
[ -n "$maxlen" ] && args+=(-max_len="$maxlen" -len_control=0)
set +e
(cd "$CACHE/fuzz" && "$fuzzer" --fuzz-target=generic-fuzz "${args[@]}" \
    "$corpus" "$seeds" >"$log" 2>&1)
rc=$?
set -e
secs=$(( $(date +%s) - t0 ))
if [ "$jobs" -gt 1 ] && [ -z "$keep_going" ]; then
    cat "$CACHE"/fuzz/fuzz-[0-9]*.log >>"$log" 2>/dev/null || true
    rm -f "$CACHE"/fuzz/fuzz-[0-9]*.log
fi
crashes=$(ls "$CACHE/fuzz/artifacts" | grep -c -E '^(crash|leak|timeout|oom)-' || true)
last=$(awk '/^#[0-9]+/ {l = $0} END {print l}' "$log")
if [ -n "$keep_going" ]; then
    # fork mode prints no final stats; its status lines start "#EXECS:"
    execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<<"$last")
    execs=${execs:-0}
else
    execs=$(awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}' "$log")
fi
corp=$(ls "$corpus" | wc -l)
if [ $rc -ne 0 ]; then
    grep -h -m1 -A30 -E "ERROR: (AddressSanitizer|libFuzzer)|runtime error" "$log" >&2 || tail -30 "$log" >&2
    echo "fuzz: libFuzzer stopped with $rc after $secs s; artifacts in $CACHE/fuzz/artifacts/" >&2
fi
echo "fuzz: $execs executions in $secs s, corpus $corp inputs, last status: ${last:-none}; $crashes artifact(s) in $CACHE/fuzz/artifacts/"
[ $rc -eq 0 ]
