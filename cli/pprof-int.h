/*
 * The pprof export's parts (pprof.c, the profile; pprof-table.c, its
 * string and function tables): profile.proto's field numbers, the state of
 * one export, and what the tables give the rest.  Internal to the export.
 */
#ifndef HT_PPROF_INT_H
#define HT_PPROF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "pb.h"
#include "view.h"

/* The modules whose unseen allocators become comments. */
#define MAX_UNSEEN 8

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,

	LABEL_KEY = 1,
	LABEL_STR = 2,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

struct pstring {
	char *s;
	size_t len;
	int64_t id;
};

struct pfunction {
	int64_t name;
	int64_t filename;
	uint64_t id;
};

/* What the frames of a mapping told about its symbols. */
struct pmapping {
	int functions;
	int filenames;
	int line_numbers;
};

/*
 * The locations by address: open addressing over a table sized once, for
 * every frame of the view (no address more), at most 80% full; a
 * location's id is its slot + 1, so the table holds the addresses only.
 * Address 0 (an empty slot's mark) has the id after the last slot.
 */
struct plocs {
	uint64_t *slots;
	size_t cap;
	int have_zero;
};

struct pprof {
	struct ht_view *v;
	struct ht_pb out; /* fields not yet compressed */
	struct ht_pb_gz gz;
	struct ht_pb loc, line, sample, packed; /* scratch messages */
	int64_t nstrings;			/* entries written */
	struct pstring *strings;		/* those that may repeat */
	size_t nkept;
	size_t strings_cap;
	struct ht_view_index string_index;
	uint64_t nfunctions; /* written */
	struct pfunction *functions;
	size_t nfkept;
	size_t functions_cap;
	struct ht_view_index function_index;
	struct plocs locs;
	uint64_t made_up; /* ids of locations for rows without frames */
	/* The locations of addresses without their folded frames, by
	 * address (how many are folded depends on the address alone). */
	uint64_t *folded_addrs, *folded_ids;
	size_t nfolded, folded_cap;
	struct ht_view_index folded_index;
	struct pmapping *mappings; /* one per profile module */
	size_t *by_start;	   /* module indexes by start */
	/* A delta (ht_pprof_write_delta): each row's values, signed, and
	 * the time the delta spans; NULL for a profile's own figures. */
	const int64_t (*values)[4];
	uint64_t delta_start_ns, delta_ns;
	/* For the index callbacks: the key being looked up. */
	const char *key_s;
	size_t key_len;
	struct pfunction key_function;
	uint64_t key_addr;
};

/* Compress what is buffered once there is at least at_least of it. */
void ht_pprof_flush(struct pprof *pp, size_t at_least);

/* The index of s in the string table, written if new; -1 when out of
 * memory. */
int64_t ht_pprof_intern(struct pprof *pp, const char *s);

/* The id of the function (name, file), written if new (unique: written
 * without looking it up, a name that cannot repeat); or 0 when out of
 * memory. */
uint64_t ht_pprof_function(struct pprof *pp, const char *name, const char *file,
    int unique);

#endif
