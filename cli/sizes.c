/* The session's allocations by size, for the reports (sizes.h). */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>

#include "size.h"
#include "sizes.h"
#include "text.h"

/* Bucket k's sizes: from 2^k (0 for bucket 0) to 2^(k+1) - 1. */
static uint64_t
bucket_from(unsigned k)
{
	return k == 0 ? 0 : (uint64_t)1 << k;
}

static uint64_t
bucket_to(unsigned k)
{
	return k >= 63 ? UINT64_MAX : ((uint64_t)1 << (k + 1)) - 1;
}

/* The allocations the histogram counts, all buckets. */
static uint64_t
total(const struct ht_sizes_rec *s)
{
	uint64_t n = 0;
	unsigned k;

	for (k = 0; k < s->nbuckets; k++)
		n += s->objects[k];
	return n;
}

int
ht_sizes_text(FILE *fp, const struct ht_view *v, int raw)
{
	const struct ht_sizes_rec *s = &v->prof->sizes;
	char a[32], b[32], c[32], range[72];
	uint64_t all = total(s);
	unsigned k;

	fputc('\n', fp);
	if (s->nbuckets == 0) {
		fputs("allocation sizes: none recorded (a profile older than "
		      "format version 9, a backend that keeps none, or no "
		      "sample)\n",
		    fp);
		return ferror(fp) ? -1 : 0;
	}
	fprintf(fp, "allocation sizes (%s)\n",
	    v->exact ? "exact" : "estimates from the samples");
	fprintf(fp, "%25s %14s %12s %7s\n", "size", "allocations", "bytes",
	    "share");
	for (k = 0; k < s->nbuckets; k++) {
		if (s->objects[k] == 0 && s->bytes[k] == 0)
			continue;
		/* "1.00 KiB..<2.00 KiB": the next bucket's first size. */
		snprintf(range, sizeof(range), "%s..<%s",
		    ht_text_size(raw, bucket_from(k), a, sizeof(a)),
		    k >= 63 ?
			"2^64" :
			ht_text_size(raw, bucket_to(k) + 1, b, sizeof(b)));
		fprintf(fp, "%25s %14" PRIu64 " %12s %6.1f%%\n", range,
		    s->objects[k], ht_text_size(raw, s->bytes[k], c, sizeof(c)),
		    all > 0 ? 100.0 * (double)s->objects[k] / (double)all : 0);
	}
	return ferror(fp) ? -1 : 0;
}

void
ht_sizes_json(struct ht_json *j, const struct ht_view *v)
{
	const struct ht_sizes_rec *s = &v->prof->sizes;
	unsigned k;

	ht_json_array_begin(j, "sizes");
	for (k = 0; k < s->nbuckets; k++) {
		if (s->objects[k] == 0 && s->bytes[k] == 0)
			continue;
		ht_json_object_line(j, NULL);
		ht_json_uint(j, "from", bucket_from(k));
		ht_json_uint(j, "to", bucket_to(k));
		ht_json_uint(j, "allocations", s->objects[k]);
		ht_json_uint(j, "bytes", s->bytes[k]);
		ht_json_object_end(j);
	}
	ht_json_array_end(j);
}

void
ht_sizes_html(FILE *fp, const struct ht_view *v)
{
	const struct ht_sizes_rec *s = &v->prof->sizes;
	char a[32], b[32], c[32];
	uint64_t all = total(s);
	unsigned k;

	fputs("<h2>Allocation sizes</h2>\n", fp);
	if (s->nbuckets == 0) {
		fputs("<p class=\"note\">None recorded: the profile is older "
		      "than format version 9, or its backend keeps none.</p>\n",
		    fp);
		return;
	}
	fputs("<table id=\"sizes\">\n<tr><th>size</th><th>allocations</th>"
	      "<th>bytes</th><th>share</th></tr>\n",
	    fp);
	for (k = 0; k < s->nbuckets; k++) {
		if (s->objects[k] == 0 && s->bytes[k] == 0)
			continue;
		fprintf(fp,
		    "<tr class=\"size\"><td class=\"n\">%s..&lt;%s</td><td "
		    "class=\"n\">%" PRIu64 "</td><td class=\"n\">%s</td>"
		    "<td class=\"n\">%.1f%%</td></tr>\n",
		    ht_size_format(bucket_from(k), a, sizeof(a)),
		    k >= 63 ? "2^64" :
			      ht_size_format(bucket_to(k) + 1, b, sizeof(b)),
		    s->objects[k], ht_size_format(s->bytes[k], c, sizeof(c)),
		    all > 0 ? 100.0 * (double)s->objects[k] / (double)all : 0);
	}
	fputs("</table>\n", fp);
}
