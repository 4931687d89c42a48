#!/bin/bash
# Edit the QEMU patch series as git commits, and write it back.
#
#   scripts/qemu-series.sh import DIR   a git repository of the pinned
#                                       QEMU in DIR: tag "pristine", then
#                                       one commit per patch and one branch
#                                       per series (series/<name>), each
#                                       branch on top of the one before
#   scripts/qemu-series.sh export DIR   patches/qemu/<name>/ from those
#                                       branches: "git format-patch
#                                       series/<before>..series/<name>"
#
# The series are the directories of patches/qemu/, in order, one per series
# as it would be posted upstream (docs/build.md says what each is for).
# Change a patch with "git commit --fixup" and "git rebase -i --autosquash
# --update-refs pristine series/<last>": --update-refs moves the series
# branches along, so export writes each patch back to its own series.
# A new series is a new branch "series/<N-name>" in that order.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PATCHES=$ROOT/patches/qemu
AUTHOR="ncq-disk developers <ncq-disk@invalid>"

die() { echo "qemu-series: $*" >&2; exit 1; }

cmd=${1:-} dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: qemu-series.sh import|export DIR"
mapfile -t series < <(cd "$PATCHES" && ls -d [0-9]*/ | sed 's|/$||')

case $cmd in
import)
    [ ! -e "$dir" ] || die "$dir exists; give a new directory"
    pristine=$("$HERE/fetch-qemu.sh" | tail -1)
    cp -a "$pristine" "$dir"
    cd "$dir"
    git init -q
    git config user.name "${AUTHOR% <*}"
    git config user.email "ncq-disk@invalid"
    git add -A && git commit -qm "QEMU $(basename "$pristine") (pristine)"
    git tag pristine
    for s in "${series[@]}"; do
        git am -q "$PATCHES/$s"/[0-9]*.patch || die "series $s does not apply; git am --abort in $dir"
        git branch "series/$s"
    done
    echo "qemu-series: $dir: ${#series[@]} series, $(git rev-list --count pristine..HEAD) patches"
    ;;
export)
    cd "$dir"
    mapfile -t branches < <(git for-each-ref --format='%(refname:short)' 'refs/heads/series/' | sort)
    [ ${#branches[@]} -gt 0 ] || die "$dir has no series/* branches; was it made by import?"
    base=pristine
    for b in "${branches[@]}"; do
        git merge-base --is-ancestor "$base" "$b" || die "$b is not on top of $base; rebase with --update-refs"
        base=$b
    done
    bad=$(git log --format='%an <%ae>' "pristine..$base" | sort -u | grep -vxF "$AUTHOR" || true)
    [ -z "$bad" ] || die "commits by another author ($bad); git commit --amend --reset-author"
    rm -rf "$PATCHES"/[0-9]*/
    base=pristine
    for b in "${branches[@]}"; do
        out=$PATCHES/${b#series/}
        mkdir -p "$out"
        git format-patch -q --numbered --zero-commit --no-signature \
            -o "$out" "$base..$b"
        base=$b
    done
    echo "qemu-series: wrote ${#branches[@]} series, $(ls "$PATCHES"/[0-9]*/*.patch | wc -l) patches"
    ;;
*) die "unknown command '$cmd' (import or export)" ;;
esac
