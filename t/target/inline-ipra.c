/*
 * Fixture of t/t0059-inline-ipra.sh: an allocator whose callers rely on
 * the registers it leaves.  tc_malloc (a bump arena) and tc_free (a count)
 * are leaves, and work(), in the same unit, built -O2 without noipa: GCC's
 * -fipa-ra sees that they touch almost no register and keeps work()'s
 * values in call-clobbered ones (rcx, rsi, r8-r11) across the calls.  A
 * hook, which may clobber any of them, would change work()'s checksum or
 * crash it; the inline backend must refuse both functions.
 *
 * It prints "ready" (after prctl(PR_SET_PTRACER_ANY)), then reads commands,
 * one a line:
 *   work N    N rounds of tc_malloc, arithmetic on 4 values, tc_free;
 *             prints "checksum HEX" (a function of N only)
 *   quit      exit 0 (so does end of file)
 */
#include <sys/prctl.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define ARENA (16u << 20)

void *tc_malloc(size_t n);
void tc_free(void *p);

_Alignas(64) static unsigned char arena[ARENA];
static size_t used;
static uint64_t nfree;

/* noinline only: a call, whose clobbers GCC knows. */
__attribute__((noinline)) void *
tc_malloc(size_t n)
{
	size_t at = used;

	used = at + ((n + 15) & ~(size_t)15);
	if (used > ARENA) {
		used = (n + 15) & ~(size_t)15;
		at = 0;
	}
	return arena + at;
}

__attribute__((noinline)) void
tc_free(void *p)
{
	if (p != NULL)
		nfree++;
}

/*
 * A free that tail-jumps through a pointer it loads (mov g(%rip), then
 * mov 8(%rax), then jmp *%rax), as chromium's allocator shim does: its
 * target is unknown to any compiler, so its callers assume every
 * call-clobbered register lost, and it is hooked inline.  Written in
 * assembly, since GCC would fold the last two into jmp *8(%rax).
 */
struct ip_dispatch {
	void *unused;
	void (*del)(void *);
};
static uint64_t ndelete;

static void
count_delete(void *p)
{
	if (p != NULL)
		ndelete++;
}

static struct ip_dispatch ip_table = { NULL, count_delete };
struct ip_dispatch *ip_dispatch = &ip_table;
void tc_delete(void *p);
__asm__(".text\n"
	".globl tc_delete\n"
	".type tc_delete, @function\n"
	"tc_delete:\n"
	"\tmovq ip_dispatch(%rip), %rax\n"
	"\tmovq 8(%rax), %rax\n"
	"\tjmp *%rax\n"
	".size tc_delete, .-tc_delete\n");

/* Four values live across each call, more than the call-saved registers
 * GCC has left once the loop's own are taken. */
__attribute__((noinline)) static uint64_t
work(unsigned rounds, uint64_t seed)
{
	uint64_t a = seed, b = seed * 3 + 1, c = seed ^ 0x55, d = 7, s = 0;
	unsigned i;

	for (i = 0; i < rounds; i++) {
		unsigned char *p = tc_malloc(16 + (i & 63));

		p[0] = (unsigned char)a;
		a = a * 6364136223846793005ULL + b;
		b ^= c + i;
		c += d * i;
		d = d * 31 + (a >> 7);
		s += a ^ b ^ c ^ d ^ p[0];
		tc_free(p);
	}
	return s;
}

int
main(void)
{
	char line[64];
	unsigned n;

	(void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "work %u", &n) == 1)
			printf("checksum %016llx\n",
			    (unsigned long long)work(n, n));
		else if (sscanf(line, "del %u", &n) == 1) {
			static unsigned char block[16];
			unsigned i;

			for (i = 0; i < n; i++)
				tc_delete(block);
			printf("deleted %llu\n", (unsigned long long)ndelete);
		} else if (strcmp(line, "quit\n") == 0)
			break;
	}
	return 0;
}
