#ifndef WI_SVG_H
#define WI_SVG_H

#include <sys/types.h>

/// Starts the SVG renderer `path` with `argv` (NULL-terminated), its standard input, output and
/// error on `input`, `output` and `error`, every other descriptor closed before it execs
/// (`posix_spawn_file_actions_addclosefrom_np`: one another thread opens meanwhile too), an empty
/// signal mask and default signal actions, in a process group of its own. Returns 0 and the
/// child's id in `*pid`, or an errno value (an exec failure included).
int wi_svg_spawn(pid_t *pid, const char *path, char *const argv[], int input, int output, int error);

/// Sets this process's address-space limit to `bytes` and its CPU-time limit to `seconds` (the
/// renderer calls it on itself before it reads the document). Returns 0, or -1 with errno.
int wi_svg_limit_self(unsigned long long bytes, unsigned long seconds);

#endif
