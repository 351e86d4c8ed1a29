/*
 * The code of a function to patch, decoded with Zydis: which instructions
 * the jump displaces, whether they can run elsewhere, and whether any
 * branch of the function (or of its split-off parts, f.cold and the like)
 * lands inside them.
 *
 * Relocatable: an instruction whose only tie to its address is a 32-bit
 * RIP-relative memory operand (its displacement is adjusted, if the new one
 * fits), and a conditional or unconditional jump (jcc, jmp) with a relative
 * target outside the displaced bytes (rewritten as its rel32 form to the
 * same target).  Refused in the displaced bytes: calls (the callee would
 * return into the trampoline, where no unwind table describes the frame),
 * returns (the function is shorter than the jump), jrcxz and loop,
 * interrupts and system calls, anything else relative to its address, and
 * what Zydis cannot decode.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "inline-int.h"

#define JMP_LEN 5

static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

static ZydisDecoder dec;
static int dec_ready;

static int
decode(const uint8_t *p, size_t n, ZydisDecodedInstruction *in,
    ZydisDecodedOperand *ops)
{
	if (!dec_ready) {
		if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec,
			ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
			return -1;
		dec_ready = 1;
	}
	return ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, p, n, in, ops)) ? 0 :
									   -1;
}

/* Does in have a RIP-relative memory operand? */
static int
rip_relative(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops)
{
	size_t i;

	for (i = 0; i < in->operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].mem.base == ZYDIS_REGISTER_RIP)
			return 1;
	return 0;
}

/* The target of a relative branch or call at ip into *t: 1, else 0. */
static int
branch_target(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
    uint64_t ip, uint64_t *t)
{
	size_t i;

	for (i = 0; i < in->operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
		    ops[i].imm.is_relative &&
		    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(in, &ops[i], ip, t)))
			return 1;
	return 0;
}

static const char *
mnemonic(const ZydisDecodedInstruction *in)
{
	const char *s = ZydisMnemonicGetString(in->mnemonic);

	return s != NULL ? s : "?";
}

/* A relative jump that a trampoline can hold: 1 jmp, 2 jcc (the
 * condition in in->opcode's low nibble), 0 any other (jrcxz, loop, an
 * indirect jump). */
static int
jump_kind(const ZydisDecodedInstruction *in)
{
	if (!(in->attributes & ZYDIS_ATTRIB_IS_RELATIVE))
		return 0;
	if (in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
	    (in->opcode == 0xe9 || in->opcode == 0xeb))
		return 1;
	if (in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
	    (in->opcode & 0xf0) == 0x70)
		return 2;
	if (in->opcode_map == ZYDIS_OPCODE_MAP_0F &&
	    (in->opcode & 0xf0) == 0x80)
		return 2;
	return 0;
}

/* May in be displaced?  NULL if so, else why not. */
static const char *
displaceable(const ZydisDecodedInstruction *in, const ZydisDecodedOperand *ops,
    char *buf, size_t len)
{
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_RET:
		return "it returns within the 5 bytes a jump needs (too short)";
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
		if (jump_kind(in) != 0)
			return NULL;
		/* FALLTHROUGH */
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_INTERRUPT:
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_SYSRET:
	case ZYDIS_CATEGORY_SYSTEM:
		snprintf(buf, len,
		    "its first bytes hold a %s, which cannot "
		    "run from a trampoline",
		    mnemonic(in));
		return buf;
	default:
		break;
	}
	if (rip_relative(in, ops)) {
		if (in->raw.disp.size != 32)
			return "a RIP-relative operand without a 32-bit "
			       "displacement";
		return NULL;
	}
	if (in->attributes & ZYDIS_ATTRIB_IS_RELATIVE) {
		snprintf(buf, len,
		    "its first bytes hold a %s relative to its "
		    "address",
		    mnemonic(in));
		return buf;
	}
	return NULL;
}

/*
 * Decode [base, base + n) whole: every relative branch that lands in
 * (f->addr, f->at + f->len) other than f->at refuses f; direct calls and
 * jumps out of f are noted in f->calls.  Returns 0, or -1 with f->why.
 */
static int
scan(struct inl_fn *f, const uint8_t *code, size_t n, uint64_t base)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint64_t t, ip;
	size_t off = 0;

	while (off < n) {
		ip = base + off;
		if (decode(code + off, n - off, &in, ops) != 0) {
			snprintf(f->why, sizeof(f->why),
			    "its code at %#llx cannot be decoded, so jumps "
			    "into its first bytes cannot be ruled out",
			    (unsigned long long)ip);
			f->cov = HT_COV_UNDECODED;
			return -1;
		}
		if (branch_target(&in, ops, ip, &t)) {
			if (t > f->addr && t < f->at + f->len && t != f->at) {
				snprintf(f->why, sizeof(f->why),
				    "a %s at %#llx lands inside the bytes to "
				    "patch (%#llx)",
				    mnemonic(&in), (unsigned long long)ip,
				    (unsigned long long)t);
				f->cov = HT_COV_BRANCH_IN;
				return -1;
			}
			if ((t < f->addr || t >= f->addr + f->size) &&
			    f->ncalls < sizeof(f->calls) / sizeof(f->calls[0]))
				f->calls[f->ncalls++] = t;
		}
		off += in.length;
	}
	return 0;
}

int
ht_inl_plan(pid_t pid, struct inl_fn *f, const uint8_t *code, size_t n)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	const char *no;
	char buf[160];
	size_t p = 0, off, i, plen;
	uint8_t *part;

	f->why[0] = '\0';
	f->cov = 0;
	f->ncalls = 0;
	if (n >= sizeof(endbr64) && memcmp(code, endbr64, sizeof(endbr64)) == 0)
		p = sizeof(
		    endbr64); /* stays first: an indirect call's target */
	for (off = p; off - p < JMP_LEN;) {
		if (off >= n) {
			snprintf(f->why, sizeof(f->why),
			    "too short: %zu bytes%s, a jump needs 5", n - p,
			    p ? " after its endbr64" : "");
			f->cov = HT_COV_SHORT;
			return -1;
		}
		if (decode(code + off, n - off, &in, ops) != 0) {
			snprintf(f->why, sizeof(f->why),
			    "its instruction at +%zu cannot be decoded", off);
			f->cov = HT_COV_UNDECODED;
			return -1;
		}
		if ((no = displaceable(&in, ops, buf, sizeof(buf))) != NULL) {
			snprintf(f->why, sizeof(f->why), "%s", no);
			return -1;
		}
		off += in.length;
	}
	if (off > n || off - p > HT_INLINE_BYTES) {
		snprintf(f->why, sizeof(f->why), "too short: %zu bytes", n - p);
		f->cov = HT_COV_SHORT;
		return -1;
	}
	f->at = f->addr + p;
	f->len = (uint32_t)(off - p);
	memcpy(f->orig, code + p, f->len);
	if (scan(f, code, n, f->addr) != 0)
		return -1;
	for (i = 0; i < f->nparts; i++) {
		plen = f->parts[i][1] - f->parts[i][0];
		if (plen > INL_CODE_MAX || (part = malloc(plen)) == NULL ||
		    ht_inl_read(pid, f->parts[i][0], part, plen) != 0) {
			if (plen <= INL_CODE_MAX)
				free(part);
			snprintf(f->why, sizeof(f->why),
			    "its part at %#llx cannot be read",
			    (unsigned long long)f->parts[i][0]);
			return -1;
		}
		if (scan(f, part, plen, f->parts[i][0]) != 0) {
			free(part);
			return -1;
		}
		free(part);
	}
	return 0;
}

static int
fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void
put32(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;

	p[0] = (uint8_t)u;
	p[1] = (uint8_t)(u >> 8);
	p[2] = (uint8_t)(u >> 16);
	p[3] = (uint8_t)(u >> 24);
}

static void
put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* An absolute jump: jmp *0(%rip), then the address (14 bytes). */
static size_t
jmp_abs(uint8_t *p, uint64_t to)
{
	p[0] = 0xff;
	p[1] = 0x25;
	put32(p + 2, 0);
	put64(p + 6, to);
	return 14;
}

size_t
ht_inl_tramp(struct inl_fn *f, uint64_t t, const uint8_t *code, uint8_t *out)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	size_t o = 0, off;
	int64_t d, rel;
	uint64_t back;

	memcpy(out, endbr64, sizeof(endbr64)); /* the hook calls it */
	o = sizeof(endbr64);
	for (off = 0; off < f->len; off += in.length) {
		uint64_t target;
		int kind;

		if (decode(code + off, f->len - off, &in, ops) != 0) {
			snprintf(f->why, sizeof(f->why),
			    "its first bytes changed while being read");
			return 0;
		}
		if (o + (in.length > 6 ? in.length : 6) + 14 >
		    INL_SLOT - INL_STUB) {
			snprintf(f->why, sizeof(f->why),
			    "its first instructions do not fit a trampoline");
			return 0;
		}
		if ((kind = jump_kind(&in)) != 0 &&
		    branch_target(&in, ops, f->at + off, &target)) {
			/* The same target from the trampoline, as rel32. */
			size_t jl = kind == 1 ? 5 : 6;

			d = (int64_t)(target - (t + o + jl));
			if (!fits32(d) ||
			    (target > f->at && target < f->at + f->len)) {
				snprintf(f->why, sizeof(f->why),
				    "the %s at +%zu cannot be moved to a "
				    "trampoline",
				    mnemonic(&in),
				    (size_t)(f->at - f->addr + off));
				return 0;
			}
			if (kind == 1)
				out[o] = 0xe9;
			else {
				out[o] = 0x0f;
				out[o + 1] =
				    (uint8_t)(0x80 | (in.opcode & 0x0f));
			}
			put32(out + o + jl - 4, (int32_t)d);
			o += jl;
			continue;
		}
		memcpy(out + o, code + off, in.length);
		if (rip_relative(&in, ops)) {
			/* The operand's address is next_ip + disp: keep it
			 * where it was. */
			d = in.raw.disp.value +
			    (int64_t)((f->at + off) - (t + o));
			if (!fits32(d)) {
				snprintf(f->why, sizeof(f->why),
				    "the RIP-relative operand at +%zu is out "
				    "of a trampoline's reach",
				    (size_t)(f->at - f->addr + off));
				return 0;
			}
			put32(out + o + in.raw.disp.offset, (int32_t)d);
		}
		o += in.length;
	}
	back = f->at + f->len;
	rel = (int64_t)(back - (t + o + JMP_LEN));
	if (fits32(rel)) {
		out[o] = 0xe9;
		put32(out + o + 1, (int32_t)rel);
		o += JMP_LEN;
	} else
		o += jmp_abs(out + o, back);
	return o;
}

void
ht_inl_stub(uint64_t hook, uint8_t *out)
{
	size_t o = jmp_abs(out, hook);

	memset(out + o, 0xcc, INL_STUB - o);
}

int
ht_inl_patch(const struct inl_fn *f, uint64_t stub, uint8_t *out)
{
	int64_t rel = (int64_t)(stub - (f->at + JMP_LEN));

	if (!fits32(rel))
		return -1;
	out[0] = 0xe9;
	put32(out + 1, (int32_t)rel);
	/* Never executed (no branch lands there), but a trap if it were. */
	memset(out + JMP_LEN, 0xcc, f->len - JMP_LEN);
	return 0;
}
