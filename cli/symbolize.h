/*
 * The symbolizer: raw addresses from a profile to function, file:line and
 * the chain of inlined calls, with libdw (libdwfl).
 *
 * It is built from the profile's module map (path, load bias, address range,
 * build-id).  Each module's file is opened on the first lookup that lands in
 * it, inside an optional root directory (a live target's files are read
 * through /proc/PID/root so that containers work; a saved profile uses the
 * paths as recorded), with modfile.h: only a regular file, never blocking,
 * a root's symlinks resolved inside the root.  A sysroot of old files and
 * directories of debug files may be given: modsearch.h says where a file
 * is looked for.  A file whose build-id differs from the recorded one is
 * not used: its frames show as module+offset and carry
 * HT_SYM_BUILD_ID_MISMATCH; one that cannot be used at all carries
 * HT_SYM_NO_FILE.
 * Debug information is found the standard way (the file itself,
 * .gnu_debuglink, /usr/lib/debug/.build-id) after the debug directories;
 * debuginfod is never contacted unless the options ask for it.
 *
 * Frames are those llvm-symbolizer --inlining prints (dwarf-inline.h):
 * function, file and line of every level of the inline chain; the
 * outermost function named from the module's symbol table, its public name
 * among aliases.
 *
 * Addresses are return addresses: the lookup uses address - 1, which lies
 * inside the call instruction, so that a call at the end of a function or
 * of an inlined block is attributed to the right line.
 *
 * C++, Rust (legacy and v0) and D names are demangled with libiberty
 * (demangle.h); with short_names, shortened as ht_demangle says.
 */
#ifndef HT_SYMBOLIZE_H
#define HT_SYMBOLIZE_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct ht_sym;

/* Frame flags. */
/* The file differs from the profile's (build-id). */
#define HT_SYM_BUILD_ID_MISMATCH 0x1
/* The module's file is unreadable, missing, or there is none ([vdso]). */
#define HT_SYM_NO_FILE		 0x2
/* Not looked up: the symbolizer had looked up its limit of addresses
 * (ht_sym_limit). */
#define HT_SYM_SKIPPED		 0x4

/*
 * The addresses a symbolizer looks up in module files by default, at most:
 * some 2 seconds of lookups in DWARF here (about 20 us each in libc's),
 * and 15 MB of what it keeps, so that a profile of millions of distinct
 * addresses still gives its report in seconds, within the bound of
 * heaptool(1)'s LIMITS.  Its other addresses show as module+offset.
 */
#define HT_SYM_MAX_DEFAULT 100000

/*
 * One frame of a symbolized address.  An address inside inlined code yields
 * several frames, innermost first; all but the last (the real function that
 * holds the code) have inlined set.  Strings are owned by the symbolizer and
 * live until ht_sym_free; any of module, function and file may be NULL when
 * unknown (line is then 0).
 */
struct ht_sym_frame {
	uint64_t address;   /* the address as recorded */
	const char *module; /* basename of the module's path */
	uint64_t offset;    /* address - bias: the ELF address */
	const char *function;
	const char *file;
	int line;
	int inlined;
	int flags; /* HT_SYM_* */
};

/* root: the directory module paths are resolved in, as if it were "/"
 * (e.g. /proc/PID/root), or NULL;
 * debuginfod: allow downloads of missing debug information;
 * pid: a live process whose profile this is, or 0: a module file deleted
 * or replaced since it was loaded is then read from the process's own
 * mapping of it (/proc/PID/map_files, for privileged readers);
 * sysroot: a directory of the modules' files as they were when the profile
 * was taken, at their paths (old packages unpacked there), looked in first,
 * and its /usr/lib/debug; debug_dirs (ndebug_dirs of them): directories of
 * separate debug files laid out as /usr/lib/debug is, looked in first.
 * short_names: C++ template arguments folded to "<…>", Rust hashes left
 * out (demangle.h's HT_DEMANGLE_SHORT).
 * All are copied. */
struct ht_sym_opts {
	const char *root;
	int debuginfod;
	pid_t pid;
	const char *sysroot;
	const char *const *debug_dirs;
	size_t ndebug_dirs;
	int short_names;
};

/*
 * Create a symbolizer for n module records (copied).  opts may be NULL.
 * Returns NULL only when out of memory (errno ENOMEM).
 */
struct ht_sym *
ht_sym_new(const struct ht_module_rec *, size_t n, const struct ht_sym_opts *);
void ht_sym_free(struct ht_sym *);

/*
 * Symbolize the return address addr.  Stores a pointer to an array of
 * frames (owned by the symbolizer, valid until the next lookup) in *frames
 * and returns their number, at least 1; the strings they point to live
 * until ht_sym_free, and a name's string is the same pointer in every
 * frame (equal names, equal pointers).  An address that a module's file
 * resolves is looked up once and kept; one outside every module, in a
 * module without a usable file, or met after the limit (ht_sym_limit)
 * gives its one frame, module+offset, at the cost of a search of the
 * module map.  Returns -1 only when out of memory.
 */
int ht_sym_lookup(struct ht_sym *, uint64_t addr,
    const struct ht_sym_frame **frames);

/*
 * Look up at most max distinct addresses in module files (0: no limit;
 * HT_SYM_MAX_DEFAULT until this is called).  Once that many are, the frame
 * of every new address carries HT_SYM_SKIPPED and shows as module+offset:
 * which addresses are symbolized depends on the order of the lookups
 * (reports look them up in the order they print their sites).
 */
void ht_sym_limit(struct ht_sym *, size_t max);
/* That limit. */
size_t ht_sym_max(const struct ht_sym *);

/*
 * The basename of the module that maps addr, or NULL.  Needs no debug
 * information and opens no file.
 */
const char *ht_sym_module_name(struct ht_sym *, uint64_t addr);

/*
 * Problems met while opening module files (build-id mismatch, file
 * missing), one per module that some lookup needed, in the order the
 * lookups met them, for the report to mention once; the reasons of the
 * first HT_SYM_MAX_PROBLEMS modules not found are kept, the others' say
 * only that.  Calls fn(arg, module_path, why) for each; returns how many.
 */
#define HT_SYM_MAX_PROBLEMS 256
#define HT_SYM_STR_(x)	    #x
#define HT_SYM_STR(x)	    HT_SYM_STR_(x)
size_t ht_sym_problems(struct ht_sym *,
    void (*fn)(void *, const char *, const char *), void *arg);

#endif
