#!/bin/bash
# Build the ncq-disk guest image: a kernel (vmlinuz) and an initramfs (initrd.img)
# made from Debian packages only.  See docs/guest-image.md.
#
#   images/build-image.sh                              # Debian 12's current kernel (6.1)
#   images/build-image.sh --debian trixie              # Debian 13's current kernel (6.12)
#   images/build-image.sh [--debian S] --kernel-version 6.1.0-NN-amd64
#   images/build-image.sh [--debian S] --list-kernels  # the versions --kernel-version takes
#   images/build-image.sh --kernel PATH/bzImage --modules DIR   # DIR = lib/modules/<ver>
#   images/build-image.sh --print-dir                  # only print the directory
#   --debian bookworm|trixie  the Debian release whose kernel package is used
#                             (default bookworm); a release other than the host's is
#                             resolved with private apt lists in $NCQ_CACHE/apt/<release>
#   --compress gzip|xz|none   initramfs compression (default none: the guest
#                             unpacks it faster than it would gunzip it; see the doc)
#   --force                   rebuild even when the output directory exists
#   --add SRC[:DEST]          copy a host file or directory tree into the image at
#                             DEST (default: SRC's own absolute path); programs and
#                             shared libraries in it come with the libraries they
#                             need (ldd).  Repeatable.
#   --package NAME            a Debian package of the image's release (--debian),
#                             with what it depends on, unpacked into the image
#                             (fetched with apt-get into $NCQ_CACHE/debs).  Repeatable.
#   --module NAME             one more kernel module of the image's kernel (with
#                             what it depends on and its soft dependencies, as
#                             modprobe loads them), beside MODULES (below);
#                             e.g. --module f2fs (crc32_generic comes with it).
#                             Repeatable.
#   --no-default-packages     leave out DEFAULT_PACKAGES (bash, coreutils, ...: below)
#   --host-fio                the host's fio instead of Debian 13's (below)
#
# The last line on stdout is the output directory
#   ${NCQ_CACHE:-$HOME/.cache/ncq-disk}/images/<inputs-hash>/
# holding vmlinuz, vmlinux (the kernel uncompressed, when it can boot
# through PVH), initrd.img, config (when known) and manifest.txt.  Progress
# goes to stderr.  Same inputs -> same directory, and a byte-identical initrd.img.
set -euo pipefail
export LC_ALL=C
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
INIT_SRC="$HERE/init"
# The guest's helper that gives I/O a Command Duration Limit hint (one
# read at a time, or a command it starts), built statically here
CDL_HINT_SRC="$HERE/cdl-hint.c"
# The workload's reader (fw_cfg's DMA interface: the sysfs file is quadratic
# in the file's size), built statically
FWCFG_READ_SRC="$HERE/fwcfg-read.c"
EXTRACT_VMLINUX="$HERE/extract-vmlinux.py"
MODULE_CLOSURE="$HERE/module-closure.py"
# ncq-fit's probe (tools/ncq-fit/probe-*.c, docs/ncq-fit.md), built statically
FIT_PROBE_DIR="$HERE/../tools/ncq-fit"
CACHE=${NCQ_CACHE:-$HOME/.cache/ncq-disk}
# Every timestamp in the initramfs (Debian 12's release day).  Fixed, so that the
# image only depends on the inputs hashed below.
EPOCH=1686355200
# Modules the guest needs (closed over modules.dep and the soft dependencies,
# images/module-closure.py).  Names that are built into the kernel or absent
# are skipped.  ext4 and its helpers are for the fsck tests; the
# crc/crypto ones are loaded by request_module (crypto API), which modules.dep
# does not show.  qemu_fw_cfg reads the workload the harness passes with
# -fw_cfg (guest-tests/ncqguest.py), after a snapshot restore.  configfs,
# null_blk, scsi_debug, loop, brd and sg are the reference devices and the
# SCSI generic nodes that user suites (blktests, docs/kernel-testing.md) set up;
# sr_mod the SCSI CD driver blktests' block/001 hot-plugs with scsi_debug.
# zonefs is the file system of a host-managed zoned drive (docs/smr.md;
# 100 KB); btrfs has its zoned mode built in.
MODULES=(
    ahci libahci libata
    sd_mod scsi_mod scsi_common t10-pi crc-t10dif crct10dif_common
    crct10dif_generic crct10dif-pclmul crc64 crc64-rocksoft crc64_rocksoft_generic
    bfq kyber-iosched
    ext4 jbd2 mbcache crc16 libcrc32c crc32c_generic crc32c-intel
    qemu_fw_cfg
    md-mod raid1 raid456 btrfs
    configfs null_blk scsi_debug loop brd sg sr_mod
    zonefs
)
# Host programs copied in, with their shared libraries (ldd).  hdparm is for
# 'hdparm -t', the sequential-read figure users quote (test_sequential.py).
# smartctl, the sg3-utils below and blktrace/blkparse are the tools a user
# runs on a new disk (docs/kernel-testing.md reads blkparse beside the device
# trace).  mdadm and btrfs put arrays of several ncq-disks together
# (guest-tests/test_raid*.py).
PROGRAMS=(/usr/bin/fio /usr/bin/kmod /usr/sbin/hdparm /usr/sbin/mke2fs
    /usr/sbin/e2fsck /usr/sbin/tune2fs /usr/sbin/dumpe2fs
    /usr/sbin/smartctl /usr/sbin/blktrace /usr/bin/blkparse /usr/bin/btt
    /usr/bin/sg_inq /usr/bin/sg_vpd /usr/bin/sg_readcap /usr/bin/sg_sat_identify
    /usr/bin/sg_sat_read_gplog /usr/bin/sg_sat_set_features /usr/bin/sg_logs
    /usr/bin/sg_raw /usr/bin/sg_decode_sense /usr/bin/sg_turs /usr/bin/sg_requests
    /usr/sbin/mdadm /usr/bin/btrfs /usr/sbin/mkfs.btrfs)
# Debian packages of the image's release unpacked into every image (with what
# they depend on), after the host programs: the real tools take precedence over
# busybox's applets of the same name (gzip, umount, ls, ...), and user suites
# (blktests, cdl-tools, docs/kernel-testing.md) get bash, bc, GNU time, gawk and
# the GNU/util-linux tools they are written for.
DEFAULT_PACKAGES=(bash bc time coreutils util-linux mount gzip gawk grep sed
    findutils diffutils procps)
# ... and in the releases that have them: zonefs-tools' mkzonefs (Debian 13 on;
# Debian 12 has no zonefs-tools: scripts/run-zonefs-tests.sh builds it)
DEFAULT_PACKAGES_trixie=(zonefs-tools)
# Packages never unpacked, even as dependencies: they serve dpkg's maintainer
# scripts and the login system, which do not run in the image.  Essential
# packages (perl-base, dash, ...) are no declared dependency of anything, so a
# program that needs one gets it only by its own --package.
PKG_SKIP=(debconf perl-base dpkg base-files base-passwd adduser passwd
    init-system-helpers usrmerge sensible-utils libpam-modules libpam-modules-bin
    libpam-runtime tzdata install-info lsb-base sysvinit-utils ucf
    debian-archive-keyring gpgv apt libapt-pkg6.0 libapt-pkg7.0)
# Paths of a package not unpacked (documentation, translations)
PKG_EXCLUDE=(usr/share/doc usr/share/man usr/share/info usr/share/locale
    usr/share/lintian usr/share/bug usr/share/bash-completion usr/share/zsh
    usr/share/fish usr/lib/systemd etc/init.d etc/systemd)
KMOD_LINKS=(modprobe insmod rmmod lsmod depmod modinfo)
E2FS_LINKS=(mkfs.ext2:mke2fs mkfs.ext3:mke2fs mkfs.ext4:mke2fs
    fsck.ext2:e2fsck fsck.ext3:e2fsck fsck.ext4:e2fsck)

log() { echo "build-image: $*" >&2; }
die() { echo "build-image: error: $*" >&2; exit 1; }

usage() {  # the header comment above, up to 'set -euo pipefail'
    sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$SELF"
    exit "${1:-0}"
}

KVER_PIN=
SUITE=
LIST_KERNELS=0
USER_KERNEL=
USER_MODULES=
PRINT_DIR=0
FORCE=0
COMPRESS=none
ADDS=()
USER_PACKAGES=()
EXTRA_MODULES=()
DEFAULT_PKGS=1
DEFAULT_FIO=1
while [ $# -gt 0 ]; do
    case "$1" in
        --kernel-version) [ $# -ge 2 ] || die "$1 needs a value"; KVER_PIN=$2; shift 2 ;;
        --kernel-version=*) KVER_PIN=${1#*=}; shift ;;
        --debian) [ $# -ge 2 ] || die "$1 needs a value"; SUITE=$2; shift 2 ;;
        --debian=*) SUITE=${1#*=}; shift ;;
        --list-kernels) LIST_KERNELS=1; shift ;;
        --kernel) [ $# -ge 2 ] || die "$1 needs a value"; USER_KERNEL=$2; shift 2 ;;
        --kernel=*) USER_KERNEL=${1#*=}; shift ;;
        --modules) [ $# -ge 2 ] || die "$1 needs a value"; USER_MODULES=$2; shift 2 ;;
        --modules=*) USER_MODULES=${1#*=}; shift ;;
        --compress) [ $# -ge 2 ] || die "$1 needs a value"; COMPRESS=$2; shift 2 ;;
        --compress=*) COMPRESS=${1#*=}; shift ;;
        --add) [ $# -ge 2 ] || die "$1 needs a value: --add SRC[:DEST]"; ADDS+=("$2"); shift 2 ;;
        --add=*) ADDS+=("${1#*=}"); shift ;;
        --package) [ $# -ge 2 ] || die "$1 needs a value: --package NAME (a Debian package)"; USER_PACKAGES+=("$2"); shift 2 ;;
        --package=*) USER_PACKAGES+=("${1#*=}"); shift ;;
        --module) [ $# -ge 2 ] || die "$1 needs a value: --module NAME (a kernel module)"; EXTRA_MODULES+=("$2"); shift 2 ;;
        --module=*) EXTRA_MODULES+=("${1#*=}"); shift ;;
        --no-default-packages) DEFAULT_PKGS=0; shift ;;
        --host-fio) DEFAULT_FIO=0; shift ;;
        --print-dir) PRINT_DIR=1; shift ;;
        --force) FORCE=1; shift ;;
        -h | --help) usage 0 ;;
        *) echo "build-image: unknown option: $1" >&2; usage 2 >&2 ;;
    esac
done
[ -z "$USER_MODULES" ] || [ -n "$USER_KERNEL" ] || die "--modules needs --kernel"
[ -z "$USER_KERNEL" ] || [ -z "$KVER_PIN" ] || die "--kernel and --kernel-version exclude each other"
[ -z "$USER_KERNEL" ] || [ -z "$SUITE" ] || die "--kernel and --debian exclude each other (--debian picks a Debian kernel package)"
[ -z "$USER_KERNEL" ] || [ $LIST_KERNELS = 0 ] || die "--kernel and --list-kernels exclude each other"
case "$COMPRESS" in gzip | xz | none) ;; *) die "--compress wants gzip, xz or none, got '$COMPRESS'" ;; esac
# The Debian releases whose kernels the image is known to work with, and the
# --kernel-version form of their kernel packages.
case "${SUITE:=bookworm}" in
    bookworm) KVER_EXAMPLE=6.1.0-NN-amd64 ;;
    trixie) KVER_EXAMPLE=6.12.NN+deb13-amd64 ;;
    *) die "--debian wants bookworm (Debian 12, the default) or trixie (Debian 13), got '$SUITE'" ;;
esac
case "$KVER_PIN" in '' | [0-9]*-amd64) ;; *) die "--kernel-version wants e.g. $KVER_EXAMPLE, got '$KVER_PIN'" ;; esac
for m in "${EXTRA_MODULES[@]}"; do
    case "$m" in *[!A-Za-z0-9_-]* | '') die "--module '$m': not a module name (letters, digits, '_', '-'): e.g. --module f2fs" ;; esac
done
MODULES+=("${EXTRA_MODULES[@]}")

# ---------------------------------------------------------------- tools
need() {  # need COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 \
        || die "'$1' not found: install Debian package $2 (scripts/install-deps.sh does)"
}
need cpio cpio
need gzip gzip
[ "$COMPRESS" != xz ] || need xz xz-utils
need sha256sum coreutils
need ldd libc-bin
need flock util-linux
need gcc gcc
need dpkg-query dpkg
need dpkg-deb dpkg
need depmod kmod
[ -n "$USER_KERNEL" ] || { need apt-get apt; need apt-cache apt; }
cpio --help 2>/dev/null | grep -- --reproducible >/dev/null \
    || die "cpio has no --reproducible (need GNU cpio >= 2.12): install Debian package cpio"
for p in busybox-static kmod fio hdparm smartmontools sg3-utils blktrace mdadm btrfs-progs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'ok installed' >/dev/null \
        || die "Debian package $p is not installed: run scripts/install-deps.sh (or apt-get install $p)"
done
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || die "$BUSYBOX missing: reinstall Debian package busybox-static"
dpkg-query -S "$BUSYBOX" 2>/dev/null | grep '^busybox-static:' >/dev/null \
    || die "$BUSYBOX is not from busybox-static (a dynamic busybox would need its libraries): apt-get install busybox-static"
[ -f "$INIT_SRC" ] || die "$INIT_SRC missing"
progs=()
for p in "${PROGRAMS[@]}"; do
    [ $DEFAULT_FIO = 1 ] && [ "${p##*/}" = fio ] && continue   # Debian 13's instead (below)
    if [ -x "$p" ]; then
        progs+=("$p")
    elif [ -x "${p/\/usr/}" ]; then
        progs+=("${p/\/usr/}")
    else
        case "$p" in
            */fio | */kmod | */hdparm) die "$p not found: install Debian package $(basename "$p")" ;;
            */smartctl | */blktrace | */blkparse | */btt | */sg_* | */mdadm | */*btrfs)
                die "$p not found: run scripts/install-deps.sh (Debian packages smartmontools, blktrace, sg3-utils, mdadm, btrfs-progs)" ;;
            *) log "note: $p not found (e2fsprogs), left out" ;;
        esac
    fi
done
PROGRAMS=("${progs[@]}")

# ---------------------------------------------------------------- --add
# Each --add SRC[:DEST]: SRC a host file or directory, DEST an absolute path in
# the image (default SRC's absolute path; /bin, /sbin, /lib go under /usr as
# the image's merged /usr has them).  ELF files in it (programs, shared
# libraries) bring the shared libraries ldd finds for them.
ADD_SRC=() ADD_DST=() ADD_IDS=()
declare -A ADDLIBS=()
is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }
add_libs_of() {  # add_libs_of FILE: its shared libraries (ldd) into ADDLIBS
    local out a b c
    out=$(ldd "$1" 2>/dev/null) || return 0   # static, or no program
    if grep -q 'not found' <<<"$out"; then
        die "--add: $1 needs libraries the host lacks: $(grep 'not found' <<<"$out" | tr -s ' \t\n' ' ')(install them, or --add them too)"
    fi
    while read -r a b c _; do
        if [ "$b" = "=>" ] && [ "${c:0:1}" = / ]; then
            ADDLIBS[$c]=1
        elif [ "${a:0:1}" = / ]; then
            ADDLIBS[$a]=1
        fi
    done <<<"$out"
}
tree_id() {  # a digest of a file or tree: names, types, modes, link targets, contents
    if [ -d "$1" ]; then
        (cd "$1" && find . -printf '%y %m %P %l\n' | sort \
            && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum | cut -d' ' -f1
    else
        { stat -L -c '%a' "$1"; sha256sum <"$1"; } | sha256sum | cut -d' ' -f1
    fi
}
for a in "${ADDS[@]}"; do
    src=$a dst=
    case "$a" in *:/*) src=${a%:/*} dst=/${a##*:/} ;; esac
    [ -n "$src" ] || die "--add '$a': no SRC: write --add SRC[:DEST], e.g. --add /usr/bin/bc or --add ./blktests:/opt/blktests"
    [ -e "$src" ] || die "--add $src: no such file or directory: give an existing host file or directory (--add SRC[:DEST])"
    [ -r "$src" ] || die "--add $src: not readable: run as a user who can read it, or copy it somewhere readable"
    [ -f "$src" ] || [ -d "$src" ] || die "--add $src: neither a regular file nor a directory: add the file itself (readlink -f $src)"
    srcabs=$(cd "$(dirname "$src")" && pwd)/$(basename "$src")
    [ -n "$dst" ] || dst=$srcabs
    case "$dst" in */) [ -d "$src" ] || dst=$dst$(basename "$src") ;; esac
    dst=${dst%/}
    case "$dst" in /bin/* | /sbin/* | /lib/* | /lib64/*) dst=/usr$dst ;; esac
    case "/$dst/" in */../* | */./*) die "--add $a: DEST $dst has '.' or '..' in it: give a plain absolute path" ;; esac
    case "$dst" in / | /usr | /usr/bin | /usr/sbin | /usr/lib | /dev | /proc | /sys | /init)
        die "--add $a: DEST $dst would replace a directory the image needs: pick a path below it, e.g. $dst/$(basename "$src")" ;;
    esac
    ADD_SRC+=("$srcabs")
    ADD_DST+=("$dst")
    ADD_IDS+=("add $dst $( [ -d "$src" ] && echo tree || echo file ) sha256 $(tree_id "$srcabs")")
    if [ -d "$srcabs" ]; then
        while IFS= read -r -d '' f; do
            is_elf "$f" && add_libs_of "$f"
        done < <(find "$srcabs" -type f -print0)
    elif is_elf "$srcabs"; then
        add_libs_of "$srcabs"
    fi
done
mapfile -t ADDLIBLIST < <(printf '%s\n' "${!ADDLIBS[@]}" | grep . | sort)
for l in "${ADDLIBLIST[@]}"; do
    ADD_IDS+=("add_lib $l sha256 $(sha256sum <"$l" | cut -d' ' -f1)")
done

# ---------------------------------------------------------------- host files
# Shared libraries of PROGRAMS, resolved by ldd (the dynamic loader included).
declare -A LIBS=()
for p in "${PROGRAMS[@]}"; do
    out=$(ldd "$p") || die "ldd $p failed"
    if grep -q 'not found' <<<"$out"; then
        die "ldd $p: missing libraries: $(grep 'not found' <<<"$out" | tr -s ' \t\n' ' ')"
    fi
    while read -r a b c _; do
        if [ "$b" = "=>" ] && [ "${c:0:1}" = / ]; then
            LIBS[$c]=1
        elif [ "${a:0:1}" = / ]; then
            LIBS[$a]=1
        fi
    done <<<"$out"
done
mapfile -t LIBLIST < <(printf '%s\n' "${!LIBS[@]}" | sort)

# The Debian packages owning every host file that goes into the image.
owner_of() {  # prints "path package" lines for the given paths
    local q=() f r
    for f in "$@"; do
        r=$(readlink -f "$f")
        q+=("$f" "$r" "/usr${f#/usr}" "${f#/usr}" "/usr${r#/usr}" "${r#/usr}")
    done
    dpkg-query -S "${q[@]}" 2>/dev/null | awk -F': ' '!/^diversion/ {print $2, $1}' || true
}
declare -A OWNER=()
while read -r f pkg; do OWNER[$f]=$pkg; done < <(owner_of "$BUSYBOX" "${PROGRAMS[@]}" "${LIBLIST[@]}")
HOSTPKGS=()
for f in "$BUSYBOX" "${PROGRAMS[@]}" "${LIBLIST[@]}"; do
    r=$(readlink -f "$f")
    pkg=
    for c in "$f" "$r" "/usr${f#/usr}" "${f#/usr}" "/usr${r#/usr}" "${r#/usr}"; do
        [ -n "${OWNER[$c]:-}" ] && { pkg=${OWNER[$c]}; break; }
    done
    [ -n "$pkg" ] || die "$f belongs to no Debian package; the image takes Debian packages only"
    HOSTPKGS+=("${pkg%%,*}")
done
mapfile -t HOSTPKGS < <(printf '%s\n' "${HOSTPKGS[@]}" | sort -u)
PKGVERSIONS=$(dpkg-query -W -f='${binary:Package} ${Version}\n' "${HOSTPKGS[@]}" | sort)

# ---------------------------------------------------------------- apt
# The host's own Debian release is resolved with the host's apt lists (as
# 'apt-get update' left them).  Any other release gets private lists under
# $CACHE/apt/<release>: the host's sources and lists are never touched.
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
APT_OPTS=()
APT_DIR=
apt_private() {  # apt_private [RELEASE]: sets APT_OPTS and APT_DIR for RELEASE (default
    # $SUITE); fetches its lists when needed
    local SUITE=${1:-$SUITE}
    APT_DIR=$CACHE/apt/$SUITE
    local d=$APT_DIR src
    [ -f "$KEYRING" ] || die "$KEYRING missing: install Debian package debian-archive-keyring"
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/empty"
    # 'target=Packages': the package index only (no translations or AppStream data)
    src="deb [signed-by=$KEYRING target=Packages] http://deb.debian.org/debian $SUITE main
deb [signed-by=$KEYRING target=Packages] http://deb.debian.org/debian $SUITE-updates main
deb [signed-by=$KEYRING target=Packages] http://deb.debian.org/debian-security $SUITE-security main"
    if [ "$(cat "$d/sources.list" 2>/dev/null)" != "$src" ]; then
        echo "$src" >"$d/sources.list"
        rm -f "$d/updated"
    fi
    [ -f "$d/status" ] || : >"$d/status"
    # An empty dpkg status and no preferences: the candidate is the release's
    # newest, whatever the host has installed or pinned.
    APT_OPTS=(-o "Dir::Etc::sourcelist=$d/sources.list" -o "Dir::Etc::sourceparts=$d/empty"
        -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache"
        -o "Dir::State::status=$d/status" -o "Dir::Etc::preferences=$d/empty/none"
        -o "Dir::Etc::preferencesparts=$d/empty" -o "APT::Architectures::=amd64")
    exec 8>"$d/.lock"
    flock 8
    # Lists older than a day are fetched again ('updated' marks the last success).
    if [ ! -f "$d/updated" ] || [ -n "$(find "$d/updated" -mmin +1440)" ]; then
        log "apt-get update for Debian $SUITE (private lists in $d/lists)"
        if apt-get -q --error-on=any "${APT_OPTS[@]}" update >&2; then
            touch "$d/updated"
        elif [ -f "$d/updated" ]; then
            log "note: apt-get update failed; using Debian $SUITE's lists of $(date -r "$d/updated" '+%F %T')"
        else
            die "apt-get update for Debian $SUITE failed: is deb.debian.org reachable? (lists go to $d/lists)"
        fi
    fi
    exec 8>&-
}
if [ -z "$USER_KERNEL" ]; then
    HOST_SUITE=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || true
    [ "$SUITE" = "$HOST_SUITE" ] || apt_private
fi
if [ $LIST_KERNELS = 1 ]; then
    apt-cache "${APT_OPTS[@]}" search --names-only '^linux-image-[0-9].*-amd64$' \
        | sed -n 's/^linux-image-\([^ ]*\) - .*/\1/p' | sort -V
    exit 0
fi

# ---------------------------------------------------------------- kernel identity
# The release string of a bzImage (what 'uname -r' will say), from its setup
# header (Documentation/arch/x86/boot.rst: "HdrS" at 0x202, at 0x20e the
# offset - 0x200 of the version string).  Nothing when it is no bzImage.
bzimage_release() {
    local off
    [ "$(dd if="$1" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] || return 0
    off=$(od -An -tu2 -j526 -N2 "$1" | tr -d ' ')
    [ "${off:-0}" -gt 0 ] || return 0
    dd if="$1" bs=1 skip=$((off + 512)) count=256 2>/dev/null | tr '\0' '\n' | head -1 | cut -d' ' -f1
}
# A module file name: plain or compressed as the kernel's build may leave it.
KO_NAMES=(-name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz')
# Where under DIR a lib/modules/<version> tree is, for the error message.
modules_tree_hint() {
    local c
    for c in "$1"/lib/modules/* "$1"/usr/lib/modules/* "$1"/*; do
        [ -d "$c/kernel" ] && { echo "; did you mean --modules $c ?"; return; }
    done
    echo "; for a kernel tree: make modules_install INSTALL_MOD_PATH=/tmp/mods, then --modules /tmp/mods/lib/modules/<version>"
}
# --modules DIR: a lib/modules/<version> tree.  Without modules.dep (unpacked
# from a package, or copied) depmod runs on a private copy at build time.
check_user_modules() {
    [ -d "$USER_MODULES" ] || die "--modules $USER_MODULES: no such directory"
    USER_MODULES=$(cd "$USER_MODULES" && pwd)
    KREL=$(basename "$USER_MODULES")
    [ -n "$(find "$USER_MODULES/" \( "${KO_NAMES[@]}" \) -print -quit)" ] \
        || die "--modules $USER_MODULES is not a lib/modules/<version> tree (no kernel modules in it)$(modules_tree_hint "$USER_MODULES")"
    case "$KREL" in [0-9]*) ;; *) die "--modules $USER_MODULES is not a lib/modules/<version> tree (its name is no kernel release)$(modules_tree_hint "$USER_MODULES")" ;; esac
    local brel
    brel=$(bzimage_release "$USER_KERNEL")
    [ -z "$brel" ] || [ "$brel" = "$KREL" ] \
        || die "--kernel $USER_KERNEL is release $brel but --modules is for $KREL: pass the lib/modules/$brel tree of the same build"
    USER_DEPMOD=0
    if [ ! -f "$USER_MODULES/modules.dep" ]; then
        USER_DEPMOD=1
        log "note: $USER_MODULES has no modules.dep: running depmod on a private copy"
    fi
}
KPKG='' KPKGVER='' KDEB='' KERNEL_ID='' KCONFIG='' USER_DEPMOD=0
if [ -n "$USER_KERNEL" ]; then
    [ -f "$USER_KERNEL" ] || die "--kernel $USER_KERNEL: no such file"
    if [ -n "$USER_MODULES" ]; then
        check_user_modules
    else
        log "note: no --modules: the kernel must have AHCI, SCSI disk, bfq, kyber and ext4 built in"
        KREL=$(bzimage_release "$USER_KERNEL")
        KREL=${KREL:-none}
    fi
    KERNEL_ID="user-kernel $(sha256sum <"$USER_KERNEL" | cut -d' ' -f1) release $KREL"
else
    if [ -n "$KVER_PIN" ]; then
        KPKG=linux-image-$KVER_PIN
    else
        # The candidate linux-image-amd64 depends on exactly one concrete kernel
        # package, usually with its version: "linux-image-6.1.0-NN-amd64 (= V)".
        read -r KPKG KPKGVER < <(apt-cache "${APT_OPTS[@]}" show --no-all-versions linux-image-amd64 2>/dev/null \
            | sed -n 's/^Depends:.*\(linux-image-[0-9][^ ,]*\)\( (= \([^)]*\))\)\{0,1\}.*/\1 \3/p' \
            | head -1) || true
        if [ -z "${KPKG:-}" ] && [ -n "$APT_DIR" ]; then
            die "cannot resolve linux-image-amd64 from Debian $SUITE's lists: delete $APT_DIR/updated and run again (fetches them)"
        fi
        [ -n "${KPKG:-}" ] || die "cannot resolve linux-image-amd64 from apt's lists: run 'apt-get update' (Debian $SUITE sources needed; scripts/install-deps.sh)"
    fi
    KREL=${KPKG#linux-image-}
    [ -n "${KPKGVER:-}" ] \
        || KPKGVER=$(apt-cache "${APT_OPTS[@]}" policy "$KPKG" 2>/dev/null | awk '$1 == "Candidate:" {print $2; exit}') || true
    if [ -z "$KPKGVER" ] || [ "$KPKGVER" = "(none)" ]; then
        # Gone from the archive (or lists missing): a cached .deb still does.
        KDEB=$(ls -1 "$CACHE/debs/${KPKG}_"*_amd64.deb 2>/dev/null | sort -V | tail -1) || true
        [ -n "$KDEB" ] || die "package $KPKG unknown to Debian $SUITE's apt lists and not in $CACHE/debs: pick a current one ($0 --debian $SUITE --list-kernels)"
        KPKGVER=$(dpkg-deb -f "$KDEB" Version)
        log "$KPKG not in apt's lists; using cached $(basename "$KDEB")"
    fi
    KERNEL_ID="debian-package $KPKG $KPKGVER"
fi

# ---------------------------------------------------------------- packages
# DEFAULT_PACKAGES and every --package, resolved with their dependencies
# (Depends, Pre-Depends; no Recommends) against the image's release: apt's own
# resolver on a private dpkg status in which only PKG_SKIP counts as
# installed, so that the host's installed packages do not matter.  The
# answer is kept in $CACHE/apt/resolved/ for the same request and lists.
PKG_SUITE=$SUITE
[ -z "$USER_KERNEL" ] || PKG_SUITE=${HOST_SUITE:-$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")}
WANT_PKGS=()
if [ $DEFAULT_PKGS = 1 ]; then
    WANT_PKGS+=("${DEFAULT_PACKAGES[@]}")
    [ "$PKG_SUITE" != trixie ] || WANT_PKGS+=("${DEFAULT_PACKAGES_trixie[@]}")
fi
for p in "${USER_PACKAGES[@]}"; do
    case "$p" in
        *[!a-z0-9.+-]* | [!a-z0-9]*) die "--package '$p': not a Debian package name (lower case letters, digits, '.', '+', '-'): e.g. --package xfsprogs" ;;
    esac
    WANT_PKGS+=("$p")
done
mapfile -t WANT_PKGS < <(printf '%s\n' "${WANT_PKGS[@]}" | grep . | sort -u)
# resolve_pkgs RELEASE NAME...: "name version" lines of NAMEs and what they
# depend on, in RELEASE, with APT_OPTS/APT_DIR set for RELEASE
resolve_pkgs() {
    local rel=$1 key state lists out p known skip_re PST
    shift
    state=$CACHE/apt/resolved
    mkdir -p "$state"
    lists=${APT_DIR:+$APT_DIR/lists}
    lists=${lists:-/var/lib/apt/lists}
    key=$( { echo "$rel ${APT_DIR:-host}"; printf '%s\n' "$@" "${PKG_SKIP[@]}";
        sha256sum <"$SELF"; find "$lists" -maxdepth 1 -name '*_Packages*' -printf '%f %s %T@\n' | sort; } \
        | sha256sum | cut -c1-16)
    if [ -s "$state/$key" ]; then
        cat "$state/$key"
        return
    fi
    log "resolving $# packages of Debian $rel with their dependencies"
    # A private dpkg status and package cache per release, kept: apt rebuilds
    # its cache only when the lists or the status change.
    PST=$CACHE/apt/resolve-$rel${APT_DIR:+-private}
    mkdir -p "$PST/empty" "$PST/cache/archives/partial"
    exec 7>"$PST/.lock"
    flock 7
    [ -f "$PST/status" ] || : >"$PST/status"
    local opts=("${APT_OPTS[@]}" -o "Dir::State::status=$PST/status"
        -o "Dir::Etc::preferences=$PST/empty/none" -o "Dir::Etc::preferencesparts=$PST/empty"
        -o "APT::Architectures::=amd64" -o "APT::Install-Recommends=0"
        -o "APT::Install-Suggests=0" -o "Dir::Cache=$PST/cache")
    # Unknown names first: one line naming them and the fix.
    known=$(apt-cache "${opts[@]}" policy "$@" 2>/dev/null \
        | awk '/^[^ ].*:$/ {n=substr($0, 1, length($0)-1)} $1 == "Candidate:" && $2 != "(none)" {print n}')
    for p in "$@"; do
        grep -qx -- "$p" <<<"$known" || {
            die "--package $p: no such package in Debian $rel's lists (or only a virtual one): check the name with 'apt-cache search $p' or https://packages.debian.org/$rel/$p"
        }
    done
    # The skipped packages, marked installed (the file replaced only when it
    # changes, so that apt's cache stays valid)
    apt-cache "${opts[@]}" show --no-all-versions "${PKG_SKIP[@]}" 2>/dev/null \
        | awk '/^Package:/ && seen {print "Status: install ok installed\n"}
               /^(Package|Version|Architecture|Provides|Multi-Arch):/ {print; seen=1}
               END {if (seen) print "Status: install ok installed"}' >"$PST/status.new"
    if cmp -s "$PST/status.new" "$PST/status"; then
        rm -f "$PST/status.new"
    else
        mv "$PST/status.new" "$PST/status"
    fi
    if ! out=$(apt-get "${opts[@]}" -s -q install "$@" 2>&1); then
        die "cannot resolve packages $* in Debian $rel: $(grep -E '^E:| : Depends' <<<"$out" | head -5 | tr '\n' ' ')"
    fi
    exec 7>&-
    skip_re="^($(IFS='|'; echo "${PKG_SKIP[*]}")) "
    out=$(awk '$1 == "Inst" {v=$3; gsub(/[()]/, "", v); n=$2; sub(/:.*/, "", n); print n, v}' <<<"$out" \
        | grep -Ev -- "${skip_re//+/\\+}" | sort -u)
    [ -n "$out" ] || die "apt resolved nothing for $* (Debian $rel): delete $state and run again"
    echo "$out" >"$state/.$key.$$"
    mv "$state/.$key.$$" "$state/$key"
    echo "$out"
}
RESOLVED=()   # "name version" lines
if [ ${#WANT_PKGS[@]} -gt 0 ]; then
    need apt-get apt
    need apt-cache apt
    out=$(resolve_pkgs "$PKG_SUITE" "${WANT_PKGS[@]}") || exit 1
    mapfile -t RESOLVED <<<"$out"
fi
# fio: Debian 13's (3.39: cmdprio_hint, which 3.36 added; Debian 12 has 3.33 and
# bookworm-backports none) with the shared libraries it links, from Debian 13's
# packages, in a directory of its own with Debian 13's dynamic loader
# (/usr/lib/ncq-fio; /usr/bin/fio starts it), so that the image's other
# programs keep their release's libraries.  fio's python3 scripts are left out.
FIO_SUITE=trixie
# The libraries of the fio engines and options the image's users do not
# run (Ceph's rbd and rados, GlusterFS, NFS, NBD, RDMA, PMEM, NUMA
# placement), by soname stem: their packages are left out and each gets a
# stub library instead (fio_stub_libs below), whose every function says
# which library is a stub and exits 1.  Debian 13's fio links them all (60
# libraries with what they need, 58 MB); loading and relocating them cost
# 0.7 s of guest CPU under TCG at every fio start (docs/build.md).  What
# the tests and user suites use (libaio, io_uring, psync, sg, cmdprio_hint)
# needs only libaio, zlib and libc, which stay Debian 13's own.
FIO_STUBS=(librbd librados libgfapi libnfs libnbd librdmacm libibverbs libpmem libnuma)
FIO_RESOLVED=()
if [ $DEFAULT_FIO = 1 ]; then
    need apt-get apt
    need readelf binutils
    save_opts=("${APT_OPTS[@]}") save_dir=$APT_DIR
    if [ "$FIO_SUITE" = "${HOST_SUITE:-$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")}" ]; then
        APT_OPTS=() APT_DIR=
    else
        apt_private "$FIO_SUITE"
    fi
    FIO_APT_OPTS=("${APT_OPTS[@]}")
    fio_deps=$(apt-cache "${APT_OPTS[@]}" -o APT::Architectures::=amd64 show --no-all-versions fio 2>/dev/null \
        | sed -n 's/^Depends: //p' | head -1 | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/ //g' \
        | grep -Ev '^(python3|init-system-helpers)$' \
        | grep -Ev "^($(IFS='|'; echo "${FIO_STUBS[*]}"))[0-9]" | grep .) \
        || die "cannot find fio in Debian $FIO_SUITE's lists: delete $APT_DIR/updated and run again"
    fio_ver=$(apt-cache "${APT_OPTS[@]}" policy fio 2>/dev/null | awk '$1 == "Candidate:" {print $2; exit}')
    # shellcheck disable=SC2086 # a word list
    out=$(resolve_pkgs "$FIO_SUITE" $fio_deps) || exit 1
    mapfile -t FIO_RESOLVED < <(echo "fio $fio_ver"; echo "$out")
    APT_OPTS=("${save_opts[@]}") APT_DIR=$save_dir
fi
deb_file() {  # deb_file NAME VERSION -> the cached .deb's path (may not exist yet)
    local v=${2/:/%3a} f
    for f in "$CACHE/debs/${1}_${v}_amd64.deb" "$CACHE/debs/${1}_${v}_all.deb"; do
        [ -f "$f" ] && { echo "$f"; return; }
    done
    echo "$CACHE/debs/${1}_${v}_amd64.deb"
}

# ---------------------------------------------------------------- inputs hash
INPUTS="format ncq-disk-guest-image 1
builder_sha256 $(sha256sum <"$SELF" | cut -d' ' -f1)
init_sha256 $(sha256sum <"$INIT_SRC" | cut -d' ' -f1)
cdl_hint_sha256 $(sha256sum <"$CDL_HINT_SRC" | cut -d' ' -f1)
cdl_hint_cc $(gcc --version | head -1)
fwcfg_read_sha256 $(sha256sum <"$FWCFG_READ_SRC" | cut -d' ' -f1)
extract_vmlinux_sha256 $(sha256sum <"$EXTRACT_VMLINUX" | cut -d' ' -f1)
module_closure_sha256 $(sha256sum <"$MODULE_CLOSURE" | cut -d' ' -f1)
fit_probe_sha256 $(cat "$FIT_PROBE_DIR"/probe*.[ch] | sha256sum | cut -d' ' -f1)
source_date_epoch $EPOCH
compress $COMPRESS
kernel $KERNEL_ID
$(sed 's/^/package /' <<<"$PKGVERSIONS")"
[ ${#FIO_RESOLVED[@]} = 0 ] || INPUTS+="
$(printf "fio_deb $FIO_SUITE %s\\n" "${FIO_RESOLVED[@]}")"
[ ${#RESOLVED[@]} = 0 ] || INPUTS+="
package_suite $PKG_SUITE
$(printf 'deb %s\n' "${RESOLVED[@]}")"
[ ${#ADD_IDS[@]} = 0 ] || INPUTS+="
$(printf '%s\n' "${ADD_IDS[@]}")"
[ -n "$USER_KERNEL" ] || INPUTS+="
debian_release $SUITE"
[ ${#EXTRA_MODULES[@]} = 0 ] || INPUTS+="
$(printf 'module %s\n' "${EXTRA_MODULES[@]}")"
if [ -n "$USER_MODULES" ]; then
    # modules.* indexes plus every module file: a rebuilt module changes the hash.
    MODHASH=$(cd "$USER_MODULES" && find . -type f \( "${KO_NAMES[@]}" -o -name 'modules.dep' \
        -o -name 'modules.builtin*' -o -name 'modules.order' -o -name 'modules.softdep' \) -print0 \
        | sort -z | xargs -0 -r sha256sum | sha256sum | cut -d' ' -f1)
    INPUTS+="
user_modules_sha256 $MODHASH"
fi
HASH=$(sha256sum <<<"$INPUTS" | cut -c1-16)
OUTDIR="$CACHE/images/$HASH"

if [ $PRINT_DIR = 1 ]; then
    if [ -f "$OUTDIR/manifest.txt" ]; then
        echo "$OUTDIR"
        exit 0
    fi
    log "not built yet: $OUTDIR (run without --print-dir)"
    echo "$OUTDIR"
    exit 1
fi
if [ $FORCE = 0 ] && [ -f "$OUTDIR/manifest.txt" ]; then
    log "cached: $OUTDIR"
    echo "$OUTDIR"
    exit 0
fi

# ---------------------------------------------------------------- build
mkdir -p "$CACHE/images" "$CACHE/debs"
exec 9>"$CACHE/images/.lock"
flock 9
if [ $FORCE = 0 ] && [ -f "$OUTDIR/manifest.txt" ]; then
    log "cached (built meanwhile by another process): $OUTDIR"
    echo "$OUTDIR"
    exit 0
fi
T0=$SECONDS
WORK=$(mktemp -d "$CACHE/images/.build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ROOT=$WORK/root
KTREE=$WORK/kernel
mkdir -p "$ROOT" "$KTREE"

# The kernel and its modules directory
if [ -n "$USER_KERNEL" ]; then
    VMLINUZ=$USER_KERNEL
    MODSRC=$USER_MODULES
    # Its .config, where a kernel build or an unpacked package leaves it.
    KCONFIG=
    kdir=$(cd "$(dirname "$USER_KERNEL")" && pwd)
    cands=("$kdir/config-$KREL")
    case "$kdir" in */arch/x86/boot) cands+=("${kdir%/arch/x86/boot}/.config") ;; esac
    [ -z "$MODSRC" ] || cands+=("$MODSRC/build/.config")
    for c in "${cands[@]}"; do
        [ -n "$KCONFIG" ] || [ ! -f "$c" ] || KCONFIG=$c
    done
    if [ $USER_DEPMOD = 1 ]; then
        MODSRC=$KTREE/lib/modules/$KREL
        mkdir -p "$MODSRC"
        cp -a --reflink=auto "$USER_MODULES/." "$MODSRC/"
        depmod -b "$KTREE" "$KREL" || die "depmod on a copy of $USER_MODULES failed"
    fi
else
    if [ -z "$KDEB" ]; then
        KDEB=$(ls -1 "$CACHE/debs/${KPKG}_${KPKGVER/:/%3a}_amd64.deb" 2>/dev/null) || true
    fi
    if [ -z "$KDEB" ]; then
        log "downloading $KPKG=$KPKGVER into $CACHE/debs"
        # A world-readable temporary directory: apt-get download run as root
        # fetches as user _apt when that user can write there.
        DL=$(mktemp -d "${TMPDIR:-/tmp}/ncq-apt.XXXXXX")
        [ "$(id -u)" != 0 ] || ! id _apt >/dev/null 2>&1 || chown _apt "$DL"
        if ! (cd "$DL" && apt-get "${APT_OPTS[@]}" download -q "$KPKG=$KPKGVER" >&2); then
            rm -rf "$DL"
            [ -z "$APT_DIR" ] || die "apt-get download $KPKG=$KPKGVER failed: is deb.debian.org reachable? (Debian $SUITE's lists: $APT_DIR)"
            die "apt-get download $KPKG=$KPKGVER failed: is Debian's archive reachable? run 'apt-get update' (scripts/install-deps.sh)"
        fi
        f=$(ls -1 "$DL"/*.deb)
        cp "$f" "$CACHE/debs/.$(basename "$f").part"
        mv "$CACHE/debs/.$(basename "$f").part" "$CACHE/debs/$(basename "$f")"
        rm -rf "$DL"
        KDEB="$CACHE/debs/$(basename "$f")"
    fi
    [ "$(dpkg-deb -f "$KDEB" Package)" = "$KPKG" ] && [ "$(dpkg-deb -f "$KDEB" Version)" = "$KPKGVER" ] \
        || die "$KDEB is not $KPKG $KPKGVER; delete it and run again"
    log "unpacking $(basename "$KDEB")"
    dpkg-deb -x "$KDEB" "$KTREE"
    VMLINUZ=$KTREE/boot/vmlinuz-$KREL
    [ -f "$VMLINUZ" ] || die "$KDEB has no boot/vmlinuz-$KREL"
    KCONFIG=$KTREE/boot/config-$KREL
    MODSRC=
    for d in "$KTREE/lib/modules/$KREL" "$KTREE/usr/lib/modules/$KREL"; do
        [ -d "$d" ] && MODSRC=$d
    done
    [ -n "$MODSRC" ] || die "$KDEB has no lib/modules/$KREL"
    # The package leaves modules.dep to its postinst: make it here.
    depmod -b "${MODSRC%/lib/modules/*}" "$KREL" || die "depmod on the unpacked $KPKG failed"
fi

# Directory skeleton (merged /usr, as on Debian 12)
mkdir -p "$ROOT"/usr/bin "$ROOT"/usr/sbin "$ROOT"/usr/lib "$ROOT"/usr/lib64 \
    "$ROOT"/dev "$ROOT"/proc "$ROOT"/sys "$ROOT"/tmp "$ROOT"/results "$ROOT"/root \
    "$ROOT"/etc "$ROOT"/run "$ROOT"/mnt
chmod 1777 "$ROOT/tmp"
chmod 700 "$ROOT/root"
ln -s usr/bin "$ROOT/bin"
ln -s usr/sbin "$ROOT/sbin"
ln -s usr/lib "$ROOT/lib"
ln -s usr/lib64 "$ROOT/lib64"
ln -s /proc/mounts "$ROOT/etc/mtab"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$ROOT/etc/passwd"
printf 'root:x:0:\n' >"$ROOT/etc/group"
install -m 755 "$INIT_SRC" "$ROOT/init"
gcc -static -O2 -o "$ROOT/usr/bin/cdl-hint" "$CDL_HINT_SRC" \
    || die "cannot build $CDL_HINT_SRC statically: install libc6-dev"
gcc -static -O2 -o "$ROOT/usr/bin/fwcfg-read" "$FWCFG_READ_SRC" \
    || die "cannot build $FWCFG_READ_SRC statically: install libc6-dev"
gcc -static -O2 -pthread -o "$ROOT/usr/bin/ncq-fit-probe" "$FIT_PROBE_DIR"/probe-*.c -lm \
    || die "cannot build ncq-fit-probe statically: install libc6-dev"

# host path -> image path (everything under /usr)
imgpath() { case "$1" in /usr/*) echo "$1" ;; *) echo "/usr$1" ;; esac; }

# busybox and its applets
cp "$BUSYBOX" "$ROOT/usr/bin/busybox"
while read -r a; do
    dst=$(imgpath "/$a")
    [ -e "$ROOT$dst" ] || [ -L "$ROOT$dst" ] || { mkdir -p "$(dirname "$ROOT$dst")"; ln -s /usr/bin/busybox "$ROOT$dst"; }
done < <("$BUSYBOX" --list-full | sort)

# programs (replacing busybox applets of the same name) and libraries
for p in "${PROGRAMS[@]}"; do
    dst=$(imgpath "$p")
    rm -f "$ROOT$dst"
    cp -L --preserve=mode "$p" "$ROOT$dst"
done
for l in "${LIBLIST[@]}"; do
    dst=$(imgpath "$l")
    mkdir -p "$(dirname "$ROOT$dst")"
    cp -L --preserve=mode "$l" "$ROOT$dst"
done
for l in "${KMOD_LINKS[@]}"; do
    rm -f "$ROOT/usr/sbin/$l" "$ROOT/usr/bin/$l"
    ln -s /usr/bin/kmod "$ROOT/usr/sbin/$l"
done
for l in "${E2FS_LINKS[@]}"; do
    [ -e "$ROOT/usr/sbin/${l#*:}" ] || continue
    rm -f "$ROOT/usr/sbin/${l%%:*}" "$ROOT/usr/bin/${l%%:*}"
    ln -s "${l#*:}" "$ROOT/usr/sbin/${l%%:*}"
done

# Debian packages (DEFAULT_PACKAGES, --package): fetched into $CACHE/debs,
# unpacked over the host programs (a package's library is the release's own,
# which the host programs of an older release can use), without PKG_EXCLUDE.
fetch_debs() {  # fetch_debs RELEASE "name version"...: into $CACHE/debs (APT_OPTS for RELEASE)
    local rel=$1 r n v missing=() DL f
    shift
    for r in "$@"; do
        read -r n v <<<"$r"
        [ -f "$(deb_file "$n" "$v")" ] || missing+=("$n=$v")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    log "downloading ${#missing[@]} packages of Debian $rel into $CACHE/debs"
    DL=$(mktemp -d "${TMPDIR:-/tmp}/ncq-apt.XXXXXX")
    [ "$(id -u)" != 0 ] || ! id _apt >/dev/null 2>&1 || chown _apt "$DL"
    if ! (cd "$DL" && apt-get "${APT_OPTS[@]}" -o APT::Architectures::=amd64 download -q "${missing[@]}" >&2); then
        rm -rf "$DL"
        die "apt-get download of ${missing[*]} failed: is Debian's archive reachable? ('apt-get update' for the host's release; $CACHE/apt/<release> for another)"
    fi
    for f in "$DL"/*.deb; do
        cp "$f" "$CACHE/debs/.$(basename "$f").part"
        mv "$CACHE/debs/.$(basename "$f").part" "$CACHE/debs/$(basename "$f")"
    done
    rm -rf "$DL"
}
unpack_debs() {  # unpack_debs DIR "name version"...: without PKG_EXCLUDE
    local dir=$1 r n v f excl=() e
    shift
    mkdir -p "$dir"
    for e in "${PKG_EXCLUDE[@]}"; do excl+=(--exclude="./$e"); done
    for r in "$@"; do
        read -r n v <<<"$r"
        f=$(deb_file "$n" "$v")
        [ -f "$f" ] || die "$f missing after apt-get download $n=$v"
        dpkg-deb --fsys-tarfile "$f" | tar -x -C "$dir" --no-same-owner "${excl[@]}" \
            || die "cannot unpack $f: delete it and run again"
    done
}
if [ ${#RESOLVED[@]} -gt 0 ]; then
    fetch_debs "$PKG_SUITE" "${RESOLVED[@]}"
    PKGROOT=$WORK/pkgs
    unpack_debs "$PKGROOT" "${RESOLVED[@]}"
    # merged /usr: the packages' /bin, /sbin, /lib, /lib64 go under /usr
    for d in bin sbin lib lib64; do
        if [ -d "$PKGROOT/$d" ] && [ ! -L "$PKGROOT/$d" ]; then
            mkdir -p "$PKGROOT/usr/$d"
            cp -a --remove-destination "$PKGROOT/$d/." "$PKGROOT/usr/$d/"
            rm -rf "${PKGROOT:?}/$d"
        fi
    done
    rm -rf "$PKGROOT/etc/passwd" "$PKGROOT/etc/group" "$PKGROOT/etc/mtab"
    # --remove-destination: a busybox applet link is replaced, never written through
    cp -a --remove-destination "$PKGROOT/." "$ROOT/"
    rm -rf "$PKGROOT"
    log "${#RESOLVED[@]} Debian $PKG_SUITE packages unpacked"
fi

# fio_stub_libs FIO LIBDIR WORKDIR SONAME...: for each SONAME (a library
# of FIO_STUBS that FIO needs), a stub library in LIBDIR that defines what
# FIO takes from it: every function FIO imports at one of the versions its
# .gnu.version_r names for SONAME, and every unversioned one that the real
# libraries in LIBDIR do not define and whose name begins with the stub's
# stem (rados_ for librados.so.2).  Each function prints which library is a
# stub and exits 1, so a job that uses such an engine or option stops with
# that line.  Deterministic (no paths in the output, stripped).
fio_stub_libs() {
    local fio=$1 libdir=$2 work=$3 so sym bind name ver f s p d l e
    shift 3
    [ $# -gt 0 ] || return 0
    declare -A VERFILE=() STUBSYMS=() ISSTUB=()
    for so in "$@"; do ISSTUB[$so]=1; done
    while read -r ver f; do VERFILE[$ver]=$f; done < <(readelf -V -W "$fio" \
        | sed -n 's/.*File: \([^ ]*\).*/F \1/p; s/.*Name: \([^ ]*\).*/N \1/p' \
        | awk '$1 == "F" {f = $2; next} {print $2, f}')
    local defined
    defined=$(for l in "$libdir"/*.so*; do nm -D --defined-only "$l" 2>/dev/null; done \
        | awk '{print $3}' | sed 's/@.*//' | sort -u)
    while read -r bind name; do
        sym=${name%%@*} ver=
        [ "$sym" = "$name" ] || ver=${name#*@}
        if [ -n "$ver" ]; then
            f=${VERFILE[$ver]:-}
            [ -n "$f" ] || die "fio's $sym wants version $ver, which its .gnu.version_r does not name"
            [ -n "${ISSTUB[$f]:-}" ] || continue
        else
            grep -qxF -- "$sym" <<<"$defined" && continue
            [ "$bind" = WEAK ] && continue
            f=
            for s in "$@"; do
                p=${s%%.so*}
                [ "${sym#"${p#lib}"_}" = "$sym" ] || f=$s
            done
            [ -n "$f" ] || die "fio needs $sym, which neither its real libraries nor a stub (by name) defines"
        fi
        STUBSYMS[$f]+="$sym${ver:+@$ver} "
    done < <(readelf --dyn-syms -W "$fio" | awk '$7 == "UND" && $8 != "" {print $5, $8}')
    for so in "$@"; do
        d=$work/$so
        mkdir -p "$d"
        {
            echo '#include <stdio.h>'
            echo '#include <stdlib.h>'
            echo 'static void stub(const char *fn)'
            echo '{'
            echo "    fprintf(stderr, \"fio: %s: $so is a stub in this image (images/build-image.sh: FIO_STUBS)\\n\", fn);"
            echo '    exit(1);'
            echo '}'
            for e in ${STUBSYMS[$so]:-}; do
                echo "void ${e%%@*}(void);"
                echo "void ${e%%@*}(void) { stub(\"${e%%@*}\"); }"
            done
        } >"$d/stub.c"
        for ver in $(printf '%s\n' "${!VERFILE[@]}" | sort); do
            [ "${VERFILE[$ver]}" = "$so" ] || continue
            echo "$ver {"
            for e in ${STUBSYMS[$so]:-}; do
                [ "$e" = "${e%%@*}@$ver" ] && echo "    ${e%%@*};"
            done
            echo "};"
        done >"$d/stub.map"
        l=()
        [ ! -s "$d/stub.map" ] || l=(-Wl,--version-script=stub.map)
        (cd "$d" && gcc -shared -fPIC -O2 -s -o "$so" -Wl,-soname,"$so" "${l[@]}" stub.c) \
            || die "cannot build the stub $so for fio"
        cp "$d/$so" "$libdir/$so"
    done
}

# Debian 13's fio in /usr/lib/ncq-fio with the libraries it links (DT_NEEDED,
# followed through the unpacked packages) and their dynamic loader
if [ ${#FIO_RESOLVED[@]} -gt 0 ]; then
    save_opts=("${APT_OPTS[@]}")
    APT_OPTS=("${FIO_APT_OPTS[@]}")
    fetch_debs "$FIO_SUITE" "${FIO_RESOLVED[@]}"
    APT_OPTS=("${save_opts[@]}")
    FROOT=$WORK/fio
    unpack_debs "$FROOT" "${FIO_RESOLVED[@]}"
    FDST=$ROOT/usr/lib/ncq-fio
    mkdir -p "$FDST"
    find_so() {  # a library's file in the unpacked packages
        local d
        for d in usr/lib/x86_64-linux-gnu lib/x86_64-linux-gnu usr/lib lib usr/lib64 lib64; do
            [ -e "$FROOT/$d/$1" ] && { echo "$FROOT/$d/$1"; return; }
        done
        # a private directory named by a RUNPATH (librados: .../ceph)
        d=$(find "$FROOT" -name "$1" -print -quit)
        [ -n "$d" ] && echo "$d"
    }
    todo=("$FROOT/usr/bin/fio")
    declare -A FSEEN=()
    FSTUBBED=()
    stub_re="^($(IFS='|'; echo "${FIO_STUBS[*]}"))\\.so"
    while [ ${#todo[@]} -gt 0 ]; do
        f=${todo[0]}
        todo=("${todo[@]:1}")
        for so in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            [ -z "${FSEEN[$so]:-}" ] || continue
            FSEEN[$so]=1
            if [[ $so =~ $stub_re ]]; then
                [ "$f" = "$FROOT/usr/bin/fio" ] || die "$f (for Debian $FIO_SUITE's fio) needs $so, which FIO_STUBS makes a stub of: only fio's own libraries can be stubs"
                FSTUBBED+=("$so")
                continue
            fi
            src=$(find_so "$so") || die "Debian $FIO_SUITE's fio needs $so, which none of its packages has (a library to stub? FIO_STUBS)"
            src=$(readlink -f "$src")
            cp "$src" "$FDST/$so"
            todo+=("$src")
        done
    done
    fio_stub_libs "$FROOT/usr/bin/fio" "$FDST" "$WORK/fio-stubs" "${FSTUBBED[@]}"
    ld=$(find_so ld-linux-x86-64.so.2) || die "no ld-linux-x86-64.so.2 in Debian $FIO_SUITE's libc6"
    cp "$(readlink -f "$ld")" "$FDST/ld-linux-x86-64.so.2"
    cp "$FROOT/usr/bin/fio" "$FDST/fio"
    rm -f "$ROOT/usr/bin/fio"
    printf '%s\n' '#!/bin/sh' \
        "# Debian $FIO_SUITE's fio ${FIO_RESOLVED[0]#fio } with its own libraries (images/build-image.sh)" \
        'exec /usr/lib/ncq-fio/ld-linux-x86-64.so.2 --library-path /usr/lib/ncq-fio --argv0 "$0" /usr/lib/ncq-fio/fio "$@"' \
        >"$ROOT/usr/bin/fio"
    chmod 755 "$ROOT/usr/bin/fio" "$FDST"/*
    rm -rf "$FROOT"
    log "fio ${FIO_RESOLVED[0]#fio } of Debian $FIO_SUITE: $(ls "$FDST" | wc -l) files in /usr/lib/ncq-fio (stubs: ${FSTUBBED[*]})"
fi

# --add: files and trees, then the libraries their ELF files need
for i in "${!ADD_SRC[@]}"; do
    src=${ADD_SRC[$i]} dst=${ADD_DST[$i]}
    [ -L "$ROOT$(dirname "$dst")" ] && die "--add $src:$dst: $(dirname "$dst") is a symbolic link in the image: give the path it points to"
    mkdir -p "$ROOT$(dirname "$dst")"
    rm -rf "${ROOT:?}$dst"
    if [ -d "$src" ]; then
        mkdir -p "$ROOT$dst"
        cp -a --no-preserve=ownership "$src/." "$ROOT$dst/"
    else
        cp -L --preserve=mode "$src" "$ROOT$dst"
    fi
done
for l in "${ADDLIBLIST[@]}"; do
    dst=$(imgpath "$l")
    # a package's copy (or link) or a host program's: the image's own wins
    { [ -e "$ROOT$dst" ] || [ -L "$ROOT$dst" ]; } && continue
    mkdir -p "$(dirname "$ROOT$dst")"
    cp -L --preserve=mode "$l" "$ROOT$dst"
done

# What dpkg's alternatives would link (maintainer scripts do not run here)
ALTERNATIVES=(awk:gawk nawk:gawk)
for a in "${ALTERNATIVES[@]}"; do
    n=${a%%:*} t=${a#*:}
    [ -x "$ROOT/usr/bin/$t" ] || continue
    rm -f "$ROOT/usr/bin/$n" "$ROOT/usr/sbin/$n"
    ln -s "$t" "$ROOT/usr/bin/$n"
done

# The real tools before busybox: a busybox applet link in /usr/sbin (first in
# PATH) or /usr/bin whose name a real program has in the other directory
# becomes a link to that program.
for d in usr/sbin usr/bin; do
    o=usr/bin
    [ $d = usr/bin ] && o=usr/sbin
    for l in "$ROOT/$d"/*; do
        [ -L "$l" ] && [ "$(readlink "$l")" = /usr/bin/busybox ] || continue
        n=${l##*/}
        if [ -e "$ROOT/$o/$n" ] && [ "$(readlink "$ROOT/$o/$n")" != /usr/bin/busybox ]; then
            ln -sfn "/$o/$n" "$l"
        fi
    done
done

# /bin/sh is bash when the image has it: busybox's shell runs its own applets
# before any program in PATH (Debian's busybox-static is built with
# FEATURE_SH_STANDALONE), so under it 'gzip' or 'umount' would be busybox's
# whatever is installed.  /init keeps busybox's shell (its first line).
[ ! -x "$ROOT/usr/bin/bash" ] || ln -sfn bash "$ROOT/usr/bin/sh"

# The kernel's configuration where tools look for it (blktests'
# _have_kernel_option reads /boot/config-$(uname -r))
if [ -n "${KCONFIG:-}" ] && [ -f "$KCONFIG" ]; then
    mkdir -p "$ROOT/boot"
    cp "$KCONFIG" "$ROOT/boot/config-$KREL"
fi

# kernel modules: MODULES closed over modules.dep and their soft
# dependencies (modules.softdep, modinfo softdep; an alias such as crc32
# brings every module it names): images/module-closure.py
MODLIST=()
if [ -n "$MODSRC" ]; then
    req=()
    for m in "${EXTRA_MODULES[@]}"; do req+=(--required "$m"); done
    closure=$(python3 "$MODULE_CLOSURE" "$MODSRC" "${req[@]}" "${MODULES[@]}" 2>"$WORK/modules.log") \
        || { sed 's/^module-closure: //' "$WORK/modules.log" >&2; die "the modules' closure failed (above)"; }
    while IFS= read -r line; do log "$line"; done <"$WORK/modules.log"
    mapfile -t MODLIST <<<"$closure"
    [ -n "${MODLIST[0]:-}" ] || MODLIST=()
    MDST=$ROOT/usr/lib/modules/$KREL
    # Compressed modules (Debian 13's are .ko.xz) go in decompressed: the
    # guest's kmod would decompress them under TCG on every boot (3.7 s of
    # guest time for Debian 13's 17, measured), and Debian 12's kmod cannot read
    # .ko.gz.  A module's signature is appended before compression, so it
    # stays valid.  The initramfs is compressed as a whole anyway.
    for m in "${MODLIST[@]}"; do
        mkdir -p "$(dirname "$MDST/$m")"
        case "$m" in
            *.ko.xz) need xz xz-utils; xz -dc "$MODSRC/$m" >"$MDST/${m%.xz}" ;;
            *.ko.zst) need zstd zstd; zstd -qdc "$MODSRC/$m" >"$MDST/${m%.zst}" ;;
            *.ko.gz) gzip -dc "$MODSRC/$m" >"$MDST/${m%.gz}" ;;
            *) cp "$MODSRC/$m" "$MDST/$m" ;;
        esac || die "cannot copy module $MODSRC/$m into the image"
    done
    for f in modules.order modules.builtin modules.builtin.modinfo; do
        [ ! -f "$MODSRC/$f" ] || cp "$MODSRC/$f" "$MDST/$f"
    done
    depmod -b "$ROOT" "$KREL" || die "depmod -b $ROOT $KREL failed"
    log "${#MODLIST[@]} modules"
fi

# fixed timestamps, then the archive (sorted names, root-owned, no inode/dev noise)
find "$ROOT" -exec touch -h -d "@$EPOCH" {} +
STAGE=$WORK/out
mkdir -p "$STAGE"
(cd "$ROOT" && find . -mindepth 1 -printf '%P\n' | sort \
    | cpio -o -H newc --reproducible -R 0:0 --quiet) | case "$COMPRESS" in
        gzip) gzip -n -9 ;;
        xz) xz -9 --check=crc32 -T1 ;;  # the kernel's xz decoder wants crc32
        none) cat ;;
    esac >"$STAGE/initrd.img"
# Pad to a multiple of 512 bytes with zeros (the kernel skips them) so a workload
# cpio appended with plain 'cat' starts 4-byte aligned, as the kernel requires.
size=$(stat -c %s "$STAGE/initrd.img")
pad=$(((512 - size % 512) % 512))
[ $pad = 0 ] || head -c $pad /dev/zero >>"$STAGE/initrd.img"
cp "$VMLINUZ" "$STAGE/vmlinuz"
# The kernel uncompressed, when it boots through PVH (CONFIG_PVH): QEMU
# loads it as it is and the guest skips its decompressor, about half of
# a TCG boot with Debian's xz kernels; the harness boots vmlinux when the
# image has it, vmlinuz otherwise.
rc=0
python3 "$EXTRACT_VMLINUX" "$STAGE/vmlinuz" "$STAGE/vmlinux" || rc=$?
case $rc in
    0) log "vmlinux: the kernel uncompressed, booted through PVH" ;;
    3) log "no vmlinux: the guest boots vmlinuz (its own decompressor)" ;;
    *) die "extracting vmlinux from $VMLINUZ failed (above)" ;;
esac
[ -z "${KCONFIG:-}" ] || [ ! -f "$KCONFIG" ] || cp "$KCONFIG" "$STAGE/config"
chmod 644 "$STAGE"/*

{
    echo "# ncq-disk guest image; built by images/build-image.sh"
    echo "inputs_hash $HASH"
    echo "$INPUTS"
    echo "kernel_release $KREL"
    [ -z "$KDEB" ] || echo "kernel_deb $(basename "$KDEB") sha256 $(sha256sum <"$KDEB" | cut -d' ' -f1)"
    for m in "${MODLIST[@]}"; do echo "module ${m%.ko*}.ko"; done
    echo "initrd_uncompressed_bytes $(du -sb --apparent-size "$ROOT" | cut -f1)"
    echo "sha256 vmlinuz $(sha256sum <"$STAGE/vmlinuz" | cut -d' ' -f1)"
    echo "sha256 initrd.img $(sha256sum <"$STAGE/initrd.img" | cut -d' ' -f1)"
    echo "bytes vmlinuz $(stat -c %s "$STAGE/vmlinuz")"
    echo "bytes initrd.img $(stat -c %s "$STAGE/initrd.img")"
    if [ -f "$STAGE/vmlinux" ]; then
        echo "sha256 vmlinux $(sha256sum <"$STAGE/vmlinux" | cut -d' ' -f1)"
        echo "bytes vmlinux $(stat -c %s "$STAGE/vmlinux")"
    fi
} >"$STAGE/manifest.txt"

rm -rf "$OUTDIR"
mv "$STAGE" "$OUTDIR"
log "built in $((SECONDS - T0)) s: initrd.img $(stat -c %s "$OUTDIR/initrd.img") bytes"
echo "$OUTDIR"
