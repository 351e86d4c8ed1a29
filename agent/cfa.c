/*
 * The CFA program interpreter (cfa.h).  DW_CFA_remember_state and
 * restore_state keep up to STATE_DEPTH rows; DW_CFA_restore takes a
 * register's rule back from the row the CIE's instructions left.
 */
#include <stdint.h>
#include <string.h>

#include "cfa.h"
#include "dwarf.h"
#include "ehframe.h"
#include "modules.h"

#define STATE_DEPTH 8

/*
 * Accept exactly "DW_OP_breg6|breg7 off" and, if deref_ok, a trailing
 * DW_OP_deref.  Other expressions return -1.
 */
static int
parse_expr(struct ht_dw_cur *c, int deref_ok, uint8_t *base, int64_t *off,
    uint8_t *deref)
{
	uint64_t len = ht_dw_uleb(c);
	struct ht_dw_cur e;
	uint8_t op;

	if (c->bad || len > (uint64_t)(c->end - c->p)) {
		c->bad = 1;
		return -1;
	}
	e.p = c->p;
	e.end = c->p + len;
	e.bad = 0;
	c->p = e.end;
	op = ht_dw_u8(&e);
	if (op == 0x70 + HT_DW_RBP)
		*base = HT_CFA_BASE_BP;
	else if (op == 0x70 + HT_DW_RSP)
		*base = HT_CFA_BASE_SP;
	else
		return -1;
	*off = ht_dw_sleb(&e);
	*deref = 0;
	if (deref_ok && e.p < e.end && *e.p == 0x06) { /* DW_OP_deref */
		e.p++;
		*deref = 1;
	}
	return e.bad || e.p != e.end ? -1 : 0;
}

static struct ht_cfa_reg *
tracked(struct ht_cfa_row *r, uint64_t reg)
{
	if (reg == HT_DW_RA)
		return &r->ra;
	if (reg == HT_DW_RBP)
		return &r->bp;
	return NULL;
}

static void
set_rule(struct ht_cfa_row *r, uint64_t reg, uint8_t how, uint8_t base,
    int64_t off)
{
	struct ht_cfa_reg *rr = tracked(r, reg);

	if (rr != NULL) {
		rr->how = how;
		rr->base = base;
		rr->off = off;
	} else if (reg == HT_DW_RSP && how != HT_CFA_SAME)
		r->sp_bad = 1;
}

/*
 * Run a CFA program from loc, stopping before the first row that starts
 * above target.  init holds the CIE's rules for DW_CFA_restore.  Returns 0,
 * or -1 on an opcode we cannot follow.
 */
static int
run_cfa(const uint8_t *p, const uint8_t *end, const struct ht_ehframe_cie *ci,
    uintptr_t loc, uintptr_t target, struct ht_cfa_row *r,
    const struct ht_cfa_row *init)
{
	struct ht_cfa_row stack[STATE_DEPTH];
	struct ht_dw_cur c = { p, end, 0 };
	unsigned depth = 0;
	uint64_t reg, adv;
	int64_t off;
	uint8_t op, base, deref;

	while (c.p < c.end && !c.bad) {
		op = ht_dw_u8(&c);
		switch (op & 0xc0) {
		case 0x40: /* DW_CFA_advance_loc */
			adv = (uint64_t)(op & 0x3f) * ci->caf;
			goto advance;
		case 0x80: /* DW_CFA_offset */
			off = (int64_t)(ht_dw_uleb(&c) * (uint64_t)ci->daf);
			set_rule(r, op & 0x3f, HT_CFA_AT, HT_CFA_BASE_CFA, off);
			continue;
		case 0xc0: /* DW_CFA_restore */
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case 0x00: /* DW_CFA_nop */
			break;
		case 0x01: /* DW_CFA_set_loc */
			adv = ht_dw_ptr(&c, ci->renc, 0, 0);
			if (c.bad)
				return -1;
			if (adv > target)
				return 0;
			loc = adv;
			break;
		case 0x02: /* DW_CFA_advance_loc1 */
			adv = ht_dw_u8(&c) * ci->caf;
			goto advance;
		case 0x03: /* DW_CFA_advance_loc2 */
			adv = ht_dw_fixed(&c, 2) * ci->caf;
			goto advance;
		case 0x04: /* DW_CFA_advance_loc4 */
			adv = ht_dw_fixed(&c, 4) * ci->caf;
			goto advance;
		case 0x05: /* DW_CFA_offset_extended */
			reg = ht_dw_uleb(&c);
			off = (int64_t)(ht_dw_uleb(&c) * (uint64_t)ci->daf);
			set_rule(r, reg, HT_CFA_AT, HT_CFA_BASE_CFA, off);
			break;
		case 0x06: /* DW_CFA_restore_extended */
			reg = ht_dw_uleb(&c);
			goto restore;
		case 0x07: /* DW_CFA_undefined */
			reg = ht_dw_uleb(&c);
			set_rule(r, reg, HT_CFA_UNDEF, 0, 0);
			break;
		case 0x08: /* DW_CFA_same_value */
			reg = ht_dw_uleb(&c);
			/* The RA as "same value" means nothing useful. */
			set_rule(r, reg,
			    reg == HT_DW_RA ? HT_CFA_BAD : HT_CFA_SAME, 0, 0);
			break;
		case 0x09: /* DW_CFA_register */
			reg = ht_dw_uleb(&c);
			if (ht_dw_uleb(&c) != reg)
				set_rule(r, reg, HT_CFA_BAD, 0, 0);
			else if (reg != HT_DW_RA)
				set_rule(r, reg, HT_CFA_SAME, 0, 0);
			else
				set_rule(r, reg, HT_CFA_BAD, 0, 0);
			break;
		case 0x0a: /* DW_CFA_remember_state */
			if (depth == STATE_DEPTH)
				return -1;
			stack[depth++] = *r;
			break;
		case 0x0b: /* DW_CFA_restore_state */
			if (depth == 0)
				return -1;
			/* GCC relies on the CFA being part of the saved
			 * state, as libgcc implements it. */
			*r = stack[--depth];
			break;
		case 0x0c: /* DW_CFA_def_cfa */
			r->cfa_reg = ht_dw_uleb(&c);
			r->cfa_off = (int64_t)ht_dw_uleb(&c);
			r->cfa_how = HT_CFA_DEF_REG;
			break;
		case 0x0d: /* DW_CFA_def_cfa_register */
			r->cfa_reg = ht_dw_uleb(&c);
			if (r->cfa_how != HT_CFA_DEF_REG)
				r->cfa_how = HT_CFA_DEF_BAD;
			break;
		case 0x0e: /* DW_CFA_def_cfa_offset */
			r->cfa_off = (int64_t)ht_dw_uleb(&c);
			if (r->cfa_how != HT_CFA_DEF_REG)
				r->cfa_how = HT_CFA_DEF_BAD;
			break;
		case 0x0f: /* DW_CFA_def_cfa_expression */
			if (parse_expr(&c, 1, &base, &off, &deref) == 0) {
				r->cfa_how = HT_CFA_DEF_EXPR;
				r->cfa_reg = base;
				r->cfa_off = off;
				r->cfa_deref = deref;
			} else
				r->cfa_how = HT_CFA_DEF_BAD;
			break;
		case 0x10: /* DW_CFA_expression */
			reg = ht_dw_uleb(&c);
			if (parse_expr(&c, 0, &base, &off, &deref) == 0)
				set_rule(r, reg, HT_CFA_AT, base, off);
			else
				set_rule(r, reg, HT_CFA_BAD, 0, 0);
			break;
		case 0x11: /* DW_CFA_offset_extended_sf */
			reg = ht_dw_uleb(&c);
			off = (int64_t)((uint64_t)ht_dw_sleb(&c) *
			    (uint64_t)ci->daf);
			set_rule(r, reg, HT_CFA_AT, HT_CFA_BASE_CFA, off);
			break;
		case 0x12: /* DW_CFA_def_cfa_sf */
			r->cfa_reg = ht_dw_uleb(&c);
			r->cfa_off = (int64_t)((uint64_t)ht_dw_sleb(&c) *
			    (uint64_t)ci->daf);
			r->cfa_how = HT_CFA_DEF_REG;
			break;
		case 0x13: /* DW_CFA_def_cfa_offset_sf */
			r->cfa_off = (int64_t)((uint64_t)ht_dw_sleb(&c) *
			    (uint64_t)ci->daf);
			if (r->cfa_how != HT_CFA_DEF_REG)
				r->cfa_how = HT_CFA_DEF_BAD;
			break;
		case 0x14: /* DW_CFA_val_offset */
		case 0x15: /* DW_CFA_val_offset_sf */
			reg = ht_dw_uleb(&c);
			if (op == 0x14)
				(void)ht_dw_uleb(&c);
			else
				(void)ht_dw_sleb(&c);
			/* A value, not a slot: fine for registers we do
			 * not track, unusable for those we do. */
			set_rule(r, reg, HT_CFA_BAD, 0, 0);
			break;
		case 0x16: /* DW_CFA_val_expression */
			reg = ht_dw_uleb(&c);
			adv = ht_dw_uleb(&c);
			if (c.bad || adv > (uint64_t)(c.end - c.p))
				return -1;
			c.p += adv;
			set_rule(r, reg, HT_CFA_BAD, 0, 0);
			break;
		case 0x2e: /* DW_CFA_GNU_args_size: landing pads only */
			(void)ht_dw_uleb(&c);
			break;
		case 0x2f: /* DW_CFA_GNU_negative_offset_extended */
			reg = ht_dw_uleb(&c);
			off = -(int64_t)(ht_dw_uleb(&c) * (uint64_t)ci->daf);
			set_rule(r, reg, HT_CFA_AT, HT_CFA_BASE_CFA, off);
			break;
		default:
			return -1;
		}
		continue;
advance:
		if (c.bad)
			return -1;
		if (target - loc < adv)
			return 0; /* the next row starts above target */
		loc += adv;
		continue;
restore:
		if (reg == HT_DW_RA)
			r->ra = init->ra;
		else if (reg == HT_DW_RBP)
			r->bp = init->bp;
		else if (reg == HT_DW_RSP)
			r->sp_bad = init->sp_bad;
	}
	return c.bad ? -1 : 0;
}

int
ht_cfa_row(const struct ht_module *m, uintptr_t pc, struct ht_cfa_row *out)
{
	struct ht_ehframe_fde f;
	struct ht_cfa_row init;

	if (ht_ehframe_find(m, pc, &f) != 0)
		return -1;
	memset(&init, 0, sizeof(init));
	init.cfa_how = HT_CFA_DEF_BAD;
	init.ra.how = HT_CFA_BAD; /* an RA nobody described */
	init.bp.how = HT_CFA_SAME;
	init.signal = f.cie.signal;
	if (run_cfa(f.cie.insns, f.cie.insns_end, &f.cie, 0, UINTPTR_MAX, &init,
		&init) != 0)
		return -1;
	*out = init;
	return run_cfa(f.insns, f.insns_end, &f.cie, f.begin, pc, out, &init);
}
