/*
 * What the writers print the same way (see text.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocnames.h"
#include "cli.h"
#include "json.h"
#include "size.h"
#include "text.h"

const char *
ht_text_size(int raw, uint64_t v, char *buf, size_t len)
{
	if (raw) {
		snprintf(buf, len, "%" PRIu64 " B", v);
		return buf;
	}
	return ht_size_format(v, buf, len);
}

double
ht_text_since_s(const struct ht_meta *m, uint64_t ns)
{
	if (m->start_ns == 0 || ns < m->start_ns)
		return 0;
	return (double)(ns - m->start_ns) / 1e9;
}

double
ht_text_duration_s(const struct ht_meta *m)
{
	return ht_text_since_s(m, m->end_ns);
}

const char *
ht_text_signal_name(uint32_t sig)
{
	static char buf[32];
	const char *n = sig > 0 && sig < 65 ? sigabbrev_np((int)sig) : NULL;

	if (n != NULL)
		snprintf(buf, sizeof(buf), "SIG%s", n);
	else
		snprintf(buf, sizeof(buf), "signal %" PRIu32, sig);
	return buf;
}

const char *
ht_text_sort_name(enum ht_view_sort sort)
{
	static const char *const names[] = {
		[HT_VIEW_INUSE] = "inuse",
		[HT_VIEW_ALLOC] = "alloc",
		[HT_VIEW_OBJECTS] = "objects",
		[HT_VIEW_TEMPORARY] = "temporary",
	};

	return names[sort];
}

void
ht_text_safe(FILE *fp, const char *s, size_t max)
{
	ht_json_put_text(fp, s, max, NULL, NULL);
}

size_t
ht_text_width(size_t w, const char *name)
{
	if (strlen(name) + 2 > w)
		w = strlen(name) + 2;
	return w > HT_TEXT_MAX_WIDTH ? HT_TEXT_MAX_WIDTH : w;
}

void
ht_text_column(FILE *fp, const char *name, size_t w)
{
	size_t len = strlen(name);

	fputs("  ", fp);
	ht_text_safe(fp, name, w - 2);
	fprintf(fp, "%*s", (int)(w - 2 - (len < w - 2 ? len : w - 2)), "");
}

/* prefix and v in hexadecimal, "+0x1a2b", without printf (a report of
 * millions of frames prints millions of them). */
static void
put_hex(FILE *fp, const char *prefix, uint64_t v)
{
	char buf[24];
	size_t i = sizeof(buf);

	buf[--i] = '\0';
	do {
		buf[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0);
	fputs(prefix, fp);
	fputs(buf + i, fp);
}

/*
 * The writers of frames build each in a buffer and write it whole: the
 * frames of a hostile profile are millions, and a dozen stdio calls each
 * were most of the time of a report of them.  A frame with a string that
 * is not plain ASCII takes the general path.
 */
#define PUT_LIT(p, lit)                                                        \
	(memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

static char *
put_hexp(char *p, uint64_t v)
{
	char tmp[16];
	int k = 16;

	do {
		tmp[--k] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0);
	*p++ = '0';
	*p++ = 'x';
	memcpy(p, tmp + k, (size_t)(16 - k));
	return p + 16 - k;
}

static char *
put_uintp(char *p, uint64_t v)
{
	char tmp[20];
	int k = 20;

	do {
		tmp[--k] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	memcpy(p, tmp + k, (size_t)(20 - k));
	return p + 20 - k;
}

static char *
put_bytes(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* Printable ASCII only: text that every output takes as it is. */
static int
ascii(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/* The length of s and whether it is plain (JSON: ht_json_plain; text:
 * ascii), kept for the last string asked about per field, over the frames
 * of one stack: the symbolizer's strings are interned (equal text, equal
 * pointer, alive as long as it), and frame after frame has the module of
 * the one before. */
struct seen {
	const char *s;
	size_t len;
	int plain;
};

static int
str_plain(struct seen *c, const char *s, size_t *len, int json)
{
	if (s == NULL) {
		*len = 0;
		return 1;
	}
	if (s != c->s) {
		c->s = s;
		c->len = strlen(s);
		c->plain = json ? ht_json_plain(s, c->len) : ascii(s, c->len);
	}
	*len = c->len;
	return c->plain;
}

/* The lengths of a frame's strings (0 for NULL); whether all are plain
 * (JSON: ht_json_plain; text: ascii) and short enough for a buffer of
 * HT_JSON_RAW_MAX.  seen: the stack's, zeroed before its first frame. */
static int
frame_lens(const struct ht_sym_frame *fr, size_t len[3], int json,
    struct seen seen[3])
{
	const char *s[3] = { fr->module, fr->function, fr->file };
	int i;

	for (i = 0; i < 3; i++)
		if (!str_plain(&seen[i], s[i], &len[i], json))
			return 0;
	return len[0] + len[1] + len[2] < HT_JSON_RAW_MAX - 256;
}

/* The line of ht_text_frame for a frame of plain strings, into buf. */
static size_t
frame_line(char *buf, const struct ht_sym_frame *fr, const size_t len[3])
{
	char *p = PUT_LIT(buf, "      ");

	if (fr->inlined)
		p = PUT_LIT(p, "[inlined] ");
	if (fr->function != NULL)
		p = put_bytes(p, fr->function, len[1]);
	else if (fr->file != NULL)
		p = PUT_LIT(p, "??");
	if (fr->file != NULL) {
		p = PUT_LIT(p, " (");
		p = put_bytes(p, fr->file, len[2]);
		if (fr->line > 0) {
			*p++ = ':';
			p = put_uintp(p, (uint64_t)fr->line);
		}
		*p++ = ')';
	} else {
		if (fr->function != NULL)
			p = PUT_LIT(p, " (");
		if (fr->module != NULL) {
			p = put_bytes(p, fr->module, len[0]);
			*p++ = '+';
			p = put_hexp(p, fr->offset);
		} else
			p = put_hexp(p, fr->address);
		if (fr->function != NULL)
			*p++ = ')';
	}
	*p++ = '\n';
	return (size_t)(p - buf);
}

/* A JSON string of n plain bytes (or null) at p. */
static char *
put_jstr(char *p, const char *s, size_t n)
{
	if (s == NULL)
		return PUT_LIT(p, "null");
	*p++ = '"';
	p = put_bytes(p, s, n);
	*p++ = '"';
	return p;
}

/* The object of ht_text_json_frames for a frame of plain strings, at p,
 * which has HT_JSON_RAW_MAX bytes.  Returns its end. */
static char *
frame_json(char *p, const struct ht_sym_frame *fr, const size_t len[3],
    int folded)
{
	p = PUT_LIT(p, "{\"address\": \"");
	p = put_hexp(p, fr->address);
	p = PUT_LIT(p, "\", \"module\": ");
	p = put_jstr(p, fr->module, len[0]);
	p = PUT_LIT(p, ", \"offset\": \"");
	p = put_hexp(p, fr->offset);
	p = PUT_LIT(p, "\", \"function\": ");
	p = put_jstr(p, fr->function, len[1]);
	p = PUT_LIT(p, ", \"file\": ");
	p = put_jstr(p, fr->file, len[2]);
	p = PUT_LIT(p, ", \"line\": ");
	if (fr->line > 0)
		p = put_uintp(p, (uint64_t)fr->line);
	else
		p = PUT_LIT(p, "null");
	if (fr->inlined)
		p = PUT_LIT(p, ", \"inlined\": true");
	else
		p = PUT_LIT(p, ", \"inlined\": false");
	if (fr->flags & HT_SYM_BUILD_ID_MISMATCH)
		p = PUT_LIT(p, ", \"build_id_mismatch\": true");
	if (fr->flags & HT_SYM_SKIPPED)
		p = PUT_LIT(p, ", \"skipped\": true");
	if (folded)
		p = PUT_LIT(p, ", \"folded\": true");
	*p++ = '}';
	return p;
}

/* ht_text_frame with the stack's string lengths. */
static void
text_frame(FILE *fp, const struct ht_sym_frame *fr, struct seen seen[3])
{
	char buf[HT_JSON_RAW_MAX];
	size_t len[3];

	if (frame_lens(fr, len, 0, seen)) {
		fwrite(buf, 1, frame_line(buf, fr, len), fp);
		return;
	}
	fputs("      ", fp);
	if (fr->inlined)
		fputs("[inlined] ", fp);
	if (fr->function != NULL)
		ht_text_safe(fp, fr->function, SIZE_MAX);
	else if (fr->file != NULL)
		fputs("??", fp);
	if (fr->file != NULL) {
		fputs(" (", fp);
		ht_text_safe(fp, fr->file, SIZE_MAX);
		if (fr->line > 0)
			fprintf(fp, ":%d", fr->line);
		fputs(")", fp);
	} else {
		if (fr->function != NULL)
			fputs(" (", fp);
		if (fr->module != NULL) {
			ht_text_safe(fp, fr->module, SIZE_MAX);
			put_hex(fp, "+0x", fr->offset);
		} else
			put_hex(fp, "0x", fr->address);
		if (fr->function != NULL)
			fputs(")", fp);
	}
	/* A file of another build is said once, in the notes at the end
	 * (ht_text_notes), not on every frame of it. */
	putc('\n', fp);
}

void
ht_text_frame(FILE *fp, const struct ht_sym_frame *fr)
{
	struct seen seen[3];

	memset(seen, 0, sizeof(seen));
	text_frame(fp, fr, seen);
}

int
ht_text_frames(FILE *fp, struct ht_view *v, const struct ht_view_row *r)
{
	const struct ht_sym_frame *fr;
	const uint64_t *addrs;
	struct seen seen[3];
	uint32_t k, na;
	int nfr, i, n, nfold, total = 0;

	memset(seen, 0, sizeof(seen));
	if ((nfold = ht_view_fold(v, r, NULL)) < 0)
		return -1;
	na = ht_view_addrs(r, &addrs);
	/* The wrappers folded, by name on one line, and the stack from
	 * the site's first frame outside them. */
	for (k = 0, n = 0; k < na && n < nfold; k++) {
		if ((nfr = ht_sym_lookup(v->sym, addrs[k], &fr)) < 0)
			return -1;
		for (i = 0; i < nfr && n < nfold; i++, n++) {
			fputs(n == 0 ? "      [folded: " : ", ", fp);
			ht_text_safe(fp, fr[i].function, SIZE_MAX);
		}
		if (n == nfold)
			fputs("]\n", fp);
		if (i < nfr)
			break;
	}
	for (n = 0, k = 0; k < na; k++) {
		if ((nfr = ht_sym_lookup(v->sym, addrs[k], &fr)) < 0)
			return -1;
		for (i = 0; i < nfr; i++)
			if (n++ >= nfold)
				text_frame(fp, &fr[i], seen);
		total += nfr;
	}
	return total;
}

/* One frame as an object of the array "frames" (the keys of DESIGN.md
 * section 2). */
static void
json_frame(struct ht_json *j, const struct ht_sym_frame *fr,
    struct seen seen[3], int folded)
{
	size_t len[3];
	char *p;

	if (frame_lens(fr, len, 1, seen)) {
		p = ht_json_raw_begin(j, NULL, HT_JSON_RAW_MAX);
		ht_json_raw_end(j, frame_json(p, fr, len, folded));
		return;
	}
	ht_json_object_line(j, NULL);
	ht_json_hex(j, "address", fr->address);
	ht_json_string(j, "module", fr->module);
	ht_json_hex(j, "offset", fr->offset);
	ht_json_string(j, "function", fr->function);
	ht_json_string(j, "file", fr->file);
	if (fr->line > 0)
		ht_json_uint(j, "line", fr->line);
	else
		ht_json_null(j, "line");
	ht_json_bool(j, "inlined", fr->inlined);
	if (fr->flags & HT_SYM_BUILD_ID_MISMATCH)
		ht_json_bool(j, "build_id_mismatch", 1);
	if (fr->flags & HT_SYM_SKIPPED)
		ht_json_bool(j, "skipped", 1);
	if (folded)
		ht_json_bool(j, "folded", 1);
	ht_json_object_end(j);
}

int
ht_text_json_frames(struct ht_json *j, struct ht_view *v,
    const struct ht_view_row *r)
{
	const struct ht_sym_frame *fr;
	const uint64_t *addrs = NULL;
	struct seen seen[3];
	uint32_t k, na = 0;
	int nfr, i, n, nfold = 0;

	memset(seen, 0, sizeof(seen));
	if (r != NULL && (nfold = ht_view_fold(v, r, NULL)) < 0)
		return -1;
	/* Every frame stays; the site's is the first not folded. */
	ht_json_uint(j, "site_frame", (uint64_t)nfold);
	ht_json_array_begin(j, "frames");
	if (r != NULL)
		na = ht_view_addrs(r, &addrs);
	for (n = 0, k = 0; k < na; k++) {
		if ((nfr = ht_sym_lookup(v->sym, addrs[k], &fr)) < 0)
			return -1;
		for (i = 0; i < nfr; i++)
			json_frame(j, &fr[i], seen, n++ < nfold);
	}
	ht_json_array_end(j);
	return 0;
}

const char *
ht_text_drop_why(const struct ht_meta *m, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (m->drop_why & HT_DROP_LIVE)
		n += (size_t)snprintf(buf, len,
		    "the live-sample table held its bound of %" PRIu64,
		    m->max_samples);
	if ((m->drop_why & HT_DROP_SITES) && n < len)
		n += (size_t)snprintf(buf + n, len - n,
		    "%sthe site table held "
		    "its bound",
		    n > 0 ? "; " : "");
	if ((m->drop_why & (HT_DROP_LIVE | HT_DROP_SITES)) && n < len)
		n += (size_t)snprintf(buf + n, len - n,
		    ", which --max-samples raises");
	if ((m->drop_why & HT_DROP_NOMEM) && n < len)
		n += (size_t)snprintf(buf + n, len - n,
		    "%sthe tables could not grow: the system had too little "
		    "memory available",
		    n > 0 ? "; " : "");
	/* Profiles before version 4 do not say. */
	if (n == 0)
		snprintf(buf, len, "the agent's tables were full");
	return buf;
}

const char *
ht_text_drop_line(const struct ht_meta *m, char *buf, size_t len)
{
	char why[256];

	if (m->dropped_samples == 0)
		buf[0] = '\0';
	else
		snprintf(buf, len, "%s%" PRIu64 " sample%s dropped (%s)",
		    m->rate == 1 ? "NOT EXACT: " : "", m->dropped_samples,
		    m->dropped_samples == 1 ? "" : "s",
		    ht_text_drop_why(m, why, sizeof(why)));
	return buf;
}

void
ht_text_drops(FILE *fp, const struct ht_view *v, int raw)
{
	const struct ht_meta *m = &v->prof->meta;
	const char *about = v->every ? "" : "about ";
	char line[512], a[32], b[32];

	if (m->dropped_samples == 0)
		return;
	fprintf(fp, "  %s%s.\n", v->every ? "" : "WARNING: ",
	    ht_text_drop_line(m, line, sizeof(line)));
	/* Profiles before version 4 carry no more than the number. */
	if (m->dropped_bytes == 0 && m->dropped_objects == 0) {
		fprintf(fp,
		    "  They are left out of every figure below: in use "
		    "and allocated are at least what they say.\n");
		return;
	}
	fprintf(fp,
	    "  They stood for %s%s in %s%" PRIu64 " object%s, left out of "
	    "every figure below: in use is ",
	    about, ht_text_size(raw, m->dropped_bytes, a, sizeof(a)), about,
	    m->dropped_objects, m->dropped_objects == 1 ? "" : "s");
	if (v->every)
		fprintf(fp, "at least %s and at most %s",
		    ht_text_size(raw, v->total.inuse_bytes, a, sizeof(a)),
		    ht_text_size(raw,
			ht_view_sat_add(v->total.inuse_bytes, m->dropped_bytes),
			b, sizeof(b)));
	else
		fprintf(fp, "up to about %s more than estimated",
		    ht_text_size(raw, m->dropped_bytes, a, sizeof(a)));
	fprintf(fp, ", and %s%s in %s%" PRIu64 " objects were allocated.\n",
	    about,
	    ht_text_size(raw,
		ht_view_sat_add(v->total.alloc_bytes, m->dropped_bytes), a,
		sizeof(a)),
	    about, ht_view_sat_add(v->total.alloc_objects, m->dropped_objects));
}

/* The notes printed so far, to a report (fp) or as warnings (NULL). */
struct notes {
	FILE *fp;
	size_t n;
};

static void
note(void *arg, const char *path, const char *why)
{
	struct notes *nt = arg;

	if (nt->n++ >= HT_TEXT_MAX_NOTES)
		return;
	if (nt->fp == NULL) {
		/* ht_warn shows a control character as '?'. */
		ht_warn("note: %s: %s; its frames show as module+offset", path,
		    why);
		return;
	}
	fputs("note: ", nt->fp);
	ht_text_safe(nt->fp, path, SIZE_MAX);
	fprintf(nt->fp, ": %s; its frames show as module+offset\n", why);
}

static void
notes(FILE *fp, struct ht_sym *a, struct ht_sym *b)
{
	struct notes nt = { fp, 0 };
	size_t more;

	if (b == a)
		b = NULL;
	if (a != NULL)
		ht_sym_problems(a, note, &nt);
	if (b != NULL)
		ht_sym_problems(b, note, &nt);
	if (nt.n <= HT_TEXT_MAX_NOTES)
		return;
	more = nt.n - HT_TEXT_MAX_NOTES;
	if (fp == NULL)
		ht_warn("note: and %zu more module%s whose files could not be "
			"used; their frames show as module+offset",
		    more, more == 1 ? "" : "s");
	else
		fprintf(fp,
		    "note: and %zu more module%s whose files could not be "
		    "used; their frames show as module+offset\n",
		    more, more == 1 ? "" : "s");
}

void
ht_text_notes(FILE *fp, struct ht_sym *a, struct ht_sym *b)
{
	if (b == a)
		b = NULL;
	if ((a != NULL ? ht_sym_problems(a, NULL, NULL) : 0) +
		(b != NULL ? ht_sym_problems(b, NULL, NULL) : 0) ==
	    0)
		return;
	putc('\n', fp);
	notes(fp, a, b);
}

void
ht_text_warn_notes(struct ht_sym *a, struct ht_sym *b)
{
	notes(NULL, a, b);
}

const char *
ht_text_skipped(const struct ht_view_symbols *st, char *buf, size_t len)
{
	if (st->skipped == 0)
		return NULL;
	snprintf(buf, len,
	    "%" PRIu64 " of %" PRIu64 " frames left as module+offset: "
	    "more distinct addresses than --max-symbols %zu to look up; "
	    "give --max-symbols 0 to symbolize them all",
	    st->skipped, st->frames, st->max);
	return buf;
}

void
ht_text_skipped_note(FILE *fp, const struct ht_view_symbols *st)
{
	char msg[300];

	if (ht_text_skipped(st, msg, sizeof(msg)) != NULL)
		fprintf(fp, "\nnote: %s\n", msg);
}

/* The bits of names of kind (0: the C allocator's own names, 1: the
 * allocators' own APIs). */
static uint64_t
unseen_mask(int kind, uint64_t names)
{
	uint64_t m = ht_allocnames_malloc_mask();

	return names & (kind == 0 ? m : ~m);
}

/* The names of the bits of mask, ", " between them, into buf at *n; the
 * families of them (distinct, "/" between) into fam at *fn when fam is
 * not NULL. */
static void
unseen_names(uint64_t mask, char *buf, size_t len, char *fam, size_t flen)
{
	size_t n = 0, fn = 0;
	const char *f;
	unsigned i, shown = 0;
	int k;

	buf[0] = '\0';
	if (fam != NULL)
		fam[0] = '\0';
	for (i = 0; i < 64; i++) {
		if ((mask & (uint64_t)1 << i) == 0)
			continue;
		/* Four names say what it is; the JSON lists them all. */
		if (++shown <= 4)
			k = snprintf(buf + n, len - n, "%s%s",
			    n > 0 ? ", " : "", ht_allocnames_name(i));
		else
			k = 0;
		if (k > 0 && (size_t)k < len - n)
			n += (size_t)k;
		f = ht_allocnames_family(i);
		if (fam != NULL && strstr(fam, f) == NULL) {
			k = snprintf(fam + fn, flen - fn, "%s%s",
			    fn > 0 ? "/" : "", f);
			if (k > 0 && (size_t)k < flen - fn)
				fn += (size_t)k;
		}
	}
	if (shown > 4)
		snprintf(buf + n, len - n, " and %u more", shown - 4);
}

/* The sentence of kind after the module's path. */
static int
unseen_tail(char *buf, size_t len, int kind, uint64_t names)
{
	char list[512], fam[64];
	uint64_t mask = unseen_mask(kind, names);

	if (mask == 0)
		return -1;
	unseen_names(mask, list, sizeof(list), fam, sizeof(fam));
	if (kind == 0)
		snprintf(buf, len,
		    " defines its own %s: its internal calls to them are not "
		    "seen (the calls of other modules are)",
		    list);
	else
		snprintf(buf, len,
		    " contains %s (%s): allocations through its API are not "
		    "seen, its internal calls included",
		    fam, list);
	return 0;
}

void
ht_text_unseen(FILE *fp, const char *lead, uint64_t names, const char *path)
{
	char tail[700];
	int kind;

	for (kind = 0; kind < 2; kind++) {
		if (unseen_tail(tail, sizeof(tail), kind, names) != 0)
			continue;
		fprintf(fp, "%swarning: ", lead);
		ht_text_safe(fp, path, SIZE_MAX);
		fprintf(fp, "%s\n", tail);
	}
}

int
ht_text_unseen_line(char *buf, size_t len, int kind, uint64_t names,
    const char *path)
{
	char tail[700];

	if (unseen_tail(tail, sizeof(tail), kind, names) != 0)
		return -1;
	snprintf(buf, len, "warning: %s%s", path, tail);
	return 0;
}

void
ht_text_json_unseen(struct ht_json *j, uint64_t names, const char *path)
{
	char fam[64], list[512];
	uint64_t mask;
	unsigned i;
	int kind;

	for (kind = 0; kind < 2; kind++) {
		if ((mask = unseen_mask(kind, names)) == 0)
			continue;
		unseen_names(mask, list, sizeof(list), fam, sizeof(fam));
		ht_json_object_begin(j, NULL);
		ht_json_string(j, "module", path);
		ht_json_string(j, "allocator", fam);
		ht_json_array_begin(j, "functions");
		for (i = 0; i < 64; i++)
			if ((mask & (uint64_t)1 << i) != 0)
				ht_json_string(j, NULL, ht_allocnames_name(i));
		ht_json_array_end(j);
		ht_json_bool(j, "other_modules_seen", kind == 0);
		ht_json_object_end(j);
	}
}

static void
xml_byte(FILE *fp, int c)
{
	switch (c) {
	case '&':
		fputs("&amp;", fp);
		break;
	case '<':
		fputs("&lt;", fp);
		break;
	case '>':
		fputs("&gt;", fp);
		break;
	case '"':
		fputs("&quot;", fp);
		break;
	case '\'':
		fputs("&apos;", fp);
		break;
	default:
		/* XML 1.0 allows no control characters but tab and
		 * newlines; none belongs in a name. */
		putc(c < 0x20 || c == 0x7f ? '?' : c, fp);
		break;
	}
}

size_t
ht_text_xml(FILE *fp, const char *s, size_t max)
{
	return ht_json_put_text(fp, s, max, xml_byte, "&<>\"'");
}

char *
ht_text_clean(const char *s, size_t max, size_t *lenp)
{
	size_t i, n, len = strnlen(s, max);
	char *c;

	if ((c = malloc(len + 1)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < len; i += n) {
		n = ht_json_utf8_len(s + i, len - i);
		if (n == 0 ||
		    (n == 1 && ((unsigned char)s[i] < 0x20 || s[i] == 0x7f))) {
			c[i] = '?';
			n = 1;
		} else if (ht_json_is_c1(s + i, n))
			memcpy(c + i, "??", 2);
		else
			memcpy(c + i, s + i, n);
	}
	c[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return c;
}
