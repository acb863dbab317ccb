#ifndef CTEST_SPAWN_H
#define CTEST_SPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (both NULL-terminated) as the tests' child processes are
/// started: `input`, `output` and `error` (each -1 to inherit ours) become its standard streams,
/// every other descriptor is closed in the child just before it execs (glibc's
/// `posix_spawn_file_actions_addclosefrom_np`, so one another thread opens meanwhile is closed
/// too), `directory` (or NULL) is its working directory, it gets a process group of its own, an
/// empty signal mask and the default action for every signal (SIGPIPE, which a server may ignore,
/// among them): CCodecShims' `wi_spawn`. Returns 0 and the child's id in `*pid`, or an errno value
/// (an exec failure included).
int wi_test_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                  const char *directory, int input, int output, int error);

#endif
