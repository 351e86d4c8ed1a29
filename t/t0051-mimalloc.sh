#!/bin/sh
# mimalloc's own API (t/target/mi-direct, against Debian's libmimalloc):
# mi_malloc and its kin, the aligned forms, the reallocations, mi_strdup,
# the sized and aligned frees, and a heap of its own, whose mi_heap_destroy
# frees every block of it, and another whose mi_heap_delete leaves them in
# use: at rate 1, exactly the fixture's own counts (t/lib/htdirect.sh).
. "$(dirname "$0")/tap/libtap.sh"
. "$(dirname "$0")/lib/ptrace.sh"
. "$(dirname "$0")/lib/htrun.sh"
. "$(dirname "$0")/lib/htdirect.sh"

HT_FN_NAMES="mi_malloc mi_calloc mi_realloc mi_expand mi_free mi_free_size
mi_zalloc mi_mallocn mi_reallocn mi_reallocf mi_rezalloc mi_recalloc
mi_malloc_aligned mi_malloc_aligned_at mi_zalloc_aligned mi_calloc_aligned
mi_realloc_aligned mi_strdup mi_strndup mi_new mi_new_n mi_new_aligned
mi_heap_malloc mi_heap_zalloc mi_heap_calloc mi_heap_realloc mi_heap_strdup
mi_heap_malloc_aligned mi_heap_destroy mi_free_aligned mi_free_size_aligned
mi_posix_memalign mi_aligned_alloc mi_memalign mi_reallocarray"
trap 'kill -9 $pid 2>/dev/null; rm -rf "$HT_TMP"' EXIT
direct_test mi-direct 'libmimalloc\.so' libmimalloc-dev work_malloc \
    work_aligned work_realloc work_strings work_frees work_heap work_heap_kept
