/* mock_env.h - the mocks' settings (MOCK_* variables), read once when the
 * mock is loaded.  A pass worker replaces its environment before pass code
 * runs (docs/integrity.md, "The model's numbers, kept by the kernel"), so a
 * mock that read its variables lazily, in a launch, would find them gone;
 * a real driver reads its CUDA_* variables, which the worker keeps.
 * Included after the system headers: getenv becomes mock_getenv. */
#ifndef PASSFS_MOCK_ENV_H
#define PASSFS_MOCK_ENV_H

#include <stdlib.h>
#include <string.h>

#define MOCK_ENV_MAX 64
static char *mock_env_kv[MOCK_ENV_MAX];

__attribute__((constructor)) static void mock_env_snapshot(void)
{
	extern char **environ;
	int k = 0;
	for (char **e = environ; e && *e && k < MOCK_ENV_MAX; e++)
		if (strncmp(*e, "MOCK_", 5) == 0)
			mock_env_kv[k++] = strdup(*e);
}

static const char *mock_getenv(const char *name)
{
	size_t n = strlen(name);
	for (int k = 0; k < MOCK_ENV_MAX && mock_env_kv[k]; k++)
		if (strncmp(mock_env_kv[k], name, n) == 0 && mock_env_kv[k][n] == '=')
			return mock_env_kv[k] + n + 1;
	return NULL;
}
#define getenv mock_getenv

#endif
