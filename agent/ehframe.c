/*
 * A pc's FDE and CIE in its module's .eh_frame (ehframe.h).  The binary
 * search table of .eh_frame_hdr gives the FDE whose initial location is the
 * last one at or below the pc; the FDE's own range then says whether it
 * covers the pc at all.
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "dwarf.h"
#include "ehframe.h"
#include "modules.h"

/*
 * The readable PT_LOAD segment of m holding addr.  Modules map their
 * segments into one reservation whose holes are PROT_NONE, so [start, end)
 * alone does not make a read safe; a segment does.
 */
static int
segment_of(const struct ht_module *m, uintptr_t addr, const uint8_t **lo,
    const uint8_t **hi)
{
	unsigned i;

	if (m->phdr == NULL)
		return -1;
	for (i = 0; i < m->phnum; i++) {
		const ElfW(Phdr) *ph = &m->phdr[i];
		uintptr_t a = m->bias + ph->p_vaddr;

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

/* The FDE whose table entry is the last one at or below pc, or NULL. */
static const uint8_t *
find_fde(const struct ht_module *m, uintptr_t pc)
{
	const uint8_t *lo, *hi, *table;
	struct ht_dw_cur c;
	uintptr_t hdr = (uintptr_t)m->eh_frame_hdr, fde;
	uint64_t count, b, e;
	uint8_t ptr_enc, cnt_enc, tab_enc;
	size_t esz;

	if (hdr == 0 || segment_of(m, hdr, &lo, &hi) != 0)
		return NULL;
	c.p = (const uint8_t *)hdr;
	c.end = hi;
	if (m->eh_frame_hdr_len < (size_t)(hi - c.p))
		c.end = c.p + m->eh_frame_hdr_len;
	c.bad = 0;
	if (ht_dw_u8(&c) != 1)
		return NULL;
	ptr_enc = ht_dw_u8(&c);
	cnt_enc = ht_dw_u8(&c);
	tab_enc = ht_dw_u8(&c);
	if (ptr_enc == HT_DW_PE_OMIT || cnt_enc == HT_DW_PE_OMIT ||
	    tab_enc == HT_DW_PE_OMIT)
		return NULL;
	(void)ht_dw_ptr(&c, ptr_enc, hdr, 0);
	count = ht_dw_ptr(&c, cnt_enc, hdr, 0);
	esz = ht_dw_fmt_size(tab_enc);
	if (c.bad || esz == 0 || (tab_enc & HT_DW_PE_INDIRECT))
		return NULL;
	table = c.p;
	if (count == 0 || count > (size_t)(c.end - table) / (2 * esz))
		return NULL;

	/* The last entry whose initial location is <= pc. */
	b = 0;
	e = count;
	while (b < e) {
		uint64_t mid = b + (e - b) / 2;
		uintptr_t loc;

		c.p = table + mid * 2 * esz;
		loc = ht_dw_ptr(&c, tab_enc, hdr, 0);
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
	fde = ht_dw_ptr(&c, tab_enc, hdr, 0);
	return c.bad ? NULL : (const uint8_t *)fde;
}

/* Read a CIE/FDE length; set *end to the end of the record.  0 on success. */
static int
rd_length(struct ht_dw_cur *c, const uint8_t **end, int *ext)
{
	uint64_t len = ht_dw_fixed(c, 4);

	*ext = 0;
	if (len == 0xffffffff) {
		len = ht_dw_fixed(c, 8);
		*ext = 1;
	}
	if (c->bad || len == 0 || len > (uint64_t)(c->end - c->p))
		return -1;
	*end = c->p + len;
	return 0;
}

static int
parse_cie(const uint8_t *p, const uint8_t *seg_end, struct ht_ehframe_cie *ci)
{
	struct ht_dw_cur c = { p, seg_end, 0 };
	const uint8_t *end, *aug, *aend;
	uint64_t ra_reg, id;
	uint8_t version, ch;
	int ext, have_r = 0;

	memset(ci, 0, sizeof(*ci));
	if (rd_length(&c, &end, &ext) != 0)
		return -1;
	c.end = end;
	id = ht_dw_fixed(&c, ext ? 8 : 4);
	version = ht_dw_u8(&c);
	if (c.bad || id != 0 || (version != 1 && version != 3))
		return -1;
	aug = c.p;
	do
		ch = ht_dw_u8(&c);
	while (ch != '\0');
	if (c.bad)
		return -1;
	if (aug[0] == 'z')
		ci->has_z = 1;
	else if (aug[0] != '\0')
		return -1; /* "eh" and other pre-z forms */
	ci->caf = ht_dw_uleb(&c);
	ci->daf = ht_dw_sleb(&c);
	ra_reg = version == 1 ? ht_dw_u8(&c) : ht_dw_uleb(&c);
	if (c.bad || ra_reg != HT_DW_RA)
		return -1;
	ci->renc = HT_DW_PE_ABSPTR;
	if (ci->has_z) {
		struct ht_dw_cur a;
		uint64_t alen = ht_dw_uleb(&c);

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return -1;
		a.p = c.p;
		a.end = aend = c.p + alen;
		a.bad = 0;
		for (aug++; *aug != '\0'; aug++) {
			uint8_t penc;

			switch (*aug) {
			case 'R':
				ci->renc = ht_dw_u8(&a);
				have_r = 1;
				break;
			case 'L':
				(void)ht_dw_u8(&a);
				break;
			case 'P':
				penc = ht_dw_u8(&a);
				if ((penc & HT_DW_PE_APPL) == HT_DW_PE_ALIGNED)
					a.p =
					    (const uint8_t *)(((uintptr_t)a.p +
								  7) &
						~(uintptr_t)7);
				(void)ht_dw_ptr(&a, penc, 0, 1);
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

int
ht_ehframe_find(const struct ht_module *m, uintptr_t pc,
    struct ht_ehframe_fde *out)
{
	const uint8_t *fde, *lo, *hi, *end, *cie_p;
	struct ht_ehframe_cie ci;
	struct ht_dw_cur c;
	uintptr_t begin, range;
	uint64_t id;
	int ext;

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
	id = ht_dw_fixed(&c, ext ? 8 : 4);
	/* The CIE pointer counts back from its own field. */
	if (c.bad || id == 0 || id > (uint64_t)(cie_p - lo))
		return -1;
	cie_p -= id;
	if (parse_cie(cie_p, hi, &ci) != 0)
		return -1;
	begin = ht_dw_ptr(&c, ci.renc, 0, 0);
	range = ht_dw_ptr(&c, ci.renc, 0, 1);
	if (c.bad || pc < begin || pc - begin >= range)
		return -1;
	if (ci.has_z) {
		uint64_t alen = ht_dw_uleb(&c);

		if (c.bad || alen > (uint64_t)(c.end - c.p))
			return -1;
		c.p += alen;
	}
	out->cie = ci;
	out->begin = begin;
	out->insns = c.p;
	out->insns_end = c.end;
	return 0;
}
