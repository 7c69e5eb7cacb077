/*
 * lessons: reading the lesson path (include/scene/h2o/lessons.h).
 */
#include "h2o/lessons.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

void lessons_free(struct lessons *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->count; i++)
		free(l->file[i]);
	free(l->file);
	free(l->dir);
	free(l);
}

/* A name the list may hold: a file in the folder, printable ASCII. */
static bool good_name(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '/' || (unsigned char)s[i] < ' ' || (unsigned char)s[i] >= 0x7F)
			return false;
	return n > 0;
}

static int fail(char *err, size_t size, const char *path, const char *what)
{
	snprintf(err, size, "%s: %s", path, what);
	return -1;
}

int lessons_load(const char *dir, struct lessons **out, char *err, size_t err_size)
{
	*out = NULL;
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, LESSONS_FILE);
	FILE *fp = fopen(path, "r");
	if (!fp) {
		char what[160];
		snprintf(what, sizeof what, "cannot open: %s", strerror(errno));
		return fail(err, err_size, path, what);
	}
	char text[LESSONS_MAX_BYTES + 1];
	const size_t len = fread(text, 1, sizeof text, fp);
	const bool bad = ferror(fp);
	fclose(fp);
	if (bad)
		return fail(err, err_size, path, "cannot read");
	if (len > LESSONS_MAX_BYTES)
		return fail(err, err_size, path, "longer than 4096 bytes");
	text[len] = '\0';

	struct lessons *l = calloc(1, sizeof *l);
	if (!l || !(l->dir = dup_n(dir, strlen(dir))) ||
	    !(l->file = calloc(LESSONS_MAX, sizeof *l->file))) {
		lessons_free(l);
		return fail(err, err_size, path, "out of memory");
	}
	for (const char *s = text; *s;) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		const char *next = e ? e + 1 : s + n;
		while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
			n--;
		while (n > 0 && (*s == ' ' || *s == '\t')) {
			s++;
			n--;
		}
		if (n > 0 && *s != '#') {
			if (!good_name(s, n) || l->count == LESSONS_MAX) {
				lessons_free(l);
				return fail(err, err_size, path,
				            l->count == LESSONS_MAX
				                    ? "more than 100 lessons"
				                    : "a line is not a file name in this folder");
			}
			if (!(l->file[l->count] = dup_n(s, n))) {
				lessons_free(l);
				return fail(err, err_size, path, "out of memory");
			}
			l->count++;
		}
		s = next;
	}
	if (l->count == 0) {
		lessons_free(l);
		return fail(err, err_size, path, "lists no scene");
	}
	*out = l;
	return 0;
}

struct lessons *lessons_of_scene(const char *scene_path, int *index)
{
	const char *slash = strrchr(scene_path, '/');
	char dir[4096];
	if (slash)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - scene_path), scene_path);
	else
		snprintf(dir, sizeof dir, ".");
	const char *base = slash ? slash + 1 : scene_path;
	struct lessons *l;
	char err[256];
	if (lessons_load(slash == scene_path ? "/" : dir, &l, err, sizeof err) < 0)
		return NULL;
	for (int i = 0; i < l->count; i++)
		if (strcmp(l->file[i], base) == 0) {
			*index = i;
			return l;
		}
	lessons_free(l);
	return NULL;
}

const char *lessons_path(const struct lessons *l, int i, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", l->dir, l->file[i]);
	return buf;
}
