/*
 * The process's memory through /proc/PID/mem.  Writes go through the
 * kernel's forced access (FOLL_FORCE), as a debugger's do, so they reach
 * read-only text and the agent's read-and-execute areas: a private page
 * written so is copied first, the file behind it never changes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "inline-int.h"

static int
mem_open(pid_t pid, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/mem", (long)pid);
	return open(path, flags | O_CLOEXEC);
}

static int
mem_io(pid_t pid, uint64_t addr, void *buf, size_t len, int wr)
{
	size_t done = 0;
	ssize_t n;
	int fd, e;

	if ((fd = mem_open(pid, wr ? O_RDWR : O_RDONLY)) < 0)
		return -1;
	while (done < len) {
		n = wr ? pwrite(fd, (const char *)buf + done, len - done,
			     (off_t)(addr + done)) :
			 pread(fd, (char *)buf + done, len - done,
			     (off_t)(addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : EIO;
			close(fd);
			errno = e;
			return -1;
		}
		done += (size_t)n;
	}
	close(fd);
	return 0;
}

int
ht_inl_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	return mem_io(pid, addr, buf, len, 0);
}

int
ht_inl_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	return mem_io(pid, addr, (void *)(uintptr_t)buf, len, 1);
}

int
ht_inl_read_str(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	size_t i;

	if (len == 0 || ht_inl_read(pid, addr, buf, len - 1) != 0) {
		/* The string may end near the end of a mapping. */
		for (i = 0; i + 1 < len; i++)
			if (ht_inl_read(pid, addr + i, &buf[i], 1) != 0 ||
			    buf[i] == '\0')
				break;
		if (i + 1 >= len || buf[i] != '\0')
			return -1;
		return 0;
	}
	buf[len - 1] = '\0';
	return memchr(buf, '\0', len) != NULL ? 0 : -1;
}
