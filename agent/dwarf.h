/*
 * Bounded readers of the DWARF call frame information in a module's memory
 * (.eh_frame_hdr, .eh_frame): fixed-size and LEB128 numbers and the pointer
 * encodings of the LSB's "DWARF Extensions", for the unwinder's slow path
 * (ehframe.c, cfa.c).
 *
 * Every read goes through a cursor [p, end): a read that would pass end
 * returns 0 and marks the cursor bad, and every later read of it returns 0,
 * so a parser tests bad once at the end of a record rather than after each
 * field.  Nothing here allocates, locks or calls the kernel.  The readers
 * are inline: they run once per byte of CFI.
 */
#ifndef HT_DWARF_H
#define HT_DWARF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* DWARF register numbers of the x86-64 psABI. */
#define HT_DW_RBP 6
#define HT_DW_RSP 7
#define HT_DW_RA  16

/* Pointer encodings (LSB "DWARF Extensions"). */
#define HT_DW_PE_OMIT	  0xff
#define HT_DW_PE_FMT	  0x0f
#define HT_DW_PE_ABSPTR	  0x00
#define HT_DW_PE_ULEB128  0x01
#define HT_DW_PE_UDATA2	  0x02
#define HT_DW_PE_UDATA4	  0x03
#define HT_DW_PE_UDATA8	  0x04
#define HT_DW_PE_SLEB128  0x09
#define HT_DW_PE_SDATA2	  0x0a
#define HT_DW_PE_SDATA4	  0x0b
#define HT_DW_PE_SDATA8	  0x0c
#define HT_DW_PE_APPL	  0x70
#define HT_DW_PE_PCREL	  0x10
#define HT_DW_PE_DATAREL  0x30
#define HT_DW_PE_ALIGNED  0x50
#define HT_DW_PE_INDIRECT 0x80

struct ht_dw_cur {
	const uint8_t *p;
	const uint8_t *end;
	int bad;
};

static inline int
ht_dw_need(struct ht_dw_cur *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	return 1;
}

static inline uint8_t
ht_dw_u8(struct ht_dw_cur *c)
{
	if (!ht_dw_need(c, 1))
		return 0;
	return *c->p++;
}

static inline uint64_t
ht_dw_fixed(struct ht_dw_cur *c, size_t n)
{
	uint64_t v = 0;
	uint16_t v2;
	uint32_t v4;

	if (!ht_dw_need(c, n))
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

/* A LEB128 number, its sign extended if sign (SLEB128). */
static inline uint64_t
ht_dw_leb(struct ht_dw_cur *c, int sign)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = ht_dw_u8(c);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

static inline uint64_t
ht_dw_uleb(struct ht_dw_cur *c)
{
	return ht_dw_leb(c, 0);
}

static inline int64_t
ht_dw_sleb(struct ht_dw_cur *c)
{
	return (int64_t)ht_dw_leb(c, 1);
}

/* Size of a fixed-size pointer format, or 0 (LEB128 or unknown). */
static inline size_t
ht_dw_fmt_size(uint8_t enc)
{
	switch (enc & HT_DW_PE_FMT) {
	case HT_DW_PE_ABSPTR:
	case HT_DW_PE_UDATA8:
	case HT_DW_PE_SDATA8:
		return 8;
	case HT_DW_PE_UDATA4:
	case HT_DW_PE_SDATA4:
		return 4;
	case HT_DW_PE_UDATA2:
	case HT_DW_PE_SDATA2:
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
static inline uintptr_t
ht_dw_ptr(struct ht_dw_cur *c, uint8_t enc, uintptr_t datarel, int raw)
{
	uintptr_t pos = (uintptr_t)c->p;
	uint64_t v;
	size_t n;

	switch (enc & HT_DW_PE_FMT) {
	case HT_DW_PE_ULEB128:
		v = ht_dw_uleb(c);
		break;
	case HT_DW_PE_SLEB128:
		v = (uint64_t)ht_dw_sleb(c);
		break;
	default:
		n = ht_dw_fmt_size(enc);
		if (n == 0) {
			c->bad = 1;
			return 0;
		}
		v = ht_dw_fixed(c, n);
		/* Sign-extend the signed formats. */
		if ((enc & HT_DW_PE_FMT) == HT_DW_PE_SDATA2)
			v = (uint64_t)(int64_t)(int16_t)v;
		else if ((enc & HT_DW_PE_FMT) == HT_DW_PE_SDATA4)
			v = (uint64_t)(int64_t)(int32_t)v;
		break;
	}
	if (raw)
		return v;
	if (enc & HT_DW_PE_INDIRECT) {
		c->bad = 1;
		return 0;
	}
	switch (enc & HT_DW_PE_APPL) {
	case 0:
		return v;
	case HT_DW_PE_PCREL:
		return pos + v;
	case HT_DW_PE_DATAREL:
		if (datarel != 0)
			return datarel + v;
		break;
	}
	c->bad = 1;
	return 0;
}

#endif
