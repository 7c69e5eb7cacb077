/*
 * policy: the eviction policies a cache can follow, side by side.
 *
 * Every policy runs its own cache through design §2 steps 1-5 (append,
 * logits, softmax over what it holds, output, its own accumulated scores)
 * and then evicts by its own rule with the same total budget B = heavy +
 * recent. A policy is a const struct holding everything the rest of the
 * program knows about it: its names, its rule, its regions and their
 * budgets, how to word an eviction and when a token counts as promoted. It
 * holds no state and does no I/O. Adding one is a file
 * (src/engine/policy_NAME.c), its line in POLICIES below and its line in
 * src/engine/meson.build (docs/policies.md, "Adding a policy").
 */
#ifndef H2O_POLICY_H
#define H2O_POLICY_H

#include <stdbool.h>
#include <stddef.h>

/* X(ID, name): POLICY_ID, and NAME, the file's suffix and the name of the
 * struct policy it defines (policy_NAME). The order is the order of the
 * report's rows, of the trace's keys after h2o and full, and of the
 * compare key's cycle. */
#define POLICIES(X)                           \
	X(FULL, full)                         \
	X(H2O, h2o)                           \
	X(WINDOW, window)                     \
	X(STREAMING, streaming)               \
	X(TOVA, tova)                         \
	X(KNORM, knorm)                       \
	X(SNAPKV, snapkv)                     \
	X(SNAPKV_WINDOW, snapkv_window)       \
	X(PYRAMIDKV, pyramidkv)               \
	X(PYRAMIDKV_WINDOW, pyramidkv_window) \
	X(ADAKV, adakv)                       \
	X(ADAKV_WINDOW, adakv_window)         \
	X(OBSERVED, observed)                 \
	X(OBSERVED_WINDOW, observed_window)   \
	X(RANDOM, random)                     \
	X(KEYDIFF, keydiff)                   \
	X(EXPECTED, expected)                 \
	POLICIES_TEST(X)

/* The test build of tests/meson.build adds the toy policy of
 * tests/toy_policy.c, to prove that a policy needs nothing more. */
#ifdef H2O_TEST_TOY_POLICY
#define POLICIES_TEST(X) X(TOY, toy)
#else
#define POLICIES_TEST(X)
/* The random policy's draw for position POS of layer LAYER's key/value
 * head KV_HEAD: splitmix64 seeded with 42 XOR (LAYER << 48 | KV_HEAD << 32 |
 * POS), the top 53 bits of its first output over 2^53, in [0, 1). */
double policy_random_draw(int layer, int kv_head, int pos);

#endif

enum policy_id {
#define X(id, name) POLICY_##id,
	POLICIES(X)
#undef X
	        POLICY_COUNT
};

struct policy_rule;

/* How a SnapKV-scored policy pools its scores along the positions. */
enum policy_pool {
	POLICY_POOL_MEAN, /* kvpress' avg_pool1d (zero padding, divided by the kernel) */
	POLICY_POOL_MAX,  /* KVCache-Factory's maxpool (max_pool1d: the padding never wins) */
};

/* How AdaKV splits a layer's budget among its key/value heads. */
enum policy_alloc {
	POLICY_ALLOC_KVPRESS, /* kvpress' AdaKVPress: a safeguard, then the lowest of all go */
	POLICY_ALLOC_AUTHORS, /* FFY0/AdaKV's AdaptiveSnapKVCluster: a floor plus a share */
};

/* Whose cache PyramidKV keeps under grouped heads (KVCache-Factory's
 * kv_cache_granularity). */
enum policy_granularity {
	POLICY_GRANULARITY_KV_HEAD,    /* one per key/value head, the group's mean scores */
	POLICY_GRANULARITY_QUERY_HEAD, /* one per query head (the keys repeated), its own */
};

/* The settings researchers vary, per policy (h2o/policy_settings.h, which
 * reads and prints them): 0 in a field is the policy's default. Only a
 * policy with observe_window takes window, kernel and pool. */
struct policy_setting {
	int window;                          /* SnapKV's observation window (observe_window: 64) */
	int kernel;                          /* its pooling kernel, odd (5) */
	enum policy_pool pool;               /* its pooling (mean) */
	enum policy_alloc alloc;             /* AdaKV's budget split (kvpress'); per_kv_head only */
	enum policy_granularity granularity; /* PyramidKV's caches (kv_head) */
};
struct policy_settings {
	struct policy_setting p[POLICY_COUNT];
};

/* A run's budget as the rules read it: the user's choice (budget.h) with
 * the facts of the scene it runs on. Only policy_budget_make builds one. */
struct policy_budget {
	int heavy, recent; /* H2O's split; B = heavy + recent */
	int sinks;         /* StreamingLLM's attention sinks, < B (or 0) */
	int n;             /* tokens in the scene */
	int prompt;        /* the run's prompt P (design §2), 0 for none */
	int layers;        /* the scene's layers (PyramidKV's schedule), 0 for one */
	/* Compress every INTERVAL decoding steps (kvpress' DecodingPress,
	 * design §2 "Compressing at an interval"): the rule runs at the
	 * prompt's end and then at every INTERVAL-th step after it, back to B
	 * at once; 0 or 1: at every step. */
	int interval;
	/* The key/value heads of a layer (AdaKV's bound: how much of the
	 * layer's budget one head can take), 0 when unknown. */
	int kv_heads;
	/* The settings of the run (all 0: every policy's defaults). */
	struct policy_settings set;
};

/* A cache as a policy sees it at eviction time: ascending positions, the
 * scores after this step's update and this step's weights; for a policy
 * with by_key_norm, the L2 norm of each entry's key row (the square root
 * of its squares summed in index order from 0.0), or NULL in an attention
 * scene, which has no keys. */
struct policy_cache {
	int len;
	const int *pos;
	const double *score;
	const double *w;
	const double *key_norm;
	/* For a policy with observe_window, at the prompt's end only (else
	 * NULL): the observation window's attention. Row h (h < heads, the
	 * query heads of the group in order) at observed + h * len holds, for
	 * each entry, query head h's weight on it averaged over the last
	 * WINDOW prompt queries (positions P - WINDOW .. P - 1, each with its
	 * softmax over the positions up to its own, summed in query order
	 * from 0.0 and divided by WINDOW; 0 where a query comes before the
	 * entry). At the prompt's end the cache holds positions 0 .. P - 1. */
	const double *observed;
	int heads, window;
	/* Where a policy with ranks_own writes, for each entry, the value it
	 * ranked it by: the cut-off's is the step's cut-off value. */
	double *rank;
	/* A caller may leave key_norm, observed and rank NULL (a model run
	 * that has none of them): key norm then keeps the B newest, SnapKV and
	 * PyramidKV keep everything, the bounded SnapKV and PyramidKV keep
	 * their budget's newest and ObservedAttention and its bounded form
	 * still rank (without a cut-off value). */
	int layer; /* the cache's layer, from 0 */
	/* For a policy with per_kv_head: the key/value heads the rule decides
	 * for at once (0 reads as 1). The observed rows are then those of all
	 * their query heads (heads of them, heads / kv_heads a key/value head,
	 * in order), rank and the marks hold a row of len per key/value head
	 * (kv head g's at g * len), the cut-off is an index into those rows,
	 * and order is room for kv_heads * len ints. */
	int kv_heads;
	int *order;
	/* SnapKV's pooling of the observed weights (policy_snap_scores): the
	 * kernel (0 reads as 5) and the pooling. The driver sets both from the
	 * run's settings; a caller leaves them 0. */
	int kernel;
	enum policy_pool pool;
	enum policy_alloc alloc; /* AdaKV's split (policy_ada_select) */
	/* For a policy with by_keys: entry i's key row, DIM numbers at
	 * keys + i * dim, or with KEY_SLOT at keys + key_slot[i] * dim (the
	 * engine's rows by slot, which it need not copy; policy_key reads
	 * either), or NULL in an attention scene, which has none; and room for
	 * DIM numbers of the rule's own (anchor). A caller may give a by_keys
	 * rule the keys' L2 norms too (key_norm, each key's squares summed in
	 * index order from 0.0, the square root). */
	const double *keys;
	const int *key_slot;
	int dim;
	double *anchor;
	/* The cache's key/value head within its layer, from 0 (the random
	 * policy draws per layer, key/value head and position). */
	int kv_head;
	/* For a policy with by_queries (and by_keys), or NULL: QUERIES[h],
	 * for each of the HEADS query heads of the cache's group in order,
	 * the query rows of that head by position (row p, DIM numbers, at
	 * queries[h] + p * dim), of which positions 0 .. SEEN - 1 have been
	 * asked (SEEN is the step); VALUES the value rows of the cache's
	 * key/value head by position the same way, or NULL when the scene
	 * has none; SCALE the logit scale; and WORK, room for
	 * POLICY_WORK_DOUBLES(dim, len) numbers of the rule's own. ROPE: the queries
	 * are a model's before its rotary embedding, which it describes; NULL
	 * when the queries are as the keys met them (a vector scene). */
	const double *const *queries;
	int seen;
	const double *values;
	double scale;
	double *work;
	const struct policy_rope *rope;
	/* With KEY_SLOT, or NULL: what the rule keeps of its own from step
	 * to step (struct policy_memo). */
	struct policy_memo *memo;
};

/* Entry I's key row in C (policy_cache.keys). */
static inline const double *policy_key(const struct policy_cache *c, int i)
{
	const int row = c->key_slot ? c->key_slot[i] : i;
	return c->keys + (size_t)row * (size_t)c->dim;
}

/* A rule that reads the queries reads at most this many rows before SEEN
 * (policy_cache.queries): ExpectedAttentionPress' statistics are of the
 * last 64 asked. */
#define POLICY_QUERIES_READ 64

/* The room a rule that reads the queries has of its own
 * (policy_cache.work), for DIM and up to LEN entries. */
#define POLICY_WORK_DOUBLES(dim, len) ((dim) * ((dim) + 2 + POLICY_QUERIES_READ) + (len))

/*
 * What a rule that reads the keys keeps from step to step, by key slot:
 * the caller holds each entry's key in a slot (policy_cache.key_slot[i],
 * entry i's, below SLOTS) from the step it is appended until it is
 * evicted, and sets FRESH[s] whenever slot s takes a key (every slot when
 * it puts the cache back to another step, earlier or later); the rest is
 * the rule's, zeroed by the caller at the start. What a rule keeps is a function of
 * the keys in the slots, the values and the queries asked, so a result
 * never depends on it: only how much is computed again does. KeyDiff keeps
 * each key in TILES and divided by its norm in ROWS; Expected Attention,
 * on a vector scene, the keys in TILES, its query heads' projections in
 * RING, the last 64 queries of each head in QTILES (by ring index, in
 * kernel tiles), NEXT and the value norms in VNORM; either uses MEAN and
 * VAR as room.
 */
struct policy_memo {
	int slots;                  /* a multiple of 8 */
	unsigned char *fresh;       /* SLOTS */
	int *next;                  /* HEADS */
	double *tiles, *rows;       /* SLOTS x dim each */
	double *ring;               /* HEADS x POLICY_QUERIES_READ x SLOTS */
	double *qtiles;             /* HEADS x POLICY_QUERIES_READ x dim */
	double *vnorm, *mean, *var; /* SLOTS each */
};

/* The numbers (doubles) a policy_memo's rule-owned arrays hold, for DIM,
 * HEADS query heads (0 for a rule that reads no queries) and SLOTS slots
 * (a multiple of 8); its NEXT has HEADS ints, its FRESH SLOTS bytes. */
#define POLICY_MEMO_DOUBLES(dim, heads, slots)                                             \
	((size_t)(slots) * (2 * (size_t)(dim) + (size_t)(heads)*POLICY_QUERIES_READ + 3) + \
	 (size_t)(heads)*POLICY_QUERIES_READ * (size_t)(dim))

/* A model's rotary embedding (include/model/h2o/llama.h, llama_rope_of):
 * pair k of a head of dim rows (rows 2k and 2k + 1, or with NEOX rows k
 * and k + dim / 2) turns at position p by the float32
 * ((p * FREQ[k]) * SCALE) / DIV[k]. */
struct policy_rope {
	int neox;
	float scale;
	const float *freq, *div; /* dim / 2 each */
};

/* ExpectedAttentionPress' average rotation of ROPE over the 512 positions
 * from FROM on: each pair's mean cosine into CS and sine into SN (dim / 2
 * each). */
void policy_rope_mean(const struct policy_rope *rope, int dim, int from, double *cs, double *sn);
/* MU (dim) becomes R MU and COV (dim x dim) R (COV R') for the rotation R
 * that turns each pair k by CS[k], SN[k] (policy_rope_mean). */
void policy_rope_turn(const struct policy_rope *rope, int dim, const double *cs, const double *sn,
                      double *mu, double *cov);

/* Where a kept position sits: a policy has up to two regions, drawn as
 * sections in this order. */
enum policy_region { POLICY_REGION_OLD, POLICY_REGION_RECENT };

/* An eviction, as the words for it need it. */
struct policy_loss {
	double score, weight; /* the evicted entry's, at the step it went */
	int cutoff_pos;       /* the kept position it lost to, or -1 */
	double cutoff_value;  /* that one's score, or its weight (by_weight) */
};

/* Where the words go: a panel's column, beside the entry's own score
 * (BRIEF), or a sentence of the story line and the inspector. */
enum policy_voice { POLICY_VOICE_BRIEF, POLICY_VOICE_SENTENCE };

/* The words for an eviction. The text of the token it lost to is scene
 * text, which only the caller may draw: the words are BEFORE, then that
 * token's text when CUTOFF_POS >= 0, then AFTER, then NOTE (a remark, as
 * on a tie; empty in the brief voice). */
struct policy_words {
	char before[96]; /* "score 0.91 < cut-off 1.58 (", "left the window" */
	int cutoff_pos;
	char after[8];
	char note[48];
};

struct policy {
	const char *name;  /* "h2o": on the command line, in the trace, the report */
	const char *title; /* "H2O CACHE": its panel's title */
	const char *about; /* what it keeps, one line of --help */
	/* Section names of its two regions; NULL for an unused region. */
	const char *region_name[2];
	/* The most positions region R holds under B: 0 for an unused
	 * region, -1 when the policy keeps everything (no limit). */
	int (*region_budget)(const struct policy_budget *b, enum policy_region r);
	/* Its rule (src/engine/policy_rule.h), which only policy_run calls. */
	const struct policy_rule *rule;
	/* The region of position POS, kept after step T. */
	enum policy_region (*region)(const struct policy_budget *b, int t, int pos);
	/* What the cut-off is compared on: the score (false) or this step's
	 * weight (true). */
	bool by_weight;
	/* The rule reads the key norms (policy_cache.key_norm), and its
	 * cut-off value is the cut-off's key norm. */
	bool by_key_norm;
	/* The rule reads the key rows (policy_cache.keys, dim, anchor). */
	bool by_keys;
	/* The rule reads the queries asked so far and the value rows
	 * (policy_cache.queries, seen, values, scale, work), as a vector
	 * scene has them: a model scene keeps its queries after RoPE only. */
	bool by_queries;
	/* How many of the prompt's last queries the rule reads at the
	 * prompt's end (policy_cache.observed), capped by the prompt; 0 for
	 * none. */
	int observe_window;
	/* The rule ranks by a value of its own (policy_cache.rank), which is
	 * the cut-off value. */
	bool ranks_own;
	/* After the prompt's end the cache keeps every new token: it holds up
	 * to policy_capacity's bound, as its regions' budgets add. */
	bool grows;
	/* The rule decides for a whole layer: its policy_cache holds the
	 * positions every key/value head of the layer shares, and the weights
	 * averaged over all the layer's query heads (plan.h). Otherwise it
	 * decides for each key/value head from the mean of its group's. */
	bool layer_wide;
	/* The rule decides at the prompt's end for every key/value head of a
	 * layer at once, each keeping positions of its own (AdaKV: the heads'
	 * budgets come out of one layer budget). Its policy_cache holds the
	 * positions they share then (nothing is evicted before) and the
	 * observed rows of all the layer's query heads (kv_heads), without
	 * scores or weights (NULL: each kv head has its own). A layer with
	 * more than one key/value head follows a plan (plan.h). */
	bool per_kv_head;
	/* The words for LOSS in VOICE into WORDS (cleared, cutoff_pos -1).
	 * NULL: policy_word_cutoff's for a loss with a cut-off, and a
	 * window's otherwise ("left the window", "only the B newest tokens
	 * stay"). */
	void (*word_loss)(const struct policy_budget *b, const struct policy_loss *loss,
	                  enum policy_voice voice, struct policy_words *words);
	/* The step at which POS, while kept, counts as promoted: it leaves
	 * the recent region for the old one; 0 when it never does. Where not
	 * 0 it grows with POS (tokens age in the order they came). NULL:
	 * nothing is ever promoted. */
	int (*promoted_at)(const struct policy_budget *b, int pos);
	/* The name of its matched form (policy_matched_form), or NULL. */
	const char *matched_form;
};

extern const struct policy *const policies[POLICY_COUNT];

/* Whether policy P reads the keys (by_key_norm or by_keys): an attention
 * scene, which has none, cannot run it as it is meant. */
bool policy_reads_keys(enum policy_id p);

/* Whether policy P reads the queries before RoPE (by_queries): a model
 * scene, whose queries are kept after RoPE, cannot run it as it is meant. */
bool policy_reads_queries(enum policy_id p);

/* The policy called NAME, or -1. */
int policy_find(const char *name);

/* The matched form of policy P: the policy that makes P's choice at the
 * prompt's end and then holds its budget while decoding (snapkv-win for
 * snapkv, pyramidkv-win for pyramidkv, adakv-win for adakv, observed-win
 * for observed), or -1 when there is none (every policy that bounds its
 * cache). */
int policy_matched_form(enum policy_id p);

/* The most positions policy P keeps after a step under B, its regions'
 * budgets (policy_region_budget) added, or -1 when it keeps every token. */
int policy_capacity(enum policy_id p, const struct policy_budget *b);

/* The interval of B: b->interval, or 1 when it is below 1. */
int policy_interval(const struct policy_budget *b);

/* Whether the rule runs at the end of step STEP (>= 1) under B: from the
 * prompt's end b->prompt on, at the steps that are a whole number of
 * intervals after it (design §2). With an interval of 1: every step from
 * the prompt's end on. */
bool policy_compresses(const struct policy_budget *b, int step);

/* The most positions region R of policy P holds after a step under B: the
 * policy's region_budget, plus the interval's INTERVAL - 1 tokens that
 * wait for the next compression in the region they wait in (design §2).
 * 0 for an unused region, -1 for no limit. */
int policy_region_budget(enum policy_id p, const struct policy_budget *b, enum policy_region r);

/* Policy P's words for LOSS in VOICE (struct policy_words). */
void policy_word(enum policy_id p, const struct policy_budget *b, const struct policy_loss *loss,
                 enum policy_voice voice, struct policy_words *words);

/* The step at which POS counts as promoted in policy P, or 0 (promoted_at). */
int policy_promoted_at(enum policy_id p, const struct policy_budget *b, int pos);

/* StreamingLLM's default number of sinks for budget B: 4, as the official
 * code keeps, never more than B - 1. */
int policy_default_sinks(int budget);

/* The sink count for budget B: SINKS_GIVEN capped below B, or the default
 * when SINKS_GIVEN < 0 (not given). */
int policy_sinks_for(int sinks_given, int budget);

/*
 * The driver (src/engine/policy_run.c): every cache that evicts, the
 * engine's, a layer's plan and the model's real drop, runs its rule here
 * and nowhere else.
 */

/* How many of the prompt's last queries policy ID's rule reads at step
 * STEP under B (policy_cache.observed, policy_cache.window): its window at
 * the prompt's end (policy_snap_window), 0 at every other step and for a
 * rule that reads none. */
int policy_run_window(enum policy_id id, const struct policy_budget *b, int step);

/*
 * Policy ID's rule over C at step STEP (>= 1) under B. Whether the step
 * compresses is decided here (policy_compresses): where it does not,
 * nothing goes. GONE (C->len entries; C->kv_heads rows of them for a
 * per_kv_head rule) is cleared, then the entries that go are marked.
 * Returns the index of the cut-off, the kept entry an evicted one had to
 * beat (into the rows for a per_kv_head rule), or -1; *VALUE gets what it
 * was compared on: its key norm (by_key_norm), its own rank (ranks_own,
 * when C->rank is given), this step's weight (by_weight) or its score; 0
 * without a cut-off.
 */
int policy_run(enum policy_id id, const struct policy_budget *b, int step,
               const struct policy_cache *c, unsigned char *gone, double *value);

/* Shared rule pieces for policy files. */

/* Evict from the first CANDIDATES entries the lowest-keyed ones (key =
 * score, or weight when BY_WEIGHT) until KEEP of them remain, a tie keeping
 * the lower position; returns the index of the lowest-keyed kept one (the
 * cut-off), or -1 when none is kept. */
int policy_keep_largest(const struct policy_cache *c, int candidates, int keep, bool by_weight,
                        unsigned char *gone);

/* The decimals that show X and OTHER apart: two, or as many more (up to
 * six) as it takes, so that "a < b" never reads "0.91 < 0.91". */
int policy_pair_decimals(double x, double other);

/* The words for a LOSS with a cut-off (cutoff_pos >= 0), compared on the
 * weight when BY_WEIGHT: "< 1.58 " or "attn 0.08 < 0.20 " before the
 * cut-off's text in the brief voice, "score 0.91 < cut-off 1.58 (" ... ")"
 * in a sentence, noting a tie. Numbers get as many decimals (two to six)
 * as it takes to tell them apart. */
void policy_word_cutoff(const struct policy_loss *loss, bool by_weight, enum policy_voice voice,
                        struct policy_words *words);

/* SnapKV's window for budget B: the policy's observe_window, or the
 * window the run's settings give it, capped by the prompt (b->prompt). */
int policy_snap_window(const struct policy *pol, const struct policy_budget *b);

/* SnapKV's choice at the prompt's end (C->observed set), down to BUDGET
 * entries: each entry before the window (the last c->window) scored by
 * its heads' observed weights, smoothed along the positions by a pool
 * (policy_snap_scores: by default the average of kernel 5, zero padding,
 * each sum of five in position order from 0.0 divided by 5), then averaged over the heads (summed in head order
 * from 0.0); the window stays, with the BUDGET - window highest scored
 * before it (a tie keeps the lower position). A budget no larger than the
 * window keeps its BUDGET newest. Writes the scores into c->rank; returns
 * the cut-off, or -1. */
int policy_snap_select(const struct policy_cache *c, int budget, unsigned char *gone);

/* PyramidKV's budget for layer LAYER at the prompt's end under B: the
 * positions it keeps there, its window's included (design §2,
 * docs/policies.md: KVCache-Factory's schedule). */
int policy_pyramid_budget(const struct policy_budget *b, int layer);

/* The same schedule with policy POL's window (its setting). */
int policy_pyramid_schedule(const struct policy *pol, const struct policy_budget *b, int layer);

/* pyramidkv-win's budget for layer LAYER, at the prompt's end and after
 * it: the schedule with its own window, less the positions by which the
 * layers' budgets add up to more than L x B (the schedule's steps are
 * floored), one a layer from the lowest, round and round, so that the
 * layers hold L x B together. */
int policy_pyramid_held(const struct policy_budget *b, int layer);

/* Hold BUDGET entries of C after the prompt (the bounded forms of the
 * prompt-only policies): the entries at positions before BEFORE, which the
 * prompt's choice selected, stay for good, and of the rest (the window and
 * every token since) the newest; the oldest of the rest go. More than
 * BUDGET before BEFORE means nothing was selected (a caller without the
 * observation): then it keeps the BUDGET newest. Marks GONE; nothing when
 * C holds no more than BUDGET. */
void policy_hold(const struct policy_cache *c, int budget, int before, unsigned char *gone);

/* ObservedAttention's choice among C's entries when N positions have been
 * appended (positions 0 .. N - 1): each entry's score divided by the N -
 * pos queries that saw it, into c->rank when given; the KEEP largest stay
 * (a tie keeps the lower position). Returns the cut-off, or -1. */
int policy_observed_select(const struct policy_cache *c, int keep, int n, unsigned char *gone);

/* SnapKV's words for LOSS at the prompt's end: below the cut-off's pooled
 * attention ("pooled < 0.12 "), or, with a budget no larger than the
 * window, outside its newest B. */
void policy_snap_words(const struct policy_budget *b, const struct policy_loss *loss,
                       enum policy_voice voice, struct policy_words *words);

/* SnapKV's scores (policy_snap_select's) of C's entries before its window
 * into SCORE: each its heads' observed weights pooled with kernel K =
 * C->kernel (5 when 0) over the positions within K / 2 of it before the
 * window: their sum in position order from 0.0 divided by K (zero
 * padding), or with C->pool POLICY_POOL_MAX their largest; then summed
 * over the heads in order from 0.0 and divided by their number. */
void policy_snap_scores(const struct policy_cache *c, double *score);

/* AdaKV's share of the safeguard for BUDGET: the int(BUDGET x 0.2) best
 * positions every key/value head keeps whatever the others score (kvpress'
 * alpha_safeguard), the window's included. */
int policy_ada_safe(int budget);

/* FFY0/AdaKV's split for BUDGET and a window of WINDOW: the floor every
 * key/value head keeps before its window, int(0.2 (BUDGET - WINDOW)). */
int policy_ada_floor(int budget, int window);

/* FFY0/AdaKV's share of a head that won WON of the layer's kv_heads x
 * (BUDGET - WINDOW) best scores: round(WON x 0.8 + floor), in float32,
 * half to even (torch.round), the positions it keeps before its window. */
int policy_ada_share(int won, int budget, int window);

/* AdaKV's choice at the prompt's end (C->observed set for all C->kv_heads
 * key/value heads): each head's SnapKV scores (policy_snap_scores, over its
 * group's rows) into its row of c->rank; every window stays; each head
 * keeps its policy_ada_safe(BUDGET) - window best scored before it (a tie
 * keeps the lower position); of the rest, in all the heads, the lowest
 * go until the layer holds kv_heads x BUDGET (a tie keeps the lower head,
 * then the lower position). A budget no larger than the window keeps each
 * head's BUDGET newest. Marks row g of GONE for head g; returns the
 * cut-off, the lowest kept of the entries that competed (an index into the
 * rows), or -1. With C->alloc POLICY_ALLOC_AUTHORS, FFY0/AdaKV's split
 * instead: of all the heads' scores before their windows the kv_heads x
 * (BUDGET - window) best are counted per head (a tie keeps the lower head,
 * then the lower position), each head keeps its policy_ada_share of them
 * best scored and its window; the cut-off is the lowest kept before a
 * window, in any head. That split cuts a cache of exactly BUDGET too (the
 * authors compress unless B - W exceeds what precedes the window), where
 * kvpress' keeps it whole. */
int policy_ada_select(const struct policy_cache *c, int budget, unsigned char *gone);

/* The random policy's draw for position POS of layer LAYER's key/value
 * head KV_HEAD: splitmix64 seeded with 42 XOR (LAYER << 48 | KV_HEAD << 32 |
 * POS), the top 53 bits of its first output over 2^53, in [0, 1). */
double policy_random_draw(int layer, int kv_head, int pos);

#endif
