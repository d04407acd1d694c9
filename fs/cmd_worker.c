/* cmd_worker.c - `passfs worker` (evaluates the broker's jobs) and `passfs
 * broker status` (engine/broker/broker.h, docs/broker.md). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "cmd.h"

static void worker_usage(FILE *f)
{
	fprintf(f,
		"usage: passfs worker [--broker URL] [--name NAME] [--backend auto|cpu|cuda] [--slots N]\n"
		"                     [--lease S] [--beat S] [--quiet]\n\n"
		"Takes evaluation jobs from a Redis Streams broker (what 'passfs mount|watch|eval\n"
		"--broker URL' queue), evaluates each here in an evaluation process of its own\n"
		"(the same jail, sandbox and integrity rules as a local evaluation) and answers\n"
		"with the result (\"worker\": NAME).  Runs until SIGTERM or SIGINT, which drain: the\n"
		"jobs in flight finish first (a second signal stops them and hands them back to\n"
		"the other workers).\n\n"
		"  --broker URL    redis://[user:pass@]host:port[/db] (default: $" BROKER_ENV ",\n"
		"                  which keeps the password out of ps)\n"
		"  --name NAME     this worker in results and 'passfs broker status' (default:\n"
		"                  host-pid)\n"
		"  --backend B     auto (default), cpu or cuda: jobs that ask auto run on B; a job\n"
		"                  that asks another backend is answered with an error\n"
		"  --slots N       evaluations at once (default 1)\n"
		"  --lease S       a job in flight whose worker stopped beating for S seconds is\n"
		"                  taken over by another worker (default 60)\n"
		"  --beat S        heartbeat period (default 2)\n"
		"  --quiet         no line per job\n\n"
		"docs/broker.md has the details.\n");
}

static int seconds(const char *v, double *out, const char *how)
{
	char *end;
	double d = strtod(v, &end);
	if (*end || !*v || !(d > 0) || d > 86400) {
		fprintf(stderr, "passfs worker: %s needs seconds above 0 and at most 86400, not '%s'\n", how, v);
		return 2;
	}
	*out = d;
	return 0;
}

int cmd_worker(int argc, char **argv)
{
	struct option opts[] = {{"broker", required_argument, NULL, 'b'}, {"name", required_argument, NULL, 'n'},
				{"backend", required_argument, NULL, 'B'}, {"slots", required_argument, NULL, 's'},
				{"lease", required_argument, NULL, 'l'},  {"beat", required_argument, NULL, 'e'},
				{"quiet", no_argument, NULL, 'q'},         {"help", no_argument, NULL, 'h'},
				{NULL, 0, NULL, 0}};
	struct broker_worker_opts o = {0};
	char *flag = NULL, *end;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
		switch (c) {
		case 'b': flag = optarg; break;
		case 'n': o.name = optarg; break;
		case 'B':
			if (strcmp(optarg, "auto") && strcmp(optarg, "cpu") && strcmp(optarg, "cuda")) {
				fprintf(stderr, "passfs worker: --backend must be auto, cpu or cuda, not '%s'\n", optarg);
				return 2;
			}
			o.backend = optarg;
			break;
		case 's': {
			long v = strtol(optarg, &end, 10);
			if (*end || !*optarg || v < 1 || v > 1024) {
				fprintf(stderr, "passfs worker: --slots needs a whole number from 1 to 1024, not '%s'\n", optarg);
				return 2;
			}
			o.slots = (int)v;
			break;
		}
		case 'l': if (seconds(optarg, &o.lease_s, "--lease")) return 2; break;
		case 'e': if (seconds(optarg, &o.beat_s, "--beat")) return 2; break;
		case 'q': o.quiet = 1; break;
		case 'h': worker_usage(stdout); return 0;
		default: worker_usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "passfs worker: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	char *url = broker_url_take(flag);
	if (url == NULL) {
		fprintf(stderr, "passfs worker: --broker URL (or $" BROKER_ENV ") is required\n");
		return 2;
	}
	o.url = url;
	char err[1024];
	int rc = broker_worker_run(&o, err, sizeof err);
	memset(url, 0, strlen(url));
	free(url);
	if (rc != 0) {
		fprintf(stderr, "passfs worker: %s\n", err);
		return 1;
	}
	return 0;
}

static void broker_usage(FILE *f)
{
	fprintf(f, "usage: passfs broker status [--broker URL]\n\n"
		   "Prints the broker's queue - jobs queued and in flight, with the consumer that\n"
		   "holds each - and its workers: device, slots, jobs done and the last heartbeat.\n\n"
		   "  --broker URL    redis://[user:pass@]host:port[/db] (default: $" BROKER_ENV ")\n\n"
		   "docs/broker.md has the details.\n");
}

int cmd_broker(int argc, char **argv)
{
	struct option opts[] = {{"broker", required_argument, NULL, 'b'}, {"help", no_argument, NULL, 'h'},
				{NULL, 0, NULL, 0}};
	char *flag = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'b': flag = optarg; break;
		case 'h': broker_usage(stdout); return 0;
		default: broker_usage(stderr); return 2;
		}
	}
	if (optind != argc - 1 || strcmp(argv[optind], "status") != 0) {
		broker_usage(stderr);
		return 2;
	}
	char *url = broker_url_take(flag);
	if (url == NULL) {
		fprintf(stderr, "passfs broker: --broker URL (or $" BROKER_ENV ") is required\n");
		return 2;
	}
	char err[1024];
	int rc = broker_status(url, stdout, err, sizeof err);
	free(url);
	if (rc != 0) {
		fprintf(stderr, "passfs broker: %s\n", err);
		return 1;
	}
	return 0;
}
