/*
 * Fixture programs started by the C tests (t/target/), as C TAP Harness's
 * process.h starts a test's helpers.
 *
 * A target runs with pipes on its standard input and output; its standard
 * error goes to a file of its own, shown as diagnostics when the target is
 * waited for or killed.  It is ready once it prints a line that begins with
 * "ready" (fixtures print it after prctl(PR_SET_PTRACER)), which
 * target_start waits for: tests never sleep for readiness.  Every read of
 * its output gives up after TARGET_LINE_MS, and every target still running
 * when the test ends (exit, bail, the timeout of test_timeout) is killed and
 * reaped; it is also killed if the test dies (PR_SET_PDEATHSIG).
 *
 * No libtool wrapper: the pid is the fixture's.  Not for agent code.
 */
#ifndef HT_TAP_TARGET_H
#define HT_TAP_TARGET_H

#include <sys/types.h>

#include <stddef.h>

#define TARGET_LINE_MS 30000 /* a target answers within this */
#define TARGET_EXIT_MS 30000 /* and exits within this once told to */
#define TARGET_OWN_PID "$$"  /* see target_start */

struct target;

/*
 * The build directory: $HT_BUILDDIR (make check sets it), else the
 * directory above the test program's own (t/NAME-t).  test_build_path
 * returns builddir/rel, allocated (the caller frees it); test_build_need
 * the same after skip_all if that file is not built.
 */
const char *test_builddir(void);
char *test_build_path(const char *rel);
char *test_build_need(const char *rel);

/*
 * Start path with the arguments args (NULL-terminated, may be NULL) and
 * the environment of the test changed by env (NULL-terminated, may be
 * NULL): "NAME=VALUE" sets NAME, "NAME" alone unsets it, and a VALUE of
 * TARGET_OWN_PID is the target's own pid (as $$ of a shell that execs it:
 * HEAPTOOL_PID of a process the agent is to profile).  Waits for its
 * ready line.  Returns the target, or NULL (with a diagnostic, the process
 * killed and reaped) if it exited or said nothing like "ready" in time.
 * Bails if the test cannot make pipes or fork.
 */
struct target *
target_start(const char *path, const char *const *args, const char *const *env);

pid_t target_pid(const struct target *);
/* The ready line, without its newline. */
const char *target_ready(const struct target *);

/* Write the formatted text to its standard input (no newline is added).
 * Returns 0, or -1 if it could not be written whole. */
int target_send(struct target *, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Its next line of output, without the newline, in buf (size bytes, a
 * longer line is cut).  Returns buf, or NULL at end of file or after
 * TARGET_LINE_MS. */
char *target_line(struct target *, char *buf, size_t size);

/*
 * Close its standard input (a fixture exits on end of file or after the
 * command the caller sent) and wait up to TARGET_EXIT_MS for it to exit,
 * then kill it.  Returns its wait status; *quiet (if not NULL) is 1 if it
 * wrote nothing on its standard error.  Frees the target.
 */
int target_wait(struct target *, int *quiet);

/* Kill (SIGKILL) and reap it; free the target.  NULL: nothing to do. */
void target_kill(struct target *);

#endif
