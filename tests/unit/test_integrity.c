/* test_integrity.c - the device-code scan on hand-written PTX (the shapes
 * NVRTC 13 emits, seen in tests/cheats/), and the roofline helpers.  Every
 * refused construct has a clean twin that must pass: a false positive fails
 * an honest pass. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrity.h"

static int passed, failed;
#define CHECK(cond, ...) do { if (cond) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#define HEAD ".version 9.0\n.target sm_90\n.address_size 64\n"
#define ENTRY(body) \
	".visible .entry _Z1kPKfPfx(\n\t.param .u64 _Z1kPKfPfx_param_0,\n\t.param .u64 _Z1kPKfPfx_param_1\n)\n{\n" \
	"\t.reg .pred \t%p<3>;\n\t.reg .b32 \t%r<9>;\n\t.reg .f32 \t%f<9>;\n\t.reg .b64 \t%rd<29>;\n" \
	"\t.loc\t1 6 0\n\tld.param.u64 \t%rd3, [_Z1kPKfPfx_param_0];\n\tld.param.u64 \t%rd4, [_Z1kPKfPfx_param_1];\n" \
	"\t.loc\t1 9 2\n" body "\t.loc\t1 20 1\n\tret;\n\n}\n"
#define TAIL "\t.file\t1 \"/tmp/passfs-x/pass.c\"\n\t.file\t2 \"/usr/include/passfs/passfs.h\"\n"

struct tcase {
	const char *name;
	const char *ptx;
	int want;               /* 0 clean, 1 refused */
	int line;               /* expected line when refused (0: any) */
	const char *needle;     /* in the message */
};

static const struct tcase cases[] = {
	{"clean", HEAD ENTRY("\tcvta.to.global.u64 \t%rd5, %rd3;\n\tld.global.f32 \t%f1, [%rd5];\n"
			     "\tcvta.to.global.u64 \t%rd6, %rd4;\n\tst.global.f32 \t[%rd6], %f1;\n") TAIL,
	 0, 0, ""},
	{"clock64", HEAD ENTRY("\t.loc\t1 10 2\n\t// begin inline asm\n\tmov.u64 \t%rd8, %clock64;\n"
			       "\t// end inline asm\n") TAIL,
	 1, 10, "%clock64"},
	{"globaltimer in an asm scope", HEAD ENTRY("\t.loc\t1 11 2\n\t// begin inline asm\n"
						   "\t{ .reg .u64 t; mov.u64 t, %globaltimer_lo; }\n\t// end inline asm\n") TAIL,
	 1, 11, "%globaltimer_lo"},
	{"direct store", HEAD ".global .align 4 .u32 calls;\n" ENTRY("\t.loc\t1 12 2\n\tld.global.u32 \t%r1, [calls];\n"
								"\tadd.s32 \t%r2, %r1, 1;\n\tst.global.u32 \t[calls], %r2;\n") TAIL,
	 1, 12, "writes the __device__ variable 'calls'"},
	{"atomic through registers", HEAD ".global .align 4 .u32 counter;\n"
	 ENTRY("\t.loc\t1 13 2\n\tmov.u64 \t%rd16, counter;\n\tcvta.global.u64 \t%rd17, %rd16;\n"
	       "\tadd.s64 \t%rd18, %rd17, 4;\n\tatom.add.u32 \t%r4, [%rd18], 1;\n") TAIL,
	 1, 13, "'counter'"},
	{"read-only table", HEAD ".global .align 4 .b8 tab[8] = {0, 0, 128, 63, 0, 0, 0, 64};\n"
	 ENTRY("\tmov.u64 \t%rd19, tab;\n\tadd.s64 \t%rd20, %rd19, 4;\n\tld.global.f32 \t%f1, [%rd20];\n"
	       "\tld.global.f32 \t%f2, [tab+4];\n\tcvta.to.global.u64 \t%rd6, %rd4;\n\tst.global.f32 \t[%rd6], %f1;\n") TAIL,
	 0, 0, ""},
	{"printf and assert strings", HEAD
	 ".extern .func  (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n)\n;\n"
	 ".extern .func __assertfail\n(\n\t.param .b64 p0\n)\n;\n"
	 ".global .align 1 .b8 $str[4] = {37, 102, 10};\n"
	 ENTRY("\tmov.u64 \t%rd15, $str;\n\tcvta.global.u64 \t%rd16, %rd15;\n\t{ // callseq 1, 0\n"
	       "\t.reg .b32 temp_param_reg;\n\t.param .b64 param0;\n\tst.param.b64 \t[param0+0], %rd16;\n"
	       "\t.param .b32 retval0;\n\tcall.uni (retval0), \n\tvprintf, \n\t(\n\tparam0\n\t);\n"
	       "\tld.param.b32 \t%r4, [retval0+0];\n\t} // callseq 1\n"
	       "\t{ // callseq 2, 0\n\t.param .b64 param0;\n\tst.param.b64 \t[param0+0], %rd16;\n"
	       "\tcall.uni \n\t__assertfail, \n\t(\n\tparam0\n\t);\n\t} // callseq 2\n") TAIL,
	 0, 0, ""},
	{"address stored to memory", HEAD ".global .align 4 .u32 slot;\n"
	 ENTRY("\t.loc\t1 14 2\n\tmov.u64 \t%rd21, slot;\n\tcvta.to.global.u64 \t%rd6, %rd4;\n"
	       "\tst.global.u64 \t[%rd6], %rd21;\n") TAIL,
	 1, 14, "stores the address of the __device__ variable 'slot'"},
	{"address passed to a device function", HEAD ".global .align 4 .u32 g2;\n"
	 ".func _Z4bumpPi(\n\t.param .b64 _Z4bumpPi_param_0\n)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<2>;\n"
	 "\tld.param.u64 %rd1, [_Z4bumpPi_param_0];\n\tld.u32 %r1, [%rd1];\n\tadd.s32 %r2, %r1, 1;\n"
	 "\tst.u32 [%rd1], %r2;\n\tret;\n}\n"
	 ENTRY("\t.loc\t1 15 2\n\tmov.u64 \t%rd9, g2;\n\t{ // callseq 0, 0\n\t.param .b64 param0;\n"
	       "\tst.param.b64 \t[param0+0], %rd9;\n\tcall.uni \n\t_Z4bumpPi, \n\t(\n\tparam0\n\t);\n\t} // callseq 0\n") TAIL,
	 1, 15, "passes the address of the __device__ variable 'g2'"},
	{"initializer holding an address", HEAD ".global .align 4 .u32 hidden;\n"
	 ".global .align 8 .u64 ptr = generic(hidden);\n" ENTRY("\tld.global.u64 \t%rd7, [ptr];\n"
								"\tst.u32 \t[%rd7], %r1;\n") TAIL,
	 1, 0, "'hidden'"},
	{"taint across a loop back edge", HEAD ".global .align 4 .b8 cache[4096];\n"
	 ENTRY("$L__BB0_1:\n\t.loc\t1 16 2\n\tst.global.f32 \t[%rd12], %f1;\n\tadd.s64 \t%rd12, %rd11, 4;\n"
	       "\tmov.u64 \t%rd11, cache;\n\tsetp.lt.s64 \t%p1, %rd12, %rd4;\n\t@%p1 bra \t$L__BB0_1;\n") TAIL,
	 1, 16, "'cache'"},
	{"vector store", HEAD ".global .align 8 .b8 pair[8];\n"
	 ENTRY("\t.loc\t1 17 2\n\tmov.u64 \t%rd22, pair;\n\tst.global.v2.u32 \t[%rd22], {%r1, %r2};\n") TAIL,
	 1, 17, "'pair'"},
	{"vector load then store elsewhere", HEAD ".global .align 8 .b8 pair[8];\n"
	 ENTRY("\tmov.u64 \t%rd22, pair;\n\tld.global.v2.u32 \t{%r1, %r2}, [%rd22];\n"
	       "\tcvta.to.global.u64 \t%rd6, %rd4;\n\tst.global.v2.u32 \t[%rd6], {%r1, %r2};\n") TAIL,
	 0, 0, ""},
	{"managed", HEAD ".global .attribute(.managed) .align 4 .u32 shared_state;\n" ENTRY("") TAIL,
	 1, 0, "__managed__ variable 'shared_state'"},
	{"trap", HEAD ENTRY("\t.loc\t1 18 2\n\t// begin inline asm\n\ttrap;\n\t// end inline asm\n") TAIL,
	 1, 18, "`trap`"},
	{"exit is a return", HEAD ENTRY("\t@%p1 exit;\n") TAIL, 0, 0, ""},
	{"device-side launch", HEAD ".extern .func  (.param .b32 func_retval0) cudaLaunchDeviceV2\n(\n\t.param .b64 p0,\n\t.param .b64 p1\n)\n;\n"
	 ENTRY("\t.loc\t1 19 2\n\t{ // callseq 3, 0\n\t.param .b64 param0;\n\tst.param.b64 \t[param0+0], %rd3;\n"
	       "\t.param .b32 retval0;\n\tcall.uni (retval0), \n\tcudaLaunchDeviceV2, \n\t(\n\tparam0\n\t);\n\t} // callseq 3\n") TAIL,
	 1, 19, "cudaLaunchDeviceV2"},
	{"device malloc", HEAD ".extern .func  (.param .b64 func_retval0) malloc\n(\n\t.param .b64 malloc_param_0\n)\n;\n"
	 ENTRY("\t.loc\t1 8 2\n\t{ // callseq 4, 0\n\t.param .b64 param0;\n\tst.param.b64 \t[param0+0], 64;\n"
	       "\t.param .b64 retval0;\n\tcall.uni (retval0), \n\tmalloc, \n\t(\n\tparam0\n\t);\n\t} // callseq 4\n") TAIL,
	 1, 8, "device heap"},
	{"line from inlined_at", HEAD ".global .align 4 .u32 calls;\n"
	 ENTRY("\t.loc\t2 40 5, function_name $L__info_string0, inlined_at 1 21 3\n\tst.global.u32 \t[calls], %r2;\n") TAIL,
	 1, 21, "'calls'"},
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *c = &cases[i];
		char msg[1024];
		int line = -1;
		double ms = -1;
		int rc = integrity_scan_ptx(c->ptx, "pass.c", msg, sizeof(msg), &line, &ms);
		CHECK(rc == c->want, "%s: rc %d (want %d): %s", c->name, rc, c->want, msg);
		CHECK(ms >= 0, "%s: no time", c->name);
		if (c->want == 1 && rc == 1) {
			CHECK(strstr(msg, c->needle) != NULL, "%s: message '%s' lacks '%s'", c->name, msg, c->needle);
			if (c->line > 0) {
				char at[32];
				snprintf(at, sizeof(at), "pass.c:%d:", c->line);
				CHECK(line == c->line && strncmp(msg, at, strlen(at)) == 0, "%s: line %d, message '%s'",
				      c->name, line, msg);
			}
		}
	}
	/* The label is matched on its base name, and a message without a
	 * line names the kernel. */
	{
		char msg[512];
		int line;
		const char *ptx = HEAD ENTRY("\tmov.u64 \t%rd8, %clock;\n") "\t.file\t1 \"/elsewhere/other.c\"\n";
		CHECK(integrity_scan_ptx(ptx, "dir/pass.c", msg, sizeof(msg), &line, NULL) == 1 && line == 0 &&
		      strstr(msg, "dir/pass.c: kernel 'k'") == msg, "no author line: '%s'", msg);
	}
	/* Roofline helpers. */
	double small = integrity_cpu_bytes_per_ms(4096), big = integrity_cpu_bytes_per_ms((size_t)1 << 30);
	CHECK(small > 0 && big > 0 && small >= big, "bandwidth table: %g (4 KiB) %g (1 GiB) bytes/ms", small, big);
	CHECK(integrity_min_ms(1000, 100) == 10 && integrity_min_ms(1000, 0) == 0, "min_ms");
	/* an H100 SXM's HBM3: 2619 MHz, 5120 bits, double data rate = 3.35 TB/s */
	CHECK(fabs(integrity_gpu_bytes_per_ms(2619000, 5120) - 3.35232e9) < 1e3, "H100 bandwidth");
	CHECK(integrity_gpu_bytes_per_ms(0, 5120) == 0 && integrity_gpu_bytes_per_ms(2619000, 0) == 0,
	      "unknown clock or width: no bandwidth");
	CHECK(integrity_implausible(1, 10) && !integrity_implausible(6, 10) && !integrity_implausible(1, 0),
	      "implausible rule");
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
