/* eager.c - the eager baseline executor (eager.h).
 *
 * Planning walks the variant's nodes in order and keeps, for every graph
 * value, a view: (buffer, element offset, shape, strides, dtype).  View-like
 * ops only rewrite views; compute ops append steps (kernel launches) whose
 * parameter blocks (gpu/oplib/oplib.h) are filled at plan time, with device
 * pointers patched in at run time from (buffer, byte offset) pairs.  Buffers
 * are the caller's inputs and outputs and scratch buffers; scratch buffers are
 * packed into one arena by their lifetimes (first and last step touching
 * them), so memory is reused as PyTorch's caching allocator would. */
#define _GNU_SOURCE
#include "eager_int.h"

/* ---- running ----------------------------------------------------------------------------- */

/* Writes the plan's constants (BK_CONST: vectors of ones) into the arena,
 * once, when it is allocated. */
static int upload_consts(struct eager_plan *p, char *err, size_t errlen)
{
	for (int i = 0; i < p->nbufs; i++) {
		const struct buf *x = &p->bufs[i];
		if (x->kind != BK_CONST)
			continue;
		enum graph_dtype dt = (enum graph_dtype)x->ext;
		size_t es = graph_dtype_size(dt), n = x->bytes / es;
		unsigned char *host = malloc(x->bytes ? x->bytes : 1);
		if (host == NULL) {
			snprintf(err, errlen, "eager: variant '%s': out of memory", p->variant);
			return -1;
		}
		for (size_t k = 0; k < n; k++) {
			float one = 1.0f;
			uint16_t h = dt == DT_F16 ? 0x3c00 : 0x3f80;   /* 1.0 in float16, bfloat16 */
			if (dt == DT_F32)
				memcpy(host + k * es, &one, es);
			else
				memcpy(host + k * es, &h, es);
		}
		int rc = gpu_copy_to_device(p->dev, (char *)p->arena + x->off, host, x->bytes);
		free(host);
		if (rc) {
			snprintf(err, errlen, "eager: variant '%s': cannot write constants to the device", p->variant);
			return -1;
		}
	}
	return 0;
}

int eager_run(struct eager_plan *p, void *const *inputs, void **outputs, char *err, size_t errlen)
{
	if (p->arena == NULL && p->arena_bytes > 0) {
		p->arena = gpu_alloc(p->dev, p->arena_bytes);
		if (p->arena == NULL) {
			snprintf(err, errlen, "eager: variant '%s': cannot allocate %zu bytes of scratch memory",
				 p->variant, p->arena_bytes);
			return -1;
		}
		if (upload_consts(p, err, errlen))
			return -1;
	}
	for (int i = 0; i < p->nsteps; i++) {
		struct step *s = &p->steps[i];
		for (int k = 0; k < s->nfix; k++) {
			const struct buf *x = &p->bufs[s->fix[k].buf];
			char *base = x->kind == BK_INPUT ? (char *)inputs[x->ext]
				   : x->kind == BK_OUTPUT ? (char *)outputs[x->ext]
							  : (char *)p->arena + x->off;
			void *ptr = base ? base + s->fix[k].byte_off : NULL;
			memcpy((char *)&s->p + s->fix[k].field, &ptr, sizeof(ptr));
		}
		if (s->kind == STEP_BLAS_GEMM || s->kind == STEP_DNN_CONV) {
			if (s->kind == STEP_BLAS_GEMM ? blas_gemm_run(p->mod->blas, &s->p.bg, err, errlen)
						      : dnn_conv_run(p->mod->dnn, &s->p.dc, err, errlen)) {
				size_t used = strlen(err);
				snprintf(err + used, errlen - used, " (eager: variant '%s', step %d)", p->variant, i);
				return -1;
			}
			continue;
		}
		void *args[1] = {&s->p};
		if (s->lib_ms > 0)
			gpu_model_price(p->dev, s->lib_ms);
		if (p->tramps) {
			struct eager_call ec = {.call = {.rt = &eager_runtime, .backend = PF_BACKEND_CPU}, .dev = p->dev};
			ec.call.priv = &ec;
			int rc = p->tramps[s->kernel](&ec.call, s->grid, s->block, 0, args, 1);
			if (rc != PF_OK || ec.failed) {
				snprintf(err, errlen, "eager: variant '%s', launch %d (%s): %s", p->variant, i,
					 p->names[s->kernel], ec.failed ? ec.msg : "launch failed");
				return -1;
			}
		} else if (gpu_launch(p->dev, p->kernels[s->kernel], s->grid, s->block, 0, args, 1, err, errlen)) {
			size_t used = strlen(err);
			snprintf(err + used, errlen - used, " (eager: variant '%s', launch %d: %s)", p->variant, i,
				 p->names[s->kernel]);
			return -1;
		}
	}
	return gpu_sync(p->dev, err, errlen);
}

int eager_launch_count(const struct eager_plan *p)
{
	return p->nsteps;
}

size_t eager_scratch_bytes(const struct eager_plan *p)
{
	return p->arena_bytes;
}

double eager_compile_ms(const struct eager_plan *p)
{
	return p->mod && !p->mod->from_cache ? p->mod->compile_ms : 0.0;
}

const char *eager_libraries(const struct eager_plan *p)
{
	return p->libs;
}

const char *eager_library_note(const struct eager_plan *p)
{
	return p->note;
}
