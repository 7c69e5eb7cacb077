/*
 * scene: reading, checking and converting a scene file (spec §3).
 *
 * The file is untrusted, so loading goes in three passes and allocates for
 * the scene only in the last: cJSON parses the text; the checks walk the
 * tree and stop at the first thing wrong, in a fixed order (the root's
 * fields, then the budgets and sizes, then each token); only a scene that
 * passed every check is copied into the arrays, whose sizes the file itself
 * has then proven. Nothing here prints or exits: an error becomes one line
 * in the caller's buffer, located in the raw text by jsonloc because cJSON
 * keeps no positions. This is the only file that includes cJSON.
 */
#include "h2o/scene.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "jsonloc.h"

_Static_assert(JSONLOC_MAX_DEPTH == CJSON_NESTING_LIMIT,
               "jsonloc must stop nesting exactly where cJSON does");

#define ATTN_SUM_TOLERANCE 1e-6

/* Where a checked value sits: the member indices that lead jsonloc to it,
 * and the path the message names. No checked value is more than four steps
 * from the root (tokens, a token, a vector, an element). */
#define WHERE_MAX 5
struct where {
	int depth;
	int step[WHERE_MAX];
	char path[96];
};

struct loader {
	const char *name; /* the file name for messages */
	const char *text; /* the raw text, to locate errors in */
	size_t len;
	char *err;
};

/* ---- error lines ------------------------------------------------------ */

static struct where where_root(void)
{
	struct where w = {.depth = 0, .path = "$"};
	return w;
}

static struct where where_field(const struct where *obj, int index, const char *name)
{
	struct where w = *obj;

	w.step[w.depth++] = index;
	if (snprintf(w.path, sizeof w.path, "%s%s%s", obj->depth ? obj->path : "",
	             obj->depth ? "." : "", name) >= (int)sizeof w.path)
		w.path[sizeof w.path - 1] = '\0';
	return w;
}

static struct where where_elem(const struct where *arr, int index)
{
	struct where w = *arr;

	w.step[w.depth++] = index;
	if (snprintf(w.path, sizeof w.path, "%s[%d]", arr->path, index) >= (int)sizeof w.path)
		w.path[sizeof w.path - 1] = '\0';
	return w;
}

/* printf a double with '.' whatever LC_NUMERIC says: the program runs
 * under the user's locale, and a message reads "0,98" there otherwise. */
static void format_double(char *buf, size_t size, const char *fmt, double x)
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
			format_double(buf, size, "%.17g", node->valuedouble);
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
static size_t put_prefix(const struct loader *ld, size_t offset, const char *path)
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

	size_t used = put_prefix(ld, index >= 0 ? key : value, path);
	int n = vsnprintf(ld->err + used, SCENE_ERROR_MAX - used, fmt, ap);
	if (n > 0)
		used += (size_t)n < SCENE_ERROR_MAX - used ? (size_t)n : SCENE_ERROR_MAX - used - 1;
	if (got != NULL) {
		char desc[160];
		describe(ld, got, found ? &value : NULL, desc, sizeof desc);
		snprintf(ld->err + used, SCENE_ERROR_MAX - used, ", got %s", desc);
	}
	return -1;
}

/* Something is wrong with the value at W. */
static int fail_value(const struct loader *ld, const struct where *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = vfail(ld, w->path, w, -1, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

/* The value at W is not what was expected; the message ends in ", got ...". */
static int fail_got(const struct loader *ld, const struct where *w, const cJSON *got,
                    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = vfail(ld, w->path, w, -1, got, fmt, ap);
	va_end(ap);
	return rc;
}

/* The object at OBJ should not have its member INDEX: point at that key. */
static int fail_field(const struct loader *ld, const struct where *obj, int index, const char *fmt,
                      ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = vfail(ld, obj->path, obj, index, NULL, fmt, ap);
	va_end(ap);
	return rc;
}

/* An error with no position: the file as a whole. */
static int fail_file(char err[SCENE_ERROR_MAX], const char *name, const char *fmt, ...)
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

static int fail_nomem(const struct loader *ld)
{
	return fail_file(ld->err, ld->name, "cannot load: out of memory");
}

/* ---- fields ----------------------------------------------------------- */

struct field {
	const cJSON *node; /* NULL when absent */
	int index;         /* member index, to point at it */
};

enum root_field { R_TITLE, R_DESCRIPTION, R_HEAVY, R_RECENT, R_DIM, R_SCALE, R_TOKENS, R_COUNT };
static const char *const root_names[R_COUNT] = {
        "title", "description", "heavy", "recent", "dim", "scale", "tokens",
};

enum token_field { T_TEXT, T_Q, T_K, T_V, T_ATTN, T_COUNT };
static const char *const token_names[T_COUNT] = {"text", "q", "k", "v", "attn"};

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
static int scan_fields(const struct loader *ld, const cJSON *obj, const struct where *w,
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
				return fail_field(
				        ld, w, index,
				        "unknown field %s (did you mean \"%s\"? only names "
				        "starting with \"x-\" are free for notes)",
				        q, near);
			return fail_field(ld, w, index,
			                  "unknown field %s (only names starting with \"x-\" are "
			                  "free for notes)",
			                  q);
		}
		return fail_field(ld, w, index, "duplicate field %s", q);
	}
	return 0;
}

static int count_children(const cJSON *node)
{
	int n = 0;

	for (const cJSON *c = node->child; c != NULL && n < INT_MAX; c = c->next)
		n++;
	return n;
}

/* ---- checks ----------------------------------------------------------- */

/* What the checks learnt, for the copy that follows them. */
struct plan {
	struct field root[R_COUNT];
	struct where w_root, w_tokens;
	int heavy, recent, dim, n;
	enum scene_mode mode;
	bool has_v;
	double scale;
};

static int check_int(const struct loader *ld, const cJSON *node, const struct where *w, int min,
                     int max, int *out)
{
	double v = node->valuedouble;

	/* Compare as doubles: 1e20 must not be squeezed into an int first. */
	if (!cJSON_IsNumber(node) || !(v == floor(v)) || v < min)
		return fail_got(ld, w, node, "expected an integer >= %d", min);
	if (v > max)
		return fail_got(ld, w, node, "must be at most %d", max);
	*out = (int)v;
	return 0;
}

static int check_number(const struct loader *ld, const cJSON *node, const struct where *w)
{
	if (!cJSON_IsNumber(node))
		return fail_got(ld, w, node, "expected a number");
	/* cJSON reads 1e999 as inf; a scene's numbers must be finite. */
	if (!isfinite(node->valuedouble))
		return fail_got(ld, w, node, "expected a finite number");
	return 0;
}

static int check_vector(const struct loader *ld, const cJSON *node, const struct where *w, int dim)
{
	if (!cJSON_IsArray(node))
		return fail_got(ld, w, node, "expected an array of %d number%s", dim,
		                dim == 1 ? "" : "s");
	int n = count_children(node);
	if (n != dim)
		return fail_value(ld, w, "expected %d number%s, got %d", dim, dim == 1 ? "" : "s",
		                  n);
	int j = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, j++) {
		struct where we = where_elem(w, j);
		if (check_number(ld, e, &we) != 0)
			return -1;
	}
	return 0;
}

/* Token I's attention row: i + 1 positive weights summing to 1. */
static int check_attn(const struct loader *ld, const cJSON *node, const struct where *w, int i)
{
	if (!cJSON_IsArray(node))
		return fail_got(ld, w, node, "expected an array of %d weight%s", i + 1,
		                i == 0 ? "" : "s");
	int n = count_children(node);
	if (n != i + 1)
		return fail_value(ld, w,
		                  "expected %d weight%s for the token at position %d, got %d",
		                  i + 1, i == 0 ? "" : "s", i, n);
	double sum = 0.0;
	int j = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, j++) {
		struct where we = where_elem(w, j);
		if (check_number(ld, e, &we) != 0)
			return -1;
		if (!(e->valuedouble > 0.0))
			return fail_got(ld, &we, e, "expected a weight > 0");
		sum += e->valuedouble;
	}
	if (!(fabs(sum - 1.0) <= ATTN_SUM_TOLERANCE)) {
		char got[64];
		format_double(got, sizeof got, "%.9g", sum);
		return fail_value(ld, w, "weights sum to %s, expected 1 (within 1e-6)", got);
	}
	return 0;
}

/* The root: its fields, the budgets and sizes, and the token count. */
static int check_root(const struct loader *ld, const cJSON *root, struct plan *p)
{
	static const enum root_field required[] = {R_HEAVY, R_RECENT, R_DIM, R_TOKENS};
	struct field *f = p->root;
	struct where w[R_COUNT];

	p->w_root = where_root();
	if (!cJSON_IsObject(root))
		return fail_got(ld, &p->w_root, root, "expected a JSON object");
	if (scan_fields(ld, root, &p->w_root, root_names, R_COUNT, f) != 0)
		return -1;
	for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
		if (f[required[i]].node == NULL)
			return fail_value(ld, &p->w_root, "missing required field \"%s\"",
			                  root_names[required[i]]);
	for (int i = 0; i < R_COUNT; i++)
		if (f[i].node != NULL)
			w[i] = where_field(&p->w_root, f[i].index, root_names[i]);

	for (int i = R_TITLE; i <= R_DESCRIPTION; i++)
		if (f[i].node != NULL && !cJSON_IsString(f[i].node))
			return fail_got(ld, &w[i], f[i].node, "expected a string");
	if (check_int(ld, f[R_HEAVY].node, &w[R_HEAVY], 0, SCENE_MAX_BUDGET, &p->heavy) != 0 ||
	    check_int(ld, f[R_RECENT].node, &w[R_RECENT], 0, SCENE_MAX_BUDGET, &p->recent) != 0)
		return -1;
	if (p->heavy + p->recent < 1)
		return fail_value(ld, &w[R_RECENT],
		                  "heavy + recent must be at least 1, got %d + %d", p->heavy,
		                  p->recent);
	if (check_int(ld, f[R_DIM].node, &w[R_DIM], 1, SCENE_MAX_DIM, &p->dim) != 0)
		return -1;

	const cJSON *tokens = f[R_TOKENS].node;
	p->w_tokens = w[R_TOKENS];
	if (!cJSON_IsArray(tokens))
		return fail_got(ld, &p->w_tokens, tokens, "expected an array of tokens");
	p->n = count_children(tokens);
	if (p->n == 0)
		return fail_value(ld, &p->w_tokens,
		                  "expected at least 1 token, got an empty array");
	if (p->n > SCENE_MAX_TOKENS)
		return fail_value(ld, &p->w_tokens, "expected at most %d tokens, got %d",
		                  SCENE_MAX_TOKENS, p->n);
	return 0;
}

/*
 * First pass over the tokens: each is an object with known fields, and
 * they agree on one mode. The first token that gives "attn", "q" or "k"
 * sets the mode; "v" and "text" belong to both modes and say nothing.
 */
static int check_mode(const struct loader *ld, const cJSON *tokens, struct plan *p)
{
	int mode_token = -1;
	const char *mode_field = NULL;
	int i = 0;

	for (const cJSON *t = tokens->child; t != NULL; t = t->next, i++) {
		struct where wt = where_elem(&p->w_tokens, i);
		struct field f[T_COUNT];
		if (!cJSON_IsObject(t))
			return fail_got(ld, &wt, t, "expected a token object");
		if (scan_fields(ld, t, &wt, token_names, T_COUNT, f) != 0)
			return -1;

		/* The vector field that comes first in the token, if any. */
		enum token_field vec = T_COUNT;
		if (f[T_Q].node && (!f[T_K].node || f[T_Q].index < f[T_K].index))
			vec = T_Q;
		else if (f[T_K].node)
			vec = T_K;
		bool attn = f[T_ATTN].node != NULL;

		if (attn && vec != T_COUNT) {
			int later = f[T_ATTN].index > f[vec].index ? f[T_ATTN].index : f[vec].index;
			return fail_field(
			        ld, &wt, later,
			        "has both \"attn\" and \"%s\"; a scene gives either "
			        "attention rows (\"attn\") or vectors (\"q\", \"k\", \"v\")",
			        token_names[vec]);
		}
		if (!attn && vec == T_COUNT)
			continue;
		enum scene_mode mode = attn ? SCENE_ATTENTION : SCENE_VECTOR;
		const char *name = token_names[attn ? T_ATTN : vec];
		if (mode_token < 0) {
			mode_token = i;
			mode_field = name;
			p->mode = mode;
		} else if (mode != p->mode) {
			return fail_field(
			        ld, &wt, f[attn ? T_ATTN : vec].index,
			        "has \"%s\" but tokens[%d] has \"%s\"; a scene gives "
			        "either attention rows (\"attn\") or vectors (\"q\", \"k\", "
			        "\"v\")",
			        name, mode_token, mode_field);
		}
	}
	if (mode_token < 0) {
		struct where w0 = where_elem(&p->w_tokens, 0);
		return fail_value(ld, &w0,
		                  "missing \"attn\" (for an attention scene) or \"q\", \"k\" and "
		                  "\"v\" (for a vector scene)");
	}
	if (p->mode == SCENE_ATTENTION && p->n > SCENE_MAX_ATTN_TOKENS)
		return fail_value(ld, &p->w_tokens,
		                  "an attention scene has at most %d tokens, got %d",
		                  SCENE_MAX_ATTN_TOKENS, p->n);
	return 0;
}

static int check_scale(const struct loader *ld, struct plan *p)
{
	const struct field *f = &p->root[R_SCALE];

	p->scale = 1.0 / sqrt((double)p->dim);
	if (f->node == NULL)
		return 0;
	if (p->mode == SCENE_ATTENTION)
		return fail_field(ld, &p->w_root, f->index,
		                  "\"scale\" applies to vector scenes only, and this one gives "
		                  "\"attn\" rows");
	struct where w = where_field(&p->w_root, f->index, "scale");
	if (check_number(ld, f->node, &w) != 0)
		return -1;
	if (!(f->node->valuedouble > 0.0))
		return fail_got(ld, &w, f->node, "expected a number > 0");
	p->scale = f->node->valuedouble;
	return 0;
}

/* Second pass: every token's own fields, in file order. */
static int check_tokens(const struct loader *ld, const cJSON *tokens, struct plan *p)
{
	int i = 0;

	for (const cJSON *t = tokens->child; t != NULL; t = t->next, i++) {
		struct where wt = where_elem(&p->w_tokens, i);
		struct field f[T_COUNT];
		struct where w[T_COUNT];
		scan_fields(ld, t, &wt, token_names, T_COUNT, f); /* passed in check_mode */
		for (int k = 0; k < T_COUNT; k++)
			if (f[k].node != NULL)
				w[k] = where_field(&wt, f[k].index, token_names[k]);

		if (f[T_TEXT].node == NULL)
			return fail_value(ld, &wt, "missing required field \"text\"");
		if (!cJSON_IsString(f[T_TEXT].node))
			return fail_got(ld, &w[T_TEXT], f[T_TEXT].node, "expected a string");
		size_t bytes = strlen(f[T_TEXT].node->valuestring);
		if (bytes > SCENE_MAX_TEXT_BYTES)
			return fail_value(ld, &w[T_TEXT],
			                  "expected at most %d bytes of text, got %zu",
			                  SCENE_MAX_TEXT_BYTES, bytes);

		if (p->mode == SCENE_VECTOR) {
			for (int k = T_Q; k <= T_V; k++) {
				if (f[k].node == NULL)
					return fail_value(ld, &wt, "missing required field \"%s\"",
					                  token_names[k]);
				if (check_vector(ld, f[k].node, &w[k], p->dim) != 0)
					return -1;
			}
			continue;
		}

		if (f[T_ATTN].node == NULL)
			return fail_value(ld, &wt, "missing required field \"attn\"");
		if (check_attn(ld, f[T_ATTN].node, &w[T_ATTN], i) != 0)
			return -1;
		bool has_v = f[T_V].node != NULL;
		if (i == 0)
			p->has_v = has_v;
		else if (has_v && !p->has_v)
			return fail_field(ld, &wt, f[T_V].index,
			                  "has \"v\" but tokens[0] has none; give \"v\" to every "
			                  "token or to none");
		else if (!has_v && p->has_v)
			return fail_value(ld, &wt,
			                  "missing \"v\", which tokens[0] has; give \"v\" to every "
			                  "token or to none");
		if (has_v && check_vector(ld, f[T_V].node, &w[T_V], p->dim) != 0)
			return -1;
	}
	if (p->mode == SCENE_VECTOR)
		p->has_v = true;
	return 0;
}

/* ---- the copy --------------------------------------------------------- */

/* N doubles, or NULL; N was bounded by the checks but is checked again
 * rather than trusted to a multiplication that could wrap. */
static double *alloc_doubles(size_t rows, size_t cols)
{
	if (cols != 0 && rows > SIZE_MAX / sizeof(double) / cols)
		return NULL;
	return malloc(rows * cols * sizeof(double) + (rows * cols == 0));
}

static void copy_row(double *dst, const cJSON *arr)
{
	for (const cJSON *e = arr->child; e != NULL; e = e->next)
		*dst++ = e->valuedouble;
}

static char *dup_string(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	if (d != NULL)
		memcpy(d, s, n);
	return d;
}

static int build(const struct loader *ld, const struct plan *p, struct scene **out)
{
	const cJSON *tokens = p->root[R_TOKENS].node;
	const size_t n = (size_t)p->n, dim = (size_t)p->dim;
	struct scene *sc = calloc(1, sizeof *sc);

	if (sc == NULL)
		return fail_nomem(ld);
	sc->heavy = p->heavy;
	sc->recent = p->recent;
	sc->dim = p->dim;
	sc->n = p->n;
	sc->mode = p->mode;
	sc->scale = p->scale;

	const cJSON *title = p->root[R_TITLE].node, *desc = p->root[R_DESCRIPTION].node;
	if (title != NULL) {
		sc->title = dup_string(title->valuestring);
	} else {
		/* The file's base name; a name ending in '/' keeps all of it. */
		const char *slash = strrchr(ld->name, '/');
		sc->title = dup_string(slash && slash[1] ? slash + 1 : ld->name);
	}
	sc->description = dup_string(desc ? desc->valuestring : "");
	sc->text = calloc(n, sizeof *sc->text);
	if (p->has_v)
		sc->v = alloc_doubles(n, dim);
	if (p->mode == SCENE_VECTOR) {
		sc->q = alloc_doubles(n, dim);
		sc->k = alloc_doubles(n, dim);
	} else {
		sc->attn = alloc_doubles(scene_attn_offset(p->n), 1);
	}
	if (!sc->title || !sc->description || !sc->text || (p->has_v && !sc->v) ||
	    (p->mode == SCENE_VECTOR ? !sc->q || !sc->k : !sc->attn))
		goto nomem;

	size_t i = 0;
	for (const cJSON *t = tokens->child; t != NULL; t = t->next, i++) {
		struct field f[T_COUNT];
		scan_fields(ld, t, &p->w_tokens, token_names, T_COUNT, f); /* checked */
		if ((sc->text[i] = dup_string(f[T_TEXT].node->valuestring)) == NULL)
			goto nomem;
		if (p->has_v)
			copy_row(sc->v + i * dim, f[T_V].node);
		if (p->mode == SCENE_VECTOR) {
			copy_row(sc->q + i * dim, f[T_Q].node);
			copy_row(sc->k + i * dim, f[T_K].node);
		} else {
			copy_row(sc->attn + scene_attn_offset((int)i), f[T_ATTN].node);
		}
	}
	*out = sc;
	return 0;

nomem:
	scene_free(sc);
	return fail_nomem(ld);
}

/* ---- entry points ----------------------------------------------------- */

static bool all_blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((unsigned char)text[i] >= 1 && (unsigned char)text[i] <= 32))
			return false;
	return true;
}

/* A text cJSON refused: jsonloc says where and why. */
static int fail_syntax(const struct loader *ld)
{
	struct jsonloc_error e;

	if (jsonloc_check(ld->text, ld->len, &e) == 1) {
		size_t used = put_prefix(ld, e.offset, e.path);
		snprintf(ld->err + used, SCENE_ERROR_MAX - used, "%s", e.message);
		return -1;
	}
	/* jsonloc accepts exactly what cJSON accepts, so cJSON failed for want
	 * of memory (or jsonloc could not get its stack). */
	return fail_nomem(ld);
}

/* Load TEXT, which has a NUL byte at TEXT[LEN] (cJSON is safer so). */
static int load(const char *name, const char *text, size_t len, struct scene **out,
                char err[SCENE_ERROR_MAX])
{
	struct loader ld = {name, text, len, err};
	struct plan p = {0};
	const char *end = NULL;

	if (all_blank(text, len)) {
		size_t used = put_prefix(&ld, 0, "$");
		snprintf(err + used, SCENE_ERROR_MAX - used,
		         "the file is empty, expected a JSON object");
		return -1;
	}
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	bool tail = root != NULL && !all_blank(end, len - (size_t)(end - text));
	if (root == NULL || tail || memchr(text, '\0', len) != NULL) {
		cJSON_Delete(root);
		return fail_syntax(&ld);
	}

	int rc = check_root(&ld, root, &p);
	if (rc == 0)
		rc = check_mode(&ld, p.root[R_TOKENS].node, &p);
	if (rc == 0)
		rc = check_scale(&ld, &p);
	if (rc == 0)
		rc = check_tokens(&ld, p.root[R_TOKENS].node, &p);
	if (rc == 0)
		rc = build(&ld, &p, out);
	cJSON_Delete(root);
	return rc;
}

int scene_load_text(const char *name, const char *text, size_t len, struct scene **out,
                    char err[SCENE_ERROR_MAX])
{
	*out = NULL;
	err[0] = '\0';
	if (len > (size_t)SCENE_MAX_FILE_BYTES)
		return fail_file(err, name, "cannot load: file is larger than %ld MiB",
		                 SCENE_MAX_FILE_BYTES / (1024 * 1024));
	char *copy = malloc(len + 1);
	if (copy == NULL)
		return fail_file(err, name, "cannot load: out of memory");
	if (len > 0)
		memcpy(copy, text, len);
	copy[len] = '\0';
	int rc = load(name, copy, len, out, err);
	free(copy);
	return rc;
}

/* Read all of FD, refusing more than SCENE_MAX_FILE_BYTES: reading stops
 * one byte past the limit, so a huge pipe is not slurped whole. HINT is the
 * size fstat reported (0 for pipes and the like). */
static int read_all(int fd, size_t hint, char **buf, size_t *len, const char *name,
                    char err[SCENE_ERROR_MAX])
{
	const size_t limit = (size_t)SCENE_MAX_FILE_BYTES + 1;
	size_t cap = hint + 1 > 4096 ? hint + 1 : 4096, used = 0;
	char *b = malloc(cap + 1);

	if (b == NULL)
		return fail_file(err, name, "cannot load: out of memory");
	while (used < limit) {
		if (used == cap) {
			size_t ncap = cap * 2 < limit ? cap * 2 : limit;
			char *nb = realloc(b, ncap + 1);
			if (nb == NULL) {
				free(b);
				return fail_file(err, name, "cannot load: out of memory");
			}
			b = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, b + used, cap - used);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			return fail_file(err, name, "cannot read: %s", strerror(e));
		}
		if (r == 0)
			break;
		used += (size_t)r;
	}
	if (used >= limit) {
		free(b);
		return fail_file(err, name, "cannot load: file is larger than %ld MiB",
		                 SCENE_MAX_FILE_BYTES / (1024 * 1024));
	}
	b[used] = '\0';
	*buf = b;
	*len = used;
	return 0;
}

int scene_load_file(const char *path, struct scene **out, char err[SCENE_ERROR_MAX])
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;

	*out = NULL;
	err[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_file(err, path, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return fail_file(err, path, "cannot open: %s", strerror(e));
	}
	if (S_ISDIR(st.st_mode)) { /* it opens fine and fails only at read() */
		close(fd);
		return fail_file(err, path, "cannot open: %s", strerror(EISDIR));
	}
	/* Refuse a large file before reading any of it. */
	if (S_ISREG(st.st_mode) && st.st_size > SCENE_MAX_FILE_BYTES) {
		close(fd);
		return fail_file(err, path, "cannot load: file is larger than %ld MiB",
		                 SCENE_MAX_FILE_BYTES / (1024 * 1024));
	}
	size_t hint = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 0;
	int rc = read_all(fd, hint, &buf, &len, path, err);
	close(fd);
	if (rc != 0)
		return rc;
	rc = load(path, buf, len, out, err);
	free(buf);
	return rc;
}

void scene_free(struct scene *scene)
{
	if (scene == NULL)
		return;
	if (scene->text != NULL)
		for (int i = 0; i < scene->n; i++)
			free(scene->text[i]);
	free(scene->text);
	free(scene->title);
	free(scene->description);
	free(scene->q);
	free(scene->k);
	free(scene->v);
	free(scene->attn);
	free(scene);
}
