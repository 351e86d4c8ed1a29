#!/bin/sh
# The built agent, libheaptool-agent.so, is fit to be loaded into other
# people's processes (DESIGN.md section 1, the foundation issue):
#   - it needs libc.so.6 and nothing else (the loader at most);
#   - it imports no allocator: a hook that reached malloc through the agent's
#     own PLT would call the program's allocator from inside the allocator,
#     and an agent that allocates cannot dump when memory has run out;
#   - it imports nothing from libgcc_s or libstdc++ (their unwinder takes
#     loader locks, and a C program may not have them loaded at all);
#   - it imports no libc function that allocates behind its back, nor the
#     glibc backtrace() family, nor __tls_get_addr (general-dynamic TLS,
#     which may call malloc to grow the thread's TLS vector);
#   - it exports only its own heaptool_* entry points (the hooks are reached
#     through rewritten GOT slots, never by symbol interposition);
#   - it has no text relocations, binds now (no lazy resolver running inside
#     a hook), does not ask for an executable stack, and is marked
#     DF_STATIC_TLS: its TLS is initial-exec, the fast path's countdown.

. "$(dirname "$0")/tap/libtap.sh"

agent=$HT_BUILDDIR/libheaptool-agent.so
[ -f "$agent" ] || skip_all "agent not built ($agent)"
for tool in readelf nm; do
	command -v $tool >/dev/null 2>&1 || skip_all "$tool not installed"
done

readelf -dW "$agent" >"$HT_TMP/dynamic" 2>&1 ||
    bail "readelf -d $agent failed: $(cat "$HT_TMP/dynamic")"
readelf -lW "$agent" >"$HT_TMP/segments" 2>&1 ||
    bail "readelf -l $agent failed: $(cat "$HT_TMP/segments")"
# "                 U malloc@GLIBC_2.2.5" and "w __gmon_start__": keep the
# name with its version.
nm -D --undefined-only "$agent" 2>&1 | awk '{ print $NF }' \
    >"$HT_TMP/undef" || bail "nm -D $agent failed"
nm -D --defined-only "$agent" 2>&1 | awk '{ print $2, $3 }' \
    >"$HT_TMP/defined" || bail "nm -D $agent failed"

# report DESCRIPTION FILE: ok when FILE is empty, else diag its lines.
report() {
	if [ -s "$2" ]; then
		ok 1 "$1"
		diag "$(cat "$2")"
	else
		ok 0 "$1"
	fi
}

plan 10

sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p' "$HT_TMP/dynamic" |
    grep -vx -e 'libc\.so\.6' -e 'ld-linux-x86-64\.so\.2' \
    >"$HT_TMP/bad" || :
report "NEEDED only libc.so.6 (and the loader)" "$HT_TMP/bad"
grep -q '(NEEDED).*\[libc\.so\.6\]' "$HT_TMP/dynamic"
ok $? "NEEDED has libc.so.6"

# The allocator, by any of its names: C, glibc extensions, C23, and C++
# operator new/delete in all their mangled forms.
sed 's/@.*//' "$HT_TMP/undef" | grep -x -e malloc -e calloc -e realloc \
    -e free -e posix_memalign -e aligned_alloc -e memalign -e valloc \
    -e pvalloc -e reallocarray -e free_sized -e free_aligned_sized \
    -e '_Znw.*' -e '_Zna.*' -e '_Zdl.*' -e '_Zda.*' >"$HT_TMP/bad" || :
report "imports no allocator function" "$HT_TMP/bad"

# Every import is versioned by glibc, but for the weak hooks that crt files
# leave unversioned; and nothing of the C++ runtime or the unwinder.
grep -v -e '@GLIBC_[0-9.]*$' -e '^_ITM_deregisterTMCloneTable$' \
    -e '^_ITM_registerTMCloneTable$' -e '^__gmon_start__$' \
    "$HT_TMP/undef" >"$HT_TMP/bad"
sed 's/@.*//' "$HT_TMP/undef" | grep -e '^_Unwind_' -e '^__gxx_personality' \
    -e '^__gcc_personality' -e '^_ZSt' -e '^_ZNSt' -e '^_ZTI' -e '^_ZTV' \
    -e '^__cxa_[^f]' >>"$HT_TMP/bad" || :
report "imports only glibc symbols (no libgcc_s, no libstdc++)" "$HT_TMP/bad"

sed 's/@.*//' "$HT_TMP/undef" | grep -x -e strdup -e strndup -e asprintf \
    -e vasprintf -e fopen -e fdopen -e open_memstream -e getline \
    -e getdelim -e qsort -e qsort_r -e backtrace -e backtrace_symbols \
    -e backtrace_symbols_fd -e __tls_get_addr >"$HT_TMP/bad" || :
report "imports no allocating libc function, backtrace(), __tls_get_addr" \
    "$HT_TMP/bad"

# Defined dynamic symbols: heaptool_* only (and version nodes, type A).
awk '$1 != "A" && $2 !~ /^heaptool_/' "$HT_TMP/defined" >"$HT_TMP/bad"
report "exports only heaptool_* symbols" "$HT_TMP/bad"

grep -e '(TEXTREL)' -e '(FLAGS).*TEXTREL' "$HT_TMP/dynamic" \
    >"$HT_TMP/bad" || :
report "no text relocations" "$HT_TMP/bad"

grep -q -e '(FLAGS).*BIND_NOW' -e '(FLAGS_1).*NOW' "$HT_TMP/dynamic"
ok $? "binds now (-z now)"

grep '^ *GNU_STACK' "$HT_TMP/segments" | grep 'RWE' >"$HT_TMP/bad"
report "does not ask for an executable stack" "$HT_TMP/bad"

grep -q '(FLAGS).*STATIC_TLS' "$HT_TMP/dynamic"
s=$?
ok $s "DF_STATIC_TLS set (initial-exec TLS)"
[ $s -eq 0 ] || diag "$(grep -e FLAGS "$HT_TMP/dynamic")"

done_testing
