/* warm.c - eager's modeled H200 time counted ahead, in the background
 * (warm.h): one `passfs eager --model` process per task, in turn, while
 * nothing else runs. */
#define _GNU_SOURCE
#include "warm.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "proc.h"
#include "gpu.h"

struct warm {
	char exe[4096];
	char *tasks_dir, *backend;
	char **ids;
	int n;
	int (*busy)(void *ctx);
	void *ctx;
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	int done;               /* tasks counted so far */
	int paused;             /* times a count was stopped for an evaluation */
	const char *state;      /* warm_progress's */
	void (*moved)(void *ctx);
};

static void set_state(struct warm *w, const char *state, int done)
{
	pthread_mutex_lock(&w->mu);
	w->state = state;
	if (done >= 0)
		w->done = done;
	pthread_mutex_unlock(&w->mu);
	if (w->moved)
		w->moved(w->ctx);
}

/* Waits up to ms or until stop; returns the stop flag. */
static int nap(struct warm *w, int ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&w->mu);
	if (!w->stop)
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
	int stop = w->stop;
	pthread_mutex_unlock(&w->mu);
	return stop;
}

/* One task's count: a process of its own (a process group, niced, dying
 * with this one), its output discarded.  Returns the child's pid or -1. */
static pid_t spawn(struct warm *w, const char *id)
{
	char *argv[] = {w->exe, "eager", "--model", "--tasks", w->tasks_dir, "--task", (char *)id,
			"--backend", w->backend, NULL};
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* the child: only async-signal-safe calls until exec (the daemon has
	 * threads) */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);
	setpriority(PRIO_PROCESS, 0, 10);
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execv(w->exe, argv);
	_exit(127);
}

/* Stops a running count: its process group, SIGTERM then SIGKILL. */
static void kill_count(pid_t pid)
{
	kill(-pid, SIGTERM);
	for (int i = 0; i < 20; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		base_sleep_ms(50);
	}
	kill(-pid, SIGKILL);
	base_waitpid(pid, NULL);
}

static void *warm_main(void *arg)
{
	struct warm *w = arg;
	double t0 = base_now_ms();
	if (strcmp(w->backend, "cpu") != 0) {
		/* auto: the model is the cpu backend's; on a GPU nothing to count
		 * (opening and closing the device does not initialise CUDA here) */
		struct gpu_dev *d = NULL;
		char err[256];
		int cuda = gpu_open(w->backend, &d, err, sizeof(err)) != 0 || gpu_backend_of(d) != GPU_BACKEND_CPU;
		gpu_close(d);
		if (cuda) {
			set_state(w, "off (a GPU: eager is timed there, not modeled)", -1);
			return NULL;
		}
	}
	fprintf(stderr, "passfs: counting eager's modeled time of %d task%s in the background (it yields to "
			"evaluations and checks)\n",
		w->n, w->n == 1 ? "" : "s");
	int k = 0, failed = 0;
	while (k < w->n) {
		/* nothing else running: an evaluation's timings and counts are
		 * not to share the CPU with this */
		if (w->busy(w->ctx))
			set_state(w, "waiting for the evaluations and checks to end", -1);
		while (w->busy(w->ctx))
			if (nap(w, 200))
				return NULL;
		set_state(w, "counting", -1);
		if (nap(w, 0))
			return NULL;
		pid_t pid = spawn(w, w->ids[k]);
		if (pid < 0) {
			fprintf(stderr, "passfs: eager's model ahead: fork: %s; not counted ahead\n", strerror(errno));
			return NULL;
		}
		int status = 0, stopped = 0;
		for (;;) {
			pid_t r = waitpid(pid, &status, WNOHANG);
			if (r == pid)
				break;
			if (r < 0 && errno != EINTR) {
				status = -1;
				break;
			}
			int stop = nap(w, 100);
			if (stop || w->busy(w->ctx)) {
				/* an evaluation came: this count goes (what it had
				 * counted, whole variants, is kept) and comes back
				 * when the service is idle again */
				kill_count(pid);
				stopped = 1;
				if (stop)
					return NULL;
				break;
			}
		}
		if (stopped) {
			pthread_mutex_lock(&w->mu);
			w->paused++;
			pthread_mutex_unlock(&w->mu);
			fprintf(stderr, "passfs: eager's model ahead: %s paused for an evaluation or a check; "
					"taken up again when they are done\n",
				w->ids[k]);
			continue;
		}
		if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			fprintf(stderr, "passfs: eager's model ahead: `passfs eager --model --task %s` %s %d; the "
					"rest is counted at each task's first evaluation\n",
				w->ids[k], WIFSIGNALED(status) ? "died of signal" : "exited",
				WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			failed = 1;
			set_state(w, "stopped (a count failed: the daemon's log says why)", -1);
			break;
		}
		k++;
		set_state(w, k < w->n ? "counting" : "done", k);
	}
	if (!failed)
		fprintf(stderr, "passfs: eager's modeled time is ready for all %d task%s (%.1f s)\n", w->n,
			w->n == 1 ? "" : "s", (base_now_ms() - t0) / 1000);
	return NULL;
}

int warm_wanted(int opt)
{
	const char *e = getenv("PASSFS_WARM");
	if (e != NULL && *e)
		return strcmp(e, "0") != 0;
	return opt;
}

struct warm *warm_start(const char *tasks_dir, const char *backend, char *const *ids, int n,
			int (*busy)(void *ctx), void (*moved)(void *ctx), void *ctx)
{
	if (n <= 0)
		return NULL;
	struct warm *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	ssize_t len = readlink("/proc/self/exe", w->exe, sizeof(w->exe) - 1);
	w->tasks_dir = strdup(tasks_dir);
	w->backend = strdup(backend && *backend ? backend : "auto");
	w->ids = calloc((size_t)n, sizeof(char *));
	if (len <= 0 || !w->tasks_dir || !w->backend || !w->ids)
		goto fail;
	w->exe[len] = 0;
	for (int i = 0; i < n; i++)
		if ((w->ids[i] = strdup(ids[i])) == NULL)
			goto fail;
	w->n = n;
	w->busy = busy;
	w->moved = moved;
	w->ctx = ctx;
	w->state = "starting";
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->thread, NULL, warm_main, w) != 0)
		goto fail;
	w->started = 1;
	return w;
fail:
	warm_stop(w);
	return NULL;
}

const char *warm_progress(struct warm *w, int *done, int *n)
{
	*done = *n = 0;
	if (w == NULL)
		return NULL;
	pthread_mutex_lock(&w->mu);
	*done = w->done;
	*n = w->n;
	const char *st = w->state;
	pthread_mutex_unlock(&w->mu);
	return st;
}

void warm_stop(struct warm *w)
{
	if (w == NULL)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
	}
	if (w->ids)
		for (int i = 0; i < w->n; i++)
			free(w->ids[i]);
	free(w->ids);
	free(w->tasks_dir);
	free(w->backend);
	free(w);
}
