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
		"usage: passfs worker [--broker URL] [--name NAME] [--backend auto|cpu|cuda]\n"
		"                     [--slots N | --gpus LIST] [--lease S] [--beat S] [--quiet]\n\n"
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
		"  --backend B     auto (default: cuda when this machine has a GPU, else cpu), cpu\n"
		"                  or cuda; cuda without a GPU fails at start.  The worker takes\n"
		"                  the jobs that ask its backend (stream passfs:jobs:cpu or\n"
		"                  passfs:jobs:cuda) and those that ask auto (passfs:jobs:auto)\n"
		"  --slots N       evaluations at once (default 1)\n"
		"  --gpus LIST     one slot per GPU listed, each slot's evaluations on its GPU\n"
		"                  (PASSFS_CUDA_DEVICE; result.json's \"gpu\" names it): CUDA\n"
		"                  ordinals, '0,1,3', or 'all'; the cuda backend; not with\n"
		"                  --slots or --backend cpu.  A GPU not present fails at start\n"
		"  --lease S       a job in flight whose worker stopped beating for S seconds is\n"
		"                  taken over by another worker (default 60)\n"
		"  --beat S        heartbeat period (default 2)\n"
		"  --quiet         no line per job\n\n"
		"docs/broker.md has the details.\n");
}

/* --gpus LIST: "all" (*n = -1) or distinct CUDA ordinals "0,1,3".  0, or 2
 * (a usage error, said). */
static int gpu_list(const char *v, int *gpus, int *n)
{
	if (strcmp(v, "all") == 0) {
		*n = -1;
		return 0;
	}
	*n = 0;
	const char *p = v;
	for (;;) {
		char *end;
		if (*p < '0' || *p > '9') {
			fprintf(stderr, "passfs worker: --gpus takes 'all' or CUDA ordinals separated by commas "
				"(0,1,3), not '%s'\n", v);
			return 2;
		}
		long id = strtol(p, &end, 10);
		if (id > 1023) {
			fprintf(stderr, "passfs worker: --gpus: %ld is no CUDA ordinal (0 to 1023)\n", id);
			return 2;
		}
		for (int i = 0; i < *n; i++)
			if (gpus[i] == id) {
				fprintf(stderr, "passfs worker: --gpus lists GPU %ld twice ('%s')\n", id, v);
				return 2;
			}
		if (*n == BROKER_GPUS_MAX) {
			fprintf(stderr, "passfs worker: --gpus lists more than %d GPUs\n", BROKER_GPUS_MAX);
			return 2;
		}
		gpus[(*n)++] = (int)id;
		if (*end == '\0')
			return 0;
		if (*end != ',') {
			fprintf(stderr, "passfs worker: --gpus takes 'all' or CUDA ordinals separated by commas "
				"(0,1,3), not '%s'\n", v);
			return 2;
		}
		p = end + 1;
	}
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
				{"gpus", required_argument, NULL, 'g'},    {NULL, 0, NULL, 0}};
	struct broker_worker_opts o = {0};
	int gpus[BROKER_GPUS_MAX], slots_given = 0;
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
			slots_given = 1;
			break;
		}
		case 'g':
			if (gpu_list(optarg, gpus, &o.ngpus))
				return 2;
			o.gpus = gpus;
			break;
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
	if (o.ngpus != 0 && slots_given) {
		fprintf(stderr, "passfs worker: --gpus and --slots exclude each other (--gpus runs one slot per GPU)\n");
		return 2;
	}
	if (o.ngpus != 0 && o.backend && strcmp(o.backend, "cpu") == 0) {
		fprintf(stderr, "passfs worker: --gpus needs the cuda backend, not --backend cpu\n");
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
		   "Prints the broker's queue - jobs queued and in flight on each backend's stream\n"
		   "(passfs:jobs:auto, passfs:jobs:cpu, passfs:jobs:cuda), with the consumer that\n"
		   "holds each - its workers (backend, slots, jobs done, the last heartbeat) and\n"
		   "their consumers, one per slot: the device it evaluates on and its job.\n\n"
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
