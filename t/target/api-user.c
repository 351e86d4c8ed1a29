/*
 * Fixture of t/t0042-api.sh: a program linked with the agent that profiles
 * itself through include/heaptool.h.  Usage: api-user DIR.  It checks the
 * API's answers itself (each "ok"/"not ok" line is one check) and leaves in
 * DIR what the test reads with heaptool report:
 *   first.heap   a dump while a rate-1 session runs: 10 blocks of 1000 bytes
 *                in use at api_keep, 5 blocks of 3000 bytes allocated and
 *                freed at api_temp
 *   second.heap  a dump after stop: the same, although 7 more blocks were
 *                allocated at api_keep after the stop
 *   thr.N.heap   four dumps written at once from four threads
 *   auto.PID.SEQ.heap  the dumps of heaptool_enable_dumps(DIR/auto, 0,
 *                64 KiB, 0) while 100 blocks of 4096 bytes are allocated
 *   real/, link (to real), ww/ (mode 0777)  prefixes it must refuse
 * Exit status 0 when every check passed.
 */
#include <sys/stat.h>

#include <errno.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "heaptool.h"

static int failed;
static uint64_t sum;
static volatile size_t one = 1;
static const char *dir;

static void
check(int cond, const char *what)
{
	printf("%s - %s\n", cond ? "ok" : "not ok", what);
	failed |= !cond;
}

FX_NOINLINE static void
api_keep(size_t n, size_t size)
{
	size_t i;

	for (i = 0; i < n; i++) {
		void *p = malloc(size * one); /* SITE api_keep */

		if (p == NULL)
			exit(2);
		fx_fill(p, size, i, &sum);
	}
}

FX_NOINLINE static void
api_temp(size_t n, size_t size)
{
	size_t i;

	for (i = 0; i < n; i++) {
		void *p = malloc(size * one); /* SITE api_temp */

		if (p == NULL)
			exit(2);
		fx_fill(p, size, i, &sum);
		free(p);
	}
}

static int
count_prefix(const char *prefix)
{
	DIR *d;
	struct dirent *e;
	int c = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		c += strncmp(e->d_name, prefix, strlen(prefix)) == 0 &&
		    strstr(e->d_name, ".tmp.") == NULL;
	closedir(d);
	return c;
}

static void *
dumper(void *arg)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/thr.%d.heap", dir,
	    (int)(uintptr_t)arg);
	return (void *)(uintptr_t)(heaptool_dump(path) == 0);
}

int
main(int argc, char **argv)
{
	static const struct {
		int code;
		const char *msg;
	} codes[] = {
		{ HEAPTOOL_OK, "success" },
		{ HEAPTOOL_EINVAL, "invalid argument" },
		{ HEAPTOOL_ERUNNING, "a session is running" },
		{ HEAPTOOL_ENOTRUNNING, "no session is running" },
		{ HEAPTOOL_ENOSESSION, "no session was started" },
		{ HEAPTOOL_EDETACHED,
		    "the profiler was detached from this process" },
		{ HEAPTOOL_EDISABLED,
		    "the profiler is disabled in this process" },
		{ HEAPTOOL_ENOMEM, "the profiler could not map its memory" },
		{ HEAPTOOL_EIO,
		    "the profile could not be written (see errno)" },
		{ HEAPTOOL_EPREFIX,
		    "the dump prefix cannot be used (see errno)" },
		{ HEAPTOOL_EHOOK, "the profiler could not install its hooks" },
	};
	char path[512];
	pthread_t t[4];
	size_t i;
	void *r;
	int all, n;

	if (argc != 2)
		return 2;
	dir = argv[1];
	for (i = 0, all = 1; i < sizeof(codes) / sizeof(codes[0]); i++)
		all &= strcmp(heaptool_strerror(codes[i].code), codes[i].msg) ==
		    0;
	check(all, "heaptool_strerror names every code of heaptool.h");
	check(strcmp(heaptool_strerror(-99), "unknown heaptool error") == 0,
	    "heaptool_strerror of an unknown code");

	check(heaptool_stop() == HEAPTOOL_ENOTRUNNING,
	    "stop before any start: HEAPTOOL_ENOTRUNNING");
	snprintf(path, sizeof(path), "%s/none.heap", dir);
	check(heaptool_dump(path) == HEAPTOOL_ENOSESSION,
	    "dump before any start: HEAPTOOL_ENOSESSION");
	check(heaptool_start(0) == HEAPTOOL_EINVAL,
	    "start(0): HEAPTOOL_EINVAL");
	check(heaptool_start(1) == 0, "start(1)");
	check(heaptool_start(1) == HEAPTOOL_ERUNNING,
	    "start while running: HEAPTOOL_ERUNNING");
	api_keep(10, 1000);
	api_temp(5, 3000);
	snprintf(path, sizeof(path), "%s/first.heap", dir);
	check(heaptool_dump(path) == 0, "dump to first.heap");
	check(heaptool_dump(NULL) == HEAPTOOL_EPREFIX,
	    "dump(NULL) without a prefix: HEAPTOOL_EPREFIX");
	check(heaptool_stop() == 0, "stop");
	api_keep(7, 1000);
	snprintf(path, sizeof(path), "%s/second.heap", dir);
	check(heaptool_dump(path) == 0, "dump to second.heap after stop");
	check(heaptool_dump(path) == 0, "dump again to the same path");
	snprintf(path, sizeof(path), "%s/no/such/dir/x.heap", dir);
	errno = 0;
	check(heaptool_dump(path) == HEAPTOOL_EIO && errno == ENOENT,
	    "dump into a missing directory: HEAPTOOL_EIO, errno ENOENT");
	check(heaptool_enable_dumps(dir, 0, 0, 0) == HEAPTOOL_ENOTRUNNING,
	    "enable_dumps while stopped: HEAPTOOL_ENOTRUNNING");

	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, dumper, (void *)i) != 0)
			return 2;
	for (i = 0, all = 1; i < 4; i++)
		all &= pthread_join(t[i], &r) == 0 && r != NULL;
	check(all, "four threads dump at once");

	check(heaptool_start(4096) == 0, "start(4096)");
	snprintf(path, sizeof(path), "%s/no/such/dir/auto", dir);
	check(heaptool_enable_dumps(path, 0, 65536, 0) == HEAPTOOL_EPREFIX,
	    "enable_dumps into a missing directory: HEAPTOOL_EPREFIX");
	snprintf(path, sizeof(path), "%s/real", dir);
	if (mkdir(path, 0700) != 0)
		return 2;
	snprintf(path, sizeof(path), "%s/link", dir);
	if (symlink("real", path) != 0)
		return 2;
	snprintf(path, sizeof(path), "%s/link/auto", dir);
	errno = 0;
	check(heaptool_enable_dumps(path, 0, 65536, 0) == HEAPTOOL_EPREFIX &&
		errno == ELOOP,
	    "enable_dumps through a symbolic link: HEAPTOOL_EPREFIX, ELOOP");
	snprintf(path, sizeof(path), "%s/ww", dir);
	if (mkdir(path, 0700) != 0 || chmod(path, 0777) != 0)
		return 2;
	snprintf(path, sizeof(path), "%s/ww/auto", dir);
	errno = 0;
	check(heaptool_enable_dumps(path, 0, 65536, 0) == HEAPTOOL_EPREFIX &&
		errno == EPERM,
	    "enable_dumps into a directory anyone may write in, not sticky: "
	    "HEAPTOOL_EPREFIX, EPERM");
	check(heaptool_enable_dumps(NULL, 0, 65536, 0) == HEAPTOOL_EINVAL,
	    "enable_dumps with a trigger and no prefix: HEAPTOOL_EINVAL");
	snprintf(path, sizeof(path), "%s/auto", dir);
	check(heaptool_enable_dumps(path, 0, 65536, 0) == 0,
	    "enable_dumps every 64 KiB");
	api_keep(100, 4096);
	/* The agent's thread writes them: wait (60 s at most). */
	for (n = 0; n < 1200 && count_prefix("auto.") == 0; n++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	check(count_prefix("auto.") > 0, "every-bytes dumps were written");
	check(heaptool_dump(NULL) == 0, "dump(NULL) with a prefix");
	check(heaptool_stop() == 0, "stop");
	check(heaptool_enable_dumps(NULL, 0, 0, 0) == HEAPTOOL_ENOTRUNNING,
	    "enable_dumps(NULL) while stopped: HEAPTOOL_ENOTRUNNING");
	printf("sum %016llx\n", (unsigned long long)sum);
	return failed;
}
