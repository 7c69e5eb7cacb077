/*
 * scene_error: the one line a refused scene comes back as.
 *
 * "FILE:LINE:COLUMN: PATH: message": a struct where names the path and
 * the member indices that lead jsonloc to the value in the raw text (cJSON
 * keeps no positions), and every check ends in one of the scene_fail_*
 * below. Numbers in a message are shown as written in the file.
 */
#include "scene_impl.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jsonloc.h"

struct where scene_where_root(void)
{
	struct where w = {.depth = 0, .path = "$"};
	return w;
}

/* Replace each control character in S (C0, DEL, and C1 as UTF-8's two
 * bytes) by '?': keys and values come from untrusted files, and an error
 * line must reach the terminal as one line of plain text. */
static void scrub_controls(char *s)
{
	for (unsigned char *c = (unsigned char *)s; *c; c++) {
		if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f)
			*c++ = '?', *c = '?';
		else if (*c < 0x20 || *c == 0x7f)
			*c = '?';
	}
}

struct where scene_where_field(const struct where *obj, int index, const char *name)
{
	struct where w = *obj;

	w.step[w.depth++] = index;
	if (snprintf(w.path, sizeof w.path, "%s%s%s", obj->depth ? obj->path : "",
	             obj->depth ? "." : "", name) >= (int)sizeof w.path)
		w.path[sizeof w.path - 1] = '\0';
	scrub_controls(w.path);
	return w;
}

struct where scene_where_elem(const struct where *arr, int index)
{
	struct where w = *arr;

	w.step[w.depth++] = index;
	if (snprintf(w.path, sizeof w.path, "%s[%d]", arr->path, index) >= (int)sizeof w.path)
		w.path[sizeof w.path - 1] = '\0';
	return w;
}

/* printf a double with '.' whatever LC_NUMERIC says: the program runs
 * under the user's locale, and a message reads "0,98" there otherwise. */
void scene_format_double(char *buf, size_t size, const char *fmt, double x)
{
	const char *point = localeconv()->decimal_point;
	char tmp[64];

	snprintf(tmp, sizeof tmp, fmt, x);
	char *at = point && strcmp(point, ".") != 0 && *point ? strstr(tmp, point) : NULL;
	if (at != NULL)
		snprintf(buf, size, "%.*s.%s", (int)(at - tmp), tmp, at + strlen(point));
	else
		snprintf(buf, size, "%s", tmp);
}

/* Describe a JSON value for "got ...": numbers as written in the file
 * (1e999, not inf), strings with a short quote, other types by name. */
static void describe(const struct loader *ld, const cJSON *node, const size_t *offset, char *buf,
                     size_t size)
{
	if (cJSON_IsNumber(node)) {
		size_t n = offset ? jsonloc_number_len(ld->text, ld->len, *offset) : 0;
		if (n == 0)
			scene_format_double(buf, size, "%.17g", node->valuedouble);
		else
			snprintf(buf, size, "%.*s%s", (int)(n > 24 ? 24 : n), ld->text + *offset,
			         n > 24 ? "..." : "");
	} else if (cJSON_IsString(node)) {
		char q[128];
		jsonloc_quote(q, sizeof q, node->valuestring, strlen(node->valuestring), 24);
		snprintf(buf, size, "a string (%s)", q);
	} else if (cJSON_IsArray(node)) {
		snprintf(buf, size, "an array");
	} else if (cJSON_IsObject(node)) {
		snprintf(buf, size, "an object");
	} else if (cJSON_IsTrue(node)) {
		snprintf(buf, size, "true");
	} else if (cJSON_IsFalse(node)) {
		snprintf(buf, size, "false");
	} else {
		snprintf(buf, size, "null");
	}
}

/* Write "FILE:LINE:COLUMN: PATH: " for byte OFFSET; returns its length. */
size_t scene_put_prefix(const struct loader *ld, size_t offset, const char *path)
{
	long line, col;

	jsonloc_linecol(ld->text, ld->len, offset, &line, &col);
	int n = snprintf(ld->err, SCENE_ERROR_MAX, "%s:%ld:%ld: %s: ", ld->name, line, col, path);
	if (n < 0)
		return 0;
	return (size_t)n < SCENE_ERROR_MAX ? (size_t)n : SCENE_ERROR_MAX - 1;
}

/*
 * The one error exit of the checks. PATH names what is wrong; AT and the
 * optional member INDEX below it say where to point: at AT's value, or at
 * the key of AT's member INDEX (a field that should not be there). With
 * GOT, ", got <GOT described>" ends the message.
 */
static int vfail(const struct loader *ld, const char *path, const struct where *at, int index,
                 const cJSON *got, const char *fmt, va_list ap)
{
	int steps[WHERE_MAX + 1];
	int nsteps = at->depth;
	size_t key = 0, value = 0;
	bool found;

	memcpy(steps, at->step, sizeof at->step);
	if (index >= 0)
		steps[nsteps++] = index;
	found = jsonloc_find(ld->text, ld->len, steps, nsteps, &key, &value) == 0;

	size_t used = scene_put_prefix(ld, index >= 0 ? key : value, path);
	int n = vsnprintf(ld->err + used, SCENE_ERROR_MAX - used, fmt, ap);
	if (n > 0)
		used += (size_t)n < SCENE_ERROR_MAX - used ? (size_t)n : SCENE_ERROR_MAX - used - 1;
	if (got != NULL) {
		char desc[160];
		describe(ld, got, found ? &value : NULL, desc, sizeof desc);
		snprintf(ld->err + used, SCENE_ERROR_MAX - used, ", got %s", desc);
	}
	scrub_controls(ld->err);
	return -1;
}

/* Something is wrong with the value at W. */
int scene_fail_value(const struct loader *ld, const struct where *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = vfail(ld, w->path, w, -1, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

/* The value at W is not what was expected; the message ends in ", got ...". */
int scene_fail_got(const struct loader *ld, const struct where *w, const cJSON *got,
                   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = vfail(ld, w->path, w, -1, got, fmt, ap);
	va_end(ap);
	return rc;
}

/* The object at OBJ should not have its member INDEX: point at that key. */
int scene_fail_field(const struct loader *ld, const struct where *obj, int index, const char *fmt,
                     ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = vfail(ld, obj->path, obj, index, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

/* An error with no position: the file as a whole. */
int scene_fail_file(char err[SCENE_ERROR_MAX], const char *name, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, SCENE_ERROR_MAX, "%s: ", name);

	if (n < 0 || n >= SCENE_ERROR_MAX)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, SCENE_ERROR_MAX - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

int scene_fail_nomem(const struct loader *ld)
{
	return scene_fail_file(ld->err, ld->name, "cannot load: out of memory");
}

int scene_fail_too_large(char *err, size_t err_size, double *needed, double bytes, const char *what)
{
	if (needed != NULL)
		*needed = bytes;
	snprintf(err, err_size, "%s", what);
	return -1;
}
