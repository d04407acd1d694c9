/* test_state.c - the state directory's guards (engine/service/state.h):
 * state_write_new never replaces a history entry, state_write_atomic does
 * replace; state_lock takes the directory once (a second taker, here a
 * second open file in the same process, as a second daemon would be, is
 * refused after its wait with the first's pid and command named) and gives
 * it back when the descriptor is closed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#include "clock.h"
#include "file.h"
#include "state.h"


static int holds(const char *dir, const char *name, const char *want)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	size_t len = 0;
	int e = 0;
	char *t = base_read_file(p, 4096, &len, &e);
	int ok = t != NULL && len == strlen(want) && memcmp(t, want, len) == 0;
	free(t);
	return ok;
}

int main(void)
{
	char dir[4096];
	if (mkdtemp(test_path(dir, sizeof dir, "passfs-test-state-XXXXXX")) == NULL) {
		perror("mkdtemp");
		return 1;
	}

	/* history entries: written once */
	CHECK_MSG(state_write_new(dir, "000001.json", "first\n", 6) == 0 && holds(dir, "000001.json", "first\n"),
	      "state_write_new writes a new entry");
	int rc = state_write_new(dir, "000001.json", "second\n", 7);
	CHECK_MSG(rc == -EEXIST && holds(dir, "000001.json", "first\n"), "a second write of the entry: -EEXIST, the first kept");
	CHECK_MSG(state_write_atomic(dir, "result.json", "a\n", 2, 1) == 0 && state_write_atomic(dir, "result.json", "b\n", 2, 1) == 0 &&
		      holds(dir, "result.json", "b\n"),
	      "state_write_atomic replaces (result.json)");

	/* the task directories: subdirectories only (not result.json, not a
	 * log), none starting with '.', sorted */
	char sub[4200];
	const char *mk[] = {"zeta", "alpha", ".hidden", "mid"};
	for (size_t i = 0; i < sizeof mk / sizeof mk[0]; i++) {
		snprintf(sub, sizeof sub, "%s/%s", dir, mk[i]);
		CHECK(base_mkdirs(sub, 0700) == 0);
	}
	CHECK(state_write_atomic(dir, "mount.log", "x\n", 2, 0) == 0);
	char **ids = NULL;
	int nids = -1;
	CHECK(state_task_ids(dir, &ids, &nids) == 0);
	CHECK_MSG(nids == 3 && strcmp(ids[0], "alpha") == 0 && strcmp(ids[1], "mid") == 0 && strcmp(ids[2], "zeta") == 0,
		  nids > 0 ? ids[0] : "none");
	for (int i = 0; i < nids; i++)
		free(ids[i]);
	free(ids);
	snprintf(sub, sizeof sub, "%s/no-such-dir", dir);
	CHECK(state_task_ids(sub, &ids, &nids) == -ENOENT && ids == NULL && nids == 0);

	/* the lock */
	int fd1 = -1, fd2 = -1;
	char err[1024] = "";
	CHECK_MSG(state_lock(dir, 0.2, &fd1, err, sizeof err) == 0 && fd1 >= 0, "the first state_lock takes the directory");
	char pid[32];
	snprintf(pid, sizeof pid, "%ld ", (long)getpid());
	char lockp[4200];
	snprintf(lockp, sizeof lockp, "%s/.lock", dir);
	size_t len = 0;
	int e = 0;
	char *note = base_read_file(lockp, 4096, &len, &e);
	CHECK_MSG(note != NULL && strncmp(note, pid, strlen(pid)) == 0 && strstr(note, "test_state") != NULL,
	      "the lock file names the holder's pid and command");
	free(note);
	double t0 = base_now_ms();
	rc = state_lock(dir, 0.2, &fd2, err, sizeof err);
	double waited = base_now_ms() - t0;
	char want[64];
	snprintf(want, sizeof want, "(pid %ld: ", (long)getpid());
	CHECK_MSG(rc == -1 && fd2 == -1 && strstr(err, "is in use by another passfs") != NULL && strstr(err, want) != NULL &&
		      strstr(err, "test_state") != NULL,
	      "a second taker is refused, the holder named");
	CHECK_MSG(waited >= 150 && waited < 5000, "after waiting for it (0.2 s asked)");
	close(fd1);
	CHECK_MSG(state_lock(dir, 0.2, &fd2, err, sizeof err) == 0, "once the first descriptor is closed, the lock is free");
	if (fd2 >= 0)
		close(fd2);

	if (base_rmtree(dir) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	printf("test_state: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
