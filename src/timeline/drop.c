/*
 * drop: the model run once per policy, every layer's cache evicted for
 * real (see drop.h).
 */
#include "h2o/drop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drop_impl.h"
#include "h2o/cost.h"
#include "h2o/llama.h"
#include "h2o/report.h"

#include "drop_query.h"

/* The given tokens the runs step at once while they are one run, and the
 * most their positions' weights may take. */
#define DROP_SPAN       16
#define DROP_SPAN_BYTES (32.0 * 1024 * 1024)

/* A position of a span before its last: its weights (per layer and query
 * head a row of STRIDE floats) and the LEN slots every cache held after
 * its step. */
struct span_view {
	const float *w;
	size_t stride;
	int len, heads;
};

/* H2O_DROP_SPAN=1: one position a step throughout (the tests' plain
 * path). */
static bool span_off(void)
{
	const char *e = getenv("H2O_DROP_SPAN");
	return e != NULL && strcmp(e, "1") == 0;
}

/* One policy's run, the scores of its caches and, for a rule that reads
 * the prompt's last queries, their attention. */
struct run_state {
	enum policy_id id;
	/* The model run this policy's caches are: its own, or one it shares
	 * with the runs whose caches have held the same as its every step
	 * (run_split); OWN is the run it brought, freed with it. */
	struct llama_run *run, *own;
	/* This step's cuts, applied after every rule has decided (cuts_apply):
	 * per cache whether its rule cut it, and then which slots stay. */
	unsigned char *cut, *keep;
	/* Within a span, the position's view of the run, else NULL. */
	const struct span_view *view;
	double **score; /* [layer * kv + g]: aligned with the cache's slots */
	/* The observation window (policy_run_window at the prompt's end), 0
	 * for none, and per layer and query head the sum of the window's
	 * weights on each prompt position: [layer][head][prompt]. */
	int window;
	double *observed;
};

/* The room one step of the rules works in, for caches of up to CAP. */
struct drop_scratch {
	double *mean, *lmean, *norm, *rank;
	double *keys, *anchor; /* a by_keys rule's key rows (cap x dim), its anchor */
	int *order;
	unsigned char *gone, *keep;
	struct drop_queries *qv; /* a by_queries rule's (drop_query.h), or NULL */
};

/* The weights of query head H of layer L at ST's step, and the slots of
 * its kv head G's cache. */
static const float *weights_of(const struct run_state *st, int l, int h)
{
	if (st->view != NULL)
		return st->view->w +
		       ((size_t)l * (size_t)st->view->heads + (size_t)h) * st->view->stride;
	return llama_run_weights(st->run, l, h);
}

static int len_of(const struct run_state *st, int l, int g)
{
	return st->view != NULL ? st->view->len : llama_run_len(st->run, l, g);
}

/* Whether A and B decided the same cuts this step (their caches, the same
 * run's, hold the same slots). */
static bool same_cuts(const struct llama_config *cfg, const struct run_state *a,
                      const struct run_state *b, size_t cap)
{
	const int kv = cfg->n_kv_heads;
	for (int c = 0; c < cfg->n_layers * kv; c++) {
		if (a->cut[c] != b->cut[c])
			return false;
		if (a->cut[c] && memcmp(a->keep + (size_t)c * cap, b->keep + (size_t)c * cap,
		                        (size_t)len_of(a, c / kv, c % kv)) != 0)
			return false;
	}
	return true;
}

/*
 * The step's cuts of the COUNT states of ST: each state's scores lose the
 * slots its rule cut, and each run its slots once for all the states that
 * share it and cut the same. States that share a run but cut differently
 * part: each group after the first takes a spare run (from SPARE, *NSPARE
 * of them) copied from the shared one before any cut, and from then on
 * steps on its own. So a run is shared exactly while its policies' caches
 * hold the same slots, and every figure is what separate runs would give:
 * the same inputs, the same operations.
 */
static void cuts_apply(const struct llama_config *cfg, struct run_state *st, int count, size_t cap,
                       struct llama_run **spare, int *nspare)
{
	const int kv = cfg->n_kv_heads, caches = cfg->n_layers * kv;
	struct llama_run *before[POLICY_COUNT];
	int leader[POLICY_COUNT];
	for (int i = 0; i < count; i++)
		before[i] = st[i].run;
	/* Each state's group: the first earlier state of its run that cut the
	 * same, or itself. */
	for (int i = 0; i < count; i++) {
		leader[i] = i;
		for (int j = 0; j < i; j++)
			if (leader[j] == j && before[j] == before[i] &&
			    same_cuts(cfg, &st[j], &st[i], cap)) {
				leader[i] = j;
				break;
			}
	}
	/* A group that is not its run's first takes a copy of it. */
	for (int i = 0; i < count; i++) {
		if (leader[i] != i)
			continue;
		bool first = true;
		for (int j = 0; j < i && first; j++)
			if (leader[j] == j && before[j] == before[i])
				first = false;
		if (!first) {
			struct llama_run *r = spare[--*nspare];
			llama_run_copy(r, before[i]);
			st[i].run = r;
		}
	}
	for (int i = 0; i < count; i++)
		st[i].run = st[leader[i]].run;
	for (int i = 0; i < count; i++) {
		for (int c = 0; c < caches; c++) {
			if (!st[i].cut[c])
				continue;
			const unsigned char *keep = st[i].keep + (size_t)c * cap;
			const int len = llama_run_len(st[i].run, c / kv, c % kv);
			double *score = st[i].score[c];
			int kept = 0;
			for (int j = 0; j < len; j++)
				if (keep[j])
					score[kept++] = score[j];
		}
	}
	for (int i = 0; i < count; i++)
		for (int c = 0; leader[i] == i && c < caches; c++)
			if (st[i].cut[c])
				llama_run_keep(st[i].run, c / kv, c % kv,
				               st[i].keep + (size_t)c * cap);
}

/* Mark for keeping what the rule did not mark GONE (LEN entries) in kv
 * head G; cuts_apply keeps it once every rule of the step has decided,
 * none of them reading a cache that another's cut changed. */
static void keep_unmarked(struct run_state *st, int l, int g, int kv, int len,
                          const unsigned char *gone, size_t cap)
{
	if (!memchr(gone, 1, (size_t)len))
		return;
	unsigned char *keep = st->keep + (size_t)(l * kv + g) * cap;
	for (int j = 0; j < len; j++)
		keep[j] = !gone[j];
	st->cut[l * kv + g] = 1;
}

/* Into MEAN the weights of query heads FIRST .. FIRST + COUNT - 1 of layer
 * L on the LEN positions their cache holds, summed in head order from 0.0
 * and divided by COUNT: design §2's group mean. */
static void head_mean(const struct run_state *st, int l, int first, int count, int len,
                      double *mean)
{
	for (int j = 0; j < len; j++)
		mean[j] = 0.0;
	for (int h = first; h < first + count; h++) {
		const float *w = weights_of(st, l, h);
		for (int j = 0; j < len; j++)
			mean[j] += (double)w[j];
	}
	for (int j = 0; j < len; j++)
		mean[j] /= count;
}

/* The L2 norm of each of the LEN keys of layer L's kv head G (after RoPE,
 * each the square root of its squares summed in index order). */
static void key_norms(const struct llama_config *cfg, const struct llama_run *run, int l, int g,
                      int len, double *norm)
{
	const float *k = llama_run_keys(run, l, g);
	for (int j = 0; j < len; j++) {
		double sq = 0.0;
		for (int i = 0; i < cfg->head_size; i++) {
			const double x = k[(size_t)j * (size_t)cfg->head_size + (size_t)i];
			sq += x * x;
		}
		norm[j] = sqrt(sq);
	}
}

/* Into ROWS the LEN keys of layer L's kv head G (after RoPE), as doubles. */
static void key_rows(const struct llama_config *cfg, const struct llama_run *run, int l, int g,
                     int len, double *rows)
{
	const float *k = llama_run_keys(run, l, g);
	for (size_t i = 0; i < (size_t)len * (size_t)cfg->head_size; i++)
		rows[i] = k[i];
}

/*
 * The window's attention after step S: while S - 1 is one of the prompt's
 * last WINDOW positions, every query head's weights add to its row (the
 * cache then holds every position up to S - 1: nothing goes before the
 * prompt's end); at the prompt's end the sums are divided by WINDOW. The
 * rows are then what the engine's observation gives (policy.h): each
 * query's softmax over the positions up to its own, summed in query order
 * from 0.0, 0 where a query comes before the entry.
 */
static void observe(const struct llama_config *cfg, struct run_state *st, int s, int prompt)
{
	const int q = s - 1;
	if (!st->observed || q < prompt - st->window || q >= prompt)
		return;
	const size_t rows = (size_t)cfg->n_layers * (size_t)cfg->n_heads, len = (size_t)prompt;
	for (int l = 0; l < cfg->n_layers; l++)
		for (int h = 0; h < cfg->n_heads; h++) {
			const float *w = weights_of(st, l, h);
			double *o =
			        st->observed + ((size_t)l * (size_t)cfg->n_heads + (size_t)h) * len;
			for (int j = 0; j <= q; j++)
				o[j] += (double)w[j];
		}
	if (q == prompt - 1)
		for (size_t i = 0; i < rows * len; i++)
			st->observed[i] /= st->window;
}

/*
 * After step S of policy ST's run: every cache's scores add its group's
 * mean weights, then the driver runs the rule (policy_run: at the prompt's
 * end and at every step the interval compresses after it). A layer-wide
 * rule decides once per layer on the weights averaged over every query
 * head, for all its kv heads; a per_kv_head rule once per layer for each
 * kv head at once, from the observation of all the layer's query heads.
 */
static void evict_step(const struct llama_config *cfg, struct run_state *st, int s,
                       const struct policy_budget *b, struct drop_scratch *x, size_t cap)
{
	const struct policy *pol = policies[st->id];
	const int kv = cfg->n_kv_heads, group = cfg->n_heads / kv;
	const bool layer_wide = pol->layer_wide && cfg->n_heads > 1;
	observe(cfg, st, s, b->prompt);
	const int window = policy_run_window(st->id, b, s);
	const size_t plen = (size_t)b->prompt;
	for (int l = 0; l < cfg->n_layers; l++) {
		const int len = len_of(st, l, 0);
		const double *lobs =
		        window > 0 ? st->observed + (size_t)l * (size_t)cfg->n_heads * plen : NULL;
		for (int g = 0; g < kv; g++) {
			double *score = st->score[l * kv + g];
			const int glen = len_of(st, l, g);
			head_mean(st, l, g * group, group, glen, x->mean);
			score[glen - 1] = 0.0;
			for (int j = 0; j < glen; j++)
				score[j] += x->mean[j];
			/* A per_kv_head rule decides for the layer at the prompt's
			 * end; one that holds its share (adakv-win) then decides
			 * for each kv head here, on its own positions. */
			if (layer_wide || (pol->per_kv_head && (lobs || pol->grows)))
				continue;
			if (pol->by_key_norm)
				key_norms(cfg, st->run, l, g, glen, x->norm);
			if (pol->by_keys)
				key_rows(cfg, st->run, l, g, glen, x->keys);
			struct policy_cache view = {.len = glen,
			                            .pos = llama_run_positions(st->run, l, g),
			                            .score = score,
			                            .w = x->mean,
			                            .key_norm = pol->by_key_norm ? x->norm : NULL,
			                            .rank = x->rank,
			                            .heads = group,
			                            .layer = l,
			                            .kv_heads = 1,
			                            .order = x->order,
			                            .keys = pol->by_keys ? x->keys : NULL,
			                            .dim = cfg->head_size,
			                            .anchor = x->anchor,
			                            .kv_head = g};
			if (lobs) {
				view.observed = lobs + (size_t)g * (size_t)group * plen;
				view.window = window;
			}
			if (pol->by_queries && x->qv)
				drop_queries_view(x->qv, st->run, l, g, s, glen, &view);
			double value;
			policy_run(st->id, b, s, &view, x->gone, &value);
			keep_unmarked(st, l, g, kv, glen, x->gone, cap);
		}
		if (layer_wide) {
			/* Every kv head of the layer holds the same positions. */
			head_mean(st, l, 0, cfg->n_heads, len, x->lmean);
			const struct policy_cache view = {.len = len,
			                                  .pos = llama_run_positions(st->run, l, 0),
			                                  .score = st->score[l * kv],
			                                  .w = x->lmean,
			                                  .layer = l};
			double value;
			policy_run(st->id, b, s, &view, x->gone, &value);
			for (int g = 0; g < kv; g++)
				keep_unmarked(st, l, g, kv, len, x->gone, cap);
		} else if (pol->per_kv_head) {
			/* Until the rule has run every kv head holds the same
			 * positions; after it, the rule keeps every new one. */
			if (!lobs)
				continue;
			const struct policy_cache view = {.len = len,
			                                  .pos = llama_run_positions(st->run, l, 0),
			                                  .observed = lobs,
			                                  .heads = cfg->n_heads,
			                                  .window = window,
			                                  .rank = x->rank,
			                                  .layer = l,
			                                  .kv_heads = kv,
			                                  .order = x->order};
			double value;
			policy_run(st->id, b, s, &view, x->gone, &value);
			for (int g = 0; g < kv; g++)
				keep_unmarked(st, l, g, kv, len, x->gone + (size_t)g * (size_t)len,
				              cap);
		}
	}
}

static void states_free(struct run_state *st, int count, const struct llama_config *cfg)
{
	for (int i = 0; i < count; i++) {
		llama_run_free(st[i].own);
		free(st[i].cut);
		free(st[i].keep);
		for (int c = 0; st[i].score && c < cfg->n_layers * cfg->n_kv_heads; c++)
			free(st[i].score[c]);
		free(st[i].score);
		free(st[i].observed);
	}
}

static void scratch_free(struct drop_scratch *x)
{
	free(x->mean);
	free(x->lmean);
	free(x->norm);
	free(x->rank);
	free(x->order);
	free(x->keys);
	free(x->anchor);
	free(x->gone);
	free(x->keep);
	drop_queries_free(x->qv);
}

/* Room for caches of up to CAP positions in KV kv heads of DIM numbers. */
static bool scratch_new(struct drop_scratch *x, size_t cap, size_t kv, size_t dim)
{
	*x = (struct drop_scratch){
	        .mean = malloc(cap * sizeof *x->mean),
	        .lmean = malloc(cap * sizeof *x->lmean),
	        .norm = malloc(cap * sizeof *x->norm),
	        .rank = malloc(cap * kv * sizeof *x->rank),
	        .order = malloc(cap * kv * sizeof *x->order),
	        .keys = malloc(cap * dim * sizeof *x->keys),
	        .anchor = malloc(dim * sizeof *x->anchor),
	        .gone = malloc(cap * kv),
	        .keep = malloc(cap),
	};
	return x->mean && x->lmean && x->norm && x->rank && x->order && x->keys && x->anchor &&
	       x->gone && x->keep;
}

static int fail(char err[DROP_ERR_MAX], const char *msg)
{
	snprintf(err, DROP_ERR_MAX, "%s", msg);
	return -1;
}

static int fail_nomem(char err[DROP_ERR_MAX])
{
	snprintf(err, DROP_ERR_MAX, "out of memory");
	return DROP_NOMEM;
}

/* Policy P's run under B over N positions: its model run, its caches'
 * scores and, for a rule that reads the prompt's last queries, the room
 * for their attention. False when out of memory (what was made is ST's to
 * free). */
static bool state_new(struct run_state *st, enum policy_id p, const struct llama_model *m,
                      const struct policy_budget *b, int n)
{
	const struct llama_config *cfg = llama_model_config(m);
	const size_t caches = (size_t)cfg->n_layers * (size_t)cfg->n_kv_heads;
	*st = (struct run_state){.id = p, .own = llama_run_new_len(m, n)};
	st->run = st->own;
	st->score = calloc(caches, sizeof *st->score);
	st->cut = calloc(caches, 1);
	st->keep = malloc(caches * (size_t)n);
	bool ok = st->run && st->score && st->cut && st->keep;
	for (size_t c = 0; ok && c < caches; c++)
		ok = (st->score[c] = calloc((size_t)n, sizeof **st->score)) != NULL;
	st->window = policy_run_window(p, b, b->prompt);
	if (ok && st->window > 0) {
		const size_t rows = (size_t)cfg->n_layers * (size_t)cfg->n_heads;
		st->observed = calloc(rows * (size_t)b->prompt, sizeof *st->observed);
		ok = st->observed != NULL;
	}
	return ok;
}

/* Whether a policy of MASK reads the queries. */
static bool reads_queries(unsigned mask)
{
	for (int p = 0; p < POLICY_COUNT; p++)
		if ((mask & (1u << p)) && policies[p]->by_queries)
			return true;
	return false;
}

unsigned drop_policies_run(unsigned shown)
{
	return (shown | 1u << POLICY_FULL) & ((1u << POLICY_COUNT) - 1u);
}

double drop_predict_memory(const struct llama_model *m, int n, int prompt, bool generate,
                           unsigned mask)
{
	const struct llama_config *cfg = llama_model_config(m);
	/* Every run and scratch is sized to the text's N positions. */
	const double cap = n, kv = cfg->n_kv_heads;
	const double caches = (double)cfg->n_layers * kv;
	/* The scratch (one for each of the two cores), then per policy its
	 * run, its caches' scores and cuts, its window's rows and its
	 * figures. */
	double bytes = 2.0 * (cap * (3.0 * sizeof(double) + 1.0) +
	                      cap * kv * (sizeof(double) + sizeof(int) + 1.0));
	/* The span's logits and weights (measure), at most. */
	const double lh = (double)cfg->n_layers * cfg->n_heads;
	int span = DROP_SPAN;
	while (span > 1 && span * lh * cap * sizeof(float) > DROP_SPAN_BYTES)
		span /= 2;
	if (span > 1 && prompt > 1)
		bytes += span * ((double)cfg->vocab_size + lh * cap) * sizeof(float);
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (!(mask & (1u << p)))
			continue;
		bytes += (double)llama_run_bytes_len(m, n) +
		         caches * (cap * sizeof(double) + sizeof(void *)) + caches * (cap + 1.0);
		if (policies[p]->observe_window > 0 && prompt > 0)
			bytes += (double)cfg->n_layers * cfg->n_heads * prompt * sizeof(double);
		bytes += (double)n * (2.0 * sizeof(double) + 2.0 * sizeof(int));
		/* Generating: its reading by the full cache, full_logprob and
		 * full_top. */
		if (generate && p != POLICY_FULL && (mask & (1u << POLICY_FULL)))
			bytes += (double)llama_run_bytes_len(m, n);
		if (generate)
			bytes += (double)n * (sizeof(double) + sizeof(int));
		if (reads_queries(mask))
			bytes += (double)llama_run_prerope_bytes(m, n);
	}
	if (reads_queries(mask))
		bytes += 2.0 * drop_queries_bytes(m, n);
	return bytes;
}

double drop_predict_madds(const struct llama_model *m, int n, unsigned mask)
{
	const struct llama_config *cfg = llama_model_config(m);
	const double dim = cfg->dim, kv_dim = cfg->kv_dim;
	/* A token's matrix products: q and the output (dim x dim), k and v
	 * (kv_dim x dim), the feed-forward's three, in every layer; then the
	 * classifier. Attention over up to n positions besides. */
	const double token = cfg->n_layers * (2.0 * dim * dim + 2.0 * kv_dim * dim +
	                                      3.0 * dim * cfg->hidden_dim) +
	                     (double)cfg->vocab_size * dim;
	const double attention = (double)cfg->n_layers * cfg->n_heads * cfg->head_size * 2.0 *
	                         (double)n * (n + 1) / 2.0;
	int runs = 0;
	for (int p = 0; p < POLICY_COUNT; p++)
		runs += (mask >> p) & 1u;
	return runs * ((double)n * token + attention);
}

/* The tokens per key/value cache ST's run holds now into DP's peak and
 * its sum (divided into the mean at the end). */
static void held_add(const struct llama_config *cfg, const struct run_state *st,
                     struct drop_policy *dp, double caches)
{
	long held = 0;
	for (int l = 0; l < cfg->n_layers; l++)
		for (int g = 0; g < cfg->n_kv_heads; g++)
			held += len_of(st, l, g);
	const double per = (double)held / caches;
	dp->held_peak = per > dp->held_peak ? per : dp->held_peak;
	dp->held_mean += per;
}

/* The index of the first state on the same run as state I. */
static int first_of(const int *which, int i)
{
	int first = 0;
	while (which[first] != which[i])
		first++;
	return first;
}

/*
 * What a step computes after the model's: each distinct run's figures
 * (STAGE_FIGURES, the runs split in two), the full cache's next-token
 * distribution (STAGE_FULL, the vocabulary split in two), and each run's
 * divergence from it and each rule's cuts (STAGE_DIVERGE_CUT, the
 * policies split in two, each half with its own scratch). The halves write
 * apart and each figure is computed as on one thread: two cores, the same
 * bits.
 */
enum step_stage { STAGE_FIGURES, STAGE_FULL, STAGE_DIVERGE_CUT };

struct step_work {
	enum step_stage stage;
	const struct llama_config *cfg;
	struct run_state *st;
	int count;
	struct drop_result *out;
	const int *which; /* per state, its run's index among the step's */
	int t, next;      /* the step, and the text's next token or -1 */
	double *lse;      /* per state, its logits' log-normaliser */
	int full;         /* the full cache's state, or -1 */
	double *full_lp, *full_p;
	const struct policy_budget *b;
	struct drop_scratch *x; /* one per part */
	size_t cap;
	/* Within a span (every state on one run), the position's logits. */
	const float *logits;
	/* Generating, from the prediction of the first generated token on:
	 * each state's reading by the full cache (drop_impl.h), else NULL. */
	const struct drop_judge *judge;
};

static const float *logits_of(const struct step_work *w, int i)
{
	return w->logits != NULL ? w->logits : llama_logits(w->st[i].run);
}

static void step_part(void *arg, int part)
{
	struct step_work *w = arg;
	const int vocab = w->cfg->vocab_size;
	if (w->stage == STAGE_FULL) {
		const float *fl = logits_of(w, w->full);
		const int half = vocab / 2;
		for (int v = part ? half : 0; v < (part ? vocab : half); v++) {
			w->full_lp[v] = (double)fl[v] - w->lse[w->full];
			w->full_p[v] = exp(w->full_lp[v]);
		}
		return;
	}
	for (int i = part; i < w->count; i += 2) {
		struct run_state *st = &w->st[i];
		struct drop_policy *dp = &w->out->p[st->id];
		const bool first = first_of(w->which, i) == i;
		if (w->stage == STAGE_FIGURES) {
			if (!first)
				continue;
			const double lp =
			        drop_log_prob(logits_of(w, i), vocab, w->next, &dp->top[w->t],
			                      &dp->top_logprob[w->t], &w->lse[i]);
			if (w->t + 1 < w->out->n)
				dp->logprob[w->t] = lp;
			continue;
		}
		/* Generating: the full model on this run's own text against
		 * the run (the full cache's own reading until the run parts
		 * from its text); the full cache's is its own. */
		if (w->judge && i == w->full) {
			dp->full_top[w->t] = dp->top[w->t];
			if (w->t + 1 < w->out->n)
				dp->full_logprob[w->t] = dp->top_logprob[w->t];
		} else if (w->judge) {
			const struct llama_run *r = w->judge->run[i];
			drop_ref_step(r ? llama_logits(r) : logits_of(w, w->full), logits_of(w, i),
			              w->lse[i], vocab, w->t, w->out->n, dp);
		}
		/* KL(full || run), summed over the vocabulary in id order from
		 * 0.0 (llama.cpp's --kl-divergence figure); 0 for the full cache
		 * itself (the kl its calloc left). */
		if (!w->judge && w->full >= 0 && first && i != w->full &&
		    w->which[i] != w->which[w->full]) {
			const float *logits = logits_of(w, i);
			double kl = 0.0;
			for (int v = 0; v < vocab; v++)
				kl += w->full_p[v] *
				      (w->full_lp[v] - ((double)logits[v] - w->lse[i]));
			dp->kl[w->t] = kl;
		}
		memset(st->cut, 0, (size_t)w->cfg->n_layers * (size_t)w->cfg->n_kv_heads);
		if (st->id != POLICY_FULL)
			evict_step(w->cfg, st, w->t + 1, w->b, &w->x[part], w->cap);
	}
}

/* drop_measure, telling PROGRESS of each step as DONE + t of TOTAL. */
static int measure(const struct llama_model *m, const int *tokens, int n, int given,
                   const struct budget *want, unsigned mask, struct drop_result *out,
                   char err[DROP_ERR_MAX], const struct progress *progress, double done,
                   double total)
{
	const struct llama_config *cfg = llama_model_config(m);
	given = given < 1 ? 1 : given > n ? n : given;
	const bool generate = given < n;
	/* The rules that read the prompt or the layers find them here: the
	 * model's. */
	const struct policy_budget run_b =
	        policy_budget_make(want, n, cfg->n_layers, cfg->n_kv_heads);
	const struct policy_budget *b = &run_b;
	*out = (struct drop_result){
	        .n = n, .prompt = want->prompt, .given = given, .generate = generate, .budget = *b};
	if (n < 1 || n > cfg->seq_len)
		return fail(err, "the text is longer than the model's context");
	struct run_state st[POLICY_COUNT];
	/* The distinct runs of a step, then the readings (drop_impl.h). */
	struct llama_run *runs[2 * POLICY_COUNT];
	int count = 0, feed[2 * POLICY_COUNT];
	const bool full_runs = (mask & (1u << POLICY_FULL)) != 0;
	const bool reads = generate && full_runs;
	struct drop_judge judge = {0};
	struct drop_scratch x[2];
	bool ok = scratch_new(&x[0], (size_t)n, (size_t)cfg->n_kv_heads, (size_t)cfg->head_size);
	ok = scratch_new(&x[1], (size_t)n, (size_t)cfg->n_kv_heads, (size_t)cfg->head_size) && ok;
	/* A rule that reads the queries before RoPE: every run keeps them
	 * (the policies share runs until their caches part). */
	const bool prerope = reads_queries(mask);
	for (int i = 0; ok && prerope && i < 2; i++)
		ok = (x[i].qv = drop_queries_new(m, n)) != NULL;
	for (int p = 0; p < POLICY_COUNT && ok; p++) {
		if (!(mask & (1u << p)))
			continue;
		ok = state_new(&st[count], (enum policy_id)p, m, b, n) &&
		     (!prerope || llama_run_keep_prerope(st[count].own) == 0);
		count++;
		struct drop_policy *dp = &out->p[p];
		dp->ran = true;
		dp->logprob = calloc((size_t)n, sizeof *dp->logprob);
		dp->top = calloc((size_t)n, sizeof *dp->top);
		dp->top_logprob = calloc((size_t)n, sizeof *dp->top_logprob);
		dp->fed = generate ? calloc((size_t)n, sizeof *dp->fed) : NULL;
		dp->kl = full_runs ? calloc((size_t)n, sizeof *dp->kl) : NULL;
		dp->full_logprob = reads ? calloc((size_t)n, sizeof *dp->full_logprob) : NULL;
		dp->full_top = reads ? calloc((size_t)n, sizeof *dp->full_top) : NULL;
		ok = ok && dp->logprob && dp->top && dp->top_logprob && (!generate || dp->fed) &&
		     (!full_runs || dp->kl) && (!reads || (dp->full_logprob && dp->full_top));
	}
	const size_t vocab = (size_t)cfg->vocab_size;
	const int held_from = want->prompt > 1 ? want->prompt : 1;
	const double caches = (double)cfg->n_layers * cfg->n_kv_heads;
	double *full_lp = full_runs ? malloc(2 * vocab * sizeof *full_lp) : NULL;
	double lse[POLICY_COUNT];
	ok = ok && (!full_runs || full_lp) && (!reads || drop_judge_new(&judge, m, n, count));
	int full = -1;
	for (int i = 0; i < count; i++)
		if (st[i].id == POLICY_FULL)
			full = i;
	/* Nothing is cut before the prompt's end: every policy starts on the
	 * first's run, the others spare until their caches part. */
	struct llama_run *spare[POLICY_COUNT];
	int nspare = 0;
	for (int i = 1; ok && i < count; i++) {
		spare[nspare++] = st[i].own;
		st[i].run = st[0].own;
	}
	/* While every policy is on one run (nothing is cut before the
	 * prompt's end) the given tokens go a span at a time: every weight
	 * read once for all of them, each position's figures and rules then
	 * from its own logits and weights, as its own step would leave them. */
	const size_t lh = (size_t)cfg->n_layers * (size_t)cfg->n_heads;
	const int span_end = b->prompt < given ? b->prompt : given;
	int span_max = span_off() ? 1 : DROP_SPAN;
	while (span_max > 1 && (double)span_max * (double)lh * n * sizeof(float) > DROP_SPAN_BYTES)
		span_max /= 2;
	float *span_lg = NULL, *span_w = NULL;
	if (ok && span_max > 1 && span_end > 1) {
		span_lg = malloc((size_t)span_max * vocab * sizeof *span_lg);
		span_w = malloc((size_t)span_max * lh * (size_t)n * sizeof *span_w);
		ok = span_lg && span_w;
	}
	for (int t0 = 0; ok && t0 < n;) {
		if (progress_stopped(progress)) {
			snprintf(err, DROP_ERR_MAX, "stopped at step %d of %d", t0, n);
			free(full_lp);
			free(span_lg);
			free(span_w);
			drop_judge_free(&judge);
			states_free(st, count, cfg);
			scratch_free(&x[0]);
			scratch_free(&x[1]);
			drop_result_free(out);
			return DROP_STOPPED;
		}
		bool one = true;
		for (int i = 1; i < count; i++)
			one = one && st[i].run == st[0].run;
		int span = span_end - t0 < span_max ? span_end - t0 : span_max;
		if (!one || span < 2)
			span = 1;
		/* The distinct runs, each stepped once for the states sharing it
		 * (their caches the same, so fed the same token: the text's, or
		 * the top of the same logits). */
		int nrun = 0, which[POLICY_COUNT];
		for (int i = 0; i < count; i++) {
			const struct drop_policy *dp = &out->p[st[i].id];
			const int token = t0 < given ? tokens[t0] : dp->top[t0 - 1];
			for (int j = 0; dp->fed && j < span; j++)
				dp->fed[t0 + j] = j == 0 ? token : tokens[t0 + j];
			which[i] = -1;
			for (int k = 0; k < nrun && which[i] < 0; k++)
				if (runs[k] == st[i].run)
					which[i] = k;
			if (which[i] < 0) {
				which[i] = nrun;
				runs[nrun] = st[i].run;
				feed[nrun++] = token;
			}
		}
		/* Generating: a reading parts from the full cache's run when its
		 * policy is fed another token, and steps beside the runs. */
		int nstep = nrun;
		for (int i = 0; reads && t0 >= given && i < count; i++) {
			const int token = out->p[st[i].id].top[t0 - 1];
			if (i != full && !judge.run[i] && token != out->p[POLICY_FULL].top[t0 - 1])
				drop_judge_part(&judge, i, st[full].run);
			if (judge.run[i]) {
				runs[nstep] = judge.run[i];
				feed[nstep++] = token;
			}
		}
		const int rc = span > 1 ? llama_step_span(m, runs[0], &tokens[t0], span, t0, NULL,
		                                          span_lg, span_w)
		                        : llama_step_batch(m, runs, nstep, feed, t0);
		if (rc != 0) {
			snprintf(err, DROP_ERR_MAX,
			         "the model cannot take token %d at position %d (its vocabulary "
			         "has %d, its context %d)",
			         feed[0], t0, cfg->vocab_size, cfg->seq_len);
			free(full_lp);
			free(span_lg);
			free(span_w);
			drop_judge_free(&judge);
			states_free(st, count, cfg);
			scratch_free(&x[0]);
			scratch_free(&x[1]);
			drop_result_free(out);
			return -1;
		}
		for (int j = 0; j < span; j++) {
			const int t = t0 + j;
			/* A span's earlier positions: their logits and weights, and
			 * the caches as their step left them (slots 0 .. t). */
			const bool lane = j + 1 < span;
			const struct span_view view = {lane ? span_w + (size_t)j * lh * (size_t)n
			                                    : NULL,
			                               (size_t)n, t + 1, cfg->n_heads};
			for (int i = 0; i < count; i++)
				st[i].view = lane ? &view : NULL;
			struct step_work w = {.cfg = cfg,
			                      .st = st,
			                      .count = count,
			                      .out = out,
			                      .which = which,
			                      .t = t,
			                      .next = t + 1 < given ? tokens[t + 1] : -1,
			                      .lse = lse,
			                      .full = full,
			                      .full_lp = full_lp,
			                      .full_p = full_lp + vocab,
			                      .b = b,
			                      .x = x,
			                      .cap = (size_t)n,
			                      .logits = lane ? span_lg + (size_t)j * vocab : NULL,
			                      .judge = reads && t + 1 >= given ? &judge : NULL};
			w.stage = STAGE_FIGURES;
			llama_run_two(m, step_part, &w);
			/* The same logits: the same figures. */
			for (int i = 0; i < count; i++) {
				const int first = first_of(which, i);
				if (first == i)
					continue;
				struct drop_policy *dp = &out->p[st[i].id];
				const struct drop_policy *same = &out->p[st[first].id];
				dp->top[t] = same->top[t];
				dp->top_logprob[t] = same->top_logprob[t];
				lse[i] = lse[first];
				if (t + 1 < n)
					dp->logprob[t] = same->logprob[t];
			}
			if (full_runs && !w.judge) {
				w.stage = STAGE_FULL;
				llama_run_two(m, step_part, &w);
			}
			w.stage = STAGE_DIVERGE_CUT;
			llama_run_two(m, step_part, &w);
			/* A run shared with the full cache's differs from it by nothing:
			 * every term is 0; one shared with an earlier policy's has its
			 * divergence. */
			for (int i = 0; full_runs && !w.judge && i < count; i++) {
				const int first = first_of(which, i);
				if (i == full || (first == i && which[i] != which[full]))
					continue;
				out->p[st[i].id].kl[t] =
				        which[i] == which[full] ? 0.0 : out->p[st[first].id].kl[t];
			}
			cuts_apply(cfg, st, count, (size_t)n, spare, &nspare);
			if (t + 1 >= held_from)
				for (int i = 0; i < count; i++)
					held_add(cfg, &st[i], &out->p[st[i].id], caches);
			progress_tell(progress, done + t + 1, total);
		}
		for (int i = 0; i < count; i++)
			st[i].view = NULL;
		t0 += span;
	}
	free(span_lg);
	free(span_w);
	free(full_lp);
	drop_judge_free(&judge);
	states_free(st, count, cfg);
	scratch_free(&x[0]);
	scratch_free(&x[1]);
	for (int p = 0; ok && p < POLICY_COUNT; p++)
		if (out->p[p].ran && out->p[p].held_mean > 0)
			out->p[p].held_mean /= n - held_from + 1;
	if (!ok) {
		drop_result_free(out);
		return fail_nomem(err);
	}
	return 0;
}

int drop_measure(const struct llama_model *m, const int *tokens, int n, int given,
                 const struct budget *b, unsigned mask, struct drop_result *out,
                 char err[DROP_ERR_MAX])
{
	return measure(m, tokens, n, given, b, mask, out, err, NULL, 0, n);
}

int drop_measure_told(const struct llama_model *m, const int *tokens, int n, int given,
                      const struct budget *b, unsigned mask, struct drop_result *out,
                      char err[DROP_ERR_MAX], const struct progress *progress)
{
	return measure(m, tokens, n, given, b, mask, out, err, progress, 0, n);
}

int drop_sweep_measure(const struct llama_model *m, const int *tokens, int n, int given,
                       const struct budget *want, const int *budgets, int count, double heavy_share,
                       double ratio, unsigned mask, struct drop_sweep *out, char err[DROP_ERR_MAX],
                       const struct progress *progress)
{
	*out = (struct drop_sweep){.count = count, .ratio = ratio};
	out->budgets = calloc((size_t)count, sizeof *out->budgets);
	out->runs = calloc((size_t)count, sizeof *out->runs);
	if (!out->budgets || !out->runs) {
		drop_sweep_free(out);
		return fail_nomem(err);
	}
	const int from = want->prompt > 0 ? want->prompt - 1 : 0;
	for (int i = 0; i < count; i++) {
		const int total = budgets[i];
		const struct budget b = budget_split(want, total, heavy_share);
		out->budgets[i] = total;
		const int rc = measure(m, tokens, n, given, &b, mask, &out->runs[i], err, progress,
		                       (double)i * n, (double)count * n);
		if (rc != 0) {
			out->count = i;
			drop_sweep_free(out);
			return rc;
		}
		const int last = out->runs[i].given - 1;
		const double full = drop_perplexity(&out->runs[i], POLICY_FULL, from, last);
		for (int p = 0; p < POLICY_COUNT; p++) {
			if (!out->runs[i].p[p].ran)
				continue;
			const double ppl =
			        drop_perplexity(&out->runs[i], (enum policy_id)p, from, last);
			if (last > from && drop_matched(&out->runs[i], (enum policy_id)p) &&
			    report_ppl_meets(ppl, full, ratio) &&
			    (!out->good[p] || total < out->good[p]))
				out->good[p] = total;
		}
	}
	return 0;
}
