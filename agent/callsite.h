/*
 * What a call site called: the function that the call instruction ending
 * at a return address reached, directly (call rel32), through its module's
 * PLT stub (call rel32 to "[endbr64] [bnd] jmp *slot(%rip)") or through a
 * GOT slot (call *slot(%rip), -fno-plt).  For the recorder, to tell a free
 * that libstdc++'s operator delete reached by a tail call (which leaves no
 * frame of its own) from the program's own free: the delete's caller
 * called the operator.
 *
 * Every read lies in a readable segment of a loaded module, checked under
 * ht_lock_global (bytes before a return address that are no call, a stub
 * that is not one, are read only if they are there); any other address or
 * an unknown form answers 0.  Answers are cached per return address, for
 * the modules as they are (a dlopen or dlclose starts the cache over): a
 * call site costs the lock once.  From a hook's slow path, holding no lock
 * of the agent's.
 */
#ifndef HT_CALLSITE_H
#define HT_CALLSITE_H

#include <stdint.h>

/* The function the call that returns to ret called, or 0. */
uintptr_t ht_callsite_callee(uintptr_t ret);

#endif
