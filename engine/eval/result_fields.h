/* result_fields.h - every field a result.json may carry, in one table
 * (result_fields.c): the top level's and each variant's, whether the
 * product contract pins it, and the fields the mount's service adds.
 * docs/result-format.md documents each one; tests/unit/test_result_fields.c
 * holds the table and the manual to each other both ways, and with
 * PASSFS_STRICT_FIELDS set (CMake sets it for every test) a result holding
 * a field the table lacks stops the process that made it, so a field added
 * to the code without its row (and its documentation) fails the suite. */
#ifndef PASSFS_RESULT_FIELDS_H
#define PASSFS_RESULT_FIELDS_H

#include <jansson.h>
#include <stddef.h>

enum result_scope {
	RESULT_TOP,       /* the document's own fields (docs/result-format.md's table) */
	RESULT_VARIANT,   /* a member of "variants" ("variant" rows of the table) */
	RESULT_SERVICE,   /* added by the mount's service ("Fields the mount and the watcher add") */
};

struct result_field {
	const char *name;
	enum result_scope scope;
	int pinned;             /* part of the product contract */
	const char *doc_name;   /* how the manual names it when not by name (a pattern: "*_iqr_ratio"); NULL: name */
};

extern const struct result_field result_fields[];
extern const int result_n_fields;

/* The row of name in scope (RESULT_TOP also finds RESULT_SERVICE rows), or NULL. */
const struct result_field *result_field_find(const char *name, enum result_scope scope);

/* 0 when every field of doc (the top level and each variant) has a row;
 * else -1 with the first that does not in what ("variant field 'x'"). */
int result_fields_check(const json_t *doc, char *what, size_t len);

/* result_fields_check where PASSFS_STRICT_FIELDS is set: a field without
 * a row is reported on stderr, naming where (`who`), and the process aborts. */
void result_fields_enforce(const json_t *doc, const char *who);

#endif
