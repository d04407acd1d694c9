/* test_broker.c - engine/broker/broker.h without a server: the broker URL
 * (credentials, database, IPv6, what messages show, rediss:// refused), the
 * job's encoding (a round trip of every field, and each way a job is
 * refused: magic, version, cut short, trailing bytes, oversized, a bad
 * backend, options out of range), and hiding a password in argv. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "check.h"
#include "graph.h"
#include "wire.h"

static void test_url(void)
{
	struct broker_url u;
	char err[256];
	CHECK(broker_url_parse("redis://127.0.0.1:6380", &u, err, sizeof err) == 0);
	CHECK(strcmp(u.host, "127.0.0.1") == 0 && u.port == 6380 && u.db == 0 && !u.user[0] && !u.pass[0]);
	CHECK_MSG(strcmp(u.shown, "redis://127.0.0.1:6380/0") == 0, u.shown);
	CHECK(broker_url_parse("redis://alice:p%40ss@redis.example:7000/3", &u, err, sizeof err) == 0);
	CHECK(strcmp(u.user, "alice") == 0 && strcmp(u.pass, "p@ss") == 0 && u.db == 3 && u.port == 7000);
	CHECK_MSG(strcmp(u.shown, "redis://***@redis.example:7000/3") == 0, u.shown);
	CHECK(strstr(u.shown, "p@ss") == NULL);
	CHECK(broker_url_parse("redis://:secret@host", &u, err, sizeof err) == 0);
	CHECK(!u.user[0] && strcmp(u.pass, "secret") == 0 && u.port == 6379);
	CHECK(broker_url_parse("redis://secret@host", &u, err, sizeof err) == 0);
	CHECK(!u.user[0] && strcmp(u.pass, "secret") == 0);
	CHECK(broker_url_parse("redis://[::1]:6390", &u, err, sizeof err) == 0);
	CHECK(strcmp(u.host, "::1") == 0 && u.port == 6390);
	CHECK_MSG(strcmp(u.shown, "redis://[::1]:6390/0") == 0, u.shown);
	CHECK(broker_url_parse("rediss://host:6379", &u, err, sizeof err) == -1);
	CHECK_MSG(strstr(err, "not supported") != NULL, err);
	CHECK(broker_url_parse("http://host", &u, err, sizeof err) == -1);
	CHECK(broker_url_parse("redis://host:0", &u, err, sizeof err) == -1);
	CHECK(broker_url_parse("redis://host:99999", &u, err, sizeof err) == -1);
	CHECK(broker_url_parse("redis://host:12x", &u, err, sizeof err) == -1);
	CHECK(broker_url_parse("redis://:6379", &u, err, sizeof err) == -1);
	CHECK(broker_url_parse("redis://host/x", &u, err, sizeof err) == -1);
	CHECK(broker_url_parse("redis://a:b%4@host", &u, err, sizeof err) == -1);
	CHECK(broker_url_parse("", &u, err, sizeof err) == -1);
}

static void test_take(void)
{
	char arg[] = "redis://bob:hunter2@h:1/0";
	char *url = broker_url_take(arg);
	CHECK(url && strcmp(url, "redis://bob:hunter2@h:1/0") == 0);
	CHECK_MSG(strcmp(arg, "redis://bob:*******@h:1/0") == 0, arg);
	free(url);
	char lone[] = "redis://hunter2@h";
	url = broker_url_take(lone);
	CHECK_MSG(strcmp(lone, "redis://*******@h") == 0, lone);
	free(url);
	setenv(BROKER_ENV, "redis://x:y@h", 1);
	url = broker_url_take(NULL);
	CHECK(url && strcmp(url, "redis://x:y@h") == 0 && getenv(BROKER_ENV) == NULL);
	free(url);
	CHECK(broker_url_take(NULL) == NULL);
}

static void test_job(void)
{
	static const char pass[] = "#include <passfs.h>\nint x;\n";
	struct eval_job j = {.graph_text = "{}", .graph_len = 2, .graph_label = "tasks/t/graph.json",
			     .pass_label = "pass.c", .pass_src = pass, .pass_len = sizeof pass - 1,
			     .opts = {.backend = "cpu", .warmup = -1, .trials = 7, .variant_timeout_s = 3.5,
				      .secret_seed = 0x1234567890abcdefull, .b = 0.2, .p = 1.5, .cold = 1,
				      .lock_timeout_s = 12, .quiet = 1, .trial_times = 1, .check_only = 1}};
	unsigned char *buf;
	size_t len;
	CHECK(broker_job_encode(&j, &buf, &len) == 0);
	struct eval_job d;
	char *labels, err[256];
	CHECK_MSG(broker_job_decode(buf, len, &d, &labels, err, sizeof err) == 0, err);
	CHECK(strcmp(d.opts.backend, "cpu") == 0 && d.opts.warmup == -1 && d.opts.trials == 7 &&
	      d.opts.variant_timeout_s == 3.5 && d.opts.secret_seed == 0x1234567890abcdefull && d.opts.b == 0.2 &&
	      d.opts.p == 1.5 && d.opts.cold == 1 && d.opts.lock_timeout_s == 12 && d.opts.quiet == 1 &&
	      d.opts.trial_times == 1 && d.opts.check_only == 1);
	CHECK(strcmp(d.pass_label, "pass.c") == 0 && strcmp(d.graph_label, "tasks/t/graph.json") == 0);
	CHECK(d.pass_len == j.pass_len && memcmp(d.pass_src, pass, d.pass_len) == 0 && d.graph_text == NULL);
	free(labels);
	/* cut short, anywhere */
	int refused = 0;
	for (size_t n = 0; n < len; n++)
		refused += broker_job_decode(buf, n, &d, &labels, err, sizeof err) == -1;
	CHECK(refused == (int)len);
	/* a byte too many */
	unsigned char *more = malloc(len + 1);
	memcpy(more, buf, len);
	more[len] = 0;
	CHECK(broker_job_decode(more, len + 1, &d, &labels, err, sizeof err) == -1);
	free(more);
	/* magic, version */
	buf[0] ^= 1;
	CHECK(broker_job_decode(buf, len, &d, &labels, err, sizeof err) == -1 && strstr(err, "magic"));
	buf[0] ^= 1;
	wire_put_u32(buf + 4, BROKER_JOB_VERSION + 1);
	char other[32];
	snprintf(other, sizeof other, "version %d", BROKER_JOB_VERSION + 1);
	CHECK(broker_job_decode(buf, len, &d, &labels, err, sizeof err) == -1 && strstr(err, other));
	wire_put_u32(buf + 4, BROKER_JOB_VERSION);
	/* trials out of range (the second i32) */
	wire_put_u32(buf + 12, 1000001);
	CHECK(broker_job_decode(buf, len, &d, &labels, err, sizeof err) == -1 && strstr(err, "range"));
	wire_put_u32(buf + 12, 7);
	CHECK(broker_job_decode(buf, len, &d, &labels, err, sizeof err) == 0);
	free(labels);
	free(buf);
	/* a backend the worker does not know */
	snprintf(j.opts.backend, sizeof j.opts.backend, "tpu");
	CHECK(broker_job_encode(&j, &buf, &len) == 0);
	CHECK(broker_job_decode(buf, len, &d, &labels, err, sizeof err) == -1 && strstr(err, "backend"));
	free(buf);
	/* a prefix of a backend's name is not that backend */
	snprintf(j.opts.backend, sizeof j.opts.backend, "cu");
	CHECK(broker_job_encode(&j, &buf, &len) == 0);
	CHECK(broker_job_decode(buf, len, &d, &labels, err, sizeof err) == -1 && strstr(err, "backend"));
	free(buf);
	/* over the pass.c cap: not encoded, and refused when forged */
	snprintf(j.opts.backend, sizeof j.opts.backend, "auto");
	char *big = calloc(1, (size_t)PF_CAP_PASS_C + 2);
	j.pass_src = big;
	j.pass_len = (size_t)PF_CAP_PASS_C + 1;
	CHECK(broker_job_encode(&j, &buf, &len) == -1);
	j.pass_len = PF_CAP_PASS_C;
	CHECK(broker_job_encode(&j, &buf, &len) == 0);
	wire_put_u32(buf + len - PF_CAP_PASS_C - 4, PF_CAP_PASS_C + 1);
	unsigned char *forged = malloc(len + 1);
	memcpy(forged, buf, len);
	forged[len] = 'x';
	CHECK(broker_job_decode(forged, len + 1, &d, &labels, err, sizeof err) == -1 && strstr(err, "limit"));
	free(forged);
	free(buf);
	free(big);
}

int main(void)
{
	test_url();
	test_take();
	test_job();
	printf("test_broker: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
