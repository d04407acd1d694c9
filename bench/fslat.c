/* fslat.c - the timing loop of bench/fs.sh: median latency of the file
 * operations an agent does on a passfs task directory.
 *
 *   passfs_fslat [-n N] [-m M] [-w W] [-b BATCHES] DIR...
 *
 * Each DIR holds README.md, graph.json, pass.c, result.json, es_t and status
 * (a passfs task directory, the same bytes served by bench/minifs.c, a copy
 * on tmpfs).  Each operation runs W times unmeasured per DIR, then N times
 * (M for the pass.c write) timed one by one with CLOCK_MONOTONIC, the DIRs
 * interleaved in BATCHES rounds (default 20) so that the machine's slow
 * drifts hit them alike; one line per operation and DIR: "<DIR index>
 * <key> <median us> <p10 us> <p90 us> <runs>".
 *
 *   stat_graph    stat(graph.json)
 *   stat_result   stat(result.json)
 *   stat_pass     stat(pass.c)
 *   read_graph    open + read to EOF + close of graph.json
 *   read_result   open + read to EOF + close of result.json
 *   ls_l          opendir + readdir + lstat of every entry + closedir
 *                 (what ls -l does, without ls's fork and exec)
 *   open_close_pass  open(O_WRONLY) + close of pass.c, nothing written
 *                 (the requests of a save without its evaluation: no fire)
 *   write_pass    open(O_WRONLY|O_TRUNC) + write 4 KiB + close of pass.c
 *                 (echo > pass.c; on passfs each one fires an evaluation --
 *                 the same bytes every time, answered from history); after
 *                 each, untimed, a read of result.json (on passfs it waits
 *                 for that evaluation), so each write starts from idle
 *
 * The 4 KiB written are fixed text without PASS_REPLACEMENT (a passfs
 * evaluation of it is an instant compile_error). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAXDIRS 8

static int ndirs;
static char *dirs[MAXDIRS];
static char p_graph[MAXDIRS][PATH_MAX], p_result[MAXDIRS][PATH_MAX], p_pass[MAXDIRS][PATH_MAX];
static char rbuf[1 << 16], wbuf[4096];

static void die(const char *what, const char *path)
{
	fprintf(stderr, "passfs_fslat: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static void op_stat(const char *p)
{
	struct stat st;
	if (stat(p, &st) != 0)
		die("stat", p);
}

static void op_read(const char *p)
{
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		die("open", p);
	ssize_t k;
	while ((k = read(fd, rbuf, sizeof(rbuf))) > 0)
		;
	if (k < 0)
		die("read", p);
	close(fd);
}

static void op_ls(const char *p)
{
	DIR *d = opendir(p);
	if (d == NULL)
		die("opendir", p);
	int dfd = dirfd(d);
	struct dirent *e;
	struct stat st;
	while ((e = readdir(d)) != NULL)
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			die("lstat", e->d_name);
	closedir(d);
}

static void op_write(const char *p)
{
	int fd = open(p, O_WRONLY | O_TRUNC);
	if (fd < 0)
		die("open", p);
	if (write(fd, wbuf, sizeof(wbuf)) != (ssize_t)sizeof(wbuf))
		die("write", p);
	if (close(fd) != 0)
		die("close", p);
}

static void op_open_close(const char *p)
{
	int fd = open(p, O_WRONLY);
	if (fd < 0)
		die("open", p);
	if (close(fd) != 0)
		die("close", p);
}

/* Untimed, after each write: read result.json, which on passfs waits until
 * the evaluation the write fired is done, so every write starts from an
 * idle task (as an agent's `echo > pass.c; cat result.json` does). */
static void settle(int k)
{
	op_read(p_result[k]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Runs fn on every directory's file, interleaved: `batches` rounds, each
 * running n / batches timed calls per directory in turn, so slow drifts of
 * the machine hit every file system alike.  Prints one line per directory. */
static void measure(const char *key, void (*fn)(const char *), char (*paths)[PATH_MAX], int warm, int n,
		    int batches, void (*after)(int))
{
	double *t[MAXDIRS];
	int per = n / batches > 0 ? n / batches : 1, got = per * batches;
	for (int k = 0; k < ndirs; k++) {
		t[k] = malloc(sizeof(double) * (size_t)got);
		if (t[k] == NULL)
			exit(1);
		for (int i = 0; i < warm; i++) {
			fn(paths[k]);
			if (after)
				after(k);
		}
	}
	for (int b = 0; b < batches; b++)
		for (int k = 0; k < ndirs; k++)
			for (int i = 0; i < per; i++) {
				double a = now_us();
				fn(paths[k]);
				t[k][b * per + i] = now_us() - a;
				if (after)
					after(k);
			}
	for (int k = 0; k < ndirs; k++) {
		qsort(t[k], (size_t)got, sizeof(double), cmp_double);
		printf("%d %s %.2f %.2f %.2f %d\n", k, key, t[k][got / 2], t[k][got / 10], t[k][got * 9 / 10], got);
		free(t[k]);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int n = 2000, m = 500, w = 50, batches = 20, c;
	while ((c = getopt(argc, argv, "n:m:w:b:")) != -1) {
		switch (c) {
		case 'n': n = atoi(optarg); break;
		case 'm': m = atoi(optarg); break;
		case 'w': w = atoi(optarg); break;
		case 'b': batches = atoi(optarg); break;
		default: goto usage;
		}
	}
	ndirs = argc - optind;
	if (ndirs < 1 || ndirs > MAXDIRS || n < 1 || m < 1 || w < 0 || batches < 1)
		goto usage;
	static char p_dir[MAXDIRS][PATH_MAX];
	for (int k = 0; k < ndirs; k++) {
		dirs[k] = argv[optind + k];
		snprintf(p_dir[k], PATH_MAX, "%s", dirs[k]);
		snprintf(p_graph[k], PATH_MAX, "%s/graph.json", dirs[k]);
		snprintf(p_result[k], PATH_MAX, "%s/result.json", dirs[k]);
		snprintf(p_pass[k], PATH_MAX, "%s/pass.c", dirs[k]);
	}
	for (size_t i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);

	measure("stat_graph", op_stat, p_graph, w, n, batches, NULL);
	measure("stat_result", op_stat, p_result, w, n, batches, NULL);
	measure("stat_pass", op_stat, p_pass, w, n, batches, NULL);
	measure("read_graph", op_read, p_graph, w, n, batches, NULL);
	measure("read_result", op_read, p_result, w, n, batches, NULL);
	measure("ls_l", op_ls, p_dir, w, n, batches, NULL);
	measure("open_close_pass", op_open_close, p_pass, w, n, batches, NULL);
	measure("write_pass", op_write, p_pass, w < 5 ? w : 5, m, batches, settle);
	return 0;
usage:
	fprintf(stderr, "usage: passfs_fslat [-n N] [-m M] [-w W] [-b BATCHES] DIR...\n");
	return 2;
}
