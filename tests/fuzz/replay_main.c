/* replay_main.c - main() for a fuzz target built without libFuzzer (gcc,
 * the normal build): feeds every file named on the command line, and every
 * regular file in every directory named, to LLVMFuzzerTestOneInput once, in
 * name order.  A crash or abort fails the test; so does an argument that
 * cannot be read or a directory with no file in it (a corpus gone missing
 * would otherwise pass silently).  CMakeLists.txt runs each target over its
 * tests/fuzz/corpus_<target> directory as the ctest fuzz/<target>. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	size_t n = 0;
	int e = 0;
	char *buf = base_read_file(path, (size_t)1 << 30, &n, &e);
	if (buf == NULL) {
		fprintf(stderr, "%s: cannot read: %s\n", path, strerror(e));
		return -1;
	}
	/* an exact-size copy, as libFuzzer gives, so the target's own
	 * overrun checks mean the same here */
	uint8_t *exact = malloc(n ? n : 1);
	if (exact == NULL) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, n);
	free(buf);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	int inputs = 0, failed = 0;
	for (int a = 1; a < argc; a++) {
		struct stat st;
		if (stat(argv[a], &st) != 0) {
			perror(argv[a]);
			failed++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed += run_file(argv[a]) != 0;
			inputs++;
			continue;
		}
		struct dirent **ents;
		int n = scandir(argv[a], &ents, NULL, by_name);
		if (n < 0) {
			perror(argv[a]);
			failed++;
			continue;
		}
		int here = 0;
		for (int i = 0; i < n; i++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[a], ents[i]->d_name);
			if (ents[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				failed += run_file(path) != 0;
				here++;
			}
			free(ents[i]);
		}
		free(ents);
		if (here == 0) {
			fprintf(stderr, "%s: no input files\n", argv[a]);
			failed++;
		}
		inputs += here;
	}
	printf("%d inputs, %d unreadable\n", inputs, failed);
	return failed || inputs == 0;
}
