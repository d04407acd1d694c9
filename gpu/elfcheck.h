/* elfcheck.h - inspect an untrusted shared object before anything loads it.
 *
 * dlopen() runs code before the caller gets control back: constructors
 * (DT_INIT, DT_INIT_ARRAY, DT_PREINIT_ARRAY), IFUNC resolvers (IRELATIVE
 * relocations, STT_GNU_IFUNC symbols) and, at unload, destructors.  A pass's
 * host object is compiled by passfs (hostcc.c: -nostartfiles -nostdlib, libc
 * and libm only), but its source is the author's, so the object is read here,
 * from the file, and refused when it
 *   - would run code at load or unload time (the entries above);
 *   - patches its own text (DT_TEXTREL / DF_TEXTREL) or asks for an
 *     executable stack or a writable and executable segment;
 *   - changes how libraries are found (DT_RPATH, DT_RUNPATH, DT_AUDIT,
 *     DT_DEPAUDIT, DT_AUXILIARY, DT_FILTER);
 *   - needs a library other than libc, libm, libgcc_s and the dynamic loader;
 *   - has a section a compiled pass does not have (one named by a section
 *     attribute, or made by assembly smuggled into the compiler's output);
 *   - refers to a symbol outside a small allow-list of libc/libm (memory and
 *     string helpers, formatted output to stdout/stderr, number parsing,
 *     maths, abort/assert, TLS access; nothing that opens files or sockets,
 *     starts processes, loads code or makes raw system calls).
 * This is one layer: the worker's sandbox (seccomp) is the one that holds
 * when a check here is fooled (a raw `syscall` instruction, say).
 *
 * Only x86-64 ELF64 shared objects are accepted. */
#ifndef PASSFS_ELFCHECK_H
#define PASSFS_ELFCHECK_H

#include <stddef.h>

enum elfcheck_result {
	ELFCHECK_OK = 0,
	ELFCHECK_REFUSED = 1,   /* a rule above is broken: msg says which */
	ELFCHECK_ERROR = -1,    /* unreadable, not an ELF64 x86-64 shared object */
};

/* Checks the shared object at `path`.  `label` (the author's file name,
 * "pass.c") starts every message: "pass.c: refers to 'fopen', which a pass
 * may not use (only the passfs API and a small part of libc/libm)".  Returns
 * ELFCHECK_OK, or REFUSED / ERROR with one sentence in msg. */
enum elfcheck_result elfcheck_file(const char *path, const char *label, char *msg, size_t msglen);

/* Same, on an image already in memory (8-byte aligned, as malloc gives). */
enum elfcheck_result elfcheck_buffer(const void *buf, size_t len, const char *label,
				     char *msg, size_t msglen);

/* Whether an undefined symbol `name` may be referenced by a pass. */
int elfcheck_symbol_allowed(const char *name);

#endif
