#!/bin/sh
# jemalloc's own API (t/target/je-direct, against Debian's libjemalloc):
# mallocx, rallocx, xallocx (in place: a resize that succeeds is a free and
# a new block at the same address, one that fails changes nothing),
# sdallocx, dallocx, and the C names, jemalloc's too: at rate 1, exactly
# the fixture's own counts (t/lib/htdirect.sh).  nallocx, sallocx and
# malloc_usable_size allocate nothing.
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htdirect.sh"

HT_FN_NAMES="mallocx rallocx xallocx sdallocx dallocx malloc calloc realloc
free posix_memalign aligned_alloc"
trap 'kill -9 $pid 2>/dev/null; rm -rf "$HT_TMP"' EXIT
direct_test je-direct 'libjemalloc\.so' libjemalloc-dev work_mallocx \
    work_rallocx work_xallocx work_frees work_libc
