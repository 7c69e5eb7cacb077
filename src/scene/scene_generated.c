/*
 * scene_generated: the checks of a "generate" object.
 *
 * Every field of the seeded model (generate.h) and of its sinks,
 * locality, topics and needles, then whether dim holds the model's
 * channels. The parameters are kept in the plan, pointing into the cJSON
 * tree, for generate.c to compute the tokens in the last pass.
 */
#include "scene_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonloc.h"

/* X(ID, name): the fields of "generate" and of the objects inside it. */
#define GENERATE_FIELDS(X)      \
	X(COUNT, "count")       \
	X(SEED, "seed")         \
	X(TEXT, "text")         \
	X(NOISE, "noise")       \
	X(SINKS, "sinks")       \
	X(LOCALITY, "locality") \
	X(TOPICS, "topics")     \
	X(NEEDLES, "needles")
#define SINK_FIELDS(X)    \
	X(COUNT, "count") \
	X(STRENGTH, "strength")
#define LOCALITY_FIELDS(X)      \
	X(STRENGTH, "strength") \
	X(WIDTH, "width")       \
	X(PAIRS, "pairs")
#define TOPIC_FIELDS(X)           \
	X(RATE, "rate")           \
	X(POSITIONS, "positions") \
	X(STRENGTH, "strength")   \
	X(TEXT, "text")
/* pos and query_at are required, in this order. */
#define NEEDLE_FIELDS(X)        \
	X(POS, "pos")           \
	X(QUERY_AT, "query_at") \
	X(STRENGTH, "strength") \
	X(TEXT, "text")

enum gen_field {
#define X(id, name) G_##id,
	GENERATE_FIELDS(X)
#undef X
	        G_N
};
static const char *const gen_names[G_N] = {
#define X(id, name) [G_##id] = name,
        GENERATE_FIELDS(X)
#undef X
};
enum sink_field {
#define X(id, name) S_##id,
	SINK_FIELDS(X)
#undef X
	        S_N
};
static const char *const sink_names[S_N] = {
#define X(id, name) [S_##id] = name,
        SINK_FIELDS(X)
#undef X
};
enum loc_field {
#define X(id, name) L_##id,
	LOCALITY_FIELDS(X)
#undef X
	        L_N
};
static const char *const loc_names[L_N] = {
#define X(id, name) [L_##id] = name,
        LOCALITY_FIELDS(X)
#undef X
};
enum topic_field {
#define X(id, name) TP_##id,
	TOPIC_FIELDS(X)
#undef X
	        TP_N
};
static const char *const topic_names[TP_N] = {
#define X(id, name) [TP_##id] = name,
        TOPIC_FIELDS(X)
#undef X
};
enum needle_field {
#define X(id, name) N_##id,
	NEEDLE_FIELDS(X)
#undef X
	        N_N
};
static const char *const needle_names[N_N] = {
#define X(id, name) [N_##id] = name,
        NEEDLE_FIELDS(X)
#undef X
};

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
		return scene_fail_got(ld, w, node, "expected an object such as %s", example);
	if (scene_scan_fields(ld, node, w, names, count, f) != 0)
		return -1;
	for (int i = 0; i < count; i++)
		if (f[i].node != NULL)
			wf[i] = scene_where_field(w, f[i].index, names[i]);
	return 0;
}

/* An optional number from LO to HI (LO excluded when OPEN); *OUT keeps
 * its default when the field is absent. */
static int check_real(const struct loader *ld, const struct field *f, const struct where *w,
                      double lo, double hi, bool open, double *out)
{
	if (f->node == NULL)
		return 0;
	if (scene_check_number(ld, f->node, w) != 0)
		return -1;
	const double x = f->node->valuedouble;
	if (!(open ? x > lo : x >= lo) || !(x <= hi)) {
		char a[32], b[32];
		scene_format_double(a, sizeof a, "%.15g", lo);
		scene_format_double(b, sizeof b, "%.15g", hi);
		if (open)
			return scene_fail_got(ld, w, f->node,
			                      "expected a number > %s and at most %s", a, b);
		return scene_fail_got(ld, w, f->node, "expected a number from %s to %s", a, b);
	}
	*out = x;
	return 0;
}

/* An optional token text: a string of at most SCENE_MAX_TEXT_BYTES. */
int scene_check_text(const struct loader *ld, const struct field *f, const struct where *w,
                     const char **out)
{
	if (f->node == NULL)
		return 0;
	if (!cJSON_IsString(f->node))
		return scene_fail_got(ld, w, f->node, "expected a string");
	const size_t bytes = strlen(f->node->valuestring);
	if (bytes > SCENE_MAX_TEXT_BYTES)
		return scene_fail_value(ld, w, "expected at most %d bytes of text, got %zu",
		                        SCENE_MAX_TEXT_BYTES, bytes);
	*out = f->node->valuestring;
	return 0;
}

static int check_words(const struct loader *ld, const cJSON *node, const struct where *w)
{
	if (!cJSON_IsString(node))
		return scene_fail_got(ld, w, node, "expected a string of words");
	const size_t bytes = strlen(node->valuestring);
	size_t longest;
	if (bytes > SCENE_MAX_WORDS_BYTES)
		return scene_fail_value(ld, w, "expected at most %d bytes of words, got %zu",
		                        SCENE_MAX_WORDS_BYTES, bytes);
	if (generate_count_words(node->valuestring, &longest) == 0)
		return scene_fail_got(ld, w, node, "expected at least one word");
	if (longest > SCENE_MAX_TEXT_BYTES)
		return scene_fail_value(
		        ld, w, "has a word of %zu bytes; a token's text is at most %d bytes",
		        longest, SCENE_MAX_TEXT_BYTES);
	return 0;
}

static int check_seed(const struct loader *ld, const cJSON *node, const struct where *w,
                      uint64_t *out)
{
	const double v = node->valuedouble;
	size_t at, n = 0;
	long long seed = 0;
	bool ok;

	if (cJSON_IsNumber(node) && scene_locate(ld, w, &at) == 0)
		n = jsonloc_number_len(ld->text, ld->len, at);
	if (n > 0) /* as written: 2^53 + 1 is not 2^53, though a double says so */
		ok = scene_int_written(ld->text + at, n, 0, (long long)GENERATE_MAX_SEED, &seed) ==
		     INT_OK;
	else
		ok = cJSON_IsNumber(node) && v == floor(v) && v >= 0 && v <= GENERATE_MAX_SEED;
	if (!ok)
		return scene_fail_got(ld, w, node, "expected an integer from 0 to 2^53 (%.0f)",
		                      GENERATE_MAX_SEED);
	*out = n > 0 ? (uint64_t)seed : (uint64_t)v;
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
	    scene_check_int(ld, f[S_COUNT].node, &wf[S_COUNT], 0, g->count, &g->sink_count) != 0)
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
	if (f[L_PAIRS].node != NULL && scene_check_int(ld, f[L_PAIRS].node, &wf[L_PAIRS], 1,
	                                               GENERATE_MAX_PAIRS, &g->loc_pairs) != 0)
		return -1;
	return 0;
}

/* Topic positions: integers in [0, count), each once. */
static int check_positions(const struct loader *ld, const cJSON *node, const struct where *w,
                           struct plan *p)
{
	struct generate_params *g = &p->gen;

	if (!cJSON_IsArray(node))
		return scene_fail_got(ld, w, node, "expected an array of positions");
	const int n = scene_count_children(node);
	if (n > g->count)
		return scene_fail_value(ld, w,
		                        "expected at most %d positions (one per token), got %d",
		                        g->count, n);
	if (n == 0)
		return 0;
	/* n <= count <= SCENE_MAX_TOKENS: both bounded before they exist. */
	p->topic_positions = malloc((size_t)n * sizeof *p->topic_positions);
	unsigned char *seen = calloc((size_t)g->count, 1);
	if (p->topic_positions == NULL || seen == NULL) {
		free(seen);
		return scene_fail_nomem(ld);
	}
	int i = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, i++) {
		struct where we = scene_where_elem(w, i);
		int pos;
		if (scene_check_int(ld, e, &we, 0, g->count - 1, &pos) != 0) {
			free(seen);
			return -1;
		}
		if (seen[pos]) {
			int first = 0;
			while (p->topic_positions[first] != pos)
				first++;
			free(seen);
			return scene_fail_value(
			        ld, &we, "position %d is listed twice (also at [%d])", pos, first);
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
	return scene_check_text(ld, &f[TP_TEXT], &wf[TP_TEXT], &g->topic_text);
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
			return scene_fail_value(ld, w, "missing required field \"%s\"",
			                        needle_names[i]);
	out->strength = GEN_NEEDLE_STRENGTH;
	out->text = NULL;
	if (scene_check_int(ld, f[N_POS].node, &wf[N_POS], 0, count - 2, &out->pos) != 0)
		return -1;
	const cJSON *q = f[N_QUERY_AT].node;
	if (scene_check_int(ld, q, &wf[N_QUERY_AT], 0, SCENE_MAX_TOKENS, &out->query_at) != 0)
		return -1;
	if (out->query_at <= out->pos || out->query_at >= count)
		return scene_fail_got(
		        ld, &wf[N_QUERY_AT], q,
		        "expected a position after \"pos\" and before \"count\" (%d to %d)",
		        out->pos + 1, count - 1);
	if (check_real(ld, &f[N_STRENGTH], &wf[N_STRENGTH], -GENERATE_MAX_STRENGTH,
	               GENERATE_MAX_STRENGTH, false, &out->strength) != 0)
		return -1;
	return scene_check_text(ld, &f[N_TEXT], &wf[N_TEXT], &out->text);
}

static int check_needles(const struct loader *ld, const cJSON *node, const struct where *w,
                         struct plan *p)
{
	struct generate_params *g = &p->gen;

	if (!cJSON_IsArray(node))
		return scene_fail_got(ld, w, node, "expected an array of needles");
	const int n = scene_count_children(node);
	if (n > GENERATE_MAX_NEEDLES)
		return scene_fail_value(ld, w, "expected at most %d needles, got %d",
		                        GENERATE_MAX_NEEDLES, n);
	if (n > 0 && g->count < 2)
		return scene_fail_value(
		        ld, w,
		        "a needle needs at least 2 tokens (one to plant it, a later one "
		        "to ask for it), and count is %d",
		        g->count);
	int i = 0;
	for (const cJSON *e = node->child; e != NULL; e = e->next, i++) {
		struct where we = scene_where_elem(w, i);
		if (check_needle(ld, e, &we, g->count, &p->needles[i]) != 0)
			return -1;
	}
	g->needles = p->needles;
	g->n_needles = n;
	return 0;
}

/* "generate": every field, then whether dim holds the model's channels. */
int scene_check_generate(const struct loader *ld, struct plan *p)
{
	const cJSON *node = p->root[R_GENERATE].node;
	const struct where w = scene_where_field(&p->w_root, p->root[R_GENERATE].index, "generate");
	struct generate_params *g = &p->gen;
	struct field f[G_N];
	struct where wf[G_N];

	if (!cJSON_IsObject(node))
		return scene_fail_got(ld, &w, node,
		                      "expected an object with \"count\", \"seed\" and the "
		                      "model's fields");
	/* A root field written inside "generate" (dim, most likely): say where
	 * it goes rather than only that it is unknown here. */
	int index = 0;
	for (const cJSON *m = node->child; m != NULL; m = m->next, index++)
		for (int r = R_TITLE; r <= R_SCALE; r++)
			if (m->string != NULL && strcmp(m->string, scene_root_names[r]) == 0)
				return scene_fail_field(
				        ld, &w, index,
				        "\"%s\" belongs at the root of the scene, beside "
				        "\"generate\"",
				        scene_root_names[r]);
	if (check_object(ld, node, &w, "", gen_names, G_N, f, wf) != 0)
		return -1;
	for (int i = G_COUNT; i <= G_SEED; i++)
		if (f[i].node == NULL)
			return scene_fail_value(ld, &w, "missing required field \"%s\"",
			                        gen_names[i]);

	memset(g, 0, sizeof *g);
	g->dim = p->dim;
	g->noise = GEN_NOISE;
	if (scene_check_int(ld, f[G_COUNT].node, &wf[G_COUNT], 1, SCENE_MAX_TOKENS, &g->count) !=
	            0 ||
	    check_seed(ld, f[G_SEED].node, &wf[G_SEED], &g->seed) != 0)
		return -1;
	/* Each factor is bounded, so the product fits 64 bits. */
	const uint64_t values =
	        (uint64_t)g->count * (uint64_t)p->dim * (uint64_t)p->heads * (uint64_t)p->layers;
	if (values > (uint64_t)SCENE_MAX_VALUES && p->heads == 1 && p->layers == 1)
		return scene_fail_value(
		        ld, &wf[G_COUNT],
		        "%d tokens x dim %d = %llu numbers in each of q, k and v, more than "
		        "the %ld allowed",
		        g->count, p->dim, (unsigned long long)values, SCENE_MAX_VALUES);
	if (values > (uint64_t)SCENE_MAX_VALUES && p->layers == 1)
		return scene_fail_value(
		        ld, &wf[G_COUNT],
		        "%d tokens x dim %d x %d heads = %llu numbers in each of q, k "
		        "and v, more than the %ld allowed",
		        g->count, p->dim, p->heads, (unsigned long long)values, SCENE_MAX_VALUES);
	if (values > (uint64_t)SCENE_MAX_VALUES)
		return scene_fail_value(
		        ld, &wf[G_COUNT],
		        "%d tokens x dim %d x %d layers x %d heads = %llu numbers in q, more "
		        "than the %ld allowed",
		        g->count, p->dim, p->layers, p->heads, (unsigned long long)values,
		        SCENE_MAX_VALUES);
	/* What the generated q, k and v take as doubles, against the bound on
	 * memory (scene_options.max_memory) before a number of them is made. */
	const int kv = p->kv_heads > 0 ? p->kv_heads : p->heads;
	const double numbers = (double)values + 2.0 * g->count * p->dim * kv * p->layers;
	const double bytes = numbers * sizeof(double);
	if (ld->max_memory > 0 && bytes > ld->max_memory) {
		char msg[160];
		snprintf(msg, sizeof msg,
		         "\"generate\": %d tokens x dim %d: %.1f million numbers in q, k and v, "
		         "as doubles",
		         g->count, p->dim, numbers / 1e6);
		p->too_large = true;
		return scene_fail_too_large(ld->err, SCENE_ERROR_MAX, ld->needed, bytes, msg);
	}
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
		const struct where wd = scene_where_field(&p->w_root, p->root[R_DIM].index, "dim");
		return scene_fail_value(ld, &wd, "\"generate\" needs dim >= %d (%s), got %d", need,
		                        parts, p->dim);
	}
	p->n = g->count;
	p->mode = SCENE_VECTOR;
	p->has_v = true;
	return 0;
}
