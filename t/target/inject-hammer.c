/*
 * Fixture of t/inject-t and t/t0023-attach-kill.sh: eight threads
 * hammering malloc, calloc, realloc and free while the main thread waits
 * in pthread_join, and a ninth that waits for a line on standard input to
 * stop them (or, with --until FILE, looks for FILE every 10 ms, sleeping in
 * nanosleep, whose restart goes through restart_syscall).
 *
 * Each worker repeats one round of seeded operations on 64 slots, checking
 * the contents of every block before it reallocates or frees it, and
 * hashing sizes and contents.  Every round of a thread yields the same
 * hash, so the result does not depend on how many rounds ran: it prints
 * "ready PID", and once stopped "rounds N bad B checksum X", where B counts
 * rounds whose hash differed and blocks found corrupted (0 expected) and X
 * combines the threads' hashes (equal with and without injection).  Then
 * it sleeps until killed, or with --until exits, 0 if B is 0.
 *
 * --sigusr1 installs a SIGUSR1 handler without SA_RESTART that counts the
 * signals (a storm of them must change nothing but the count, printed to
 * standard error): the waits that it interrupts with EINTR are resumed.
 */
#include <sys/prctl.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NWORKER 8
#define NSLOT	64
#define NOPS	4000

struct worker {
	pthread_t t;
	unsigned id;
	uint64_t hash;
	unsigned long rounds;
	unsigned long bad;
};

static struct worker workers[NWORKER];
static volatile int stop;
static const char *until;
static volatile sig_atomic_t nsig;

static void
on_usr1(int sig)
{
	(void)sig;
	nsig++;
}

static uint64_t
rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t
mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ULL;
}

static void
fill(unsigned char *p, size_t n, unsigned char v)
{
	memset(p, v, n);
}

/* 1 if the block holds v throughout. */
static int
check(const unsigned char *p, size_t n, unsigned char v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static uint64_t
round_once(struct worker *w)
{
	unsigned char *slot[NSLOT] = { 0 };
	size_t size[NSLOT] = { 0 };
	unsigned char val[NSLOT] = { 0 };
	uint64_t s = 0x9e3779b97f4a7c15ULL * (w->id + 1), h = w->id;
	uint64_t r;
	size_t n;
	int i, k;

	for (i = 0; i < NOPS; i++) {
		r = rng(&s);
		k = (int)(r % NSLOT);
		n = 1 + (size_t)(r >> 8) % (r % 13 == 0 ? 20000 : 300);
		if (slot[k] != NULL && !check(slot[k], size[k], val[k]))
			w->bad++;
		switch ((r >> 40) % 4) {
		case 0:
			free(slot[k]);
			slot[k] = malloc(n);
			break;
		case 1:
			free(slot[k]);
			slot[k] = calloc(1, n);
			if (slot[k] != NULL && !check(slot[k], n, 0))
				w->bad++;
			break;
		case 2:
			slot[k] = realloc(slot[k], n);
			if (slot[k] != NULL && size[k] > 0 &&
			    !check(slot[k], size[k] < n ? size[k] : n, val[k]))
				w->bad++;
			break;
		default:
			free(slot[k]);
			slot[k] = NULL;
			size[k] = 0;
			h = mix(h, 0xf1ee);
			continue;
		}
		if (slot[k] == NULL) {
			w->bad++;
			continue;
		}
		size[k] = n;
		val[k] = (unsigned char)(1 + r % 251);
		fill(slot[k], n, val[k]);
		h = mix(h, n);
		h = mix(h, val[k]);
	}
	for (k = 0; k < NSLOT; k++) {
		if (slot[k] != NULL && !check(slot[k], size[k], val[k]))
			w->bad++;
		free(slot[k]);
	}
	return h;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	uint64_t h;

	do {
		h = round_once(w);
		if (w->rounds == 0)
			w->hash = h;
		else if (h != w->hash)
			w->bad++;
		w->rounds++;
	} while (!__atomic_load_n(&stop, __ATOMIC_RELAXED));
	return NULL;
}

static void *
control(void *arg)
{
	struct timespec ts = { 0, 10 * 1000000 };
	char c;

	(void)arg;
	if (until != NULL)
		while (access(until, F_OK) != 0)
			(void)nanosleep(&ts, NULL);
	else
		while (read(0, &c, 1) == 1 && c != '\n')
			;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t ctl;
	uint64_t sum = 0;
	unsigned long rounds = 0, bad = 0;
	unsigned i;
	int a;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--until") == 0 && a + 1 < argc)
			until = argv[++a];
		else if (strcmp(argv[a], "--sigusr1") == 0) {
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_usr1;
			sigaction(SIGUSR1, &sa, NULL);
		} else {
			fprintf(stderr,
			    "usage: inject-hammer [--until FILE] "
			    "[--sigusr1]\n");
			return 2;
		}
	}
	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pthread_create(&ctl, NULL, control, NULL) != 0)
		return 1;
	for (i = 0; i < NWORKER; i++) {
		workers[i].id = i;
		if (pthread_create(&workers[i].t, NULL, work, &workers[i]) != 0)
			return 1;
	}
	printf("ready %d\n", (int)getpid());
	for (i = 0; i < NWORKER; i++) {
		pthread_join(workers[i].t, NULL);
		sum = mix(sum, workers[i].hash);
		rounds += workers[i].rounds;
		bad += workers[i].bad;
	}
	pthread_join(ctl, NULL);
	printf("rounds %lu bad %lu checksum %016llx\n", rounds, bad,
	    (unsigned long long)sum);
	if (until != NULL) {
		fprintf(stderr, "signals %d\n", (int)nsig);
		return bad == 0 ? 0 : 1;
	}
	for (;;)
		pause();
}
