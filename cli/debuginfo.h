/*
 * Separate debug information of a target's modules, found for libdwfl.
 *
 * libdwfl's standard search (dwfl_standard_find_debuginfo) opens every
 * candidate with a plain blocking open(2) on our own file system: a FIFO
 * planted under a module's .gnu_debuglink name hangs a report, a device is
 * opened, and for a live target in a container the candidates under
 * /proc/PID/root follow the container's absolute symlinks out into ours.
 * This search looks in the same places, in the same order, but opens each
 * candidate through cli/modfile (regular files only, never blocking,
 * resolved inside the target's root), and takes a file only if it is the
 * one wanted: the module's build-id, else the debuglink's CRC; for a dwz
 * alternate file (.gnu_debugaltlink), the build-id the link names.
 *
 * Places, after the build-id path, for a module whose file the target saw
 * as DIR/FILE with debuglink NAME: DIR/NAME, DIR/.debug/NAME,
 * /usr/lib/debug/DIR/NAME (elfutils' default search path), each first
 * inside the target's root when there is one, then as it stands.  With a
 * root, "as it stands" is tried for the places under /usr/lib/debug only:
 * our debug directory may hold the very files a chroot or container lacks
 * (the same distribution's packages), and a file there is taken only with
 * the module's build-id (or debuglink CRC), so it cannot be the wrong one;
 * but DIR is a directory of the target's, and the same name in our file
 * system is another directory.  Before them all, the user's debug
 * directories (heaptool --debug-dir), each laid out as /usr/lib/debug is:
 * D/.build-id/NN/REST.debug, D/NAME, D/DIR/NAME; and for a dwz alternate
 * file D/.build-id/NN/REST.debug of its build-id, or D/REST of a link
 * /usr/lib/debug/REST.
 */
#ifndef HT_DEBUGINFO_H
#define HT_DEBUGINFO_H

#include <elfutils/libdwfl.h>

/*
 * What the search needs to know of a module, pointed to by the module's
 * userdata (dwfl_module_info) and alive as long as the Dwfl: path as the
 * target saw it (absolute), root the directory the module's file lies in
 * (the target's root, a sysroot) or NULL, dirs the user's ndirs debug
 * directories (opened as they stand).
 */
struct ht_debuginfo_ctx {
	const char *path;
	const char *root;
	const char *const *dirs;
	size_t ndirs;
};

/*
 * A Dwfl_Callbacks.find_debuginfo: returns an open descriptor of the debug
 * file and sets *debuginfo_file_name (malloc'd) to its name, or returns -1
 * when there is none.  Modules without a context get none.
 */
int ht_debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname,
    Dwarf_Addr base, const char *file_name, const char *debuglink_file,
    GElf_Word debuglink_crc, char **debuginfo_file_name);

/*
 * The path of the debug file of build-id id (len bytes) in the build-id
 * directory, /usr/lib/debug/.build-id/NN/REST.debug, into buf.  Returns 0,
 * or -1 if len is below 2 or buf is too small.
 */
int ht_debuginfo_build_id_path(const unsigned char *id, size_t len, char *buf,
    size_t size);

#endif
