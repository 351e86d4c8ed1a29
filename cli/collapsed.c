/*
 * Collapsed stacks (see collapsed.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "collapsed.h"
#include "text.h"

/* A byte of a frame's name as the format takes it: ';' would split the
 * frame, white space would end the stack. */
static void
put_byte(FILE *fp, int c)
{
	if (c == ';')
		putc(':', fp);
	else if (c <= ' ' || c == 0x7f)
		putc('_', fp);
	else
		putc(c, fp);
}

/* One frame's name, made safe for the format. */
static void
put_name(FILE *fp, const char *s)
{
	ht_json_put_text(fp, s, SIZE_MAX, put_byte, " ;");
}

int
ht_collapsed_write(FILE *fp, struct ht_view *v)
{
	const struct ht_sym_frame *fr;
	const struct ht_view_row *r;
	char buf[4200];
	uint64_t value;
	size_t i;
	int n, k, nfold;

	for (i = 0; i < v->nrows; i++) {
		if (i + HT_VIEW_AHEAD < v->nrows)
			ht_view_prefetch(&v->rows[i + HT_VIEW_AHEAD]);
		r = &v->rows[i];
		if ((value = ht_view_value(v, &r->f)) == 0)
			continue;
		if ((nfold = ht_view_fold(v, r, NULL)) < 0 ||
		    (n = ht_view_frames(v, r, &fr)) < 0)
			return -1;
		if (v->opts.group_by_tag) {
			put_name(fp, ht_view_tag_root(v, r, buf, sizeof(buf)));
			putc(';', fp);
		}
		if (n == 0)
			put_name(fp, ht_view_row_name(r, buf, sizeof(buf)));
		/* The outermost frame first, down to the first outside the
		 * allocator wrappers. */
		for (k = n - 1; k >= nfold; k--) {
			put_name(fp,
			    ht_view_frame_name(&fr[k], buf, sizeof(buf)));
			if (k > nfold)
				putc(';', fp);
		}
		fprintf(fp, " %" PRIu64 "\n", value);
	}
	return ferror(fp) ? -1 : 0;
}
