/* cmd_tasks.c - `passfs tasks`: list, validate and show tasks. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "graph.h"
#include "task.h"
#include "tree.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: passfs tasks [--tasks DIR] [--show ID [--json]] [--files]\n\n"
		   "Without --show: validates every task under DIR and lists id, variant count and\n"
		   "op sequence; a task that does not validate is reported on stderr (exit 1).\n"
		   "--show ID prints each variant of task ID one node per line with its inferred\n"
		   "shape and dtype; with --json it prints the inputs and outputs of each variant\n"
		   "as JSON: {\"id\", \"variants\": [{\"name\", \"inputs\", \"outputs\"}]}.\n"
		   "--files prints the names of the files of a task directory (the mount's and\n"
		   "the watcher's), one a line, in listing order.\n\n"
		   "  --tasks DIR   tasks directory (default: $PASSFS_TASKS, else the bundled tasks)\n");
}

static json_t *values_json(const struct graph_variant *v, const int *idx, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++) {
		const struct graph_value *x = &v->values[idx ? idx[i] : i];
		json_t *shape = json_array();
		for (int k = 0; k < x->shape.ndim; k++)
			json_array_append_new(shape, json_integer(x->shape.d[k]));
		json_array_append_new(a, json_pack("{s:s, s:o, s:s}", "name", x->name, "shape", shape,
						   "dtype", graph_dtype_name(x->dtype)));
	}
	return a;
}

static int show(const char *dir, const char *id, int as_json)
{
	char err[GRAPH_ERR_LEN];
	struct graph_task *t;
	if (task_load(dir, id, &t, err, sizeof(err))) {
		fprintf(stderr, "passfs tasks: %s\n", err);
		return 1;
	}
	if (as_json) {
		json_t *vars = json_array();
		for (int i = 0; i < t->n_variants; i++) {
			const struct graph_variant *v = &t->variants[i];
			json_array_append_new(vars, json_pack("{s:s, s:o, s:o}", "name", v->name, "inputs",
							      values_json(v, NULL, v->n_inputs), "outputs",
							      values_json(v, v->outputs, v->n_outputs)));
		}
		json_t *root = json_pack("{s:s, s:o}", "id", t->id, "variants", vars);
		json_dumpf(root, stdout, JSON_INDENT(1));
		putchar('\n');
		json_decref(root);
	} else {
		char *buf = NULL;
		size_t len = 0;
		printf("%s: %s\n", t->id, t->summary);
		if (t->source)
			printf("source: %s\n", t->source);
		for (int i = 0; i < t->n_variants; i++) {
			putchar('\n');
			if (buf)
				buf[0] = 0;
			if (graph_render_variant(&t->variants[i], &buf, &len, "")) {
				fprintf(stderr, "passfs tasks: out of memory\n");
				free(buf);
				graph_task_free(t);
				return 1;
			}
			fputs(buf, stdout);
		}
		free(buf);
	}
	graph_task_free(t);
	return 0;
}

static int list(const char *dir)
{
	char err[GRAPH_ERR_LEN];
	char **ids;
	int n, bad = 0;
	if (task_scan(dir, &ids, &n, err, sizeof(err))) {
		fprintf(stderr, "passfs tasks: %s\n", err);
		return 1;
	}
	if (n == 0) {
		fprintf(stderr, "passfs tasks: %s: no tasks (a task is a subdirectory with a graph.json)\n", dir);
		task_ids_free(ids, n);
		return 1;
	}
	printf("%-36s %8s  %s\n", "ID", "VARIANTS", "OPS");
	for (int i = 0; i < n; i++) {
		struct graph_task *t;
		if (task_load(dir, ids[i], &t, err, sizeof(err))) {
			fprintf(stderr, "passfs tasks: %s\n", err);
			bad++;
			continue;
		}
		char *ops = graph_op_sequence(t);
		printf("%-36s %8d  %s\n", t->id, t->n_variants, ops ? ops : "?");
		free(ops);
		graph_task_free(t);
	}
	printf("%d tasks%s", n - bad, bad ? "" : "\n");
	if (bad)
		printf(", %d invalid (see stderr)\n", bad);
	task_ids_free(ids, n);
	return bad ? 1 : 0;
}

int cmd_tasks(int argc, char **argv)
{
	static const struct option opts[] = {
		{"tasks", required_argument, NULL, 't'}, {"show", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},         {"help", no_argument, NULL, 'h'},
		{"files", no_argument, NULL, 'f'},        {NULL, 0, NULL, 0}};
	const char *dir = NULL, *id = NULL;
	int as_json = 0, files = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "t:s:jh", opts, NULL)) != -1) {
		switch (c) {
		case 't': dir = optarg; break;
		case 's': id = optarg; break;
		case 'j': as_json = 1; break;
		case 'f': files = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "passfs tasks: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (as_json && id == NULL) {
		fprintf(stderr, "passfs tasks: --json goes with --show ID\n");
		return 2;
	}
	if (files) {
		/* the tree's own table (fs/tree.c): what tests compare listings with */
		for (int r = 0; r < TREE_NTASK; r++)
			printf("%s\n", tree_task_rows[r].name);
		return 0;
	}
	if (dir == NULL)
		dir = cmd_default_tasks_dir();
	return id ? show(dir, id, as_json) : list(dir);
}
