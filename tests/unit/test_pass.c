/* test_pass.c - engine/pass: the source checks (with the author's line
 * numbers), kernel name extraction, the NVRTC gate, the host compile of the
 * DESIGN example run through its replacement, the ELF check refusing libc
 * calls and static constructors (which must never run), the extern
 * __shared__ rewrite, and the task template. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "elfcheck.h"
#include "graph.h"
#include "hostcc.h"
#include "nvrtc.h"
#include "pass.h"
#include "task.h"

#include "check.h"

static int have_nvrtc;

/* Scans src; returns the verdict, filling *d and *nm (caller frees nm). */
static enum pass_verdict scan(const char *src, int allow, struct pass_diag *d, struct pass_names *nm)
{
	pass_scan("pass.c", src, strlen(src), allow, nm, d);
	return d->verdict;
}

/* Expects the scan of src to fail with verdict v at line, the message
 * starting "pass.c:<line>: " and containing `has`. */
static void expect_refused(int test_line, const char *src, enum pass_verdict v, int line, const char *has)
{
	struct pass_diag d;
	struct pass_names nm;
	enum pass_verdict got = scan(src, 0, &d, &nm);
	char want[32];
	snprintf(want, sizeof want, "pass.c:%d: ", line);
	int ok = got == v && d.line == line && strncmp(d.message, want, strlen(want)) == 0 &&
		 strstr(d.message, has) != NULL;
	if (ok) {
		n_pass++;
	} else {
		n_fail++;
		fprintf(stderr, "%s:%d: FAILED: want %s at line %d with '%s'\n    got %s line %d: %s\n",
			__FILE__, test_line, pass_verdict_name(v), line, has, pass_verdict_name(got), d.line,
			d.message);
	}
	pass_names_free(&nm);
}

static void expect_ok(int test_line, const char *src, int allow)
{
	struct pass_diag d;
	struct pass_names nm;
	if (scan(src, allow, &d, &nm) == PASS_OK) {
		n_pass++;
	} else {
		n_fail++;
		fprintf(stderr, "%s:%d: FAILED: want ok, got %s: %s\n", __FILE__, test_line,
			pass_verdict_name(d.verdict), d.message);
	}
	pass_names_free(&nm);
}

#define REPL "PASS_REPLACEMENT(pf_call *call) { return pf_not_implemented(call); }\n"

static void test_source_checks(void)
{
	expect_refused(__LINE__,
		       "#include <passfs.h>\n"
		       "__global__ void k(float *y)\n"
		       "{\n"
		       "\tfloat v;\n"
		       "\tasm(\"mov.f32 %0, 1.0;\" : \"=f\"(v));\n"
		       "\ty[0] = v;\n"
		       "}\n" REPL,
		       PASS_UNSUPPORTED, 5, "inline PTX (asm) needs a GPU; the cpu backend cannot run it");
	expect_refused(__LINE__, "#include <passfs.h>\n\n__device__ int f() { int r; __asm__ volatile(\"\" : \"=r\"(r)); return r; }\n" REPL,
		       PASS_UNSUPPORTED, 3, "inline PTX (asm)");
	expect_refused(__LINE__,
		       "#include <passfs.h>\n"
		       "__global__ void k()\n"
		       "{\n"
		       "\tnvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, __half, nvcuda::wmma::row_major> a;\n"
		       "}\n" REPL,
		       PASS_UNSUPPORTED, 4, "wmma");
	expect_refused(__LINE__, "#include <passfs.h>\nnamespace cg = cooperative_groups;\n" REPL,
		       PASS_UNSUPPORTED, 2, "cooperative groups needs a GPU");
	expect_refused(__LINE__,
		       "#include <passfs.h>\n"
		       "__global__ void child(float *y) { y[0] = 1; }\n"
		       "__global__ void parent(float *y)\n"
		       "{\n"
		       "\t// a comment with <<< is fine\n"
		       "\tconst char *s = \"<<< and asm in a string are fine\";\n"
		       "\tchild<<<1, 1>>>(y);\n"
		       "}\n" REPL,
		       PASS_UNSUPPORTED, 7, "a <<<...>>> launch");
	/* a macro body may not hide them */
	expect_refused(__LINE__, "#include <passfs.h>\n#define A \\\n\t__asm__\nA(\"syscall\");\n" REPL,
		       PASS_UNSUPPORTED, 3, "inline PTX (asm)");
	expect_refused(__LINE__, "#include <passfs.h>\n#define LAUNCH(k) k<<<1, 1>>>()\n" REPL,
		       PASS_UNSUPPORTED, 2, "a <<<...>>> launch");
	/* device-only constructs are allowed where the backend has a GPU */
	expect_ok(__LINE__, "#include <passfs.h>\n__device__ int f() { int r; asm(\"mov.u32 %0, 1;\" : \"=r\"(r)); return r; }\n" REPL, 1);

	/* comments, strings, raw strings, character literals and digit
	 * separators do not confuse the scanner */
	expect_ok(__LINE__,
		  "#include <passfs.h>\n"
		  "/* asm(\"...\"); wmma; k<<<1, 1>>>(); #include <stdio.h>\n"
		  "#include <stdio.h> */\n"
		  "// cooperative_groups <<<\n"
		  "static const char *a = \"asm <<< \\\" wmma\";\n"
		  "static const char *b = R\"x(asm \" <<< )\" wmma)x\";\n"
		  "static const char c = '\"', d = '\\'';\n"
		  "static const long e = 1'000'000;\n" REPL, 0);
	expect_refused(__LINE__,
		       "#include <passfs.h>\n"
		       "static const long e = 1'000'000;\n"
		       "static const char q = '\\'';\n"
		       "static const char *s = \"\\\"\";\n"
		       "__device__ void f() { asm(\"trap;\"); }\n" REPL,
		       PASS_UNSUPPORTED, 5, "asm");

	/* includes */
	expect_refused(__LINE__, "#include <passfs.h>\n#include <stdio.h>\n" REPL, PASS_UNSUPPORTED, 2,
		       "#include <stdio.h> is not allowed (a pass may include only passfs.h");
	expect_refused(__LINE__, "#include <passfs.h>\n\n  #  include \"secret.h\"\n" REPL, PASS_UNSUPPORTED, 3,
		       "#include \"secret.h\" is not allowed");
	expect_refused(__LINE__, "#define H <stdio.h>\n#include H\n" REPL, PASS_UNSUPPORTED, 2,
		       "computed name");
	expect_refused(__LINE__, "#include <passfs.h>\n%:include <unistd.h>\n" REPL, PASS_UNSUPPORTED, 2,
		       "<unistd.h>");
	expect_refused(__LINE__, "#include <passfs.h>\n#include <cooperative_groups.h>\n" REPL, PASS_UNSUPPORTED, 2,
		       "not allowed");
	expect_ok(__LINE__,
		  "#include <passfs.h>\n#include \"passfs.h\"\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
		  "#include <cuda_runtime.h>\n#include <stdint.h>\n#include <cstdint>\n#include <math.h>\n"
		  "#include <cmath>\n#include <float.h>\n#include <cfloat>\n#include <limits.h>\n"
		  "#include <climits>\n#include <stddef.h>\n#include <cstddef>\n" REPL, 0);

	/* not text, too big, no replacement */
	{
		const char src[] = "#include <passfs.h>\n\nint x;\0\n" REPL;
		struct pass_diag d;
		struct pass_names nm;
		pass_scan("pass.c", src, sizeof src - 1, 0, &nm, &d);
		CHECK(d.verdict == PASS_COMPILE_ERROR && d.line == 3);
		CHECK_MSG(strstr(d.message, "pass.c:3: a NUL byte") != NULL, d.message);
		pass_names_free(&nm);

		size_t big = PASS_MAX_BYTES + 1;
		char *b = malloc(big);
		memset(b, ' ', big);
		pass_scan("pass.c", b, big, 0, &nm, &d);
		CHECK(d.verdict == PASS_COMPILE_ERROR);
		CHECK_MSG(strstr(d.message, "1 MiB") != NULL, d.message);
		pass_names_free(&nm);
		free(b);

		pass_scan("pass.c", "#include <passfs.h>\n", 20, 0, &nm, &d);
		CHECK(d.verdict == PASS_COMPILE_ERROR);
		CHECK_MSG(strstr(d.message, "PASS_REPLACEMENT") != NULL, d.message);
		pass_names_free(&nm);
	}
}

/* What makes a compiler read or probe another file: #line naming a file
 * (g++ quotes its lines under every error), __has_include of a path (one
 * bit per compile), #pragma GCC dependency.  Each is refused with its line;
 * the harmless spellings stay allowed. */
static void test_file_probes(void)
{
	expect_refused(__LINE__, "#include <passfs.h>\n#ifndef __CUDACC_RTC__\n#line 1 \"/etc/shadow\"\nint a = x;\n#endif\n" REPL,
		       PASS_COMPILE_ERROR, 3, "#line names the file \"/etc/shadow\"; a pass's #line may name only its own file \"pass.c\"");
	expect_refused(__LINE__, "#include <passfs.h>\n\n  #  line 7 \"/proc/self/environ\"\n" REPL, PASS_COMPILE_ERROR, 3,
		       "\"/proc/self/environ\"");
	/* GCC's line marker is the same directive */
	expect_refused(__LINE__, "#include <passfs.h>\n# 1 \"/etc/passwd\"\n" REPL, PASS_COMPILE_ERROR, 2,
		       "#line names the file \"/etc/passwd\"");
	expect_refused(__LINE__, "#include <passfs.h>\n%:line 1 \"x.c\"\n" REPL, PASS_COMPILE_ERROR, 2, "\"x.c\"");
	/* a continuation does not hide the name */
	expect_refused(__LINE__, "#include <passfs.h>\n#line \\\n 4 \\\n \"/etc/hosts\"\n" REPL, PASS_COMPILE_ERROR, 2,
		       "\"/etc/hosts\"");
	/* macros could expand to a name */
	expect_refused(__LINE__, "#include <passfs.h>\n#define F 1 \"/etc/shadow\"\n#line F\n" REPL, PASS_COMPILE_ERROR, 3,
		       "#line with a computed argument");
	expect_refused(__LINE__, "#include <passfs.h>\n#define F \"/etc/shadow\"\n#line 3 F\n" REPL, PASS_COMPILE_ERROR, 3,
		       "#line with a computed file name");
	expect_refused(__LINE__, "#include <passfs.h>\n#line 3 \"pass.c\" junk\n" REPL, PASS_COMPILE_ERROR, 2,
		       "#line names the file");
	/* the pass's own name, and no name at all, are fine */
	expect_ok(__LINE__, "#include <passfs.h>\n#line 40\nint a;\n#line 50 \"pass.c\"\n# 60 \"pass.c\" 2\n"
		  "// #line 1 \"/etc/shadow\" in a comment\nconst char *s = \"#line 1 \\\"/etc/x\\\"\";\n" REPL, 0);

	expect_refused(__LINE__, "#include <passfs.h>\n#if __has_include(\"/etc/shadow\")\n#error yes\n#endif\n" REPL,
		       PASS_COMPILE_ERROR, 2, "__has_include(\"/etc/shadow\") asks about a header a pass may not include");
	expect_refused(__LINE__, "#include <passfs.h>\n#if defined(X) || __has_include_next(<stdio.h>)\n#endif\n" REPL,
		       PASS_COMPILE_ERROR, 2, "__has_include(<stdio.h>)");
	expect_refused(__LINE__, "#include <passfs.h>\n#define P \"/canary\"\n#if __has_include(P)\n#endif\n" REPL,
		       PASS_COMPILE_ERROR, 3, "__has_include with a computed argument");
	expect_refused(__LINE__, "#include <passfs.h>\n#define H(x) __has_include(x)\n#if H(\"/canary\")\n#endif\n" REPL,
		       PASS_COMPILE_ERROR, 2, "computed argument");
	/* outside a directive too (C++17 allows it in any #if, and a macro
	 * body is code here) */
	expect_refused(__LINE__, "#include <passfs.h>\nbool b = __has_include(\n\"/x\");\n" REPL, PASS_COMPILE_ERROR, 2,
		       "__has_include(\"/x\")");
	expect_ok(__LINE__, "#include <passfs.h>\n#if __has_include(<cuda_fp16.h>) && __has_include(\"passfs.h\")\n#endif\n"
		  "// __has_include(\"/etc/shadow\")\n" REPL, 0);

	expect_refused(__LINE__, "#include <passfs.h>\n#pragma GCC dependency \"/etc/shadow\"\n" REPL, PASS_COMPILE_ERROR, 2,
		       "#pragma GCC dependency is not allowed");
	expect_refused(__LINE__, "#include <passfs.h>\n\n_Pragma(\"GCC dependency \\\"/etc/shadow\\\"\")\n" REPL,
		       PASS_COMPILE_ERROR, 3, "_Pragma(\"GCC dependency ...\") is not allowed");
	expect_ok(__LINE__, "#include <passfs.h>\n#pragma GCC diagnostic ignored \"-Wunused\"\n_Pragma(\"unroll\")\n" REPL, 0);

	/* a label other than pass.c: its own name is the one allowed */
	struct pass_diag d;
	struct pass_names nm;
	const char own[] = "#include <passfs.h>\n#line 9 \"tasks/x/pass.c\"\n" REPL;
	CHECK_MSG(pass_scan("tasks/x/pass.c", own, strlen(own), 0, &nm, &d) == 0, d.message);
	pass_names_free(&nm);
	const char other[] = "#include <passfs.h>\n#line 9 \"pass.c\"\n" REPL;
	CHECK(pass_scan("tasks/x/pass.c", other, strlen(other), 0, &nm, &d) != 0 && d.verdict == PASS_COMPILE_ERROR &&
	      strstr(d.message, "tasks/x/pass.c:2: #line names the file \"pass.c\"") != NULL);
	pass_names_free(&nm);
}

/* The compiler log an author reads: quoted lines of any file but the pass
 * are dropped, other files' messages withheld; the pass's own diagnostics
 * and passfs.h's notes stay. */
static void test_author_log(void)
{
	const char gxx[] =
		"/tmp/canary.txt:1:9: error: 'x1' was not declared in this scope; did you mean 'y1'?\n"
		"    1 | SECRET-LINE-ONE\n"
		"      |         ^~\n"
		"      |         y1\n"
		"/etc/passwd:2:1: error: 'root' does not name a type\n"
		"    2 | root:x:0:0:SECRET\n"
		"pass.c: In function 'int pf_pass_replacement(pf_call*)':\n"
		"pass.c:12:5: error: 'z' was not declared in this scope\n"
		"   12 |     z = 1;\n"
		"      |     ^\n"
		"In file included from pass.c:1:\n"
		"passfs.h:228:19: note: declared here\n"
		"  228 | static inline int pf_launch(...)\n"
		"{standard input}: Assembler messages:\n"
		"/home/u/key.pem:3: Error: no such instruction: `SECRET-ASM'\n"
		"compilation terminated.\n";
	char *f = pass_log_for_author("pass.c", gxx);
	CHECK(f != NULL);
	if (f != NULL) {
		CHECK_MSG(strstr(f, "SECRET") == NULL && strstr(f, "root") == NULL, f);
		CHECK_MSG(strstr(f, "/tmp/canary.txt:1:9: error: (a message about a file other than pass.c, not shown)\n") != NULL, f);
		CHECK_MSG(strstr(f, "pass.c:12:5: error: 'z' was not declared in this scope\n   12 |     z = 1;\n      |     ^\n") != NULL, f);
		CHECK_MSG(strstr(f, "passfs.h:228:19: note: declared here\n{standard input}") != NULL, f);
		CHECK_MSG(strstr(f, "In function 'int pf_pass_replacement(pf_call*)'") != NULL, f);
		CHECK_MSG(strstr(f, "compilation terminated.\n") != NULL, f);
	}
	free(f);
	const char nv[] =
		"/proc/self/environ(1): error: identifier \"x1\" is undefined\n"
		"  int a = SECRET;\n"
		"          ^\n"
		"\n"
		"pass.c(7): error: identifier \"q\" is undefined\n"
		"  q = 2;\n"
		"  ^\n"
		"\n"
		"2 errors detected in the compilation of \"pass.c\".\n";
	f = pass_log_for_author("pass.c", nv);
	CHECK(f != NULL);
	if (f != NULL) {
		CHECK_MSG(strstr(f, "SECRET") == NULL, f);
		CHECK_MSG(strstr(f, "pass.c(7): error: identifier \"q\" is undefined\n  q = 2;\n  ^\n") != NULL, f);
		CHECK_MSG(strstr(f, "2 errors detected") != NULL, f);
	}
	free(f);
}

static void test_names(void)
{
	const char *src =
		"#include <passfs.h>\n"                                               /* 1 */
		"// pf_launch(call, in_a_comment, 1, 1, 0)\n"                         /* 2 */
		"#define LAUNCH(k) pf_launch(call, k, pf_dim(1), pf_dim(1), 0)\n"     /* 3 */
		"PASS_REPLACEMENT(pf_call *call)\n"                                   /* 4 */
		"{\n"                                                                 /* 5 */
		"\tint rc = pf_launch(call, softmax<float, 256>, pf_dim(4), pf_dim(256), 0, x, y);\n" /* 6 */
		"\trc |= pf_launch(call,\n"                                           /* 7 */
		"\t\t\tsoftmax< float,\n"                                             /* 8 */
		"\t\t\t         256 >,\n"                                             /* 9 */
		"\t\t\tpf_dim(4), pf_dim(256), 0, x, y);\n"                           /* 10 */
		"\trc |= pf_launch (call, k<decltype(f(1, 2)), 3>, g, b, 0, x);\n"    /* 11 */
		"\trc |= pf_launch(call, &plain, g, b, 0, x);\n"                       /* 12 */
		"\trc |= pf_launch(call, (plain), g, b, 0);\n"                         /* 13 */
		"\trc |= pf_launch(get_call(a, b), ns::k2<int, (4 > 2)>, g, b, 0);\n" /* 14 */
		"\trc |= pf_launch(call, k3<pair<int, float>>, g, b, 0);\n"            /* 15 */
		"\tconst char *s = \"pf_launch(call, in_a_string, 1, 1, 0)\";\n"      /* 16 */
		"\treturn rc;\n"
		"}\n"
		/* what the expressions name, at file scope */
		"int softmax, k, f, plain, k3, pair;\n"
		"namespace ns { int k2; }\n";
	struct pass_diag d;
	struct pass_names nm;
	CHECK_MSG(scan(src, 0, &d, &nm) == PASS_OK, d.message);
	static const struct {
		const char *expr;
		int line;
	} want[] = {
		{"softmax<float, 256>", 6},
		{"k<decltype(f(1, 2)), 3>", 11},
		{"plain", 12},
		{"ns::k2<int, (4>2)>", 14},
		{"k3<pair<int, float>>", 15},
	};
	int n = (int)(sizeof want / sizeof want[0]);
	CHECK(nm.n == n);
	for (int i = 0; i < n && i < nm.n; i++) {
		CHECK_MSG(strcmp(nm.expr[i], want[i].expr) == 0, nm.expr[i]);
		CHECK(nm.line[i] == want[i].line);
	}
	pass_names_free(&nm);

	expect_refused(__LINE__, "#include <passfs.h>\nPASS_REPLACEMENT(pf_call *call)\n{\n\treturn pf_launch(call, {x}, 1);\n}\n",
		       PASS_COMPILE_ERROR, 4, "does not name a kernel");
}

/* Only expressions that mean the same at the end of the file become name
 * expressions; the others (a template parameter, a local, a parameter, a
 * subscript, an #undef'd macro) are launched by address. */
static void test_names_scope(void)
{
	const char *src =
		"#include <passfs.h>\n"
		"namespace ns { template <typename T> __global__ void kern(T *y) { y[0] = 1; } }\n"
		"template <typename T> __global__ void kern(T *y) { y[0] = 1; }\n"
		"__global__ void k1(float *y) { y[0] = 1; }\n"
		"__global__ void k2(float *y) { y[0] = 2; }\n"
		"enum { MODE_A = 1 };\n"
		"static void (*const kerns[])(float *) = {k1, k2};\n"
		"struct tab { void (*k)(float *); };\n"
		"#define KEEP kern<double>\n"
		"#define GONE kern<int>\n"
		"namespace ns2 { __global__ void k9(float *y) { y[0] = 1; } }\n"
		"template <typename T, int N>\n"
		"static int run(pf_call *call, T *y)\n"
		"{\n"
		"\tint rc = pf_launch(call, kern<T>, 1, 1, 0, y);\n"            /* dropped: T */
		"\trc |= pf_launch(call, ns::kern<float>, 1, 1, 0, (float *)0);\n" /* kept */
		"\treturn rc | pf_launch(call, kern<float>, N, 1, 0, (float *)0);\n" /* kept */
		"}\n"
		"#define BETWEEN k1\n"
		"static int by_pointer(pf_call *call, void (*k)(float *))\n"
		"{\n"
		"\treturn pf_launch(call, k, 1, 1, 0, (float *)0);\n"          /* dropped: parameter */
		"}\n"
		"PASS_REPLACEMENT(pf_call *call)\n"
		"{\n"
		"\tint i = 1;\n"
		"\tstruct tab t = {k1};\n"
		"\tvoid (*local)(float *) = k2;\n"
		"\tauto each = [&](auto kk) { return pf_launch(call, kk, 1, 1, 0, (float *)0); };\n"
		"\tint rc = run<float, 2>(call, (float *)0) | by_pointer(call, k1) | each(k2);\n"
		"\trc |= pf_launch(call, kerns[i], 1, 1, 0, (float *)0);\n"   /* dropped: subscript */
		"\trc |= pf_launch(call, t.k, 1, 1, 0, (float *)0);\n"        /* dropped: member */
		"\trc |= pf_launch(call, local, 1, 1, 0, (float *)0);\n"      /* dropped: local */
		"\trc |= pf_launch(call, KEEP, 1, 1, 0, (double *)0);\n"      /* kept: a macro */
		"\trc |= pf_launch(call, GONE, 1, 1, 0, (int *)0);\n"         /* dropped: #undef'd */
		"\trc |= pf_launch(call, BETWEEN, 1, 1, 0, (float *)0);\n"    /* kept */
		"\trc |= pf_launch(call, ns2::k9, 1, 1, 0, (float *)0);\n"    /* kept */
		"\treturn rc | pf_launch(call, kern<MODE_A == 1 ? 1 : 2>, 1, 1, 0, (int *)0);\n" /* kept */
		"}\n"
		"#undef GONE\n";
	struct pass_diag d;
	struct pass_names nm;
	CHECK_MSG(scan(src, 0, &d, &nm) == PASS_OK, d.message);
	static const char *const want[] = {
		"ns::kern<float>", "kern<float>", "KEEP", "BETWEEN", "ns2::k9", "kern<MODE_A==1?1:2>",
	};
	int n = (int)(sizeof want / sizeof want[0]);
	CHECK_MSG(nm.n == n, nm.n > 0 ? nm.expr[0] : "none");
	for (int i = 0; i < n && i < nm.n; i++)
		CHECK_MSG(strcmp(nm.expr[i], want[i]) == 0, nm.expr[i]);
	pass_names_free(&nm);
}

/* --- running a compiled pass ------------------------------------------------ */

struct test_call {
	pf_call c;
	pf_tensor in[4], out[2];
	int n_in, n_out;
	struct gpu_dev *dev;
	int code;
	char msg[256];
};

static const pf_tensor *t_in(pf_call *c, int i)
{
	struct test_call *t = c->priv;
	return i >= 0 && i < t->n_in ? &t->in[i] : NULL;
}

static pf_tensor *t_out(pf_call *c, int i)
{
	struct test_call *t = c->priv;
	return i >= 0 && i < t->n_out ? &t->out[i] : NULL;
}

static int t_num_in(pf_call *c)
{
	return ((struct test_call *)c->priv)->n_in;
}

static int t_num_out(pf_call *c)
{
	return ((struct test_call *)c->priv)->n_out;
}

static void *t_scratch(pf_call *c, size_t bytes)
{
	(void)c;
	(void)bytes;
	return NULL;
}

static int t_fail(pf_call *c, int code, const char *msg)
{
	struct test_call *t = c->priv;
	if (t->code == 0) {
		t->code = code;
		snprintf(t->msg, sizeof t->msg, "%s", msg);
	}
	return code;
}

static const char *t_variant(pf_call *c)
{
	(void)c;
	return "f32";
}

static int t_launch(pf_call *c, const void *k, pf_dim3 g, pf_dim3 b, size_t smem, void **args, int nargs,
		    const size_t *sizes)
{
	(void)k, (void)g, (void)b, (void)smem, (void)args, (void)nargs, (void)sizes;
	return t_fail(c, PF_ERR_LAUNCH, "no device launcher in this test");
}

static int t_run_blocks(pf_call *c, pf_dim3 grid, pf_dim3 block, void (*fn)(void *, pf_dim3), void *ctx,
			struct pf_launch_stats *st)
{
	struct test_call *t = c->priv;
	return gpu_run_blocks(t->dev, grid, block, fn, ctx, st);
}

static const struct pf_runtime test_rt = {
	PF_ABI_VERSION, t_in, t_out, t_num_in, t_num_out, t_scratch, t_fail, t_variant, t_launch,
	t_run_blocks,
};

static void vec_tensor(pf_tensor *t, void *data, int dtype, long long n)
{
	memset(t, 0, sizeof *t);
	t->data = data;
	t->dtype = dtype;
	t->ndim = 1;
	t->shape[0] = n;
	t->stride[0] = 1;
}

static const char *design_example =
	"#include <passfs.h>\n"
	"\n"
	"__global__ void add_gelu(const float *a, const float *b, float *y, long long n)\n"
	"{\n"
	"\tlong long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
	"\tif (i < n) {\n"
	"\t\tfloat x = a[i] + b[i];\n"
	"\t\ty[i] = 0.5f * x * (1.0f + erff(x * (float)M_SQRT1_2));\n"
	"\t}\n"
	"}\n"
	"\n"
	"PASS_REPLACEMENT(pf_call *call)\n"
	"{\n"
	"\tconst pf_tensor *a = pf_in(call, 0), *b = pf_in(call, 1);\n"
	"\tpf_tensor *y = pf_out(call, 0);\n"
	"\tlong long n = pf_numel(y);\n"
	"\tif (y->dtype != PF_F32)\n"
	"\t\treturn pf_unsupported(call, \"only float32 so far\");\n"
	"\treturn pf_launch(call, add_gelu, pf_dim((n + 255) / 256), pf_dim(256), 0,\n"
	"\t\t\t a->data, b->data, y->data, n);\n"
	"}\n";

static struct gpu_dev *dev;

/* Compiles src as pass.c for dev, which must succeed: the module, or NULL
 * after a failed check and the compiler's log. */
static struct pass_module *compile_ok(const char *src)
{
	struct pass_module *m = NULL;
	struct pass_diag d;
	int rc = pass_compile("pass.c", src, strlen(src), dev, &m, &d);
	CHECK_MSG(rc == 0 && d.verdict == PASS_OK, d.message);
	if (rc != 0) {
		fprintf(stderr, "%s\n", d.log);
		return NULL;
	}
	return m;
}

/* A launch of kern<T> in a templated helper: no name expression, and the
 * device compile still has every instance the replacement reaches (the
 * device pf_launch takes the kernel). */
static void test_launch_in_template(void)
{
	const char *src =
		"#include <passfs.h>\n"
		"template <typename T> __global__ void kern(T *y) { y[0] = (T)1; }\n"
		"template <typename T> static int run(pf_call *call, T *y)\n"
		"{\n"
		"\treturn pf_launch(call, kern<T>, 1, 1, 0, y);\n"
		"}\n"
		"PASS_REPLACEMENT(pf_call *call)\n"
		"{\n"
		"\treturn run<float>(call, (float *)0) | run<double>(call, (double *)0);\n"
		"}\n";
	struct pass_module *m = compile_ok(src);
	if (m == NULL)
		return;
	CHECK(m->names.n == 0);
	if (have_nvrtc) {
		CHECK(m->ptx != NULL && strstr(m->ptx, ".entry _Z4kernIfEvPT_") != NULL);
		CHECK(m->ptx != NULL && strstr(m->ptx, ".entry _Z4kernIdEvPT_") != NULL);
	}
	pass_module_free(m);
}

static void test_design_example(void)
{
	struct pass_module *m = compile_ok(design_example);
	if (m == NULL)
		return;
	CHECK(m->names.n == 1 && strcmp(m->names.expr[0], "add_gelu") == 0);
	CHECK(m->host_ms > 0);
	if (have_nvrtc) {
		CHECK(m->ptx != NULL && strstr(m->ptx, ".entry _Z8add_geluPKfS0_Pfx") != NULL);
		CHECK(m->lowered != NULL && strcmp(m->lowered[0], "_Z8add_geluPKfS0_Pfx") == 0);
		CHECK(m->nvrtc_ms > 0 && m->note[0] == '\0');
	} else {
		CHECK(strcmp(m->note, "device compile skipped: NVRTC not available") == 0);
	}

	struct pass_loaded l;
	char err[512] = "";
	CHECK_MSG(pass_load(m, &l, err, sizeof err) == 0, err);
	if (l.handle != NULL) {
		CHECK(l.n_kernels == 1 && l.kernels[0].addr != NULL && strcmp(l.kernels[0].name, "add_gelu") == 0);
		enum { N = 1000 };
		float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
		for (int i = 0; i < N; i++) {
			a[i] = (float)(i - 500) / 100.0f;
			b[i] = 0.25f;
			y[i] = NAN;
		}
		struct test_call tc = {.c = {.rt = &test_rt, .backend = PF_BACKEND_CPU}, .n_in = 2, .n_out = 1, .dev = dev};
		tc.c.priv = &tc;
		vec_tensor(&tc.in[0], a, PF_F32, N);
		vec_tensor(&tc.in[1], b, PF_F32, N);
		vec_tensor(&tc.out[0], y, PF_F32, N);
		CHECK_MSG(l.replacement(&tc.c) == PF_OK, tc.msg);
		double maxerr = 0;
		for (int i = 0; i < N; i++) {
			double x = (double)a[i] + b[i];
			double want = 0.5 * x * (1 + erf(x / sqrt(2.0)));
			double e = fabs(y[i] - want);
			maxerr = e > maxerr || isnan(e) ? (isnan(e) ? INFINITY : e) : maxerr;
		}
		CHECK(maxerr < 1e-5);

		/* the replacement's own refusal lands in fail() */
		tc.out[0].dtype = PF_F16;
		CHECK(l.replacement(&tc.c) == PF_ERR_UNSUPPORTED);
		CHECK(strcmp(tc.msg, "only float32 so far") == 0);
		free(a);
		free(b);
		free(y);
		pass_unload(&l);
	}
	pass_module_free(m);
}

/* pf_launch takes grid and block as pf_dim(), dim3 or plain integers, as
 * <<<grid, block>>> does; an integer that is no dimension (a negative
 * count) fails the launch with a message naming it. */
static const char launch_dims_src[] =
	"#include <passfs.h>\n"
	"__global__ void fill(float *y, long long n)\n"
	"{\n"
	"\tlong long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\ty[i] = (float)i;\n"
	"}\n"
	"PASS_REPLACEMENT(pf_call *call)\n"
	"{\n"
	"\tpf_tensor *y = pf_out(call, 0);\n"
	"\tlong long n = pf_numel(y);\n"
	"\tlong grid = (long)((n + 127) / 128);\n"
	"\tint block = 128;\n"
	"\tif (y->dtype == PF_F32)\n"
	"\t\treturn pf_launch(call, fill, grid, block, 0, y->data, n);\n"
	"\tif (y->dtype == PF_F64)\n"
	"\t\treturn pf_launch(call, fill, dim3((unsigned)grid), dim3(128), 0, y->data, n);\n"
	"\tif (y->dtype == PF_F16)\n"
	"\t\treturn pf_launch(call, fill, -grid, block, 0, y->data, n);\n"
	"\treturn pf_launch(call, fill, pf_dim((unsigned)grid), 0u, 0, y->data, n);\n"
	"}\n";

static void test_launch_dims(void)
{
	struct pass_module *m = compile_ok(launch_dims_src);
	if (m == NULL)
		return;
	struct pass_loaded l;
	char err[512] = "";
	CHECK_MSG(pass_load(m, &l, err, sizeof err) == 0, err);
	if (l.handle != NULL) {
		enum { N = 1000 };
		float *y = malloc(N * sizeof(float));
		static const int dtypes[] = {PF_F32, PF_F64, PF_F16, PF_BF16};
		for (int k = 0; k < 4; k++) {
			for (int i = 0; i < N; i++)
				y[i] = NAN;
			struct test_call tc = {.c = {.rt = &test_rt, .backend = PF_BACKEND_CPU}, .n_out = 1, .dev = dev};
			tc.c.priv = &tc;
			vec_tensor(&tc.out[0], y, dtypes[k], N);
			int r = l.replacement(&tc.c);
			if (k < 2) {
				CHECK_MSG(r == PF_OK, tc.msg);
				int bad = 0;
				for (int i = 0; i < N; i++)
					bad += y[i] != (float)i;
				CHECK(bad == 0);
			} else if (k == 2) {
				CHECK(r == PF_ERR_LAUNCH);
				CHECK_MSG(strcmp(tc.msg, "invalid grid dimension -8 (an integer grid is x, and must be "
							 "at least 1)") == 0, tc.msg);
				CHECK(isnan(y[0]));
			} else {
				CHECK(r == PF_ERR_LAUNCH);
				CHECK_MSG(strstr(tc.msg, "invalid block dimension 0 ") != NULL, tc.msg);
			}
		}
		free(y);
		pass_unload(&l);
	}
	pass_module_free(m);
}

/* The precompiled passfs.h (gpu/hostcc.c): built once into the cache, used
 * by the next compiles, a corrupt one ignored by the compiler, off with
 * PASSFS_PCH=0; every one of those compiles yields a working pass. */
static int pch_compile(const char *what, int want_used, int want_invalid)
{
	static const char *const names[] = {"add_gelu"};
	struct hostcc_request hr = {.label = "pass.c", .src = design_example, .len = strlen(design_example),
				    .names = names, .n_names = 1, .kernel_table = 1};
	struct hostcc_output ho;
	char err[512] = "";
	enum hostcc_status hs = hostcc_compile(&hr, &ho, err, sizeof err);
	CHECK_MSG(hs == HOSTCC_OK, what);
	if (hs != HOSTCC_OK)
		fprintf(stderr, "%s: %s\n%s\n", what, err, ho.log);
	CHECK_MSG(ho.used_pch == want_used, what);
	/* -Winvalid-pch: GCC says when it finds a header it cannot use */
	CHECK_MSG((strstr(ho.log ? ho.log : "", "passfs.h.gch") != NULL) == want_invalid, what);
	int ok = 0;
	if (hs == HOSTCC_OK) {
		void *h = dlopen(ho.so_path, RTLD_NOW | RTLD_LOCAL);
		CHECK_MSG(h != NULL && dlsym(h, "pf_pass_replacement") != NULL, what);
		ok = h != NULL;
		if (h)
			dlclose(h);
	}
	hostcc_output_free(&ho);
	return ok;
}

/* The hash the compiled-module cache keys on: every API header's bytes. */
static void test_api_hash(void)
{
	char dir[512], cmd[4400];
	test_path(dir, sizeof dir, "passfs-apihash-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(cmd, sizeof cmd, "cp %s/*.h %s/", hostcc_include_dir(), dir);
	CHECK(system(cmd) == 0);
	uint64_t h0 = hostcc_api_hash(dir);
	CHECK(h0 == hostcc_api_hash(dir));
	snprintf(cmd, sizeof cmd, "echo '/* changed */' >> %s/pf_emu.h", dir);
	CHECK(system(cmd) == 0);
	uint64_t h1 = hostcc_api_hash(dir);
	CHECK(h1 != h0);
	snprintf(cmd, sizeof cmd, "rm -r %s", dir);
	CHECK(system(cmd) == 0);
}

static void test_pch(void)
{
	char tmpl[512];
	test_path(tmpl, sizeof tmpl, "passfs-pch-test-XXXXXX");
	if (mkdtemp(tmpl) == NULL) {
		CHECK(0);
		return;
	}
	const char *old = getenv("PASSFS_CACHE_DIR");
	char *saved = old ? strdup(old) : NULL;
	setenv("PASSFS_CACHE_DIR", tmpl, 1);
	unsetenv("PASSFS_PCH");
	pch_compile("first compile (builds the header)", 1, 0);
	char cmd[1100], gch[1100] = "";
	snprintf(cmd, sizeof cmd, "ls -d %s/pch-*/passfs.h.gch 2>/dev/null | head -1", tmpl);
	FILE *p = popen(cmd, "r");
	if (p != NULL) {
		if (fgets(gch, sizeof gch, p) == NULL)
			gch[0] = '\0';
		pclose(p);
	}
	gch[strcspn(gch, "\n")] = '\0';
	struct stat st;
	CHECK_MSG(gch[0] && stat(gch, &st) == 0 && st.st_size > 100000, "the cache holds passfs.h.gch");
	pch_compile("second compile (uses it)", 1, 0);
	if (gch[0]) {
		FILE *f = fopen(gch, "w");
		if (f) {
			fputs("not a precompiled header\n", f);
			fclose(f);
		}
		pch_compile("a corrupt passfs.h.gch is skipped by the compiler", 1, 1);
	}
	setenv("PASSFS_PCH", "0", 1);
	pch_compile("PASSFS_PCH=0", 0, 0);
	unsetenv("PASSFS_PCH");
	if (saved) {
		setenv("PASSFS_CACHE_DIR", saved, 1);
		free(saved);
	} else {
		unsetenv("PASSFS_CACHE_DIR");
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
	CHECK(system(cmd) == 0);
}

/* The worked example of docs/pass-api.md (the ```c block after the marker
 * comment), malloc'd; NULL when not found. */
static char *doc_example(void)
{
	static const char *const paths[] = {"docs/pass-api.md", PASSFS_SOURCE_DIR "/docs/pass-api.md"};
	for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
		FILE *f = fopen(paths[p], "r");
		if (f == NULL)
			continue;
		static char doc[1 << 16];
		size_t n = fread(doc, 1, sizeof doc - 1, f);
		fclose(f);
		doc[n] = '\0';
		const char *mark = strstr(doc, "<!-- tests/unit/test_pass.c compiles and runs this example");
		const char *b = mark ? strstr(mark, "```c\n") : NULL;
		const char *e = b ? strstr(b + 5, "\n```\n") : NULL;
		if (e == NULL)
			return NULL;
		b += 5;
		char *out = malloc((size_t)(e - b) + 2);
		memcpy(out, b, (size_t)(e - b) + 1);
		out[e - b + 1] = '\0';
		return out;
	}
	return NULL;
}

static void test_doc_example(void)
{
	char *src = doc_example();
	CHECK_MSG(src != NULL, "docs/pass-api.md: no worked example after the marker");
	if (src == NULL)
		return;
	struct pass_module *m = compile_ok(src);
	free(src);
	if (m == NULL)
		return;
	CHECK(m->names.n == 2 && strcmp(m->names.expr[0], "bias_gelu<float>") == 0 &&
	      strcmp(m->names.expr[1], "bias_gelu<__half>") == 0);
	struct pass_loaded l;
	char err[512] = "";
	CHECK_MSG(pass_load(m, &l, err, sizeof err) == 0, err);
	if (l.handle == NULL) {
		pass_module_free(m);
		return;
	}
	enum { ROWS = 6, COLS = 100, N = ROWS * COLS };
	float *x = malloc(N * sizeof(float)), *bias = malloc(COLS * sizeof(float)), *y = malloc(N * sizeof(float));
	_Float16 *xh = malloc(N * sizeof(_Float16)), *bh = malloc(COLS * sizeof(_Float16)),
		 *yh = malloc(N * sizeof(_Float16));
	for (int i = 0; i < N; i++) {
		x[i] = (float)((i * 37) % 200 - 100) / 25.0f;
		xh[i] = (_Float16)x[i];
		y[i] = NAN;
		yh[i] = (_Float16)NAN;
	}
	for (int c = 0; c < COLS; c++) {
		bias[c] = (float)(c % 10) / 20.0f;
		bh[c] = (_Float16)bias[c];
	}
	for (int half = 0; half < 2; half++) {
		struct test_call tc = {.c = {.rt = &test_rt, .backend = PF_BACKEND_CPU}, .n_in = 2, .n_out = 1, .dev = dev};
		tc.c.priv = &tc;
		int dt = half ? PF_F16 : PF_F32;
		vec_tensor(&tc.in[0], half ? (void *)xh : (void *)x, dt, N);
		tc.in[0].ndim = 2;
		tc.in[0].shape[0] = ROWS;
		tc.in[0].shape[1] = COLS;
		tc.in[0].stride[0] = COLS;
		vec_tensor(&tc.in[1], half ? (void *)bh : (void *)bias, dt, COLS);
		tc.out[0] = tc.in[0];
		tc.out[0].data = half ? (void *)yh : (void *)y;
		CHECK_MSG(l.replacement(&tc.c) == PF_OK, tc.msg);
		/* allclose: float32 loses digits to 1 + erf(x) near x = -4 */
		double atol = half ? 1e-3 : 1e-6, rtol = half ? 2e-3 : 1e-5;
		int bad = 0;
		for (int i = 0; i < N; i++) {
			double v = half ? (double)(float)xh[i] + (float)bh[i % COLS] : (double)x[i] + bias[i % COLS];
			double want = 0.5 * v * (1 + erf(v / sqrt(2.0)));
			double got = half ? (double)(float)yh[i] : y[i];
			if (!(fabs(got - want) <= atol + rtol * fabs(want))) {
				if (bad++ == 0)
					fprintf(stderr, "doc example, %s: element %d is %.9g, want %.9g\n",
						half ? "float16" : "float32", i, got, want);
			}
		}
		CHECK(bad == 0);

		tc.out[0].dtype = PF_BF16;
		CHECK(l.replacement(&tc.c) == PF_ERR_UNSUPPORTED);
		CHECK(strcmp(tc.msg, "only float32 and float16 so far") == 0);
	}
	free(x);
	free(bias);
	free(y);
	free(xh);
	free(bh);
	free(yh);
	pass_unload(&l);
	pass_module_free(m);
}

/* passfs.h's device branch under NVRTC and the emulation on the host: a
 * template kernel with barriers launched as softmax<float, 256>, __half,
 * and INFINITY / FLT_MAX / M_PI in device code. */
static const char *device_sample =
	"#include <passfs.h>\n"
	"\n"
	"template <typename T, int BLOCK>\n"
	"__global__ void softmax(const T *x, T *y, int cols)\n"
	"{\n"
	"\t__shared__ float red[BLOCK];\n"
	"\tconst T *row = x + (long long)blockIdx.x * cols;\n"
	"\tfloat m = -INFINITY;\n"
	"\tfor (int c = threadIdx.x; c < cols; c += BLOCK)\n"
	"\t\tm = fmaxf(m, (float)row[c]);\n"
	"\tred[threadIdx.x] = m;\n"
	"\t__syncthreads();\n"
	"\tfor (int s = BLOCK / 2; s > 0; s >>= 1) {\n"
	"\t\tif (threadIdx.x < s)\n"
	"\t\t\tred[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);\n"
	"\t\t__syncthreads();\n"
	"\t}\n"
	"\tm = red[0] > -FLT_MAX ? red[0] : 0.0f;\n"
	"\t__syncthreads();\n"
	"\tfloat sum = 0;\n"
	"\tfor (int c = threadIdx.x; c < cols; c += BLOCK)\n"
	"\t\tsum += expf((float)row[c] - m);\n"
	"\tred[threadIdx.x] = sum;\n"
	"\t__syncthreads();\n"
	"\tfor (int s = BLOCK / 2; s > 0; s >>= 1) {\n"
	"\t\tif (threadIdx.x < s)\n"
	"\t\t\tred[threadIdx.x] += red[threadIdx.x + s];\n"
	"\t\t__syncthreads();\n"
	"\t}\n"
	"\tfor (int c = threadIdx.x; c < cols; c += BLOCK)\n"
	"\t\ty[(long long)blockIdx.x * cols + c] = (T)(expf((float)row[c] - m) / red[0]);\n"
	"}\n"
	"\n"
	"__global__ void half_scale(const __half *x, __half *y, float k, int n)\n"
	"{\n"
	"\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\ty[i] = __float2half(__half2float(x[i]) * k);\n"
	"}\n"
	"\n"
	"PASS_REPLACEMENT(pf_call *call)\n"
	"{\n"
	"\tconst pf_tensor *x = pf_in(call, 0);\n"
	"\tpf_tensor *y = pf_out(call, 0);\n"
	"\tif (y->dtype == PF_F16) {\n"
	"\t\tint n = (int)pf_numel(y);\n"
	"\t\treturn pf_launch(call, half_scale, pf_dim((n + 127) / 128), pf_dim(128), 0,\n"
	"\t\t\t\t x->data, y->data, (float)M_PI, n);\n"
	"\t}\n"
	"\tint rows = (int)y->shape[0], cols = (int)y->shape[1];\n"
	"\treturn pf_launch(call, softmax<float, 256>, pf_dim(rows), pf_dim(256), 0,\n"
	"\t\t\t x->data, y->data, cols);\n"
	"}\n";

static void test_device_sample(void)
{
	struct pass_module *m = compile_ok(device_sample);
	if (m == NULL)
		return;
	CHECK(m->names.n == 2);
	if (have_nvrtc && m->lowered != NULL)
		CHECK_MSG(strcmp(m->lowered[1], "_Z7softmaxIfLi256EEvPKT_PS0_i") == 0, m->lowered[1]);
	struct pass_loaded l;
	char err[512] = "";
	CHECK_MSG(pass_load(m, &l, err, sizeof err) == 0, err);
	if (l.handle == NULL) {
		pass_module_free(m);
		return;
	}
	enum { ROWS = 7, COLS = 300, N = ROWS * COLS };
	float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
	_Float16 *xh = malloc(N * sizeof(_Float16)), *yh = malloc(N * sizeof(_Float16));
	for (int i = 0; i < N; i++) {
		x[i] = (float)((i * 13) % 50) / 10.0f - 2.0f;
		xh[i] = (_Float16)x[i];
		y[i] = NAN;
	}
	struct test_call tc = {.c = {.rt = &test_rt, .backend = PF_BACKEND_CPU}, .n_in = 1, .n_out = 1, .dev = dev};
	tc.c.priv = &tc;
	vec_tensor(&tc.in[0], x, PF_F32, N);
	tc.in[0].ndim = 2;
	tc.in[0].shape[0] = ROWS;
	tc.in[0].shape[1] = COLS;
	tc.in[0].stride[0] = COLS;
	tc.out[0] = tc.in[0];
	tc.out[0].data = y;
	CHECK_MSG(l.replacement(&tc.c) == PF_OK, tc.msg);
	int bad = 0;
	for (int r = 0; r < ROWS; r++) {
		double mx = -INFINITY, sum = 0;
		for (int c = 0; c < COLS; c++)
			mx = fmax(mx, x[r * COLS + c]);
		for (int c = 0; c < COLS; c++)
			sum += exp(x[r * COLS + c] - mx);
		for (int c = 0; c < COLS; c++) {
			double want = exp(x[r * COLS + c] - mx) / sum;
			bad += !(fabs(y[r * COLS + c] - want) <= 1e-7 + 1e-5 * want);
		}
	}
	CHECK(bad == 0);

	vec_tensor(&tc.in[0], xh, PF_F16, N);
	vec_tensor(&tc.out[0], yh, PF_F16, N);
	CHECK_MSG(l.replacement(&tc.c) == PF_OK, tc.msg);
	bad = 0;
	for (int i = 0; i < N; i++) {
		double want = (double)(float)xh[i] * (float)M_PI;
		bad += !(fabs((double)(float)yh[i] - want) <= 2e-3 * fabs(want) + 1e-3);
	}
	CHECK(bad == 0);
	free(x);
	free(y);
	free(xh);
	free(yh);
	pass_unload(&l);
	pass_module_free(m);
}

static void test_compile_errors(void)
{
	struct pass_module *m = NULL;
	struct pass_diag d;
	/* a device syntax error: NVRTC's gate, file:line as written */
	const char *syntax =
		"#include <passfs.h>\n"
		"\n"
		"__global__ void k(float *y)\n"
		"{\n"
		"\tint i = threadIdx.x;\n"
		"\ty[i] = (1.0f + ;\n"
		"}\n" REPL;
	int rc = pass_compile("pass.c", syntax, strlen(syntax), dev, &m, &d);
	CHECK(rc == -1 && m == NULL && d.verdict == PASS_COMPILE_ERROR);
	CHECK_MSG(d.line == 6 && strncmp(d.message, "pass.c:6: ", 10) == 0, d.message);
	if (have_nvrtc)
		CHECK_MSG(strstr(d.log, "pass.c(6): error") != NULL, d.log);
	else
		printf("note: NVRTC not available; the gate's error came from the host compiler\n");

	/* the same through the host compiler alone */
	struct pass_options o = {.skip_nvrtc = 1};
	rc = pass_compile_opts("pass.c", syntax, strlen(syntax), &o, &m, &d);
	CHECK(rc == -1 && d.verdict == PASS_COMPILE_ERROR);
	CHECK_MSG(d.line == 6 && strncmp(d.message, "pass.c:6: ", 10) == 0, d.message);
	CHECK_MSG(strstr(d.log, "pass.c:6:") != NULL, d.log);

	/* a kernel name that names nothing points at its pf_launch */
	const char *noname =
		"#include <passfs.h>\n"
		"__global__ void k(float *y) { y[0] = 1; }\n"
		"PASS_REPLACEMENT(pf_call *call)\n"
		"{\n"
		"\treturn pf_launch(call, no_such_kernel, pf_dim(1), pf_dim(1), 0, (float *)0);\n"
		"}\n";
	rc = pass_compile("pass.c", noname, strlen(noname), dev, &m, &d);
	CHECK(rc == -1 && d.verdict == PASS_COMPILE_ERROR);
	CHECK_MSG(d.line == 5 && strstr(d.message, "no_such_kernel") != NULL, d.message);
	rc = pass_compile_opts("pass.c", noname, strlen(noname), &o, &m, &d);
	CHECK(rc == -1 && d.verdict == PASS_COMPILE_ERROR);
	CHECK_MSG(d.line == 5 && strstr(d.message, "no_such_kernel") != NULL, d.message);

	/* an error inside passfs.h points at the author's line that caused it */
	const char *argc_src =
		"#include <passfs.h>\n"
		"__global__ void k(float *y, int n) { y[0] = n; }\n"
		"PASS_REPLACEMENT(pf_call *call)\n"
		"{\n"
		"\tpf_tensor *y = pf_out(call, 0);\n"
		"\treturn pf_launch(call, k, pf_dim(1), pf_dim(1), 0, y->data);\n"
		"}\n";
	rc = pass_compile("pass.c", argc_src, strlen(argc_src), dev, &m, &d);
	CHECK(rc == -1 && d.verdict == PASS_COMPILE_ERROR);
	CHECK_MSG(d.line == 6 && strstr(d.message, "pass.c:6: static assertion failed: pf_launch: the number "
					"of arguments differs") != NULL, d.message);
	/* with g++'s note on why (two parameters, one argument), and the log
	 * names passfs.h without the directory it was compiled in */
	CHECK_MSG(strstr(d.message, "differs from the kernel's parameters (the comparison reduces to '(2 == 1)')") !=
		  NULL, d.message);
	CHECK_MSG(strstr(d.log, "\npassfs.h:") != NULL && strstr(d.log, "/passfs.h") == NULL, d.log);

	/* a grid that converts to no dimension: the note says which argument */
	const char *grid_src =
		"#include <passfs.h>\n"
		"__global__ void k(float *y) { y[0] = 1; }\n"
		"PASS_REPLACEMENT(pf_call *call)\n"
		"{\n"
		"\tfloat g = 2.5f;\n"
		"\treturn pf_launch(call, k, g, 32, 0, pf_out(call, 0)->data);\n"
		"}\n";
	rc = pass_compile("pass.c", grid_src, strlen(grid_src), dev, &m, &d);
	CHECK(rc == -1 && d.verdict == PASS_COMPILE_ERROR);
	CHECK_MSG(d.line == 6 && strstr(d.message, "pass.c:6: no matching function for call to 'pf_launch") != NULL &&
			  strstr(d.message, "(cannot convert 'g' (type 'float') to type 'pf_emu::launch_dim')") != NULL,
		  d.message);

	/* NVRTC rejects host library calls g++ would accept (the emulation
	 * header brings stdlib.h along) */
	if (have_nvrtc) {
		const char *hostcall =
			"#include <passfs.h>\n"
			"__global__ void k(float *y) { y[0] = 1; }\n"
			"PASS_REPLACEMENT(pf_call *call)\n"
			"{\n"
			"\tif (rand() == 4) return 0;\n"
			"\treturn pf_launch(call, k, pf_dim(1), pf_dim(1), 0, (float *)0);\n"
			"}\n";
		rc = pass_compile("pass.c", hostcall, strlen(hostcall), dev, &m, &d);
		CHECK(rc == -1 && d.verdict == PASS_COMPILE_ERROR);
		CHECK_MSG(d.line == 5 && strstr(d.message, "pass.c:5: identifier \"rand\" is undefined") != NULL,
			  d.message);
	}
}

/* Compiles src (C++) with the system g++ as passfs links a pass (-shared
 * -nostartfiles -nostdlib, libc) but without passfs.h or pass_scan, and runs
 * the ELF check on the object: its result, with the message in err. */
static enum elfcheck_result elf_of(const char *src, char *err, size_t errlen)
{
	const char *tmp = test_tmpdir();
	char cc[512], so[512], cmd[1600];
	snprintf(cc, sizeof cc, "%.400s/passfs-test-elf-%d.cc", tmp, (int)getpid());
	snprintf(so, sizeof so, "%.400s/passfs-test-elf-%d.so", tmp, (int)getpid());
	FILE *f = fopen(cc, "w");
	if (f == NULL) {
		snprintf(err, errlen, "cannot write %.200s", cc);
		return ELFCHECK_ERROR;
	}
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "g++ -std=c++17 -O2 -fPIC -shared -nostartfiles -nostdlib -o %s %s -lc 2>/dev/null",
		 so, cc);
	enum elfcheck_result r = ELFCHECK_ERROR;
	if (system(cmd) == 0)
		r = elfcheck_file(so, "pass.c", err, errlen);
	else
		snprintf(err, errlen, "g++ failed on: %.200s", src);
	unlink(cc);
	unlink(so);
	return r;
}

static void test_elfcheck(void)
{
	struct pass_module *m = NULL;
	struct pass_diag d;
	/* fopen hidden from NVRTC (which does not define __GNUC__); the host
	 * compile has it from the emulation header's <stdio.h> */
	const char *files =
		"#include <passfs.h>\n"
		"__global__ void k(float *y) { y[0] = 1; }\n"
		"PASS_REPLACEMENT(pf_call *call)\n"
		"{\n"
		"#ifdef __GNUC__\n"
		"\tif (fopen(\"/etc/passwd\", \"r\") != 0)\n"
		"\t\treturn 0;\n"
		"#endif\n"
		"\treturn pf_launch(call, k, pf_dim(1), pf_dim(1), 0, (float *)0);\n"
		"}\n";
	int rc = pass_compile("pass.c", files, strlen(files), dev, &m, &d);
	CHECK(rc == -1 && m == NULL && d.verdict == PASS_REJECTED);
	CHECK_MSG(strcmp(d.message, "pass.c: refers to 'fopen', which a pass may not use (only the passfs "
		  "API and a small part of libc/libm)") == 0, d.message);

	/* a static constructor that would write a file when loaded */
	char marker[256], src[2048];
	const char *tmp = test_tmpdir();
	snprintf(marker, sizeof marker, "%s/passfs-test-ctor-%d", tmp, (int)getpid());
	unlink(marker);
	snprintf(src, sizeof src,
		 "#include <passfs.h>\n"
		 "#ifdef __GNUC__\n"
		 "extern \"C\" int open(const char *path, int flags, ...);\n"
		 "__attribute__((constructor)) static void evil(void)\n"
		 "{\n"
		 "\topen(\"%s\", 0101, 0600);\n"
		 "}\n"
		 "#endif\n"
		 "__global__ void k(float *y) { y[0] = 1; }\n"
		 "PASS_REPLACEMENT(pf_call *call) { return pf_launch(call, k, pf_dim(1), pf_dim(1), 0, (float *)0); }\n",
		 marker);
	rc = pass_compile("pass.c", src, strlen(src), dev, &m, &d);
	CHECK(rc == -1 && m == NULL && d.verdict == PASS_REJECTED);
	CHECK_MSG(strstr(d.message, "pass.c: has a constructor 'evil'") != NULL, d.message);

	/* skipping the compiler's verdict does not help: pass_load checks again */
	struct pass_options o = {.skip_nvrtc = 1};
	struct hostcc_request hr = {.label = "pass.c", .src = src, .len = strlen(src), .kernel_table = 1};
	struct hostcc_output ho;
	char err[512] = "";
	if (hostcc_compile(&hr, &ho, err, sizeof err) == HOSTCC_OK) {
		struct pass_module fake = {.label = "pass.c", .so_path = ho.so_path};
		struct pass_loaded l;
		CHECK(pass_load(&fake, &l, err, sizeof err) == -1 && l.handle == NULL);
		CHECK_MSG(strstr(err, "constructor") != NULL, err);
	} else {
		CHECK_MSG(0, err);
	}
	hostcc_output_free(&ho);
	(void)o;
	CHECK_MSG(access(marker, F_OK) != 0, "the constructor ran");
	unlink(marker);

	/* an ifunc resolver runs at load time too */
	const char *ifunc =
		"#include <passfs.h>\n"
		"static int impl(void) { return 1; }\n"
		"extern \"C\" void *pick(void) { return (void *)impl; }\n"
		"extern \"C\" int chosen(void) __attribute__((ifunc(\"pick\")));\n"
		"PASS_REPLACEMENT(pf_call *call) { (void)call; return chosen() - 1; }\n";
	o.skip_nvrtc = 1;
	rc = pass_compile_opts("pass.c", ifunc, strlen(ifunc), &o, &m, &d);
	CHECK(rc == -1 && d.verdict == PASS_COMPILE_ERROR);
	CHECK_MSG(strstr(d.message, "pass.c:4: the attribute 'ifunc'") != NULL, d.message);
	/* the object check still refuses one, however it was made */
	CHECK_MSG(elf_of("extern \"C\" { static int impl(void) { return 1; }\n"
			 "void *pick(void) { return (void *)impl; }\n"
			 "int chosen(void) __attribute__((ifunc(\"pick\"))); }\n", err, sizeof err) == ELFCHECK_REFUSED &&
		  strstr(err, "ifunc") != NULL, err);

	/* sections a compiled pass never has: the name the author chose, or
	 * a file embedded by a directive smuggled into the assembly */
	CHECK_MSG(elf_of("__attribute__((section(\"mysec\"), used)) static const char x[] = \"x\";\n", err,
			 sizeof err) == ELFCHECK_REFUSED &&
		  strstr(err, "pass.c: has a section 'mysec' that a compiled pass does not have") != NULL, err);
	CHECK_MSG(elf_of("__attribute__((section(\".passfs\\n.incbin \\\"/etc/hostname\\\"\\n#\"), used)) "
			 "static const char x[] = \"x\";\n", err, sizeof err) == ELFCHECK_REFUSED &&
		  strstr(err, "section '.passfs'") != NULL, err);
	CHECK_MSG(elf_of("int f(int a) { return a + 1; }\nconst char t[] = \"text\";\nint d = 3, b;\n", err,
			 sizeof err) == ELFCHECK_OK, err);

	/* a global with a dynamic initializer is a constructor too */
	const char *dyn =
		"#include <passfs.h>\n"
		"struct G { float v; G() { v = sinf(0.5f); } };\n"
		"static G g;\n"
		"__global__ void k(float *y, float v) { y[0] = v; }\n"
		"PASS_REPLACEMENT(pf_call *call) { return pf_launch(call, k, pf_dim(1), pf_dim(1), 0, (float *)0, g.v); }\n";
	o.skip_nvrtc = 1;
	rc = pass_compile_opts("pass.c", dyn, strlen(dyn), &o, &m, &d);
	CHECK(rc == -1 && d.verdict == PASS_REJECTED);
	CHECK_MSG(strstr(d.message, "dynamic initializer") != NULL, d.message);
}

/* Strings the host compiler copies into its assembly (an attribute's, an
 * #ident's) are refused by the scan with the line; harmless attributes and
 * the same words elsewhere are not. */
static void test_asm_strings(void)
{
	expect_refused(__LINE__,
		       "#include <passfs.h>\n"
		       "__attribute__((section(\".text\\n.incbin \\\"/etc/hostname\\\"\\n#\"))) int x = 1;\n" REPL,
		       PASS_COMPILE_ERROR, 2, "the attribute 'section' is not allowed");
	expect_refused(__LINE__, "#include <passfs.h>\n\nint y [[gnu::section(\".data\")]] = 1;\n" REPL,
		       PASS_COMPILE_ERROR, 3, "'section'");
	expect_refused(__LINE__, "#include <passfs.h>\nint z __attribute ((\n  __section__(\"s\"))) = 1;\n" REPL,
		       PASS_COMPILE_ERROR, 3, "'__section__'");
	expect_refused(__LINE__, "#include <passfs.h>\nextern \"C\" int f();\nint g() __attribute__((alias(\"f\")));\n" REPL,
		       PASS_COMPILE_ERROR, 3, "'alias'");
	expect_refused(__LINE__, "#include <passfs.h>\nstatic int g() __attribute__((weakref(\"f\")));\n" REPL,
		       PASS_COMPILE_ERROR, 2, "'weakref'");
	expect_refused(__LINE__, "#include <passfs.h>\n__attribute__((symver(\"f@V1\"))) int f() { return 1; }\n" REPL,
		       PASS_COMPILE_ERROR, 2, "'symver'");
	expect_refused(__LINE__, "#include <passfs.h>\nint c() __attribute__((ifunc(\"pick\")));\n" REPL,
		       PASS_COMPILE_ERROR, 2, "'ifunc'");
	expect_refused(__LINE__, "#include <passfs.h>\n[[gnu::target_clones(\"avx2\", \"default\")]] int f() { return 1; }\n" REPL,
		       PASS_COMPILE_ERROR, 2, "'target_clones'");
	expect_refused(__LINE__, "#include <passfs.h>\n#define AT(x) __attribute__((x))\n#define S section(\"s\")\n"
		       "#define T __attribute__((used, section(\"s\")))\n" REPL,
		       PASS_COMPILE_ERROR, 4, "'section'");
	expect_refused(__LINE__, "#include <passfs.h>\n#ident \"x\\n.incbin \\\"/etc/hostname\\\"\"\n" REPL,
		       PASS_COMPILE_ERROR, 2, "#ident copies its string into the host assembly");
	expect_refused(__LINE__, "#include <passfs.h>\n\n  %: sccs \"x\"\n" REPL, PASS_COMPILE_ERROR, 3, "#sccs");
	/* a splice the compilers join and the scan would read as two words */
	expect_refused(__LINE__, "#include <passfs.h>\n#inc\\\nlude \"/etc/passwd\"\n" REPL, PASS_COMPILE_ERROR, 2,
		       "a backslash-newline between two characters of code");
	expect_refused(__LINE__, "#include <passfs.h>\n#id\\\nent \"x\"\n" REPL, PASS_COMPILE_ERROR, 2,
		       "backslash-newline");
	/* the masker reads the text as g++ does: an identifier that merely
	 * ends in L/u/U/8 before R"( starts no raw string, so nothing is
	 * hidden from the include allow-list */
	expect_refused(__LINE__, "#include <passfs.h>\n#define xLR\nstatic const char *s = xLR\"(\";\n"
		       "#include \"/etc/passwd\"\n// )\"\n" REPL, PASS_UNSUPPORTED, 4,
		       "#include \"/etc/passwd\" is not allowed");
	expect_refused(__LINE__, "#include <passfs.h>\nstatic const char *s = $R\"(\";\n#include <stdio.h>\n// )\"\n" REPL,
		       PASS_UNSUPPORTED, 3, "<stdio.h>");
	/* a comment continued by backslash, blank, newline; a string continued
	 * by a splice; a raw string that a directive's line ends */
	expect_refused(__LINE__, "#include <passfs.h>\n// x \\ \nR\"(\n#include <stdio.h>\n)\"\n" REPL,
		       PASS_UNSUPPORTED, 4, "<stdio.h>");
	expect_refused(__LINE__, "#include <passfs.h>\n#define X R\"(\n#include <stdio.h>\n)\"\n" REPL,
		       PASS_UNSUPPORTED, 3, "<stdio.h>");
	expect_refused(__LINE__, "#include <passfs.h>\n#pragma message R\"(\nint a;\n)\"\n" REPL,
		       PASS_COMPILE_ERROR, 2, "a raw string literal in a preprocessor directive");
	expect_refused(__LINE__, "#include <passfs.h>\nint v = 0x1'e+'a', w = 'a'b;\n" REPL, PASS_COMPILE_ERROR, 2,
		       "a word touching a string or character literal");
	expect_refused(__LINE__, "#include <passfs.h>\nconst char *s = \"x\"LR\"(\";\n" REPL, PASS_COMPILE_ERROR, 2,
		       "a word touching");
	expect_refused(__LINE__, "#include <passfs.h>\nint x;\r#include <stdio.h>\n" REPL, PASS_COMPILE_ERROR, 2,
		       "a carriage return that does not end a line");
	expect_refused(__LINE__, "#include <passfs.h>\nint \xc3\xa9R = 1;\n" REPL, PASS_COMPILE_ERROR, 2,
		       "a non-ASCII character outside comments and strings");
	expect_ok(__LINE__, "#include <passfs.h>\r\n// caf\xc3\xa9\r\nconst char *s = \"\xc3\xa9\";\r\n"
		  "static const long e = 1'000'000, f = 0x1'0p-3;\r\nconst char *r = u8R\"x(a)\"b)x\" \"c\";\r\n" REPL, 0);
	expect_ok(__LINE__,
		  "#include <passfs.h>\n"
		  "__attribute__((noinline, aligned(16))) static int section_size(int section) { return section; }\n"
		  "[[maybe_unused]] static int alias_count = 0;\n"
		  "static const char *s = \"__attribute__((section(\\\"x\\\")))\"; // [[gnu::alias]]\n"
		  "#define LONG_MACRO(a) \\\n  ((a) + \\\n   1)\n"
		  "/* #ident \"x\" */\n" REPL, 0);
}

/* The compiler as a child process: a missing one, and one that hangs (it is
 * killed at the timeout with its process group). */
static void test_hostcc_failures(void)
{
	const char *src = "int x;\n";
	struct hostcc_request hr = {.label = "pass.c", .src = src, .len = strlen(src), .timeout_s = 1};
	struct hostcc_output ho;
	char err[512] = "";
	setenv("PASSFS_CXX", "/nonexistent/g++", 1);
	CHECK(hostcc_compile(&hr, &ho, err, sizeof err) == HOSTCC_FAILED);
	CHECK_MSG(strstr(err, "no host C++ compiler: '/nonexistent/g++' not found") != NULL, err);
	hostcc_output_free(&ho);

	char script[256];
	const char *tmp = test_tmpdir();
	snprintf(script, sizeof script, "%s/passfs-test-slowcc-%d.sh", tmp, (int)getpid());
	FILE *f = fopen(script, "w");
	if (f != NULL) {
		fputs("#!/bin/sh\necho compiling slowly\nsleep 30\n", f);
		fclose(f);
		chmod(script, 0700);
		setenv("PASSFS_CXX", script, 1);
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		err[0] = '\0';
		CHECK(hostcc_compile(&hr, &ho, err, sizeof err) == HOSTCC_COMPILE_ERROR);
		clock_gettime(CLOCK_MONOTONIC, &b);
		CHECK(ho.timed_out == 1);
		CHECK_MSG(strstr(err, "pass.c: the host compile timed out after 1 s") != NULL, err);
		CHECK_MSG(strstr(ho.log, "compiling slowly") != NULL, ho.log);
		CHECK(b.tv_sec - a.tv_sec < 5);
		hostcc_output_free(&ho);
		unlink(script);
	}
	unsetenv("PASSFS_CXX");
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_shared_rewrite(void)
{
	const char *src =
		"extern __shared__ float smem[];\n"                               /* 1 */
		"namespace n { extern __shared__ __align__(16) double d[]; }\n"    /* 2 */
		"template <typename T> __global__ void k(T *y)\n"                  /* 3 */
		"{\n"                                                              /* 4 */
		"\textern __shared__ __align__(sizeof(T))\n"                       /* 5 */
		"\t\tunsigned char buf[];\n"                                       /* 6 */
		"\t/* extern __shared__ int not_me[]; */\n"                        /* 7 */
		"\ty[0] = smem[0] + buf[0];\n"                                     /* 8 */
		"}\n"                                                              /* 9 */
		"extern \"C\" __global__ void c(float *y) { extern __shared__ float e[]; y[0] = e[0]; }\n"
		"extern \"C\" {\n"
		"extern __shared__ float f[];\n"
		"}\n";
	size_t n;
	char *out = hostcc_rewrite_shared("pass.c", src, strlen(src), &n);
	CHECK(out != NULL);
	if (out == NULL)
		return;
	/* "#line N" numbers the rest of the declaration's own line */
	CHECK_MSG(strstr(out, "#define smem ((float *)pf_emu::dyn_smem())\n#line 1 \"pass.c\"\n\n") == out, out);
	CHECK_MSG(strstr(out, "namespace n { \n#define d ((double *)pf_emu::dyn_smem())\n#line 2 \"pass.c\"\n }\n") != NULL, out);
	CHECK_MSG(strstr(out, "unsigned char *buf = (unsigned char *)pf_emu::dyn_smem();\n") != NULL, out);
	CHECK_MSG(strstr(out, "/* extern __shared__ int not_me[]; */") != NULL, out);
	CHECK_MSG(strstr(out, "void c(float *y) { float *e = (float *)pf_emu::dyn_smem(); y[0] = e[0]; }\n") != NULL, out);
	CHECK_MSG(strstr(out, "extern \"C\" {\n#define f ((float *)pf_emu::dyn_smem())\n#line 12 \"pass.c\"\n\n}\n") != NULL, out);
	/* a function body keeps its line count; the directives add theirs */
	const char *body = strstr(out, "template");
	const char *end = body ? strstr(body, "extern \"C\" {") : NULL;
	CHECK(body != NULL && end != NULL);
	if (end != NULL) {
		char *part = strndup(body, (size_t)(end - body));
		CHECK(count_lines(part) == 8);
		free(part);
	}
	free(out);
}

static void test_template(void)
{
	char err[512] = "";
	struct graph_task *t = NULL;
	if (task_load(PASSFS_SOURCE_DIR "/tasks", "gpt2_bias_gelu_tanh", &t, err, sizeof err) != 0) {
		CHECK_MSG(0, err);
		return;
	}
	char *tpl = pass_template(t);
	CHECK(tpl != NULL);
	if (tpl == NULL) {
		graph_task_free(t);
		return;
	}
	CHECK(strstr(tpl, "pass.c for task gpt2_bias_gelu_tanh") != NULL);
	CHECK(strstr(tpl, " * variant f32_b1_s128\n") != NULL);
	CHECK(strstr(tpl, "t1 = gelu(t0, approximate=\"tanh\")") != NULL);
	CHECK(strstr(tpl, "pf_in(call, 0)   fc_out") != NULL);
	CHECK(strstr(tpl, "pf_in(call, 1)   fc_bias") != NULL);
	CHECK(strstr(tpl, "pf_out(call, 0)   t1") != NULL);
	CHECK(strstr(tpl, "float16[1,128,3072]") != NULL && strstr(tpl, "PF_F16") != NULL);
	CHECK(strstr(tpl, "#include <passfs.h>\n") != NULL);
	CHECK(strstr(tpl, "PASS_REPLACEMENT(pf_call *call)\n{\n\treturn pf_not_implemented(call);\n}\n") != NULL);
	if (getenv("PASSFS_TEST_SHOW_TEMPLATE"))
		fputs(tpl, stdout);

	struct pass_module *m = NULL;
	struct pass_diag d;
	int rc = pass_compile("pass.c", tpl, strlen(tpl), dev, &m, &d);
	CHECK_MSG(rc == 0, d.message);
	if (rc == 0) {
		CHECK(m->names.n == 0);
		struct pass_loaded l;
		CHECK_MSG(pass_load(m, &l, err, sizeof err) == 0, err);
		if (l.handle != NULL) {
			struct test_call tc = {.c = {.rt = &test_rt, .backend = PF_BACKEND_CPU}, .dev = dev};
			tc.c.priv = &tc;
			CHECK(l.replacement(&tc.c) == PF_ERR_NOT_IMPLEMENTED);
			CHECK(tc.code == PF_ERR_NOT_IMPLEMENTED);
			CHECK(l.n_kernels == 0);
			pass_unload(&l);
		}
	}
	pass_module_free(m);
	free(tpl);
	graph_task_free(t);

	/* a summary holding a comment terminator cannot break the comment */
	const char *json =
		"{\"id\": \"evil\", \"summary\": \"ends */ here\", \"variants\": [{\"name\": \"v\","
		" \"inputs\": [{\"name\": \"x\", \"shape\": [4], \"dtype\": \"float32\"}],"
		" \"nodes\": [{\"name\": \"t0\", \"op\": \"relu\", \"inputs\": [\"x\"]}],"
		" \"outputs\": [\"t0\"]}]}";
	if (graph_load_buffer("evil.json", json, strlen(json), &t, err, sizeof err) != 0) {
		CHECK_MSG(0, err);
		return;
	}
	tpl = pass_template(t);
	struct pass_diag d2;
	struct pass_names nm;
	CHECK(tpl != NULL && strstr(tpl, "ends * / here") != NULL);
	CHECK_MSG(tpl != NULL && pass_scan("pass.c", tpl, strlen(tpl), 0, &nm, &d2) == 0, d2.message);
	pass_names_free(&nm);
	free(tpl);
	graph_task_free(t);
}

int main(void)
{
	char why[256];
	have_nvrtc = nvrtc_available(why, sizeof why);
	if (!have_nvrtc)
		printf("note: %s; NVRTC checks are skipped\n", why);
	char err[256];
	if (gpu_open("cpu", &dev, err, sizeof err) != 0) {
		fprintf(stderr, "gpu_open(cpu): %s\n", err);
		return 1;
	}
	test_source_checks();
	test_asm_strings();
	test_file_probes();
	test_author_log();
	test_names();
	test_names_scope();
	test_shared_rewrite();
	test_hostcc_failures();
	test_design_example();
	test_launch_in_template();
	test_launch_dims();
	test_pch();
	test_api_hash();
	test_doc_example();
	test_device_sample();
	test_compile_errors();
	test_elfcheck();
	test_template();
	gpu_close(dev);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
