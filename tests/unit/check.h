/* check.h - the unit tests' checks: CHECK(cond) and CHECK_MSG(cond, msg)
 * count into n_pass and n_fail and name the failing line (and msg). */
#ifndef PASSFS_TEST_CHECK_H
#define PASSFS_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int n_pass, n_fail;

#define CHECK(cond) do { \
	if (cond) { \
		n_pass++; \
	} else { \
		n_fail++; \
		fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
	} \
} while (0)

#define CHECK_MSG(cond, msg) do { \
	if (cond) { \
		n_pass++; \
	} else { \
		n_fail++; \
		fprintf(stderr, "%s:%d: FAILED: %s\n    got: %s\n", __FILE__, __LINE__, #cond, msg); \
	} \
} while (0)

/* Where a test makes its temporary files: $TMPDIR when it is an absolute
 * path, else /tmp.  test_path(buf, n, "name-XXXXXX") writes "<dir>/name-XXXXXX"
 * (for mkdtemp / mkstemp) into buf and returns buf. */
static inline const char *test_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	return t && t[0] == '/' ? t : "/tmp";
}

static inline char *test_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", test_tmpdir(), name);
	return buf;
}

#endif
