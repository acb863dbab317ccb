#ifndef WI_SPAWN_H
#define WI_SPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (NULL-terminated; `envp` NULL for this process's
/// environment): `input`, `output` and `error` (each -1 to inherit ours) become its standard
/// streams, every other descriptor is closed in the child just before it execs (glibc's
/// `posix_spawn_file_actions_addclosefrom_np`, so one another thread opens meanwhile is closed
/// too), `directory` (or NULL) is its working directory, it gets a process group of its own, an
/// empty signal mask and the default action for every signal. Returns 0 and the child's id in
/// `*pid`, or an errno value (an exec failure included). The SVG renderer child and the tests'
/// child processes are started with it.
int wi_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
             const char *directory, int input, int output, int error);

/// Lowers this process's address-space limit to `bytes` and its CPU-time limit to `seconds`, or
/// to the hard limits already set where those are lower (the SVG renderer child calls it on itself
/// before it reads the document). Returns 0, or -1 with errno.
int wi_limit_self(unsigned long long bytes, unsigned long seconds);

#endif
