/*
 * The inline backend's order of work (inline.h):
 *
 *   1. HT_MSG_HOOK: the agent publishes its table in its block; we read
 *      the names and their inline hooks.
 *   2. The candidates of every module, each planned (inline-code.c) or
 *      refused.  A candidate that calls another one directly (calloc
 *      calling malloc) is excluded: its calls are counted in the callee;
 *      if it is exported, the GOT slots bound to it are put back (else a
 *      call through them would be counted twice).
 *   3. An area within reach of the module (asked of the agent), a stub
 *      and a trampoline in it for each function, written and read back;
 *      a function patched by an earlier attach reuses its own.
 *   4. HT_MSG_HOOK again: the agent arms the records (the trampoline is
 *      the inline hook's original and replaces the function wherever a GOT
 *      original was the function), so that from the moment the function
 *      jumps to the hook every call is counted once.
 *   5. Every thread stopped; no instruction pointer, and no word of the
 *      top of any stack (a signal frame's saved one), inside the bytes to
 *      patch, else let go and try again; the bytes checked to be the ones
 *      planned; then written and read back, a module's set all or none.
 *
 * restore undoes 5 only: the trampolines stay (a thread may be inside
 * one) and stay armed (a trampoline is a valid original at any time).
 */
#include "config.h"

#include <sys/file.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inline-int.h"

#define MAX_MODS    1024
#define TRIES	    25 /* stops until no thread is in the way */
#define STACK_WORDS 1024
#define NAME_MAX_   64
#define BELL_MS	    30000
#define LOCK_TRIES  3000 /* of 10 ms: another heaptool's apply or restore */

struct run {
	pid_t pid;
	uint64_t baddr;
	struct ht_inline_shared *b; /* our copy of the agent's block */
	char *names[HT_INLINE_NAMES];
	struct inl_fn *fns;
	size_t nfns;
	struct inl_mod *mods;
	size_t nmods;
	char *err;
	size_t errlen;
	int bell;   /* heaptool run's doorbell (inline-block.h), or -1 */
	int lockfd; /* /proc/PID/mem, flocked while we patch; or -1 */
};

static int
fail(struct run *r, const char *fmt, const char *what)
{
	snprintf(r->err, r->errlen, fmt, what);
	return -1;
}

static int
block_read(struct run *r)
{
	if (ht_inl_read(r->pid, r->baddr, r->b, sizeof(*r->b)) != 0)
		return fail(r, "cannot read the agent's inline block: %s",
		    strerror(errno));
	if (r->b->magic != HT_INLINE_MAGIC ||
	    r->b->version != HT_INLINE_VERSION ||
	    r->b->nnames > HT_INLINE_NAMES)
		return fail(r, "%s",
		    "the agent's inline block is of another version; attach "
		    "with the heaptool that loaded the agent");
	return 0;
}

/* Write the field of our copy at [off, off + len) to the agent's. */
static int
block_put(struct run *r, size_t off, size_t len)
{
	if (ht_inl_write(r->pid, r->baddr + off, (char *)r->b + off, len) != 0)
		return fail(r, "cannot write the agent's inline block: %s",
		    strerror(errno));
	return 0;
}
#define PUT(r, field)                                                          \
	block_put((r), offsetof(struct ht_inline_shared, field),               \
	    sizeof((r)->b->field))

/* Ring heaptool run's doorbell (agent/inline.h): 'H', answered 'K'. */
static int
ring(struct run *r)
{
	struct pollfd p = { r->bell, POLLIN, 0 };
	char c = 'H';
	ssize_t n;
	int k;

	do
		n = write(r->bell, &c, 1);
	while (n == -1 && errno == EINTR);
	if (n != 1)
		return fail(r, "the agent's doorbell: %s", strerror(errno));
	while ((k = poll(&p, 1, BELL_MS)) == -1 && errno == EINTR)
		;
	if (k <= 0)
		return fail(r, "%s",
		    "the agent did not answer its doorbell within 30 s");
	do
		n = read(r->bell, &c, 1);
	while (n == -1 && errno == EINTR);
	if (n != 1)
		return fail(r, "%s", "the agent closed its doorbell");
	if (c != 'K')
		return fail(r, "%s", "could not arm the inline hooks");
	return 0;
}

static int
agent_sync(struct run *r, struct ht_ctl *c)
{
	if (r->bell >= 0) {
		if (ring(r) != 0)
			return -1;
	} else if (ht_ctl_command(c, HT_MSG_HOOK, 0, 0) != 0)
		return fail(r, "%s", ht_ctl_error(c));
	return block_read(r);
}

static void
refuse(struct inl_fn *f, const char *why)
{
	if (f->why[0] == '\0')
		snprintf(f->why, sizeof(f->why), "%s", why);
}

static int
hookable(const struct inl_fn *f)
{
	return f->why[0] == '\0' && !f->exclude;
}

static struct inl_fn *
fn_by_addr(struct run *r, uint64_t a)
{
	size_t i;

	for (i = 0; i < r->nfns; i++)
		if (r->fns[i].addr == a)
			return &r->fns[i];
	return NULL;
}

static int
read_names(struct run *r)
{
	size_t i;

	for (i = 0; i < r->b->nnames; i++) {
		if (r->b->hooks[i] == 0 || r->b->names[i] == 0)
			continue;
		if ((r->names[i] = malloc(NAME_MAX_)) == NULL)
			return fail(r, "%s", "out of memory");
		if (ht_inl_read_str(r->pid, r->b->names[i], r->names[i],
			NAME_MAX_) != 0) {
			free(r->names[i]);
			r->names[i] = NULL;
		}
	}
	return 0;
}

/* The record of f's kind for f, or -1. */
static int
rec_of(struct run *r, uint64_t fn, uint32_t kind)
{
	size_t i;

	for (i = 0; i < HT_INLINE_RECORDS; i++)
		if (r->b->rec[i].state != HT_INLINE_FREE &&
		    r->b->rec[i].fn == fn && r->b->rec[i].kind == kind)
			return (int)i;
	return -1;
}

static int
rec_free(struct run *r)
{
	size_t i;

	for (i = 0; i < HT_INLINE_RECORDS; i++)
		if (r->b->rec[i].state == HT_INLINE_FREE)
			return (int)i;
	return -1;
}

/* Step 2 for one function: read and plan it, or see it patched. */
static void
plan_one(struct run *r, struct inl_fn *f)
{
	struct ht_inline_rec *rec;
	size_t n = f->size < INL_CODE_MAX ? f->size : INL_CODE_MAX;
	uint8_t *code;
	int k;

	if (f->why[0] != '\0')
		return;
	if (f->size == 0) {
		refuse(f, "its size is unknown (no symbol size)");
		return;
	}
	if (f->size > INL_CODE_MAX) {
		refuse(f, "longer than 64 KiB: its body is not scanned");
		return;
	}
	if ((code = malloc(n)) == NULL ||
	    ht_inl_read(r->pid, f->addr, code, n) != 0) {
		free(code);
		refuse(f, "its code cannot be read");
		return;
	}
	if ((k = rec_of(r, f->addr, HT_INLINE_HOOK)) >= 0 &&
	    (rec = &r->b->rec[k])->state == HT_INLINE_PATCHED &&
	    rec->at >= f->addr && rec->at + rec->len <= f->addr + n &&
	    memcmp(code + (rec->at - f->addr), rec->patch, rec->len) == 0) {
		f->done = 1; /* an earlier attach's, still in */
		f->rec = k;
		f->at = rec->at;
		f->len = rec->len;
		memcpy(f->orig, rec->orig, rec->len);
		free(code);
		return;
	}
	if (ht_inl_plan(r->pid, f, code, n) == 0)
		(void)ht_inl_closure(r->pid, f);
	free(code);
}

/* Is f a free that will not be hooked (a wrapper counted where it calls
 * is not one)? */
static int
free_unhooked(const struct inl_fn *f)
{
	return f->index >= 0 && f->index < HT_NALLOCFNS &&
	    ht_allocfns[f->index].kind == HT_KIND_FREE && !f->done &&
	    f->why[0] != '\0' && !f->exclude;
}

/*
 * A module whose free cannot be hooked keeps its allocations unhooked too:
 * with the blocks counted and their frees unseen, in use and the peak
 * would grow without end while the report says "exact".  What GOT slots
 * see of them is counted as before.
 */
static void
unpaired(struct run *r)
{
	char why[200];
	size_t i, j;

	for (i = 0; i < r->nfns; i++) {
		const struct inl_fn *g = &r->fns[i];

		if (!free_unhooked(g))
			continue;
		snprintf(why, sizeof(why),
		    "%s in its module cannot be hooked inline, so its frees "
		    "would go unseen",
		    g->name);
		for (j = 0; j < r->nfns; j++) {
			struct inl_fn *f = &r->fns[j];

			if (f->mod != g->mod || !hookable(f) || f->done ||
			    f->index < 0 || f->index >= HT_NALLOCFNS ||
			    !ht_allocfn_allocates((unsigned)f->index))
				continue;
			refuse(f, why);
			f->cov = HT_COV_REFUSED;
		}
	}
}

/* Step 2's exclusions and the one-function-per-name rule. */
static void
choose(struct run *r)
{
	struct inl_fn *f, *g;
	size_t i, j;
	char why[200];
	int k;

	for (i = 0; i < r->nfns; i++) {
		f = &r->fns[i];
		if (f->why[0] != '\0' || f->done)
			continue;
		for (j = 0; j < f->ncalls; j++) {
			g = fn_by_addr(r, f->calls[j]);
			if (g == NULL || g == f || g->mod != f->mod ||
			    g->why[0] != '\0')
				continue;
			f->exclude = 1;
			f->cov = HT_COV_WRAPPER;
			snprintf(why, sizeof(why),
			    "calls %s directly, which counts it", g->name);
			snprintf(f->why, sizeof(f->why), "%s", why);
			break;
		}
	}
	for (i = 0; i < r->nfns; i++) {
		f = &r->fns[i];
		if (!hookable(f) && !f->done)
			continue;
		for (j = 0; j < i; j++)
			if ((hookable(&r->fns[j]) || r->fns[j].done) &&
			    r->fns[j].index == f->index)
				break;
		for (k = 0; k < HT_INLINE_RECORDS && j == i; k++) {
			const struct ht_inline_rec *rec = &r->b->rec[k];

			if (rec->state != HT_INLINE_FREE &&
			    rec->kind == HT_INLINE_HOOK &&
			    (int)rec->index == f->index && rec->fn != f->addr)
				j = i + 1;
		}
		if (j != i && !f->done)
			refuse(f,
			    "another function of this name is hooked "
			    "inline already (one per name)");
	}
	unpaired(r);
}

static int
reaches(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;

	return d + HT_INLINE_AREA_SIZE < (1ull << 31);
}

/* An area of the block within reach of all of m, with room for one more
 * function; -1 if none. */
static int
area_for(struct run *r, const struct inl_mod *m)
{
	size_t i;

	for (i = 0; i < HT_INLINE_AREAS; i++) {
		const struct ht_inline_area *a = &r->b->areas[i];

		if (a->lo != 0 && reaches(a->lo, m->lo) &&
		    reaches(a->lo, m->hi) &&
		    a->used + INL_SLOT <= HT_INLINE_AREA_SIZE)
			return (int)i;
	}
	return -1;
}

/* Does the code at rec's trampoline already say what it should for f? */
static int
tramp_same(struct run *r, struct inl_fn *f, const struct ht_inline_rec *rec)
{
	uint8_t want[INL_SLOT], have[INL_SLOT];
	size_t n;

	if (rec->at != f->at || rec->len != f->len ||
	    memcmp(rec->orig, f->orig, f->len) != 0 ||
	    rec->stub + INL_STUB != rec->tramp)
		return 0;
	ht_inl_stub(r->b->hooks[f->index], want);
	if ((n = ht_inl_tramp(f, rec->tramp, f->orig, want + INL_STUB)) == 0)
		return 0;
	if (ht_inl_read(r->pid, rec->stub, have, INL_STUB + n) != 0)
		return 0;
	return memcmp(want, have, INL_STUB + n) == 0;
}

/* Step 3 for f: its record (reused or new), in ARMING.  0 or -1 with
 * f->why (and r->err for a failure to write the block). */
static int
arm_one(struct run *r, struct ht_ctl *c, struct inl_fn *f)
{
	uint8_t code[INL_SLOT];
	struct ht_inline_rec *rec;
	struct ht_inline_area *a;
	uint64_t slot;
	size_t n;
	int k, ai;

	if ((k = rec_of(r, f->addr, HT_INLINE_HOOK)) >= 0 &&
	    tramp_same(r, f, &r->b->rec[k])) {
		f->rec = k;
		return 0; /* armed already, by an earlier attach */
	}
	if ((ai = area_for(r, f->mod)) < 0) {
		r->b->near = f->mod->lo;
		if (PUT(r, near) != 0 || agent_sync(r, c) != 0)
			return -2;
		if ((ai = area_for(r, f->mod)) < 0) {
			snprintf(f->why, sizeof(f->why),
			    "the agent could not map memory within 2 GiB of "
			    "the module for its trampoline (%s)",
			    strerror((int)r->b->near_errno));
			return -1;
		}
	}
	if ((k = rec_free(r)) < 0) {
		refuse(f, "the agent's records are all taken");
		return -1;
	}
	a = &r->b->areas[ai];
	slot = a->lo + a->used;
	ht_inl_stub(r->b->hooks[f->index], code);
	if ((n = ht_inl_tramp(f, slot + INL_STUB, f->orig, code + INL_STUB)) ==
	    0)
		return -1;
	rec = &r->b->rec[k];
	memset(rec, 0, sizeof(*rec));
	if (ht_inl_patch(f, slot, rec->patch) != 0) {
		refuse(f, "its trampoline is out of a jump's reach");
		return -1;
	}
	a->used += INL_SLOT;
	if (PUT(r, areas) != 0)
		return -2;
	if (ht_inl_write(r->pid, slot, code, INL_STUB + n) != 0) {
		snprintf(f->why, sizeof(f->why),
		    "its trampoline cannot be written: %s", strerror(errno));
		return -1;
	}
	{
		uint8_t back[INL_SLOT], want[INL_SLOT];

		ht_inl_stub(r->b->hooks[f->index], want);
		(void)ht_inl_tramp(f, slot + INL_STUB, f->orig,
		    want + INL_STUB);
		if (ht_inl_read(r->pid, slot, back, INL_STUB + n) != 0 ||
		    memcmp(back, want, INL_STUB + n) != 0) {
			refuse(f,
			    "its trampoline did not read back as "
			    "written");
			return -1;
		}
	}
	rec->fn = f->addr;
	rec->at = f->at;
	rec->stub = slot;
	rec->tramp = slot + INL_STUB;
	rec->index = (uint32_t)f->index;
	rec->kind = HT_INLINE_HOOK;
	rec->len = f->len;
	memcpy(rec->orig, f->orig, f->len);
	rec->state = HT_INLINE_ARMING;
	f->rec = k;
	return PUT(r, rec[k]) != 0 ? -2 : 0;
}

static int
exclude_one(struct run *r, struct inl_fn *f)
{
	int k;

	if (!f->exported)
		return 0; /* no GOT slot binds to it */
	if ((k = rec_of(r, f->addr, HT_INLINE_EXCLUDE)) >= 0)
		return 0;
	if ((k = rec_free(r)) < 0)
		return 0;
	memset(&r->b->rec[k], 0, sizeof(r->b->rec[k]));
	r->b->rec[k].fn = f->addr;
	r->b->rec[k].kind = HT_INLINE_EXCLUDE;
	r->b->rec[k].state = HT_INLINE_ARMING;
	return PUT(r, rec[k]);
}

/* Is any thread of w where writing [at, at + len) would hurt it: its
 * instruction pointer inside (a jump's first byte excepted), or a word
 * near its stack's top pointing inside (a signal frame's saved rip)? */
static int
in_the_way(pid_t pid, const struct inl_world *w, uint64_t at, uint32_t len)
{
	uint64_t words[STACK_WORDS];
	size_t i, j;

	for (i = 0; i < w->n; i++) {
		uint64_t ip = w->regs[i].rip, sp = w->regs[i].rsp;
		size_t n = STACK_WORDS;

		if (ip > at && ip < at + len)
			return 1;
		/* Near the stack's end: read less, down to none. */
		while (n > 0 && ht_inl_read(pid, sp, words, n * 8) != 0)
			n /= 2;
		for (j = 0; j < n; j++)
			if (words[j] > at && words[j] < at + len)
				return 1;
	}
	return 0;
}

/* Step 5 for the functions of module m in fns marked to patch (rec >= 0,
 * state ARMED, not done): all of them, or none.  Returns the number
 * patched, or -1 with the reason in each f->why (the set put back). */
static int
patch_set(struct run *r, const struct inl_mod *m)
{
	struct inl_world w;
	uint8_t now[HT_INLINE_BYTES];
	char why[200];
	struct inl_fn *set[INL_MAX_FNS];
	size_t n = 0, i, done = 0, t;
	int busy = 0;

	for (i = 0; i < r->nfns; i++)
		if (r->fns[i].mod == m && hookable(&r->fns[i]) &&
		    !r->fns[i].done && r->fns[i].rec >= 0)
			set[n++] = &r->fns[i];
	if (n == 0)
		return 0;
	why[0] = '\0';
	for (t = 0; t < TRIES; t++) {
		if (ht_inl_stop_all(&w, r->pid, why, sizeof(why)) != 0)
			break;
		for (busy = 0, i = 0; i < n && !busy; i++)
			busy = in_the_way(r->pid, &w, set[i]->at, set[i]->len);
		if (!busy)
			break;
		ht_inl_resume_all(&w);
		usleep(2000);
	}
	if (t == TRIES || why[0] != '\0') {
		if (why[0] == '\0')
			snprintf(why, sizeof(why),
			    "a thread kept running its first bytes");
		goto out_refuse;
	}
	/* Every thread is stopped: nothing changes under us from here. */
	for (i = 0; i < n; i++) {
		struct inl_fn *f = set[i];
		struct ht_inline_rec *rec = &r->b->rec[f->rec];

		if (ht_inl_read(r->pid, f->at, now, f->len) != 0 ||
		    memcmp(now, f->orig, f->len) != 0) {
			snprintf(why, sizeof(why),
			    "the code of %s changed since it was read",
			    f->name);
			break;
		}
		if (ht_inl_write(r->pid, f->at, rec->patch, f->len) != 0 ||
		    ht_inl_read(r->pid, f->at, now, f->len) != 0 ||
		    memcmp(now, rec->patch, f->len) != 0) {
			snprintf(why, sizeof(why), "writing %s failed: %s",
			    f->name, strerror(errno));
			done = i + 1; /* may be half written: put it back */
			break;
		}
		done = i + 1;
	}
	if (i < n) {
		/* All of the set or none: put back what was written. */
		for (i = 0; i < done; i++)
			(void)ht_inl_write(r->pid, set[i]->at, set[i]->orig,
			    set[i]->len);
		ht_inl_resume_all(&w);
		goto out_refuse;
	}
	for (i = 0; i < n; i++) {
		r->b->rec[set[i]->rec].state = HT_INLINE_PATCHED;
		if (PUT(r, rec[set[i]->rec]) != 0)
			break;
	}
	ht_inl_resume_all(&w);
	return (int)n;
out_refuse:
	for (i = 0; i < n; i++) {
		snprintf(set[i]->why, sizeof(set[i]->why),
		    "its module's set was not patched: %s", why);
		set[i]->cov = HT_COV_REFUSED;
		set[i]->rec = -1;
	}
	return -1;
}

static void
note(struct ht_inline_result *res, const struct inl_fn *f)
{
	size_t k = strlen(res->notes);

	snprintf(res->notes + k, sizeof(res->notes) - k, "%s (%s): %s\n",
	    f->name, f->mod->path, f->why);
}

/* The refusals as records, for the agent's account of coverage. */
static void
refusals(struct run *r)
{
	struct ht_inline_refusal *x;
	size_t i;

	r->b->nrefusals = 0;
	for (i = 0; i < r->nfns && r->b->nrefusals < HT_INLINE_REFUSALS; i++) {
		const struct inl_fn *f = &r->fns[i];

		if (f->done || f->why[0] == '\0' || f->index < 0)
			continue;
		x = &r->b->refusals[r->b->nrefusals++];
		x->fn = f->addr;
		x->index = (uint32_t)f->index;
		x->reason = f->cov != 0 ? f->cov :
		    f->exclude		? HT_COV_WRAPPER :
					  HT_COV_REFUSED;
	}
	/* Each alias as its function: patched (the agent checks the
	 * record at that address) or refused for the same reason. */
	for (i = 0; i < r->nfns; i++) {
		const struct inl_fn *f = &r->fns[i];
		size_t k;

		for (k = 0;
		     k < f->naliases && r->b->nrefusals < HT_INLINE_REFUSALS;
		     k++) {
			x = &r->b->refusals[r->b->nrefusals++];
			x->fn = f->addr;
			x->index = (uint32_t)f->aliases[k];
			x->reason = f->done || f->why[0] == '\0' ?
			    HT_COV_PATCHED :
			    f->cov != 0 ? f->cov :
			    f->exclude	? HT_COV_WRAPPER :
					  HT_COV_REFUSED;
		}
	}
}

static void
run_free(struct run *r)
{
	size_t i;

	for (i = 0; i < HT_INLINE_NAMES; i++)
		free(r->names[i]);
	free(r->fns);
	free(r->mods);
	free(r->b);
	if (r->lockfd >= 0)
		close(r->lockfd); /* and with it the lock */
}

/*
 * Two heaptools patching one process at once would each plan from bytes
 * the other is changing.  They serialize on an exclusive flock of the
 * process's /proc/PID/mem: every open of it is the same inode while one
 * is open, the kernel drops the lock with its holder (a heaptool killed
 * midway leaves none behind), and it needs no file of our own (the
 * block's busy field, which a CLI cannot take atomically through
 * /proc/PID/mem, stays unused).
 */
static int
lock_target(struct run *r)
{
	char path[64];
	int i;

	snprintf(path, sizeof(path), "/proc/%ld/mem", (long)r->pid);
	/* A process whose leader exited has no /proc/PID/mem to open:
	 * then no lock (nor, for attach, any use in one). */
	if ((r->lockfd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return errno == ESRCH || errno == ENOENT ?
		    0 :
		    fail(r, "cannot open its memory: %s", strerror(errno));
	for (i = 0; i < LOCK_TRIES; i++) {
		if (flock(r->lockfd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			break;
		usleep(10000);
	}
	return fail(r, "%s",
	    "another heaptool has been patching it for 30 s; try again when "
	    "it is done");
}

static int
run_init(struct run *r, pid_t pid, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->bell = -1;
	r->lockfd = -1;
	r->pid = pid;
	r->err = err;
	r->errlen = errlen;
	err[0] = '\0';
	if ((r->b = calloc(1, sizeof(*r->b))) == NULL)
		return fail(r, "%s", "out of memory");
	if ((r->baddr = ht_inl_find_block(pid)) == 0)
		return 1;
	if (lock_target(r) != 0)
		return -1;
	return 0;
}

int
ht_inline_apply(pid_t pid, struct ht_ctl *c, int bell,
    struct ht_inline_result *res, char *err, size_t errlen)
{
	struct run r;
	size_t i;
	int rc = -1, n;

	memset(res, 0, sizeof(*res));
	if ((n = run_init(&r, pid, err, errlen)) != 0) {
		if (n == 1)
			fail(&r, "%s",
			    "the agent in the process has no inline block; "
			    "detach and attach with this heaptool's agent");
		goto out;
	}
	r.bell = bell;
	if (agent_sync(&r, c) != 0 || read_names(&r) != 0)
		goto out;
	r.b->wanted = 1;
	if (PUT(&r, wanted) != 0)
		goto out;
	if ((r.fns = calloc(INL_MAX_FNS, sizeof(*r.fns))) == NULL ||
	    (r.mods = calloc(MAX_MODS, sizeof(*r.mods))) == NULL) {
		fail(&r, "%s", "out of memory");
		goto out;
	}
	if ((n = ht_inl_candidates(pid, r.names, r.b->nnames, r.fns,
		 INL_MAX_FNS, r.mods, MAX_MODS, &r.nmods, err, errlen)) < 0)
		goto out;
	r.nfns = (size_t)n;
	for (i = 0; i < r.nfns; i++)
		plan_one(&r, &r.fns[i]);
	choose(&r);
	for (i = 0; i < r.nfns; i++) {
		struct inl_fn *f = &r.fns[i];

		if (f->exclude)
			n = exclude_one(&r, f);
		else if (hookable(f) && !f->done)
			n = arm_one(&r, c, f);
		else
			continue;
		if (n == -2)
			goto out;
	}
	if (agent_sync(&r, c) != 0)
		goto out;
	for (i = 0; i < r.nfns; i++) {
		struct inl_fn *f = &r.fns[i];

		if (!hookable(f) || f->done || f->rec < 0)
			continue;
		if (r.b->rec[f->rec].state != HT_INLINE_ARMED) {
			refuse(f, "the agent could not arm its hook");
			if (r.b->rec[f->rec].state == HT_INLINE_ARMING) {
				r.b->rec[f->rec].state = HT_INLINE_FREE;
				(void)PUT(&r, rec[f->rec]);
			}
			f->rec = -1;
		}
	}
	for (i = 0; i < r.nmods; i++)
		(void)patch_set(&r, &r.mods[i]);
	for (i = 0; i < r.nfns; i++) {
		const struct inl_fn *f = &r.fns[i];

		if (f->done || (hookable(f) && f->rec >= 0))
			res->hooked++;
		else if (f->exclude)
			res->excluded++;
		else
			res->refused++;
		if (!f->done && f->why[0] != '\0')
			note(res, f);
	}
	r.b->notes_len = (uint32_t)strlen(res->notes);
	memcpy(r.b->notes, res->notes, r.b->notes_len);
	refusals(&r);
	/* The last doorbell: the agent's account of coverage takes what
	 * was patched and what was refused. */
	if (PUT(&r, notes_len) == 0 && PUT(&r, notes) == 0 &&
	    PUT(&r, refusals) == 0 && PUT(&r, nrefusals) == 0 &&
	    agent_sync(&r, c) == 0)
		rc = 0;
out:
	run_free(&r);
	return rc;
}

int
ht_inline_restore(pid_t pid, char *err, size_t errlen)
{
	struct inl_world w;
	uint8_t now[HT_INLINE_BYTES];
	struct run r;
	size_t i;
	int n = 0, bad = 0;

	if ((n = run_init(&r, pid, err, errlen)) != 0) {
		run_free(&r);
		return n == 1 ? 0 : -1;
	}
	if (block_read(&r) != 0) {
		run_free(&r);
		/* Never synced: nothing was ever patched. */
		return 0;
	}
	/* Asked for no more: the agent's account hands the functions back
	 * to the GOT backend's at its next doorbell or detach. */
	r.b->wanted = 0;
	if (PUT(&r, wanted) != 0) {
		run_free(&r);
		return -1;
	}
	for (i = 0; i < HT_INLINE_RECORDS; i++)
		if (r.b->rec[i].state == HT_INLINE_PATCHED)
			break;
	if (i == HT_INLINE_RECORDS) {
		run_free(&r);
		return 0;
	}
	if (ht_inl_stop_all(&w, pid, err, errlen) != 0) {
		run_free(&r);
		return -1;
	}
	n = 0;
	for (i = 0; i < HT_INLINE_RECORDS; i++) {
		struct ht_inline_rec *rec = &r.b->rec[i];

		if (rec->state != HT_INLINE_PATCHED ||
		    rec->len > HT_INLINE_BYTES)
			continue;
		if (ht_inl_read(pid, rec->at, now, rec->len) != 0) {
			bad++;
			continue;
		}
		if (memcmp(now, rec->patch, rec->len) == 0) {
			/* Ours: put the original back, and check. */
			if (ht_inl_write(pid, rec->at, rec->orig, rec->len) !=
				0 ||
			    ht_inl_read(pid, rec->at, now, rec->len) != 0 ||
			    memcmp(now, rec->orig, rec->len) != 0) {
				bad++;
				continue;
			}
			n++;
		} else if (memcmp(now, rec->orig, rec->len) != 0) {
			bad++; /* someone else's bytes: left as they are */
			continue;
		}
		rec->state = HT_INLINE_ARMED;
		(void)PUT(&r, rec[i]);
	}
	ht_inl_resume_all(&w);
	if (bad)
		snprintf(err, errlen,
		    "%d patched function%s could not be put back (their bytes "
		    "changed, or cannot be written)",
		    bad, bad == 1 ? "" : "s");
	r.b->notes_len = 0;
	(void)PUT(&r, notes_len);
	run_free(&r);
	return bad ? -1 : n;
}

int
ht_inline_describe(pid_t pid, char *hooked, size_t hlen, char *notes,
    size_t nlen)
{
	static char mods[HT_INLINE_RECORDS][PATH_MAX];
	char err[256], name[NAME_MAX_];
	int idx[HT_INLINE_RECORDS];
	struct run r;
	size_t i, j, k, m = 0;
	int n = 0, first;

	hooked[0] = notes[0] = '\0';
	if (run_init(&r, pid, err, sizeof(err)) != 0 || block_read(&r) != 0) {
		run_free(&r);
		return -1;
	}
	for (i = 0; i < HT_INLINE_RECORDS; i++) {
		const struct ht_inline_rec *rec = &r.b->rec[i];

		idx[i] = -1;
		if (rec->state != HT_INLINE_PATCHED ||
		    rec->kind != HT_INLINE_HOOK || rec->index >= r.b->nnames)
			continue;
		ht_inl_module_of(pid, rec->fn, mods[i], sizeof(mods[i]));
		idx[i] = (int)i;
		n++;
	}
	/* "malloc, free in /path; je_malloc in /other" */
	for (i = 0; i < HT_INLINE_RECORDS; i++) {
		if (idx[i] < 0)
			continue;
		k = strlen(hooked);
		snprintf(hooked + k, hlen - k, "%s", m++ ? "; " : "");
		for (j = i, first = 1; j < HT_INLINE_RECORDS; j++) {
			if (idx[j] < 0 || strcmp(mods[j], mods[i]) != 0)
				continue;
			if (ht_inl_read_str(pid, r.b->names[r.b->rec[j].index],
				name, sizeof(name)) != 0)
				snprintf(name, sizeof(name), "?");
			k = strlen(hooked);
			snprintf(hooked + k, hlen - k, "%s%s",
			    first ? "" : ", ", name);
			first = 0;
			if (j != i)
				idx[j] = -1;
		}
		k = strlen(hooked);
		snprintf(hooked + k, hlen - k, " in %s", mods[i]);
	}
	k = r.b->notes_len < HT_INLINE_NOTES ? r.b->notes_len : 0;
	if (k >= nlen)
		k = nlen - 1;
	memcpy(notes, r.b->notes, k);
	notes[k] = '\0';
	run_free(&r);
	return n;
}
