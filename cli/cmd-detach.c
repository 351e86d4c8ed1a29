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
    "End the session, put back every hook the agent installed (the GOT\n"
    "slots, and the first bytes of the functions hooked inline), give the\n"
    "agent's tables (and the session's profile) back to the system, and\n"
    "forget the current target.  The agent stays loaded, idle; heaptool\n"
    "attach hooks it again.\n"
    "\n" HT_CMD_PID_HELP;

int
ht_cmd_detach(int argc, char **argv)
{
	pid_t pid;
	int rc, restored;

	if ((rc = ht_cmd_target(argc, argv, detach_usage, NULL, &pid)) !=
		HT_EXIT_OK ||
	    pid == 0)
		return rc;
	/* The inline patches first: while they are in, the GOT slots'
	 * originals are their trampolines, which stay valid after. */
	if ((restored = ht_cmd_inline_restore(pid, "detach")) < 0)
		rc = HT_EXIT_FAIL;
	if (ht_target_command(pid, HT_MSG_DETACH) != HT_EXIT_OK)
		return HT_EXIT_FAIL;
	if (restored > 0)
		printf("heaptool: %d function%s hooked inline put back as they "
		       "were\n",
		    restored, restored == 1 ? "" : "s");
	ht_target_forget(pid);
	printf("heaptool: detached from %ld: its hooks are removed and the "
	       "agent's tables returned (the agent stays loaded, idle)\n",
	    (long)pid);
	return rc == HT_EXIT_OK ? ht_cmd_flush() : rc;
}
