/*
 * scene_root: the checks of the scene's root object.
 *
 * Its fields, the one way the tokens come ("tokens", "generate" or .npy
 * files in "q", "k" and "v"), the budgets and sizes, the heads and
 * "scale"; and the integer and number checks every part uses.
 */
#include "scene_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonloc.h"

enum int_written scene_int_written(const char *s, size_t len, long long lo, long long hi,
                                   long long *out)
{
	char digits[64]; /* the significant digits, without leading zeros */
	size_t n = 0, i = 0, after_point = 0;
	bool negative = false, point = false;

	/* cJSON reads at most 63 bytes of a number, so nothing longer gets here. */
	if (len >= sizeof digits)
		return INT_NOT_INTEGER;
	if (i < len && (s[i] == '-' || s[i] == '+'))
		negative = s[i++] == '-';
	for (; i < len; i++) {
		if (s[i] == '.' && !point) {
			point = true;
			continue;
		}
		if (s[i] < '0' || s[i] > '9')
			break;
		after_point += point;
		if (n > 0 || s[i] != '0')
			digits[n++] = s[i];
	}
	/* The exponent, saturated: a million is past every limit, and below
	 * every integer but 0. */
	long exponent = 0;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		bool negative_exp = false;
		if (++i < len && (s[i] == '-' || s[i] == '+'))
			negative_exp = s[i++] == '-';
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			if (exponent < 1000000)
				exponent = exponent * 10 + (s[i] - '0');
		if (negative_exp)
			exponent = -exponent;
	}
	if (i != len)
		return INT_NOT_INTEGER; /* not a number literal at all */
	/* The value is DIGITS times 10^scale; trailing zeros move into the
	 * scale, and an integer is left with a scale >= 0. */
	long scale = exponent - (long)after_point;
	while (n > 0 && digits[n - 1] == '0') {
		n--;
		scale++;
	}
	unsigned long long m = 0;
	if (n > 0) {
		if (scale < 0)
			return INT_NOT_INTEGER;
		/* Nineteen digits or more: past every limit (all below 2^63). */
		if ((long)n + scale > 18)
			return negative ? INT_BELOW : INT_ABOVE;
		for (size_t k = 0; k < n; k++)
			m = m * 10 + (unsigned long long)(digits[k] - '0');
		for (long k = 0; k < scale; k++)
			m *= 10;
	}
	/* Zero however written (0.000, -0, 0e-400) is the integer 0. */
	const long long v = negative ? -(long long)m : (long long)m;
	*out = v;
	return v < lo ? INT_BELOW : v > hi ? INT_ABOVE : INT_OK;
}

int scene_check_int(const struct loader *ld, const cJSON *node, const struct where *w, int min,
                    int max, int *out)
{
	size_t at, n = 0;
	if (!cJSON_IsNumber(node))
		return scene_fail_got(ld, w, node, "expected an integer >= %d", min);
	if (scene_locate(ld, w, &at) == 0)
		n = jsonloc_number_len(ld->text, ld->len, at);
	enum int_written how;
	long long v = 0;
	if (n > 0) {
		/* The number as written, not as a double rounded it: heavy
		 * 0.99999999999999999 is not 1, and 1e-400 not 0. */
		how = scene_int_written(ld->text + at, n, min, max, &v);
	} else {
		/* Compare as doubles: 1e20 must not be squeezed into an int first. */
		const double d = node->valuedouble;
		how = !(d == floor(d)) ? INT_NOT_INTEGER
		      : d < min        ? INT_BELOW
		      : d > max        ? INT_ABOVE
		                       : INT_OK;
		v = how == INT_OK ? (long long)d : 0;
	}
	if (how == INT_NOT_INTEGER || how == INT_BELOW)
		return scene_fail_got(ld, w, node, "expected an integer >= %d", min);
	if (how == INT_ABOVE)
		return scene_fail_got(ld, w, node, "must be at most %d", max);
	*out = (int)v;
	return 0;
}

int scene_check_number(const struct loader *ld, const cJSON *node, const struct where *w)
{
	if (!cJSON_IsNumber(node))
		return scene_fail_got(ld, w, node, "expected a number");
	/* cJSON reads 1e999 as inf; a scene's numbers must be finite. */
	if (!isfinite(node->valuedouble))
		return scene_fail_got(ld, w, node, "expected a finite number");
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

/* A model scene: "model" and none of the other ways of giving tokens
 * ("generate" and "text" are its own, read by scene_model.c); any other
 * scene: none of the fields only a model scene has. */
static int check_model_source(const struct loader *ld, struct plan *p)
{
	static const enum root_field others[] = {R_TOKENS, R_Q, R_K, R_V};
	const struct field *f = p->root;

	if (f[R_MODEL].node != NULL) {
		for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
			if (f[others[i]].node != NULL)
				return scene_fail_field(
				        ld, &p->w_root, f[others[i]].index,
				        "has both \"model\" and \"%s\"; a model scene's tokens are "
				        "its text's, and its q, k and v the model's",
				        scene_root_names[others[i]]);
		p->source = SRC_MODEL;
		return 1;
	}
	for (int i = R_TOKENIZER; i <= R_SEED; i++)
		if (f[i].node != NULL)
			return scene_fail_field(ld, &p->w_root, f[i].index,
			                        "\"%s\" belongs to a model scene, which names its "
			                        "\"model\"",
			                        scene_root_names[i]);
	return 0;
}

/* Exactly one way of giving the tokens; two are an error at the later. */
static int check_source(const struct loader *ld, struct plan *p)
{
	int first = -1;

	p->source = SRC_NONE;
	const int model = check_model_source(ld, p);
	if (model != 0)
		return model < 0 ? -1 : 0;
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
			return scene_fail_field(
			        ld, &p->w_root, p->root[field].index,
			        "\"text\" at the root names the tokens of .npy files; a "
			        "generated scene takes its words from \"generate\": "
			        "{\"text\": ...}");
		return scene_fail_field(
		        ld, &p->w_root, p->root[b].index,
		        "has both \"%s\" and \"%s\"; a scene gives its tokens one way: "
		        "\"tokens\", \"generate\", or .npy files in \"q\", \"k\" and "
		        "\"v\"",
		        scene_root_names[a], scene_root_names[b]);
	}
	return 0;
}

/* "layers", "heads" and "kv_heads" (1, 1 and heads by default): the
 * scene's layout. A .npy scene learns them from its files' shapes, which
 * must then agree with the ones given here (scene_npy.c). */
static int check_layout(const struct loader *ld, struct plan *p, const struct where *w)
{
	const struct field *f = p->root;
	p->layers = p->heads = 1;
	p->layout_given[0] = f[R_LAYERS].node != NULL;
	p->layout_given[1] = f[R_HEADS].node != NULL;
	p->layout_given[2] = f[R_KV_HEADS].node != NULL;
	if (f[R_LAYERS].node != NULL && scene_check_int(ld, f[R_LAYERS].node, &w[R_LAYERS], 1,
	                                                SCENE_MAX_LAYERS, &p->layers) != 0)
		return -1;
	if (f[R_HEADS].node != NULL &&
	    scene_check_int(ld, f[R_HEADS].node, &w[R_HEADS], 1, SCENE_MAX_HEADS, &p->heads) != 0)
		return -1;
	p->kv_heads = p->heads;
	if (f[R_KV_HEADS].node != NULL) {
		if (scene_check_int(ld, f[R_KV_HEADS].node, &w[R_KV_HEADS], 1, SCENE_MAX_HEADS,
		                    &p->kv_heads) != 0)
			return -1;
		/* A .npy scene's heads come from its files (scene_npy.c). */
		if (p->source != SRC_NPY && p->source != SRC_MODEL && p->heads % p->kv_heads != 0)
			return scene_fail_got(ld, &w[R_KV_HEADS], f[R_KV_HEADS].node,
			                      "must divide heads (%d)", p->heads);
	}
	const long total = (long)p->layers * p->heads;
	if (total > SCENE_MAX_QUERY_HEADS) {
		const int at = f[R_LAYERS].node != NULL ? R_LAYERS : R_HEADS;
		return scene_fail_value(
		        ld, &w[at],
		        "%d layers x %d heads = %ld query heads, more than the %d allowed",
		        p->layers, p->heads, total, SCENE_MAX_QUERY_HEADS);
	}
	return 0;
}

/* "head_names": one short string per query head of a layer (the same for
 * every layer), or one per query head of the scene. */
int scene_check_head_names(const struct loader *ld, const struct plan *p)
{
	const struct field *f = &p->root[R_HEAD_NAMES];
	const cJSON *names = f->node;
	if (names == NULL)
		return 0;
	const struct where w = scene_where_field(&p->w_root, f->index, "head_names");
	const int all = p->layers * p->heads;
	if (!cJSON_IsArray(names))
		return scene_fail_got(ld, &w, names, "expected an array of %d strings", p->heads);
	const int count = scene_count_children(names);
	if (count != p->heads && count != all)
		return scene_fail_value(
		        ld, &w,
		        p->layers == 1 ? "expected %d names (one per head), got %d"
		                       : "expected %d names (one per head of a layer) or %d "
		                         "(one per head of every layer), got %d",
		        p->heads, p->layers == 1 ? count : all, count);
	int i = 0;
	for (const cJSON *e = names->child; e != NULL; e = e->next, i++) {
		struct where we = scene_where_elem(&w, i);
		if (!cJSON_IsString(e))
			return scene_fail_got(ld, &we, e, "expected a string");
		if (strlen(e->valuestring) > SCENE_MAX_HEAD_NAME_BYTES)
			return scene_fail_value(ld, &we, "expected at most %d bytes, got %zu",
			                        SCENE_MAX_HEAD_NAME_BYTES, strlen(e->valuestring));
	}
	return 0;
}

/* Whether NAME is none of the loader's policy_names. */
static bool unknown_policy(const struct loader *ld, const char *name)
{
	for (int k = 0; ld->policy_names[k]; k++)
		if (strcmp(ld->policy_names[k], name) == 0)
			return false;
	return true;
}

/* "unknown policy "lru" (the policies: ...)" at W. */
static int fail_unknown_policy(const struct loader *ld, const struct where *w, const char *name)
{
	char q[128], list[512];
	size_t len = 0;
	list[0] = '\0';
	for (int k = 0; ld->policy_names[k] && len < sizeof list; k++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "",
		                        ld->policy_names[k]);
	jsonloc_quote(q, sizeof q, name, strlen(name), 40);
	return scene_fail_value(ld, w, "unknown policy %s (the policies: %s)", q, list);
}

/* "policies": the names of the policies to run, each one of the loader's
 * policy_names (when it has them), into P->policies. */
static int check_policies(const struct loader *ld, struct plan *p)
{
	const struct field *f = &p->root[R_POLICIES];
	const cJSON *names = f->node;
	if (names == NULL)
		return 0;
	const struct where w = scene_where_field(&p->w_root, f->index, "policies");
	if (!cJSON_IsArray(names))
		return scene_fail_got(ld, &w, names, "expected an array of policy names");
	if (names->child == NULL)
		return scene_fail_value(ld, &w,
		                        "expected at least 1 policy name, got an empty array");
	int i = 0;
	for (const cJSON *e = names->child; e != NULL; e = e->next, i++) {
		struct where we = scene_where_elem(&w, i);
		if (!cJSON_IsString(e))
			return scene_fail_got(ld, &we, e, "expected a policy name (a string)");
		if (ld->policy_names == NULL)
			continue;
		int k = 0;
		while (ld->policy_names[k] && strcmp(ld->policy_names[k], e->valuestring) != 0)
			k++;
		if (ld->policy_names[k]) {
			p->policies |= 1u << k;
			if (p->keyed < 0 && (ld->policy_keys & 1u << k)) {
				p->keyed = k;
				p->w_keyed = we;
			}
			if (p->queried < 0 && (ld->policy_queries & 1u << k)) {
				p->queried = k;
				p->w_queried = we;
			}
			continue;
		}
		return fail_unknown_policy(ld, &we, e->valuestring);
	}
	return 0;
}

/* "policy_settings": {"POLICY": {"KEY": VALUE, ...}, ...}, each VALUE an
 * integer or a string, each checked by the loader's check_setting, into
 * P->settings as "POLICY.KEY=VALUE". */
static int check_policy_settings(const struct loader *ld, struct plan *p)
{
	const struct field *f = &p->root[R_POLICY_SETTINGS];
	const cJSON *all = f->node;
	p->n_settings = 0;
	if (all == NULL)
		return 0;
	const struct where w = scene_where_field(&p->w_root, f->index, "policy_settings");
	if (!cJSON_IsObject(all))
		return scene_fail_got(ld, &w, all,
		                      "expected an object of settings by policy, e.g. "
		                      "{\"snapkv\": {\"window\": 8}}");
	int i = 0;
	for (const cJSON *pol = all->child; pol != NULL; pol = pol->next, i++) {
		const struct where wp = scene_where_field(&w, i, pol->string);
		if (ld->policy_names && unknown_policy(ld, pol->string))
			return fail_unknown_policy(ld, &wp, pol->string);
		if (!cJSON_IsObject(pol))
			return scene_fail_got(
			        ld, &wp, pol,
			        "expected an object of settings, e.g. {\"window\": 8}");
		int k = 0;
		for (const cJSON *set = pol->child; set != NULL; set = set->next, k++) {
			const struct where ws = scene_where_field(&wp, k, set->string);
			char value[24];
			const bool number = cJSON_IsNumber(set);
			if (number) {
				int v;
				if (scene_check_int(ld, set, &ws, 0, SCENE_MAX_TOKENS, &v) != 0)
					return -1;
				snprintf(value, sizeof value, "%d", v);
			} else if (cJSON_IsString(set) && strlen(set->valuestring) < sizeof value) {
				snprintf(value, sizeof value, "%s", set->valuestring);
			} else {
				return scene_fail_got(ld, &ws, set,
				                      "expected a number or a short string");
			}
			char msg[256];
			if (ld->check_setting && !ld->check_setting(pol->string, set->string, value,
			                                            number, msg, sizeof msg))
				return scene_fail_value(ld, &ws, "%s", msg);
			if (p->n_settings >= SCENE_MAX_POLICY_SETTINGS)
				return scene_fail_value(ld, &ws, "expected at most %d settings",
				                        SCENE_MAX_POLICY_SETTINGS);
			char *out = p->settings[p->n_settings];
			const int len = snprintf(out, SCENE_POLICY_SETTING_BYTES, "%s.%s=%s",
			                         pol->string, set->string, value);
			if (len < 0 || len >= SCENE_POLICY_SETTING_BYTES)
				return scene_fail_value(ld, &ws, "expected a shorter setting");
			p->n_settings++;
		}
	}
	return 0;
}

int scene_check_policy_keys(const struct loader *ld, const struct plan *p)
{
	if (p->keyed < 0 || p->mode != SCENE_ATTENTION)
		return 0;
	return scene_fail_value(ld, &p->w_keyed,
	                        "policy \"%s\" reads the keys, and an attention scene has none",
	                        ld->policy_names[p->keyed]);
}

int scene_check_prompt(const struct loader *ld, struct plan *p)
{
	const struct field *f = &p->root[R_PROMPT];
	p->prompt = p->default_prompt;
	if (f->node == NULL)
		return 0;
	const struct where w = scene_where_field(&p->w_root, f->index, "prompt");
	return scene_check_int(ld, f->node, &w, 0, p->n, &p->prompt);
}

int scene_check_values(const struct loader *ld, const struct plan *p, const struct where *w)
{
	/* Every factor is bounded (layers 256, heads 64, tokens 1,000,000, dim
	 * 4,096, rows 8,192 x 8,193 / 2): no product of them wraps 64 bits. */
	const uint64_t qh = (uint64_t)p->layers * (uint64_t)p->heads;
	const uint64_t per = p->mode == SCENE_ATTENTION ? scene_attn_offset(p->n)
	                                                : (uint64_t)p->n * (uint64_t)p->dim;
	const uint64_t values = qh * per;
	if (values <= (uint64_t)SCENE_MAX_VALUES)
		return 0;
	if (p->mode == SCENE_ATTENTION)
		return scene_fail_value(
		        ld, w,
		        "%d layers x %d heads x %llu attention weights (%d tokens) = "
		        "%llu numbers, more than the %ld allowed",
		        p->layers, p->heads, (unsigned long long)per, p->n,
		        (unsigned long long)values, SCENE_MAX_VALUES);
	return scene_fail_value(ld, w,
	                        "%d layers x %d heads x %d tokens x dim %d = %llu numbers in q, "
	                        "more than the %ld allowed",
	                        p->layers, p->heads, p->n, p->dim, (unsigned long long)values,
	                        SCENE_MAX_VALUES);
}

/* The root: its fields, where the tokens come from, the budgets and sizes,
 * and for inline tokens their count. */
int scene_check_root(const struct loader *ld, const cJSON *root, struct plan *p)
{
	static const enum root_field required[] = {R_HEAVY, R_RECENT, R_DIM};
	struct field *f = p->root;
	struct where w[R_COUNT];

	p->w_root = scene_where_root();
	if (!cJSON_IsObject(root))
		return scene_fail_got(ld, &p->w_root, root, "expected a JSON object");
	if (scene_scan_fields(ld, root, &p->w_root, scene_root_names, R_COUNT, f) != 0)
		return -1;
	if (check_source(ld, p) != 0)
		return -1;
	/* A model scene's dim is its model's head size. */
	for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
		if (f[required[i]].node == NULL &&
		    !(required[i] == R_DIM && p->source == SRC_MODEL))
			return scene_fail_value(ld, &p->w_root, "missing required field \"%s\"",
			                        scene_root_names[required[i]]);
	if (p->source == SRC_NONE)
		return scene_fail_value(ld, &p->w_root,
		                        "missing required field \"tokens\" (or \"generate\", .npy "
		                        "files in \"q\", \"k\" and \"v\", or a \"model\")");
	if (p->source == SRC_NPY)
		for (int i = R_Q; i <= R_V; i++)
			if (f[i].node == NULL)
				return scene_fail_value(
				        ld, &p->w_root,
				        "missing required field \"%s\" (a scene that reads "
				        ".npy files names one for each of \"q\", \"k\" and "
				        "\"v\")",
				        scene_root_names[i]);
	for (int i = 0; i < R_COUNT; i++)
		if (f[i].node != NULL)
			w[i] = scene_where_field(&p->w_root, f[i].index, scene_root_names[i]);

	for (int i = R_TITLE; i <= R_WATCH; i++)
		if (f[i].node != NULL && !cJSON_IsString(f[i].node))
			return scene_fail_got(ld, &w[i], f[i].node, "expected a string");
	if (f[R_WATCH].node != NULL && strlen(f[R_WATCH].node->valuestring) > SCENE_MAX_WATCH_BYTES)
		return scene_fail_value(
		        ld, &w[R_WATCH], "expected at most %d bytes of text, got %zu",
		        SCENE_MAX_WATCH_BYTES, strlen(f[R_WATCH].node->valuestring));
	if (f[R_LESSON].node != NULL && !cJSON_IsBool(f[R_LESSON].node))
		return scene_fail_got(ld, &w[R_LESSON], f[R_LESSON].node, "expected true or false");
	if (scene_check_int(ld, f[R_HEAVY].node, &w[R_HEAVY], 0, SCENE_MAX_BUDGET, &p->heavy) !=
	            0 ||
	    scene_check_int(ld, f[R_RECENT].node, &w[R_RECENT], 0, SCENE_MAX_BUDGET, &p->recent) !=
	            0)
		return -1;
	if (p->heavy + p->recent < 1)
		return scene_fail_value(ld, &w[R_RECENT],
		                        "heavy + recent must be at least 1, got %d + %d", p->heavy,
		                        p->recent);
	if (f[R_DIM].node != NULL &&
	    scene_check_int(ld, f[R_DIM].node, &w[R_DIM], 1, SCENE_MAX_DIM, &p->dim) != 0)
		return -1;
	if (check_layout(ld, p, w) != 0)
		return -1;
	if (f[R_PROMPT].node != NULL && scene_check_int(ld, f[R_PROMPT].node, &w[R_PROMPT], 0,
	                                                SCENE_MAX_TOKENS, &p->prompt) != 0)
		return -1;
	/* Compress every N steps (design §2), 1 or more; absent: every step. */
	if (f[R_INTERVAL].node != NULL && scene_check_int(ld, f[R_INTERVAL].node, &w[R_INTERVAL], 1,
	                                                  SCENE_MAX_TOKENS, &p->interval) != 0)
		return -1;
	if (p->source != SRC_NPY && p->source != SRC_MODEL && scene_check_head_names(ld, p) != 0)
		return -1;
	if (check_policies(ld, p) != 0 || check_policy_settings(ld, p) != 0)
		return -1;
	if (p->source != SRC_TOKENS)
		return 0;

	const cJSON *tokens = f[R_TOKENS].node;
	p->w_tokens = w[R_TOKENS];
	if (!cJSON_IsArray(tokens))
		return scene_fail_got(ld, &p->w_tokens, tokens, "expected an array of tokens");
	p->n = scene_count_children(tokens);
	if (p->n == 0)
		return scene_fail_value(ld, &p->w_tokens,
		                        "expected at least 1 token, got an empty array");
	if (p->n > SCENE_MAX_TOKENS)
		return scene_fail_value(ld, &p->w_tokens, "expected at most %d tokens, got %d",
		                        SCENE_MAX_TOKENS, p->n);
	return 0;
}

int scene_check_scale(const struct loader *ld, struct plan *p)
{
	const struct field *f = &p->root[R_SCALE];

	p->scale = 1.0 / sqrt((double)p->dim);
	if (f->node == NULL)
		return 0;
	if (p->mode == SCENE_ATTENTION)
		return scene_fail_field(
		        ld, &p->w_root, f->index,
		        "\"scale\" applies to vector scenes only, and this one gives "
		        "\"attn\" rows");
	struct where w = scene_where_field(&p->w_root, f->index, "scale");
	if (scene_check_number(ld, f->node, &w) != 0)
		return -1;
	if (!(f->node->valuedouble > 0.0) || f->node->valuedouble > SCENE_MAX_MAGNITUDE)
		return scene_fail_got(ld, &w, f->node, "expected a number > 0 and at most 1e30");
	p->scale = f->node->valuedouble;
	return 0;
}

/* KEY as a step number 1 .. N written plainly (no sign, no leading zero),
 * or -1. */
static long note_step(const char *key, int n)
{
	if (key == NULL || key[0] < '1' || key[0] > '9')
		return -1;
	long step = 0;
	for (const char *c = key; *c; c++) {
		if (*c < '0' || *c > '9' || step > n)
			return -1;
		step = step * 10 + (*c - '0');
	}
	return step <= n ? step : -1;
}

int scene_check_notes(const struct loader *ld, const struct plan *p)
{
	const struct field *fl = &p->root[R_NOTES];
	if (fl->node == NULL)
		return 0;
	const struct where w = scene_where_field(&p->w_root, fl->index, "notes");
	if (!cJSON_IsObject(fl->node))
		return scene_fail_got(ld, &w, fl->node,
		                      "expected an object of step notes, {\"STEP\": \"text\"}");
	/* The steps that have a note so far: a note twice is found at once
	 * however many there are. */
	unsigned char *seen = calloc((size_t)p->n + 1, 1);
	if (seen == NULL)
		return scene_fail_nomem(ld);
	int index = 0, rc = 0;
	for (const cJSON *m = fl->node->child; m != NULL && rc == 0; m = m->next, index++) {
		char q[128];
		jsonloc_quote(q, sizeof q, m->string, strlen(m->string), 40);
		const long step = note_step(m->string, p->n);
		const struct where wm = scene_where_field(&w, index, m->string);
		if (index == SCENE_MAX_NOTES)
			rc = scene_fail_field(ld, &w, index, "expected at most %d notes",
			                      SCENE_MAX_NOTES);
		else if (step < 0)
			rc = scene_fail_field(
			        ld, &w, index,
			        "expected a step number from 1 to %d as the key, got %s", p->n, q);
		else if (seen[step])
			rc = scene_fail_field(ld, &w, index, "step %ld has a note already", step);
		else if (!cJSON_IsString(m))
			rc = scene_fail_got(ld, &wm, m, "expected a string");
		else if (strlen(m->valuestring) > SCENE_MAX_WATCH_BYTES)
			rc = scene_fail_value(ld, &wm, "expected at most %d bytes of text, got %zu",
			                      SCENE_MAX_WATCH_BYTES, strlen(m->valuestring));
		else
			seen[step] = 1;
	}
	free(seen);
	return rc;
}
