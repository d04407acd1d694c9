/* test_wheels.c - gpu_wheel_lib (gpu/gpu.h): PyTorch's CUDA wheels keep
 * cuBLAS, cuDNN, CUPTI and NVRTC in site-packages/nvidia/STAR/lib, namespace
 * packages with no __file__; passfs finds them by a search of the Python site
 * directories, PASSFS_CUDA_LIBDIRS first.  Built on a fake tree in a
 * temporary directory: a venv with nvidia/cu13/lib and nvidia/cudnn/lib, a
 * dist-packages tree, the precedence of PASSFS_CUDA_LIBDIRS, and nothing
 * found where nothing is; and gpu_wheel_include, the headers NVRTC needs
 * (nvidia/cu13/include, or beside a PASSFS_CUDA_LIBDIRS directory). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

#include "gpu.h"


static void mkdirs(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

static void touch(const char *dir, const char *name)
{
	char p[4096];
	mkdirs(dir);
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
}

int main(void)
{
	char root[160];
	if (mkdtemp(test_path(root, sizeof root, "passfs_wheels_XXXXXX")) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	/* nothing of the machine's own Python sites may answer */
	setenv("HOME", root, 1);
	unsetenv("CONDA_PREFIX");
	unsetenv("PASSFS_CUDA_LIBDIRS");
	char venv[256], d[512], want[1024], got[4096];
	snprintf(venv, sizeof venv, "%s/venv", root);
	setenv("VIRTUAL_ENV", venv, 1);

	const char *probe = "libpassfs_wheel_probe.so.9";
	CHECK_MSG(gpu_wheel_lib(probe, got, sizeof got) == 0, "an empty venv holds nothing");

	snprintf(d, sizeof d, "%s/lib/python3.12/site-packages/nvidia/cudnn/lib", venv);
	touch(d, probe);
	snprintf(want, sizeof want, "%s/%s", d, probe);
	CHECK_MSG(gpu_wheel_lib(probe, got, sizeof got) == 1 && strcmp(got, want) == 0,
	      "nvidia/cudnn/lib of the venv's site-packages");

	snprintf(d, sizeof d, "%s/lib/python3.12/site-packages/nvidia/cu13/lib", venv);
	touch(d, "libpassfs_wheel_cu13.so.13");
	snprintf(want, sizeof want, "%s/libpassfs_wheel_cu13.so.13", d);
	CHECK_MSG(gpu_wheel_lib("libpassfs_wheel_cu13.so.13", got, sizeof got) == 1 && strcmp(got, want) == 0,
	      "nvidia/cu13/lib (CUDA 13's one wheel for cuBLAS, NVRTC, CUPTI)");

	snprintf(d, sizeof d, "%s/.local/lib/python3.11/dist-packages/nvidia/cublas/lib", root);
	touch(d, "libpassfs_wheel_user.so");
	CHECK_MSG(gpu_wheel_lib("libpassfs_wheel_user.so", got, sizeof got) == 1 && strstr(got, "/.local/") != NULL,
	      "~/.local's dist-packages");

	snprintf(d, sizeof d, "%s/own", root);
	touch(d, probe);
	char dirs[8192];
	snprintf(dirs, sizeof dirs, "%s/missing:%s", root, d);
	setenv("PASSFS_CUDA_LIBDIRS", dirs, 1);
	snprintf(want, sizeof want, "%s/%s", d, probe);
	CHECK_MSG(gpu_wheel_lib(probe, got, sizeof got) == 1 && strcmp(got, want) == 0,
	      "PASSFS_CUDA_LIBDIRS before the wheels, a missing directory skipped");
	unsetenv("PASSFS_CUDA_LIBDIRS");

	CHECK_MSG(gpu_wheel_lib("libpassfs_wheel_absent.so.1", got, sizeof got) == 0, "an absent library: 0");

	/* the headers: a cu13 wheel's include directory, the directory given */
	CHECK_MSG(gpu_wheel_include("passfs_probe_fp16.h", got, sizeof got) == 0, "no header: 0");
	snprintf(d, sizeof d, "%s/lib/python3.12/site-packages/nvidia/cu13/include", venv);
	touch(d, "passfs_probe_fp16.h");
	CHECK_MSG(gpu_wheel_include("passfs_probe_fp16.h", got, sizeof got) == 1 && strcmp(got, d) == 0,
	      "nvidia/cu13/include: the directory that holds the header");
	char inc[600];
	snprintf(inc, sizeof inc, "%s/own2/include", root);
	touch(inc, "passfs_probe_fp16.h");
	snprintf(dirs, sizeof dirs, "%s/own2/lib", root);
	mkdirs(dirs);
	setenv("PASSFS_CUDA_LIBDIRS", dirs, 1);
	snprintf(want, sizeof want, "%s/own2/lib/../include", root);
	CHECK_MSG(gpu_wheel_include("passfs_probe_fp16.h", got, sizeof got) == 1 && strcmp(got, want) == 0,
	      "PASSFS_CUDA_LIBDIRS's ../include first");
	unsetenv("PASSFS_CUDA_LIBDIRS");
	setenv("VIRTUAL_ENV", "relative/venv", 1);
	CHECK_MSG(gpu_wheel_lib("libpassfs_wheel_cu13.so.13", got, sizeof got) == 0, "a relative VIRTUAL_ENV is ignored");

	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	printf("test_wheels: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
