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
 *
 * A scene gives its tokens one of three ways: inline ("tokens"), from the
 * seeded model ("generate", computed by generate.c once its fields pass),
 * or from .npy files named in "q", "k" and "v" (read by npy.c; their
 * headers are checked with the other fields, the numbers read in the last
 * pass, and any error points at the string that named the file).
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

#include "h2o/generate.h"
#include "jsonloc.h"
#include "npy.h"

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

enum root_field {
	R_TITLE,
	R_DESCRIPTION,
	R_WATCH,
	R_HEAVY,
	R_RECENT,
	R_DIM,
	R_SCALE,
	R_TOKENS,
	R_GENERATE,
	R_Q,
	R_K,
	R_V,
	R_TEXT,
	R_HEADS,
	R_HEAD_NAMES,
	R_COUNT
};
static const char *const root_names[R_COUNT] = {
        "title",    "description", "watch", "heavy", "recent", "dim",   "scale",      "tokens",
        "generate", "q",           "k",     "v",     "text",   "heads", "head_names",
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

/* Where a scene's tokens come from. */
enum source { SRC_NONE, SRC_TOKENS, SRC_GENERATE, SRC_NPY };

/* One of q, k and v, named as a .npy file. */
struct npy_source {
	struct npy_file file; /* fd -1 until opened */
	struct where w;       /* the string that named it */
	char shown[160];      /* that name, safe to print */
};

/* What the checks learnt, for the copy that follows them. */
struct plan {
	struct field root[R_COUNT];
	struct where w_root, w_tokens;
	enum source source;
	int heavy, recent, dim, n;
	int heads; /* >= 1 */
	enum scene_mode mode;
	bool has_v;
	double scale;

	/* "generate": the model's parameters, pointing into the cJSON tree. */
	struct generate_params gen;
	struct generate_needle needles[GENERATE_MAX_NEEDLES];
	int *topic_positions;

	/* .npy files in q, k, v, and a "text" file's bytes. */
	struct npy_source npy[3];
	char *text_file;
	size_t text_len;
};

static void plan_init(struct plan *p)
{
	memset(p, 0, sizeof *p);
	for (int i = 0; i < 3; i++)
		p->npy[i].file.fd = -1;
}

static void plan_done(struct plan *p)
{
	for (int i = 0; i < 3; i++)
		npy_close(&p->npy[i].file);
	free(p->topic_positions);
	free(p->text_file);
}

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

/* q, k and v stay within SCENE_MAX_MAGNITUDE, so that no dot product or
 * squared length of dim of them can overflow to infinity (and the softmax
 * and the figures to NaN). */
static int check_magnitude(const struct loader *ld, const cJSON *node, const struct where *w)
{
	if (fabs(node->valuedouble) > SCENE_MAX_MAGNITUDE)
		return fail_got(ld, w, node, "expected a number from -1e30 to 1e30");
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
		if (check_number(ld, e, &we) != 0 || check_magnitude(ld, e, &we) != 0)
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

/* The field of the root that gives the tokens by SRC, the first of them
 * in the file when there are several; -1 when there is none. */
static int source_field(const struct plan *p, enum source src)
{
	static const enum root_field npy_fields[] = {R_Q, R_K, R_V, R_TEXT};
	const struct field *f = p->root;
	int best = -1;

	if (src == SRC_TOKENS)
		return f[R_TOKENS].node ? R_TOKENS : -1;
	if (src == SRC_GENERATE)
		return f[R_GENERATE].node ? R_GENERATE : -1;
	for (size_t i = 0; i < sizeof npy_fields / sizeof npy_fields[0]; i++)
		if (f[npy_fields[i]].node != NULL &&
		    (best < 0 || f[npy_fields[i]].index < f[best].index))
			best = npy_fields[i];
	return best;
}

/* Exactly one way of giving the tokens; two are an error at the later. */
static int check_source(const struct loader *ld, struct plan *p)
{
	int first = -1;

	p->source = SRC_NONE;
	for (enum source src = SRC_TOKENS; src <= SRC_NPY; src++) {
		const int field = source_field(p, src);
		if (field < 0)
			continue;
		if (first < 0) {
			first = field;
			p->source = src;
			continue;
		}
		const bool later = p->root[field].index > p->root[first].index;
		const int a = later ? first : field, b = later ? field : first;
		/* Words for a generated scene belong inside "generate". */
		if (field == R_TEXT && first == R_GENERATE)
			return fail_field(ld, &p->w_root, p->root[field].index,
			                  "\"text\" at the root names the tokens of .npy files; a "
			                  "generated scene takes its words from \"generate\": "
			                  "{\"text\": ...}");
		return fail_field(ld, &p->w_root, p->root[b].index,
		                  "has both \"%s\" and \"%s\"; a scene gives its tokens one way: "
		                  "\"tokens\", \"generate\", or .npy files in \"q\", \"k\" and "
		                  "\"v\"",
		                  root_names[a], root_names[b]);
	}
	return 0;
}

/* The root: its fields, where the tokens come from, the budgets and sizes,
 * and for inline tokens their count. */
/* "heads" (1 by default) and "head_names" (one short string per head). */
static int check_heads(const struct loader *ld, struct plan *p, const struct where *w)
{
	const struct field *f = p->root;
	p->heads = 1;
	if (f[R_HEADS].node != NULL &&
	    check_int(ld, f[R_HEADS].node, &w[R_HEADS], 1, SCENE_MAX_HEADS, &p->heads) != 0)
		return -1;
	if (p->heads > 1 && p->source == SRC_NPY)
		return fail_value(ld, &w[R_HEADS],
		                  "heads with .npy files are not supported yet; give \"tokens\" "
		                  "or \"generate\"");
	const cJSON *names = f[R_HEAD_NAMES].node;
	if (names == NULL)
		return 0;
	if (!cJSON_IsArray(names))
		return fail_got(ld, &w[R_HEAD_NAMES], names, "expected an array of %d strings",
		                p->heads);
	const int count = count_children(names);
	if (count != p->heads)
		return fail_value(ld, &w[R_HEAD_NAMES], "expected %d names (one per head), got %d",
		                  p->heads, count);
	int i = 0;
	for (const cJSON *e = names->child; e != NULL; e = e->next, i++) {
		struct where we = where_elem(&w[R_HEAD_NAMES], i);
		if (!cJSON_IsString(e))
			return fail_got(ld, &we, e, "expected a string");
		if (strlen(e->valuestring) > SCENE_MAX_HEAD_NAME_BYTES)
			return fail_value(ld, &we, "expected at most %d bytes, got %zu",
			                  SCENE_MAX_HEAD_NAME_BYTES, strlen(e->valuestring));
	}
	return 0;
}

static int check_root(const struct loader *ld, const cJSON *root, struct plan *p)
{
	static const enum root_field required[] = {R_HEAVY, R_RECENT, R_DIM};
	struct field *f = p->root;
	struct where w[R_COUNT];

	p->w_root = where_root();
	if (!cJSON_IsObject(root))
		return fail_got(ld, &p->w_root, root, "expected a JSON object");
	if (scan_fields(ld, root, &p->w_root, root_names, R_COUNT, f) != 0)
		return -1;
	if (check_source(ld, p) != 0)
		return -1;
	for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
		if (f[required[i]].node == NULL)
			return fail_value(ld, &p->w_root, "missing required field \"%s\"",
			                  root_names[required[i]]);
	if (p->source == SRC_NONE)
		return fail_value(ld, &p->w_root,
		                  "missing required field \"tokens\" (or \"generate\", or .npy "
		                  "files in \"q\", \"k\" and \"v\")");
	if (p->source == SRC_NPY)
		for (int i = R_Q; i <= R_V; i++)
			if (f[i].node == NULL)
				return fail_value(
				        ld, &p->w_root,
				        "missing required field \"%s\" (a scene that reads "
				        ".npy files names one for each of \"q\", \"k\" and "
				        "\"v\")",
				        root_names[i]);
	for (int i = 0; i < R_COUNT; i++)
		if (f[i].node != NULL)
			w[i] = where_field(&p->w_root, f[i].index, root_names[i]);

	for (int i = R_TITLE; i <= R_WATCH; i++)
		if (f[i].node != NULL && !cJSON_IsString(f[i].node))
			return fail_got(ld, &w[i], f[i].node, "expected a string");
	if (f[R_WATCH].node != NULL && strlen(f[R_WATCH].node->valuestring) > SCENE_MAX_WATCH_BYTES)
		return fail_value(ld, &w[R_WATCH], "expected at most %d bytes of text, got %zu",
		                  SCENE_MAX_WATCH_BYTES, strlen(f[R_WATCH].node->valuestring));
	if (check_int(ld, f[R_HEAVY].node, &w[R_HEAVY], 0, SCENE_MAX_BUDGET, &p->heavy) != 0 ||
	    check_int(ld, f[R_RECENT].node, &w[R_RECENT], 0, SCENE_MAX_BUDGET, &p->recent) != 0)
		return -1;
	if (p->heavy + p->recent < 1)
		return fail_value(ld, &w[R_RECENT],
		                  "heavy + recent must be at least 1, got %d + %d", p->heavy,
		                  p->recent);
	if (check_int(ld, f[R_DIM].node, &w[R_DIM], 1, SCENE_MAX_DIM, &p->dim) != 0)
		return -1;
	if (check_heads(ld, p, w) != 0)
		return -1;
	if (p->source != SRC_TOKENS)
		return 0;

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
	if (!(f->node->valuedouble > 0.0) || f->node->valuedouble > SCENE_MAX_MAGNITUDE)
		return fail_got(ld, &w, f->node, "expected a number > 0 and at most 1e30");
	p->scale = f->node->valuedouble;
	return 0;
}

typedef int check_fn(const struct loader *ld, const cJSON *node, const struct where *w, int arg);

static int check_attn_at(const struct loader *ld, const cJSON *node, const struct where *w, int i)
{
	return check_attn(ld, node, w, i);
}

/* With one head, NODE itself; with several, an array of one per head. */
static int check_per_head(const struct loader *ld, const cJSON *node, const struct where *w,
                          const struct plan *p, check_fn *check, int arg)
{
	if (p->heads == 1)
		return check(ld, node, w, arg);
	if (!cJSON_IsArray(node) || (node->child && !cJSON_IsArray(node->child)))
		return fail_got(ld, w, node, "expected an array of %d arrays (one per head)",
		                p->heads);
	const int count = count_children(node);
	if (count != p->heads)
		return fail_value(ld, w, "expected %d arrays (one per head), got %d", p->heads,
		                  count);
	int h = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, h++) {
		struct where we = where_elem(w, h);
		if (check(ld, e, &we, arg) != 0)
			return -1;
	}
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
				if (check_per_head(ld, f[k].node, &w[k], p, check_vector, p->dim) !=
				    0)
					return -1;
			}
			continue;
		}

		if (f[T_ATTN].node == NULL)
			return fail_value(ld, &wt, "missing required field \"attn\"");
		if (check_per_head(ld, f[T_ATTN].node, &w[T_ATTN], p, check_attn_at, i) != 0)
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
		if (has_v && check_per_head(ld, f[T_V].node, &w[T_V], p, check_vector, p->dim) != 0)
			return -1;
	}
	if (p->mode == SCENE_VECTOR)
		p->has_v = true;
	return 0;
}

/* ---- generated scenes ------------------------------------------------- */

enum gen_field { G_COUNT, G_SEED, G_TEXT, G_NOISE, G_SINKS, G_LOCALITY, G_TOPICS, G_NEEDLES, G_N };
static const char *const gen_names[G_N] = {
        "count", "seed", "text", "noise", "sinks", "locality", "topics", "needles",
};
enum sink_field { S_COUNT, S_STRENGTH, S_N };
static const char *const sink_names[S_N] = {"count", "strength"};
enum loc_field { L_STRENGTH, L_WIDTH, L_PAIRS, L_N };
static const char *const loc_names[L_N] = {"strength", "width", "pairs"};
enum topic_field { TP_RATE, TP_POSITIONS, TP_STRENGTH, TP_TEXT, TP_N };
static const char *const topic_names[TP_N] = {"rate", "positions", "strength", "text"};
enum needle_field { N_POS, N_QUERY_AT, N_STRENGTH, N_TEXT, N_N };
static const char *const needle_names[N_N] = {"pos", "query_at", "strength", "text"};

/* Defaults of the model (docs/scene-format.md, "Generated scenes"). */
#define GEN_NOISE           1.0
#define GEN_SINK_COUNT      1
#define GEN_SINK_STRENGTH   4.0
#define GEN_LOC_STRENGTH    2.0
#define GEN_LOC_WIDTH       8.0
#define GEN_LOC_MAX_PAIRS   16
#define GEN_TOPIC_STRENGTH  3.0
#define GEN_NEEDLE_STRENGTH 10.0

/* NODE at W is an object with fields among NAMES: sort them into F and
 * their places into WF. */
static int check_object(const struct loader *ld, const cJSON *node, const struct where *w,
                        const char *example, const char *const *names, int count, struct field *f,
                        struct where *wf)
{
	if (!cJSON_IsObject(node))
		return fail_got(ld, w, node, "expected an object such as %s", example);
	if (scan_fields(ld, node, w, names, count, f) != 0)
		return -1;
	for (int i = 0; i < count; i++)
		if (f[i].node != NULL)
			wf[i] = where_field(w, f[i].index, names[i]);
	return 0;
}

/* An optional number from LO to HI (LO excluded when OPEN); *OUT keeps
 * its default when the field is absent. */
static int check_real(const struct loader *ld, const struct field *f, const struct where *w,
                      double lo, double hi, bool open, double *out)
{
	if (f->node == NULL)
		return 0;
	if (check_number(ld, f->node, w) != 0)
		return -1;
	const double x = f->node->valuedouble;
	if (!(open ? x > lo : x >= lo) || !(x <= hi)) {
		char a[32], b[32];
		format_double(a, sizeof a, "%.15g", lo);
		format_double(b, sizeof b, "%.15g", hi);
		if (open)
			return fail_got(ld, w, f->node, "expected a number > %s and at most %s", a,
			                b);
		return fail_got(ld, w, f->node, "expected a number from %s to %s", a, b);
	}
	*out = x;
	return 0;
}

/* An optional token text: a string of at most SCENE_MAX_TEXT_BYTES. */
static int check_text(const struct loader *ld, const struct field *f, const struct where *w,
                      const char **out)
{
	if (f->node == NULL)
		return 0;
	if (!cJSON_IsString(f->node))
		return fail_got(ld, w, f->node, "expected a string");
	const size_t bytes = strlen(f->node->valuestring);
	if (bytes > SCENE_MAX_TEXT_BYTES)
		return fail_value(ld, w, "expected at most %d bytes of text, got %zu",
		                  SCENE_MAX_TEXT_BYTES, bytes);
	*out = f->node->valuestring;
	return 0;
}

static int check_words(const struct loader *ld, const cJSON *node, const struct where *w)
{
	if (!cJSON_IsString(node))
		return fail_got(ld, w, node, "expected a string of words");
	const size_t bytes = strlen(node->valuestring);
	size_t longest;
	if (bytes > SCENE_MAX_WORDS_BYTES)
		return fail_value(ld, w, "expected at most %d bytes of words, got %zu",
		                  SCENE_MAX_WORDS_BYTES, bytes);
	if (generate_count_words(node->valuestring, &longest) == 0)
		return fail_got(ld, w, node, "expected at least one word");
	if (longest > SCENE_MAX_TEXT_BYTES)
		return fail_value(ld, w,
		                  "has a word of %zu bytes; a token's text is at most %d bytes",
		                  longest, SCENE_MAX_TEXT_BYTES);
	return 0;
}

static int check_seed(const struct loader *ld, const cJSON *node, const struct where *w,
                      uint64_t *out)
{
	const double v = node->valuedouble;

	if (!cJSON_IsNumber(node) || !(v == floor(v)) || v < 0 || v > GENERATE_MAX_SEED)
		return fail_got(ld, w, node, "expected an integer from 0 to 2^53 (%.0f)",
		                GENERATE_MAX_SEED);
	*out = (uint64_t)v;
	return 0;
}

static int check_sinks(const struct loader *ld, const cJSON *node, const struct where *w,
                       struct generate_params *g)
{
	struct field f[S_N];
	struct where wf[S_N];

	if (check_object(ld, node, w, "{\"count\": 1, \"strength\": 4}", sink_names, S_N, f, wf) !=
	    0)
		return -1;
	g->sink_count = GEN_SINK_COUNT < g->count ? GEN_SINK_COUNT : g->count;
	g->sink_strength = GEN_SINK_STRENGTH;
	if (f[S_COUNT].node != NULL &&
	    check_int(ld, f[S_COUNT].node, &wf[S_COUNT], 0, g->count, &g->sink_count) != 0)
		return -1;
	return check_real(ld, &f[S_STRENGTH], &wf[S_STRENGTH], -GENERATE_MAX_STRENGTH,
	                  GENERATE_MAX_STRENGTH, false, &g->sink_strength);
}

static int check_locality(const struct loader *ld, const cJSON *node, const struct where *w,
                          int dim, struct generate_params *g)
{
	struct field f[L_N];
	struct where wf[L_N];

	if (check_object(ld, node, w, "{\"strength\": 2, \"width\": 8}", loc_names, L_N, f, wf) !=
	    0)
		return -1;
	g->loc_strength = GEN_LOC_STRENGTH;
	g->loc_width = GEN_LOC_WIDTH;
	g->loc_pairs = dim / 4 < 1 ? 1 : dim / 4 > GEN_LOC_MAX_PAIRS ? GEN_LOC_MAX_PAIRS : dim / 4;
	if (check_real(ld, &f[L_STRENGTH], &wf[L_STRENGTH], -GENERATE_MAX_STRENGTH,
	               GENERATE_MAX_STRENGTH, false, &g->loc_strength) != 0 ||
	    check_real(ld, &f[L_WIDTH], &wf[L_WIDTH], 0.0, GENERATE_MAX_WIDTH, true,
	               &g->loc_width) != 0)
		return -1;
	if (f[L_PAIRS].node != NULL &&
	    check_int(ld, f[L_PAIRS].node, &wf[L_PAIRS], 1, GENERATE_MAX_PAIRS, &g->loc_pairs) != 0)
		return -1;
	return 0;
}

/* Topic positions: integers in [0, count), each once. */
static int check_positions(const struct loader *ld, const cJSON *node, const struct where *w,
                           struct plan *p)
{
	struct generate_params *g = &p->gen;

	if (!cJSON_IsArray(node))
		return fail_got(ld, w, node, "expected an array of positions");
	const int n = count_children(node);
	if (n > g->count)
		return fail_value(ld, w, "expected at most %d positions (one per token), got %d",
		                  g->count, n);
	if (n == 0)
		return 0;
	/* n <= count <= SCENE_MAX_TOKENS: both bounded before they exist. */
	p->topic_positions = malloc((size_t)n * sizeof *p->topic_positions);
	unsigned char *seen = calloc((size_t)g->count, 1);
	if (p->topic_positions == NULL || seen == NULL) {
		free(seen);
		return fail_nomem(ld);
	}
	int i = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, i++) {
		struct where we = where_elem(w, i);
		int pos;
		if (check_int(ld, e, &we, 0, g->count - 1, &pos) != 0) {
			free(seen);
			return -1;
		}
		if (seen[pos]) {
			int first = 0;
			while (p->topic_positions[first] != pos)
				first++;
			free(seen);
			return fail_value(ld, &we, "position %d is listed twice (also at [%d])",
			                  pos, first);
		}
		seen[pos] = 1;
		p->topic_positions[i] = pos;
	}
	free(seen);
	g->topic_positions = p->topic_positions;
	g->n_topic_positions = n;
	return 0;
}

static int check_topics(const struct loader *ld, const cJSON *node, const struct where *w,
                        struct plan *p)
{
	struct generate_params *g = &p->gen;
	struct field f[TP_N];
	struct where wf[TP_N];

	if (check_object(ld, node, w, "{\"rate\": 0.02, \"strength\": 3}", topic_names, TP_N, f,
	                 wf) != 0)
		return -1;
	g->topic_strength = GEN_TOPIC_STRENGTH;
	if (check_real(ld, &f[TP_RATE], &wf[TP_RATE], 0.0, 1.0, false, &g->topic_rate) != 0)
		return -1;
	if (f[TP_POSITIONS].node != NULL &&
	    check_positions(ld, f[TP_POSITIONS].node, &wf[TP_POSITIONS], p) != 0)
		return -1;
	if (check_real(ld, &f[TP_STRENGTH], &wf[TP_STRENGTH], -GENERATE_MAX_STRENGTH,
	               GENERATE_MAX_STRENGTH, false, &g->topic_strength) != 0)
		return -1;
	return check_text(ld, &f[TP_TEXT], &wf[TP_TEXT], &g->topic_text);
}

static int check_needle(const struct loader *ld, const cJSON *node, const struct where *w,
                        int count, struct generate_needle *out)
{
	struct field f[N_N];
	struct where wf[N_N];

	if (check_object(ld, node, w, "{\"pos\": 50, \"query_at\": 1800}", needle_names, N_N, f,
	                 wf) != 0)
		return -1;
	for (int i = N_POS; i <= N_QUERY_AT; i++)
		if (f[i].node == NULL)
			return fail_value(ld, w, "missing required field \"%s\"", needle_names[i]);
	out->strength = GEN_NEEDLE_STRENGTH;
	out->text = NULL;
	if (check_int(ld, f[N_POS].node, &wf[N_POS], 0, count - 2, &out->pos) != 0)
		return -1;
	const cJSON *q = f[N_QUERY_AT].node;
	if (check_int(ld, q, &wf[N_QUERY_AT], 0, SCENE_MAX_TOKENS, &out->query_at) != 0)
		return -1;
	if (out->query_at <= out->pos || out->query_at >= count)
		return fail_got(ld, &wf[N_QUERY_AT], q,
		                "expected a position after \"pos\" and before \"count\" (%d to %d)",
		                out->pos + 1, count - 1);
	if (check_real(ld, &f[N_STRENGTH], &wf[N_STRENGTH], -GENERATE_MAX_STRENGTH,
	               GENERATE_MAX_STRENGTH, false, &out->strength) != 0)
		return -1;
	return check_text(ld, &f[N_TEXT], &wf[N_TEXT], &out->text);
}

static int check_needles(const struct loader *ld, const cJSON *node, const struct where *w,
                         struct plan *p)
{
	struct generate_params *g = &p->gen;

	if (!cJSON_IsArray(node))
		return fail_got(ld, w, node, "expected an array of needles");
	const int n = count_children(node);
	if (n > GENERATE_MAX_NEEDLES)
		return fail_value(ld, w, "expected at most %d needles, got %d",
		                  GENERATE_MAX_NEEDLES, n);
	if (n > 0 && g->count < 2)
		return fail_value(ld, w,
		                  "a needle needs at least 2 tokens (one to plant it, a later one "
		                  "to ask for it), and count is %d",
		                  g->count);
	int i = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, i++) {
		struct where we = where_elem(w, i);
		if (check_needle(ld, e, &we, g->count, &p->needles[i]) != 0)
			return -1;
	}
	g->needles = p->needles;
	g->n_needles = n;
	return 0;
}

/* "generate": every field, then whether dim holds the model's channels. */
static int check_generate(const struct loader *ld, struct plan *p)
{
	const cJSON *node = p->root[R_GENERATE].node;
	const struct where w = where_field(&p->w_root, p->root[R_GENERATE].index, "generate");
	struct generate_params *g = &p->gen;
	struct field f[G_N];
	struct where wf[G_N];

	if (!cJSON_IsObject(node))
		return fail_got(ld, &w, node,
		                "expected an object with \"count\", \"seed\" and the "
		                "model's fields");
	/* A root field written inside "generate" (dim, most likely): say where
	 * it goes rather than only that it is unknown here. */
	int index = 0;
	for (const cJSON *m = node->child; m != NULL; m = m->next, index++)
		for (int r = R_TITLE; r <= R_SCALE; r++)
			if (m->string != NULL && strcmp(m->string, root_names[r]) == 0)
				return fail_field(ld, &w, index,
				                  "\"%s\" belongs at the root of the scene, beside "
				                  "\"generate\"",
				                  root_names[r]);
	if (check_object(ld, node, &w, "", gen_names, G_N, f, wf) != 0)
		return -1;
	for (int i = G_COUNT; i <= G_SEED; i++)
		if (f[i].node == NULL)
			return fail_value(ld, &w, "missing required field \"%s\"", gen_names[i]);

	memset(g, 0, sizeof *g);
	g->dim = p->dim;
	g->noise = GEN_NOISE;
	if (check_int(ld, f[G_COUNT].node, &wf[G_COUNT], 1, SCENE_MAX_TOKENS, &g->count) != 0 ||
	    check_seed(ld, f[G_SEED].node, &wf[G_SEED], &g->seed) != 0)
		return -1;
	const long values = (long)g->count * p->dim * p->heads;
	if (values > SCENE_MAX_VALUES && p->heads == 1)
		return fail_value(
		        ld, &wf[G_COUNT],
		        "%d tokens x dim %d = %ld numbers in each of q, k and v, more than "
		        "the %ld allowed",
		        g->count, p->dim, values, SCENE_MAX_VALUES);
	if (values > SCENE_MAX_VALUES)
		return fail_value(ld, &wf[G_COUNT],
		                  "%d tokens x dim %d x %d heads = %ld numbers in each of q, k "
		                  "and v, more than the %ld allowed",
		                  g->count, p->dim, p->heads, values, SCENE_MAX_VALUES);
	if (f[G_TEXT].node != NULL) {
		if (check_words(ld, f[G_TEXT].node, &wf[G_TEXT]) != 0)
			return -1;
		g->text = f[G_TEXT].node->valuestring;
	}
	if (check_real(ld, &f[G_NOISE], &wf[G_NOISE], 0.0, GENERATE_MAX_STRENGTH, false,
	               &g->noise) != 0)
		return -1;
	if (f[G_SINKS].node != NULL && check_sinks(ld, f[G_SINKS].node, &wf[G_SINKS], g) != 0)
		return -1;
	if (f[G_LOCALITY].node != NULL &&
	    check_locality(ld, f[G_LOCALITY].node, &wf[G_LOCALITY], p->dim, g) != 0)
		return -1;
	if (f[G_TOPICS].node != NULL && check_topics(ld, f[G_TOPICS].node, &wf[G_TOPICS], p) != 0)
		return -1;
	if (f[G_NEEDLES].node != NULL &&
	    check_needles(ld, f[G_NEEDLES].node, &wf[G_NEEDLES], p) != 0)
		return -1;

	const int need = generate_min_dim(g);
	if (p->dim < need) {
		char parts[160];
		int len = snprintf(parts, sizeof parts, "2 for the sink and topic channels");
		if (g->n_needles > 0)
			len += snprintf(parts + len, sizeof parts - (size_t)len,
			                " + %d for needles", g->n_needles);
		if (g->loc_pairs > 0)
			len += snprintf(parts + len, sizeof parts - (size_t)len,
			                " + 2 x %d locality pairs", g->loc_pairs);
		if (g->noise > 0.0)
			snprintf(parts + len, sizeof parts - (size_t)len, " + 1 for noise");
		const struct where wd = where_field(&p->w_root, p->root[R_DIM].index, "dim");
		return fail_value(ld, &wd, "\"generate\" needs dim >= %d (%s), got %d", need, parts,
		                  p->dim);
	}
	p->n = g->count;
	p->mode = SCENE_VECTOR;
	p->has_v = true;
	return 0;
}

/* ---- .npy files --------------------------------------------------------- */

/* NAME as a message shows it: as written when it is a plain path, else
 * quoted and escaped (it comes from the file, and reaches a terminal). */
static void shown_name(const char *name, char *buf, size_t size)
{
	size_t len = strlen(name);
	bool plain = len > 0 && len < 100;

	for (size_t i = 0; i < len && plain; i++) {
		const unsigned char c = (unsigned char)name[i];
		plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		        (c >= '0' && c <= '9') || strchr("._-+/", c) != NULL;
	}
	if (plain)
		snprintf(buf, size, "%s", name);
	else
		jsonloc_quote(buf, size, name, len, 60);
}

/* NAME, written in the scene, as a path: relative to the scene file's
 * directory, like an include. */
static int resolve(const struct loader *ld, const char *name, char *out, size_t size)
{
	const char *slash = strrchr(ld->name, '/');
	int n;

	if (name[0] == '/' || slash == NULL)
		n = snprintf(out, size, "%s", name);
	else
		n = snprintf(out, size, "%.*s/%s", (int)(slash - ld->name), ld->name, name);
	return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* The string at W names a file: a non-empty string, resolved into PATH. */
static int check_file_name(const struct loader *ld, const cJSON *node, const struct where *w,
                           const char *what, char *shown, size_t shown_size, char *path,
                           size_t path_size)
{
	if (!cJSON_IsString(node))
		return fail_got(ld, w, node, "expected %s", what);
	if (node->valuestring[0] == '\0')
		return fail_value(ld, w, "expected %s, got an empty string", what);
	shown_name(node->valuestring, shown, shown_size);
	if (resolve(ld, node->valuestring, path, path_size) != 0)
		return fail_value(ld, w, "%s: the file name is too long", shown);
	return 0;
}

/* q, k and v: each file's header, and shapes that agree with dim and with
 * each other; the numbers are read by build_npy. */
static int check_npy(const struct loader *ld, struct plan *p)
{
	for (int i = 0; i < 3; i++) {
		const struct field *f = &p->root[R_Q + i];
		struct npy_source *src = &p->npy[i];
		char path[4096], msg[NPY_MSG_MAX], shape[64];

		src->w = where_field(&p->w_root, f->index, root_names[R_Q + i]);
		if (check_file_name(ld, f->node, &src->w, "the name of a .npy file", src->shown,
		                    sizeof src->shown, path, sizeof path) != 0)
			return -1;
		if (npy_open(path, &src->file, msg) != 0)
			return fail_value(ld, &src->w, "%s: %s", src->shown, msg);
		const struct npy_header *h = &src->file.h;
		npy_format_shape(h, shape, sizeof shape);
		if (h->rank != 2 || h->shape[1] != (uint64_t)p->dim)
			return fail_value(ld, &src->w, "%s: expected shape (n, %d), got %s",
			                  src->shown, p->dim, shape);
		if (i > 0) {
			if (h->shape[0] != (uint64_t)p->n)
				return fail_value(ld, &src->w,
				                  "%s: expected shape (%d, %d) like q, got %s",
				                  src->shown, p->n, p->dim, shape);
			continue;
		}
		if (h->shape[0] == 0)
			return fail_value(ld, &src->w, "%s: expected at least 1 row, got shape %s",
			                  src->shown, shape);
		if (h->shape[0] > SCENE_MAX_TOKENS)
			return fail_value(ld, &src->w,
			                  "%s: expected at most %d rows (tokens), got shape %s",
			                  src->shown, SCENE_MAX_TOKENS, shape);
		if (h->count > (uint64_t)SCENE_MAX_VALUES)
			return fail_value(
			        ld, &src->w,
			        "%s: shape %s holds %llu numbers, more than the %ld allowed "
			        "in each of q, k and v",
			        src->shown, shape, (unsigned long long)h->count, SCENE_MAX_VALUES);
		p->n = (int)h->shape[0];
	}
	p->mode = SCENE_VECTOR;
	p->has_v = true;
	return 0;
}

static int read_all(int fd, size_t hint, char **buf, size_t *len, char *msg, size_t size);

/* The next line of a "text" file from *AT (END is the end of the file):
 * its bytes without the line break and one '\r' before it. */
static const char *next_line(const char **at, const char *end, size_t *len)
{
	const char *s = *at, *nl = memchr(s, '\n', (size_t)(end - s));
	const char *e = nl ? nl : end;

	*at = nl ? nl + 1 : end;
	*len = (size_t)(e - s) - (e > s && e[-1] == '\r');
	return s;
}

/* The "text" file: one token per line, as many lines as q has rows. */
static int check_text_file(const struct loader *ld, const cJSON *node, const struct where *w,
                           struct plan *p)
{
	char path[4096], shown[160], msg[128];
	struct stat st;

	if (check_file_name(ld, node, w,
	                    "an array of strings or the name of a text file with one token per "
	                    "line",
	                    shown, sizeof shown, path, sizeof path) != 0)
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_value(ld, w, "%s: cannot open: %s", shown, strerror(errno));
	const char *why = NULL;
	if (fstat(fd, &st) != 0)
		why = strerror(errno);
	else if (S_ISDIR(st.st_mode))
		why = strerror(EISDIR);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_size > SCENE_MAX_FILE_BYTES)
		why = "larger than 256 MiB";
	if (why != NULL) {
		close(fd);
		return fail_value(ld, w, "%s: cannot open: %s", shown, why);
	}
	int rc = read_all(fd, (size_t)st.st_size, &p->text_file, &p->text_len, msg, sizeof msg);
	close(fd);
	if (rc != 0)
		return fail_value(ld, w, "%s: %s", shown, msg);

	/* No text file: no pointer arithmetic on NULL either. */
	const char *at = p->text_file, *end = at ? at + p->text_len : NULL;
	int lines = 0;
	while (at < end) {
		size_t len;
		const char *line = next_line(&at, end, &len);
		lines++;
		if (memchr(line, '\0', len) != NULL)
			return fail_value(ld, w, "%s: line %d holds a NUL byte", shown, lines);
		if (len > SCENE_MAX_TEXT_BYTES)
			return fail_value(ld, w,
			                  "%s: line %d: expected at most %d bytes of text, got %zu",
			                  shown, lines, SCENE_MAX_TEXT_BYTES, len);
	}
	if (lines != p->n)
		return fail_value(ld, w, "%s: has %d line%s, expected %d (one token per row of q)",
		                  shown, lines, lines == 1 ? "" : "s", p->n);
	return 0;
}

/* The root's "text" beside .npy files: n strings, or a file of n lines. */
static int check_text_source(const struct loader *ld, struct plan *p)
{
	const struct field *f = &p->root[R_TEXT];

	if (f->node == NULL)
		return 0;
	const struct where w = where_field(&p->w_root, f->index, "text");
	if (!cJSON_IsArray(f->node))
		return check_text_file(ld, f->node, &w, p);
	const int n = count_children(f->node);
	if (n != p->n)
		return fail_value(ld, &w, "expected %d strings (one per row of q), got %d", p->n,
		                  n);
	int i = 0;
	for (const cJSON *e = f->node->child; e != NULL; e = e->next, i++) {
		const struct where we = where_elem(&w, i);
		const struct field fe = {e, i};
		const char *text;
		if (check_text(ld, &fe, &we, &text) != 0)
			return -1;
	}
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

/* The heads' names: the file's, or for a generated scene the character
 * of each head. False when memory runs out. */
static bool start_head_names(const struct plan *p, struct scene *sc)
{
	const cJSON *names = p->root[R_HEAD_NAMES].node;
	if (p->heads == 1 || (names == NULL && p->source != SRC_GENERATE))
		return true;
	sc->head_names = calloc((size_t)p->heads, sizeof *sc->head_names);
	if (sc->head_names == NULL)
		return false;
	const cJSON *e = names ? names->child : NULL;
	for (int h = 0; h < p->heads; h++, e = e ? e->next : NULL) {
		sc->head_names[h] = dup_string(e ? e->valuestring : generate_head_character(h));
		if (sc->head_names[h] == NULL)
			return false;
	}
	return true;
}

/* The scene with its header fields and its arrays allocated (text
 * entries NULL), or NULL when memory runs out. */
static struct scene *scene_start(const struct loader *ld, const struct plan *p)
{
	const size_t n = (size_t)p->n, dim = (size_t)p->dim;
	struct scene *sc = calloc(1, sizeof *sc);

	if (sc == NULL)
		return NULL;
	sc->heavy = p->heavy;
	sc->recent = p->recent;
	sc->dim = p->dim;
	sc->n = p->n;
	sc->mode = p->mode;
	sc->scale = p->scale;
	sc->heads = p->heads;

	const cJSON *title = p->root[R_TITLE].node, *desc = p->root[R_DESCRIPTION].node;
	const cJSON *watch = p->root[R_WATCH].node;
	if (title != NULL) {
		sc->title = dup_string(title->valuestring);
	} else {
		/* The file's base name; a name ending in '/' keeps all of it. */
		const char *slash = strrchr(ld->name, '/');
		sc->title = dup_string(slash && slash[1] ? slash + 1 : ld->name);
	}
	sc->description = dup_string(desc ? desc->valuestring : "");
	sc->watch = dup_string(watch ? watch->valuestring : "");
	sc->text = calloc(n, sizeof *sc->text);
	/* One block per head, head after head (heads.h). */
	const size_t heads = (size_t)p->heads;
	if (p->has_v)
		sc->v = alloc_doubles(heads * n, dim);
	if (p->mode == SCENE_VECTOR) {
		sc->q = alloc_doubles(heads * n, dim);
		sc->k = alloc_doubles(heads * n, dim);
	} else {
		sc->attn = alloc_doubles(heads, scene_attn_offset(p->n));
	}
	if (!start_head_names(p, sc)) {
		scene_free(sc);
		return NULL;
	}
	if (!sc->title || !sc->description || !sc->watch || !sc->text || (p->has_v && !sc->v) ||
	    (p->mode == SCENE_VECTOR ? !sc->q || !sc->k : !sc->attn)) {
		scene_free(sc);
		return NULL;
	}
	return sc;
}

/* Head H's array of a token field (the field itself with one head). */
static const cJSON *head_of(const cJSON *node, const struct plan *p, int h)
{
	if (p->heads == 1)
		return node;
	const cJSON *e = node->child;
	while (h-- > 0)
		e = e->next;
	return e;
}

static int build_tokens(const struct loader *ld, const struct plan *p, struct scene *sc)
{
	const cJSON *tokens = p->root[R_TOKENS].node;
	const size_t dim = (size_t)p->dim;
	size_t i = 0;

	for (const cJSON *t = tokens->child; t != NULL; t = t->next, i++) {
		struct field f[T_COUNT];
		scan_fields(ld, t, &p->w_tokens, token_names, T_COUNT, f); /* checked */
		if ((sc->text[i] = dup_string(f[T_TEXT].node->valuestring)) == NULL)
			return fail_nomem(ld);
		const size_t block = (size_t)p->n * dim, tri = scene_attn_offset(p->n);
		for (int h = 0; h < p->heads; h++) {
			const size_t at = (size_t)h * block + i * dim;
			if (p->has_v)
				copy_row(sc->v + at, head_of(f[T_V].node, p, h));
			if (p->mode == SCENE_VECTOR) {
				copy_row(sc->q + at, head_of(f[T_Q].node, p, h));
				copy_row(sc->k + at, head_of(f[T_K].node, p, h));
			} else {
				copy_row(sc->attn + (size_t)h * tri + scene_attn_offset((int)i),
				         head_of(f[T_ATTN].node, p, h));
			}
		}
	}
	return 0;
}

/* Every head from the same model, each with its own character and random
 * stream (generate_head); head 0 names the tokens. */
static int build_generated(const struct loader *ld, const struct plan *p, struct scene *sc)
{
	const size_t block = (size_t)p->n * (size_t)p->dim;
	char **scratch = p->heads > 1 ? calloc((size_t)p->n, sizeof *scratch) : NULL;
	if (p->heads > 1 && scratch == NULL)
		return fail_nomem(ld);
	int rc = 0;
	for (int h = 0; h < p->heads && rc == 0; h++) {
		struct generate_params g = p->gen;
		if (p->heads > 1)
			generate_head(&g, h);
		const size_t at = (size_t)h * block;
		rc = generate_fill(&g, sc->q + at, sc->k + at, sc->v + at,
		                   h == 0 ? sc->text : scratch);
		for (int i = 0; scratch && h > 0 && i < p->n; i++) {
			free(scratch[i]);
			scratch[i] = NULL;
		}
	}
	free(scratch);
	return rc != 0 ? fail_nomem(ld) : 0;
}

static int build_npy(const struct loader *ld, struct plan *p, struct scene *sc)
{
	double *const arrays[3] = {sc->q, sc->k, sc->v};
	const cJSON *text = p->root[R_TEXT].node;
	char msg[NPY_MSG_MAX];

	for (int i = 0; i < 3; i++)
		if (npy_read(&p->npy[i].file, arrays[i], msg) != 0)
			return fail_value(ld, &p->npy[i].w, "%s: %s", p->npy[i].shown, msg);
	/* No text file: no pointer arithmetic on NULL either. */
	const char *at = p->text_file, *end = at ? at + p->text_len : NULL;
	const cJSON *e = text && cJSON_IsArray(text) ? text->child : NULL;
	for (int i = 0; i < p->n; i++) {
		if (p->text_file != NULL) {
			size_t len;
			const char *line = next_line(&at, end, &len);
			if ((sc->text[i] = malloc(len + 1)) != NULL) {
				memcpy(sc->text[i], line, len);
				sc->text[i][len] = '\0';
			}
		} else if (e != NULL) {
			sc->text[i] = dup_string(e->valuestring);
			e = e->next;
		} else {
			char name[16];
			snprintf(name, sizeof name, "t%d", i);
			sc->text[i] = dup_string(name);
		}
		if (sc->text[i] == NULL)
			return fail_nomem(ld);
	}
	return 0;
}

/* The last pass: the scene's arrays, filled from where the tokens come. */
static int build(const struct loader *ld, struct plan *p, struct scene **out)
{
	struct scene *sc = scene_start(ld, p);
	int rc;

	if (sc == NULL)
		return fail_nomem(ld);
	switch (p->source) {
	case SRC_GENERATE:
		rc = build_generated(ld, p, sc);
		break;
	case SRC_NPY:
		rc = build_npy(ld, p, sc);
		break;
	default:
		rc = build_tokens(ld, p, sc);
		break;
	}
	if (rc != 0) {
		scene_free(sc);
		return -1;
	}
	*out = sc;
	return 0;
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
	struct plan p;
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

	plan_init(&p);
	int rc = check_root(&ld, root, &p);
	if (rc == 0 && p.source == SRC_TOKENS) {
		rc = check_mode(&ld, p.root[R_TOKENS].node, &p);
		if (rc == 0)
			rc = check_scale(&ld, &p);
		if (rc == 0)
			rc = check_tokens(&ld, p.root[R_TOKENS].node, &p);
	} else if (rc == 0 && p.source == SRC_GENERATE) {
		rc = check_generate(&ld, &p);
		if (rc == 0)
			rc = check_scale(&ld, &p);
	} else if (rc == 0) {
		rc = check_npy(&ld, &p);
		if (rc == 0)
			rc = check_scale(&ld, &p);
		if (rc == 0)
			rc = check_text_source(&ld, &p);
	}
	if (rc == 0)
		rc = build(&ld, &p, out);
	plan_done(&p);
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
 * size fstat reported (0 for pipes and the like). On failure MSG says why
 * ("cannot read: ...", "cannot load: ..."), for the caller to place. */
static int read_all(int fd, size_t hint, char **buf, size_t *len, char *msg, size_t size)
{
	const size_t limit = (size_t)SCENE_MAX_FILE_BYTES + 1;
	size_t cap = hint + 1 > 4096 ? hint + 1 : 4096, used = 0;
	char *b = malloc(cap + 1);

	if (b == NULL) {
		snprintf(msg, size, "cannot load: out of memory");
		return -1;
	}
	while (used < limit) {
		if (used == cap) {
			size_t ncap = cap * 2 < limit ? cap * 2 : limit;
			char *nb = realloc(b, ncap + 1);
			if (nb == NULL) {
				free(b);
				snprintf(msg, size, "cannot load: out of memory");
				return -1;
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
			snprintf(msg, size, "cannot read: %s", strerror(e));
			return -1;
		}
		if (r == 0)
			break;
		used += (size_t)r;
	}
	if (used >= limit) {
		free(b);
		snprintf(msg, size, "cannot load: file is larger than %ld MiB",
		         SCENE_MAX_FILE_BYTES / (1024 * 1024));
		return -1;
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
	char msg[SCENE_ERROR_MAX / 2];
	int rc = read_all(fd, hint, &buf, &len, msg, sizeof msg);
	close(fd);
	if (rc != 0)
		return fail_file(err, path, "%s", msg);
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
	free(scene->watch);
	free(scene->q);
	free(scene->k);
	free(scene->v);
	free(scene->attn);
	if (scene->head_names != NULL)
		for (int h = 0; h < scene->heads; h++)
			free(scene->head_names[h]);
	free(scene->head_names);
	free(scene);
}
