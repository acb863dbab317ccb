#include "CTestSpawn.h"
#include "wi_spawn.h"

// The library's own spawn (CCodecShims' wi_spawn.c says why not Foundation's `Process`).
int wi_test_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                  const char *directory, int input, int output, int error) {
    return wi_spawn(pid, path, argv, envp, directory, input, output, error);
}
