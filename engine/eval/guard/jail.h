/* jail.h - the compile jail: NVRTC (in the compiling process) and the host
 * compiler (its child processes) see the pass's compile directory, the
 * toolchain and the pass API headers, and nothing else of the machine.
 *
 * A pass is untrusted text, and a compiler reads whatever that text names:
 * `#line 1 "/etc/shadow"` makes g++ quote the file in its errors,
 * `__has_include` probes paths, `.incbin` embeds a file.  The jail makes
 * those names point at nothing: the compiling process gets its own mount,
 * pid, network, IPC, UTS and cgroup namespaces (and a user namespace when
 * it is not root), a root of its own (a read-only tmpfs) holding read-only
 * binds of /usr, /lib*, /etc/ld.so.cache, the CUDA and API include
 * directories, NVRTC's library directory and the precompiled passfs.h, and
 * the compile directory read-write, at the same paths as outside; a /dev
 * with null only; no /proc, no /tmp, no home, no state.  It drops every
 * capability (bounding set too, so an exec'd root compiler gets none), sets
 * no_new_privs, and limits CPU time, address space, file size, descriptors
 * and (where the kernel counts them: not for root) processes.
 *
 * Where namespaces cannot be made (a container without CAP_SYS_ADMIN and
 * with user namespaces off: unshare fails with EPERM), a Landlock ruleset
 * allows the same paths instead (reading the toolchain, writing the compile
 * directory; no /proc); without Landlock too, only the limits, the dropped
 * capabilities and the compiler's fixed environment remain.  Which one held
 * is returned (jail_info) for result.json and `passfs doctor`: never
 * silently nothing.  PASSFS_JAIL=landlock or =limits forces a weaker kind
 * (tests of the fallbacks). */
#ifndef PASSFS_JAIL_H
#define PASSFS_JAIL_H

#include <stddef.h>

enum jail_kind {
	JAIL_NAMESPACES = 0,    /* own namespaces and root: the full jail */
	JAIL_LANDLOCK = 1,      /* no namespaces: Landlock allows the same paths */
	JAIL_LIMITS = 2,        /* neither: limits, no capabilities, fixed environment */
};

/* The compile's limits (per process; the jail's pid namespace ends every
 * process in it when its first process ends). */
#define JAIL_AS_EXTRA (2ull << 30)      /* NVRTC: what the process maps at entry + this */
#define JAIL_FSIZE (256ull << 20)       /* largest file written (the object, the cubin) */
#define JAIL_NPROC 64
#define JAIL_NOFILE 256

struct jail_info {
	enum jail_kind kind;
	char note[400];         /* why not the full jail, and what holds instead; "" when full */
	double ms;              /* time jail_enter took, up to the return in the jailed process */
};

/* "namespaces", "landlock" or "limits". */
const char *jail_kind_name(enum jail_kind k);

/* Puts the calling process in the compile jail for a pass compile whose
 * scratch directory is rw_dir (an absolute path, created by the caller),
 * with a CPU-time limit of cpu_s seconds; device_stubs as the compile's
 * (selects the precompiled header that is made ready first).  To be called
 * in a forked, single-threaded child.  With namespaces, the process that
 * calls never returns: it forks the first process of the new pid namespace,
 * which returns, and itself waits for it and exits with its status (or
 * dies of its signal), so the caller's parent sees the compile's end as
 * before.  Returns 0 in the jailed process with *info filled (the kind that
 * held, and why a weaker one); -1 with err when nothing could be set up
 * (fork failed, no memory): the caller must not compile then. */
int jail_compile(const char *rw_dir, int device_stubs, int cpu_s, struct jail_info *info, char *err,
		 size_t errlen);

/* For `passfs doctor`: in a child, enters the jail on a fresh directory
 * under $TMPDIR (or /tmp) and checks from inside that the compiler and
 * the API headers are visible and that /etc/passwd, /proc/self/environ and
 * the caller's home directory are not.  Returns 0 with *info (kind, note,
 * setup time) and a line in out saying what held; -1 with why in out when
 * the jail could not be entered or leaked. */
int jail_probe(struct jail_info *info, char *out, size_t outlen);

#endif
