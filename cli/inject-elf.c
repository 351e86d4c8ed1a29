/*
 * The target's libc, and dlopen and dlerror in it (see inject-int.h).
 *
 * The file is read as the target maps it: through the kernel's link to
 * the mapping, else at its path inside the target's root (a container's
 * libc is not ours; a chrooted process's maps show the path with its root
 * in front, which is taken off), never in our own file system; and in
 * either case only if its build-id is the one in the target's memory.  The
 * symbols' addresses are then the file's plus the load bias of the
 * mapping.
 *
 * __restore_rt, glibc's sa_restorer, is a local symbol, absent from a
 * stripped libc: it is found by its bytes, as is a "syscall; ret".  Any
 * occurrence in executable memory does: the bytes are the instructions
 * that run from there, whatever function they belong to, and neither
 * sequence falls through (rt_sigreturn does not return; ret goes where
 * the stack says).
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "inject-int.h"
#include "modfile.h"
#include "proc.h"

/* mov $15, %rax (rt_sigreturn); syscall */
static const unsigned char restore_rt_code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00,
	0x00, 0x00, 0x0f, 0x05 };
/* syscall; ret */
static const unsigned char syscall_ret_code[] = { 0x0f, 0x05, 0xc3 };

/* The load bias of the file whose offset 0 is mapped at lo. */
static int
elf_bias(Elf *elf, uint64_t lo, uint64_t *bias)
{
	size_t i, nph;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &nph) != 0)
		return -1;
	for (i = 0; i < nph; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) == NULL ||
		    ph.p_type != PT_LOAD)
			continue;
		*bias = lo - (ph.p_vaddr - ph.p_offset);
		return 0;
	}
	return -1;
}

/* A function in .dynsym; the default version if there are several. */
static int
elf_dynsym(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL, *dyn = NULL, *ver = NULL;
	Elf_Data *dd, *vd = NULL;
	GElf_Shdr sh, dsh;
	GElf_Sym sym;
	GElf_Versym vs;
	size_t i, n;
	const char *s;
	int found = 0;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (sh.sh_type == SHT_DYNSYM)
			dyn = scn;
		else if (sh.sh_type == SHT_GNU_versym)
			ver = scn;
	}
	if (dyn == NULL || gelf_getshdr(dyn, &dsh) == NULL ||
	    dsh.sh_entsize == 0 || (dd = elf_getdata(dyn, NULL)) == NULL)
		return -1;
	if (ver != NULL)
		vd = elf_getdata(ver, NULL);
	n = dsh.sh_size / dsh.sh_entsize;
	for (i = 1; i < n; i++) {
		if (gelf_getsym(dd, (int)i, &sym) == NULL ||
		    sym.st_shndx == SHN_UNDEF || sym.st_value == 0 ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		s = elf_strptr(elf, dsh.sh_link, sym.st_name);
		if (s == NULL || strcmp(s, name) != 0)
			continue;
		*value = sym.st_value;
		found = 1;
		/* A hidden version (bit 15) is a compat alias: keep looking
		 * for the default one. */
		if (vd == NULL || gelf_getversym(vd, (int)i, &vs) == NULL ||
		    (vs & 0x8000) == 0)
			return 0;
	}
	return found ? 0 : -1;
}

struct mapped {
	struct ht_inject *h;
	uint64_t lo;
	uint64_t bias; /* of the last file checked */
};

/* Is elf the file mapped at m->lo: 64-bit, and its build-id, if it has
 * one, the bytes the target has at that address? */
static int
mapped_here(Elf *elf, void *arg, char *why, size_t whylen)
{
	struct mapped *m = arg;
	const unsigned char *id;
	unsigned char mem[64];
	size_t idlen;
	GElf_Addr vaddr;

	if (gelf_getclass(elf) != ELFCLASS64 ||
	    elf_bias(elf, m->lo, &m->bias) != 0) {
		snprintf(why, whylen, "not a loadable 64-bit ELF file");
		return -1;
	}
	if (ht_modfile_build_id(elf, &id, &idlen, &vaddr) == 0 &&
	    (idlen > sizeof(mem) ||
		ht_inj_mem_read(m->h->mpid, m->bias + vaddr, mem, idlen) != 0 ||
		memcmp(mem, id, idlen) != 0)) {
		snprintf(why, whylen, "build-id differs from the mapped one");
		return -1;
	}
	return 0;
}

int
ht_inj_open_mapped(struct ht_inject *h, const char *path, uint64_t lo,
    uint64_t hi, struct ht_modfile *mf, uint64_t *bias)
{
	static const char deleted[] = " (deleted)";
	struct mapped m = { h, lo, 0 };
	struct ht_modfile_req req;
	char name[PATH_MAX];
	const char *in;
	size_t n;

	/* The path the maps show, as the target sees it inside its root;
	 * "" when it lies outside (then only the mapping can be read). */
	n = strlen(path);
	if (n >= sizeof(deleted) - 1 &&
	    strcmp(path + n - (sizeof(deleted) - 1), deleted) == 0)
		n -= sizeof(deleted) - 1;
	if (n >= sizeof(name))
		n = 0;
	memcpy(name, path, n);
	name[n] = '\0';
	if (h->rootlink[0] == '\0' ||
	    (in = ht_proc_in_root(h->rootlink, name)) == NULL)
		in = "";
	memset(&req, 0, sizeof(req));
	req.path = in;
	req.root = h->root;
	req.pid = h->mpid;
	req.vlo = lo;
	req.vhi = hi;
	req.check = mapped_here;
	req.arg = &m;
	if (ht_modfile_open(&req, mf) != 0)
		return -1;
	*bias = m.bias;
	return 0;
}

/* dlopen and dlerror (if there) of the file mapped at bias into h.
 * Returns 0, or -1 if it has no dlopen. */
static int
dl_symbols(struct ht_inject *h, Elf *elf, uint64_t bias)
{
	h->dlopen_addr = h->dlerror_addr = 0;
	if (elf_dynsym(elf, "dlopen", &h->dlopen_addr) != 0)
		return -1;
	h->dlopen_addr += bias;
	if (elf_dynsym(elf, "dlerror", &h->dlerror_addr) == 0)
		h->dlerror_addr += bias;
	else
		h->dlerror_addr = 0;
	return 0;
}

/* The address of the first occurrence of pat in an executable segment of
 * the file mapped at bias, if the target has those bytes there; or 0. */
static uint64_t
find_code(struct ht_inject *h, Elf *elf, uint64_t bias,
    const unsigned char *pat, size_t len)
{
	GElf_Phdr ph;
	const char *raw, *p;
	unsigned char mem[16];
	uint64_t at;
	size_t size, i, nph;

	if ((raw = elf_rawfile(elf, &size)) == NULL ||
	    elf_getphdrnum(elf, &nph) != 0)
		return 0;
	for (i = 0; i < nph; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) == NULL ||
		    ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
			continue;
		if ((p = memmem(raw + ph.p_offset, ph.p_filesz, pat, len)) ==
		    NULL)
			continue;
		at = bias + ph.p_vaddr + (uint64_t)(p - (raw + ph.p_offset));
		if (len <= sizeof(mem) &&
		    ht_inj_mem_read(h->mpid, at, mem, len) == 0 &&
		    memcmp(mem, pat, len) == 0)
			return at;
	}
	return 0;
}

/* The library of ht_inj_find_export, as the maps show it. */
struct lib_scan {
	int (*match)(const char *base);
	char *path;	      /* PATH_MAX */
	uint64_t lo, hi;      /* its mapping of file offset 0 */
	uint64_t first, last; /* all its mappings */
};

static int
lib_cb(void *arg, const struct ht_proc_map *m)
{
	struct lib_scan *s = arg;
	const char *base;

	if (m->path[0] != '/' || strlen(m->path) >= PATH_MAX)
		return 0;
	if (s->path[0] != '\0') {
		if (strcmp(m->path, s->path) == 0 && m->hi > s->last)
			s->last = m->hi;
		return 0;
	}
	base = ht_inj_basename(m->path);
	if (m->offset != 0 || !s->match(base))
		return 0;
	strcpy(s->path, m->path);
	s->lo = s->first = m->lo;
	s->hi = s->last = m->hi;
	return 0;
}

int
ht_inj_find_export(struct ht_inject *h, int (*match)(const char *base),
    const char *symbol, char *path)
{
	struct lib_scan s = { match, path, 0, 0, 0, 0 };
	struct ht_modfile mf;
	uint64_t bias, value;
	int r;

	path[0] = '\0';
	if (ht_proc_maps(h->pid, lib_cb, &s) == -1)
		return ht_inj_fail(h, HT_INJ_ENOPROC, 0, "no process %d",
		    (int)h->pid);
	if (path[0] == '\0')
		return ht_inj_fail(h, HT_INJ_ENOLIB, 0,
		    "the library is not loaded in process %d", (int)h->pid);
	if (ht_inj_open_mapped(h, path, s.lo, s.hi, &mf, &bias) != 0)
		return ht_inj_fail(h, HT_INJ_ENOLIB, 0,
		    "cannot read %s as process %d maps it (a 64-bit ELF "
		    "file whose build-id matches)",
		    path, (int)h->pid);
	r = elf_dynsym(mf.elf, symbol, &value);
	ht_modfile_close(&mf);
	if (r != 0)
		return ht_inj_fail_advice(h, HT_INJ_ENOLIB, 0,
		    "it is another version of the library",
		    "%s, loaded in process %d, does not export %s", path,
		    (int)h->pid, symbol);
	h->fn_addr = bias + value;
	h->avoid_lo = s.first;
	h->avoid_hi = s.last;
	return 0;
}

static int
is_libc(const char *base)
{
	return strcmp(base, "libc.so.6") == 0 ||
	    (strncmp(base, "libc-2.", 7) == 0 &&
		strcmp(base + strlen(base) - 3, ".so") == 0);
}

/* What the maps say about the libraries we need. */
struct scan {
	struct ht_inject *h;
	int musl;
	uint64_t libc_lo, libc_hi;
	char libdl[PATH_MAX];
	uint64_t dl_lo, dl_hi;
};

static int
scan_cb(void *arg, const struct ht_proc_map *m)
{
	struct scan *s = arg;
	const char *base;

	if (m->path[0] != '/' || strlen(m->path) >= PATH_MAX)
		return 0;
	base = ht_inj_basename(m->path);
	if (strncmp(base, "ld-musl", 7) == 0)
		s->musl = 1;
	if (is_libc(base) && m->offset == 0 && s->h->libc_path[0] == '\0') {
		strcpy(s->h->libc_path, m->path);
		s->libc_lo = m->lo;
		s->libc_hi = m->hi;
	}
	if (strcmp(base, "libdl.so.2") == 0 && m->offset == 0 &&
	    s->libdl[0] == '\0') {
		strcpy(s->libdl, m->path);
		s->dl_lo = m->lo;
		s->dl_hi = m->hi;
	}
	return 0;
}

int
ht_inj_find_libc(struct ht_inject *h)
{
	struct scan s;
	struct ht_modfile mf;
	char what[96];
	uint64_t bias;
	int r, err;

	memset(&s, 0, sizeof(s));
	s.h = h;
	h->libc_path[0] = '\0';
	if (ht_proc_maps(h->pid, scan_cb, &s) == -1) {
		err = errno;
		if (err == ENOENT || err == ESRCH)
			return ht_inj_fail(h, HT_INJ_ENOPROC, 0,
			    "no process "
			    "%d",
			    (int)h->pid);
		snprintf(what, sizeof(what), "reading /proc/%d/maps",
		    (int)h->pid);
		if (err == EACCES || err == EPERM)
			return ht_inj_fail_perm(h, err, what);
		return ht_inj_fail(h, HT_INJ_ESYS, err, "%s", what);
	}
	if (h->libc_path[0] == '\0') {
		if (s.musl)
			return ht_inj_fail(h, HT_INJ_ESTATIC, 0,
			    "process %d "
			    "uses musl libc, not glibc",
			    (int)h->pid);
		return ht_inj_fail(h, HT_INJ_ESTATIC, 0,
		    "process %d has no "
		    "libc.so.6 mapped: it is statically linked or does not "
		    "use glibc",
		    (int)h->pid);
	}

	if (ht_inj_open_mapped(h, h->libc_path, s.libc_lo, s.libc_hi, &mf,
		&bias) != 0)
		return ht_inj_fail(h, HT_INJ_ESTATIC, 0,
		    "cannot read the libc "
		    "of process %d (%s) as it is mapped (a 64-bit glibc whose "
		    "build-id matches)",
		    (int)h->pid, h->libc_path);
	r = dl_symbols(h, mf.elf, bias);
	h->restore_rt = find_code(h, mf.elf, bias, restore_rt_code,
	    sizeof(restore_rt_code));
	h->gadget = find_code(h, mf.elf, bias, syscall_ret_code,
	    sizeof(syscall_ret_code));
	ht_modfile_close(&mf);
	if (h->restore_rt == 0 || h->gadget == 0)
		return ht_inj_fail(h, HT_INJ_EUNSUPP, 0,
		    "the libc of process "
		    "%d (%s) has no __restore_rt or no \"syscall; ret\" that "
		    "the injector knows",
		    (int)h->pid, h->libc_path);
	if (r == 0)
		return 0;

	/* glibc before 2.34 has dlopen in libdl, if the program uses it. */
	if (s.libdl[0] != '\0' &&
	    ht_inj_open_mapped(h, s.libdl, s.dl_lo, s.dl_hi, &mf, &bias) == 0) {
		r = dl_symbols(h, mf.elf, bias);
		ht_modfile_close(&mf);
		if (r == 0)
			return 0;
	}
	return ht_inj_fail(h, HT_INJ_EUNSUPP, 0,
	    "the libc of process %d (%s) "
	    "does not export dlopen (glibc older than 2.34, and no libdl "
	    "loaded)",
	    (int)h->pid, h->libc_path);
}
