/* test_base.c - base/, the bottom layer: sha256 against the FIPS 180-4
 * vectors, the string builder, the string map, capped whole-file reads,
 * atomic writes, tree removal, the little-endian wire codec, fd I/O and the
 * monotonic clock. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <time.h>

#include "check.h"
#include "clock.h"
#include "file.h"
#include "hash.h"
#include "map.h"
#include "proc.h"
#include "sha256.h"
#include "strbuf.h"
#include "wire.h"

static char scratch[256];

static void test_sha256(void)
{
	char hex[65];
	sha256_hex("", 0, hex);
	CHECK_MSG(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0, hex);
	sha256_hex("abc", 3, hex);
	CHECK_MSG(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0, hex);
	const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_hex(m448, strlen(m448), hex);
	CHECK_MSG(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0, hex);
	char *mil = malloc(1000000);
	CHECK(mil != NULL);
	if (mil) {
		memset(mil, 'a', 1000000);
		sha256_hex(mil, 1000000, hex);
		CHECK_MSG(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0, hex);
		free(mil);
	}
	/* HMAC-SHA-256, RFC 4231 test cases 2 and 6 (a key longer than a block) */
	const char *m2 = "what do ya want for nothing?";
	CHECK(hmac_sha256_hex("Jefe", 4, m2, strlen(m2), hex) == 0);
	CHECK_MSG(strcmp(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843") == 0, hex);
	unsigned char k6[131];
	memset(k6, 0xaa, sizeof(k6));
	const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
	CHECK(hmac_sha256_hex(k6, sizeof(k6), m6, strlen(m6), hex) == 0);
	CHECK_MSG(strcmp(hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54") == 0, hex);
}

static void test_strbuf(void)
{
	struct strbuf b = {0};
	CHECK(strbuf_puts(&b, "") == 0 && b.p != NULL && b.len == 0 && b.p[0] == 0);
	for (int i = 0; i < 1000; i++)
		CHECK(strbuf_printf(&b, "%d,", i) == 0);
	CHECK(!b.oom && b.len == strlen(b.p));
	CHECK(strncmp(b.p, "0,1,2,", 6) == 0 && strcmp(b.p + b.len - 4, "999,") == 0);
	CHECK(b.cap > b.len);
	/* bytes with a NUL, then a character */
	size_t before = b.len;
	CHECK(strbuf_add(&b, "x\0y", 3) == 0 && strbuf_putc(&b, 'z') == 0);
	CHECK(b.len == before + 4 && memcmp(b.p + before, "x\0yz", 5) == 0);
	/* one long printf past the buffer's size */
	char big[5000];
	memset(big, 'q', sizeof big - 1);
	big[sizeof big - 1] = 0;
	strbuf_reset(&b);
	CHECK(b.len == 0 && b.p[0] == 0);
	CHECK(strbuf_printf(&b, "<%s>", big) == 0 && b.len == sizeof big + 1 && b.p[b.len - 1] == '>');
	char *s = strbuf_take(&b);
	CHECK(s != NULL && b.p == NULL && b.len == 0);
	free(s);
	s = strbuf_take(&b);
	CHECK(s != NULL && s[0] == 0);
	free(s);
	/* the tail keeper: the last 8 bytes, the rest counted */
	char tail[8];
	size_t tl = 0;
	unsigned long long dropped = 0;
	base_tail_keep(tail, sizeof tail, &tl, "abcde", 5, &dropped);
	CHECK(tl == 5 && dropped == 0 && memcmp(tail, "abcde", 5) == 0);
	base_tail_keep(tail, sizeof tail, &tl, "fghij", 5, &dropped);
	CHECK(tl == 8 && dropped == 2 && memcmp(tail, "cdefghij", 8) == 0);
	base_tail_keep(tail, sizeof tail, &tl, "0123456789", 10, &dropped);
	CHECK(tl == 8 && dropped == 12 && memcmp(tail, "23456789", 8) == 0);
	base_tail_keep(tail, sizeof tail, &tl, "", 0, &dropped);
	CHECK(tl == 8 && dropped == 12);
	/* the bare-string form */
	char *raw = NULL;
	size_t cap = 0;
	CHECK(strbuf_printf_bare(&raw, &cap, "%s", "ab") == 0 && strbuf_printf_bare(&raw, &cap, "%d", 42) == 0);
	CHECK(raw != NULL && strcmp(raw, "ab42") == 0 && cap > 4);
	free(raw);
}

static void test_grow(void)
{
	void *p = NULL;
	size_t cap = 0;
	CHECK(base_grow(&p, &cap, 10, 64, 0) == 0 && p != NULL && cap == 64);
	memset(p, 7, 10);
	CHECK(base_grow(&p, &cap, 64, 64, 0) == 0 && cap == 64);   /* fits: unchanged */
	CHECK(base_grow(&p, &cap, 65, 64, 0) == 0 && cap == 128 && ((unsigned char *)p)[9] == 7);
	CHECK(base_grow(&p, &cap, 1000, 64, 300) == -EFBIG && cap == 128);
	CHECK(base_grow(&p, &cap, 200, 64, 300) == 0 && cap == 256);
	CHECK(base_grow(&p, &cap, 290, 64, 300) == 0 && cap == 300);   /* doubling stops at the bound */
	free(p);
}

static void test_map(void)
{
	/* FNV-1a known answers */
	CHECK(base_fnv1a("", 0) == 14695981039346656037ull);
	CHECK(base_fnv1a("a", 1) == 0xaf63dc4c8601ec8cull);
	CHECK(base_fnv1a("foobar", 6) == 0x85944171f73967e8ull);
	CHECK(base_fnv1a_step(base_fnv1a("foo", 3), "bar", 3) == base_fnv1a("foobar", 6));

	struct base_map m = {.copy_keys = 1};
	CHECK(base_map_get(&m, "x") == NULL);
	char k[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(k, sizeof k, "key%d", i);
		CHECK(base_map_put(&m, k, (void *)(intptr_t)(i + 1)) == 0);
	}
	CHECK(m.n == 5000 && m.cap >= 10000);
	int bad = 0;
	for (int i = 0; i < 5000; i++) {
		snprintf(k, sizeof k, "key%d", i);
		if (base_map_get_int(&m, k, strlen(k), -1) != i + 1)
			bad++;
	}
	CHECK(bad == 0);
	CHECK(base_map_get(&m, "key5000") == NULL && base_map_get_int(&m, "nope", 4, -7) == -7);
	/* replace keeps one entry */
	CHECK(base_map_put(&m, "key7", (void *)(intptr_t)99) == 0 && m.n == 5000);
	CHECK(base_map_get_int(&m, "key7", 4, -1) == 99);
	/* keys by length: a prefix of a stored key is another key */
	CHECK(base_map_get_int(&m, "key70", 4, -1) == 99);
	base_map_clear(&m);
	CHECK(m.n == 0 && base_map_get(&m, "key7") == NULL);
	base_map_free(&m);

	/* collisions: a table of 64 slots and keys in the same slot probe on */
	struct base_map c = {0};
	const char *keys[8];
	char store[8][16];
	int n = 0;
	uint64_t want = base_fnv1a("c0", 2) & 63;
	for (int i = 0; n < 8 && i < 100000; i++) {
		snprintf(store[n], sizeof store[n], "c%d", i);
		if ((base_fnv1a(store[n], strlen(store[n])) & 63) == want) {
			keys[n] = store[n];
			n++;
		}
	}
	CHECK(n == 8);
	for (int i = 0; i < n; i++)
		CHECK(base_map_put(&c, keys[i], (void *)(intptr_t)(100 + i)) == 0);
	CHECK(c.cap == 64);
	for (int i = 0; i < n; i++)
		CHECK(base_map_get_int(&c, keys[i], strlen(keys[i]), -1) == 100 + i);
	/* borrowed keys are the caller's pointers */
	void **v = base_map_get(&c, keys[3]);
	CHECK(v != NULL && (intptr_t)*v == 103);
	base_map_free(&c);
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_file(void)
{
	char path[700], dir[512];
	snprintf(dir, sizeof dir, "%s/files", scratch);
	CHECK(mkdir(dir, 0700) == 0);
	snprintf(path, sizeof path, "%s/f.txt", dir);

	/* atomic write: creates, then replaces; no temporary left */
	CHECK(base_write_atomic(path, ".", "hello", 5, 0644, 0) == 0);
	CHECK(base_write_atomic(path, ".", "goodbye\n", 8, 0600, BASE_ATOMIC_DURABLE | BASE_ATOMIC_EXACT_MODE) == 0);
	size_t len = 0;
	int err = 0;
	char *s = base_read_file(path, 100, &len, &err);
	CHECK(s != NULL && len == 8 && strcmp(s, "goodbye\n") == 0);
	free(s);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(count_entries(dir) == 1);
	/* no clobber: an existing path stays, and the temporary goes */
	CHECK(base_write_atomic(path, ".", "x", 1, 0644, BASE_ATOMIC_NOCLOBBER) == -EEXIST);
	s = base_read_file(path, 100, &len, &err);
	CHECK(s != NULL && strcmp(s, "goodbye\n") == 0);
	free(s);
	CHECK(count_entries(dir) == 1);
	/* a stream written through a dup, then committed */
	char p2[600];
	snprintf(p2, sizeof p2, "%s/g.txt", dir);
	struct base_atomic a;
	CHECK(base_atomic_open(&a, p2, "", 0644, 0) == 0);
	CHECK(strstr(a.tmp, "/g.txt.") != NULL && strcmp(a.tmp + strlen(a.tmp) - 4, ".tmp") == 0);
	FILE *f = fdopen(dup(a.fd), "w");
	CHECK(f != NULL);
	if (f) {
		fprintf(f, "%d", 12345);
		CHECK(fclose(f) == 0);
	}
	CHECK(access(p2, F_OK) != 0);           /* not there until committed */
	CHECK(base_atomic_commit(&a, BASE_ATOMIC_NOCLOBBER) == 0);
	s = base_read_file(p2, 100, &len, &err);
	CHECK(s != NULL && strcmp(s, "12345") == 0);
	free(s);
	CHECK(count_entries(dir) == 2);
	/* an aborted write leaves nothing */
	CHECK(base_atomic_open(&a, p2, "", 0644, 0) == 0);
	base_atomic_abort(&a);
	CHECK(count_entries(dir) == 2);

	/* the cap: exactly max is fine, one byte more is EFBIG */
	s = base_read_file(path, 8, &len, &err);
	CHECK(s != NULL && len == 8);
	free(s);
	err = 0;
	s = base_read_file(path, 7, &len, &err);
	CHECK(s == NULL && err == EFBIG);
	err = 0;
	s = base_read_file(dir, 100, &len, &err);
	CHECK(s == NULL && err == EISDIR);
	snprintf(p2, sizeof p2, "%s/missing", dir);
	s = base_read_file(p2, 100, &len, &err);
	CHECK(s == NULL && err == ENOENT);
	/* a pipe: not seekable, read to its end, capped too */
	int pfd[2];
	CHECK(pipe(pfd) == 0);
	CHECK(base_write_all(pfd[1], "0123456789", 10) == 0);
	close(pfd[1]);
	s = base_read_fd(pfd[0], 9, &len, &err);
	CHECK(s == NULL && err == EFBIG);
	close(pfd[0]);
	CHECK(pipe(pfd) == 0);
	CHECK(base_write_all(pfd[1], "0123456789", 10) == 0);
	close(pfd[1]);
	s = base_read_fd(pfd[0], 10, &len, &err);
	CHECK(s != NULL && len == 10 && strcmp(s, "0123456789") == 0);
	free(s);
	close(pfd[0]);

	/* remove a tree: nested directories, files and a symbolic link whose
	 * target outside the tree survives */
	char t[700], q[800];
	snprintf(t, sizeof t, "%s/tree", scratch);
	CHECK(mkdir(t, 0700) == 0);
	snprintf(q, sizeof q, "%s/a", t);
	CHECK(mkdir(q, 0700) == 0);
	snprintf(q, sizeof q, "%s/a/b", t);
	CHECK(mkdir(q, 0700) == 0);
	snprintf(q, sizeof q, "%s/a/b/file", t);
	CHECK(base_write_atomic(q, ".", "z", 1, 0600, 0) == 0);
	snprintf(q, sizeof q, "%s/link", t);
	CHECK(symlink(dir, q) == 0);
	CHECK(base_rmtree(t) == 0);
	CHECK(access(t, F_OK) != 0 && errno == ENOENT);
	CHECK(count_entries(dir) == 2);         /* the link's target is untouched */
	CHECK(base_rmtree(t) == 0);             /* already gone: fine */
	CHECK(base_rmtree(dir) == 0 && access(dir, F_OK) != 0);
}

static void test_wire(void)
{
	unsigned char fixed[8];
	wire_put_u32(fixed, 0x01020304u);
	CHECK(fixed[0] == 4 && fixed[1] == 3 && fixed[2] == 2 && fixed[3] == 1);
	CHECK(wire_get_u32(fixed) == 0x01020304u);
	wire_put_le(fixed, 0xabcdef, 3);
	CHECK(fixed[0] == 0xef && fixed[2] == 0xab && wire_get_le(fixed, 3) == 0xabcdef);
	wire_put_f64(fixed, 1.0);             /* 0x3ff0000000000000 */
	CHECK(fixed[7] == 0x3f && fixed[6] == 0xf0 && fixed[0] == 0);

	struct wire_buf b = {0};
	wire_add_u8(&b, 0xfe);
	wire_add_u32(&b, 0xdeadbeefu);
	wire_add_u64(&b, 0x0123456789abcdefull);
	wire_add_f64(&b, -2.5);
	wire_add_bytes(&b, "bytes", 5);
	for (int i = 0; i < 1000; i++)
		wire_add_u32(&b, (uint32_t)i);
	CHECK(!b.oom && b.len == 1 + 4 + 8 + 8 + 5 + 4000);
	CHECK(b.p[1] == 0xef && b.p[4] == 0xde);

	struct wire_in r = {.p = b.p, .len = b.len};
	CHECK(wire_take_u8(&r) == 0xfe);
	CHECK(wire_take_u32(&r) == 0xdeadbeefu);
	CHECK(wire_take_u64(&r) == 0x0123456789abcdefull);
	CHECK(wire_take_f64(&r) == -2.5);
	const char *s = wire_take_bytes(&r, 5);
	CHECK(s != NULL && memcmp(s, "bytes", 5) == 0);
	int bad = 0;
	for (int i = 0; i < 1000; i++)
		if (wire_take_u32(&r) != (uint32_t)i)
			bad++;
	CHECK(bad == 0 && !r.bad && r.off == r.len);

	/* truncated: a u64 from 7 bytes fails, consumes nothing, and sticks */
	struct wire_in t = {.p = b.p, .len = 7};
	CHECK(wire_take_u8(&t) == 0xfe && !t.bad);
	CHECK(wire_take_u64(&t) == 0 && t.bad && t.off == 1);
	CHECK(wire_take_u8(&t) == 0 && t.off == 1);
	CHECK(wire_take_bytes(&t, 0) == NULL);
	struct wire_in e = {.p = b.p, .len = 0};
	CHECK(wire_take_u32(&e) == 0 && e.bad);
	free(b.p);
}

static void test_proc(void)
{
	int pfd[2];
	CHECK(pipe(pfd) == 0);
	CHECK(base_write_all(pfd[1], "abc", 3) == 0);
	close(pfd[1]);
	char buf[8];
	CHECK(base_read_full(pfd[0], buf, sizeof buf) == 3 && memcmp(buf, "abc", 3) == 0);
	CHECK(base_read_full(pfd[0], buf, sizeof buf) == 0);
	close(pfd[0]);
	CHECK(base_write_all(-1, "x", 1) == -EBADF);
	pid_t pid = fork();
	if (pid == 0)
		_exit(7);
	int st = 0;
	CHECK(pid > 0 && base_waitpid(pid, &st) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 7);
	CHECK(base_waitpid(pid, NULL) == -1 && errno == ECHILD);
}

/* what /proc/self/FILE holds: its length, and how many of its bytes are
 * not zero */
static size_t proc_nonzero(const char *file, size_t *len)
{
	char path[64], buf[65536];
	snprintf(path, sizeof path, "/proc/self/%s", file);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : base_read_full(fd, buf, sizeof buf);
	if (fd >= 0)
		close(fd);
	size_t nz = 0;
	for (ssize_t i = 0; i < n; i++)
		nz += buf[i] != 0;
	*len = n > 0 ? (size_t)n : 0;
	return nz;
}

static int keep_path_only(const char *kv)
{
	return strncmp(kv, "PATH=", 5) == 0;
}

/* the scrub in a child (it cannot be undone): the kept variable still
 * found, the others gone, the kernel's view of the strings all zeros */
static void test_scrub_environ(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		size_t len = 0;
		int bad = 0;
		/* a variable from the exec'd environment, not a setenv copy */
		if (getenv("PATH") == NULL || proc_nonzero("environ", &len) == 0)
			_exit(10);
		if (proc_nonzero("cmdline", &len) == 0)
			_exit(11);
		if (base_scrub_environ(keep_path_only, 1) != 0)
			_exit(12);
		bad |= (getenv("PATH") == NULL) << 0;
		bad |= (getenv("HOME") != NULL || getenv("PASSFS_NOT_KEPT") != NULL) << 1;
		bad |= (proc_nonzero("environ", &len) != 0 || len == 0) << 2;
		bad |= (proc_nonzero("cmdline", &len) != 0) << 3;
		_exit(bad);
	}
	int st = -1;
	CHECK(pid > 0 && base_waitpid(pid, &st) == pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "scrub child: status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_clock(void)
{
	double t0 = base_now_ms();
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	double t1 = base_now_ms();
	CHECK(t0 > 0 && t1 >= t0 + 19.0 && t1 < t0 + 5000.0);
	double prev = base_now_ms();
	int back = 0;
	for (int i = 0; i < 10000; i++) {
		double t = base_now_ms();
		if (t < prev)
			back++;
		prev = t;
	}
	CHECK(back == 0);
	/* the thread's CPU clock: still while it sleeps, moving while it works */
	double c0 = base_thread_cpu_ms();
	nanosleep(&ts, NULL);
	double c1 = base_thread_cpu_ms();
	CHECK(c1 >= c0 && c1 < c0 + 10.0);
	/* work until the CPU clock has moved 5 ms: a fixed stretch of wall time
	 * gave fewer than 5 ms of CPU on a loaded machine (the thread waited for
	 * a core); 5 s of wall time is the most a working thread may take */
	volatile double x = 0;
	double w0 = base_now_ms(), c2;
	while ((c2 = base_thread_cpu_ms()) < c1 + 5.0 && base_now_ms() < w0 + 5000.0)
		x += 1.0;
	CHECK(c2 >= c1 + 5.0);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(scratch, sizeof scratch, "%s/passfs-test-base-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(scratch) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_sha256();
	test_strbuf();
	test_grow();
	test_map();
	test_file();
	test_wire();
	test_proc();
	test_scrub_environ();
	test_clock();
	base_rmtree(scratch);
	printf("test_base: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
