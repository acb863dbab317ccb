#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>

#include "wi_spawn.h"

// posix_spawn rather than Foundation's Process: Process closes the parent's descriptors in the
// child by listing /proc/self/fd and copies each entry's whole 256-byte name out of readdir's
// buffer, which reads past the buffer's end once the process holds some 1,360 descriptors (a CI
// run of the parallel suite crashed so on 2026-11-25), and a server holds thousands.
int wi_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
             const char *directory, int input, int output, int error) {
    extern char **environ;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int status = posix_spawn_file_actions_init(&actions);
    if (status != 0) return status;
    status = posix_spawnattr_init(&attributes);
    if (status != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return status;
    }
    const int streams[3] = {input, output, error};
    for (int target = 0; target < 3 && status == 0; target++) {
        if (streams[target] >= 0) status = posix_spawn_file_actions_adddup2(&actions, streams[target], target);
    }
    if (status == 0) status = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (status == 0 && directory != NULL) status = posix_spawn_file_actions_addchdir_np(&actions, directory);
    sigset_t empty, defaults;
    sigemptyset(&empty);
    sigfillset(&defaults);
    if (status == 0) status = posix_spawnattr_setsigmask(&attributes, &empty);
    if (status == 0) status = posix_spawnattr_setsigdefault(&attributes, &defaults);
    if (status == 0) status = posix_spawnattr_setpgroup(&attributes, 0);
    if (status == 0) {
        status = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    }
    if (status == 0) status = posix_spawn(pid, path, &actions, &attributes, argv, envp != NULL ? envp : environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return status;
}

// Lowers `resource`'s limits to `soft` and `hard`, never above a hard limit already set (a
// process started under `prlimit --as` may not raise it; it keeps the lower one).
static int lower_limit(int resource, rlim_t soft, rlim_t hard) {
    struct rlimit current;
    if (getrlimit(resource, &current) != 0) return -1;
    if (current.rlim_max != RLIM_INFINITY && hard > current.rlim_max) hard = current.rlim_max;
    if (soft > hard) soft = hard;
    struct rlimit lowered = {soft, hard};
    return setrlimit(resource, &lowered);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WI_SHADOW_MEMORY 1
#endif
#endif

int wi_limit_self(unsigned long long bytes, unsigned long seconds) {
#ifndef WI_SHADOW_MEMORY
    if (lower_limit(RLIMIT_AS, bytes, bytes) != 0) return -1;
#else
    // A sanitized build has reserved terabytes of address space for its shadow memory already:
    // an address-space limit would fail its every allocation. The CPU limit still holds.
    (void)bytes;
#endif
    return lower_limit(RLIMIT_CPU, seconds, seconds + 1);
}
