/* result_fields.c - the fields of result.json (result_fields.h). */
#include "result_fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOP(n) {n, RESULT_TOP, 0, NULL}
#define PINNED(n) {n, RESULT_TOP, 1, NULL}
#define VAR(n) {n, RESULT_VARIANT, 0, NULL}
#define VAR_PINNED(n) {n, RESULT_VARIANT, 1, NULL}
#define VAR_AS(n, d) {n, RESULT_VARIANT, 0, d}
#define SERVICE(n) {n, RESULT_SERVICE, 0, NULL}

const struct result_field result_fields[] = {
	/* the document */
	PINNED("task"), PINNED("seq"), PINNED("pass_sha256"), PINNED("state"), PINNED("verdict"), PINNED("message"),
	PINNED("score"), PINNED("es_t"), PINNED("backend"), PINNED("variants"),
	TOP("modeled_speedup"), TOP("scoring"), TOP("device"), TOP("b"), TOP("p"), TOP("timing"), TOP("profile"),
	TOP("eager"), TOP("worker"), TOP("gpu"), TOP("evaluated_in"), TOP("sandbox_audit"), TOP("kernels"),
	TOP("compile"), TOP("elapsed_ms"), TOP("passfs_version"),
	/* each variant: the five of the pinned `variants` row */
	VAR_PINNED("name"), VAR_PINNED("dtype"), VAR_PINNED("verdict"), VAR_PINNED("speedup"), VAR_PINNED("min_t"),
	VAR("output_shapes"), VAR("eager_ms"), VAR("pass_ms"), VAR("pass_ms_reported"), VAR("timed_checks"),
	VAR("trial_overhead_ms"), VAR("roofline_ms"), VAR("implausible"), VAR("timing_suspect"), VAR("integrity_note"),
	VAR("speedup_ci95"), VAR("speedup_of_medians"), VAR("trial_ms"), VAR("trials"),
	VAR_AS("eager_iqr_ratio", "*_iqr_ratio"), VAR_AS("pass_iqr_ratio", "*_iqr_ratio"), VAR("timing_retries"),
	VAR("timing_unstable"), VAR("modeled_h200_ms"), VAR("modeled_speedup"), VAR("modeled_host_ms"), VAR("model_spread"), VAR("traffic"),
	VAR("speedup_source"), VAR("measured_speedup"), VAR("kernel_floor"), VAR("scored_worse_of_two"),
	VAR("eager_gpu_ms"), VAR("pass_gpu_ms"), VAR("eager_gpu_span_ms"), VAR("pass_gpu_span_ms"), VAR("eager_kernels"),
	VAR("pass_kernels"), VAR("pass_streams"), VAR("gpu_records_dropped"), VAR("eager_gpu_kernels"),
	VAR("pass_gpu_kernels"), VAR("lock_wait_ms"), VAR("max_abs_err"), VAR("max_rel_err"), VAR("close_from_t"),
	VAR("worst"), VAR("message"), VAR("log_tail"), VAR("log_truncated"),
	/* what the mount's service adds (docs/service.md) */
	SERVICE("time"), SERVICE("reused_from"), SERVICE("rerun"), SERVICE("rerun_of"), SERVICE("stale"),
	SERVICE("pending_seq"), SERVICE("stale_reason"), SERVICE("estimate"), SERVICE("save_error"), SERVICE("error"),
};
const int result_n_fields = (int)(sizeof(result_fields) / sizeof(result_fields[0]));

const struct result_field *result_field_find(const char *name, enum result_scope scope)
{
	for (int i = 0; i < result_n_fields; i++) {
		const struct result_field *f = &result_fields[i];
		int in = f->scope == scope || (scope == RESULT_TOP && f->scope == RESULT_SERVICE);
		if (in && strcmp(f->name, name) == 0)
			return f;
	}
	return NULL;
}

int result_fields_check(const json_t *doc, char *what, size_t len)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)doc, key, v) {
		if (result_field_find(key, RESULT_TOP) == NULL) {
			snprintf(what, len, "field '%s'", key);
			return -1;
		}
	}
	json_t *vars = json_object_get(doc, "variants");
	for (size_t i = 0; i < json_array_size(vars); i++) {
		json_object_foreach(json_array_get(vars, i), key, v) {
			if (result_field_find(key, RESULT_VARIANT) == NULL) {
				snprintf(what, len, "variant field '%s'", key);
				return -1;
			}
		}
	}
	return 0;
}

void result_fields_enforce(const json_t *doc, const char *who)
{
	const char *strict = getenv("PASSFS_STRICT_FIELDS");
	if (doc == NULL || strict == NULL || strict[0] == 0 || strcmp(strict, "0") == 0)
		return;
	char what[256];
	if (result_fields_check(doc, what, sizeof(what)) == 0)
		return;
	fprintf(stderr,
		"passfs: %s made a result.json with %s, which engine/eval/result_fields.c does not list: add its row "
		"there and document it in docs/result-format.md (PASSFS_STRICT_FIELDS is set)\n",
		who, what);
	abort();
}
