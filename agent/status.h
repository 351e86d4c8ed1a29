/*
 * The agent's status for the control channel's STATUS reply.
 */
#ifndef HT_STATUS_H
#define HT_STATUS_H

#include "proto.h"

/* Fill *st (zeroed first) with what the agent knows now.  From the
 * agent's thread: it takes ht_lock_global and may call dlsym. */
void ht_status_fill(struct ht_status *st);

#endif
