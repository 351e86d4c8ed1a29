/*
 * Fixture of t0022-attach-seccomp: a process under a seccomp filter (one
 * that allows everything, so the test can also attach on purpose), which
 * prints "ready" after prctl(PR_SET_PTRACER_ANY) and then blocks reading
 * stdin; at end of input it prints "attach-seccomp: done" and exits 0.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fixture.h"

int
main(void)
{
	struct sock_filter allow[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { 1, allow };
	char buf[256];
	void *p;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("attach-seccomp: seccomp");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0) {
		p = malloc(1000);
		free(p);
	}
	printf("attach-seccomp: done\n");
	return 0;
}
