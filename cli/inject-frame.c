/*
 * What the remote call leaves on the thread's stack, and the code it runs
 * (see inject-int.h for the steps and why).
 *
 * Below the red zone, from the top down: the thread's XSAVE area (64-byte
 * aligned, as XRSTOR from user memory requires, or rt_sigreturn fails with
 * SIGSEGV), an rt_sigframe holding the rest of the thread's state, then
 * the trampoline's data block (addresses in, results out, the library's
 * path); the trampoline's own stack starts below it.  The frame is laid
 * out as the kernel lays out its own (get_sigframe: the frame at 8 mod 16,
 * its first word the return address), so that a "ret" with rsp at the
 * frame enters __restore_rt with rsp - 8 at the frame, which is where
 * rt_sigreturn looks for it.
 *
 * The trampoline is assembled here and copied, position-independent, into
 * the page the target maps for it; all it needs is found through r12, the
 * data block on the thread's stack, so that the page holds code only.
 */
#include "config.h"

#include <sys/syscall.h>

#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inject-int.h"

#define RED_ZONE	  128
#define FXSAVE_SIZE	  512
#define XSAVE_HDR	  512 /* the header after the legacy area */
#define SW_BYTES	  464 /* fx_sw_bytes in the legacy area */
#define XFEATURE_TILEDATA 18  /* AMX: dynamic, per-task permission */

/* uc_flags, as the kernel sets them (arch/x86/include/uapi/asm/
 * ucontext.h): an XSAVE area, a valid ss to restore as it is. */
#define UC_FP_XSTATE	     0x1
#define UC_SIGCONTEXT_SS     0x2
#define UC_STRICT_RESTORE_SS 0x4

/* Not 0 (enabled), SS_ONSTACK or SS_DISABLE: do_sigaltstack refuses it
 * with EINVAL, which restore_altstack ignores. */
#define SS_INVALID 3

/* The kernel's restart codes (include/linux/errno.h). */
#define ERESTARTSYS	      512
#define ERESTARTNOINTR	      513
#define ERESTARTNOHAND	      514
#define ERESTART_RESTARTBLOCK 516

/* The kernel's 64-bit rt_sigframe (arch/x86/include/asm/sigframe.h), with
 * its struct ucontext (a 64-bit sigset_t) and struct sigcontext. */
struct ksigcontext {
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate;
	uint64_t reserved1[8];
};

struct kstack {
	uint64_t ss_sp;
	int32_t ss_flags;
	int32_t pad;
	uint64_t ss_size;
};

struct kucontext {
	uint64_t uc_flags;
	uint64_t uc_link;
	struct kstack uc_stack;
	struct ksigcontext uc_mcontext;
	uint64_t uc_sigmask;
};

struct rt_sigframe {
	uint64_t pretcode;
	struct kucontext uc;
	unsigned char info[128];
};

/* The data block, at the trampoline's initial rsp; TD_* are its offsets
 * for the assembler. */
struct tramp_data {
	uint64_t dlopen;  /* in */
	uint64_t dlerror; /* in, 0 if none */
	uint64_t gadget;  /* in: "syscall; ret" */
	uint64_t frame;	  /* in: the rt_sigframe */
	uint64_t res;	  /* in: the interrupted call's rax */
	uint64_t rip;	  /* in: and its rip */
	uint64_t mask;	  /* in: the thread's own signal mask */
	uint64_t handle;  /* out: dlopen's result */
	uint64_t err;	  /* out: dlerror's */
	uint64_t pending; /* scratch: rt_sigpending */
	uint64_t sa[4];	  /* scratch: a kernel struct sigaction */
	char path[];
};

#define TD_DLOPEN  0
#define TD_DLERROR 8
#define TD_GADGET  16
#define TD_FRAME   24
#define TD_RES	   32
#define TD_RIP	   40
#define TD_MASK	   48
#define TD_HANDLE  56
#define TD_ERR	   64
#define TD_PENDING 72
#define TD_SA	   80
#define TD_PATH	   112
#define F_RAX	   152 /* the frame's rax and rip */
#define F_RIP	   176

_Static_assert(sizeof(struct ksigcontext) == 256, "struct sigcontext");
_Static_assert(offsetof(struct kucontext, uc_sigmask) == 296, "ucontext");
_Static_assert(sizeof(struct rt_sigframe) == 440, "rt_sigframe");
_Static_assert(offsetof(struct tramp_data, gadget) == TD_GADGET &&
	offsetof(struct tramp_data, frame) == TD_FRAME &&
	offsetof(struct tramp_data, res) == TD_RES &&
	offsetof(struct tramp_data, rip) == TD_RIP &&
	offsetof(struct tramp_data, mask) == TD_MASK &&
	offsetof(struct tramp_data, handle) == TD_HANDLE &&
	offsetof(struct tramp_data, err) == TD_ERR &&
	offsetof(struct tramp_data, pending) == TD_PENDING &&
	offsetof(struct tramp_data, sa) == TD_SA &&
	offsetof(struct tramp_data, path) == TD_PATH,
    "tramp_data");
_Static_assert(offsetof(struct rt_sigframe, uc.uc_mcontext.rax) == F_RAX &&
	offsetof(struct rt_sigframe, uc.uc_mcontext.rip) == F_RIP,
    "F_*");
_Static_assert(RTLD_NOW == 2 && SA_RESTART == 0x10000000 &&
	offsetof(struct tramp_data, dlerror) == TD_DLERROR,
    "the trampoline's constants");

#define S(x)  #x
#define XS(x) S(x)

/*
 * The trampoline.  dlopen and dlerror are called with rsp 16-byte aligned;
 * r12 (callee-saved) holds the data block throughout.  The EINTR decision
 * follows the kernel's handle_signal: with a handler about to run (the
 * lowest pending signal the thread's own mask lets through whose action
 * is neither SIG_DFL nor SIG_IGN), -ERESTARTNOHAND and
 * -ERESTART_RESTARTBLOCK become -EINTR, and -ERESTARTSYS too unless that
 * handler has SA_RESTART.  The signals stay pending: rt_sigreturn
 * restores the mask and the kernel delivers them.  The end: munmap of the
 * trampoline's own page, issued from the libc's "syscall; ret", whose ret
 * takes __restore_rt from the frame's first word.
 */
__asm__(
    ".pushsection .text\n"
    ".globl ht_inj_tramp\n"
    ".hidden ht_inj_tramp\n"
    ".globl ht_inj_tramp_end\n"
    ".hidden ht_inj_tramp_end\n"
    "ht_inj_tramp:\n"
    "	lea	" XS(
	TD_PATH) "(%r12), %rdi\n"
		 "	mov	$2, %esi\n"
		 "	call	*" XS(
		     TD_DLOPEN) "(%r12)\n"
				"	mov	%rax, " XS(
				    TD_HANDLE) "(%r12)\n"
					       "	test	%rax, %rax\n"
					       "	jnz	1f\n"
					       "	mov	" XS(
						   TD_DLERROR) "(%r12), %rax\n"
							       "	test"
							       "	%rax, "
							       "%rax\n"
							       "	jz"
							       "	1f\n"
							       "	call"
							       "	*%rax\n"
							       "	mov"
							       "	%rax,"
							       " " XS(
								   TD_ERR) "(%"
									   "r12"
									   ")\n"
									   "1:	mov	" XS(
									       TD_RES) "(%r12), %rax\n"
										       "	cmp	$-" XS(
											   ERESTARTSYS) ", %rax\n"
													"	je	2f\n"
													"	cmp	$-" XS(ERESTARTNOHAND) ", %rax\n"
																	       "	je	2f\n"
																	       "	cmp	$-" XS(ERESTART_RESTARTBLOCK) ", %rax\n"
																							      "	jne	9f\n"
																							      "2:	lea	" XS(TD_PENDING) "(%r12), %rdi\n"
																												 "	mov	$8, %esi\n"
																												 "	mov	$" XS(SYS_rt_sigpending) ", %eax\n"
																																	 "	syscall\n"
																																	 "	test	%rax, %rax\n"
																																	 "	jnz	9f\n"
																																	 "	mov	" XS(TD_MASK) "(%r12), %rbx\n"
																																				      "	not	%rbx\n"
																																				      "	and	" XS(TD_PENDING) "(%r12), %rbx\n"
																																								 "3:	test	%rbx, %rbx\n"
																																								 "	jz	9f\n"
																																								 "	bsf	%rbx, %rdi\n"
																																								 "	btr	%rdi, %rbx\n"
																																								 "	inc	%rdi\n"
																																								 "	xor	%esi, %esi\n"
																																								 "	lea	" XS(TD_SA) "(%r12), %rdx\n"
																																											    "	mov	$8, %r10d\n"
																																											    "	mov	$" XS(SYS_rt_sigaction) ", %eax\n"
																																																"	syscall\n"
																																																"	test	%rax, %rax\n"
																																																"	jnz	3b\n"
																																																"	cmpq	$1, " XS(
																																																    TD_SA) "(%r12)\n"
																																																	   "	jbe	3b\n"
																																																	   "	cmpq	$-" XS(
																																																	       ERESTARTSYS) ", " XS(TD_RES) "(%r12)\n"
																																																					    "	jne	4f\n"
																																																					    "	testl	$0x10000000, " XS(TD_SA) "+8(%r12)\n"
																																																										 "	jnz	9f\n"
																																																										 "4:	mov	" XS(
																																																										     TD_FRAME) "(%r12), %rax\n"
																																																											       "	movq	$-" XS(
																																																												   EINTR) ", " XS(F_RAX) "(%rax)\n"
																																																															 "	mov	" XS(TD_RIP) "(%r12), %rcx\n"
																																																																		     "	mov	%rcx, " XS(
																																																																			 F_RIP) "(%rax)\n"
																																																																				"9:	lea	ht_inj_tramp(%rip), %rdi\n"
																																																																				"	mov	$4096, %esi\n"
																																																																				"	mov	$" XS(SYS_munmap) ", %eax\n"
																																																																								  "	mov	" XS(
																																																																								      TD_FRAME) "(%r12), %rsp\n"
																																																																										"	jmp	*" XS(
																																																																										    TD_GADGET) "(%r12)\n"
																																																																											       "ht_inj_tramp_end:\n"
																																																																											       ".popsection\n");

extern const unsigned char ht_inj_tramp[], ht_inj_tramp_end[];

const unsigned char *
ht_inj_tramp_code(size_t *len)
{
	*len = (size_t)(ht_inj_tramp_end - ht_inj_tramp);
	return ht_inj_tramp;
}

/*
 * Where and with what rax the thread resumes after rt_sigreturn: the
 * kernel's restart when no handler runs (arch_do_signal_or_restart), but
 * for -ERESTART_RESTARTBLOCK the call itself again, since rt_sigreturn
 * has turned restart_syscall into an -EINTR (see inject-int.h).
 */
static void
resume_point(const struct user_regs_struct *r, uint64_t *rax, uint64_t *rip)
{
	*rax = r->rax;
	*rip = r->rip;
	switch ((long)r->rax) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
		*rax = r->orig_rax;
		*rip = r->rip - 2;
		break;
	case -ERESTART_RESTARTBLOCK:
		if (r->orig_rax == SYS_restart_syscall) {
			*rax = (uint64_t)-EINTR;
			break;
		}
		*rax = r->orig_rax;
		*rip = r->rip - 2;
		break;
	}
}

/*
 * Make the regset's XSAVE area one that fpu__restore_sig accepts: in the
 * regset (struct user_xstateregs) the software-usable bytes of the legacy
 * area hold only XCR0; a signal frame has fx_sw_bytes there (MAGIC1, the
 * sizes, the features), which the kernel checks along with MAGIC2 after
 * the area, and without which it restores the legacy FPU/SSE part only.
 * The kernel also refuses an xstate_size above the task's own signal
 * frame size, which leaves out AMX tile data unless the task asked for it
 * (arch_prctl ARCH_REQ_XCOMP_PERM), while the regset has the largest size:
 * tiles in their initial state are left out of the frame, which restores
 * them as initial.  Returns the size used, or 0 if the area is not an
 * XSAVE area.
 */
static size_t
xstate_for_frame(unsigned char *xa, size_t xlen)
{
	struct {
		uint32_t magic1, extended_size;
		uint64_t xfeatures;
		uint32_t xstate_size;
		uint32_t padding[7];
	} __attribute__((packed)) sw;
	uint32_t eax, ebx, ecx, edx, magic2 = FP_XSTATE_MAGIC2;
	uint64_t xcr0, bv;

	_Static_assert(sizeof(sw) == FXSAVE_SIZE - SW_BYTES, "fx_sw_bytes");
	if (xlen < XSAVE_HDR + 64 || xlen > XSTATE_MAX)
		return 0;
	memcpy(&xcr0, xa + SW_BYTES, sizeof(xcr0));
	memcpy(&bv, xa + XSAVE_HDR, sizeof(bv));
	if ((xcr0 >> XFEATURE_TILEDATA & 1) && !(bv >> XFEATURE_TILEDATA & 1) &&
	    __get_cpuid_count(0xd, XFEATURE_TILEDATA, &eax, &ebx, &ecx, &edx) &&
	    ebx >= XSAVE_HDR + 64 && ebx + eax == xlen) {
		xlen = ebx;
		xcr0 &= ~(1ULL << XFEATURE_TILEDATA);
	}
	memset(&sw, 0, sizeof(sw));
	sw.magic1 = FP_XSTATE_MAGIC1;
	sw.extended_size = (uint32_t)(xlen + sizeof(magic2));
	sw.xfeatures = xcr0;
	sw.xstate_size = (uint32_t)xlen;
	memcpy(xa + SW_BYTES, &sw, sizeof(sw));
	memcpy(xa + xlen, &magic2, sizeof(magic2));
	return xlen;
}

int
ht_inj_frame_build(struct ht_inject *h, const char *lib)
{
	const struct user_regs_struct *r = &h->regs;
	struct rt_sigframe f;
	struct tramp_data d;
	struct ksigcontext *sc = &f.uc.uc_mcontext;
	uint64_t xa, xsz;
	size_t plen = strlen(lib) + 1;
	unsigned char *x;

	xsz = h->xkind == 1 ? h->xlen + sizeof(uint32_t) : FXSAVE_SIZE;
	h->top = r->rsp - RED_ZONE;
	xa = (h->top - xsz) & ~(uint64_t)63;
	h->frame = ((xa - sizeof(f)) & ~(uint64_t)15) - 8;
	h->sp = (h->frame - sizeof(d) - plen) & ~(uint64_t)15;
	if (h->top - h->sp > sizeof(h->image) || h->sp > h->top)
		return -1;
	h->ilen = (size_t)(h->top - h->sp);
	memset(h->image, 0, h->ilen);

	x = h->image + (xa - h->sp);
	if (h->xkind == 1) {
		memcpy(x, h->xstate, h->xlen);
		if (xstate_for_frame(x, h->xlen) == 0)
			return -1;
	} else
		memcpy(x, &h->fpregs, FXSAVE_SIZE);

	memset(&f, 0, sizeof(f));
	f.pretcode = h->restore_rt;
	f.uc.uc_flags = (h->xkind == 1 ? UC_FP_XSTATE : 0) | UC_SIGCONTEXT_SS |
	    UC_STRICT_RESTORE_SS;
	f.uc.uc_stack.ss_flags = SS_INVALID;
	sc->r8 = r->r8;
	sc->r9 = r->r9;
	sc->r10 = r->r10;
	sc->r11 = r->r11;
	sc->r12 = r->r12;
	sc->r13 = r->r13;
	sc->r14 = r->r14;
	sc->r15 = r->r15;
	sc->rdi = r->rdi;
	sc->rsi = r->rsi;
	sc->rbp = r->rbp;
	sc->rbx = r->rbx;
	sc->rdx = r->rdx;
	sc->rcx = r->rcx;
	sc->rsp = r->rsp;
	sc->eflags = r->eflags;
	sc->cs = (uint16_t)r->cs;
	sc->ss = (uint16_t)r->ss;
	resume_point(r, &sc->rax, &sc->rip);
	sc->fpstate = xa;
	f.uc.uc_sigmask = h->mask;
	memcpy(h->image + (h->frame - h->sp), &f, sizeof(f));

	memset(&d, 0, sizeof(d));
	d.dlopen = h->fn_addr;
	d.dlerror = h->fn_err;
	d.gadget = h->gadget;
	d.frame = h->frame;
	d.res = r->rax;
	d.rip = r->rip;
	d.mask = h->mask;
	memcpy(h->image, &d, sizeof(d));
	memcpy(h->image + sizeof(d), lib, plen);
	return 0;
}

int
ht_inj_frame_results(struct ht_inject *h, uint64_t *handle, uint64_t *err)
{
	struct tramp_data d;

	if (ht_inj_mem_read(h->mpid, h->sp, &d, sizeof(d)) != 0)
		return -1;
	*handle = d.handle;
	*err = d.err;
	return 0;
}
