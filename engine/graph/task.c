/* task.c - scanning and loading a tasks directory. */
#include "task.h"
#include "file.h"
#include "strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void task_ids_free(char **ids, int n)
{
	for (int i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

int task_scan(const char *dir, char ***ids, int *n, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	*ids = NULL;
	*n = 0;
	if (d == NULL) {
		snprintf(err, errlen, "%s: cannot open tasks directory: %s", dir, strerror(errno));
		return -1;
	}
	int cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s/graph.json", dir, e->d_name);
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			char **p = realloc(*ids, sizeof(char *) * (size_t)cap);
			if (p == NULL)
				goto oom;
			*ids = p;
		}
		if (((*ids)[*n] = strdup(e->d_name)) == NULL)
			goto oom;
		(*n)++;
	}
	closedir(d);
	if (*n > 1)
		qsort(*ids, (size_t)*n, sizeof(char *), base_strptr_cmp);
	return 0;
oom:
	closedir(d);
	task_ids_free(*ids, *n);
	*ids = NULL;
	*n = 0;
	snprintf(err, errlen, "%s: out of memory", dir);
	return -1;
}

/* 0 when the loaded task's "id" is its directory's name, else -1 with *out
 * freed and NULL. */
static int check_id(const char *path, const char *id, struct graph_task **out, char *err, size_t errlen)
{
	if (strcmp((*out)->id, id) == 0)
		return 0;
	snprintf(err, errlen, "%s: id '%s' does not match its directory name '%s'", path, (*out)->id, id);
	graph_task_free(*out);
	*out = NULL;
	return -1;
}

int task_load(const char *dir, const char *id, struct graph_task **out, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s/graph.json", dir, id);
	if (graph_load_file(path, out, err, errlen))
		return -1;
	return check_id(path, id, out, err, errlen);
}

int task_load_text(const char *dir, const char *id, struct graph_task **out, char **text, size_t *text_len,
		   char **path_out, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s/graph.json", dir, id);
	*out = NULL;
	*text = NULL;
	*path_out = NULL;
	int e = 0;
	size_t len = 0;
	char *buf = base_read_file(path, PF_CAP_GRAPH_JSON, &len, &e);
	if (buf == NULL) {
		if (e == EFBIG)
			snprintf(err, errlen, "%s: cannot read: file is larger than %zu MiB", path, PF_CAP_GRAPH_JSON >> 20);
		else
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(e));
		return -1;
	}
	if (graph_load_buffer(path, buf, len, out, err, errlen) || check_id(path, id, out, err, errlen)) {
		free(buf);
		return -1;
	}
	if ((*path_out = strdup(path)) == NULL) {
		snprintf(err, errlen, "out of memory");
		graph_task_free(*out);
		*out = NULL;
		free(buf);
		return -1;
	}
	*text = buf;
	*text_len = len;
	return 0;
}
