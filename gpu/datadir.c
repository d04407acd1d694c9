/* datadir.c - where passfs's own data is (datadir.h). */
#include "datadir.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Baked in by CMakeLists.txt: the trees this binary was configured with and
 * the install prefix. */
#ifndef PASSFS_SOURCE_DIR
#error "PASSFS_SOURCE_DIR must be defined (CMakeLists.txt)"
#endif
#ifndef PASSFS_BINARY_DIR
#error "PASSFS_BINARY_DIR must be defined (CMakeLists.txt)"
#endif
#ifndef PASSFS_INSTALL_PREFIX
#error "PASSFS_INSTALL_PREFIX must be defined (CMakeLists.txt)"
#endif

/* Each kind: its place in the source tree and under an install prefix
 * (CMakeLists.txt's install() rules write the same). */
static const struct {
	const char *source;
	const char *installed;
} places[] = {
	[DATADIR_TASKS] = {"tasks", "share/passfs/tasks"},
	[DATADIR_INCLUDE] = {"gpu/include", "include/passfs"},
	[DATADIR_OPLIB] = {"gpu/oplib", "share/passfs/oplib"},
	[DATADIR_DOCS] = {"docs", "share/passfs/docs"},
};
#define N_KINDS (sizeof(places) / sizeof(places[0]))

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int in_build;
static char dirs[N_KINDS][PATH_MAX];
static char hostcc_src[PATH_MAX];

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether path is dir or inside it (both canonical). */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static void decide(void)
{
	char exe[PATH_MAX], prefix[PATH_MAX] = "", bdir[PATH_MAX];
	int have_exe = realpath("/proc/self/exe", exe) != NULL;
	/* the build tree canonical, as the exe path is */
	if (realpath(PASSFS_BINARY_DIR, bdir) == NULL)
		snprintf(bdir, sizeof bdir, "%s", PASSFS_BINARY_DIR);
	in_build = have_exe && under(exe, bdir);
	if (have_exe && !in_build) {
		/* <prefix>/bin/passfs: the prefix is two levels up */
		char *slash = strrchr(exe, '/');
		if (slash != NULL && slash != exe) {
			*slash = '\0';
			slash = strrchr(exe, '/');
			if (slash != NULL) {
				*slash = '\0';
				snprintf(prefix, sizeof prefix, "%s", exe[0] ? exe : "/");
			}
		}
	}
	for (size_t k = 0; k < N_KINDS; k++) {
		char rel[PATH_MAX];
		if (!in_build && prefix[0]) {
			snprintf(rel, sizeof rel, "%s/%s", strcmp(prefix, "/") ? prefix : "", places[k].installed);
			if (is_dir(rel)) {
				snprintf(dirs[k], sizeof dirs[k], "%s", rel);
				continue;
			}
		}
		char src[PATH_MAX];
		snprintf(src, sizeof src, "%s/%s", PASSFS_SOURCE_DIR, places[k].source);
		if (in_build || is_dir(src))
			snprintf(dirs[k], sizeof dirs[k], "%s", src);
		else
			snprintf(dirs[k], sizeof dirs[k], "%s/%s", PASSFS_INSTALL_PREFIX, places[k].installed);
	}
	if (in_build)
		snprintf(hostcc_src, sizeof hostcc_src, "%s/gpu/hostcc.c", PASSFS_SOURCE_DIR);
}

const char *datadir_get(enum datadir_kind kind)
{
	pthread_once(&once, decide);
	return (size_t)kind < N_KINDS ? dirs[kind] : dirs[DATADIR_TASKS];
}

int datadir_in_build_tree(void)
{
	pthread_once(&once, decide);
	return in_build;
}

const char *datadir_hostcc_source(void)
{
	pthread_once(&once, decide);
	return hostcc_src[0] ? hostcc_src : NULL;
}
