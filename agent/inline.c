/*
 * The inline backend's block and its service (inline.h).
 */
#include <sys/mman.h>

#include <poll.h>
#include <unistd.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "allocnames.h"
#include "coverage.h"
#include "got.h"
#include "guard.h"
#include "hooks.h"
#include "ihooks.h"
#include "inline-block.h"
#include "inline.h"
#include "lock.h"
#include "modules.h"

/* The CLI finds it by this name in the agent's .dynsym (agent.map). */
__attribute__((visibility("default"))) struct ht_inline_shared heaptool_inline;

_Static_assert(HT_NHOOKS <= HT_INLINE_NAMES,
    "the shared block describes every hook table entry");

#define AREA_STEP  (1u << 20)
#define AREA_TRIES 1024 /* down to 1 GiB below the module */
#define REACH	   (1ull << 31)

static void
publish(struct ht_inline_shared *b)
{
	size_t i;

	for (i = 0; i < HT_NHOOKS && i < HT_INLINE_NAMES; i++) {
		b->names[i] = (uint64_t)(uintptr_t)ht_ihooks[i].name;
		b->hooks[i] = ht_ihooks_inlinable(i) ?
		    (uint64_t)(uintptr_t)ht_ihooks[i].hook :
		    0;
	}
	b->nnames = (uint32_t)i;
	b->version = HT_INLINE_VERSION;
	__atomic_store_n(&b->magic, HT_INLINE_MAGIC, __ATOMIC_RELEASE);
}

static int
reaches(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;

	return d + HT_INLINE_AREA_SIZE < REACH;
}

/*
 * An area below near, never above: above a module lies its heap (brk),
 * which must stay free to grow.  MAP_FIXED_NOREPLACE never takes what is
 * mapped; the pages are read and execute only from the start (the CLI
 * writes them through /proc/PID/mem).
 */
static int
map_area(struct ht_inline_shared *b, uint64_t near)
{
	uint64_t base = near & ~(uint64_t)(AREA_STEP - 1), a;
	size_t i, k;
	void *p;

	for (i = 0; i < HT_INLINE_AREAS; i++)
		if (b->areas[i].lo != 0 && reaches(b->areas[i].lo, near) &&
		    b->areas[i].used + 256 < HT_INLINE_AREA_SIZE)
			return 0;
	for (i = 0; i < HT_INLINE_AREAS && b->areas[i].lo != 0; i++)
		;
	if (i == HT_INLINE_AREAS)
		return ENOSPC;
	for (k = 1; k <= AREA_TRIES; k++) {
		if (base < (uint64_t)k * AREA_STEP + (1u << 16))
			break;
		a = base - (uint64_t)k * AREA_STEP;
		p = mmap((void *)(uintptr_t)a, HT_INLINE_AREA_SIZE,
		    PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		if ((uint64_t)(uintptr_t)p != a) { /* an old kernel's hint */
			munmap(p, HT_INLINE_AREA_SIZE);
			continue;
		}
		b->areas[i].used = 0;
		__atomic_store_n(&b->areas[i].lo, a, __ATOMIC_RELEASE);
		return 0;
	}
	return ENOMEM;
}

static int
arm(struct ht_inline_rec *r)
{
	void *fn = (void *)(uintptr_t)r->fn;
	void *tramp = (void *)(uintptr_t)r->tramp;
	void *cur;

	if (r->kind == HT_INLINE_EXCLUDE)
		return ht_got_exclude(fn) < 0 ? -1 : 0;
	if (r->kind != HT_INLINE_HOOK || !ht_ihooks_inlinable(r->index) ||
	    r->tramp == 0)
		return -1;
	/* One function per entry: the CLI checked, the agent holds to it. */
	cur = __atomic_load_n(&ht_ihooks[r->index].orig, __ATOMIC_ACQUIRE);
	if (cur != NULL && cur != tramp)
		return -1;
	__atomic_store_n(&ht_ihooks[r->index].orig, tramp, __ATOMIC_RELEASE);
	return ht_got_redirect(ht_hooks, HT_NHOOKS, fn, tramp);
}

int
ht_inline_sync(void)
{
	struct ht_inline_shared *b = &heaptool_inline;
	uint64_t near;
	size_t i;
	int rc = 0;

	publish(b);
	near = __atomic_load_n(&b->near, __ATOMIC_ACQUIRE);
	if (near != 0) {
		b->near_errno = (uint32_t)map_area(b, near);
		__atomic_store_n(&b->near, 0, __ATOMIC_RELEASE);
	}
	for (i = 0; i < HT_INLINE_RECORDS; i++) {
		struct ht_inline_rec *r = &b->rec[i];
		uint32_t st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);

		if (st != HT_INLINE_ARMING && st != HT_INLINE_ARMED &&
		    st != HT_INLINE_PATCHED)
			continue;
		if (arm(r) != 0) {
			rc = -1;
			continue;
		}
		if (st == HT_INLINE_ARMING)
			__atomic_store_n(&r->state, HT_INLINE_ARMED,
			    __ATOMIC_RELEASE);
	}
	return rc;
}

/* The path of the module holding fn into buf, and whether it is the
 * executable; -1 if no module holds it. */
static int
module_path(uint64_t fn, char *buf, size_t len, int *is_main)
{
	const struct ht_module *m;
	int rc = -1;

	ht_guard_enter();
	ht_lock_acquire(&ht_lock_global);
	if ((m = ht_modules_find((uintptr_t)fn)) != NULL) {
		size_t n = strnlen(m->path, len - 1);

		memcpy(buf, m->path, n);
		buf[n] = '\0';
		*is_main = (m->flags & HT_MOD_MAIN) != 0;
		rc = 0;
	}
	ht_lock_release(&ht_lock_global);
	ht_guard_leave();
	return rc;
}

/* Entry (fn, index): hooked inline (reason PATCHED), refused by the inline
 * backend (its reason), or handed back to the GOT backend's account (on,
 * 0): what the GOT scan would say of a function no slot leads to, which
 * its next scan may correct. */
static int
account_one(uint64_t fn, uint32_t index, int on, unsigned reason, int hooked)
{
	static char path[512]; /* the control thread's */
	int is_main;

	if (index >= HT_NHOOKS || ht_ihooks[index].name == NULL ||
	    module_path(fn, path, sizeof(path), &is_main) != 0)
		return 0;
	if (on)
		(void)ht_coverage_set(path, ht_ihooks[index].name,
		    HT_BACKEND_INLINE, reason);
	else if (!hooked)
		(void)ht_coverage_set(path, ht_ihooks[index].name,
		    HT_BACKEND_NONE, HT_COV_DETACHED);
	else
		(void)ht_coverage_set(path, ht_ihooks[index].name,
		    HT_BACKEND_NONE, is_main ? HT_COV_DIRECT : HT_COV_NO_SLOT);
	return on && reason == HT_COV_PATCHED;
}

/* Is the function at fn patched inline now? */
static int
patched_at(const struct ht_inline_shared *b, uint64_t fn)
{
	size_t i;

	for (i = 0; i < HT_INLINE_RECORDS; i++)
		if (b->rec[i].fn == fn && b->rec[i].kind == HT_INLINE_HOOK &&
		    __atomic_load_n(&b->rec[i].state, __ATOMIC_ACQUIRE) ==
			HT_INLINE_PATCHED)
			return 1;
	return 0;
}

void
ht_inline_account(int hooked)
{
	struct ht_inline_shared *b = &heaptool_inline;
	int on, patched = 0;
	uint32_t i, n;

	if (__atomic_load_n(&b->magic, __ATOMIC_ACQUIRE) != HT_INLINE_MAGIC)
		return; /* never asked: the GOT scan's account stands */
	on = hooked && __atomic_load_n(&b->wanted, __ATOMIC_ACQUIRE) != 0;
	/* The refusals first: a function of the same name patched in the
	 * module wins its entry. */
	n = __atomic_load_n(&b->nrefusals, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < HT_INLINE_REFUSALS; i++) {
		const struct ht_inline_refusal *f = &b->refusals[i];

		if (f->reason == 0 || f->reason >= HT_NCOVREASONS)
			continue;
		/* Another name of a function hooked under its first name
		 * (cli/inline-elf.c): patched if that function is. */
		if (f->reason == HT_COV_PATCHED) {
			int p = patched_at(b, f->fn);

			patched += account_one(f->fn, f->index, on,
			    p ? HT_COV_PATCHED : HT_COV_REFUSED, hooked);
			continue;
		}
		(void)account_one(f->fn, f->index, on, f->reason, hooked);
	}
	for (i = 0; i < HT_INLINE_RECORDS; i++) {
		const struct ht_inline_rec *r = &b->rec[i];
		uint32_t st = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);

		if (r->kind != HT_INLINE_HOOK ||
		    (st != HT_INLINE_ARMED && st != HT_INLINE_PATCHED))
			continue;
		/* Armed, not patched, while inline hooks are asked for: the
		 * refusals say why. */
		if (on && st != HT_INLINE_PATCHED)
			continue;
		patched += account_one(r->fn, r->index,
		    on && st == HT_INLINE_PATCHED, HT_COV_PATCHED, hooked);
	}
	if (patched > 0)
		ht_coverage_set_backend(HT_BACKEND_INLINE);
	else if (ht_coverage_backend() == HT_BACKEND_INLINE)
		ht_coverage_set_backend(
		    hooked ? HT_BACKEND_GOT : HT_BACKEND_NONE);
}

#define SERVE_WAIT_MS 30000

static int
put_byte(int fd, char c)
{
	ssize_t n;

	do
		n = write(fd, &c, 1);
	while (n == -1 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

void
ht_inline_serve_fd(int fd)
{
	struct pollfd p;
	ssize_t n;
	char c;
	int r;

	if (put_byte(fd, 'R') != 0)
		goto out;
	for (;;) {
		p.fd = fd;
		p.events = POLLIN;
		p.revents = 0;
		if ((r = poll(&p, 1, SERVE_WAIT_MS)) == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break; /* the CLI is gone quiet: run on */
		do
			n = read(fd, &c, 1);
		while (n == -1 && errno == EINTR);
		if (n != 1 || c != 'H')
			break; /* 'G', or the CLI is gone */
		r = ht_inline_sync();
		ht_inline_account(1);
		if (put_byte(fd, r == 0 ? 'K' : 'E') != 0)
			break;
	}
out:
	close(fd);
}
