/*
 * A second malloc for t/got-t: got-user.so is bound to it (opened with
 * RTLD_DEEPBIND, its own dependencies come first), so its malloc slot's
 * original differs from everyone else's.  It counts its calls and hands
 * them to glibc.
 */
#include <stddef.h>

extern void *__libc_malloc(size_t);

unsigned long got_fake_calls;

void *
malloc(size_t n)
{
	__atomic_add_fetch(&got_fake_calls, 1, __ATOMIC_RELAXED);
	return __libc_malloc(n);
}
