/* elfcheck.c - refuse shared objects that would run code when loaded or reach
 * outside the pass API (see elfcheck.h).  The file is read and parsed here;
 * nothing is mapped or executed.  Every offset and size is checked against
 * the image before use. */
#include "elfcheck.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"
#include "strbuf.h"

#define ELFCHECK_MAX_BYTES (512u << 20)

/* Undefined symbols a pass's host object may refer to.  Everything else in
 * libc (files, sockets, processes, dlopen, syscall, signals, time, heap) is
 * refused; the worker's seccomp filter would stop most of it anyway, this
 * check names the culprit at compile time instead of killing a run. */
static const char *const allowed_symbols[] = {
	/* memory and strings: pure functions on the caller's buffers */
	"memcpy", "memmove", "memset", "memcmp", "memchr", "bzero",
	"__memcpy_chk", "__memmove_chk", "__memset_chk",
	"strlen", "strnlen", "strcmp", "strncmp", "strchr", "strrchr", "strstr",
	"strcpy", "strncpy", "strcat", "strncat", "__strcpy_chk", "__strcat_chk",
	"__strncpy_chk",
	/* formatting into memory (messages for pf_unsupported) */
	"snprintf", "sprintf", "vsnprintf", "vsprintf",
	"__snprintf_chk", "__sprintf_chk", "__vsnprintf_chk", "__vsprintf_chk",
	/* output to the worker's stdout/stderr (a pipe in the sandbox); with no
	 * fopen/fdopen a FILE * can only be one of these two */
	"printf", "vprintf", "puts", "putchar", "__printf_chk", "__vprintf_chk",
	"fprintf", "vfprintf", "fputs", "fputc", "putc", "fwrite", "fflush",
	"__fprintf_chk", "__vfprintf_chk", "stdout", "stderr",
	/* parsing numbers (variant attributes from pf_variant) */
	"strtol", "strtoll", "strtoul", "strtoull", "strtof", "strtod",
	"__isoc23_strtol", "__isoc23_strtoll", "__isoc23_strtoul", "__isoc23_strtoull",
	"atoi", "atol", "atoll", "atof", "__errno_location",
	/* sorting and searching with the caller's comparison */
	"qsort", "bsearch", "abs", "labs", "llabs",
	/* failing loudly */
	"abort", "__assert_fail", "__stack_chk_fail",
	/* thread-local storage (__shared__ memory of the emulation layer) */
	"__tls_get_addr",
	/* the emulation layer's fiber stacks (mmap with a PROT_NONE guard page)
	 * and dynamic shared memory buffer; the sandbox refuses executable
	 * mappings */
	"mmap", "munmap", "mprotect", "aligned_alloc", "free",
	/* ... which a thread-exit hook releases (glibc's thread_local
	 * destructor registration; it keeps the object loaded until it ran) */
	"__cxa_thread_atexit_impl",
	NULL
};

/* libm: each name is allowed as it is and with an f or l suffix (sinf,
 * sinl). */
static const char *const allowed_math[] = {
	"sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
	"asinh", "acosh", "atanh", "sincos", "exp", "exp2", "exp10", "expm1", "log",
	"log2", "log10", "log1p", "logb", "ilogb", "pow", "sqrt", "cbrt", "hypot", "erf",
	"erfc", "tgamma", "lgamma", "fmod", "remainder", "remquo", "ldexp", "frexp",
	"modf", "scalbn", "scalbln", "floor", "ceil", "trunc", "round", "rint",
	"nearbyint", "lrint", "llrint", "lround", "llround", "fma", "fmax", "fmin", "fdim",
	"fabs", "copysign", "nextafter", "nexttoward", "nan", "j0", "j1", "jn", "y0", "y1",
	"yn", "significand", "isinf", "isnan", "finite",
	"__isinf", "__isnan", "__finite", "__fpclassify", "__signbit",
	NULL
};

/* Weak references some toolchains emit on their own; unresolved weak
 * symbols are NULL, and these are harmless when they do resolve. */
static const char *const allowed_weak[] = {
	"__gmon_start__", "_ITM_registerTMCloneTable", "_ITM_deregisterTMCloneTable",
	"__cxa_finalize", NULL
};

/* What a refused symbol usually means in the author's code. */
static const struct {
	const char *prefix;
	const char *cause;
} symbol_causes[] = {
	{"__cxa_atexit", "a global or static object with a destructor"},
	{"atexit", "a function registered to run at exit"},
	{"__cxa_guard_", "a function-local static with a dynamic initializer"},
	{"__cxa_throw", "a C++ exception"},
	{"__cxa_allocate_exception", "a C++ exception"},
	{"__cxa_begin_catch", "a C++ exception"},
	{"__gxx_personality", "a C++ exception"},
	{"_Unwind_", "a C++ exception"},
	{"__cxa_pure_virtual", "a pure virtual function"},
	{"__dynamic_cast", "dynamic_cast (no RTTI)"},
	{"_ZTV", "a C++ library class"},
	{"_ZTI", "RTTI (typeid)"},
	{"_Znw", "operator new: passes have no heap; use arrays or pf_scratch"},
	{"_Zna", "operator new[]: passes have no heap; use arrays or pf_scratch"},
	{"_Zdl", "operator delete: passes have no heap"},
	{"_Zda", "operator delete[]: passes have no heap"},
	{"malloc", "the heap: use arrays or pf_scratch"},
	{"calloc", "the heap: use arrays or pf_scratch"},
	{"realloc", "the heap: use arrays or pf_scratch"},
	{"_ZSt", "the C++ standard library, which passes cannot link"},
	{"_ZNSt", "the C++ standard library, which passes cannot link"},
	{"_ZNKSt", "the C++ standard library, which passes cannot link"},
};

static const char *const allowed_needed[] = {
	"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", NULL
};

static int in_list(const char *const *list, const char *name)
{
	for (int i = 0; list[i] != NULL; i++)
		if (strcmp(list[i], name) == 0)
			return 1;
	return 0;
}

int elfcheck_symbol_allowed(const char *name)
{
	if (in_list(allowed_symbols, name) || in_list(allowed_math, name))
		return 1;
	size_t n = strlen(name);
	if (n > 1 && (name[n - 1] == 'f' || name[n - 1] == 'l')) {
		char base[64];
		if (n - 1 >= sizeof base)
			return 0;
		memcpy(base, name, n - 1);
		base[n - 1] = '\0';
		return in_list(allowed_math, base);
	}
	return 0;
}

/* --- the image ------------------------------------------------------- */

struct img {
	const unsigned char *b;
	size_t len;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	const Elf64_Shdr *sh;   /* NULL when the object has no section headers */
	const char *label;
	char *msg;
	size_t msglen;
};

static int in_bounds(const struct img *im, uint64_t off, uint64_t size)
{
	return off <= im->len && size <= im->len - off;
}

/* File offset of virtual address va (inside a PT_LOAD's file bytes), or
 * (uint64_t)-1. */
static uint64_t va_to_off(const struct img *im, uint64_t va, uint64_t size)
{
	for (int i = 0; i < im->eh->e_phnum; i++) {
		const Elf64_Phdr *p = &im->ph[i];
		if (p->p_type != PT_LOAD)
			continue;
		if (va >= p->p_vaddr && va - p->p_vaddr <= p->p_filesz &&
		    size <= p->p_filesz - (va - p->p_vaddr)) {
			uint64_t off = p->p_offset + (va - p->p_vaddr);
			if (in_bounds(im, off, size))
				return off;
		}
	}
	return (uint64_t)-1;
}

/* A NUL-terminated string at offset off of a table [tab, tab + tablen). */
static const char *str_at(const struct img *im, uint64_t tab, uint64_t tablen, uint64_t off)
{
	if (!in_bounds(im, tab, tablen) || off >= tablen)
		return NULL;
	const char *s = (const char *)im->b + tab + off;
	if (memchr(s, '\0', tablen - off) == NULL)
		return NULL;
	return s;
}

static enum elfcheck_result refuse(struct img *im, const char *fmt, const char *arg, const char *arg2)
{
	char what[1024];
	snprintf(what, sizeof what, fmt, arg ? arg : "", arg2 ? arg2 : "");
	snprintf(im->msg, im->msglen, "%s: %s", im->label, what);
	return ELFCHECK_REFUSED;
}

static enum elfcheck_result bad(struct img *im, const char *why)
{
	snprintf(im->msg, im->msglen, "%s: the compiled object %s", im->label, why);
	return ELFCHECK_ERROR;
}

/* The source name inside a mangled name, for messages: "_ZL4ctorv" -> "ctor",
 * "_GLOBAL__sub_I_pass.c" stays as it is. */
static void source_name(const char *mangled, char *out, size_t outlen)
{
	const char *p = mangled;
	snprintf(out, outlen, "%s", mangled);
	if (strncmp(p, "_Z", 2) != 0)
		return;
	p += 2;
	if (*p == 'L')
		p++;
	if (*p == 'N')
		p++;
	char *end;
	long n = strtol(p, &end, 10);
	if (n <= 0 || end == p || (size_t)n >= outlen || strlen(end) < (size_t)n)
		return;
	memcpy(out, end, (size_t)n);
	out[n] = '\0';
}

/* The section of type `type` (first one), or NULL. */
static const Elf64_Shdr *find_section(const struct img *im, uint32_t type)
{
	if (im->sh == NULL)
		return NULL;
	for (int i = 0; i < im->eh->e_shnum; i++)
		if (im->sh[i].sh_type == type)
			return &im->sh[i];
	return NULL;
}

/* The name of the function containing address va, from .symtab (or
 * .dynsym), written into out; "" when none is found. */
static void function_at(const struct img *im, uint64_t va, char *out, size_t outlen)
{
	out[0] = '\0';
	const uint32_t types[2] = {SHT_SYMTAB, SHT_DYNSYM};
	for (int t = 0; t < 2; t++) {
		const Elf64_Shdr *s = find_section(im, types[t]);
		if (s == NULL || s->sh_entsize != sizeof(Elf64_Sym) || s->sh_link >= im->eh->e_shnum ||
		    s->sh_offset % 8 != 0 || !in_bounds(im, s->sh_offset, s->sh_size))
			continue;
		const Elf64_Shdr *strs = &im->sh[s->sh_link];
		const Elf64_Sym *sym = (const Elf64_Sym *)(im->b + s->sh_offset);
		size_t n = s->sh_size / sizeof(Elf64_Sym);
		for (size_t i = 0; i < n; i++) {
			if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF)
				continue;
			if (va < sym[i].st_value || va >= sym[i].st_value + (sym[i].st_size ? sym[i].st_size : 1))
				continue;
			const char *name = str_at(im, strs->sh_offset, strs->sh_size, sym[i].st_name);
			if (name != NULL && *name) {
				source_name(name, out, outlen);
				return;
			}
		}
	}
}

/* Names the first function an INIT/FINI array at [va, va + size) would call,
 * by looking for the RELATIVE relocation that fills its first slot. */
static void array_first_function(const struct img *im, uint64_t rela, uint64_t relasz,
				 uint64_t va, char *out, size_t outlen)
{
	out[0] = '\0';
	uint64_t off = va_to_off(im, rela, relasz);
	if (rela == 0 || off == (uint64_t)-1 || off % 8 != 0)
		return;
	const Elf64_Rela *r = (const Elf64_Rela *)(im->b + off);
	for (size_t i = 0; i < relasz / sizeof(Elf64_Rela); i++) {
		if (r[i].r_offset == va && ELF64_R_TYPE(r[i].r_info) == R_X86_64_RELATIVE) {
			function_at(im, (uint64_t)r[i].r_addend, out, outlen);
			return;
		}
	}
}

static int starts_with(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return strlen(s) >= n && memcmp(s, prefix, n) == 0;
}

static enum elfcheck_result refuse_ctor(struct img *im, const char *kind, uint64_t rela,
					 uint64_t relasz, uint64_t array_va, int is_array)
{
	char fn[128] = "";
	if (is_array)
		array_first_function(im, rela, relasz, array_va, fn, sizeof fn);
	else
		function_at(im, array_va, fn, sizeof fn);
	const char *cause;
	if (starts_with(fn, "_GLOBAL__sub_I"))
		cause = "a global variable with a dynamic initializer";
	else if (strncmp(kind, "destructor", 10) == 0)
		cause = "__attribute__((destructor)) or a function named _fini";
	else
		cause = "__attribute__((constructor)) or a function named _init";
	char what[512];
	if (fn[0] != '\0' && !starts_with(fn, "_GLOBAL__"))
		snprintf(what, sizeof what, "%s '%s' (%s)", kind, fn, cause);
	else
		snprintf(what, sizeof what, "%s (%s)", kind, cause);
	return refuse(im, "has a %s; a pass may not run code when it is loaded or unloaded",
		      what, NULL);
}

static enum elfcheck_result check_relocs(struct img *im, uint64_t va, uint64_t size, uint64_t ent,
					 int is_rela)
{
	if (va == 0 || size == 0)
		return ELFCHECK_OK;
	uint64_t want = is_rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
	if (ent != 0 && ent != want)
		return bad(im, "has relocation entries of an unexpected size");
	uint64_t off = va_to_off(im, va, size);
	if (off == (uint64_t)-1 || off % 8 != 0)
		return bad(im, "has a relocation table outside its file");
	for (uint64_t i = 0; i < size / want; i++) {
		uint64_t info = is_rela ? ((const Elf64_Rela *)(im->b + off))[i].r_info
					: ((const Elf64_Rel *)(im->b + off))[i].r_info;
		if (ELF64_R_TYPE(info) == R_X86_64_IRELATIVE)
			return refuse(im, "has an IRELATIVE relocation (an ifunc resolver); "
				      "a pass may not run code when it is loaded", NULL, NULL);
	}
	return ELFCHECK_OK;
}

/* Refused undefined symbols are collected and named in sorted order (up to
 * four), so the message does not depend on the linker's symbol order:
 * "refers to 'fclose' and 'fopen', which ...". */
static enum elfcheck_result check_symbols(struct img *im)
{
	const Elf64_Shdr *ds = find_section(im, SHT_DYNSYM);
	if (ds == NULL)
		return bad(im, "has no dynamic symbol table");
	if (ds->sh_entsize != sizeof(Elf64_Sym) || ds->sh_link >= im->eh->e_shnum ||
	    ds->sh_offset % 8 != 0 || !in_bounds(im, ds->sh_offset, ds->sh_size))
		return bad(im, "has a malformed dynamic symbol table");
	const Elf64_Shdr *strs = &im->sh[ds->sh_link];
	const Elf64_Sym *sym = (const Elf64_Sym *)(im->b + ds->sh_offset);
	size_t n = ds->sh_size / sizeof(Elf64_Sym);
	enum { MAX_NAMED = 4 };
	const char *bad_names[MAX_NAMED];
	int n_bad = 0, n_more = 0;
	for (size_t i = 1; i < n; i++) {
		const char *name = str_at(im, strs->sh_offset, strs->sh_size, sym[i].st_name);
		if (name == NULL)
			return bad(im, "has a symbol with a malformed name");
		if (ELF64_ST_TYPE(sym[i].st_info) == STT_GNU_IFUNC)
			return refuse(im, "defines '%s' as an ifunc; a pass may not run code when it "
				      "is loaded", name, NULL);
		if (sym[i].st_shndx != SHN_UNDEF || *name == '\0')
			continue;
		if (elfcheck_symbol_allowed(name))
			continue;
		if (ELF64_ST_BIND(sym[i].st_info) == STB_WEAK && in_list(allowed_weak, name))
			continue;
		if (n_bad < MAX_NAMED)
			bad_names[n_bad++] = name;
		else
			n_more++;
	}
	if (n_bad == 0)
		return ELFCHECK_OK;
	qsort(bad_names, (size_t)n_bad, sizeof bad_names[0], base_strptr_cmp);

	const char *cause = NULL;
	for (int b = 0; b < n_bad && cause == NULL; b++)
		for (size_t k = 0; k < sizeof symbol_causes / sizeof symbol_causes[0]; k++) {
			size_t pl = strlen(symbol_causes[k].prefix);
			if (strncmp(bad_names[b], symbol_causes[k].prefix, pl) == 0) {
				cause = symbol_causes[k].cause;
				break;
			}
		}
	char list[400] = "";
	size_t len = 0;
	for (int b = 0; b < n_bad; b++) {
		char nm[96];
		source_name(bad_names[b], nm, sizeof nm);
		const char *sep = b == 0 ? "" : (b == n_bad - 1 && n_more == 0) ? " and " : ", ";
		int w = snprintf(list + len, sizeof list - len, "%s'%s'", sep, nm);
		if (w < 0 || (size_t)w >= sizeof list - len)
			break;
		len += (size_t)w;
	}
	if (n_more > 0 && len < sizeof list)
		snprintf(list + len, sizeof list - len, " and %d more", n_more);
	char because[200] = "";
	if (cause != NULL)
		snprintf(because, sizeof because, " (%s)", cause);
	return refuse(im, "refers to %s%s, which a pass may not use (only the passfs API and a "
		      "small part of libc/libm)", list, because);
}

/* The sections g++ and ld produce for a pass (-shared -nostartfiles
 * -nostdlib, libc and libm; listed from the objects of every pass in
 * tests/passes and tests/cheats), by name or, ending in '*', by prefix.  A
 * section outside the list was asked for by the source (a `section`
 * attribute, or assembly smuggled into the compiler's output): refused. */
static const char *const allowed_sections[] = {
	"", ".text*", ".rodata*", ".data*", ".bss*", ".tdata*", ".tbss*", ".eh_frame*",
	".gcc_except_table*", ".note.*", ".comment", ".dynamic", ".dynstr", ".dynsym", ".gnu.hash",
	".hash", ".gnu.version*", ".got", ".got.plt", ".plt", ".plt.got", ".plt.sec", ".rela.*",
	".symtab", ".strtab", ".shstrtab", ".init_array", ".fini_array", ".preinit_array", NULL
};

/* Returns ELFCHECK_OK when every section's name is in allowed_sections,
 * else REFUSED naming the first one that is not (ERROR when the names
 * cannot be read).  The constructor arrays are listed because the dynamic
 * section's check names their function, which says more. */
static enum elfcheck_result check_sections(struct img *im)
{
	if (im->sh == NULL)
		return bad(im, "has no section headers");
	uint16_t shstrndx = im->eh->e_shstrndx;
	if (shstrndx == SHN_UNDEF || shstrndx >= im->eh->e_shnum)
		return bad(im, "has no section name table");
	const Elf64_Shdr *names = &im->sh[shstrndx];
	for (int i = 0; i < im->eh->e_shnum; i++) {
		const char *name = str_at(im, names->sh_offset, names->sh_size, im->sh[i].sh_name);
		if (name == NULL)
			return bad(im, "has a section with a malformed name");
		int ok = 0;
		for (int k = 0; allowed_sections[k] != NULL && !ok; k++) {
			const char *a = allowed_sections[k];
			size_t n = strlen(a);
			ok = n > 0 && a[n - 1] == '*' ? strncmp(name, a, n - 1) == 0 : strcmp(name, a) == 0;
		}
		if (!ok) {
			char shown[64];
			size_t k = 0;
			/* the name is the author's: printable and short in the message */
			for (const char *p = name; *p && k + 4 < sizeof shown; p++)
				shown[k++] = *p >= 0x20 && *p < 0x7f && *p != '\'' ? *p : '?';
			if (strlen(name) > k)
				shown[k++] = '.', shown[k++] = '.', shown[k++] = '.';
			shown[k] = '\0';
			return refuse(im, "has a section '%s' that a compiled pass does not have (a section "
				      "attribute, or assembly smuggled into the compiler's output)", shown, NULL);
		}
	}
	return ELFCHECK_OK;
}

enum elfcheck_result elfcheck_buffer(const void *buf, size_t len, const char *label,
				     char *msg, size_t msglen)
{
	struct img im = {.b = buf, .len = len, .label = label ? label : "object",
			 .msg = msg, .msglen = msglen};
	if (msglen > 0)
		msg[0] = '\0';
	if ((uintptr_t)buf % 8 != 0)
		return bad(&im, "image is not 8-byte aligned in memory");
	if (len < sizeof(Elf64_Ehdr) || memcmp(im.b, ELFMAG, SELFMAG) != 0)
		return bad(&im, "is not an ELF file");
	im.eh = (const Elf64_Ehdr *)im.b;
	if (im.eh->e_ident[EI_CLASS] != ELFCLASS64 || im.eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    im.eh->e_machine != EM_X86_64)
		return bad(&im, "is not an x86-64 ELF64 object");
	if (im.eh->e_type != ET_DYN)
		return bad(&im, "is not a shared object");
	if (im.eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !in_bounds(&im, im.eh->e_phoff, (uint64_t)im.eh->e_phnum * sizeof(Elf64_Phdr)) ||
	    im.eh->e_phoff % 8 != 0)
		return bad(&im, "has malformed program headers");
	im.ph = (const Elf64_Phdr *)(im.b + im.eh->e_phoff);
	if (im.eh->e_shnum > 0) {
		if (im.eh->e_shentsize != sizeof(Elf64_Shdr) || im.eh->e_shoff % 8 != 0 ||
		    !in_bounds(&im, im.eh->e_shoff, (uint64_t)im.eh->e_shnum * sizeof(Elf64_Shdr)))
			return bad(&im, "has malformed section headers");
		im.sh = (const Elf64_Shdr *)(im.b + im.eh->e_shoff);
	}

	/* Segments. */
	const Elf64_Phdr *dynph = NULL;
	for (int i = 0; i < im.eh->e_phnum; i++) {
		const Elf64_Phdr *p = &im.ph[i];
		if (p->p_type == PT_DYNAMIC)
			dynph = p;
		if (p->p_type == PT_GNU_STACK && (p->p_flags & PF_X))
			return refuse(&im, "asks for an executable stack (a trampoline to a nested "
				      "function?)", NULL, NULL);
		if (p->p_type == PT_LOAD && (p->p_flags & PF_W) && (p->p_flags & PF_X))
			return refuse(&im, "has a writable and executable segment", NULL, NULL);
		if (p->p_type == PT_INTERP)
			return bad(&im, "is an executable, not a shared object");
	}
	if (dynph == NULL)
		return bad(&im, "has no dynamic section");
	if (!in_bounds(&im, dynph->p_offset, dynph->p_filesz) || dynph->p_offset % 8 != 0)
		return bad(&im, "has a dynamic section outside its file");

	/* The dynamic section: first collect, then judge. */
	const Elf64_Dyn *dyn = (const Elf64_Dyn *)(im.b + dynph->p_offset);
	size_t ndyn = dynph->p_filesz / sizeof(Elf64_Dyn);
	uint64_t strtab = 0, strsz = 0, rela = 0, relasz = 0, relaent = 0, rel = 0, relsz = 0,
		 relent = 0, jmprel = 0, pltrelsz = 0, pltrel = 0;
	for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		uint64_t v = dyn[i].d_un.d_val;
		switch (dyn[i].d_tag) {
		case DT_STRTAB: strtab = v; break;
		case DT_STRSZ: strsz = v; break;
		case DT_RELA: rela = v; break;
		case DT_RELASZ: relasz = v; break;
		case DT_RELAENT: relaent = v; break;
		case DT_REL: rel = v; break;
		case DT_RELSZ: relsz = v; break;
		case DT_RELENT: relent = v; break;
		case DT_JMPREL: jmprel = v; break;
		case DT_PLTRELSZ: pltrelsz = v; break;
		case DT_PLTREL: pltrel = v; break;
		}
	}
	uint64_t stroff = strtab ? va_to_off(&im, strtab, strsz) : (uint64_t)-1;
	for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		uint64_t v = dyn[i].d_un.d_val;
		switch (dyn[i].d_tag) {
		case DT_INIT:
			return refuse_ctor(&im, "constructor", rela, relasz, v, 0);
		case DT_INIT_ARRAY:
			return refuse_ctor(&im, "constructor", rela, relasz, v, 1);
		case DT_PREINIT_ARRAY:
			return refuse_ctor(&im, "pre-initializer", rela, relasz, v, 1);
		case DT_FINI:
			return refuse_ctor(&im, "destructor", rela, relasz, v, 0);
		case DT_FINI_ARRAY:
			return refuse_ctor(&im, "destructor", rela, relasz, v, 1);
		case DT_TEXTREL:
			return refuse(&im, "has text relocations (code that patches itself)", NULL, NULL);
		case DT_FLAGS:
			if (v & DF_TEXTREL)
				return refuse(&im, "has text relocations (code that patches itself)",
					      NULL, NULL);
			break;
		case DT_RPATH:
		case DT_RUNPATH:
			return refuse(&im, "sets a library search path", NULL, NULL);
		case DT_AUDIT:
		case DT_DEPAUDIT:
		case DT_AUXILIARY:
		case DT_FILTER:
			return refuse(&im, "asks the dynamic loader for an audit or filter library",
				      NULL, NULL);
		case DT_NEEDED: {
			const char *lib = stroff == (uint64_t)-1 ? NULL : str_at(&im, stroff, strsz, v);
			if (lib == NULL)
				return bad(&im, "has a malformed DT_NEEDED entry");
			if (!in_list(allowed_needed, lib))
				return refuse(&im, "needs the library '%s'; a pass may use only libc and "
					      "libm", lib, NULL);
			break;
		}
		}
	}

	enum elfcheck_result r;
	if ((r = check_relocs(&im, rela, relasz, relaent, 1)) != ELFCHECK_OK)
		return r;
	if ((r = check_relocs(&im, rel, relsz, relent, 0)) != ELFCHECK_OK)
		return r;
	if ((r = check_relocs(&im, jmprel, pltrelsz, 0, pltrel != DT_REL)) != ELFCHECK_OK)
		return r;
	if ((r = check_sections(&im)) != ELFCHECK_OK)
		return r;
	return check_symbols(&im);
}

enum elfcheck_result elfcheck_file(const char *path, const char *label, char *msg, size_t msglen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(msg, msglen, "%s: cannot read the compiled object %s: %s",
			 label ? label : path, path, strerror(errno));
		return ELFCHECK_ERROR;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > ELFCHECK_MAX_BYTES) {
		close(fd);
		snprintf(msg, msglen, "%s: the compiled object %s is not a regular file of "
			 "reasonable size", label ? label : path, path);
		return ELFCHECK_ERROR;
	}
	size_t len = (size_t)st.st_size;
	/* Aligned for the ELF structures read in place. */
	void *buf = aligned_alloc(16, (len + 15) & ~(size_t)15);
	if (buf == NULL) {
		close(fd);
		snprintf(msg, msglen, "%s: out of memory", label ? label : path);
		return ELFCHECK_ERROR;
	}
	ssize_t got = base_read_full(fd, buf, len);
	close(fd);
	enum elfcheck_result r;
	if (got != (ssize_t)len) {
		snprintf(msg, msglen, "%s: cannot read the compiled object %s", label ? label : path,
			 path);
		r = ELFCHECK_ERROR;
	} else {
		r = elfcheck_buffer(buf, len, label ? label : path, msg, msglen);
	}
	free(buf);
	return r;
}
