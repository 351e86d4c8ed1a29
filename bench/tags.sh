#!/bin/sh
# The tag calls' cost (issue 12): bench/tagstub without the agent (the
# header's stubs: a cached lookup that finds nothing), then under heaptool
# run at a rate that never samples (the agent's entry points; assign of a
# block that is no sample stops at the lock-free filter).
# usage: tags.sh BUILDDIR
set -u
export LC_ALL=C
builddir=$(cd "${1:-.}" && pwd) || exit 1
# The profile goes to a file of our own: heaptool run replaces the file
# -o names (never give it /dev/null: as root that replaces the device).
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "tags: without the agent:"
nice "$builddir/bench/tagstub" || exit 1
echo "tags: under heaptool run --rate 1T:"
nice "$builddir/heaptool" run --rate 1T -o "$tmp/tags.heap" -- \
    "$builddir/bench/tagstub" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
