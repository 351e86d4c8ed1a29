/*
 * The flame graph (see flame.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "json.h"
#include "size.h"
#include "text.h"

/* Geometry, in pixels. */
#define IMAGE_W	  1200
#define MARGIN	  10
#define FRAMES_W  (IMAGE_W - 2 * MARGIN)
#define FRAME_H	  16 /* a row: the rectangle and a 1 px gap */
#define TOP	  52 /* title, subtitle and controls */
#define BOTTOM	  28 /* the details line */
#define CHAR_W	  7  /* of 12 px Verdana, about */
/*
 * Frames narrower than half a pixel are left out (flamegraph.pl leaves out
 * those under a tenth): no one sees them, one zoomed 5 times shows, and a
 * profile of millions of stacks made an SVG of gigabytes that no browser
 * opens.  At most 2,360 frames a depth are drawn; MIN_PARTS is that many.
 */
#define MIN_PARTS (FRAMES_W * 2)

enum kind {
	K_ROOT,
	K_FUNCTION,
	K_INLINED,
	K_UNKNOWN, /* no function name */
	K_ROW,	   /* the fold, or a site without a stack */
};

struct node {
	const char *name; /* the symbolizer's, or own */
	char *own;	  /* a name made here, or NULL */
	const char *file; /* of the first frame merged, or NULL */
	int line;	  /* 0 unknown, -1 several */
	enum kind kind;
	uint32_t parent;
	uint32_t depth;
	uint32_t first; /* first child + 1, 0 for none */
	uint32_t next;	/* next sibling + 1 */
	uint64_t value;
	uint64_t x; /* from the left, in value units */
};

/*
 * A frame's name as a key that needs no string: the symbolizer gives one
 * pointer per name, and a frame without a function is named after its
 * module (one pointer per name too) and offset, or its address.
 */
enum key_tag {
	KEY_FUNCTION = 1,
	KEY_MODULE,  /* module+0xoffset */
	KEY_ADDRESS, /* 0xaddress */
	KEY_ROW,     /* a row without frames: its name */
	KEY_TAGROOT, /* --group-by tag: the row's tag and kind */
};

/* A node of the level being built: a frame under a kept node. */
struct cand {
	uint32_t parent;
	enum key_tag tag;
	const void *ptr;
	uint64_t off;
	struct ht_sym_frame fr;	       /* the first frame merged */
	const struct ht_view_row *row; /* KEY_ROW */
	int line;		       /* -1 once frames of several lines */
	uint64_t value;
	int64_t node; /* once kept, or -1 */
};

/* A row on its way up its stack. */
struct cursor {
	uint32_t row;
	uint32_t node; /* the kept node it is under */
	int addr;      /* the address it is at, from the innermost */
	int frame;     /* the frame of that address, -1: its outermost */
	uint32_t cand; /* at this level */
	/* The last frame to show: the first outside allocator wrappers
	 * (ht_view_fold). */
	struct ht_view_at site;
};

struct flame {
	struct ht_view *v;
	struct node *nodes;
	size_t n;
	size_t cap;
	uint32_t max_depth;
	uint64_t min_value; /* of a node drawn */
	int pruned;	    /* some were narrower */
	int icicle;	    /* the root at the top */
	uint64_t parts;	    /* the narrowest drawn is 1/parts of all */
	struct cand *cands;
	size_t ncands;
	size_t cands_cap;
	struct ht_view_index index; /* of cands, for one level */
	const struct cand *key;
};

/* A new node; returns its index, or -1 (ENOMEM). */
static int64_t
node_new(struct flame *fl, enum kind kind)
{
	struct node *p, *nd;
	size_t cap;

	if (fl->n == fl->cap) {
		cap = fl->cap == 0 ? 256 : fl->cap * 2;
		if (cap > UINT32_MAX - 1 ||
		    (p = reallocarray(fl->nodes, cap, sizeof(*p))) == NULL)
			goto out_nomem;
		fl->nodes = p;
		fl->cap = cap;
	}
	nd = &fl->nodes[fl->n];
	memset(nd, 0, sizeof(*nd));
	nd->kind = kind;
	return (int64_t)fl->n++;

out_nomem:
	errno = ENOMEM;
	return -1;
}

static int
cand_eq(void *ctx, uint32_t id)
{
	struct flame *fl = ctx;
	const struct cand *a = &fl->cands[id], *b = fl->key;

	return a->parent == b->parent && a->tag == b->tag && a->ptr == b->ptr &&
	    a->off == b->off;
}

/* The candidate of key k (parent, tag, ptr, off), added if new, charged
 * k's value.  Returns its index, or -1 (ENOMEM). */
static int64_t
cand_charge(struct flame *fl, const struct cand *k)
{
	struct cand *c;
	uint64_t h;
	int64_t id;
	size_t cap;

	h = ht_view_hash(HT_VIEW_HASH0, &k->parent, sizeof(k->parent));
	h = ht_view_hash(h, &k->tag, sizeof(k->tag));
	h = ht_view_hash(h, &k->ptr, sizeof(k->ptr));
	h = ht_view_hash(h, &k->off, sizeof(k->off));
	fl->key = k;
	if ((id = ht_view_index_find(&fl->index, h, cand_eq, fl)) < 0) {
		if (fl->ncands == fl->cands_cap) {
			cap = fl->cands_cap == 0 ? 256 : fl->cands_cap * 2;
			if ((c = reallocarray(fl->cands, cap, sizeof(*c))) ==
			    NULL)
				goto out_nomem;
			fl->cands = c;
			fl->cands_cap = cap;
		}
		if (ht_view_index_add(&fl->index, h, (uint32_t)fl->ncands) != 0)
			goto out_nomem;
		id = (int64_t)fl->ncands++;
		fl->cands[id] = *k;
		fl->cands[id].value = 0;
		fl->cands[id].node = -1;
		fl->cands[id].line = k->fr.line;
	} else if (k->tag != KEY_ROW) {
		/* Frames of one function merged from several lines. */
		c = &fl->cands[id];
		if (c->fr.line != k->fr.line ||
		    (c->fr.file == NULL) != (k->fr.file == NULL) ||
		    (c->fr.file != NULL && strcmp(c->fr.file, k->fr.file) != 0))
			c->line = -1;
	}
	fl->cands[id].value += k->value;
	return id;

out_nomem:
	errno = ENOMEM;
	return -1;
}

/* The key of frame fr under parent. */
static void
frame_key(struct cand *k, uint32_t parent, const struct ht_sym_frame *fr)
{
	memset(k, 0, sizeof(*k));
	k->parent = parent;
	k->fr = *fr;
	if (fr->function != NULL) {
		k->tag = KEY_FUNCTION;
		k->ptr = fr->function;
	} else if (fr->module != NULL) {
		k->tag = KEY_MODULE;
		k->ptr = fr->module;
		k->off = fr->offset;
	} else {
		k->tag = KEY_ADDRESS;
		k->off = fr->address;
	}
}

/* Make candidate c a node under its parent.  Returns 0, or -1 (ENOMEM). */
static int
keep(struct flame *fl, struct cand *c)
{
	char buf[4200];
	struct node *nd;
	const char *name;
	int64_t id;

	if ((id = node_new(fl,
		 c->tag == KEY_ROW || c->tag == KEY_TAGROOT ? K_ROW :
		     c->fr.function == NULL		    ? K_UNKNOWN :
		     c->fr.inlined			    ? K_INLINED :
							      K_FUNCTION)) < 0)
		return -1;
	nd = &fl->nodes[id];
	if (c->tag == KEY_FUNCTION)
		nd->name = c->fr.function;
	else {
		name = c->tag == KEY_TAGROOT ?
		    ht_view_tag_root(fl->v, c->row, buf, sizeof(buf)) :
		    c->tag == KEY_ROW ?
		    ht_view_row_name(c->row, buf, sizeof(buf)) :
		    ht_view_frame_name(&c->fr, buf, sizeof(buf));
		if ((nd->own = strdup(name)) == NULL) {
			errno = ENOMEM;
			return -1;
		}
		nd->name = nd->own;
	}
	if (c->tag != KEY_ROW && c->tag != KEY_TAGROOT) {
		nd->file = c->fr.file;
		nd->line = c->line;
	}
	nd->value = c->value;
	nd->parent = c->parent;
	nd->depth = fl->nodes[c->parent].depth + 1;
	nd->next = fl->nodes[c->parent].first;
	fl->nodes[c->parent].first = (uint32_t)id + 1;
	if (nd->depth > fl->max_depth)
		fl->max_depth = nd->depth;
	c->node = id;
	return 0;
}

static uint32_t
row_nframes(const struct ht_view_row *r)
{
	uint32_t n = r->site == NULL ? 0 : r->site->nframes;

	return n > HT_PROFILE_MAX_FRAMES ? HT_PROFILE_MAX_FRAMES : n;
}

/*
 * One level of the tree: each cursor's next frame, outward, merged by
 * (parent, name) into candidates, and the candidates at least min_value
 * wide kept as nodes.  A node's value is the sum of the rows under it, so
 * one narrower than that has only narrower nodes above it: its cursors
 * stop there.  Returns the cursors left, or -1 (ENOMEM).
 */
static int64_t
level(struct flame *fl, struct cursor *cur, size_t ncur)
{
	struct ht_view *v = fl->v;
	const struct ht_sym_frame *fr;
	const struct ht_view_row *r;
	struct cand k;
	size_t i, n = 0;
	int64_t c;
	int m;

	fl->ncands = 0;
	ht_view_index_free(&fl->index);
	for (i = 0; i < ncur; i++) {
		r = &v->rows[cur[i].row];
		cur[i].cand = UINT32_MAX;
		if (cur[i].addr < 0)
			continue; /* the stack ended below */
		if (row_nframes(r) == 0) {
			memset(&k, 0, sizeof(k));
			k.parent = cur[i].node;
			k.tag = KEY_ROW;
			k.off = r->site == NULL ? 1 : 0;
			k.row = r;
			cur[i].addr = -1;
		} else {
			if ((m = ht_sym_lookup(v->sym,
				 r->site->frames[cur[i].addr], &fr)) < 0)
				return -1;
			if (cur[i].frame < 0 || cur[i].frame >= m)
				cur[i].frame = m - 1;
			frame_key(&k, cur[i].node, &fr[cur[i].frame]);
			/* The next frame out: the next inlined one, or the
			 * caller's address; none past the site's. */
			if ((uint32_t)cur[i].addr == cur[i].site.addr &&
			    cur[i].frame == cur[i].site.frame)
				cur[i].addr = -1;
			else if (--cur[i].frame < 0)
				cur[i].addr--;
		}
		k.value = ht_view_value(v, &r->f);
		if ((c = cand_charge(fl, &k)) < 0)
			return -1;
		cur[i].cand = (uint32_t)c;
	}
	for (i = 0; i < fl->ncands; i++) {
		if (fl->cands[i].value < fl->min_value)
			fl->pruned = 1;
		else if (keep(fl, &fl->cands[i]) != 0)
			return -1;
	}
	for (i = 0; i < ncur; i++) {
		if (cur[i].cand == UINT32_MAX ||
		    fl->cands[cur[i].cand].node < 0)
			continue;
		cur[n] = cur[i];
		cur[n].node = (uint32_t)fl->cands[cur[i].cand].node;
		n++;
	}
	return (int64_t)n;
}

/*
 * --group-by tag: a level of tags under the root, each row's cursor put
 * under the node of its tag and kind (the fold's under "tag (several)"),
 * its stack still to climb.  Returns the cursors left, or -1 (ENOMEM).
 */
static int64_t
tag_level(struct flame *fl, struct cursor *cur, size_t ncur)
{
	struct ht_view *v = fl->v;
	const struct ht_view_row *r;
	struct cand k;
	size_t i, n = 0;
	int64_t c;

	fl->ncands = 0;
	ht_view_index_free(&fl->index);
	for (i = 0; i < ncur; i++) {
		r = &v->rows[cur[i].row];
		memset(&k, 0, sizeof(k));
		k.tag = KEY_TAGROOT;
		k.off = r->site == NULL ?
		    UINT64_MAX :
		    (uint64_t)r->site->tag * 2 + (r->site->kind != 0);
		k.row = r;
		k.value = ht_view_value(v, &r->f);
		if ((c = cand_charge(fl, &k)) < 0)
			return -1;
		cur[i].cand = (uint32_t)c;
	}
	for (i = 0; i < fl->ncands; i++) {
		if (fl->cands[i].value < fl->min_value)
			fl->pruned = 1;
		else if (keep(fl, &fl->cands[i]) != 0)
			return -1;
	}
	for (i = 0; i < ncur; i++) {
		if (fl->cands[cur[i].cand].node < 0)
			continue;
		cur[n] = cur[i];
		cur[n].node = (uint32_t)fl->cands[cur[i].cand].node;
		n++;
	}
	return (int64_t)n;
}

/*
 * The tree of the rows' stacks, outermost frame on the root, built one
 * depth at a time; nodes narrower than half a pixel are left out, with all
 * above them.  Returns 0, or -1 (ENOMEM).
 */
static int
build(struct flame *fl)
{
	struct ht_view *v = fl->v;
	struct cursor *cur;
	uint64_t total = 0, value;
	size_t i, ncur = 0;
	int64_t n;
	int rc = -1;

	if (node_new(fl, K_ROOT) < 0)
		return -1;
	fl->nodes[0].name = "all";
	if ((cur = calloc(v->nrows + 1, sizeof(*cur))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < v->nrows; i++) {
		if ((value = ht_view_value(v, &v->rows[i].f)) == 0)
			continue;
		total = ht_view_sat_add(total, value);
		cur[ncur].row = (uint32_t)i;
		/* A row without frames has its own name as one. */
		cur[ncur].addr = row_nframes(&v->rows[i]) == 0 ?
		    0 :
		    (int)row_nframes(&v->rows[i]) - 1;
		cur[ncur].frame = -1;
		if (ht_view_fold(v, &v->rows[i], &cur[ncur].site) < 0)
			goto out;
		ncur++;
	}
	fl->nodes[0].value = total;
	/* value / total * FRAMES_W >= min_px (0.5: 1 / MIN_PARTS of all),
	 * in integers (no value is past total, which is 2^64 - 1 at
	 * most). */
	fl->min_value = total / fl->parts + (total % fl->parts != 0);
	if (fl->min_value == 0)
		fl->min_value = 1;
	if (v->opts.group_by_tag && ncur > 0) {
		if ((n = tag_level(fl, cur, ncur)) < 0)
			goto out;
		ncur = (size_t)n;
	}
	while (ncur > 0) {
		if ((n = level(fl, cur, ncur)) < 0)
			goto out;
		ncur = (size_t)n;
	}
	rc = 0;
out:
	free(cur);
	return rc;
}

static const struct node *sort_nodes;

static int
by_value(const void *a, const void *b)
{
	const struct node *x = &sort_nodes[*(const uint32_t *)a];
	const struct node *y = &sort_nodes[*(const uint32_t *)b];

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Order every node's children by value, largest first, and give each its
 * offset: the parent's plus the values of the siblings before it.  Nodes
 * are created after their parents, so one pass in creation order lays out
 * parents before children.
 */
static int
layout(struct flame *fl)
{
	uint32_t *kids, nk, c, j;
	uint64_t x;
	size_t i;

	if ((kids = calloc(fl->n, sizeof(*kids))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	sort_nodes = fl->nodes;
	for (i = 0; i < fl->n; i++) {
		nk = 0;
		for (c = fl->nodes[i].first; c != 0; c = fl->nodes[c - 1].next)
			kids[nk++] = c - 1;
		qsort(kids, nk, sizeof(*kids), by_value);
		x = fl->nodes[i].x;
		fl->nodes[i].first = nk > 0 ? kids[0] + 1 : 0;
		for (j = 0; j < nk; j++) {
			fl->nodes[kids[j]].x = x;
			x += fl->nodes[kids[j]].value;
			fl->nodes[kids[j]].next = j + 1 < nk ? kids[j + 1] + 1 :
							       0;
		}
	}
	free(kids);
	return 0;
}

/* The number of characters of s (UTF-8, ill-formed bytes one each). */
static size_t
chars_of(const char *s)
{
	size_t i, n, len = strlen(s), chars = 0;

	for (i = 0; i < len; i += n, chars++)
		if ((n = ht_json_utf8_len(s + i, len - i)) == 0)
			n = 1;
	return chars;
}

/* The label of a frame w pixels wide: as much of the name as fits, ".."
 * where it is cut, nothing when not even three characters fit.  The script
 * does the same on zoom. */
static void
put_label(FILE *fp, const char *name, double w)
{
	double fit = (w - 6) / CHAR_W;
	size_t n;

	if (fit < 3)
		return;
	n = (size_t)fit;
	if (chars_of(name) <= n)
		ht_text_xml(fp, name, n);
	else {
		ht_text_xml(fp, name, n - 2);
		fputs("..", fp);
	}
}

static void
put_value(FILE *fp, const struct ht_view *v, uint64_t value, uint64_t total)
{
	char buf[32];

	if (v->opts.sort == HT_VIEW_OBJECTS ||
	    v->opts.sort == HT_VIEW_TEMPORARY)
		fprintf(fp, "%" PRIu64 " object%s", value,
		    value == 1 ? "" : "s");
	else
		fprintf(fp, "%s (%" PRIu64 " bytes)",
		    ht_size_format(value, buf, sizeof(buf)), value);
	fprintf(fp, ", %.2f%%",
	    total == 0 ? 100.0 : 100.0 * (double)value / (double)total);
}

/* A color from the name, so a function keeps its color across graphs:
 * greens for functions, teal for inlined calls, greys for the rest. */
static void
put_color(FILE *fp, const struct node *nd)
{
	uint64_t h = ht_view_hash(HT_VIEW_HASH0, nd->name, strlen(nd->name));
	unsigned a = (unsigned)(h & 0xff), b = (unsigned)(h >> 8 & 0xff);

	switch (nd->kind) {
	case K_ROOT:
		fputs("rgb(200,200,200)", fp);
		break;
	case K_ROW:
		fputs("rgb(225,225,205)", fp);
		break;
	case K_UNKNOWN:
		fprintf(fp, "rgb(%u,%u,%u)", 175 + a % 30, 175 + a % 30,
		    185 + a % 30);
		break;
	case K_INLINED:
		fprintf(fp, "rgb(%u,%u,%u)", 60 + a % 50, 185 + b % 50,
		    175 + a % 50);
		break;
	default:
		fprintf(fp, "rgb(%u,%u,%u)", 70 + a % 70, 170 + b % 70,
		    50 + a % 40);
		break;
	}
}

static void
put_frame(FILE *fp, const struct flame *fl, const struct node *nd)
{
	uint64_t total = fl->nodes[0].value;
	double x, w, y;

	if (total == 0) {
		x = MARGIN;
		w = FRAMES_W;
	} else {
		x = MARGIN + (double)nd->x / (double)total * FRAMES_W;
		w = (double)nd->value / (double)total * FRAMES_W;
	}
	y = TOP +
	    (double)(fl->icicle ? nd->depth : fl->max_depth - nd->depth) *
		FRAME_H;
	fprintf(fp,
	    "<g class=\"f\" data-d=\"%" PRIu32 "\" data-x=\"%" PRIu64
	    "\" data-v=\"%" PRIu64 "\" data-n=\"",
	    nd->depth, nd->x, nd->value);
	ht_text_xml(fp, nd->name, SIZE_MAX);
	fputs("\"><title>", fp);
	if (nd->kind == K_INLINED)
		fputs("[inlined] ", fp);
	ht_text_xml(fp, nd->name, SIZE_MAX);
	if (nd->file != NULL) {
		putc('\n', fp);
		ht_text_xml(fp, nd->file, SIZE_MAX);
		if (nd->line > 0)
			fprintf(fp, ":%d", nd->line);
		else if (nd->line < 0)
			fputs(" (several lines)", fp);
	}
	putc('\n', fp);
	put_value(fp, fl->v, nd->value, total);
	fprintf(fp,
	    "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
	    "height=\"%d\" rx=\"2\" fill=\"",
	    x, y, w, FRAME_H - 1);
	put_color(fp, nd);
	fprintf(fp, "\"/><text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 11.5);
	put_label(fp, nd->name, w);
	fputs("</text></g>\n", fp);
}

/* The script: zoom on click, search, and details on hover.  It finds
 * everything in the frames' data- attributes. */
static const char script[] =
    "var W = "
    "%d"
    ", X0 = "
    "%d"
    ", frames, details, matched;\n"
    "function attr(g, a) { return +g.getAttribute(a); }\n"
    "function fit(g, x, w) {\n"
    "  var r = g.getElementsByTagName('rect')[0];\n"
    "  var t = g.getElementsByTagName('text')[0];\n"
    "  var s = g.getAttribute('data-n'), n = Math.floor((w - 6) / %d);\n"
    "  r.setAttribute('x', x.toFixed(2));\n"
    "  r.setAttribute('width', w.toFixed(2));\n"
    "  t.setAttribute('x', (x + 3).toFixed(2));\n"
    "  t.textContent = n < 3 ? '' : s.length <= n ? s :\n"
    "      s.substring(0, n - 2) + '..';\n"
    "}\n"
    "function zoom(z) {\n"
    "  var x0 = attr(z, 'data-x'), w0 = attr(z, 'data-v');\n"
    "  var d0 = attr(z, 'data-d');\n"
    "  for (var i = 0; i < frames.length; i++) {\n"
    "    var g = frames[i], x = attr(g, 'data-x'), v = attr(g, 'data-v');\n"
    "    var a = Math.max(x, x0), b = Math.min(x + v, x0 + w0);\n"
    "    if (w0 <= 0 || b <= a) { g.style.display = 'none'; continue; }\n"
    "    g.style.display = '';\n"
    "    g.style.opacity = attr(g, 'data-d') < d0 ? 0.5 : 1;\n"
    "    fit(g, X0 + (a - x0) / w0 * W, (b - a) / w0 * W);\n"
    "  }\n"
    "}\n"
    "function search() {\n"
    "  var s = prompt('Search frames (regular expression)', ''), re, m = [];\n"
    "  if (s === null) return;\n"
    "  try { re = new RegExp(s); } catch (e) { alert(e); return; }\n"
    "  for (var i = 0; i < frames.length; i++) {\n"
    "    var g = frames[i], r = g.getElementsByTagName('rect')[0];\n"
    "    if (!r.getAttribute('data-c'))\n"
    "      r.setAttribute('data-c', r.getAttribute('fill'));\n"
    "    var hit = s !== '' && re.test(g.getAttribute('data-n'));\n"
    "    r.setAttribute('fill', hit ? 'rgb(230,0,230)' :\n"
    "        r.getAttribute('data-c'));\n"
    "    if (hit) m.push([attr(g, 'data-x'), attr(g, 'data-v')]);\n"
    "  }\n"
    "  /* A match inside another counts once. */\n"
    "  m.sort(function(p, q) { return p[0] - q[0] || q[1] - p[1]; });\n"
    "  var sum = 0, end = -1;\n"
    "  for (i = 0; i < m.length; i++)\n"
    "    if (m[i][0] >= end) { sum += m[i][1]; end = m[i][0] + m[i][1]; }\n"
    "  var all = attr(frames[0], 'data-v');\n"
    "  matched.textContent = s === '' ? '' : 'Matched: ' +\n"
    "      (all > 0 ? (100 * sum / all).toFixed(2) : '0') + '%%';\n"
    "}\n"
    "function init() {\n"
    "  frames = document.getElementsByClassName('f');\n"
    "  details = document.getElementById('details');\n"
    "  matched = document.getElementById('matched');\n"
    "  for (var i = 0; i < frames.length; i++) {\n"
    "    frames[i].onclick = function() { zoom(this); };\n"
    "    frames[i].onmouseover = function() {\n"
    "      var t = this.getElementsByTagName('title')[0].textContent;\n"
    "      details.textContent = t.replace(/\\n/g, '  |  ');\n"
    "    };\n"
    "    frames[i].onmouseout = function() { details.textContent = ' '; };\n"
    "  }\n"
    "  document.getElementById('reset').onclick = function() {\n"
    "    zoom(frames[0]);\n"
    "  };\n"
    "  document.getElementById('search').onclick = search;\n"
    "}\n";

static void
put_header(FILE *fp, const struct flame *fl, int height)
{
	const struct ht_view *v = fl->v;
	const struct ht_meta *m = &v->prof->meta;
	char a[32], line[512];

	fprintf(fp,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\" "
	    "standalone=\"no\"?>\n"
	    "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	    "onload=\"init()\">\n",
	    IMAGE_W, height, IMAGE_W, height);
	fputs("<style>text { font-family: Verdana, sans-serif; "
	      "font-size: 12px; fill: rgb(0,0,0); } g.f { cursor: pointer; } "
	      "g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; } "
	      ".c { cursor: pointer; fill: rgb(60,60,160); } "
	      "#title { font-size: 17px; }</style>\n",
	    fp);
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", fp);
	fprintf(fp, script, FRAMES_W, MARGIN, CHAR_W);
	fputs("]]></script>\n", fp);
	fprintf(fp,
	    "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
	    "fill=\"rgb(248,248,240)\"/>\n",
	    IMAGE_W, height);
	fprintf(fp,
	    "<text id=\"title\" x=\"%d\" y=\"22\" "
	    "text-anchor=\"middle\">",
	    IMAGE_W / 2);
	fputs("Heap ", fp);
	ht_text_xml(fp, ht_view_value_name(v), SIZE_MAX);
	if (v->opts.at_peak)
		fputs(" at peak", fp);
	fputs(": ", fp);
	ht_text_xml(fp, m->command, sizeof(m->command));
	fprintf(fp, " (pid %" PRIu64 ")</text>\n", m->pid);
	fprintf(fp, "<text x=\"%d\" y=\"40\" text-anchor=\"middle\">",
	    IMAGE_W / 2);
	if (v->opts.sort == HT_VIEW_OBJECTS ||
	    v->opts.sort == HT_VIEW_TEMPORARY)
		fprintf(fp, "%" PRIu64 " objects", fl->nodes[0].value);
	else
		fputs(ht_size_format(fl->nodes[0].value, a, sizeof(a)), fp);
	fprintf(fp, " in %zu site%s; ", v->nsites, v->nsites == 1 ? "" : "s");
	if (v->exact)
		fputs("rate 1, exact", fp);
	else if (v->every)
		fputs("rate 1", fp);
	else
		fprintf(fp, "sampled every %s: estimates",
		    ht_size_format(m->rate, a, sizeof(a)));
	if (m->dropped_samples > 0) {
		fputs("; ", fp);
		ht_text_xml(fp, ht_text_drop_line(m, line, sizeof(line)),
		    SIZE_MAX);
	}
	if (fl->pruned && fl->parts == MIN_PARTS)
		fputs("; frames under half a pixel not drawn", fp);
	else if (fl->pruned)
		fprintf(fp, "; frames under %.2g pixel%s not drawn",
		    (double)FRAMES_W / (double)fl->parts,
		    fl->parts == FRAMES_W ? "" : "s");
	fputs("</text>\n", fp);
	fprintf(fp,
	    "<text id=\"reset\" class=\"c\" x=\"%d\" y=\"22\">"
	    "Reset zoom</text>\n",
	    MARGIN);
	fprintf(fp,
	    "<text id=\"search\" class=\"c\" x=\"%d\" y=\"22\" "
	    "text-anchor=\"end\">Search</text>\n",
	    IMAGE_W - MARGIN);
	fprintf(fp,
	    "<text id=\"matched\" x=\"%d\" y=\"%d\" "
	    "text-anchor=\"end\"> </text>\n",
	    IMAGE_W - MARGIN, height - 10);
	fprintf(fp, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", MARGIN,
	    height - 10);
}

/* Depth first, parents before children, largest first: the root is the
 * first frame, as the script expects.  Returns 0, or -1 (ENOMEM). */
static int
put_tree(FILE *fp, const struct flame *fl)
{
	uint32_t *stack, top = 0, base, c, t, l, r;

	if ((stack = calloc(fl->n, sizeof(*stack))) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	stack[top++] = 0;
	while (top > 0) {
		c = stack[--top];
		put_frame(fp, fl, &fl->nodes[c]);
		/* Push the children, then reverse them on the stack so
		 * that the largest is popped first. */
		base = top;
		for (c = fl->nodes[c].first; c != 0; c = fl->nodes[c - 1].next)
			stack[top++] = c - 1;
		for (l = base, r = top; l + 1 < r; l++, r--) {
			t = stack[l];
			stack[l] = stack[r - 1];
			stack[r - 1] = t;
		}
	}
	free(stack);
	return 0;
}

int
ht_flame_write(FILE *fp, struct ht_view *v)
{
	return ht_flame_write_as(fp, v, 0, 0.5);
}

int
ht_flame_write_as(FILE *fp, struct ht_view *v, int icicle, double min_px)
{
	struct flame fl;
	size_t i;
	int rc = -1, height;

	memset(&fl, 0, sizeof(fl));
	fl.v = v;
	fl.icicle = icicle;
	fl.parts = min_px > 0 && FRAMES_W / min_px >= 1 ?
	    (uint64_t)(FRAMES_W / min_px) :
	    MIN_PARTS;
	if (build(&fl) != 0 || layout(&fl) != 0)
		goto out;
	height = TOP + (int)(fl.max_depth + 1) * FRAME_H + BOTTOM;
	put_header(fp, &fl, height);
	if (put_tree(fp, &fl) != 0)
		goto out;
	fputs("</svg>\n", fp);
	rc = ferror(fp) ? -1 : 0;
out:
	for (i = 0; i < fl.n; i++)
		free(fl.nodes[i].own);
	free(fl.nodes);
	free(fl.cands);
	ht_view_index_free(&fl.index);
	return rc;
}
