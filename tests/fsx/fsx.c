/* fsx.c - an fsx-style checker for one file (passfs's pass.c, or any file).
 *
 *   passfs_fsx [-N ops] [-S seed] [-l maxlen] [-r reopen] [-v] FILE
 *
 * Applies N random operations to FILE through the system calls an editor or
 * tool would use, and the same operations to an in-memory reference copy,
 * and checks every read against the reference:
 *
 *   write     pwrite() at a random offset (holes past the end read as zeros)
 *   append    write() on a second descriptor opened with O_APPEND
 *   truncate  ftruncate() to a random size, growing or shrinking
 *   read      pread() of a random range, compared byte for byte
 *   stat      fstat() size against the reference length
 *   reopen    close() and open() again (a writing handle's close fires a
 *             passfs evaluation), then a full read-back
 *   trunc-open  open(O_TRUNC) + a write of new content + close
 *   efbig     pwrite() past the cap (-c, default 1 MiB, passfs's pass.c
 *             cap; -c 0: no cap, on other file systems) fails with EFBIG
 *             and changes nothing
 *
 * The file starts empty (opened with O_TRUNC); its length stays under
 * maxlen (default 256 KiB, at most the cap).  Written bytes come from a small
 * alphabet of letters, digits and newlines, so a passfs evaluation of any
 * state is a fast compile_error ("no PASS_REPLACEMENT") and never runs code.
 *
 * The seed is printed first; the same seed replays the same operations.  On
 * a mismatch the last operations and the first differing offset are printed
 * and the exit status is 1.  The last line reports the counts. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_KEEP 32

enum op { OP_WRITE, OP_APPEND, OP_TRUNCATE, OP_READ, OP_STAT, OP_REOPEN, OP_TRUNC_OPEN, OP_EFBIG, NOPS };
static const char *op_names[NOPS] = {"write", "append", "truncate", "read", "stat", "reopen", "trunc-open", "efbig"};
/* Relative weights of the operations. */
static const int op_weight[NOPS] = {30, 8, 10, 30, 6, 4, 1, 1};

static const char *path;
static int fd = -1;
static unsigned char *ref, *buf;
static size_t ref_len, maxlen = 256 << 10, cap = 1 << 20;
static uint64_t rng;
static long opno;
static int verbose;
static long counts[NOPS];

static struct {
	long no;
	enum op op;
	uint64_t off, len;
} log_ring[LOG_KEEP];

static uint64_t next_rand(void)
{
	/* splitmix64 */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(uint64_t n)
{
	return n ? next_rand() % n : 0;
}

static void logop(enum op op, uint64_t off, uint64_t len)
{
	log_ring[opno % LOG_KEEP].no = opno;
	log_ring[opno % LOG_KEEP].op = op;
	log_ring[opno % LOG_KEEP].off = off;
	log_ring[opno % LOG_KEEP].len = len;
	counts[op]++;
	if (verbose)
		printf("%6ld %-10s off %-8" PRIu64 " len %-8" PRIu64 " (file %zu)\n", opno, op_names[op], off, len, ref_len);
}

static void dump_log(void)
{
	fprintf(stderr, "last operations:\n");
	long first = opno - LOG_KEEP + 1 < 1 ? 1 : opno - LOG_KEEP + 1;
	for (long i = first; i <= opno; i++) {
		int k = (int)(i % LOG_KEEP);
		if (log_ring[k].no != i)
			continue;
		fprintf(stderr, "  %6ld %-10s off %-8" PRIu64 " len %" PRIu64 "\n", i, op_names[log_ring[k].op],
			log_ring[k].off, log_ring[k].len);
	}
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "fsx: op %ld: ", opno);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	dump_log();
	exit(1);
}

/* Random bytes from an alphabet that never spells PASS_REPLACEMENT. */
static void fill(unsigned char *p, size_t n)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyz0123456789 \n";
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)abc[rnd(sizeof(abc) - 1)];
}

static void open_file(int flags)
{
	fd = open(path, O_RDWR | O_CREAT | flags, 0644);
	if (fd < 0)
		fail("open %s: %s", path, strerror(errno));
}

static void close_file(void)
{
	if (close(fd) != 0)
		fail("close: %s", strerror(errno));
	fd = -1;
}

static void full_write(int f, const unsigned char *p, size_t n, uint64_t off, int positional)
{
	while (n > 0) {
		ssize_t k = positional ? pwrite(f, p, n, (off_t)off) : write(f, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			fail("%s of %zu bytes at %" PRIu64 ": %s", positional ? "pwrite" : "write", n, off,
			     k < 0 ? strerror(errno) : "wrote nothing");
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
}

/* Reads [off, off+len) and compares it with the reference. */
static void check_range(uint64_t off, size_t len, const char *what)
{
	size_t got = 0;
	while (got < len) {
		ssize_t k = pread(fd, buf + got, len - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			fail("%s: pread at %" PRIu64 ": %s", what, off + got, strerror(errno));
		if (k == 0)
			break;
		got += (size_t)k;
	}
	size_t want = off >= ref_len ? 0 : (ref_len - off < len ? ref_len - off : len);
	if (got != want)
		fail("%s: read %zu bytes at %" PRIu64 ", expected %zu (file length %zu)", what, got, off, want, ref_len);
	for (size_t i = 0; i < got; i++)
		if (buf[i] != ref[off + i])
			fail("%s: byte %" PRIu64 " is 0x%02x, expected 0x%02x (read of %zu at %" PRIu64 ")", what,
			     off + i, buf[i], ref[off + i], len, off);
}

static void check_all(const char *what)
{
	check_range(0, ref_len + 16, what);
}

static void check_size(const char *what)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		fail("%s: fstat: %s", what, strerror(errno));
	if ((size_t)st.st_size != ref_len)
		fail("%s: fstat size %jd, expected %zu", what, (intmax_t)st.st_size, ref_len);
}

static void ref_write(const unsigned char *p, size_t n, uint64_t off)
{
	if (off > ref_len)
		memset(ref + ref_len, 0, off - ref_len);
	memcpy(ref + off, p, n);
	if (off + n > ref_len)
		ref_len = off + n;
}

static void do_op(enum op op)
{
	switch (op) {
	case OP_WRITE: {
		/* Mostly inside or just past the file; sometimes a hole. */
		uint64_t off = rnd(ref_len + (rnd(4) == 0 ? 8192 : 64));
		size_t len = 1 + rnd(rnd(8) == 0 ? 65536 : 4096);
		if (off >= maxlen)
			off = maxlen - 1;
		if (off + len > maxlen)
			len = maxlen - off;
		logop(op, off, len);
		fill(buf, len);
		full_write(fd, buf, len, off, 1);
		ref_write(buf, len, off);
		break;
	}
	case OP_APPEND: {
		size_t len = 1 + rnd(2048);
		if (ref_len + len > maxlen) {
			op = OP_TRUNCATE;
			goto truncate;
		}
		logop(op, ref_len, len);
		int afd = open(path, O_WRONLY | O_APPEND);
		if (afd < 0)
			fail("open O_APPEND: %s", strerror(errno));
		fill(buf, len);
		/* O_APPEND: the offset given is ignored; the end wins. */
		full_write(afd, buf, len, 0, 0);
		if (close(afd) != 0)
			fail("close O_APPEND: %s", strerror(errno));
		ref_write(buf, len, ref_len);
		break;
	}
	case OP_TRUNCATE:
	truncate: {
		uint64_t len = rnd(4) == 0 ? ref_len + rnd(16384) : rnd(ref_len + 1);
		if (len > maxlen)
			len = maxlen;
		logop(OP_TRUNCATE, len, 0);
		if (ftruncate(fd, (off_t)len) != 0)
			fail("ftruncate to %" PRIu64 ": %s", len, strerror(errno));
		if (len > ref_len)
			memset(ref + ref_len, 0, len - ref_len);
		ref_len = len;
		break;
	}
	case OP_READ: {
		uint64_t off = rnd(ref_len + 256);
		size_t len = 1 + rnd(rnd(8) == 0 ? 131072 : 4096);
		logop(op, off, len);
		check_range(off, len, "read");
		break;
	}
	case OP_STAT:
		logop(op, 0, 0);
		check_size("stat");
		break;
	case OP_REOPEN:
		logop(op, 0, 0);
		close_file();
		open_file(0);
		check_size("reopen");
		check_all("reopen");
		break;
	case OP_TRUNC_OPEN: {
		size_t len = rnd(8192);
		logop(op, 0, len);
		close_file();
		open_file(O_TRUNC);
		ref_len = 0;
		fill(buf, len);
		full_write(fd, buf, len, 0, 1);
		ref_write(buf, len, 0);
		check_all("trunc-open");
		break;
	}
	case OP_EFBIG: {
		if (cap == 0) {         /* -c 0: no cap to check */
			logop(OP_STAT, 0, 0);
			check_size("stat");
			break;
		}
		uint64_t off = cap + rnd(4096);
		logop(op, off, 16);
		fill(buf, 16);
		ssize_t k = pwrite(fd, buf, 16, (off_t)off);
		if (k >= 0 || errno != EFBIG)
			fail("pwrite past the cap at %" PRIu64 ": %s, expected EFBIG", off,
			     k >= 0 ? "succeeded" : strerror(errno));
		check_size("efbig");
		break;
	}
	case NOPS:
		break;
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: passfs_fsx [-N ops] [-S seed] [-l maxlen] [-c cap] [-v] FILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long nops = 1000;
	uint64_t seed = 0;
	int have_seed = 0, c;
	while ((c = getopt(argc, argv, "N:S:l:c:v")) != -1) {
		switch (c) {
		case 'N': nops = strtol(optarg, NULL, 0); break;
		case 'S': seed = strtoull(optarg, NULL, 0); have_seed = 1; break;
		case 'l': maxlen = strtoull(optarg, NULL, 0); break;
		case 'c': cap = strtoull(optarg, NULL, 0); break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	}
	if (optind + 1 != argc || nops < 0 || maxlen < 2)
		usage();
	path = argv[optind];
	if (cap && maxlen > cap)
		maxlen = cap;
	if (!have_seed) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
	}
	rng = seed;
	printf("fsx: seed %" PRIu64 " (replay: -S %" PRIu64 "), %ld ops on %s, max length %zu\n", seed, seed, nops,
	       path, maxlen);
	fflush(stdout);
	/* Room for a read past the end and a write just below maxlen. */
	ref = calloc(1, maxlen + 65536 + 16384);
	buf = malloc(maxlen + 131072 + 65536);
	if (ref == NULL || buf == NULL) {
		fprintf(stderr, "fsx: out of memory\n");
		return 1;
	}
	open_file(O_TRUNC);
	check_size("start");

	int total = 0;
	for (int i = 0; i < NOPS; i++)
		total += op_weight[i];
	for (opno = 1; opno <= nops; opno++) {
		int r = (int)rnd((uint64_t)total), op = 0;
		while (r >= op_weight[op])
			r -= op_weight[op++];
		do_op((enum op)op);
	}
	check_size("end");
	check_all("end");
	close_file();
	/* A fresh open sees the same bytes. */
	open_file(0);
	check_all("final reopen");
	close_file();

	printf("fsx: %ld ops, no mismatch, final length %zu (", nops, ref_len);
	for (int i = 0; i < NOPS; i++)
		printf("%s%s %ld", i ? ", " : "", op_names[i], counts[i]);
	printf(")\n");
	return 0;
}
