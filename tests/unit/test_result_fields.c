/* test_result_fields.c - result.json's field table (engine/eval/result_fields.c)
 * and its manual (docs/result-format.md) hold each other both ways: every
 * row is documented where its scope says (the fields table's first column,
 * "variant" rows for a variant's, the pinned `variants` row for its five
 * pinned ones, the service's section for the service's), pinned where the
 * manual pins it, and every name the table's first column gives has a row.
 * Then the check itself: a document with a field the table lacks is found,
 * at the top and in a variant.  Runs from the repository root. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "result_fields.h"

static char *read_doc(const char *path)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	size_t cap = 1 << 20;
	char *s = calloc(1, cap + 1);
	if (s)
		fread(s, 1, cap, f);
	fclose(f);
	return s;
}

/* The manual's fields table: its rows' cells (first, second, third), up to
 * the verdicts' section. */
struct row {
	char first[1024], pinned[32], meaning[8192];
};

static int table_rows(const char *doc, struct row *rows, int max)
{
	const char *end = strstr(doc, "## Variant verdicts");
	const char *p = strstr(doc, "| field |");
	int n = 0;
	while (p && (!end || p < end) && n < max) {
		const char *nl = strchr(p, '\n');
		if (nl == NULL)
			break;
		if (strncmp(p, "| `", 3) == 0 || strncmp(p, "| variant ", 10) == 0) {
			const char *c1 = p + 1, *c2 = strchr(c1, '|'), *c3 = c2 ? strchr(c2 + 1, '|') : NULL;
			const char *c4 = c3 ? strchr(c3 + 1, '|') : NULL;
			if (c4 && c4 < nl + 1) {
				snprintf(rows[n].first, sizeof(rows[n].first), "%.*s", (int)(c2 - c1), c1);
				snprintf(rows[n].pinned, sizeof(rows[n].pinned), "%.*s", (int)(c3 - c2 - 1), c2 + 1);
				snprintf(rows[n].meaning, sizeof(rows[n].meaning), "%.*s", (int)(c4 - c3 - 1), c3 + 1);
				n++;
			}
		}
		p = nl + 1;
	}
	return n;
}

static int is_variant_row(const struct row *r)
{
	return strncmp(r->first, " variant ", 9) == 0;
}

static int names_in(const char *cell, const char *name)
{
	char q[160];
	snprintf(q, sizeof(q), "`%s`", name);
	return strstr(cell, q) != NULL;
}

static void test_manual(void)
{
	char *doc = read_doc("docs/result-format.md");
	CHECK(doc != NULL);
	if (doc == NULL)
		return;
	static struct row rows[128];
	int n = table_rows(doc, rows, 128);
	CHECK(n >= 30);
	const struct row *variants_row = NULL;
	for (int i = 0; i < n; i++)
		if (strcmp(rows[i].first, " `variants` ") == 0)
			variants_row = &rows[i];
	CHECK(variants_row != NULL && strstr(variants_row->pinned, "pinned") != NULL);
	const char *service = strstr(doc, "## Fields the mount and the watcher add");
	CHECK(service != NULL);

	/* the table's rows in the manual */
	for (int f = 0; f < result_n_fields; f++) {
		const struct result_field *rf = &result_fields[f];
		const char *dn = rf->doc_name ? rf->doc_name : rf->name;
		int found = 0, pinned_ok = 1;
		if (rf->scope == RESULT_SERVICE) {
			found = service && names_in(service, dn);
		} else if (rf->scope == RESULT_VARIANT && rf->pinned) {
			found = variants_row && names_in(variants_row->meaning, dn);
		} else {
			for (int i = 0; i < n; i++)
				if (is_variant_row(&rows[i]) == (rf->scope == RESULT_VARIANT) && names_in(rows[i].first, dn)) {
					found = 1;
					pinned_ok = (strstr(rows[i].pinned, "pinned") != NULL) == (rf->pinned != 0);
				}
		}
		char msg[200];
		snprintf(msg, sizeof(msg), "%s%s", rf->scope == RESULT_VARIANT ? "variant " : "", rf->name);
		CHECK_MSG(found, msg);
		CHECK_MSG(pinned_ok, msg);
	}
	/* the manual's names in the table */
	for (int i = 0; i < n; i++) {
		enum result_scope sc = is_variant_row(&rows[i]) ? RESULT_VARIANT : RESULT_TOP;
		for (const char *q = strchr(rows[i].first, '`'); q; q = strchr(q, '`')) {
			const char *e = strchr(q + 1, '`');
			if (e == NULL)
				break;
			char name[128];
			snprintf(name, sizeof(name), "%.*s", (int)(e - q - 1), q + 1);
			int have = result_field_find(name, sc) != NULL;
			for (int f = 0; !have && f < result_n_fields; f++)
				have = result_fields[f].scope == sc && result_fields[f].doc_name &&
				       strcmp(result_fields[f].doc_name, name) == 0;
			CHECK_MSG(have, name);
			q = e + 1;
		}
	}
	free(doc);
}

static void test_check(void)
{
	char what[256] = "";
	json_t *doc = json_pack("{s:s, s:s, s:f, s:[{s:s, s:s, s:f}], s:s}", "task", "t", "verdict", "ok", "score", 1.5,
				"variants", "name", "v", "verdict", "ok", "speedup", 1.5, "time", "2026-01-01T00:00:00Z");
	CHECK(doc != NULL);
	CHECK(result_fields_check(doc, what, sizeof(what)) == 0);
	json_object_set_new(json_array_get(json_object_get(doc, "variants"), 0), "speedup_guess", json_real(2));
	CHECK(result_fields_check(doc, what, sizeof(what)) == -1);
	CHECK_MSG(strcmp(what, "variant field 'speedup_guess'") == 0, what);
	json_object_del(json_array_get(json_object_get(doc, "variants"), 0), "speedup_guess");
	json_object_set_new(doc, "bonus", json_true());
	CHECK(result_fields_check(doc, what, sizeof(what)) == -1);
	CHECK_MSG(strcmp(what, "field 'bonus'") == 0, what);
	/* a variant's field is not a top-level one, nor the other way */
	CHECK(result_field_find("speedup", RESULT_TOP) == NULL);
	CHECK(result_field_find("backend", RESULT_VARIANT) == NULL);
	CHECK(result_field_find("stale", RESULT_TOP) != NULL);
	json_decref(doc);
	/* one row per name and scope */
	for (int a = 0; a < result_n_fields; a++)
		for (int b = 0; b < a; b++)
			CHECK_MSG(!(strcmp(result_fields[a].name, result_fields[b].name) == 0 &&
				    (result_fields[a].scope == RESULT_VARIANT) == (result_fields[b].scope == RESULT_VARIANT)),
				  result_fields[a].name);
}

int main(void)
{
	test_manual();
	test_check();
	printf("test_result_fields: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
