/* pass_template.c - the pass.c a task shows before anything is written: the
 * graph in a comment, the tensors in pf_in/pf_out order, the rules, and a
 * replacement that answers "not implemented". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "graph_util.h"
#include "pass.h"

/* passfs_abi.h's dtype constants, in graph_dtype order. */
static const char *const pf_dtype_names[DT_COUNT] = {
	"PF_F32", "PF_F16", "PF_BF16", "PF_F64", "PF_I64", "PF_I32", "PF_BOOL",
};

/* Appends text to the comment with every line prefixed by " * ", and any
 * comment terminator in it defused. */
static int comment_lines(char **buf, size_t *len, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (strbuf_printf_bare(buf, len, n ? " * " : " *"))
			return -1;
		for (size_t i = 0; i < n; i++) {
			if (p[i] == '*' && i + 1 < n && p[i + 1] == '/') {
				if (strbuf_printf_bare(buf, len, "* "))
					return -1;
				continue;
			}
			if (strbuf_printf_bare(buf, len, "%c", p[i]))
				return -1;
		}
		if (strbuf_printf_bare(buf, len, "\n"))
			return -1;
		p += n + (nl != NULL);
	}
	return 0;
}

/* One tensor of every variant: "pf_in(call, 0)  x" then a line per variant. */
static int tensor_lines(char **buf, size_t *len, const struct graph_task *t, int is_out, int idx)
{
	const struct graph_variant *v0 = &t->variants[0];
	const struct graph_value *x0 = &v0->values[is_out ? v0->outputs[idx] : idx];
	if (strbuf_printf_bare(buf, len, " *   %s(call, %d)   %s\n", is_out ? "pf_out" : "pf_in", idx, x0->name))
		return -1;
	for (int k = 0; k < t->n_variants; k++) {
		const struct graph_variant *v = &t->variants[k];
		int n = is_out ? v->n_outputs : v->n_inputs;
		if (idx >= n)
			continue;
		const struct graph_value *x = &v->values[is_out ? v->outputs[idx] : idx];
		char sb[200], ty[240], named[160] = "";
		const char *dt = x->dtype >= 0 && x->dtype < DT_COUNT ? pf_dtype_names[x->dtype] : "?";
		snprintf(ty, sizeof ty, "%s%s", graph_dtype_name(x->dtype) ? graph_dtype_name(x->dtype) : "?",
			 graph_shape_str(&x->shape, sb, sizeof sb));
		if (strcmp(x->name, x0->name) != 0)
			snprintf(named, sizeof named, "  (named %.120s)", x->name);
		if (strbuf_printf_bare(buf, len, " *       %-18s %-28s %s%s\n", v->name, ty, dt, named))
			return -1;
	}
	return 0;
}

char *pass_template(const struct graph_task *t)
{
	char *buf = NULL;
	size_t len = 0;
	char *render = NULL;
	size_t rlen = 0;

	if (strbuf_printf_bare(&buf, &len, "/* pass.c for task %s\n *\n", t->id))
		goto oom;
	if (t->summary != NULL && comment_lines(&buf, &len, t->summary))
		goto oom;
	if (t->source != NULL) {
		char *src = NULL;
		size_t slen = 0;
		int bad = strbuf_printf_bare(&src, &slen, "Source: %s", t->source) || comment_lines(&buf, &len, src);
		free(src);
		if (bad)
			goto oom;
	}
	if (strbuf_printf_bare(&buf, &len,
			" *\n"
			" * The replacement below runs in place of this graph, on every variant\n"
			" * (pf_variant(call) returns the variant's name):\n"
			" *\n"))
		goto oom;
	for (int k = 0; k < t->n_variants; k++) {
		free(render);
		render = NULL;
		rlen = 0;
		if (graph_render_variant(&t->variants[k], &render, &rlen, "") != 0 ||
		    comment_lines(&buf, &len, render) || strbuf_printf_bare(&buf, &len, " *\n"))
			goto oom;
	}

	if (t->n_variants > 0) {
		const struct graph_variant *v0 = &t->variants[0];
		if (strbuf_printf_bare(&buf, &len,
				" * Inputs and outputs, in the order pf_in(call, i) and pf_out(call, i)\n"
				" * give them (pf_tensor: data, dtype, ndim, shape[], stride[]):\n"
				" *\n"))
			goto oom;
		for (int i = 0; i < v0->n_inputs; i++)
			if (tensor_lines(&buf, &len, t, 0, i))
				goto oom;
		for (int i = 0; i < v0->n_outputs; i++)
			if (tensor_lines(&buf, &len, t, 1, i))
				goto oom;
	}

	if (strbuf_printf_bare(&buf, &len,
			" *\n"
			" * Rules: one file, CUDA C.  Write __global__ kernels and launch them from\n"
			" * the replacement with pf_launch(call, kernel, grid, block, shared_bytes,\n"
			" * args...), grid and block as pf_dim(x, y, z), dim3 or an integer count;\n"
			" * templates are fine (pf_launch(call, k<float>, ...)).  Launch\n"
			" * only your own kernels: no libraries, no eager fallback, no <<<...>>>.\n"
			" * Outputs are fresh buffers filled with NaN: write every element.  All\n"
			" * tensors are contiguous and row-major; inputs are read-only.\n"
			" * pf_scratch(call, bytes) gives temporary device memory;\n"
			" * pf_unsupported(call, \"why\") declines a variant.  Includes: passfs.h,\n"
			" * cuda_fp16.h, cuda_bf16.h and the C headers stdint.h, math.h, float.h,\n"
			" * limits.h, stddef.h (or their <c...> forms).  The manual: README.md at the\n"
			" * root of the mount.\n"
			" */\n"
			"#include <passfs.h>\n"
			"\n"
			"PASS_REPLACEMENT(pf_call *call)\n"
			"{\n"
			"\treturn pf_not_implemented(call);\n"
			"}\n"))
		goto oom;
	free(render);
	return buf;
oom:
	free(render);
	free(buf);
	return NULL;
}
