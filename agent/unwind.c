/*
 * The stack walker behind every sample.  It runs inside malloc hooks of a
 * process we do not own: no malloc, no locks of the allocator or the loader
 * (so no dl_* calls and no libgcc unwinder), no stdio.  Memory comes from
 * ht_mem_map, module data from ht_modules_find under ht_lock_global.
 *
 * The slow path (a cache miss) finds the FDE of a pc through the module's
 * .eh_frame_hdr search table, runs the CIE's and the FDE's CFA programs up
 * to the pc, and reduces the resulting row to a 16-byte rule:
 *
 *	CFA = (rsp | rbp) + off, optionally dereferenced
 *	RA  saved at (CFA | rsp | rbp) + off, or undefined (outermost frame)
 *	rbp unchanged, undefined, or saved at (CFA | rsp | rbp) + off
 *
 * The expression forms (DW_OP_breg6/7 off [DW_OP_deref]) cover the two
 * cases of DWARF expressions that matter on x86-64: GCC's stack realignment
 * (CFA = *(rbp - 8), rbp saved at rbp + 0) and glibc's __restore_rt, whose
 * CIE has the "S" augmentation and whose expressions read the interrupted
 * registers out of the kernel's ucontext.  Anything else (CFA in another
 * register, PLT expressions, the RA in a register) becomes a "no CFI" rule
 * that ends the walk there.
 *
 * The fast path (a hit) is a hash, a compare and two or three loads per
 * frame.  Every read of stack memory is 8-aligned and lies in
 * [sp, sp + 64 MiB) of the frame being unwound; every read of CFI lies in the
 * readable PT_LOAD segment that holds it.
 */
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mem.h"
#include "modules.h"
#include "unwind.h"

/* How far above the current sp a frame may reach: far more than any sane
 * frame, far less than the gap to unrelated mappings in most layouts. */
#define STACK_SPAN	((uintptr_t)64 << 20)

/* 4096 sets of 2 ways, 16 bytes an entry: 128 KiB. */
#define CACHE_SETS_LOG2	12
#define CACHE_SETS	(1u << CACHE_SETS_LOG2)
#define CACHE_WAYS	2
#define CACHE_BYTES	(CACHE_SETS * CACHE_WAYS * sizeof(struct rule))

/* DWARF register numbers of the x86-64 psABI. */
#define DW_RBP		6
#define DW_RSP		7
#define DW_RA		16

/* Pointer encodings (LSB "DWARF Extensions"). */
#define PE_OMIT		0xff
#define PE_FMT		0x0f
#define PE_ABSPTR	0x00
#define PE_ULEB128	0x01
#define PE_UDATA2	0x02
#define PE_UDATA4	0x03
#define PE_UDATA8	0x04
#define PE_SLEB128	0x09
#define PE_SDATA2	0x0a
#define PE_SDATA4	0x0b
#define PE_SDATA8	0x0c
#define PE_APPL		0x70
#define PE_PCREL	0x10
#define PE_DATAREL	0x30
#define PE_ALIGNED	0x50
#define PE_INDIRECT	0x80

/* Where a value lives: index into the walker's {CFA, rsp, rbp} array. */
enum { BASE_CFA, BASE_SP, BASE_BP };

/*
 * A cached rule.  Offsets of saved registers are multiples of 8 (anything
 * else would be a misaligned read, which the walk refuses anyway), so they
 * are stored divided by 8.
 */
struct rule {
	uintptr_t	pc;		/* lookup address (key) */
	int32_t		cfa_off;
	int8_t		ra_off8;
	int8_t		bp_off8;
	uint16_t	flags;
};

#define RF_CFA_BASE	0x0003	/* BASE_SP or BASE_BP */
#define RF_CFA_DEREF	0x0004
#define RF_RA_SHIFT	3	/* 2 bits: BASE_* of the RA's slot */
#define RF_BP_SHIFT	5	/* 3 bits: BP_* */
#define RF_SIGNAL	0x0100	/* "S": the next frame's pc is exact */
#define RF_STOP_SHIFT	12	/* 2 bits: STOP_* */
#define RF_STOP		(3u << RF_STOP_SHIFT)

enum { BP_SAME, BP_UNDEF, BP_AT };	/* BP_AT + BASE_*: saved there */
enum { STOP_NONE, STOP_OUTERMOST, STOP_NOCFI, STOP_NOTEXT };

static struct rule		*cache;
static unsigned			 cache_gen;
static int			 cache_failed;
static struct ht_unwind_stats	 stats;

/* ---- bounded readers over module memory ---- */

struct cur {
	const uint8_t	*p;
	const uint8_t	*end;
	int		 bad;
};

static int
need(struct cur *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	return 1;
}

static uint8_t
rd_u8(struct cur *c)
{
	if (!need(c, 1))
		return 0;
	return *c->p++;
}

static uint64_t
rd_fixed(struct cur *c, size_t n)
{
	uint64_t	v = 0;
	uint16_t	v2;
	uint32_t	v4;

	if (!need(c, n))
		return 0;
	switch (n) {
	case 2:
		memcpy(&v2, c->p, 2);
		v = v2;
		break;
	case 4:
		memcpy(&v4, c->p, 4);
		v = v4;
		break;
	default:
		memcpy(&v, c->p, 8);
		break;
	}
	c->p += n;
	return v;
}

static uint64_t
rd_uleb(struct cur *c)
{
	uint64_t	v = 0;
	unsigned	shift = 0;
	uint8_t		b;

	do {
		b = rd_u8(c);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	return v;
}

static int64_t
rd_sleb(struct cur *c)
{
	uint64_t	v = 0;
	unsigned	shift = 0;
	uint8_t		b;

	do {
		b = rd_u8(c);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* Size of a fixed-size pointer format, or 0 (LEB128 or unknown). */
static size_t
fmt_size(uint8_t enc)
{
	switch (enc & PE_FMT) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SDATA8:
		return 8;
	case PE_UDATA4:
	case PE_SDATA4:
		return 4;
	case PE_UDATA2:
	case PE_SDATA2:
		return 2;
	}
	return 0;
}

/*
 * Read a pointer in encoding enc.  datarel is the base of DW_EH_PE_datarel
 * (the start of .eh_frame_hdr there; 0 where it has no meaning).  With
 * raw, the application bits are ignored (pc_range, lengths).  Indirect
 * pointers are not followed: we never need one.
 */
static uintptr_t
rd_ptr(struct cur *c, uint8_t enc, uintptr_t datarel, int raw)
{
	uintptr_t	pos = (uintptr_t)c->p;
	uint64_t	v;
	size_t		n;

	switch (enc & PE_FMT) {
	case PE_ULEB128:
		v = rd_uleb(c);
		break;
	case PE_SLEB128:
		v = (uint64_t)rd_sleb(c);
		break;
	default:
		n = fmt_size(enc);
		if (n == 0) {
			c->bad = 1;
			return 0;
		}
		v = rd_fixed(c, n);
		/* Sign-extend the signed formats. */
		if ((enc & PE_FMT) == PE_SDATA2)
			v = (uint64_t)(int64_t)(int16_t)v;
		else if ((enc & PE_FMT) == PE_SDATA4)
			v = (uint64_t)(int64_t)(int32_t)v;
		break;
	}
	if (raw)
		return v;
	if (enc & PE_INDIRECT) {
		c->bad = 1;
		return 0;
	}
	switch (enc & PE_APPL) {
	case 0:
		return v;
	case PE_PCREL:
		return pos + v;
	case PE_DATAREL:
		if (datarel != 0)
			return datarel + v;
		break;
	}
	c->bad = 1;
	return 0;
}

/*
 * The readable PT_LOAD segment of m holding addr.  Modules map their
 * segments into one reservation whose holes are PROT_NONE, so [start, end)
 * alone does not make a read safe; a segment does.
 */
static int
segment_of(const struct ht_module *m, uintptr_t addr, const uint8_t **lo,
    const uint8_t **hi)
{
	unsigned	i;

	if (m->phdr == NULL)
		return -1;
	for (i = 0; i < m->phnum; i++) {
		const ElfW(Phdr)	*ph = &m->phdr[i];
		uintptr_t		 a = m->bias + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
			continue;
		if (addr >= a && addr - a < ph->p_memsz) {
			*lo = (const uint8_t *)a;
			*hi = (const uint8_t *)(a + ph->p_memsz);
			return 0;
		}
	}
	return -1;
}

/* ---- .eh_frame_hdr and .eh_frame ---- */

/* The FDE whose table entry is the last one at or below pc, or NULL. */
static const uint8_t *
find_fde(const struct ht_module *m, uintptr_t pc)
{
	const uint8_t	*lo, *hi, *table;
	struct cur	 c;
	uintptr_t	 hdr = (uintptr_t)m->eh_frame_hdr, fde;
	uint64_t	 count, b, e;
	uint8_t		 ptr_enc, cnt_enc, tab_enc;
	size_t		 esz;

	if (hdr == 0 || segment_of(m, hdr, &lo, &hi) != 0)
		return NULL;
	c.p = (const uint8_t *)hdr;
	c.end = hi;
	if (m->eh_frame_hdr_len < (size_t)(hi - c.p))
		c.end = c.p + m->eh_frame_hdr_len;
	c.bad = 0;
	if (rd_u8(&c) != 1)
		return NULL;
	ptr_enc = rd_u8(&c);
	cnt_enc = rd_u8(&c);
	tab_enc = rd_u8(&c);
	if (ptr_enc == PE_OMIT || cnt_enc == PE_OMIT || tab_enc == PE_OMIT)
		return NULL;
	(void)rd_ptr(&c, ptr_enc, hdr, 0);
	count = rd_ptr(&c, cnt_enc, hdr, 0);
	esz = fmt_size(tab_enc);
	if (c.bad || esz == 0 || (tab_enc & PE_INDIRECT))
		return NULL;
	table = c.p;
	if (count == 0 || count > (size_t)(c.end - table) / (2 * esz))
		return NULL;

	/* The last entry whose initial location is <= pc. */
	b = 0;
	e = count;
	while (b < e) {
		uint64_t	mid = b + (e - b) / 2;
		uintptr_t	loc;

		c.p = table + mid * 2 * esz;
		loc = rd_ptr(&c, tab_enc, hdr, 0);
		if (c.bad)
			return NULL;
		if (loc <= pc)
			b = mid + 1;
		else
			e = mid;
	}
	if (b == 0)
		return NULL;
	c.p = table + (b - 1) * 2 * esz + esz;
	fde = rd_ptr(&c, tab_enc, hdr, 0);
	return c.bad ? NULL : (const uint8_t *)fde;
}

/* Read a CIE/FDE length; set *end to the end of the record.  0 on success. */
static int
rd_length(struct cur *c, const uint8_t **end, int *ext)
{
	uint64_t	len = rd_fixed(c, 4);

	*ext = 0;
	if (len == 0xffffffff) {
		len = rd_fixed(c, 8);
		*ext = 1;
	}
	if (c->bad || len == 0 || len > (uint64_t)(c->end - c->p))
		return -1;
	*end = c->p + len;
	return 0;
}

struct cie {
	uint64_t	 caf;		/* code alignment factor */
	int64_t		 daf;		/* data alignment factor */
	uint8_t		 renc;		/* FDE pointer encoding */
	uint8_t		 has_z;
	uint8_t		 signal;
	const uint8_t	*insns;
	const uint8_t	*insns_end;
};

static int
parse_cie(const uint8_t *p, const uint8_t *seg_end, struct cie *ci)
{
	struct cur	 c = { p, seg_end, 0 };
	const uint8_t	*end, *aug, *aend;
	uint64_t	 ra_reg, id;
	uint8_t		 version, ch;
	int		 ext, have_r = 0;

	memset(ci, 0, sizeof(*ci));
	if (rd_length(&c, &end, &ext) != 0)
		return -1;
	c.end = end;
	id = rd_fixed(&c, ext ? 8 : 4);
	version = rd_u8(&c);
	if (c.bad || id != 0 || (version != 1 && version != 3))
		return -1;
	aug = c.p;
	do
		ch = rd_u8(&c);
	while (ch != '\0');
	if (c.bad)
		return -1;
	if (aug[0] == 'z')
		ci->has_z = 1;
	else if (aug[0] != '\0')
		return -1;	/* "eh" and other pre-z forms */
	ci->caf = rd_uleb(&c);
	ci->daf = rd_sleb(&c);
	ra_reg = version == 1 ? rd_u8(&c) : rd_uleb(&c);
	if (c.bad || ra_reg != DW_RA)
		return -1;
	ci->renc = PE_ABSPTR;
	if (ci->has_z) {
		struct cur	a;
		uint64_t	alen = rd_uleb(&c);

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return -1;
		a.p = c.p;
		a.end = aend = c.p + alen;
		a.bad = 0;
		for (aug++; *aug != '\0'; aug++) {
			uint8_t	penc;

			switch (*aug) {
			case 'R':
				ci->renc = rd_u8(&a);
				have_r = 1;
				break;
			case 'L':
				(void)rd_u8(&a);
				break;
			case 'P':
				penc = rd_u8(&a);
				if ((penc & PE_APPL) == PE_ALIGNED)
					a.p = (const uint8_t *)(((uintptr_t)
					    a.p + 7) & ~(uintptr_t)7);
				(void)rd_ptr(&a, penc, 0, 1);
				break;
			case 'S':
				ci->signal = 1;
				break;
			case 'B':
			case 'G':
				break;
			default:
				/* Unknown data layout: what follows is
				 * unreadable, but the 'z' length still lets
				 * us skip it if R is already known. */
				if (!have_r)
					return -1;
				goto aug_done;
			}
			if (a.bad)
				return -1;
		}
aug_done:
		c.p = aend;
	}
	ci->insns = c.p;
	ci->insns_end = end;
	return 0;
}

/* ---- the CFA program ---- */

enum { HOW_SAME, HOW_UNDEF, HOW_AT, HOW_BAD };
enum { CFA_BAD, CFA_REG, CFA_EXPR };

struct reg_rule {
	uint8_t		how;
	uint8_t		base;	/* BASE_* for HOW_AT */
	int64_t		off;
};

struct row {
	uint8_t		cfa_how;
	uint8_t		cfa_deref;	/* CFA_EXPR: load from there */
	uint64_t	cfa_reg;	/* CFA_REG: DWARF reg; EXPR: BASE_* */
	int64_t		cfa_off;
	struct reg_rule	ra;
	struct reg_rule	bp;
	uint8_t		sp_bad;		/* an rsp rule other than CFA */
};

#define STATE_DEPTH	8

/*
 * Accept exactly "DW_OP_breg6|breg7 off" and, if deref_ok, a trailing
 * DW_OP_deref.  Other expressions return -1.
 */
static int
parse_expr(struct cur *c, int deref_ok, uint8_t *base, int64_t *off,
    uint8_t *deref)
{
	uint64_t	len = rd_uleb(c);
	struct cur	e;
	uint8_t		op;

	if (c->bad || len > (uint64_t)(c->end - c->p)) {
		c->bad = 1;
		return -1;
	}
	e.p = c->p;
	e.end = c->p + len;
	e.bad = 0;
	c->p = e.end;
	op = rd_u8(&e);
	if (op == 0x70 + DW_RBP)
		*base = BASE_BP;
	else if (op == 0x70 + DW_RSP)
		*base = BASE_SP;
	else
		return -1;
	*off = rd_sleb(&e);
	*deref = 0;
	if (deref_ok && e.p < e.end && *e.p == 0x06) {	/* DW_OP_deref */
		e.p++;
		*deref = 1;
	}
	return e.bad || e.p != e.end ? -1 : 0;
}

static struct reg_rule *
tracked(struct row *r, uint64_t reg)
{
	if (reg == DW_RA)
		return &r->ra;
	if (reg == DW_RBP)
		return &r->bp;
	return NULL;
}

static void
set_rule(struct row *r, uint64_t reg, uint8_t how, uint8_t base, int64_t off)
{
	struct reg_rule	*rr = tracked(r, reg);

	if (rr != NULL) {
		rr->how = how;
		rr->base = base;
		rr->off = off;
	} else if (reg == DW_RSP && how != HOW_SAME)
		r->sp_bad = 1;
}

/*
 * Run a CFA program from loc, stopping before the first row that starts
 * above target.  init holds the CIE's rules for DW_CFA_restore.  Returns 0,
 * or -1 on an opcode we cannot follow.
 */
static int
run_cfa(const uint8_t *p, const uint8_t *end, const struct cie *ci,
    uintptr_t loc, uintptr_t target, struct row *r, const struct row *init)
{
	struct row	 stack[STATE_DEPTH];
	struct cur	 c = { p, end, 0 };
	unsigned	 depth = 0;
	uint64_t	 reg, adv;
	int64_t		 off;
	uint8_t		 op, base, deref;

	while (c.p < c.end && !c.bad) {
		op = rd_u8(&c);
		switch (op & 0xc0) {
		case 0x40:	/* DW_CFA_advance_loc */
			adv = (uint64_t)(op & 0x3f) * ci->caf;
			goto advance;
		case 0x80:	/* DW_CFA_offset */
			off = (int64_t)(rd_uleb(&c) * (uint64_t)ci->daf);
			set_rule(r, op & 0x3f, HOW_AT, BASE_CFA, off);
			continue;
		case 0xc0:	/* DW_CFA_restore */
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case 0x00:	/* DW_CFA_nop */
			break;
		case 0x01:	/* DW_CFA_set_loc */
			adv = rd_ptr(&c, ci->renc, 0, 0);
			if (c.bad)
				return -1;
			if (adv > target)
				return 0;
			loc = adv;
			break;
		case 0x02:	/* DW_CFA_advance_loc1 */
			adv = rd_u8(&c) * ci->caf;
			goto advance;
		case 0x03:	/* DW_CFA_advance_loc2 */
			adv = rd_fixed(&c, 2) * ci->caf;
			goto advance;
		case 0x04:	/* DW_CFA_advance_loc4 */
			adv = rd_fixed(&c, 4) * ci->caf;
			goto advance;
		case 0x05:	/* DW_CFA_offset_extended */
			reg = rd_uleb(&c);
			off = (int64_t)(rd_uleb(&c) * (uint64_t)ci->daf);
			set_rule(r, reg, HOW_AT, BASE_CFA, off);
			break;
		case 0x06:	/* DW_CFA_restore_extended */
			reg = rd_uleb(&c);
			goto restore;
		case 0x07:	/* DW_CFA_undefined */
			reg = rd_uleb(&c);
			set_rule(r, reg, HOW_UNDEF, 0, 0);
			break;
		case 0x08:	/* DW_CFA_same_value */
			reg = rd_uleb(&c);
			/* The RA as "same value" means nothing useful. */
			set_rule(r, reg, reg == DW_RA ? HOW_BAD : HOW_SAME,
			    0, 0);
			break;
		case 0x09:	/* DW_CFA_register */
			reg = rd_uleb(&c);
			if (rd_uleb(&c) != reg)
				set_rule(r, reg, HOW_BAD, 0, 0);
			else if (reg != DW_RA)
				set_rule(r, reg, HOW_SAME, 0, 0);
			else
				set_rule(r, reg, HOW_BAD, 0, 0);
			break;
		case 0x0a:	/* DW_CFA_remember_state */
			if (depth == STATE_DEPTH)
				return -1;
			stack[depth++] = *r;
			break;
		case 0x0b:	/* DW_CFA_restore_state */
			if (depth == 0)
				return -1;
			/* GCC relies on the CFA being part of the saved
			 * state, as libgcc implements it. */
			*r = stack[--depth];
			break;
		case 0x0c:	/* DW_CFA_def_cfa */
			r->cfa_reg = rd_uleb(&c);
			r->cfa_off = (int64_t)rd_uleb(&c);
			r->cfa_how = CFA_REG;
			break;
		case 0x0d:	/* DW_CFA_def_cfa_register */
			r->cfa_reg = rd_uleb(&c);
			if (r->cfa_how != CFA_REG)
				r->cfa_how = CFA_BAD;
			break;
		case 0x0e:	/* DW_CFA_def_cfa_offset */
			r->cfa_off = (int64_t)rd_uleb(&c);
			if (r->cfa_how != CFA_REG)
				r->cfa_how = CFA_BAD;
			break;
		case 0x0f:	/* DW_CFA_def_cfa_expression */
			if (parse_expr(&c, 1, &base, &off, &deref) == 0) {
				r->cfa_how = CFA_EXPR;
				r->cfa_reg = base;
				r->cfa_off = off;
				r->cfa_deref = deref;
			} else
				r->cfa_how = CFA_BAD;
			break;
		case 0x10:	/* DW_CFA_expression */
			reg = rd_uleb(&c);
			if (parse_expr(&c, 0, &base, &off, &deref) == 0)
				set_rule(r, reg, HOW_AT, base, off);
			else
				set_rule(r, reg, HOW_BAD, 0, 0);
			break;
		case 0x11:	/* DW_CFA_offset_extended_sf */
			reg = rd_uleb(&c);
			off = (int64_t)((uint64_t)rd_sleb(&c) *
			    (uint64_t)ci->daf);
			set_rule(r, reg, HOW_AT, BASE_CFA, off);
			break;
		case 0x12:	/* DW_CFA_def_cfa_sf */
			r->cfa_reg = rd_uleb(&c);
			r->cfa_off = (int64_t)((uint64_t)rd_sleb(&c) *
			    (uint64_t)ci->daf);
			r->cfa_how = CFA_REG;
			break;
		case 0x13:	/* DW_CFA_def_cfa_offset_sf */
			r->cfa_off = (int64_t)((uint64_t)rd_sleb(&c) *
			    (uint64_t)ci->daf);
			if (r->cfa_how != CFA_REG)
				r->cfa_how = CFA_BAD;
			break;
		case 0x14:	/* DW_CFA_val_offset */
		case 0x15:	/* DW_CFA_val_offset_sf */
			reg = rd_uleb(&c);
			if (op == 0x14)
				(void)rd_uleb(&c);
			else
				(void)rd_sleb(&c);
			/* A value, not a slot: fine for registers we do
			 * not track, unusable for those we do. */
			set_rule(r, reg, HOW_BAD, 0, 0);
			break;
		case 0x16:	/* DW_CFA_val_expression */
			reg = rd_uleb(&c);
			adv = rd_uleb(&c);
			if (c.bad || adv > (uint64_t)(c.end - c.p))
				return -1;
			c.p += adv;
			set_rule(r, reg, HOW_BAD, 0, 0);
			break;
		case 0x2e:	/* DW_CFA_GNU_args_size: landing pads only */
			(void)rd_uleb(&c);
			break;
		case 0x2f:	/* DW_CFA_GNU_negative_offset_extended */
			reg = rd_uleb(&c);
			off = -(int64_t)(rd_uleb(&c) * (uint64_t)ci->daf);
			set_rule(r, reg, HOW_AT, BASE_CFA, off);
			break;
		default:
			return -1;
		}
		continue;
advance:
		if (c.bad)
			return -1;
		if (target - loc < adv)
			return 0;	/* the next row starts above target */
		loc += adv;
		continue;
restore:
		if (reg == DW_RA)
			r->ra = init->ra;
		else if (reg == DW_RBP)
			r->bp = init->bp;
		else if (reg == DW_RSP)
			r->sp_bad = init->sp_bad;
	}
	return c.bad ? -1 : 0;
}

/* ---- reduction to a rule ---- */

static int
fit8(int64_t off, int8_t *out)
{
	if ((off & 7) != 0 || off < -128 * 8 || off > 127 * 8)
		return -1;
	*out = (int8_t)(off / 8);
	return 0;
}

/* Fill out for pc in module m.  Returns 0 or -1 (no usable CFI). */
static int
cfi_rule(const struct ht_module *m, uintptr_t pc, struct rule *out)
{
	const uint8_t	*fde, *lo, *hi, *end, *cie_p;
	struct cie	 ci;
	struct row	 init, r;
	struct cur	 c;
	uintptr_t	 begin, range;
	uint64_t	 id;
	unsigned	 k;
	int		 ext;

	if ((fde = find_fde(m, pc)) == NULL)
		return -1;
	if (segment_of(m, (uintptr_t)fde, &lo, &hi) != 0)
		return -1;
	c.p = fde;
	c.end = hi;
	c.bad = 0;
	if (rd_length(&c, &end, &ext) != 0)
		return -1;
	c.end = end;
	cie_p = c.p;
	id = rd_fixed(&c, ext ? 8 : 4);
	/* The CIE pointer counts back from its own field. */
	if (c.bad || id == 0 || id > (uint64_t)(cie_p - lo))
		return -1;
	cie_p -= id;
	if (parse_cie(cie_p, hi, &ci) != 0)
		return -1;
	begin = rd_ptr(&c, ci.renc, 0, 0);
	range = rd_ptr(&c, ci.renc, 0, 1);
	if (c.bad || pc < begin || pc - begin >= range)
		return -1;
	if (ci.has_z) {
		uint64_t	alen = rd_uleb(&c);

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return -1;
		c.p += alen;
	}

	memset(&init, 0, sizeof(init));
	init.cfa_how = CFA_BAD;
	init.ra.how = HOW_BAD;	/* an RA nobody described */
	init.bp.how = HOW_SAME;
	if (run_cfa(ci.insns, ci.insns_end, &ci, 0, UINTPTR_MAX, &init,
	    &init) != 0)
		return -1;
	r = init;
	if (run_cfa(c.p, c.end, &ci, begin, pc, &r, &init) != 0)
		return -1;

	memset(out, 0, sizeof(*out));
	out->pc = pc;
	if (r.ra.how == HOW_UNDEF) {
		out->flags = STOP_OUTERMOST << RF_STOP_SHIFT;
		return 0;
	}
	if (r.ra.how != HOW_AT || (r.sp_bad && !ci.signal))
		return -1;
	if (r.cfa_how == CFA_REG && r.cfa_reg == DW_RSP)
		out->flags = BASE_SP;
	else if (r.cfa_how == CFA_REG && r.cfa_reg == DW_RBP)
		out->flags = BASE_BP;
	else if (r.cfa_how == CFA_EXPR)
		out->flags = (uint16_t)(r.cfa_reg |
		    (r.cfa_deref ? RF_CFA_DEREF : 0));
	else
		return -1;
	if (r.cfa_off < INT32_MIN || r.cfa_off > INT32_MAX)
		return -1;
	out->cfa_off = (int32_t)r.cfa_off;
	if (fit8(r.ra.off, &out->ra_off8) != 0)
		return -1;
	out->flags |= r.ra.base << RF_RA_SHIFT;
	switch (r.bp.how) {
	case HOW_SAME:
		k = BP_SAME;
		break;
	case HOW_UNDEF:
		k = BP_UNDEF;
		break;
	case HOW_AT:
		if (fit8(r.bp.off, &out->bp_off8) != 0)
			return -1;
		k = BP_AT + r.bp.base;
		break;
	default:
		return -1;
	}
	out->flags |= k << RF_BP_SHIFT;
	if (ci.signal)
		out->flags |= RF_SIGNAL;
	return 0;
}

static void
compute(uintptr_t pc, struct rule *out)
{
	const struct ht_module	*m = ht_modules_find(pc);

	if (m == NULL || pc < m->text_start || pc >= m->text_end) {
		memset(out, 0, sizeof(*out));
		out->pc = pc;
		out->flags = STOP_NOTEXT << RF_STOP_SHIFT;
		return;
	}
	if (cfi_rule(m, pc, out) != 0) {
		memset(out, 0, sizeof(*out));
		out->pc = pc;
		out->flags = STOP_NOCFI << RF_STOP_SHIFT;
	}
}

/* ---- the cache and the walk ---- */

static void
cache_check(void)
{
	if (cache == NULL && !cache_failed) {
		cache = ht_mem_map(CACHE_BYTES);
		if (cache == NULL)
			cache_failed = 1;	/* work uncached */
		cache_gen = ht_modules_generation;
	}
	if (cache_gen != ht_modules_generation) {
		if (cache != NULL)
			memset(cache, 0, CACHE_BYTES);
		cache_gen = ht_modules_generation;
		cache_failed = 0;
	}
}

static inline const struct rule *
lookup(uintptr_t pc, struct rule *tmp, uint64_t *hits, uint64_t *misses)
{
	struct rule	*set;

	if (__builtin_expect(cache == NULL, 0)) {
		(*misses)++;
		compute(pc, tmp);
		return tmp;
	}
	set = &cache[((pc * 0x9e3779b97f4a7c15ull) >>
	    (64 - CACHE_SETS_LOG2)) * CACHE_WAYS];
	if (__builtin_expect(set[0].pc == pc, 1)) {
		(*hits)++;
		return &set[0];
	}
	if (set[1].pc == pc) {
		(*hits)++;
		return &set[1];
	}
	(*misses)++;
	set[1] = set[0];
	compute(pc, &set[0]);
	return &set[0];
}

/* An 8-byte stack slot at a, in [sp, sp + STACK_SPAN). */
static inline int
slot_ok(uintptr_t a, uintptr_t sp)
{
	return (a & 7) == 0 && a - sp < STACK_SPAN - 8;
}

int
ht_unwind(const struct ht_regs *r, uintptr_t *pcs, int max)
{
	const struct rule	*ru, *next;
	struct rule		 tmp[2];
	uintptr_t		 sp = r->sp, bp = r->bp, v[3], a, ra, nbp;
	uint64_t		 hits = 0, misses = 0;
	unsigned		 f, k;
	int			 n = 0, t = 0;

	if (max < 1)
		return 0;
	pcs[n++] = r->pc;
	stats.walks++;
	if (r->pc < 4096) {
		stats.stops_bad_frame++;
		goto out;
	}
	cache_check();
	ru = lookup(r->pc, &tmp[t], &hits, &misses);
	for (;;) {
		f = ru->flags;
		if (__builtin_expect(f & RF_STOP, 0)) {
			switch (f >> RF_STOP_SHIFT) {
			case STOP_OUTERMOST:
				stats.stops_outermost++;
				break;
			case STOP_NOCFI:
				stats.stops_no_cfi++;
				break;
			default:
				stats.stops_bad_frame++;
				break;
			}
			break;
		}
		if (n >= max) {
			stats.stops_max++;
			break;
		}
		v[BASE_SP] = sp;
		v[BASE_BP] = bp;
		a = v[f & RF_CFA_BASE] + (intptr_t)ru->cfa_off;
		if (f & RF_CFA_DEREF) {
			if (!slot_ok(a, sp))
				goto bad;
			a = *(const uintptr_t *)a;
		}
		/*
		 * The CFA is the caller's sp: above ours, within reach.  A
		 * signal frame's CFA is the interrupted sp, which the kernel
		 * wrote and which may lie on another stack (sigaltstack).
		 */
		if ((a & 7) != 0 || (!(f & RF_SIGNAL) &&
		    a - sp - 1 >= STACK_SPAN))
			goto bad;
		v[BASE_CFA] = a;
		a = v[(f >> RF_RA_SHIFT) & 3] + (intptr_t)ru->ra_off8 * 8;
		if (!slot_ok(a, sp))
			goto bad;
		ra = *(const uintptr_t *)a;
		k = (f >> RF_BP_SHIFT) & 7;
		if (k == BP_SAME)
			nbp = bp;
		else if (k == BP_UNDEF)
			nbp = 0;
		else {
			a = v[k - BP_AT] + (intptr_t)ru->bp_off8 * 8;
			if (!slot_ok(a, sp))
				goto bad;
			nbp = *(const uintptr_t *)a;
		}
		if (ra == 0) {
			/* A zeroed return address ends some hand-made
			 * outermost frames. */
			stats.stops_outermost++;
			break;
		}
		if (ra < 4096)
			goto bad;
		/*
		 * A return address is looked up at ra - 1, inside the call
		 * (the call may be the last instruction of a noreturn
		 * function).  After a signal frame the pc is where the
		 * thread was interrupted: exact, and stored + 1 so that
		 * every pcs[i > 0] is symbolized at pcs[i] - 1.
		 */
		if (f & RF_SIGNAL) {
			next = lookup(ra, &tmp[t ^= 1], &hits, &misses);
			ra++;
		} else
			next = lookup(ra - 1, &tmp[t ^= 1], &hits, &misses);
		if ((next->flags >> RF_STOP_SHIFT) == STOP_NOTEXT)
			goto bad;
		pcs[n++] = ra;
		sp = v[BASE_CFA];
		bp = nbp;
		ru = next;
	}
	goto out;
bad:
	stats.stops_bad_frame++;
out:
	stats.frames += (uint64_t)n;
	stats.cache_hits += hits;
	stats.cache_misses += misses;
	return n;
}

void
ht_unwind_flush(void)
{
	if (cache != NULL)
		memset(cache, 0, CACHE_BYTES);
	cache_gen = ht_modules_generation;
	cache_failed = 0;
}

void
ht_unwind_get_stats(struct ht_unwind_stats *st)
{
	*st = stats;
}
