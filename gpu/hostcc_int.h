/* hostcc_int.h - what the files of the host compiler share (the contract is
 * hostcc.h), and the functions one file calls in another.
 *
 *   hostcc.c         the compiler's input, its files, running it in the jail
 *   hostcc_mask.c    the include directory; masking comments and literals
 *   hostcc_rewrite.c the source rewrites of a pass for the host compile:
 *                    extern __shared__, the cuda backend's device stubs
 *   hostcc_pch.c     the precompiled passfs.h */
#ifndef PASSFS_HOSTCC_INT_H
#define PASSFS_HOSTCC_INT_H

#include "hostcc.h"
#include "datadir.h"
#include "clock.h"
#include "file.h"
#include "gpu.h"
#include "hash.h"
#include "proc.h"
#include "strbuf.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOSTCC_LOG_CAP (64u << 10)
#define HOSTCC_DEFAULT_TIMEOUT_S 60
/* cc1plus on template-heavy code stays well under this; a runaway
 * constexpr or template recursion hits it instead of the machine. */
#define HOSTCC_AS_LIMIT (8ull << 30)
#define HOSTCC_FSIZE_LIMIT (1ull << 30)

/* --- extern __shared__ ------------------------------------------------------ */

/* A token of a declaration: [b, e) in the masked text. */
struct tok {
	size_t b, e;
};

#define MAX_SCOPE_DEPTH 256

/* --- device stubs (the cuda backend's host compile) --------------------------- */

#define MAX_MARKERS 32

struct stubber {
	const char *src, *m;
	size_t len;
	char markers[MAX_MARKERS][64];  /* object-like macros that expand to __device__/__global__ */
	int n_markers;
};

enum decl_kind { DECL_OTHER, DECL_SCOPE, DECL_KEEP, DECL_STUB };

/* Keeps the last HOSTCC_LOG_CAP bytes written. */
struct tail {
	char *p;
	size_t len;
	int cut;
};

/* ---- across the files ---- */

int hostcc_is_ident(int c);
void hostcc_buf_quoted(struct strbuf *b, const char *s);
char *hostcc_build_source(const struct hostcc_request *req, size_t *outlen);
int hostcc_write_file(const char *path, const char *data, size_t len);
char *hostcc_finish_log(struct tail *t, const char *dir, const char *inc, const char *pch);
int hostcc_run_child(char *const argv[], char *const envp[], int timeout_s, unsigned long long as_limit, struct tail *t, int *timed_out, char *err, size_t errlen);
char *hostcc_compiler_find(char **words, int max, char *store, size_t storelen, int *nw);
char **hostcc_child_env(void);
void hostcc_child_env_free(char **env);
int hostcc_write_stand_ins(const char *dir, char *path, size_t pathlen);

#endif
