/*
 * scene_fields: an object's members sorted by name, and "did you mean".
 *
 * Every object of a scene has a fixed list of fields (an X-macro list:
 * ROOT_FIELDS, TOKEN_FIELDS, and those of "generate" in
 * scene_generated.c). A name starting with "x-" is a note; any other
 * name must be known and appear once, and a stranger close to a known
 * name gets that name suggested.
 */
#include "scene_impl.h"

#include <limits.h>
#include <string.h>

#include "jsonloc.h"

const char *const scene_root_names[R_COUNT] = {
#define X(id, name) [R_##id] = name,
        ROOT_FIELDS(X)
#undef X
};

const char *const scene_token_names[T_COUNT] = {
#define X(id, name) [T_##id] = name,
        TOKEN_FIELDS(X)
#undef X
};

static char lower(char c)
{
	return (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

/* Optimal string alignment distance of two short strings, ignoring case,
 * for "did you mean" (a swapped pair of letters counts as one edit). */
static int edit_distance(const char *a, const char *b)
{
	enum { N = 24 };
	int d[N + 1][N + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > N || lb > N)
		return N;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			char x = lower(a[i - 1]), y = lower(b[j - 1]);
			int best = d[i - 1][j - 1] + (x != y);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && x == lower(b[j - 2]) && lower(a[i - 2]) == y &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/* The known name KEY most likely stands for, or NULL. */
static const char *suggest(const char *key, const char *const *names, int count)
{
	for (int i = 0; i < count; i++) {
		size_t len = strlen(names[i]);
		int limit = len >= 6 ? 2 : len >= 3 ? 1 : 0;
		if (edit_distance(key, names[i]) <= limit)
			return names[i];
	}
	return NULL;
}

/*
 * Sort the members of OBJ into FIELDS by NAMES. A name starting with "x-"
 * is a note and skipped whatever it holds; any other name must be known
 * and appear once. Duplicates and strangers are errors at their key.
 */
int scene_scan_fields(const struct loader *ld, const cJSON *obj, const struct where *w,
                      const char *const *names, int count, struct field *fields)
{
	int index = 0;

	for (int i = 0; i < count; i++)
		fields[i] = (struct field){NULL, -1};
	for (const cJSON *m = obj->child; m != NULL; m = m->next, index++) {
		const char *key = m->string ? m->string : "";
		if (strncmp(key, "x-", 2) == 0)
			continue;
		int i = 0;
		while (i < count && strcmp(key, names[i]) != 0)
			i++;
		if (i < count && fields[i].node == NULL) {
			fields[i] = (struct field){m, index};
			continue;
		}
		char q[128];
		jsonloc_quote(q, sizeof q, key, strlen(key), 40);
		if (i == count) {
			const char *near = suggest(key, names, count);
			if (near != NULL)
				return scene_fail_field(
				        ld, w, index,
				        "unknown field %s (did you mean \"%s\"? only names "
				        "starting with \"x-\" are free for notes)",
				        q, near);
			return scene_fail_field(
			        ld, w, index,
			        "unknown field %s (only names starting with \"x-\" are "
			        "free for notes)",
			        q);
		}
		return scene_fail_field(ld, w, index, "duplicate field %s", q);
	}
	return 0;
}

int scene_count_children(const cJSON *node)
{
	int n = 0;

	for (const cJSON *c = node->child; c != NULL && n < INT_MAX; c = c->next)
		n++;
	return n;
}
