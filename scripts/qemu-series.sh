#!/bin/bash
# Edit the QEMU patch series as git commits, and write it back.
#
#   scripts/qemu-series.sh import DIR   a git repository of the pinned
#                                       QEMU in DIR: tag "pristine", then
#                                       one commit per patch and one branch
#                                       per series (series/<name>), each
#                                       branch on top of the one before
#   scripts/qemu-series.sh export DIR   patches/qemu/<name>/*.patch from
#                                       those branches: "git format-patch
#                                       series/<before>..series/<name>"
#   scripts/qemu-series.sh mailbox OUT [--based-on NAME=MSGID]...
#                                       the submission: OUT/<name>/, each
#                                       series with its cover letter and
#                                       the device's own files as patches
#                                       (scripts/lib/series-mailbox.sh),
#                                       what "git am" applies to the
#                                       pristine QEMU and git send-email
#                                       posts; --based-on gives the
#                                       Message-ID of the posted series
#                                       NAME for the next one's Based-on
#
# The series are the directories of patches/qemu/, in order, one per series
# as it would be posted upstream (docs/build.md says what each is for).
# Change a patch with "git commit --fixup" and "git rebase -i --autosquash
# --update-refs pristine series/<last>": --update-refs moves the series
# branches along, so export writes each patch back to its own series.
# A new series is a new branch "series/<N-name>" in that order, and its
# directory needs a cover.txt (the cover letter's subject, a blank line,
# its text).  Export rewrites only the .patch files: each series' cover.txt
# and overlay-*.txt (the device's files as patches) stay.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PATCHES=$ROOT/patches/qemu
AUTHOR="ncq-disk developers <ncq-disk@invalid>"

die() { echo "qemu-series: $*" >&2; exit 1; }

cmd=${1:-} dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: qemu-series.sh import|export DIR, or mailbox OUT [--based-on NAME=MSGID]..."
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
    rm -f "$PATCHES"/[0-9]*/[0-9]*.patch
    base=pristine
    for b in "${branches[@]}"; do
        out=$PATCHES/${b#series/}
        mkdir -p "$out"
        git format-patch -q --numbered --zero-commit --no-signature \
            -o "$out" "$base..$b"
        base=$b
    done
    for s in "${series[@]}"; do
        [ -n "$(ls "$PATCHES/$s"/[0-9]*.patch 2>/dev/null)" ] ||
            echo "qemu-series: $s has no branch any more; remove patches/qemu/$s/ (git rm -r)" >&2
    done
    echo "qemu-series: wrote ${#branches[@]} series, $(ls "$PATCHES"/[0-9]*/*.patch | wc -l) patches"
    ;;
mailbox)
    shift 2
    ids=
    while [ $# -gt 0 ]; do
        case $1 in
        --based-on)
            [[ ${2:-} =~ ^[0-9]+-[a-z0-9-]+=[^[:space:]]+$ ]] ||
                die "--based-on wants NAME=MSGID, as 3-ide-hooks=<id@host>"
            [ -d "$PATCHES/${2%%=*}" ] || die "--based-on: no series ${2%%=*} in patches/qemu/"
            ids+="$2 "; shift 2 ;;
        *) die "unknown option '$1' (known: --based-on NAME=MSGID)" ;;
        esac
    done
    pristine=$("$HERE/fetch-qemu.sh" | tail -1)
    NCQ_BASED_ON_IDS=$ids "$HERE/lib/series-mailbox.sh" "$pristine" "$dir"
    ;;
*) die "unknown command '$cmd' (import, export or mailbox)" ;;
esac
