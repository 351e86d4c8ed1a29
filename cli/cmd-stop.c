/*
 * heaptool stop: end the target's session; its profile stays readable.
 */
#include "config.h"

#include <sys/types.h>

#include <stdio.h>

#include "cli.h"
#include "cmd.h"
#include "proto.h"

static const char stop_usage[] =
    "usage: heaptool stop [-p PID]\n"
    "\n"
    "End the target's session.  Its profile stays readable with heaptool\n"
    "report and heaptool dump until the next start.\n"
    "\n" HT_CMD_PID_HELP;

int
ht_cmd_stop(int argc, char **argv)
{
	pid_t pid;
	int rc;

	if ((rc = ht_cmd_request(argc, argv, stop_usage, HT_MSG_STOP, &pid)) !=
		HT_EXIT_OK ||
	    pid == 0)
		return rc;
	printf("heaptool: %ld: session stopped; heaptool report shows its "
	       "profile\n",
	    (long)pid);
	return ht_cmd_flush();
}
