/*
 * The final profiles of attached processes that are gone (finals.h).
 */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "finals.h"
#include "proc.h"

#define MAX_DIRS 16

/* The directories to look in (finals.h), into dirs[MAX_DIRS] (each
 * PATH_MAX), without repeats: those remembered for any process (a child
 * that start --follow-forks profiles writes where its parent does), then
 * this user's.  Returns how many. */
static size_t
candidates(char dirs[][PATH_MAX])
{
	char state[PATH_MAX], rec[PATH_MAX + NAME_MAX + 2], line[PATH_MAX];
	char tail[16];
	unsigned long long start;
	struct dirent *de;
	size_t n = 0, i, j, k;
	long pid;
	DIR *dp;
	FILE *fp;

	if (ht_state_dir(state, sizeof(state), 0) == 0 &&
	    (dp = opendir(state)) != NULL) {
		while ((de = readdir(dp)) != NULL && n < MAX_DIRS - 2) {
			if (sscanf(de->d_name, "final.%ld.%llu%15s", &pid,
				&start, tail) != 3 ||
			    strcmp(tail, ".where") != 0)
				continue;
			snprintf(rec, sizeof(rec), "%s/%s", state, de->d_name);
			if ((fp = fopen(rec, "re")) == NULL)
				continue;
			if (fgets(line, sizeof(line), fp) != NULL &&
			    (k = strcspn(line, "\n")) > 0 && line[0] == '/') {
				line[k] = '\0';
				memcpy(dirs[n++], line, k + 1);
			}
			fclose(fp);
		}
		closedir(dp);
	}
	if (ht_state_dir(state, sizeof(state), 0) == 0)
		memcpy(dirs[n++], state, strlen(state) + 1);
	snprintf(dirs[n++], PATH_MAX, "/var/tmp/heaptool-%ld", (long)geteuid());
	/* Without repeats: the agent's directory is often this user's. */
	for (i = 0, k = 0; i < n; i++) {
		for (j = 0; j < k && strcmp(dirs[j], dirs[i]) != 0; j++)
			;
		if (j < k)
			continue;
		if (k != i)
			memcpy(dirs[k], dirs[i], strlen(dirs[i]) + 1);
		k++;
	}
	return k;
}

int
ht_final_find(pid_t pid, uint64_t start, char *path, size_t len, time_t *when)
{
	static char dirs[MAX_DIRS][PATH_MAX];
	char prefix[48], tail[16], file[PATH_MAX + NAME_MAX + 2];
	unsigned long long s;
	struct dirent *de;
	struct stat st;
	size_t n, i;
	int found = 0;
	DIR *dp;

	snprintf(prefix, sizeof(prefix), "final.%ld.", (long)pid);
	n = candidates(dirs);
	for (i = 0; i < n; i++) {
		if ((dp = opendir(dirs[i])) == NULL)
			continue;
		while ((de = readdir(dp)) != NULL) {
			if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 ||
			    sscanf(de->d_name + strlen(prefix), "%llu%15s", &s,
				tail) != 2 ||
			    strcmp(tail, ".heap") != 0 ||
			    (start != 0 && s != start))
				continue;
			if (fstatat(dirfd(dp), de->d_name, &st,
				AT_SYMLINK_NOFOLLOW) != 0 ||
			    !S_ISREG(st.st_mode) ||
			    (found && st.st_mtime < *when))
				continue;
			if ((size_t)snprintf(file, sizeof(file), "%s/%s",
				dirs[i], de->d_name) >= len)
				continue;
			memcpy(path, file, strlen(file) + 1);
			*when = st.st_mtime;
			found = 1;
		}
		closedir(dp);
	}
	return found ? 0 : -1;
}

/* Forget the records of processes that are gone and whose final profile
 * is gone too: nothing could use them. */
static void
prune(const char *state)
{
	char path[PATH_MAX], tail[16];
	unsigned long long start;
	struct dirent *de;
	struct ht_proc p;
	time_t when;
	long pid;
	DIR *dp;

	if ((dp = opendir(state)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		if (sscanf(de->d_name, "final.%ld.%llu%15s", &pid, &start,
			tail) != 3 ||
		    strcmp(tail, ".where") != 0 || pid <= 0 || pid > INT_MAX)
			continue;
		if (ht_proc_read((pid_t)pid, &p) == 0 ? p.start_time == start :
							errno != ENOENT)
			continue;
		if (ht_final_find((pid_t)pid, start, path, sizeof(path),
			&when) == 0)
			continue;
		unlinkat(dirfd(dp), de->d_name, 0);
	}
	closedir(dp);
}

int
ht_final_remember(pid_t pid, uint64_t start, const char *dir)
{
	char state[PATH_MAX], path[PATH_MAX + 64], line[PATH_MAX + 2];
	int n;

	if (ht_state_dir(state, sizeof(state), 1) != 0)
		return -1;
	prune(state);
	n = snprintf(path, sizeof(path), "%s/final.%ld.%" PRIu64 ".where",
	    state, (long)pid, start);
	if (n < 0 || (size_t)n >= sizeof(path) ||
	    (size_t)snprintf(line, sizeof(line), "%s\n", dir) >= sizeof(line)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return ht_write_atomic(path, (const uint8_t *)line, strlen(line));
}
