#!/bin/sh
# gperftools' tcmalloc API (t/target/tc-direct, against Debian's
# libtcmalloc_minimal): tc_malloc and its kin, tc_realloc, the tc_new and
# tc_delete forms (nothrow, sized, aligned): at rate 1, exactly the
# fixture's own counts (t/lib/htdirect.sh).
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htdirect.sh"

HT_FN_NAMES="tc_malloc tc_malloc_skip_new_handler tc_calloc tc_memalign
tc_posix_memalign tc_valloc tc_pvalloc tc_realloc tc_free tc_free_sized
tc_cfree tc_new tc_newarray tc_new_nothrow tc_newarray_nothrow
tc_new_aligned tc_newarray_aligned tc_new_aligned_nothrow
tc_newarray_aligned_nothrow tc_delete tc_deletearray tc_delete_sized
tc_delete_nothrow tc_deletearray_sized tc_deletearray_nothrow
tc_delete_aligned tc_deletearray_aligned tc_delete_sized_aligned
tc_delete_aligned_nothrow tc_deletearray_sized_aligned
tc_deletearray_aligned_nothrow"
trap 'kill -9 $pid 2>/dev/null; rm -rf "$HT_TMP"' EXIT
direct_test tc-direct 'libtcmalloc' libgoogle-perftools-dev work_malloc \
    work_realloc work_new work_frees
