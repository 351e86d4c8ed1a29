/* The agent's one lock (lock.h). */
#include "lock.h"

struct ht_lock ht_lock_global;
