/*
 * Finding a pc's call frame information in its module, in place: the FDE
 * that covers it, through the binary search table of .eh_frame_hdr, and the
 * CIE that FDE points to.  Every read stays inside the readable PT_LOAD
 * segment that holds the record (dwarf.h's bounded readers), so a corrupt
 * or hostile .eh_frame makes a failed lookup, never a bad read.
 *
 * No allocation, no lock of its own; the module must stay mapped while it
 * runs (the unwinder holds ht_lock_global, and a dlclose in progress stops
 * stacks at their caller: see sampler.h).
 */
#ifndef HT_EHFRAME_H
#define HT_EHFRAME_H

#include <stdint.h>

#include "modules.h"

/* What the unwinder takes from a CIE. */
struct ht_ehframe_cie {
	uint64_t caf;	      /* code alignment factor */
	int64_t daf;	      /* data alignment factor */
	uint8_t renc;	      /* FDE pointer encoding */
	uint8_t has_z;	      /* augmentation data present */
	uint8_t signal;	      /* "S": the FDEs are signal frames */
	const uint8_t *insns; /* its initial instructions */
	const uint8_t *insns_end;
};

struct ht_ehframe_fde {
	struct ht_ehframe_cie cie;
	uintptr_t begin;      /* initial location */
	const uint8_t *insns; /* its CFA program */
	const uint8_t *insns_end;
};

/* The FDE of module m covering pc, with its CIE, into *out.  Returns 0, or
 * -1 when m has no usable .eh_frame_hdr, no FDE covers pc, or a record
 * cannot be read ("eh" and other pre-"z" augmentations included). */
int ht_ehframe_find(const struct ht_module *m, uintptr_t pc,
    struct ht_ehframe_fde *out);

#endif
