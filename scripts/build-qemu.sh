#!/bin/bash
# Build the pinned QEMU with the ncq-disk overlay and patch series.
#
#   scripts/build-qemu.sh [--prefix DIR] [--asan | --fuzz] [--tarball PATH]
#                         [--accept-newer] [--install] [--walk]
#
# --walk: prove that the series as it would be posted bisects: the
#         mailbox scripts/qemu-series.sh mailbox writes (the device's
#         files as patches) is applied with git am to the pristine tree,
#         and QEMU is built (and the qtests each patch adds run) after
#         every patch that patches/qemu/walked does not yet record as
#         proved, then recorded there (commit that file).  Its own work
#         tree and build directory (flavour "walk"), so it runs beside the
#         other builds; prints no build directory, and does nothing when
#         the record has every patch.  scripts/test.sh runs it in the
#         background; the demo and a user's build do not.
# --asan: AddressSanitizer + UBSan flavour (gcc), for the qtests by hand.
# --fuzz: clang + libFuzzer + ASan/UBSan flavour; builds qemu-fuzz-x86_64
#         (scripts/fuzz.sh runs it) and, from the same objects,
#         qemu-system-x86_64 and qemu-img, which scripts/test.sh's
#         sanitizer qtests use (qtest's accelerator: no TCG in this
#         flavour).  Each flavour has its own build dir.
#
# The pristine source (scripts/fetch-qemu.sh) stays untouched: a copied
# work tree is made from it, the project's files are symlinked in (so edits
# in the checkout rebuild at once) and patches/qemu/*.patch are applied.
# The last line of stdout is the build directory.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CACHE=${NCQ_CACHE:-$HOME/.cache/ncq-disk}
PREFIX=${NCQ_PREFIX:-/opt/ncq-disk}
# QEMU is configured for this prefix whatever --prefix says: --install
# copies the build to any prefix without a reconfigure and a full rebuild.
BUILD_PREFIX=/opt/ncq-disk

die() { echo "build-qemu: $*" >&2; exit 1; }
log() { echo "build-qemu: $*" >&2; }

fetch_args=() asan=0 fuzz=0 install=0 want_walk=0
while [ $# -gt 0 ]; do
    case $1 in
    --prefix) PREFIX=$2; shift 2 ;;
    --asan) asan=1; shift ;;
    --fuzz) fuzz=1; shift ;;
    --install) install=1; shift ;;
    --walk) want_walk=1; shift ;;
    --tarball) fetch_args+=(--tarball "$2"); shift 2 ;;
    --accept-newer) fetch_args+=(--accept-newer); shift ;;
    *) die "unknown option '$1' (known: --prefix DIR, --asan, --fuzz, --install, --walk, --tarball PATH, --accept-newer)" ;;
    esac
done
[ $asan = 1 ] && [ $fuzz = 1 ] && die "--asan and --fuzz are two flavours; give one (--fuzz has ASan/UBSan too)"
[ $install = 1 ] && [ $((asan + fuzz)) != 0 ] && die "--install installs the release flavour; drop --asan/--fuzz"
[ $want_walk = 1 ] && [ $((asan + fuzz + install)) != 0 ] && die "--walk is a build of its own; give it alone"
if [ $fuzz = 1 ]; then
    command -v clang >/dev/null || die "--fuzz needs clang and libFuzzer; run scripts/install-deps.sh"
fi

for tool in cc ninja pkg-config flex bison; do
    command -v $tool >/dev/null || die "'$tool' not found; run scripts/install-deps.sh"
done
# QEMU's configure makes its own venv (pyvenv) from the python it is given
# and takes meson from there: give it the project's venv's python, which
# has meson (QEMU's pyvenv sees a parent venv's packages: mkvenv.py).
. "$HERE/lib/venv.sh" || exit 1
PY=$NCQ_VENV/bin/python3
"$PY" -c 'import mesonbuild, sys; from mesonbuild.coredata import version; sys.exit(0 if tuple(map(int, version.split(".")[:2])) >= (1, 5) else 1)' 2>/dev/null \
    || die "meson >= 1.5 not found in the venv $NCQ_VENV; run scripts/install-deps.sh"

pristine=$("$HERE/fetch-qemu.sh" "${fetch_args[@]}" | tail -1)
ver=$(basename "$pristine")
flavour=release
[ $asan = 1 ] && flavour=asan
[ $fuzz = 1 ] && flavour=fuzz
work=$CACHE/work/$ver
if [ $want_walk = 1 ]; then
    flavour=walk
    work=$CACHE/work/$ver-walk
fi
build=$CACHE/build/$ver-$flavour

conf=(
    --prefix="$BUILD_PREFIX"
    --target-list=x86_64-softmmu
    --without-default-devices
    --with-devices-x86_64=ncq-disk
    --firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
    --disable-docs --disable-user --disable-rust --disable-xen
    --disable-gtk --disable-sdl --disable-vnc --disable-opengl
    --disable-spice --disable-curses --disable-slirp --disable-capstone
    --disable-libusb --disable-usb-redir --disable-guest-agent
    --disable-vhost-user --disable-vhost-net --disable-vhost-kernel
    --disable-vhost-vdpa --disable-vhost-crypto --disable-plugins
    --disable-download --enable-tools --enable-kvm --enable-tcg
    --enable-trace-backends=log --disable-install-blobs
    # what no test, guest or user of the device needs: image formats other
    # than raw and qcow2, D-Bus display, audio, 9p, TPM and the like (each
    # costs compile time in all three builds; docs/build.md "Configuration")
    --disable-bochs --disable-cloop --disable-dmg --disable-qcow1
    --disable-vdi --disable-vhdx --disable-vmdk --disable-vpc --disable-vvfat
    --disable-qed --disable-parallels --disable-replication --disable-colo-proxy
    --disable-dbus-display --audio-drv-list= --disable-virtfs
    --disable-vduse-blk-export --disable-multiprocess --disable-tpm
    --disable-hv-balloon --disable-l2tpv3 --disable-png --disable-fuse
    --disable-libudev --disable-af-xdp --disable-netmap --disable-vde
    --disable-smartcard --disable-u2f --disable-canokey --disable-blkio
)
if [ $asan = 1 ]; then
    conf+=(--enable-asan --enable-ubsan --disable-werror)
fi
if [ $fuzz = 1 ]; then
    # libFuzzer comes with clang; QEMU's fuzz targets want ASan beside it.
    # Line tables are all a sanitizer or fuzzer report symbolizes; full
    # debug info makes the compiles and the two large links slower.
    conf+=(--cc=clang --cxx=clang++ --enable-fuzzing --enable-asan
           --enable-ubsan --disable-werror --disable-debug-info
           --extra-cflags=-gline-tables-only)
    # Nothing this flavour runs executes guest code: the fuzzer and the
    # sanitizer qtests run under qtest's accelerator, so TCG (62 objects,
    # 12 % of this build's CPU) is left out (KVM stays: a target needs an
    # accelerator; docs/build.md, "Fuzz build").
    conf=("${conf[@]/#--enable-tcg/--disable-tcg}")
fi
targets=(qemu-system-x86_64 qemu-img)
# The fuzz flavour's objects serve a sanitizer qemu-system-x86_64 as well
# (QEMU links non-fuzzer binaries with -fsanitize=fuzzer-no-link): one
# clang build for the ASan/UBSan qtests and the fuzzer, in scripts/test.sh.
[ $fuzz = 1 ] && targets+=(qemu-fuzz-x86_64)
conf_sum=$(printf '%s\n' "${conf[@]}" | sha256sum | cut -c1-16)

# The series: patches/qemu/<N-name>/*.patch, one directory per series as
# it would be posted upstream, applied in the order of the directories.
mapfile -t patches < <(ls "$ROOT"/patches/qemu/*/[0-9]*.patch 2>/dev/null)
[ ${#patches[@]} -gt 0 ] || die "no patches in patches/qemu/*/; restore them from git"
patch_dir=$ROOT/patches/qemu
# The walk checks what would be sent: the mailbox, cover letters aside
# (they change no file), the device's files among its patches.
if [ $want_walk = 1 ]; then
    mkdir -p "$CACHE"
    patch_dir=$(mktemp -d "$CACHE/mailbox.XXXXXX")
    trap 'rm -rf "$patch_dir"' EXIT
    "$HERE/lib/series-mailbox.sh" "$pristine" "$patch_dir" >&2 \
        || die "the series' mailbox could not be written (above)"
    mapfile -t patches < <(ls "$patch_dir"/*/[0-9]*.patch | grep -v '/0000-cover-letter\.patch$')
fi
series_sum=$(cat "${patches[@]}" | sha256sum | cut -c1-16)

# Every patch of the series must build on its own (so that it bisects).
# With --walk (scripts/test.sh), a build of its own walks the mailbox: it
# git-ams each patch onto the pristine tree, builds after each patch that
# patches/qemu/walked does not record, and runs the qtests that patch
# adds.  A patch's proof is keyed by the pristine source, the configure
# options and the mailbox's patches up to and including it, so changing
# patch K re-proves K and what follows, nothing before it: the device's
# files are in the device series' patches, so a change to them re-proves
# only that series.  The record is committed, so a fresh clone (CI) walks
# only what no earlier run proved.  Each step costs only what the patch
# makes ninja rebuild.
WALKED=$ROOT/patches/qemu/walked
walk_keys=()
# (the third line: proofs of patches applied with git am, as a mailbox)
walk_key_acc=$(printf '%s\n' "$(basename "$pristine")" "$conf_sum" "git am")
for p in "${patches[@]}"; do
    walk_key_acc=$(printf '%s\n' "$walk_key_acc" | cat - "$p" | sha256sum | cut -c1-16)
    walk_keys+=("$walk_key_acc")
done
# walk_from: the index (1-based) of the first patch the record lacks
walk=0 walk_from=0
if [ $want_walk = 1 ]; then
    for i in $(seq 1 ${#patches[@]}); do
        if ! grep -q "^${walk_keys[$((i - 1))]} " "$WALKED" 2>/dev/null; then
            walk=1 walk_from=$i
            break
        fi
    done
    if [ $walk = 0 ]; then
        log "the series walk: patches/qemu/walked proves all ${#patches[@]} patches; nothing to walk"
        exit 0
    fi
fi

# The work tree and the build directories are shared by every checkout
# that uses this cache (a CI clone, a second working copy).  Links another
# checkout left are removed; and when another checkout built here last, its
# overlay objects and generated files go and meson regenerates: ninja
# compares times, and this checkout's files may be older than what was
# compiled from the other one's.
overlay_claim() {
    local l t owner stale=
    while IFS= read -r l; do
        t=$(readlink "$l")
        case $t in "$ROOT"/*) ;; /*) rm -f "$l"; stale=${t%/"${l#"$work"/}"} ;; esac
    done < <(find "$work/hw/ide" "$work/include/hw/ide" "$work/tests/qtest" \
                  "$work/qapi" -maxdepth 2 -type l 2>/dev/null)
    owner=$(cat "$build/.overlay-root" 2>/dev/null || true)
    # a script of before this marker may have linked and built meanwhile
    if [ -f "$work/.overlay-root" ] && [ "$(cat "$work/.overlay-root")" != "$ROOT" ]; then
        owner=$(cat "$work/.overlay-root")
    fi
    [ -z "$stale" ] || owner=$stale
    if [ -n "$owner" ] && [ "$owner" != "$ROOT" ] && [ -f "$build/build.ninja" ]; then
        log "$build was last built from $owner: rebuilding the overlay's files"
        # (paths matched below $build: the cache's own path, by default
        # ~/.cache/ncq-disk, must not match, or this deletes the whole build)
        find "$build" -type f \( -name '*ncq*' -o -path "$build/*ncq-disk*" \
             -o -path "$build/*ncq-model*" \) -delete
        touch "$work/meson.build"       # meson regenerates build.ninja
    fi
    mkdir -p "$build"
    echo "$ROOT" >"$build/.overlay-root"
}

overlay_link() {
    local f prev overlay=(
        hw/ide/ncq-model
        qapi/ncq-disk.json
    )
    while IFS= read -r f; do overlay+=("$f"); done < <(
        cd "$ROOT" && ls hw/ide/ncq-disk/* include/hw/ide/*.h \
            tests/qtest/*.c tests/qtest/*/*.[ch] 2>/dev/null)
    for f in "${overlay[@]}"; do
        [ -e "$ROOT/$f" ] || continue
        if [ -e "$work/$f" ] && [ ! -L "$work/$f" ]; then
            die "overlay file $f would hide upstream's $f; rename it"
        fi
        mkdir -p "$(dirname "$work/$f")"
        prev=$(readlink "$work/$f" 2>/dev/null || true)
        case $prev in "$ROOT"/*|"") ;; *) echo "${prev%/"$f"}" >"$work/.overlay-root" ;; esac
        ln -sfn "$ROOT/$f" "$work/$f"
    done
    overlay_claim
    echo "$ROOT" >"$work/.overlay-root"
    devices_mak
}

# The device set, less the symbols the tree does not define yet: before
# the patch that adds ncq-disk (the series walk builds those trees too),
# CONFIG_NCQ_DISK=y would stop minikconf ("undefined symbol").  Written
# only when it changes, since meson reconfigures when it does.
devices_mak() {
    local mak=configs/devices/x86_64-softmmu/ncq-disk.mak line sym out=
    while IFS= read -r line; do
        if [[ $line =~ ^CONFIG_([A-Z0-9_]+)= ]]; then
            sym=${BASH_REMATCH[1]}
            grep -rqx --include='Kconfig*' "config $sym" "$work" || continue
        fi
        out+=$line$'\n'
    done <"$ROOT/$mak"
    [ -L "$work/$mak" ] && rm -f "$work/$mak"
    if [ "$(cat "$work/$mak" 2>/dev/null)"$'\n' != "$out" ]; then
        printf '%s' "$out" >"$work/$mak"
    fi
}

# Run from the build tree, QEMU looks for firmware under qemu-bundle/ (its
# relocated --firmwarepath): point that at Debian's firmware packages.  The
# series walk's qtests run from the build tree too.
firmware_links() {
    local fw
    for fw in /usr/share/qemu /usr/share/seabios /usr/lib/ipxe/qemu; do
        [ -d "$fw" ] || continue
        mkdir -p "$(dirname "$build/qemu-bundle$fw")"
        ln -sfn "$fw" "$build/qemu-bundle$fw"
    done
}

# pyvenv_runs: the python and meson of the build's pyvenv still run (the
# python configure was given may be gone: a venv of an older Debian's python)
pyvenv_runs() {
    "$build/pyvenv/bin/python3" -c 'import mesonbuild' 2>/dev/null
}

# --python is not among conf: conf_sum keys the series walk's proofs,
# which do not depend on where the venv is.
configure_build() {
    if [ ! -f "$build/.configured-$conf_sum" ] || [ ! -f "$build/build.ninja" ] ||
       ! pyvenv_runs; then
        log "configuring $build"
        rm -rf "$build"; mkdir -p "$build"
        (cd "$build" && "$work/configure" "${conf[@]}" --python="$PY" >configure.log 2>&1) \
            || { tail -20 "$build/configure.log" >&2; die "configure failed; full log: $build/configure.log"; }
        touch "$build/.configured-$conf_sum"
    fi
    firmware_links
}

ninja_build() {   # ninja_build STEP ERROR [TARGET...]: or die with ERROR
    local step=$1 err=$2
    shift 2
    [ $# -gt 0 ] || set -- "${targets[@]}"
    echo "=== ninja: $step" >>"$build/ninja.log"
    ninja -C "$build" "$@" >>"$build/ninja.log" 2>&1 \
        || { tail -200 "$build/ninja.log" | grep -E "error|Error" | head -20 >&2; die "$err; full log: $build/ninja.log"; }
}

# qtest_program FILE: the qtest program FILE (a path in tests/qtest/) is a
# source of: X.c is program X's main file; a file in a folder D/ is program
# D-test's, when there is one (as upstream's migration/ is migration-test's
# and ncq-disk/ ncq-disk-test's); nothing for libqos/, fuzz/ and headers.
qtest_program() {
    local rel=${1#tests/qtest/} d
    case $rel in
    */*) d=${rel%%/*}
         [ -f "$work/tests/qtest/$d-test.c" ] || return 0
         echo "$d-test" ;;
    *.c) echo "${rel%.c}" ;;
    esac
}

# walk_qtests PATCH: the qtests PATCH adds (the test paths it registers),
# or every case of a qtest program whose sources it changes without
# registering one, run on the tree as of that patch; the test command
# runs them all on the whole series.  Output: $build/qtest-walk.log.
walk_qtests() {
    local f t rc cases sel
    local -A srcs=()
    while IFS= read -r f; do
        t=$(qtest_program "$f")
        [ -z "$t" ] || srcs[$t]+=" b/$f"
    done < <(sed -n 's|^+++ b/\(tests/qtest/.*\.[ch]\)$|\1|p' "$1" | sort -u)
    for t in $(printf '%s\n' "${!srcs[@]}" | sort); do
        # the hunks of this program's files: their added test paths ("/ahci/...")
        cases=$(awk -v fs="${srcs[$t]}" '
            BEGIN { n = split(fs, a, " "); for (i = 1; i <= n; i++) mine[a[i]] = 1 }
            /^\+\+\+ / { on = ($2 in mine) }
            on && /^\+/ && match($0, /"\/[a-z0-9_\/-]+"/) {
                print substr($0, RSTART + 1, RLENGTH - 2) }' "$1" | sort -u)
        sel=()
        for c in $cases; do sel+=(-p "/x86_64$c"); done
        ninja_build "qtest $t" "the series does not bisect: tests/qtest/$t does not build after $name" "tests/qtest/$t"
        (cd "$build" && QTEST_QEMU_BINARY=./qemu-system-x86_64 \
            QTEST_QEMU_IMG=./qemu-img G_TEST_DBUS_DAEMON=/bin/true \
            timeout 1800 "tests/qtest/$t" --tap -k "${sel[@]}") \
            >>"$build/qtest-walk.log" 2>&1
        rc=$?
        if [ $rc != 0 ] || grep -q "^not ok" "$build/qtest-walk.log" ||
           ! grep -q "^ok " "$build/qtest-walk.log"; then
            grep "^not ok" "$build/qtest-walk.log" >&2
            die "the series does not bisect: tests/qtest/$t fails after $name (exit $rc); log: $build/qtest-walk.log"
        fi
        log "bisect: tests/qtest/$t passes after $name ($(grep -c '^ok ' "$build/qtest-walk.log") case(s)$([ $(wc -w <<<"$cases") -le 12 ] && [ -n "$cases" ] && echo ": "$cases))"
    done
}

# walk_git ARG...: git on the walk's repository of the pristine tree, as
# the project's identity, with no user or system configuration
walk_git() {
    GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
    GIT_AUTHOR_NAME="ncq-disk developers" GIT_AUTHOR_EMAIL=ncq-disk@invalid \
    GIT_COMMITTER_NAME="ncq-disk developers" GIT_COMMITTER_EMAIL=ncq-disk@invalid \
        git --git-dir="$work.git" --work-tree="$work" "$@"
}

walk_git_init() {
    git init -q --bare "$work.git" && walk_git config core.bare false &&
        walk_git add -A && walk_git commit -q -m "QEMU $ver (pristine)" \
        || die "cannot make a git repository of $work"
}

# walk_record KEY NAME: patch NAME is proved; the record keeps the proofs
# of the current series only, in its order
walk_record() {
    local k i keep=()
    for k in "${walk_keys[@]}"; do
        [ "$k" = "$1" ] || grep -q "^$k " "$WALKED" 2>/dev/null || continue
        keep+=("$k")
    done
    {
        echo "# The series walk's proofs (scripts/build-qemu.sh --walk): each line,"
        echo "# a patch that built, and passed the qtests it adds, on the tree of the"
        echo "# pristine source and the patches before it.  Written by the walk;"
        echo "# commit it with the series.  Key: sha256 of pristine, configure and patches."
        for k in "${keep[@]}"; do
            for i in "${!walk_keys[@]}"; do
                [ "${walk_keys[$i]}" = "$k" ] || continue
                echo "$k ${patches[$i]#"$patch_dir"/}"
            done
        done
    } >"$WALKED.tmp" && mv "$WALKED.tmp" "$WALKED"
}

# The work tree is keyed by the patch series: a change re-creates it from
# the pristine tree.  cp -a keeps mtimes; every file the old or the new
# series patches is touched, so that ninja rebuilds exactly those (an
# object built from a file the old series patched is not newer than the
# pristine file that replaces it).  A real copy (not hard links) keeps the
# pristine tree safe from in-place edits.
# Every flavour builds from this one tree: each build holds it shared to
# the end, and it is re-created only under an exclusive lock, when no
# other build uses it.
mkdir -p "$CACHE"
exec 9>"$CACHE/build-$flavour.lock"
flock 9
# ninja.log gathers every ninja run of this build (the walk's too), so the
# warning check below sees each compile.
[ -d "$build" ] && : >"$build/ninja.log"
exec 8>"$CACHE/work-$(basename "$work").lock"
flock -s 8
if [ ! -f "$work/.series-$series_sum" ] || [ $walk = 1 ]; then
    flock -x 8
fi
if [ ! -f "$work/.series-$series_sum" ] || [ $walk = 1 ]; then
    log "preparing work tree $work"
    # A build directory from a tree of unknown history (made before this
    # list was kept) may hold objects of files no list names: start it
    # anew rather than trust it.
    if [ -d "$work" ] && [ ! -f "$work/.patched-files" ] && [ -d "$build" ]; then
        log "no record of what the old work tree patched: rebuilding $build from scratch"
        rm -rf "$build"
    fi
    old_files=$(cat "$work/.patched-files" 2>/dev/null || true)
    new_files=$(sed -n 's|^+++ b/||p' "${patches[@]}" | sort -u)
    rm -rf "$work" "$work.git"
    mkdir -p "$(dirname "$work")"
    cp -a "$pristine" "$work"
    # the walk applies the mailbox as a maintainer would: git am onto a
    # repository of the pristine tree (its git directory beside the tree,
    # so that configure and qemu-version.sh see no checkout)
    [ $walk = 1 ] && walk_git_init
    for f in $old_files $new_files; do
        [ -e "$work/$f" ] && touch "$work/$f"
    done
    # every file any series built here patched: each is a source some
    # object in the build directory may still have been compiled from
    printf '%s\n' $old_files $new_files | sort -u >"$work/.patched-files"
    if [ $walk = 1 ]; then devices_mak; else overlay_link; fi
    n=${#patches[@]} i=0
    [ $walk = 1 ] && configure_build
    [ $walk = 1 ] && log "walking the series from patch $walk_from/$n (patches/qemu/walked records the ones before)"
    for p in "${patches[@]}"; do
        i=$((i + 1))
        name=${p#"$patch_dir"/}
        if [ $walk = 1 ]; then
            walk_git am -q "$p" >&2 \
                || die "patch $name of the mailbox does not apply with git am to $ver; refresh patches/qemu/"
        else
            patch -s -d "$work" -p1 --no-backup-if-mismatch < "$p" \
                || die "patch $name does not apply to $ver; refresh patches/qemu/"
        fi
        if [ $walk = 1 ] && [ $i -ge $walk_from ]; then
            devices_mak
            t0=$(date +%s)
            ninja_build "after patch $i/$n ($name)" \
                "the series does not bisect: the build fails after patch $i/$n ($name)"
            log "bisect: patch $i/$n builds ($(( $(date +%s) - t0 )) s): $name"
            : >"$build/qtest-walk.log"
            walk_qtests "$p"
            walk_record "${walk_keys[$((i - 1))]}" "$name"
        fi
    done
    touch "$work/.series-$series_sum"
fi
if [ $walk = 1 ]; then
    log "the series walk: all $n patches of the mailbox build and pass the qtests they add"
    exit 0
fi
flock -s 8
overlay_link
configure_build

log "building in $build"
t0=$(date +%s)
ninja_build "the build" "the build failed"
log "built in $(( $(date +%s) - t0 )) s"
# Upstream's release build has no -Werror; the project's own files must be
# warning-free all the same.
if grep -B2 -A6 -E "(ncq-disk|ncq-model)[^ ]*:[0-9]+:[0-9]+: (warning|error)" "$build/ninja.log" >&2; then
    # Drop the project's objects so the next run compiles (and warns) again.
    find "$build" -name '*ncq*.c.o' -delete
    die "warnings in project files (above); fix them"
fi
firmware_links
[ -f /usr/share/qemu/qboot.rom ] || die "/usr/share/qemu/qboot.rom missing; run scripts/install-deps.sh (package qemu-system-data)"
if [ $install = 1 ]; then
    # The two binaries the project promises, copied from this build: no
    # reconfigure and no other targets built (a full "ninja install" builds
    # every QEMU tool first).  At run time QEMU reads only firmware, from
    # the absolute --firmwarepath above (Debian's packages), not from the
    # prefix.
    case $PREFIX in /*) ;; *) PREFIX=$(pwd)/$PREFIX ;; esac
    install -d "$PREFIX/bin" || die "cannot create $PREFIX/bin"
    install -m 755 "$build/qemu-system-x86_64" "$build/qemu-img" "$PREFIX/bin/"
    log "installed under $PREFIX"
fi
# the walk's build serves no test: it names no build directory
[ $want_walk = 1 ] || echo "$build"
