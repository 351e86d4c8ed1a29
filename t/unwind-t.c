/*
 * The unwinder against oracles that need no guessing: each function of a
 * call chain records __builtin_return_address(0) before calling the next, so
 * the walk from the bottom must reproduce those addresses exactly, in order.
 * Built -O2 -fomit-frame-pointer, so only the CFI can get this right; libc
 * (qsort, start_thread, raise) is Debian's, also without frame pointers.
 */
#include <sys/mman.h>
#include <sys/types.h>

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include "basic.h"
#include "mem.h"
#include "modules.h"
#include "unwind.h"

#define NOINLINE    __attribute__((noinline, noclone))
#define BARRIER()   __asm__ volatile("" ::: "memory")
#define CHAIN	    20
#define MAXF	    64
#define BENCH_WALKS 100000
#define BENCH_BATCH 1000

struct walk {
	uintptr_t pcs[MAXF];
	int n;
	struct ht_unwind_stats before, after;
};

static void *volatile ras[CHAIN];
static volatile int sink;
static volatile int vla_len = 40;
static void (*at_bottom)(const struct ht_regs *);

static struct walk w_first, w_again, w_max3, w_flushed, w_published;
static double bench_ns, bench_best_ns, cold_ns;

static void
walk(struct walk *w, const struct ht_regs *r, int max)
{
	ht_unwind_get_stats(&w->before);
	w->n = ht_unwind(r, w->pcs, max);
	ht_unwind_get_stats(&w->after);
}

static uint64_t
delta(const struct walk *w, size_t off)
{
	return *(const uint64_t *)((const char *)&w->after + off) -
	    *(const uint64_t *)((const char *)&w->before + off);
}
#define D(w, field) delta((w), offsetof(struct ht_unwind_stats, field))

static const struct ht_module *
module_of(uintptr_t pc)
{
	return ht_modules_find(pc);
}

static int
in_libc(uintptr_t pc)
{
	const struct ht_module *m = module_of(pc);

	return m != NULL && (m->flags & HT_MOD_LIBC);
}

/* Index of want in w->pcs at or after from, or -1. */
static int
find_pc(const struct walk *w, int from, uintptr_t want)
{
	int i;

	for (i = from; i < w->n; i++)
		if (w->pcs[i] == want)
			return i;
	return -1;
}

static void
dump(const char *what, const struct walk *w)
{
	int i;

	diag("%s: %d frames", what, w->n);
	for (i = 0; i < w->n; i++) {
		const struct ht_module *m = module_of(w->pcs[i]);

		diag("  #%d %#lx %s+%#lx", i, (unsigned long)w->pcs[i],
		    m != NULL ? m->path : "?",
		    m != NULL ? (unsigned long)(w->pcs[i] - m->bias) : 0);
	}
}

/*
 * The chain.  Each link records its return address, calls the next and then
 * touches a global, so the call cannot become a tail call.  Some links
 * force other frame shapes: a VLA makes GCC address the frame through rbp
 * (CFA = rbp + 16), an over-aligned local makes it realign the stack.
 */
static NOINLINE void
bottom(void)
{
	struct ht_regs r;

	ras[CHAIN - 1] = __builtin_return_address(0);
	HT_REGS_CAPTURE(&r);
	at_bottom(&r);
	BARRIER();
	sink++;
}

#define LINK(i, next)                                                          \
	static NOINLINE void chain##i(void)                                    \
	{                                                                      \
		ras[i] = __builtin_return_address(0);                          \
		next();                                                        \
		BARRIER();                                                     \
		sink += i;                                                     \
	}

#define LINK_VLA(i, next)                                                      \
	static NOINLINE void chain##i(void)                                    \
	{                                                                      \
		volatile char buf[vla_len];                                    \
                                                                               \
		ras[i] = __builtin_return_address(0);                          \
		buf[0] = (char)i;                                              \
		next();                                                        \
		BARRIER();                                                     \
		sink += buf[0];                                                \
	}

#define LINK_ALIGNED(i, next)                                                  \
	static NOINLINE void chain##i(void)                                    \
	{                                                                      \
		volatile char buf[vla_len];                                    \
		volatile char big[64] __attribute__((aligned(64)));            \
                                                                               \
		ras[i] = __builtin_return_address(0);                          \
		buf[0] = (char)i;                                              \
		big[0] = (char)i;                                              \
		next();                                                        \
		BARRIER();                                                     \
		sink += buf[0] + big[0];                                       \
	}

LINK(18, bottom)
LINK(17, chain18)
LINK(16, chain17)
LINK_VLA(15, chain16)
LINK(14, chain15)
LINK(13, chain14)
LINK(12, chain13)
LINK(11, chain12)
LINK_ALIGNED(10, chain11)
LINK(9, chain10)
LINK(8, chain9)
LINK(7, chain8)
LINK(6, chain7)
LINK_VLA(5, chain6)
LINK(4, chain5)
LINK(3, chain4)
LINK(2, chain3)
LINK(1, chain2)
LINK(0, chain1)

static void
main_bottom(const struct ht_regs *r)
{
	struct timespec t0, t1;
	uintptr_t pcs[MAXF];
	double ns;
	int b, i;

	walk(&w_first, r, MAXF);
	walk(&w_again, r, MAXF);
	walk(&w_max3, r, 3);
	ht_unwind_flush();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	walk(&w_flushed, r, MAXF);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cold_ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);

	/* Batches, so that a noisy machine still shows the best case. */
	bench_ns = 0;
	bench_best_ns = 1e18;
	for (b = 0; b < BENCH_WALKS / BENCH_BATCH; b++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < BENCH_BATCH; i++) {
			ht_unwind(r, pcs, MAXF);
			BARRIER();
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
		bench_ns += ns / BENCH_WALKS;
		if (ns / BENCH_BATCH < bench_best_ns)
			bench_best_ns = ns / BENCH_BATCH;
	}
}

static void
published_bottom(const struct ht_regs *r)
{
	walk(&w_published, r, MAXF);
}

/* pcs[1..CHAIN] against the recorded return addresses. */
static int
chain_matches(const struct walk *w)
{
	int i;

	if (w->n < CHAIN + 1)
		return 0;
	for (i = 0; i < CHAIN; i++)
		if (w->pcs[1 + i] != (uintptr_t)ras[CHAIN - 1 - i]) {
			diag("frame %d: got %#lx, want %#lx", 1 + i,
			    (unsigned long)w->pcs[1 + i],
			    (unsigned long)ras[CHAIN - 1 - i]);
			return 0;
		}
	return 1;
}

static int
same_pcs(const struct walk *a, const struct walk *b, int n)
{
	return n <= a->n && n <= b->n &&
	    memcmp(a->pcs, b->pcs, n * sizeof(a->pcs[0])) == 0;
}

static NOINLINE void
run_chain(void)
{
	chain0();
	BARRIER();
	sink++;
}

static void
test_chain(void)
{
	struct ht_modset set;
	int i, all_text = 1;

	at_bottom = main_bottom;
	run_chain();

	ok(chain_matches(&w_first),
	    "main thread: pcs[1..%d] are the chain's "
	    "return addresses, in order",
	    CHAIN);
	ok(w_first.pcs[0] > (uintptr_t)bottom &&
		module_of(w_first.pcs[0]) == module_of((uintptr_t)bottom),
	    "pcs[0] lies in the capturing function's module, past its entry");
	ok(D(&w_first, stops_outermost) == 1 && w_first.n < MAXF,
	    "main thread walk ends at the outermost frame (%d frames)",
	    w_first.n);
	for (i = 0; i < w_first.n; i++) {
		const struct ht_module *m = module_of(w_first.pcs[i]);

		if (m == NULL || w_first.pcs[i] - 1 < m->text_start ||
		    w_first.pcs[i] - 1 >= m->text_end)
			all_text = 0;
	}
	ok(all_text, "every pc lies in a module's text");
	for (i = CHAIN + 1; i < w_first.n && !in_libc(w_first.pcs[i]); i++)
		continue;
	ok(i < w_first.n - 1 &&
		module_of(w_first.pcs[w_first.n - 1]) ==
		    module_of((uintptr_t)bottom),
	    "the walk continues through main and libc's start code to _start");
	is_uint(0, D(&w_first, stops_no_cfi), "no frame without CFI");
	if (!chain_matches(&w_first) || D(&w_first, stops_outermost) != 1)
		dump("main thread", &w_first);

	ok(w_again.n == w_first.n && same_pcs(&w_again, &w_first, w_first.n),
	    "a second walk gives the same pcs");
	is_uint(0, D(&w_again, cache_misses), "second walk: no cache miss");
	ok(D(&w_again, cache_hits) >= (uint64_t)w_again.n,
	    "second walk: a cache hit per frame (%llu hits, %d frames)",
	    (unsigned long long)D(&w_again, cache_hits), w_again.n);

	is_int(3, w_max3.n, "max 3 stores exactly 3");
	ok(same_pcs(&w_max3, &w_first, 3), "... the first 3 of the full walk");
	is_uint(1, D(&w_max3, stops_max), "... and counts a stop at max");

	ok(D(&w_flushed, cache_misses) > 0 &&
		same_pcs(&w_flushed, &w_first, w_first.n),
	    "after ht_unwind_flush: misses again, same pcs");

	ok(ht_modules_scan(&set) == 0, "rescan");
	ht_modules_publish(&set);
	at_bottom = published_bottom;
	run_chain();
	/* run_chain is called from another site here: compare up to it. */
	ok(D(&w_published, cache_misses) > 0 && w_published.n == w_first.n &&
		chain_matches(&w_published) &&
		same_pcs(&w_published, &w_first, CHAIN + 1),
	    "after publishing a fresh module set: misses again, same pcs");

	diag("warm walk of %d frames: %.0f ns (%.1f ns/frame), mean of %d; "
	     "best batch of %d: %.0f ns",
	    w_first.n, bench_ns, bench_ns / w_first.n, BENCH_WALKS, BENCH_BATCH,
	    bench_best_ns);
	diag("the same walk with an empty cache: %.0f ns", cold_ns);
}

/* ---- through libc without frame pointers: qsort ---- */

static struct walk w_qsort;
static int qsort_walked;
static void *volatile qsort_caller_ra;

static NOINLINE void
capture_walk(struct walk *w)
{
	struct ht_regs r;

	HT_REGS_CAPTURE(&r);
	walk(w, &r, MAXF);
	BARRIER();
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (!qsort_walked) {
		qsort_walked = 1;
		capture_walk(&w_qsort);
	}
	return (x > y) - (x < y);
}

static NOINLINE void
sort_some(void)
{
	int v[64], i;

	qsort_caller_ra = __builtin_return_address(0);
	for (i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof(v[0]), cmp_int);
	sink += v[0];
}

static void
test_qsort(void)
{
	int i, j, libc_frames = 0;

	sort_some();
	BARRIER();
	sink++;
	ok(qsort_walked && w_qsort.n > 3, "walk from a qsort comparator");
	j = find_pc(&w_qsort, 1, (uintptr_t)qsort_caller_ra);
	for (i = 1; j > 0 && i < j; i++)
		if (in_libc(w_qsort.pcs[i]))
			libc_frames++;
	ok(w_qsort.n > 2 && in_libc(w_qsort.pcs[2]),
	    "the comparator's caller is in libc");
	ok(j > 0 && libc_frames > 0,
	    "the walk passes %d libc frame(s) and "
	    "reaches the caller of qsort's caller",
	    libc_frames);
	ok(D(&w_qsort, stops_outermost) == 1,
	    "and ends at the outermost frame");
	if (j <= 0 || libc_frames == 0)
		dump("qsort", &w_qsort);
}

/* ---- a call that ends its function ---- */

static struct walk w_noret;
static void *volatile noret_ra;
static jmp_buf noret_jmp;

static NOINLINE __attribute__((noreturn)) void
noret_bottom(void)
{
	capture_walk(&w_noret);
	longjmp(noret_jmp, 1);
}

/* GCC ends this function with the call: the return address is the first
 * byte after it, so only a lookup at ra - 1 finds this frame's rule. */
static NOINLINE void
noret_middle(void)
{
	volatile char buf[100];

	noret_ra = __builtin_return_address(0);
	buf[0] = 1;
	sink += buf[0];
	noret_bottom();
}

static void
test_noreturn(void)
{
	int j;

	if (setjmp(noret_jmp) == 0)
		noret_middle();
	j = find_pc(&w_noret, 2, (uintptr_t)noret_ra);
	ok(j == 3,
	    "a call to a noreturn function at the end of its caller "
	    "unwinds (frame %d)",
	    j);
	if (j != 3)
		dump("noreturn", &w_noret);
}

/* ---- from a return address ---- */

static struct walk w_retfull, w_ret;
static uintptr_t ret_pc;
static jmp_buf ret_jmp;

/* The registers of the caller's frame as they are once this returns (the
 * sampler's start from a hook reached by a tail jump), and a walk from
 * them next to a walk from here. */
static NOINLINE __attribute__((noreturn)) void
ret_bottom(void)
{
	uintptr_t *fa = __builtin_frame_address(0);
	struct ht_regs r;

	r.pc = ret_pc = fa[1];
	r.sp = (uintptr_t)(fa + 2);
	r.bp = fa[0];
	capture_walk(&w_retfull);
	ht_unwind_get_stats(&w_ret.before);
	w_ret.n = ht_unwind_return(&r, w_ret.pcs, MAXF);
	ht_unwind_get_stats(&w_ret.after);
	longjmp(ret_jmp, 1);
}

/* Ends with its call, as noret_middle: the return address is past this
 * function, and only a lookup at pc - 1 finds its rule. */
static NOINLINE void
ret_middle(void)
{
	volatile char buf[100];

	buf[0] = 1;
	sink += buf[0];
	ret_bottom();
}

static void
test_return(void)
{
	int same;

	if (setjmp(ret_jmp) == 0)
		ret_middle();
	/* w_retfull: capture_walk, ret_bottom, then ret_bottom's caller. */
	same = w_retfull.n > 2 && w_ret.n == w_retfull.n - 2 &&
	    memcmp(w_ret.pcs, &w_retfull.pcs[2],
		(size_t)w_ret.n * sizeof(w_ret.pcs[0])) == 0;
	ok(w_ret.n > 0 && w_ret.pcs[0] == ret_pc,
	    "from a return address: pcs[0] is it");
	ok(same,
	    "... and the walk is the full walk's from that frame on (%d and "
	    "%d frames)",
	    w_ret.n, w_retfull.n);
	ok(D(&w_ret, stops_outermost) == 1,
	    "... through a caller that ends with its call, to the outermost "
	    "frame");
	if (!same) {
		dump("return", &w_ret);
		dump("return-full", &w_retfull);
	}
}

/* ---- a second thread ---- */

static struct walk w_thread;
static void *volatile tras[3];

static NOINLINE void
tchain2(void)
{
	tras[2] = __builtin_return_address(0);
	capture_walk(&w_thread);
	BARRIER();
	sink++;
}

static NOINLINE void
tchain1(void)
{
	tras[1] = __builtin_return_address(0);
	tchain2();
	BARRIER();
	sink++;
}

static NOINLINE void
tchain0(void)
{
	tras[0] = __builtin_return_address(0);
	tchain1();
	BARRIER();
	sink++;
}

static void *
thread_main(void *arg)
{
	tchain0();
	BARRIER();
	sink++;
	return arg;
}

static void
test_thread(void)
{
	pthread_t t;
	int i, j, k, in_order = 1;

	if (pthread_create(&t, NULL, thread_main, NULL) != 0 ||
	    pthread_join(t, NULL) != 0)
		bail("pthread_create");
	/* pcs[1] is capture_walk's return address into tchain2. */
	for (i = 2, k = 2; k >= 0; k--, i++) {
		j = find_pc(&w_thread, i, (uintptr_t)tras[k]);
		if (j != i)
			in_order = 0;
	}
	ok(in_order,
	    "thread: the thread function's return addresses, "
	    "in order");
	ok(D(&w_thread, stops_outermost) == 1 && w_thread.n < MAXF,
	    "thread walk ends cleanly at the outermost frame");
	ok(w_thread.n > 6 && in_libc(w_thread.pcs[w_thread.n - 1]) &&
		in_libc(w_thread.pcs[w_thread.n - 2]),
	    "its last frames are libc's (start_thread, clone)");
	if (!in_order || D(&w_thread, stops_outermost) != 1)
		dump("thread", &w_thread);
}

/* ---- signal handlers ---- */

static struct walk w_sig, w_fault;
static void *volatile raiser_ra;
static void *volatile handler_ra;
static void *volatile fault_ra;
static uintptr_t fault_rip;
static sigjmp_buf fault_jmp;

static NOINLINE void
handler_capture(void)
{
	handler_ra = __builtin_return_address(0);
	capture_walk(&w_sig);
	BARRIER();
	sink++;
}

static void
on_usr1(int sig)
{
	(void)sig;
	handler_capture();
	BARRIER();
	sink++;
}

static NOINLINE void
raiser(void)
{
	raiser_ra = __builtin_return_address(0);
	raise(SIGUSR1);
	BARRIER();
	sink++;
}

static void
on_ill(int sig, siginfo_t *si, void *ctx)
{
	const ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	fault_rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	capture_walk(&w_fault);
	siglongjmp(fault_jmp, 1);
}

static NOINLINE void
faulter(void)
{
	fault_ra = __builtin_return_address(0);
	/* ud2: a precise fault at a non-call instruction (valgrind
	 * delivers it too, where a wild store would be reported). */
	__asm__ volatile("ud2" ::: "memory");
	BARRIER();
	sink++;
}

static void
test_signal(void)
{
	struct sigaction sa;
	int j, k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	raiser();
	BARRIER();
	sink++;
	/* pcs[1] is capture_walk's return into handler_capture. */
	ok(w_sig.n >= 3 && w_sig.pcs[2] == (uintptr_t)handler_ra,
	    "signal handler: the walk holds the handler frame");
	j = find_pc(&w_sig, 2, (uintptr_t)raiser_ra);
	ok(j > 2,
	    "... passes the signal frame and raise() and reaches the "
	    "caller of raise's caller (frame %d)",
	    j);
	ok(D(&w_sig, stops_outermost) == 1,
	    "... and ends at the outermost frame");
	if (j <= 2 || getenv("HT_UNWIND_DUMP") != NULL)
		dump("SIGUSR1", &w_sig);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_ill;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGILL, &sa, NULL);
	if (sigsetjmp(fault_jmp, 1) == 0)
		faulter();
	signal(SIGILL, SIG_DFL);
	k = find_pc(&w_fault, 2, fault_rip + 1);
	ok(k > 2 && k + 1 < w_fault.n &&
		w_fault.pcs[k + 1] == (uintptr_t)fault_ra,
	    "SIGILL: the faulting pc (stored + 1), then its function's "
	    "return address");
	ok(D(&w_fault, stops_outermost) == 1,
	    "... and the walk ends at the outermost frame");
	if (k <= 2 || getenv("HT_UNWIND_DUMP") != NULL)
		dump("SIGILL", &w_fault);
}

/* ---- a hand-made module: exact rules, then mutated CFI ---- */

#define PAGE	   4096
#define FAKE_STACK ((size_t)64 << 20)
#define FUZZ_WALKS 5000

static ElfW(Phdr) fake_phdr[2];
static uint8_t *fake;	  /* text, CFI, guard: a page each */
static uintptr_t *fstack; /* 64 MiB + a page: every read fits */

struct buf {
	uint8_t *p;
	size_t n;
};

static void
put8(struct buf *b, uint8_t v)
{
	b->p[b->n++] = v;
}

static void
put32(struct buf *b, uint32_t v)
{
	memcpy(b->p + b->n, &v, 4);
	b->n += 4;
}

static void
patch32(struct buf *b, size_t at, uint32_t v)
{
	memcpy(b->p + at, &v, 4);
}

/* Pad a record with DW_CFA_nop and write its length. */
static void
close_record(struct buf *b, size_t start)
{
	while ((b->n - start) % 4 != 0)
		put8(b, 0);
	patch32(b, start, (uint32_t)(b->n - start - 4));
}

/*
 * Write .eh_frame_hdr (at the CFI page) and .eh_frame: one CIE ("zR",
 * CFA = rsp + 8, RA at CFA - 8) and one FDE covering the text page with
 * the given instructions.  Returns the bytes used.
 */
static size_t
build_cfi(const uint8_t *insns, size_t len)
{
	uint8_t *cfi = fake + PAGE;
	struct buf b = { cfi, 0 };
	size_t cie, fde, i;

	memset(cfi, 0, PAGE);
	put8(&b, 1);	/* version */
	put8(&b, 0x1b); /* eh_frame_ptr: pcrel | sdata4 */
	put8(&b, 0x03); /* fde_count: udata4 */
	put8(&b, 0x3b); /* table: datarel | sdata4 */
	put32(&b, 32 - 4);
	put32(&b, 1);
	put32(&b, (uint32_t)-PAGE); /* text - hdr */
	put32(&b, 0);		    /* FDE - hdr, patched below */
	b.n = 32;

	cie = b.n;
	put32(&b, 0);
	put32(&b, 0); /* CIE id */
	put8(&b, 1);  /* version */
	put8(&b, 'z');
	put8(&b, 'R');
	put8(&b, 0);
	put8(&b, 1);	/* code alignment */
	put8(&b, 0x78); /* data alignment -8 */
	put8(&b, 16);	/* RA column */
	put8(&b, 1);	/* augmentation data length */
	put8(&b, 0x1b); /* FDE pointers: pcrel | sdata4 */
	put8(&b, 0x0c); /* def_cfa rsp 8 */
	put8(&b, 7);
	put8(&b, 8);
	put8(&b, 0x80 | 16); /* offset r16 at CFA - 8 */
	put8(&b, 1);
	close_record(&b, cie);

	fde = b.n;
	patch32(&b, 16, (uint32_t)fde);
	put32(&b, 0);
	put32(&b, (uint32_t)(b.n - cie));     /* back to the CIE */
	put32(&b, (uint32_t) - (PAGE + b.n)); /* pc_begin: the text page */
	put32(&b, PAGE);		      /* pc_range */
	put8(&b, 0);			      /* no augmentation data */
	for (i = 0; i < len; i++)
		put8(&b, insns[i]);
	close_record(&b, fde);
	put32(&b, 0); /* terminator */
	return b.n;
}

static void
publish_fake(void)
{
	struct ht_modset set;
	struct ht_module *m;

	set.maplen = sizeof(*m);
	set.mods = m = ht_mem_map(set.maplen);
	set.n = 1;
	if (m == NULL)
		bail("ht_mem_map");
	m->bias = (uintptr_t)fake;
	m->start = m->text_start = (uintptr_t)fake;
	m->end = (uintptr_t)fake + 2 * PAGE;
	m->text_end = (uintptr_t)fake + PAGE;
	m->eh_frame_hdr = fake + PAGE;
	m->eh_frame_hdr_len = 32;
	m->phdr = fake_phdr;
	m->phnum = 2;
	strcpy(m->path, "fake");
	ht_modules_publish(&set);
}

static int
fake_walk(struct walk *w, uintptr_t pc_off, uintptr_t sp, uintptr_t bp, int max)
{
	struct ht_regs r;

	r.pc = (uintptr_t)fake + pc_off;
	r.sp = sp;
	r.bp = bp;
	walk(w, &r, max);
	return w->n;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t
next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
test_fake(void)
{
	/* loc 4: CFA = rsp + 16, rbp at CFA - 16; loc 8: CFA = rbp + 16 */
	static const uint8_t frames[] = { 0x44, 0x0e, 0x10, 0x86, 0x02, 0x44,
		0x0d, 0x06 };
	/* loc 4: CFA = r10 + 8 */
	static const uint8_t other_reg[] = { 0x44, 0x0c, 0x0a, 0x08 };
	/* loc 4: RA undefined */
	static const uint8_t undef_ra[] = { 0x44, 0x07, 0x10 };
	/* loc 4: CFA off 16, remember; loc 8: CFA off 32; loc 12: restore */
	static const uint8_t state[] = { 0x44, 0x0e, 0x10, 0x0a, 0x44, 0x0e,
		0x20, 0x44, 0x0b };
	/* loc 4: CFA = *(rsp + 16), RA at rsp + 8, rbp at rsp + 0 */
	static const uint8_t exprs[] = { 0x44, 0x0f, 0x03, 0x77, 0x10, 0x06,
		0x10, 0x10, 0x02, 0x77, 0x08, 0x10, 0x06, 0x02, 0x77, 0x00 };
	uint8_t pristine[PAGE];
	struct ht_modset set;
	struct walk w;
	uintptr_t t, S, *st;
	size_t used, i;
	int bad = 0, two = 0;

	fake = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fstack = mmap(NULL, FAKE_STACK + PAGE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fake == MAP_FAILED || fstack == MAP_FAILED)
		bail("mmap");
	mprotect(fake + 2 * PAGE, PAGE, PROT_NONE);
	fake_phdr[0].p_type = fake_phdr[1].p_type = PT_LOAD;
	fake_phdr[0].p_flags = PF_R | PF_X;
	fake_phdr[1].p_flags = PF_R;
	fake_phdr[1].p_vaddr = PAGE;
	fake_phdr[0].p_memsz = fake_phdr[1].p_memsz = PAGE;
	t = (uintptr_t)fake;
	S = (uintptr_t)fstack;
	st = fstack;

	build_cfi(frames, sizeof(frames));
	publish_fake();
	st[0] = t + 9;		/* A: RA at sp */
	st[0x100 / 8] = 0x1234; /* B: saved rbp at CFA - 16 */
	st[0x108 / 8] = t + 5;	/* B: RA at CFA - 8 */
	st[0x118 / 8] = 0;	/* C: RA 0 ends the walk */
	fake_walk(&w, 2, S, S + 0x100, MAXF);
	ok(w.n == 3 && w.pcs[1] == t + 9 && w.pcs[2] == t + 5 &&
		D(&w, stops_outermost) == 1,
	    "hand-made CFI: rsp-based, rbp-based and rbp-saving rows");

	build_cfi(other_reg, sizeof(other_reg));
	publish_fake();
	fake_walk(&w, 6, S, 0, MAXF);
	ok(w.n == 1 && D(&w, stops_no_cfi) == 1,
	    "CFA in another register: stops, counted as no CFI");
	fake_walk(&w, 2, S, 0, MAXF);
	ok(w.n == 2 && w.pcs[1] == t + 9,
	    "... while the row before it still unwinds");

	build_cfi(undef_ra, sizeof(undef_ra));
	publish_fake();
	fake_walk(&w, 6, S, 0, MAXF);
	ok(w.n == 1 && D(&w, stops_outermost) == 1,
	    "RA undefined: the outermost frame");

	build_cfi(state, sizeof(state));
	publish_fake();
	memset(st, 0, PAGE);
	st[1] = t + 1; /* RA at CFA - 8, CFA = rsp + 16 */
	fake_walk(&w, 13, S, 0, MAXF);
	ok(w.n == 2 && w.pcs[1] == t + 1,
	    "remember_state/restore_state bring back CFA = rsp + 16");

	build_cfi(exprs, sizeof(exprs));
	publish_fake();
	memset(st, 0, PAGE);
	st[0] = 0x5678;	   /* rbp at rsp + 0 */
	st[1] = t + 1;	   /* RA at rsp + 8 */
	st[2] = S + 0x200; /* CFA = *(rsp + 16) */
	fake_walk(&w, 6, S, 0, MAXF);
	ok(w.n == 2 && w.pcs[1] == t + 1 && D(&w, stops_outermost) == 1,
	    "DW_OP_breg7 expressions with DW_OP_deref for CFA, RA and rbp");

	/*
	 * Mutated CFI: every read must stay in the CFI page (a guard page
	 * follows it) and, with max 2, every stack read in the fake stack.
	 */
	build_cfi(frames, sizeof(frames));
	used = build_cfi(state, sizeof(state));
	memcpy(pristine, fake + PAGE, PAGE);
	for (i = 0; i < PAGE / 8; i++) {
		uint64_t x = next_rand();

		st[i] = x % 3 == 0 ? t + (x >> 8) % PAGE :
		    x % 3 == 1	   ? S + (x >> 8) % PAGE :
				     x;
	}
	publish_fake();
	for (i = 0; i < FUZZ_WALKS; i++) {
		unsigned k, flips = 1 + next_rand() % 4;

		memcpy(fake + PAGE, pristine, PAGE);
		for (k = 0; k < flips; k++)
			fake[PAGE + next_rand() % (used + 8)] =
			    (uint8_t)next_rand();
		ht_unwind_flush();
		fake_walk(&w, next_rand() % PAGE, S + 8 * (next_rand() % 64),
		    next_rand() % 2 ? S + next_rand() % PAGE : next_rand(), 2);
		if (w.n < 1 || w.n > 2)
			bad++;
		two += w.n == 2;
	}
	ok(bad == 0,
	    "%d walks over mutated CFI: no fault, 1 or 2 frames "
	    "each (%d went a frame up)",
	    FUZZ_WALKS, two);

	if (ht_modules_scan(&set) != 0)
		bail("ht_modules_scan");
	ht_modules_publish(&set);
}

/* ---- what is not a frame ---- */

static void
test_bad(void)
{
	struct ht_regs r;
	struct walk w;
	uintptr_t pcs[4];

	HT_REGS_CAPTURE(&r);
	r.pc = (uintptr_t)&sink; /* data, not text */
	walk(&w, &r, MAXF);
	ok(w.n == 1 && w.pcs[0] == r.pc && D(&w, stops_bad_frame) == 1,
	    "a pc outside any text gives one frame and stops");
	r.pc = 0;
	walk(&w, &r, MAXF);
	is_int(1, w.n, "a null pc gives one frame");
	is_int(0, ht_unwind(&r, pcs, 0), "max 0 stores nothing");
}

int
main(void)
{
	struct ht_modset set;

	plan(0);
	if (ht_modules_scan(&set) != 0)
		bail("ht_modules_scan");
	ht_modules_publish(&set);
	ok(ht_modules_current()->n > 2, "%zu modules", ht_modules_current()->n);

	test_chain();
	test_qsort();
	test_noreturn();
	test_return();
	test_thread();
	test_signal();
	test_bad();
	test_fake();
	return 0;
}
