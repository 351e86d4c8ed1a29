/*
 * What a call site called (callsite.h).  Every byte read lies inside a
 * readable PT_LOAD segment of a module of the current set, looked up
 * under ht_lock_global, and no read happens while a dlclose is unmapping
 * one (as the unwinder's): no system call, nothing a sandbox may refuse.
 */
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "callsite.h"
#include "lock.h"
#include "modules.h"
#include "sampler.h"

#define SLOTS 4096 /* a power of 2 */

/* A cached answer: seq is odd while it is written (a writer that finds it
 * odd, or loses the compare-and-swap, leaves it). */
struct entry {
	unsigned seq;
	unsigned gen; /* ht_modules_generation it was found in */
	uintptr_t ret;
	uintptr_t callee;
};

static struct entry cache[SLOTS];

/* With ht_lock_global held: do [addr, addr + n) lie in one readable
 * PT_LOAD segment of a module of the current set? */
static int
readable(uintptr_t addr, size_t n)
{
	const struct ht_module *m = ht_modules_find(addr);
	uintptr_t lo, hi;
	uint16_t i;

	if (m == NULL || m->phdr == NULL || addr + n < addr)
		return 0;
	for (i = 0; i < m->phnum; i++) {
		if (m->phdr[i].p_type != PT_LOAD ||
		    !(m->phdr[i].p_flags & PF_R))
			continue;
		lo = m->bias + m->phdr[i].p_vaddr;
		hi = lo + m->phdr[i].p_filesz;
		if (addr >= lo && addr + n <= hi)
			return 1;
	}
	return 0;
}

static int32_t
rel32(const uint8_t *b)
{
	int32_t v;

	memcpy(&v, b, sizeof(v));
	return v;
}

/* The word at slot, or 0. */
static uintptr_t
slot_value(uintptr_t slot)
{
	uintptr_t v = 0;

	if (readable(slot, sizeof(v)))
		memcpy(&v, (const void *)slot, sizeof(v));
	return v;
}

/* What a call to target reaches: through target's PLT stub if it is one,
 * else target itself. */
static uintptr_t
through_stub(uintptr_t target)
{
	uint8_t b[16];
	size_t k = 0;

	if (!readable(target, sizeof(b)))
		return 0;
	memcpy(b, (const void *)target, sizeof(b));
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		k = 4;	  /* endbr64 */
	if (b[k] == 0xf2) /* bnd */
		k++;
	if (b[k] == 0xff && b[k + 1] == 0x25) /* jmp *disp32(%rip) */
		return slot_value(target + k + 6 + (intptr_t)rel32(b + k + 2));
	return target;
}

/* With ht_lock_global held. */
static uintptr_t
decode(uintptr_t ret)
{
	uint8_t b[6];

	if (ret < sizeof(b) || !readable(ret - sizeof(b), sizeof(b)))
		return 0;
	memcpy(b, (const void *)(ret - sizeof(b)), sizeof(b));
	if (b[1] == 0xe8) /* call rel32 */
		return through_stub(ret + (intptr_t)rel32(b + 2));
	if (b[0] == 0xff && b[1] == 0x15) /* call *disp32(%rip) */
		return slot_value(ret + (intptr_t)rel32(b + 2));
	return 0;
}

uintptr_t
ht_callsite_callee(uintptr_t ret)
{
	struct entry *e = &cache[(ret * 0x9e3779b97f4a7c15ull) >> 52];
	unsigned gen =
	    __atomic_load_n(&ht_modules_generation, __ATOMIC_RELAXED);
	unsigned seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	uintptr_t r, callee = 0;
	int known = 0;

	if ((seq & 1) == 0) {
		r = __atomic_load_n(&e->ret, __ATOMIC_RELAXED);
		callee = __atomic_load_n(&e->callee, __ATOMIC_RELAXED);
		if (r == ret &&
		    __atomic_load_n(&e->gen, __ATOMIC_RELAXED) == gen) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq)
				return callee;
		}
	}
	ht_lock_acquire(&ht_lock_global);
	if (!ht_sampler_dlclose_busy) {
		gen = ht_modules_generation;
		callee = decode(ret);
		known = 1;
	}
	ht_lock_release(&ht_lock_global);
	if (known && (seq & 1) == 0 &&
	    __atomic_compare_exchange_n(&e->seq, &seq, seq + 1, 0,
		__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		__atomic_store_n(&e->ret, ret, __ATOMIC_RELAXED);
		__atomic_store_n(&e->callee, callee, __ATOMIC_RELAXED);
		__atomic_store_n(&e->gen, gen, __ATOMIC_RELAXED);
		__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
	}
	return known ? callee : 0;
}
