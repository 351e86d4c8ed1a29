/*
 * What a call site called: the function that the call instruction ending
 * at a return address reached, directly (call rel32), through its module's
 * PLT stub (call rel32 to "[endbr64] [bnd] jmp *slot(%rip)") or through a
 * GOT slot (call *slot(%rip), -fno-plt).  For the recorder, to tell a free
 * that libstdc++'s operator delete reached by a tail call (which leaves no
 * frame of its own) from the program's own free: the delete's caller
 * called the operator.
 *
 * Every read goes through process_vm_readv on the process itself, which
 * fails rather than faults on memory that is not mapped (bytes before a
 * return address that are no call, a stub that is not one); any failure
 * or unknown form answers 0.  Answers are cached per return address, for
 * the modules as they are (a dlopen or dlclose starts the cache over).
 * Lock-free; from a hook's slow path.
 */
#ifndef HT_CALLSITE_H
#define HT_CALLSITE_H

#include <stdint.h>

/* The function the call that returns to ret called, or 0. */
uintptr_t ht_callsite_callee(uintptr_t ret);

#endif
