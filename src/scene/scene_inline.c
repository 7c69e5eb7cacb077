/*
 * scene_inline: the checks of inline tokens ("tokens").
 *
 * Two passes over the tokens: the first sorts each token's fields and
 * finds the scene's mode (attention rows or q, k and v vectors), the
 * second checks every token's fields, per layer and per head when there
 * are several.
 */
#include "scene_impl.h"

#include <math.h>
#include <string.h>

#define ATTN_SUM_TOLERANCE 1e-6

/* q, k and v stay within SCENE_MAX_MAGNITUDE, so that no dot product or
 * squared length of dim of them can overflow to infinity (and the softmax
 * and the figures to NaN). */
static int check_magnitude(const struct loader *ld, const cJSON *node, const struct where *w)
{
	if (fabs(node->valuedouble) > SCENE_MAX_MAGNITUDE)
		return scene_fail_got(ld, w, node, "expected a number from -1e30 to 1e30");
	return 0;
}

static int check_vector(const struct loader *ld, const cJSON *node, const struct where *w, int dim)
{
	if (!cJSON_IsArray(node))
		return scene_fail_got(ld, w, node, "expected an array of %d number%s", dim,
		                      dim == 1 ? "" : "s");
	int n = scene_count_children(node);
	if (n != dim)
		return scene_fail_value(ld, w, "expected %d number%s, got %d", dim,
		                        dim == 1 ? "" : "s", n);
	int j = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, j++) {
		struct where we = scene_where_elem(w, j);
		if (scene_check_number(ld, e, &we) != 0 || check_magnitude(ld, e, &we) != 0)
			return -1;
	}
	return 0;
}

/* Token I's attention row: i + 1 positive weights summing to 1. */
static int check_attn(const struct loader *ld, const cJSON *node, const struct where *w, int i)
{
	if (!cJSON_IsArray(node))
		return scene_fail_got(ld, w, node, "expected an array of %d weight%s", i + 1,
		                      i == 0 ? "" : "s");
	int n = scene_count_children(node);
	if (n != i + 1)
		return scene_fail_value(ld, w,
		                        "expected %d weight%s for the token at position %d, got %d",
		                        i + 1, i == 0 ? "" : "s", i, n);
	double sum = 0.0;
	int j = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, j++) {
		struct where we = scene_where_elem(w, j);
		if (scene_check_number(ld, e, &we) != 0)
			return -1;
		if (!(e->valuedouble > 0.0))
			return scene_fail_got(ld, &we, e, "expected a weight > 0");
		sum += e->valuedouble;
	}
	if (!(fabs(sum - 1.0) <= ATTN_SUM_TOLERANCE)) {
		char got[64];
		scene_format_double(got, sizeof got, "%.9g", sum);
		return scene_fail_value(ld, w, "weights sum to %s, expected 1 (within 1e-6)", got);
	}
	return 0;
}

/*
 * First pass over the tokens: each is an object with known fields, and
 * they agree on one mode. The first token that gives "attn", "q" or "k"
 * sets the mode; "v" and "text" belong to both modes and say nothing.
 */
int scene_check_mode(const struct loader *ld, const cJSON *tokens, struct plan *p)
{
	int mode_token = -1;
	const char *mode_field = NULL;
	int i = 0;

	for (const cJSON *t = tokens->child; t != NULL; t = t->next, i++) {
		struct where wt = scene_where_elem(&p->w_tokens, i);
		struct field f[T_COUNT];
		if (!cJSON_IsObject(t))
			return scene_fail_got(ld, &wt, t, "expected a token object");
		if (scene_scan_fields(ld, t, &wt, scene_token_names, T_COUNT, f) != 0)
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
			return scene_fail_field(
			        ld, &wt, later,
			        "has both \"attn\" and \"%s\"; a scene gives either "
			        "attention rows (\"attn\") or vectors (\"q\", \"k\", \"v\")",
			        scene_token_names[vec]);
		}
		if (!attn && vec == T_COUNT)
			continue;
		enum scene_mode mode = attn ? SCENE_ATTENTION : SCENE_VECTOR;
		const char *name = scene_token_names[attn ? T_ATTN : vec];
		if (mode_token < 0) {
			mode_token = i;
			mode_field = name;
			p->mode = mode;
		} else if (mode != p->mode) {
			return scene_fail_field(
			        ld, &wt, f[attn ? T_ATTN : vec].index,
			        "has \"%s\" but tokens[%d] has \"%s\"; a scene gives "
			        "either attention rows (\"attn\") or vectors (\"q\", \"k\", "
			        "\"v\")",
			        name, mode_token, mode_field);
		}
	}
	if (mode_token < 0) {
		struct where w0 = scene_where_elem(&p->w_tokens, 0);
		return scene_fail_value(
		        ld, &w0,
		        "missing \"attn\" (for an attention scene) or \"q\", \"k\" and "
		        "\"v\" (for a vector scene)");
	}
	if (p->mode == SCENE_ATTENTION && p->n > SCENE_MAX_ATTN_TOKENS)
		return scene_fail_value(ld, &p->w_tokens,
		                        "an attention scene has at most %d tokens, got %d",
		                        SCENE_MAX_ATTN_TOKENS, p->n);
	return 0;
}

typedef int check_fn(const struct loader *ld, const cJSON *node, const struct where *w, int arg);

static int check_attn_at(const struct loader *ld, const cJSON *node, const struct where *w, int i)
{
	return check_attn(ld, node, w, i);
}

/* With COUNT == 1, NODE itself; with more, an array of one per head
 * (WHAT: "head", or "key/value head" for k and v when heads share them). */
static int check_per_head(const struct loader *ld, const cJSON *node, const struct where *w,
                          int count, const char *what, check_fn *check, int arg)
{
	if (count == 1)
		return check(ld, node, w, arg);
	if (!cJSON_IsArray(node) || (node->child && !cJSON_IsArray(node->child)))
		return scene_fail_got(ld, w, node, "expected an array of %d arrays (one per %s)",
		                      count, what);
	const int got = scene_count_children(node);
	if (got != count)
		return scene_fail_value(ld, w, "expected %d arrays (one per %s), got %d", count,
		                        what, got);
	int h = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, h++) {
		struct where we = scene_where_elem(w, h);
		if (check(ld, e, &we, arg) != 0)
			return -1;
	}
	return 0;
}

/* A token's field: with one layer what check_per_head takes, with more
 * an array of one such per layer. KV: k or v, one per key/value head. */
static int check_layered(const struct loader *ld, const cJSON *node, const struct where *w,
                         const struct plan *p, bool kv, check_fn *check, int arg)
{
	const int count = kv ? p->kv_heads : p->heads;
	const char *what = kv && p->kv_heads != p->heads ? "key/value head" : "head";
	if (p->layers == 1)
		return check_per_head(ld, node, w, count, what, check, arg);
	if (!cJSON_IsArray(node) || (node->child && !cJSON_IsArray(node->child)))
		return scene_fail_got(ld, w, node, "expected an array of %d arrays (one per layer)",
		                      p->layers);
	const int got = scene_count_children(node);
	if (got != p->layers)
		return scene_fail_value(ld, w, "expected %d arrays (one per layer), got %d",
		                        p->layers, got);
	int l = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, l++) {
		struct where we = scene_where_elem(w, l);
		if (check_per_head(ld, e, &we, count, what, check, arg) != 0)
			return -1;
	}
	return 0;
}

/* Second pass: every token's own fields, in file order. */
int scene_check_tokens(const struct loader *ld, const cJSON *tokens, struct plan *p)
{
	int i = 0;

	for (const cJSON *t = tokens->child; t != NULL; t = t->next, i++) {
		struct where wt = scene_where_elem(&p->w_tokens, i);
		struct field f[T_COUNT];
		struct where w[T_COUNT];
		scene_scan_fields(ld, t, &wt, scene_token_names, T_COUNT,
		                  f); /* passed in scene_check_mode */
		for (int k = 0; k < T_COUNT; k++)
			if (f[k].node != NULL)
				w[k] = scene_where_field(&wt, f[k].index, scene_token_names[k]);

		if (f[T_TEXT].node == NULL)
			return scene_fail_value(ld, &wt, "missing required field \"text\"");
		if (!cJSON_IsString(f[T_TEXT].node))
			return scene_fail_got(ld, &w[T_TEXT], f[T_TEXT].node, "expected a string");
		size_t bytes = strlen(f[T_TEXT].node->valuestring);
		if (bytes > SCENE_MAX_TEXT_BYTES)
			return scene_fail_value(ld, &w[T_TEXT],
			                        "expected at most %d bytes of text, got %zu",
			                        SCENE_MAX_TEXT_BYTES, bytes);

		if (p->mode == SCENE_VECTOR) {
			for (int k = T_Q; k <= T_V; k++) {
				if (f[k].node == NULL)
					return scene_fail_value(ld, &wt,
					                        "missing required field \"%s\"",
					                        scene_token_names[k]);
				if (check_layered(ld, f[k].node, &w[k], p, k != T_Q, check_vector,
				                  p->dim) != 0)
					return -1;
			}
			continue;
		}

		if (f[T_ATTN].node == NULL)
			return scene_fail_value(ld, &wt, "missing required field \"attn\"");
		if (check_layered(ld, f[T_ATTN].node, &w[T_ATTN], p, false, check_attn_at, i) != 0)
			return -1;
		bool has_v = f[T_V].node != NULL;
		if (i == 0)
			p->has_v = has_v;
		else if (has_v && !p->has_v)
			return scene_fail_field(
			        ld, &wt, f[T_V].index,
			        "has \"v\" but tokens[0] has none; give \"v\" to every "
			        "token or to none");
		else if (!has_v && p->has_v)
			return scene_fail_value(
			        ld, &wt,
			        "missing \"v\", which tokens[0] has; give \"v\" to every "
			        "token or to none");
		if (has_v &&
		    check_layered(ld, f[T_V].node, &w[T_V], p, true, check_vector, p->dim) != 0)
			return -1;
	}
	if (p->mode == SCENE_VECTOR)
		p->has_v = true;
	return 0;
}
