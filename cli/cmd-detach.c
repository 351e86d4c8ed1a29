/*
 * heaptool detach: end the session, have the agent put back every hook and
 * give its tables back, and forget the current target.
 */
#include "config.h"

#include <sys/types.h>

#include <stdio.h>

#include "cli.h"
#include "cmd.h"
#include "proto.h"
#include "target.h"

static const char detach_usage[] =
    "usage: heaptool detach [-p PID]\n"
    "\n"
    "End the session, put back every hook the agent installed, give the\n"
    "agent's tables (and the session's profile) back to the system, and\n"
    "forget the current target.  The agent stays loaded, idle; heaptool\n"
    "attach hooks it again.\n"
    "\n" HT_CMD_PID_HELP;

int
ht_cmd_detach(int argc, char **argv)
{
	pid_t pid;
	int rc;

	if ((rc = ht_cmd_request(argc, argv, detach_usage, HT_MSG_DETACH,
		 &pid)) != HT_EXIT_OK ||
	    pid == 0)
		return rc;
	ht_target_forget(pid);
	printf("heaptool: detached from %ld: its hooks are removed and the "
	       "agent's tables returned (the agent stays loaded, idle)\n",
	    (long)pid);
	return ht_cmd_flush();
}
