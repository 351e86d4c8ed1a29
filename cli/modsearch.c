/*
 * A profile's module file, looked for where old files may be (see
 * modsearch.h).
 */
#include "config.h"

#include <elfutils/libdwelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfo.h"
#include "modsearch.h"

#define DEBUG_DIR "/usr/lib/debug"

/* The places looked in and why each was refused, for the message. */
struct tried {
	char first[sizeof(((struct ht_modfile *)0)->why)];
	char more[2048];
	size_t len;
	int n;
	int mismatch;
};

static void
tried_add(struct tried *t, const char *root, const char *path,
    const struct ht_modfile *mf)
{
	int k;

	t->mismatch |= mf->mismatch;
	if (t->len >= sizeof(t->more) - 1)
		return;
	k = snprintf(t->more + t->len, sizeof(t->more) - t->len, "%s%s%s (%s)",
	    t->n > 0 ? ", " : "", root != NULL ? root : "", path, mf->why);
	if (k > 0)
		t->len += (size_t)k;
	if (t->len >= sizeof(t->more))
		t->len = sizeof(t->more) - 1;
	t->n++;
}

/* The module's build-id, when the profile has one, is the file's.  A
 * separate debug file keeps the module's program headers but not its
 * layout, so its note is found through its section headers. */
static int
check_id(Elf *elf, void *arg, char *why, size_t whylen)
{
	const struct ht_modsearch_req *req = arg;
	const unsigned char *id = NULL;
	const void *sid;
	GElf_Addr vaddr;
	size_t len = 0;
	ssize_t n;

	if (req->build_id_len == 0)
		return 0;
	if (ht_modfile_build_id(elf, &id, &len, &vaddr) != 0 &&
	    (n = dwelf_elf_gnu_build_id(elf, &sid)) > 0) {
		id = sid;
		len = (size_t)n;
	}
	if (id != NULL && len == req->build_id_len &&
	    memcmp(id, req->build_id, len) == 0)
		return 0;
	snprintf(why, whylen,
	    "build-id differs from the profile's (the file changed since the "
	    "profile was taken)");
	return -1;
}

/* Open path inside root (NULL: as it stands), trying the live target's
 * mapping too when mreq has a pid.  Returns 0, or -1 after noting why. */
static int
try_at(struct ht_modfile_req *mreq, const char *root, const char *path,
    struct ht_modfile *mf, struct tried *t)
{
	mreq->root = root;
	mreq->path = path;
	if (ht_modfile_open(mreq, mf) == 0)
		return 0;
	tried_add(t, root, path, mf);
	return -1;
}

static char *
message(const struct ht_modsearch_req *req, const struct tried *t)
{
	char id[2 * 64 + 1], *s;
	size_t i, n;

	for (i = 0; i < req->build_id_len && i < 64; i++)
		snprintf(id + 2 * i, 3, "%02x", req->build_id[i]);
	id[2 * i] = '\0';
	n = strlen(t->first) + t->len + sizeof(id) + 256;
	if ((s = malloc(n)) == NULL)
		return NULL;
	snprintf(s, n, "%s%s%s%s%s%s", t->first,
	    req->build_id_len > 0 ? "; looked for its build-id " : "",
	    req->build_id_len > 0 ? id : "",
	    t->n > 0 ?
		(req->build_id_len > 0 ? " also in " : "; also looked in ") :
		"",
	    t->more,
	    "; give the files of the profile's time with --sysroot DIR or "
	    "--debug-dir DIR");
	return s;
}

int
ht_modsearch_open(const struct ht_modsearch_req *req, struct ht_modfile *mf,
    const char **root, char **problem, int *mismatch)
{
	struct ht_modfile_req mreq;
	struct tried *t;
	char idpath[PATH_MAX], path[PATH_MAX * 2];
	const char *rel;
	size_t i;

	*problem = NULL;
	*mismatch = 0;
	*root = NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return -1;
	memset(&mreq, 0, sizeof(mreq));
	mreq.check = check_id;
	mreq.arg = (void *)req;

	if (req->sysroot != NULL &&
	    try_at(&mreq, req->sysroot, req->path, mf, t) == 0) {
		*root = req->sysroot;
		goto found;
	}
	mreq.pid = req->pid;
	mreq.lo = req->lo;
	mreq.hi = req->hi;
	mreq.root = req->root;
	mreq.path = req->path;
	if (ht_modfile_open(&mreq, mf) == 0) {
		*root = req->root;
		goto found;
	}
	snprintf(t->first, sizeof(t->first), "%s", mf->why);
	t->mismatch |= mf->mismatch;
	mreq.pid = 0;

	if (req->build_id_len < 2 ||
	    ht_debuginfo_build_id_path(req->build_id, req->build_id_len, idpath,
		sizeof(idpath)) != 0)
		goto fail;
	rel = idpath + sizeof(DEBUG_DIR) - 1;
	for (i = 0; i < req->ndebug_dirs; i++) {
		snprintf(path, sizeof(path), "%s%s", req->debug_dirs[i], rel);
		if (try_at(&mreq, NULL, path, mf, t) == 0)
			goto found;
	}
	if (req->sysroot != NULL &&
	    try_at(&mreq, req->sysroot, idpath, mf, t) == 0) {
		*root = req->sysroot;
		goto found;
	}
	if (req->root != NULL && try_at(&mreq, req->root, idpath, mf, t) == 0) {
		*root = req->root;
		goto found;
	}
	if (try_at(&mreq, NULL, idpath, mf, t) == 0)
		goto found;
fail:
	*mismatch = t->mismatch;
	*problem = message(req, t);
	free(t);
	return -1;
found:
	free(t);
	return 0;
}
