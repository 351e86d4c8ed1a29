/*
 * Is a stopped thread at a safe point (see inject-int.h)?  libdwfl unwinds
 * its stack from the registers we read and from our reads of its memory;
 * each frame is judged by the function or module it is in.
 *
 * Everything libdwfl needs from files (ELF headers, unwind tables, symbol
 * tables) is read when the modules are reported, before any thread is
 * stopped; judging a stopped thread then costs memory reads and binary
 * searches only.
 */
#include "config.h"

#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>

#include "debuginfo.h"
#include "inject-int.h"
#include "modfile.h"
#include "proc.h"

#define MAXFRAMES 256

/* The end of the file mapping that starts at lo, or lo if none. */
static uint64_t
fmap_end(const struct ht_inject *h, uint64_t lo)
{
	size_t a = 0, b = h->nfmaps, mid;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (h->fmaps[mid].lo < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < h->nfmaps && h->fmaps[a].lo == lo ? h->fmaps[a].hi : lo;
}

/*
 * A module's file as the target maps it (inject-elf.c): its map_files
 * link, else its path inside the target's root, so that a container's or
 * a chroot's files are the ones read, a file replaced on disk since is
 * not, and nothing is looked up in our own file system.  What has no path
 * ("[vdso: PID]") libdwfl reads from the target's memory; what cannot be
 * read either way has no file, and a stack through it does not unwind.
 */
static int
find_elf_cb(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct ht_inject *h = *userdata;
	struct ht_modfile mf;
	uint64_t bias;

	if (strncmp(name, "[vdso: ", 7) == 0)
		return dwfl_linux_proc_find_elf(mod, userdata, name, base,
		    file_name, elfp);
	if (h == NULL || name[0] != '/')
		return -1;
	if (ht_inj_open_mapped(h, name, base, fmap_end(h, base), &mf, &bias) !=
	    0)
		return -1;
	elf_end(mf.elf);
	if ((*file_name = strdup(mf.name)) == NULL) {
		close(mf.fd);
		return -1;
	}
	return mf.fd;
}

/* Separate debug information by build-id only (never a download, never a
 * long search): inside the target's root, then in our /usr/lib/debug,
 * each file taken only if its build-id is the module's (debuginfo.h). */
static int
find_debuginfo_cb(Dwfl_Module *mod, void **userdata, const char *modname,
    Dwarf_Addr base, const char *file_name, const char *debuglink_file,
    GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct ht_inject *h = *userdata;
	struct ht_debuginfo_ctx ctx = { NULL, NULL, NULL, 0 };
	void *ud = &ctx;

	(void)debuglink_file;
	if (h != NULL)
		ctx.root = h->root;
	return ht_debuginfo_find(mod, &ud, modname, base, file_name, NULL,
	    debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks dwfl_cbs = {
	.find_elf = find_elf_cb,
	.find_debuginfo = find_debuginfo_cb,
};

static pid_t
next_thread_cb(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct ht_inject *h = arg;

	(void)dwfl;
	if (*thread_argp != NULL || h->cur == 0)
		return 0;
	*thread_argp = h;
	return h->cur;
}

static bool
get_thread_cb(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct ht_inject *h = arg;

	(void)dwfl;
	if (tid != h->cur)
		return false;
	*thread_argp = h;
	return true;
}

static bool
memory_read_cb(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct ht_inject *h = arg;
	uint64_t page = addr & ~(uint64_t)4095;

	(void)dwfl;
	if (addr - page > sizeof(h->cbuf) - sizeof(*result))
		return ht_inj_mem_read(h->mpid, addr, result,
			   sizeof(*result)) == 0;
	if (!h->cvalid || h->cpage != page) {
		h->cvalid = 0;
		if (ht_inj_mem_read(h->mpid, page, h->cbuf, sizeof(h->cbuf)) !=
		    0)
			return ht_inj_mem_read(h->mpid, addr, result,
				   sizeof(*result)) == 0;
		h->cpage = page;
		h->cvalid = 1;
	}
	memcpy(result, h->cbuf + (addr - page), sizeof(*result));
	return true;
}

static bool
set_initial_registers_cb(Dwfl_Thread *thread, void *arg)
{
	struct ht_inject *h = arg;
	const struct user_regs_struct *r = &h->regs;
	/* DWARF numbering of x86-64; 16 is the return address column. */
	Dwarf_Word dw[17] = { r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi,
		r->rbp, r->rsp, r->r8, r->r9, r->r10, r->r11, r->r12, r->r13,
		r->r14, r->r15, r->rip };

	return dwfl_thread_state_registers(thread, 0, 17, dw);
}

static const Dwfl_Thread_Callbacks thread_cbs = {
	.next_thread = next_thread_cb,
	.get_thread = get_thread_cb,
	.memory_read = memory_read_cb,
	.set_initial_registers = set_initial_registers_cb,
};

/*
 * Frames that may hold a lock dlopen needs, by function name after
 * dropping glibc's "__GI_" alias prefix, leading underscores and a
 * "libc_" prefix (__libc_malloc -> malloc, _int_free -> int_free,
 * _dl_open -> dl_open).  A trailing '*' matches a prefix.
 *   allocator: every arena and tcache lock;
 *   loader: dl_load_lock, dl_load_write_lock, the TLS lock;
 *   fork/spawn: fork takes the allocator's locks, a vforked parent
 *     shares its memory with the child;
 *   threads: the stack cache lock (pthread_create in a constructor);
 *   exit: destructors run under the loader;
 *   gettext/locale: the locks dlerror's messages take.
 * Any frame in the dynamic loader's module counts as well, named or not.
 */
static const char *const unsafe_fns[] = { "malloc*", "free", "cfree", "calloc",
	"realloc", "reallocarray", "memalign", "posix_memalign",
	"aligned_alloc", "valloc", "pvalloc", "mallinfo*", "mallopt",
	"mid_memalign", "int_*", "sysmalloc*", "systrim", "mtrim", "heap_trim",
	"new_heap", "alloc_new_heap", "grow_heap", "shrink_heap", "tcache*",
	"arena_*", "get_free_list", "reused_arena", "detach_arena",
	"remove_from_free_list", "ptmalloc_*", "Znw*", "Zna*", "Zdl*", "Zda*",
	"dl_*", "dlopen*", "dlmopen*", "dlclose*", "dlsym*", "dlvsym*",
	"dladdr*", "dlinfo*", "dlerror*", "tls_get_addr", "early_init", "fork*",
	"Fork", "vfork", "posix_spawn*", "spawni*", "nptl_fork*",
	"run_fork_handlers", "pthread_create*", "allocate_stack",
	"nptl_deallocate_stack", "nptl_free_stacks", "free_stacks",
	"queue_stack", "thread_freeres", "exit", "run_exit_handlers",
	"call_tls_dtors", "cxa_finalize", "dcgettext", "dcngettext",
	"dcigettext", "nl_*", "setlocale", "newlocale", "textdomain",
	"bindtextdomain", NULL };

static int
unsafe_name(const char *fn)
{
	const char *const *u;
	size_t n;

	if (strncmp(fn, "__GI_", 5) == 0)
		fn += 5;
	while (*fn == '_')
		fn++;
	if (strncmp(fn, "libc_", 5) == 0)
		fn += 5;
	for (u = unsafe_fns; *u != NULL; u++) {
		n = strlen(*u);
		if ((*u)[n - 1] == '*' ? strncmp(fn, *u, n - 1) == 0 :
					 strcmp(fn, *u) == 0)
			return 1;
	}
	return 0;
}

/*
 * Give each module our handle (find_elf reads files through the target's
 * root) and load now what unwinding will need, so that no file is read
 * while a thread is stopped; and collect the address ranges of the unsafe
 * functions, so that judging a frame is a binary search (libdwfl's own
 * address-to-name lookup scans the whole symbol table: about 0.2 ms per
 * frame in libc with its debug symbols, all of it pause).
 */
static int
prime_module_cb(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr start, void *arg)
{
	struct ht_inject *h = arg;
	struct urange *nu;
	Dwarf_Addr bias;
	GElf_Sym sym;
	GElf_Addr addr;
	const char *fn;
	int i, n;

	(void)name;
	(void)start;
	*userdata = arg;
	if (dwfl_module_getelf(mod, &bias) == NULL)
		return DWARF_CB_OK;
	(void)dwfl_module_eh_cfi(mod, &bias);
	n = dwfl_module_getsymtab(mod);
	for (i = 1; i < n; i++) {
		fn = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL,
		    NULL);
		if (fn == NULL || sym.st_size == 0 ||
		    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
		    !unsafe_name(fn))
			continue;
		if (h->nur == h->urcap) {
			h->urcap = h->urcap ? h->urcap * 2 : 256;
			if ((nu = realloc(h->ur, h->urcap * sizeof(*nu))) ==
			    NULL) {
				h->urcap = h->nur;
				return DWARF_CB_ABORT;
			}
			h->ur = nu;
		}
		h->ur[h->nur].lo = addr;
		h->ur[h->nur].hi = addr + sym.st_size;
		h->ur[h->nur].name = fn;
		h->nur++;
	}
	return DWARF_CB_OK;
}

static int
urange_cmp(const void *a, const void *b)
{
	const struct urange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The unsafe function holding pc, or NULL. */
static const char *
unsafe_at(const struct ht_inject *h, uint64_t pc)
{
	size_t lo = 0, hi = h->nur, mid;

	/* The last range starting at or below pc. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (h->ur[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && pc < h->ur[lo - 1].hi)
		return h->ur[lo - 1].name;
	return NULL;
}
static uint64_t
hash_bytes(uint64_t hash, const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		hash = (hash ^ b[i]) * 0x100000001b3ULL;
	return hash;
}

struct hash {
	struct ht_inject *h; /* to record the file mappings, or NULL */
	uint64_t hash;
	int nomem;
};

static int
hash_cb(void *arg, const struct ht_proc_map *m)
{
	struct hash *w = arg;
	struct ht_inject *h = w->h;
	struct vma *n;

	w->hash = hash_bytes(w->hash, &m->lo, sizeof(m->lo));
	w->hash = hash_bytes(w->hash, &m->hi, sizeof(m->hi));
	w->hash = hash_bytes(w->hash, &m->offset, sizeof(m->offset));
	w->hash = hash_bytes(w->hash, &m->inode, sizeof(m->inode));
	w->hash = hash_bytes(w->hash, m->path, strlen(m->path) + 1);
	if (h == NULL || m->inode == 0 || m->path[0] != '/')
		return 0;
	if (h->nfmaps == h->fmcap) {
		h->fmcap = h->fmcap ? h->fmcap * 2 : 256;
		if ((n = realloc(h->fmaps, h->fmcap * sizeof(*n))) == NULL) {
			h->fmcap = h->nfmaps;
			w->nomem = 1;
			return 1;
		}
		h->fmaps = n;
	}
	h->fmaps[h->nfmaps].lo = m->lo;
	h->fmaps[h->nfmaps].hi = m->hi;
	h->fmaps[h->nfmaps].grows = 0;
	h->nfmaps++;
	return 0;
}

/* A hash of the target's mappings, to tell whether modules came or went;
 * 0 if they cannot be read.  With h, its file mappings are kept in h (in
 * address order, as the kernel lists them) for find_elf_cb. */
static uint64_t
maps_hash(pid_t pid, struct ht_inject *h)
{
	struct hash w = { h, 0xcbf29ce484222325ULL, 0 };

	if (h != NULL)
		h->nfmaps = 0;
	if (ht_proc_maps(pid, hash_cb, &w) != 0 || w.nomem)
		return 0;
	return w.hash;
}

int
ht_inj_maps_changed(const struct ht_inject *h)
{
	return maps_hash(h->pid, NULL) != h->maps_hash;
}

void
ht_inj_dwfl_teardown(struct ht_inject *h)
{
	if (h->dwfl != NULL)
		dwfl_end(h->dwfl);
	h->dwfl = NULL;
	free(h->ur);
	h->ur = NULL;
	h->nur = h->urcap = 0;
	free(h->fmaps);
	h->fmaps = NULL;
	h->nfmaps = h->fmcap = 0;
}

int
ht_inj_dwfl_setup(struct ht_inject *h)
{
	int r;

	ht_inj_dwfl_teardown(h);
	h->dwfl_stale = 0;
	h->maps_hash = maps_hash(h->pid, h);
	if ((h->dwfl = dwfl_begin(&dwfl_cbs)) == NULL)
		return ht_inj_fail(h, HT_INJ_ESYS, 0, "libdwfl: %s",
		    dwfl_errmsg(-1));
	dwfl_report_begin(h->dwfl);
	/* Through the live thread: a zombie leader's maps are empty. */
	r = dwfl_linux_proc_report(h->dwfl, h->mpid);
	if (dwfl_report_end(h->dwfl, NULL, NULL) != 0 || r != 0) {
		ht_inj_dwfl_teardown(h);
		if (r == ENOENT || r == ESRCH)
			return ht_inj_fail(h, HT_INJ_ENOPROC, 0,
			    "process %d "
			    "exited",
			    (int)h->pid);
		return ht_inj_fail(h, HT_INJ_ESYS, r > 0 ? r : 0,
		    "libdwfl: "
		    "reading the modules of process %d",
		    (int)h->pid);
	}
	if (dwfl_getmodules(h->dwfl, prime_module_cb, h, 0) != 0) {
		ht_inj_dwfl_teardown(h);
		return ht_inj_fail(h, HT_INJ_ESYS, ENOMEM, "injector");
	}
	qsort(h->ur, h->nur, sizeof(*h->ur), urange_cmp);
	if (!dwfl_attach_state(h->dwfl, NULL, h->pid, &thread_cbs, h)) {
		ht_inj_fail(h, HT_INJ_ESYS, 0, "libdwfl: %s", dwfl_errmsg(-1));
		ht_inj_dwfl_teardown(h);
		return -1;
	}
	return 0;
}

static int
is_loader(const char *path)
{
	const char *b = ht_inj_basename(path);

	return strncmp(b, "ld-linux", 8) == 0 ||
	    strncmp(b, "ld64.so", 7) == 0 ||
	    (strncmp(b, "ld-", 3) == 0 && strstr(b, ".so") != NULL);
}

struct walk {
	struct ht_inject *h;
	int depth;
	int bad;
	char what[128];
};

static int
frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct walk *w = arg;
	Dwfl_Module *mod;
	Dwarf_Addr pc;
	const char *mname = NULL, *fn = NULL;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation)) {
		w->bad = 2;
		snprintf(w->what, sizeof(w->what), "%s", dwfl_errmsg(-1));
		return DWARF_CB_ABORT;
	}
	/* Below a signal frame: the thread runs a handler, which may have
	 * interrupted anything, even code that holds a lock under a name we
	 * cannot know; and dlopen is not async-signal-safe. */
	if (activation && w->depth > 0) {
		w->bad = 1;
		snprintf(w->what, sizeof(w->what), "a signal handler");
		return DWARF_CB_ABORT;
	}
	/* A return address points after the call: look up the call. */
	if (!activation)
		pc--;
	if ((mod = dwfl_addrmodule(w->h->dwfl, pc)) != NULL)
		mname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL,
		    NULL, NULL);
	if (mname != NULL && is_loader(mname)) {
		w->bad = 1;
		snprintf(w->what, sizeof(w->what), "the dynamic loader (%s)",
		    ht_inj_basename(mname));
		return DWARF_CB_ABORT;
	}
	/* The library whose function we call: its code may hold a lock
	 * of its own that the function takes. */
	if (pc >= w->h->avoid_lo && pc < w->h->avoid_hi) {
		w->bad = 3;
		snprintf(w->what, sizeof(w->what), "%s",
		    mname != NULL ? ht_inj_basename(mname) : "the library");
		return DWARF_CB_ABORT;
	}
	if ((fn = unsafe_at(w->h, pc)) != NULL) {
		w->bad = 1;
		snprintf(w->what, sizeof(w->what), "%s", fn);
		return DWARF_CB_ABORT;
	}
	if (++w->depth > MAXFRAMES) {
		w->bad = 2;
		snprintf(w->what, sizeof(w->what), "more than %d frames",
		    MAXFRAMES);
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* System calls that run with a temporary signal mask and leave the
 * thread's own to restore (TIF_RESTORE_SIGMASK) when interrupted. */
static int
swaps_mask(long nr)
{
	switch (nr) {
	case SYS_ppoll:
	case SYS_pselect6:
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
	case SYS_rt_sigsuspend:
#ifdef SYS_io_pgetevents
	case SYS_io_pgetevents:
#endif
		return 1;
	}
	return 0;
}

/* A safe point: in a system call, and the whole stack unwinds without a
 * frame that may hold one of dlopen's locks. */
int
ht_inj_safe_point(struct ht_inject *h)
{
	struct walk w;
	int r;

	if ((long)h->regs.orig_rax < 0) {
		h->why.running++;
		return 0;
	}
	/* The call restores the thread's signal mask as PTRACE_GETSIGMASK
	 * gives it, which is the mask to restore after ppoll & co. only
	 * since Linux 5.1 (before, their temporary one). */
	if (!h->saved_sigmask && swaps_mask((long)h->regs.orig_rax)) {
		h->why.maskswap++;
		return 0;
	}
	memset(&w, 0, sizeof(w));
	w.h = h;
	h->cvalid = 0;
	r = dwfl_getthread_frames(h->dwfl, h->cur, frame_cb, &w);
	if (w.bad == 3) {
		h->why.inlib++;
		snprintf(h->why.lib, sizeof(h->why.lib), "%s", w.what);
		return 0;
	}
	if (w.bad == 1) {
		h->why.unsafe++;
		snprintf(h->why.fn, sizeof(h->why.fn), "%s", w.what);
		return 0;
	}
	if (w.bad == 2 || r != 0) {
		h->why.unwind++;
		snprintf(h->why.unwind_msg, sizeof(h->why.unwind_msg), "%s",
		    w.bad ? w.what : dwfl_errmsg(-1));
		/* Perhaps a module loaded since we listed them. */
		h->dwfl_stale = 1;
		return 0;
	}
	return 1;
}
