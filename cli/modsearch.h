/*
 * The file of a profile's module, looked for where a user may have kept the
 * one the profile was taken with (see heaptool(1), --sysroot and
 * --debug-dir): a file whose build-id is not the profile's is never used.
 *
 * In this order:
 *   1. SYSROOT/PATH, resolved inside the sysroot (old packages unpacked
 *      there: an absolute symlink of theirs stays inside);
 *   2. PATH where the target saw it (inside its root, or through its
 *      mapping: modfile.h);
 *   3. the module's separate debug file, by build-id, standing in for a
 *      file gone or rebuilt: it holds the symbols and the DWARF, which is
 *      all a report needs.  DIR/.build-id/NN/REST.debug of each debug
 *      directory, then SYSROOT/usr/lib/debug, then /usr/lib/debug (inside
 *      the target's root first).
 * Every candidate is opened with modfile.h: regular files only, never
 * blocking.  When none is the module's, the message says why the recorded
 * path was not used and every place looked in, once for the module.
 */
#ifndef HT_MODSEARCH_H
#define HT_MODSEARCH_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "modfile.h"

struct ht_modsearch_req {
	const char *path; /* the module's path as recorded (absolute) */
	const unsigned char *build_id; /* the profile's, or NULL */
	size_t build_id_len;
	const char *sysroot; /* or NULL */
	const char *root;    /* the target's root (modfile.h), or NULL */
	pid_t pid;	     /* a live target, or 0 */
	uint64_t lo, hi;     /* the module's mapping in it */
	const char *const *debug_dirs;
	size_t ndebug_dirs;
};

/*
 * Open the module's file into *mf, and set *root to the root it lies in
 * (req->sysroot, req->root or NULL).  Returns 0 (close with
 * ht_modfile_close), or -1 with *problem set to a malloc'd message (NULL
 * when out of memory) and *mismatch to whether a file was found that is
 * another build.
 */
int ht_modsearch_open(const struct ht_modsearch_req *req, struct ht_modfile *mf,
    const char **root, char **problem, int *mismatch);

#endif
