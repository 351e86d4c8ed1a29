/*
 * heaptool detach: end the session, have the agent put back every hook,
 * and forget the current target.
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
    "End the session, put back every hook the agent installed, and forget\n"
    "the current target.  The agent stays loaded, idle; heaptool attach\n"
    "hooks it again.\n"
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
	printf("heaptool: detached from %ld: its hooks are removed (the "
	       "agent stays loaded, idle)\n",
	    (long)pid);
	return ht_cmd_flush();
}
