#!/bin/bash
# The series as it would be posted upstream: a mailbox that git am applies
# to the pristine QEMU, the device's own files included.
#
#   scripts/lib/series-mailbox.sh PRISTINE OUT
#
# Writes OUT/<N-name>/ for each series of patches/qemu/: 0000-cover-letter.patch
# (the subject and text of the series' cover.txt, a Based-on line naming
# the series before, git's shortlog and diffstat) and its patches.
# The overlay (the project's files that mirror QEMU's tree, which
# scripts/build-qemu.sh links into its work tree) becomes patches too: each
# overlay-*.txt of a series is one patch adding the files its "Files:"
# line names, placed before the series' stored patches; the overlay's
# tests/qtest/ files join the series' last patch, the one that registers
# them.  An overlay file no patch adds stops the export.
#
# The output depends only on the pristine tree, the stored patches, the
# overlay's files and the cover texts (fixed identity and dates, no
# message ids): the series walk keys its proofs by these files.
# qemu-series.sh mailbox and build-qemu.sh --walk run it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PATCHES=$ROOT/patches/qemu
AUTHOR_NAME="ncq-disk developers" AUTHOR_EMAIL="ncq-disk@invalid"
# what the overlay is made of (scripts/build-qemu.sh overlay_link)
OVERLAY_PATHS=(hw/ide/ncq-model hw/ide/ncq-disk include/hw/ide
               qapi/ncq-disk.json tests/qtest)
# Based-on: the Message-ID of the posted series before, when known
# (qemu-series.sh mailbox --based-on NAME=ID)
BASED_ON_IDS=${NCQ_BASED_ON_IDS:-}

die() { echo "series-mailbox: $*" >&2; exit 1; }

[ $# = 2 ] || die "usage: series-mailbox.sh PRISTINE OUT"
pristine=$1 out=$2
ver=$(basename "$pristine")
ver=${ver#qemu-}
ver=${ver%%+*}
[ -d "$pristine" ] || die "$pristine: no pristine QEMU tree"
mkdir -p "$out"
[ -z "$(ls -A "$out")" ] || die "$out is not empty; give a new directory"
out=$(cd "$out" && pwd)
mapfile -t series < <(cd "$PATCHES" && ls -d [0-9]*/ | sed 's|/$||')
mapfile -t stored < <(ls "$PATCHES"/[0-9]*/[0-9]*.patch)

# No user or system git configuration (format.*, diff.*) shapes the output,
# and every commit has the project's identity and a date from the series.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=$AUTHOR_NAME GIT_AUTHOR_EMAIL=$AUTHOR_EMAIL
export GIT_COMMITTER_NAME=$AUTHOR_NAME GIT_COMMITTER_EMAIL=$AUTHOR_EMAIL
newest=0
while IFS= read -r d; do
    t=$(date -d "$d" +%s) || die "a stored patch has a bad Date: $d"
    [ "$t" -le "$newest" ] || newest=$t
done < <(sed -n 's/^Date: //p' "${stored[@]}")
export GIT_AUTHOR_DATE="@$newest +0000" GIT_COMMITTER_DATE="@$newest +0000"

# overlay_files: the overlay as the checkout has it (tracked or new files,
# not ignored ones), one path a line
overlay_files() {
    local f
    (cd "$ROOT" && git ls-files -co --exclude-standard -- "${OVERLAY_PATHS[@]}") |
        sort -u | while IFS= read -r f; do
            [ -f "$ROOT/$f" ] && echo "$f"
        done
}

# spec_files SPEC: the overlay files a spec's "Files:" line names (a
# directory names the files below it)
spec_files() {
    local p f
    for p in $(sed -n '1s/^Files: //p' "$1"); do
        p=${p%/}
        grep -E "^${p//./\\.}(/|\$)" <<<"$overlay" || die "$1 names $p, which no overlay file is; fix its Files: line"
    done
    :
}

# A git repository of the files the series changes, from the pristine tree:
# the diffs, and so the patches, are those of a full tree's, at a fraction
# of its cost.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/repo
mkdir -p "$repo"
cd "$repo"
git init -q
while IFS= read -r f; do
    [ -f "$pristine/$f" ] || continue
    mkdir -p "$(dirname "$f")"
    cp "$pristine/$f" "$f"
done < <(sed -n 's|^--- a/||p' "${stored[@]}" | sort -u)
git add -A
git commit -q --allow-empty -m "QEMU $ver: the files the series changes"
git tag pristine

# stage_files FILE...: the checkout's FILEs, copied into the repository
# at the same paths and added to the next commit
stage_files() {
    local f
    for f in "$@"; do
        mkdir -p "$(dirname "$f")"
        cp "$ROOT/$f" "$f"
        git add "$f"
    done
}

overlay=$(overlay_files)
claimed=
for s in "${series[@]}"; do
    mapfile -t specs < <(ls "$PATCHES/$s"/overlay-*.txt 2>/dev/null)
    for spec in "${specs[@]}"; do
        files=$(spec_files "$spec")
        stage_files $files
        claimed+=$files$'\n'
        sed '1,/^$/d' "$spec" | git commit -q -s -F -
    done
    git am -q "$PATCHES/$s"/[0-9]*.patch || die "series $s does not apply to QEMU $ver"
    if [ ${#specs[@]} -gt 0 ]; then
        # the qtests join the series' last patch, which registers them
        git show --stat=200 HEAD | grep -q ' tests/qtest/' ||
            die "the last patch of $s registers no qtest; the overlay's tests/qtest/ files join it"
        tests=$(grep '^tests/qtest/' <<<"$overlay" || true)
        stage_files $tests
        claimed+=$tests$'\n'
        git commit -q --amend --no-edit
    fi
    git branch "series/$s"
done
left=$(comm -23 <(echo "$overlay") <(echo "$claimed" | sed '/^$/d' | sort -u))
[ -z "$left" ] || die "overlay file $(head -1 <<<"$left") is in no patch; add it to a Files: line of patches/qemu/*/overlay-*.txt"

# based_on NAME: the Based-on line of the series after NAME
based_on() {
    local id
    id=$(tr ' ' '\n' <<<"$BASED_ON_IDS" | sed -n "s|^$1=||p" | tail -1)
    if [ -n "$id" ]; then
        id=${id#<}
        echo "Based-on: <${id%>}>"
        return
    fi
    echo "Based-on: the series \"$(head -1 "$PATCHES/$1/cover.txt")\" ($1)"
}

prev=
base=pristine
for s in "${series[@]}"; do
    [ -f "$PATCHES/$s/cover.txt" ] || die "series $s has no cover letter; write patches/qemu/$s/cover.txt"
    {
        cat "$PATCHES/$s/cover.txt"
        echo
        if [ -z "$prev" ]; then
            echo "This series applies to QEMU $ver."
        else
            echo "This series applies on top of the one before."
            echo
            based_on "$prev"
        fi
    } >"$tmp/desc"
    git config "branch.series/$s.description" "$(cat "$tmp/desc")"
    git format-patch -q --numbered --zero-commit --no-signature \
        --cover-letter --cover-from-description=subject \
        -o "$out/$s" "$base..series/$s"
    prev=$s base=series/$s
done
echo "series-mailbox: $out: ${#series[@]} series, $(ls "$out"/*/[0-9]*.patch | grep -vc '/0000-cover-letter.patch$') patches"
