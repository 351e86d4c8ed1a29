/*
 * A pc's row of the DWARF call frame table (DWARF 5, section 6.4.1): the
 * CIE's initial instructions and then its FDE's (ehframe.h), run up to the
 * pc, as far as the unwinder needs them: the rule of the CFA, of the return
 * address and of rbp, and whether rsp has a rule other than "the CFA".
 *
 * Only the forms that matter on x86-64 are kept: a CFA of rsp or rbp plus
 * an offset, or the value (or the word) at DW_OP_breg6/7 plus an offset,
 * which covers GCC's stack realignment and glibc's __restore_rt; registers
 * saved at an offset from the CFA, rsp or rbp.  Anything else makes a rule
 * HT_CFA_BAD (or the CFA's HT_CFA_DEF_BAD), which ends a walk there.
 *
 * No allocation, no lock of its own; the module must stay mapped while it
 * runs (see ehframe.h).
 */
#ifndef HT_CFA_H
#define HT_CFA_H

#include <stdint.h>

#include "modules.h"

/* What a rule is based on; the walker keeps these values in this order. */
enum { HT_CFA_BASE_CFA, HT_CFA_BASE_SP, HT_CFA_BASE_BP };

/* A register's rule. */
enum { HT_CFA_SAME, HT_CFA_UNDEF, HT_CFA_AT, HT_CFA_BAD };

/* The CFA's rule. */
enum { HT_CFA_DEF_BAD, HT_CFA_DEF_REG, HT_CFA_DEF_EXPR };

struct ht_cfa_reg {
	uint8_t how;  /* HT_CFA_SAME ... HT_CFA_BAD */
	uint8_t base; /* HT_CFA_BASE_* for HT_CFA_AT */
	int64_t off;
};

struct ht_cfa_row {
	uint8_t cfa_how;   /* HT_CFA_DEF_* */
	uint8_t cfa_deref; /* DEF_EXPR: load from there */
	/* DEF_REG: a DWARF register number; DEF_EXPR: HT_CFA_BASE_*. */
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct ht_cfa_reg ra;
	struct ht_cfa_reg bp;
	uint8_t sp_bad; /* an rsp rule other than CFA */
	uint8_t signal; /* the CIE's "S": a signal frame */
};

/* The row of module m's call frame table at pc into *out.  Returns 0, or
 * -1 when m has no FDE for pc or its program uses an opcode this reader
 * cannot follow. */
int ht_cfa_row(const struct ht_module *m, uintptr_t pc, struct ht_cfa_row *out);

#endif
