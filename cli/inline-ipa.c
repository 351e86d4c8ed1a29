/*
 * Does any caller of a function rely on registers the function leaves
 * alone?  GCC's interprocedural register allocation (-fipa-ra, on at -O2)
 * lets a caller that sees the callee's code (one unit, or LTO) keep values
 * in call-clobbered registers across the call when the callee's whole call
 * closure is known and leaves them untouched.  A hook, C code, clobbers
 * any of them: patching such a function would corrupt its callers.
 *
 * GCC takes the full ABI clobber set for a function whose closure calls or
 * tail-jumps to a target it does not know (a PLT entry, a pointer, another
 * module).  So a function is safe to patch when, decoding from its entry
 * and following its direct calls and jumps inside its module, some path
 * leaves for such a target: an indirect call, an indirect jump through
 * memory without an index (a PLT entry's, or a tail call through a
 * pointer), or a direct target outside the module.  syscall is no escape
 * (it clobbers rcx and r11 only), nor is an indirect jump through a
 * register or an indexed table (a switch's, inside the function).  A
 * closure with no escape, or one too big to see whole, is refused.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "inline-int.h"

#define IPA_MAX_INSNS 20000 /* decoded in all */
#define IPA_MAX_DEPTH 12    /* nested direct calls followed */
#define IPA_QUEUE     4096  /* code addresses waiting */
#define IPA_SEEN      65536 /* a power of 2, > IPA_MAX_INSNS * 2 */
#define IPA_PAGES     8
#define IPA_PAGE      4096

struct ipa_page {
	uint64_t at; /* page address, 0 if empty */
	size_t len;  /* readable bytes from at: IPA_PAGE or 2 * IPA_PAGE */
	uint8_t b[2 * IPA_PAGE];
};

struct ipa {
	pid_t pid;
	const struct inl_fn *f;
	ZydisDecoder dec;
	struct ipa_page *pages;
	size_t next_page;
	uint64_t *seen; /* open addressing; 0 empty */
	struct {
		uint64_t at;
		unsigned depth;
	} q[IPA_QUEUE];
	size_t qhead, qtail;
	size_t insns;
	const char *limit; /* the limit hit, or NULL */
	uint64_t escape;   /* where the closure leaves, or 0 */
	const char *how;   /* and how */
};

/* The bytes at a (at least 15 of them unless the mapping ends): a pointer
 * and *n, or NULL. */
static const uint8_t *
bytes_at(struct ipa *x, uint64_t a, size_t *n)
{
	uint64_t pg = a & ~(uint64_t)(IPA_PAGE - 1);
	struct ipa_page *p;
	size_t i;

	for (i = 0; i < IPA_PAGES; i++) {
		p = &x->pages[i];
		if (p->at != 0 && a >= p->at &&
		    a + ZYDIS_MAX_INSTRUCTION_LENGTH <= p->at + p->len) {
			*n = p->at + p->len - a;
			return p->b + (a - p->at);
		}
	}
	p = &x->pages[x->next_page];
	x->next_page = (x->next_page + 1) % IPA_PAGES;
	p->at = pg;
	if (ht_inl_read(x->pid, pg, p->b, 2 * IPA_PAGE) == 0)
		p->len = 2 * IPA_PAGE;
	else if (ht_inl_read(x->pid, pg, p->b, IPA_PAGE) == 0)
		p->len = IPA_PAGE;
	else {
		p->at = 0;
		return NULL;
	}
	*n = p->at + p->len - a;
	return p->b + (a - p->at);
}

/* 1 if a was seen before, else marks it and 0. */
static int
seen(struct ipa *x, uint64_t a)
{
	size_t h = (size_t)((a * 0x9e3779b97f4a7c15ULL) >> 40) & (IPA_SEEN - 1);

	while (x->seen[h] != 0) {
		if (x->seen[h] == a)
			return 1;
		h = (h + 1) & (IPA_SEEN - 1);
	}
	x->seen[h] = a;
	return 0;
}

static int
in_module(const struct ipa *x, uint64_t a)
{
	return a >= x->f->mod->lo && a < x->f->mod->hi;
}

static void
push(struct ipa *x, uint64_t a, unsigned depth)
{
	if (depth > IPA_MAX_DEPTH) {
		x->limit = "its calls nest deeper than we follow";
		return;
	}
	if (x->qtail - x->qhead == IPA_QUEUE) {
		x->limit = "its call graph is larger than we follow";
		return;
	}
	x->q[x->qtail % IPA_QUEUE].at = a;
	x->q[x->qtail % IPA_QUEUE].depth = depth;
	x->qtail++;
}

static void
escapes(struct ipa *x, uint64_t ip, const char *how)
{
	x->escape = ip;
	x->how = how;
}

/* A direct call or jump from ip to t at depth: followed, or an escape. */
static void
direct(struct ipa *x, uint64_t ip, uint64_t t, unsigned depth)
{
	if (!in_module(x, t))
		escapes(x, ip, "a direct branch out of its module");
	else
		push(x, t, depth);
}

/* An indirect jump that leaves the function: through memory, no index (a
 * PLT entry's jmp *GOT(%rip), a tail call through a pointer). */
static int
tail_through_memory(const ZydisDecodedInstruction *in,
    const ZydisDecodedOperand *ops)
{
	return in->operand_count_visible >= 1 &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY &&
	    ops[0].mem.index == ZYDIS_REGISTER_NONE;
}

/*
 * Registers along one path that hold a pointer loaded from memory: a load
 * with no index register from a RIP-relative address or from such a
 * pointer (mov g(%rip),%rax; mov 0x40(%rax),%rax).  A jmp through one is
 * a tail call through a pointer whose target the compiler could not know
 * (chromium's free: its allocator shim's dispatch table), so an escape.
 * A switch's jump table is never reached so: its entry is loaded with an
 * index, or from an address computed with one, and what it jumps through
 * is that entry plus the table's base.  Any other write, and every call,
 * forgets.
 */
struct ptrs {
	uint8_t loaded[ZYDIS_REGISTER_MAX_VALUE + 1];
};

static ZydisRegister
reg64(ZydisRegister r)
{
	ZydisRegister w =
	    ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);

	return w != ZYDIS_REGISTER_NONE ? w : r;
}

static void
ptrs_track(struct ptrs *pt, const ZydisDecodedInstruction *in,
    const ZydisDecodedOperand *ops)
{
	ZydisRegister dst = ZYDIS_REGISTER_NONE, base;
	int load = 0;
	size_t i;

	if (in->mnemonic == ZYDIS_MNEMONIC_MOV &&
	    in->operand_count_visible == 2 &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER && ops[0].size == 64 &&
	    ops[1].type == ZYDIS_OPERAND_TYPE_MEMORY &&
	    ops[1].mem.index == ZYDIS_REGISTER_NONE &&
	    ops[1].mem.segment != ZYDIS_REGISTER_FS &&
	    ops[1].mem.segment != ZYDIS_REGISTER_GS) {
		base = ops[1].mem.base;
		load = base == ZYDIS_REGISTER_RIP ||
		    (base != ZYDIS_REGISTER_NONE && pt->loaded[reg64(base)]);
		dst = reg64(ops[0].reg.value);
	}
	for (i = 0; i < in->operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			pt->loaded[reg64(ops[i].reg.value)] = 0;
	if (dst != ZYDIS_REGISTER_NONE && load)
		pt->loaded[dst] = 1;
}

/* A jmp through a register holding a loaded pointer (struct ptrs). */
static int
tail_through_pointer(const struct ptrs *pt, const ZydisDecodedInstruction *in,
    const ZydisDecodedOperand *ops)
{
	return in->operand_count_visible >= 1 &&
	    ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
	    pt->loaded[reg64(ops[0].reg.value)];
}

/* Decode from a until the path ends (a return, a jump, a trap), queueing
 * the direct targets. */
static void
walk(struct ipa *x, uint64_t a, unsigned depth)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct ptrs pt;
	const uint8_t *p;
	uint64_t t;
	size_t n;
	int rel;

	memset(&pt, 0, sizeof(pt));
	for (;;) {
		if (seen(x, a))
			return;
		if (++x->insns > IPA_MAX_INSNS) {
			x->limit = "its call graph is larger than we follow";
			return;
		}
		if ((p = bytes_at(x, a, &n)) == NULL ||
		    !ZYAN_SUCCESS(
			ZydisDecoderDecodeFull(&x->dec, p, n, &in, ops))) {
			x->limit = "code it reaches cannot be read or decoded";
			return;
		}
		rel = (in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) != 0 &&
		    in.operand_count_visible >= 1 &&
		    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[0], a, &t));
		switch (in.meta.category) {
		case ZYDIS_CATEGORY_CALL:
			if (!rel) {
				escapes(x, a, "an indirect call");
				return;
			}
			direct(x, a, t, depth + 1);
			memset(&pt, 0, sizeof(pt));
			break;
		case ZYDIS_CATEGORY_UNCOND_BR:
			if (rel)
				direct(x, a, t, depth);
			else if (tail_through_memory(&in, ops))
				escapes(x, a,
				    "an indirect jump through memory");
			else if (tail_through_pointer(&pt, &in, ops))
				escapes(x, a,
				    "a jump through a pointer it loaded");
			return;
		case ZYDIS_CATEGORY_COND_BR:
			if (rel)
				direct(x, a, t, depth);
			break;
		case ZYDIS_CATEGORY_RET:
			return;
		case ZYDIS_CATEGORY_INTERRUPT:
			if (in.mnemonic == ZYDIS_MNEMONIC_INT3)
				return;
			break;
		default:
			if (in.mnemonic == ZYDIS_MNEMONIC_UD2 ||
			    in.mnemonic == ZYDIS_MNEMONIC_HLT)
				return;
			ptrs_track(&pt, &in, ops);
			break;
		}
		if (x->escape != 0 || x->limit != NULL)
			return;
		a += in.length;
	}
}

/* The whole of [lo, hi): f's own body and parts, switch arms included. */
static void
sweep(struct ipa *x, uint64_t lo, uint64_t hi)
{
	uint64_t a;

	for (a = lo; a < hi && x->escape == 0 && x->limit == NULL;) {
		ZydisDecodedInstruction in;
		const uint8_t *p;
		size_t n;

		if ((p = bytes_at(x, a, &n)) == NULL ||
		    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&x->dec, NULL,
			p, n, &in))) {
			x->limit = "its code cannot be read or decoded";
			return;
		}
		walk(x, a, 0); /* nothing if a path got there */
		a += in.length;
	}
}

int
ht_inl_closure(pid_t pid, struct inl_fn *f)
{
	struct ipa *x;
	size_t i;
	int rc = -1;

	if ((x = calloc(1, sizeof(*x))) == NULL ||
	    (x->pages = calloc(IPA_PAGES, sizeof(*x->pages))) == NULL ||
	    (x->seen = calloc(IPA_SEEN, sizeof(*x->seen))) == NULL) {
		if (x != NULL)
			free(x->pages);
		free(x);
		snprintf(f->why, sizeof(f->why),
		    "out of memory to follow its calls");
		f->cov = HT_COV_CLOSED;
		return -1;
	}
	x->pid = pid;
	x->f = f;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&x->dec, ZYDIS_MACHINE_MODE_LONG_64,
		ZYDIS_STACK_WIDTH_64)))
		x->limit = "no decoder";
	/* Every instruction of f and its parts is a start: a switch's arms
	 * are reached through a table we do not read. */
	if (x->limit == NULL)
		sweep(x, f->addr, f->addr + f->size);
	for (i = 0; i < f->nparts && x->limit == NULL; i++)
		sweep(x, f->parts[i][0], f->parts[i][1]);
	while (x->qhead < x->qtail && x->escape == 0 && x->limit == NULL) {
		uint64_t a = x->q[x->qhead % IPA_QUEUE].at;
		unsigned d = x->q[x->qhead % IPA_QUEUE].depth;

		x->qhead++;
		walk(x, a, d);
	}
	if (x->escape != 0)
		rc = 0;
	else if (x->limit != NULL)
		snprintf(f->why, sizeof(f->why),
		    "closed call graph not proven open (%s): callers may rely "
		    "on registers it leaves (interprocedural register "
		    "allocation)",
		    x->limit);
	else
		snprintf(f->why, sizeof(f->why),
		    "closed call graph (%zu instructions, no call out): "
		    "callers may rely on registers it leaves (interprocedural "
		    "register allocation)",
		    x->insns);
	if (rc != 0)
		f->cov = HT_COV_CLOSED;
	free(x->seen);
	free(x->pages);
	free(x);
	return rc;
}
