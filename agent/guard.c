/* The thread's guard (guard.h). */
#include "guard.h"

__thread unsigned ht_guard_depth __attribute__((tls_model("initial-exec")));
