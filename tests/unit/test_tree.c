/* test_tree.c - fs/tree.c: the table of the task tree's files.
 *
 * Walks tree_task_rows[], tree_root_rows[] and tree_doc_rows[]: names unique and plain, every
 * row has a producer and a README line, kinds, modes and watch modes agree,
 * one writable pass.c, the rows fit the mount's inode block; then opens a
 * service on the test task and runs every producer once, and checks that the
 * root README's file table and read-only list name every row. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"
#include "tree.h"

#include "check.h"

#define TASKS "tests/passes/tasks"

static void check_rows(const struct tree_row *rows, int n, int is_task)
{
	int passes = 0;
	for (int r = 0; r < n; r++) {
		const struct tree_row *row = &rows[r];
		CHECK_MSG(row->name != NULL && row->name[0] != 0, is_task ? "task row" : "root row");
		if (row->name == NULL)
			continue;
		CHECK_MSG(strchr(row->name, '/') == NULL && strcmp(row->name, ".") != 0 &&
			  strcmp(row->name, "..") != 0, row->name);
		CHECK_MSG(row->text != NULL, row->name);
		CHECK_MSG(row->what != NULL && row->what[0] != 0, row->name);
		for (int q = 0; q < r; q++)
			CHECK_MSG(rows[q].name == NULL || strcmp(rows[q].name, row->name) != 0, row->name);
		if (row->kind == TREE_PASS) {
			passes++;
			CHECK_MSG(row->mode & 0200, row->name);
			CHECK_MSG(row->watch == TREE_WATCH_SEED, row->name);
		} else {
			CHECK_MSG((row->mode & 0222) == 0, row->name);   /* read-only */
			/* fixed text is written once; computed text follows the generation */
			CHECK_MSG(row->watch == (row->kind == TREE_FIXED ? TREE_WATCH_ONCE : TREE_WATCH_REFRESH),
				  row->name);
		}
		CHECK_MSG(!row->waits || row->kind == TREE_COMPUTED, row->name);
	}
	CHECK(passes == (is_task ? 1 : 0));
}

static void test_table(void)
{
	check_rows(tree_task_rows, TREE_NTASK, 1);
	check_rows(tree_root_rows, TREE_NROOT, 0);
	check_rows(tree_doc_rows, TREE_NDOC, 0);
	for (int r = 0; r < TREE_NDOC; r++)
		CHECK_MSG(tree_doc_rows[r].kind == TREE_FIXED, tree_doc_rows[r].name);
	for (int r = 0; r < TREE_NROOT; r++)    /* the docs directory's name is free */
		CHECK_MSG(strcmp(tree_root_rows[r].name, TREE_DOCS_DIR) != 0, tree_root_rows[r].name);
	CHECK(tree_task_rows[TREE_PASS_C].kind == TREE_PASS);
	CHECK(strcmp(tree_task_rows[TREE_PASS_C].name, "pass.c") == 0);
	/* the mount's inode block: the directory plus one per row (also a
	 * _Static_assert in tree.h) */
	CHECK(TREE_NTASK + 1 <= TREE_INO_STRIDE);
	CHECK(2 + TREE_NROOT + TREE_NDOC + 1 <= TREE_INO_TASK0);
	/* watch mode writes status after result.json and es_t */
	int last = -1;
	for (int r = 0; r < TREE_NTASK; r++)
		if (tree_task_rows[r].watch == TREE_WATCH_REFRESH)
			last = r;
	CHECK(last == TREE_STATUS);
}

static void test_producers(void)
{
	char state[] = "/tmp/passfs-test-tree-XXXXXX", err[512];
	CHECK(mkdtemp(state) != NULL);
	struct svc_opts o = {.tasks_dir = TASKS, .state_dir = state};
	struct svc *s = NULL;
	if (svc_open(&o, NULL, NULL, &s, err, sizeof(err)) != 0) {
		fprintf(stderr, "svc_open: %s\n", err);
		n_fail++;
		return;
	}
	for (int mode = README_MOUNT; mode <= README_WATCH; mode++) {
		struct tree_src src = {s, TASKS, (enum readme_mode)mode, 20, 0, NULL};
		for (int r = 0; r < TREE_NTASK; r++) {
			size_t len = 0;
			errno = 0;
			char *t = tree_task_rows[r].text(&src, 0, &len);
			CHECK_MSG(t != NULL, tree_task_rows[r].name);
			/* es_t is empty until the pass is scored */
			CHECK_MSG(t == NULL || len > 0 || r == TREE_ES_T, tree_task_rows[r].name);
			free(t);
		}
		size_t len = 0;
		char *sum = tree_root_rows[TREE_ROOT_SUMMARY].text(&src, -1, &len);
		CHECK(sum != NULL && len > 0);
		free(sum);
		char *readme = tree_root_rows[TREE_ROOT_README].text(&src, -1, &len);
		CHECK(readme != NULL && strlen(readme) == len);
		if (readme == NULL)
			continue;
		/* every file has its line in the manual's file table */
		for (int r = 0; r < TREE_NTASK; r++) {
			char cell[256];
			snprintf(cell, sizeof(cell), "| `<task>/%s` | ", tree_task_rows[r].name);
			CHECK_MSG(strstr(readme, cell) != NULL, cell);
		}
		for (int r = 0; r < TREE_NROOT; r++) {
			char cell[256];
			snprintf(cell, sizeof(cell), "| `%s` | ", tree_root_rows[r].name);
			CHECK_MSG(strstr(readme, cell) != NULL, cell);
		}
		for (int r = 0; r < TREE_NDOC; r++) {
			char cell[256];
			snprintf(cell, sizeof(cell), "| `%s/%s` | ", TREE_DOCS_DIR, tree_doc_rows[r].name);
			CHECK_MSG(strstr(readme, cell) != NULL, cell);
			size_t dl = 0;
			char *doc = tree_doc_rows[r].text(&src, -1, &dl);
			CHECK_MSG(doc != NULL && dl > 0, tree_doc_rows[r].name);
			free(doc);
		}
		if (mode == README_MOUNT)
			CHECK(strstr(readme, "`README.md`, `graph.json`, `result.json`, `es_t`, `check.json`, "
					     "`status`, `summary.json`, `report.html` are\nread-only") != NULL);
		else
			CHECK(strstr(readme, "overwrites `result.json`, `es_t`, `check.json`, `status`, `summary.json` and `report.html`, and\n"
					     "> ignores changes to `README.md` and `graph.json`.") != NULL);
		free(readme);
	}
	svc_close(s);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	test_table();
	test_producers();
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail != 0;
}
