/* import_int.h - what the files of the importer share (the contract is
 * import.h): bounds, the arena, tokens, Python values, the program being
 * built, and the functions one file calls in another.
 *
 *   import.c         programs: samples in, dead code out, variants compared,
 *                    graph.json written
 *   import_value.c   the arena, string maps, Python values
 *   import_lex.c     the Python subset's tokenizer and token helpers
 *   import_build.c   graph values and nodes, constants as JSON
 *   import_calls.c   call binding, the call tables, the calls themselves
 *   import_eval.c    expressions and statements, evaluated on symbolic values
 *   import_meta.c    weight_meta.py: the inputs' shapes, dtypes and ranges */
#ifndef PASSFS_IMPORT_INT_H
#define PASSFS_IMPORT_INT_H

#include "import.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "map.h"

/* Bounds that keep hostile input cheap.  Real samples are far below them. */
#define MAX_TEXT ((size_t)64 << 20)     /* bytes of one model.py / weight_meta.py */
#define MAX_TOKENS (8 << 20)
#define MAX_ARENA ((size_t)1 << 30)
#define MAX_DEPTH 64                    /* expression nesting */
#define MAX_ARGS 256                    /* arguments of one call */
#define MAX_NODES 8192                  /* graph.c's own limit */
#define MAX_VALUES (4 * MAX_NODES)
#define MAX_SAMPLES 1024
#define MAX_NAME_LEN 100                /* graph.c allows 128; room for suffixes */
#define MAX_PATH_LEN 256                /* dotted names like torch.nn.functional.x */
#define MAX_INDEX 64                    /* items of one subscript */

/* ---- arena ---------------------------------------------------------------- */

struct ablock {
	struct ablock *next;
	size_t used, cap;
	max_align_t data[];
};

struct arena {
	struct ablock *head;
	size_t total;
};

/* ---- string maps: base/map.h's base_map (keys live in the arena; there is no
 * deletion: a deleted entry keeps its key with a NULL value) ---------------- */

/* ---- tokens --------------------------------------------------------------- */

enum tk { TK_EOF, TK_NEWLINE, TK_NAME, TK_INT, TK_FLOAT, TK_STR, TK_OP };

struct tok {
	enum tk t;
	int line;
	int indent;             /* first token of a logical line: its indent; else -1 */
	const char *s;          /* NAME, STR (decoded), OP: NUL-terminated, in the arena */
	size_t slen;            /* STR: decoded length */
	long long iv;
	double fv;
};

struct lline {                  /* one logical line: tokens [start, end), tok[end] is NEWLINE */
	int start, end, indent, line;
};

/* ---- values --------------------------------------------------------------- */

enum pk {
	PV_NONE, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_ELLIPSIS, PV_SLICE, PV_DTYPE,
	PV_PATH, PV_METHOD, PV_TENSOR, PV_GTUPLE, PV_SEQ, PV_DEVICE
};

/* A Python object.  Tensor objects are mutable (an in-place op repoints gv);
 * everything else is immutable once built. */
struct pv {
	enum pk k;
	int is_list;            /* SEQ: list rather than tuple */
	long long i;            /* INT, BOOL */
	double f;               /* FLOAT */
	const char *s;          /* STR, PATH, DTYPE (graph dtype name), METHOD name */
	size_t slen;            /* STR */
	int gv;                 /* TENSOR, GTUPLE: graph value */
	int n;                  /* SEQ, SLICE (3): items */
	struct pv **items;
	struct pv *self;        /* METHOD */
};

/* A graph value: a forward argument or the result of one node. */
struct gval {
	const char *name;       /* graph name; NULL until the statement ends */
	const char *py;         /* forward argument: its Python name */
	const char *hint;       /* in-place result: name base to use */
	int node;               /* -1 for a forward argument */
	int root;               /* the value whose storage this one shares */
	int stale_line;         /* modified in place through another object at this line */
	int is_tuple;
	int used;
};

enum okind { O_NULL, O_VALUE, O_SCALAR };

struct opnd {
	enum okind k;
	int gv;
	json_t *scalar;         /* owned */
};

struct gnode {
	const char *op;
	const char *call;       /* what the source called, for messages */
	int line;
	int nops;
	struct opnd *ops;
	json_t *attrs;          /* owned; NULL when empty */
	int value;
	int inplace_src;        /* in-place: the value it overwrote; else -1 */
	int dup_output;         /* a copy made for a tensor returned twice */
	int unpacked;           /* a tuple unpacked into this many names (checked after inference); else 0 */
	int unpack_line;
	int alive;
};

/* One weight_meta.py entry. */
struct meta_entry {
	const char *name;
	int line;
	int ndim;
	long long shape[GRAPH_MAX_DIMS];
	const char *dtype;      /* graph dtype name */
	int has[4];             /* mean, std, min, max */
	double num[4];
	int num_is_int[4];
	struct pv *data;        /* SEQ (nested allowed) or NULL */
};

struct prog {
	const char *label;
	const char *text;
	size_t len;
	struct arena ar;
	char *err;
	size_t errlen;
	int failed;

	struct tok *toks;
	int ntok, captok;
	struct lline *lines;
	int nlines;
	int pos;                /* token cursor */
	int depth;
	int line;               /* line of the statement being run */
	int meta_mode;          /* evaluating weight_meta.py literals */

	struct base_map env;    /* Python name -> struct pv * (NULL: deleted) */
	struct base_map aliases; /* import aliases: name -> dotted path (char *) */
	struct base_map names;  /* graph names in use */
	struct base_map suffix; /* name base -> next numeric suffix to try */

	struct gval *gv;
	int ngv, capgv;
	struct gnode *nodes;
	int nnodes, capnodes;
	int nargs;              /* gv[0 .. nargs-1] are the forward arguments */
	int *outputs;
	int nout;
	int stmt_first_gv;      /* values created by the current statement start here */

	struct meta_entry *meta;
	int nmeta;
};

struct nodebuild {
	const char *op;
	const char *call;
	struct opnd ops[MAX_ARGS];
	int nops;
	json_t *attrs;
};

/* ---- call binding ---------------------------------------------------------------
 *
 * A call is described by a spec string: space-separated parameters in
 * PyTorch's order, "*" before keyword-only ones.  Each parameter is
 *     pyname[>attrname]:KIND[?][n][#slot][=json-default-to-emit]
 * '?' optional, 'n' None means "not given", '#k' operand slot (default: next).
 * KIND: T tensor operand, S tensor or number operand, L list of tensors,
 *       i int, f float, N number as given, b bool, B bool, s string, d dtype,
 *       I int or ints, V ints (an int becomes [int]), v the remaining
 *       positional ints (or one sequence), a any constant,
 *       X inplace flag, Z must be None/False (ignored), - ignored. */

struct param {
	char py[40];
	char attr[40];
	char kind;
	int optional, nullable, kwonly, slot;
	char dflt[16];
};

struct callargs {
	int npos;
	struct pv *pos[MAX_ARGS];
	int nkw;
	const char *kwname[MAX_ARGS];
	struct pv *kw[MAX_ARGS];
	int line;
};

/* ---- the call tables ------------------------------------------------------ */

#define F_VIEW 1        /* result shares the first operand's storage */
#define F_TUPLE 2       /* result is a tuple (split, chunk, unbind, tensor_split) */
#define F_INPLACE 4     /* torch.relu_ and friends */
#define F_ELEM 8        /* elementwise with scalars: one operand must be a tensor */
#define F_TSPLIT 16     /* tensor_split: indices_or_sections becomes sections or indices */

struct fdef {
	const char *name;       /* dotted path, or method name */
	enum graph_op op;       /* the op it becomes (engine/graph/graph_ops.c) */
	const char *spec;
	int flags;
};

#define ADD_SPEC "input:S other:S * alpha:N?"
#define REDUCE_SPEC "input:T dim:I?n keepdim:b? * dtype:d?n"
#define SDPA_SPEC "query:T key:T value:T attn_mask:T?n dropout_p:f? is_causal:b? scale:f?n enable_gqa:b?"
#define INTERP_SPEC "input:T size:a?n scale_factor:a?n mode:s? align_corners:B?n " \
	"recompute_scale_factor:B?n antialias:b?"

/* PyTorch's three overloads in one: (indices_or_sections, dim), (sections,
 * dim), (indices, dim); tsplit_attr() sorts out which was given. */
#define TSPLIT_SPEC "input:T indices_or_sections:a? dim:i? * sections:i? indices:V?"
#define BADDBMM_SPEC "input:T batch1:T batch2:T * beta:N? alpha:N?"
#define CONV1D_SPEC "input:T weight:T bias:T?n stride:a? padding:a? dilation:a? groups:i?"
#define AVG_POOL2D_SPEC "input:T kernel_size:I stride:I?n padding:I? ceil_mode:b? count_include_pad:b? " \
	"divisor_override:i?n"

/* ---- across the files ---- */

char *imp_arena_strndup(struct arena *a, const char *s, size_t n);
void imp_arena_free(struct arena *a);
extern struct pv import_pv_none_obj;
extern struct pv import_pv_ellipsis_obj;
__attribute__((format(printf, 3, 4))) void *imp_perr(struct prog *p, int line, const char *fmt, ...);
void *imp_prog_oom(struct prog *p);
void *imp_palloc(struct prog *p, size_t n);
int imp_grow(struct prog *p, void **arr, int *cap, int need, size_t sz, int max);
struct pv *imp_pv_new(struct prog *p, enum pk k);
struct pv *imp_pv_int(struct prog *p, long long i);
struct pv *imp_pv_float(struct prog *p, double f);
struct pv *imp_pv_bool(struct prog *p, int b);
struct pv *imp_pv_seq(struct prog *p, int n, int is_list);
int imp_is_num(const struct pv *v);
double imp_num_val(const struct pv *v);
const char *imp_kind_name(const struct pv *v);
int imp_tokenize(struct prog *p);
struct tok *imp_cur(struct prog *p);
int imp_is_op(const struct tok *k, const char *op);
int imp_is_kw(const struct tok *k, const char *kw);
int imp_accept_op(struct prog *p, const char *op);
const char *imp_tok_desc(const struct tok *k, char *buf, size_t len);
int imp_expect_op(struct prog *p, const char *op);
int imp_is_keyword(const char *s);
int imp_gv_new(struct prog *p, int node, int root);
const char *imp_fresh_name(struct prog *p, const char *base);
const char *imp_gv_label(const struct prog *p, int g);
int imp_use_tensor(struct prog *p, const struct pv *v, const char *what);
void imp_nb_free(struct nodebuild *b);
int imp_nb_attr(struct prog *p, struct nodebuild *b, const char *name, json_t *v);
int imp_emit_node(struct prog *p, struct nodebuild *b, int view, int tuple);
struct pv *imp_tensor_pv(struct prog *p, int g, int tuple);
void imp_make_inplace(struct prog *p, struct pv *self, int g);
json_t *imp_const_json(struct prog *p, const struct pv *v, const char *what, int depth);
/* Casting methods (name -> dtype), and the torch.X names that are dtypes
 * (a NULL dtype: one passfs does not support). */
struct name_dtype {
	const char *name, *dtype;
};
extern const struct name_dtype imp_cast_methods[];
extern const struct name_dtype imp_torch_dtypes[];
/* Python's operators on tensors: symbol -> graph op. */
struct sym_op {
	const char *sym;
	enum graph_op op;
};
extern const struct sym_op imp_operators[];
struct pv *imp_getitem(struct prog *p, struct pv *base, struct pv **items, int n, int tuple_syntax);
struct pv *imp_ev_exprlist(struct prog *p, const char *close, int is_list);
struct pv *imp_call_value(struct prog *p, struct pv *fn, struct callargs *a);
int imp_is_class_header(struct prog *p, const struct lline *L);
int imp_parse_model(struct prog *p);
int imp_parse_meta(struct prog *p);
int *imp_map_args(struct prog *m, struct prog *w);

#endif
