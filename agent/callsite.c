/* What a call site called (callsite.h). */
#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "callsite.h"
#include "modules.h"

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

static int
peek(uintptr_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n };
	struct iovec remote = { (void *)addr, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
		(ssize_t)n ?
	    0 :
	    -1;
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
	uintptr_t v;

	return peek(slot, &v, sizeof(v)) == 0 ? v : 0;
}

/* What a call to target reaches: through target's PLT stub if it is one,
 * else target itself. */
static uintptr_t
through_stub(uintptr_t target)
{
	uint8_t b[16];
	size_t k = 0;

	if (peek(target, b, sizeof(b)) != 0)
		return 0;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		k = 4;	  /* endbr64 */
	if (b[k] == 0xf2) /* bnd */
		k++;
	if (b[k] == 0xff && b[k + 1] == 0x25) /* jmp *disp32(%rip) */
		return slot_value(target + k + 6 + (intptr_t)rel32(b + k + 2));
	return target;
}

static uintptr_t
decode(uintptr_t ret)
{
	uint8_t b[6];

	if (ret < 4096 + sizeof(b) || peek(ret - sizeof(b), b, sizeof(b)) != 0)
		return 0;
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
	uintptr_t r, callee;

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
	callee = decode(ret);
	if ((seq & 1) == 0 &&
	    __atomic_compare_exchange_n(&e->seq, &seq, seq + 1, 0,
		__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		__atomic_store_n(&e->ret, ret, __ATOMIC_RELAXED);
		__atomic_store_n(&e->callee, callee, __ATOMIC_RELAXED);
		__atomic_store_n(&e->gen, gen, __ATOMIC_RELAXED);
		__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
	}
	return callee;
}
