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
#include "drop_state.h"

/* The given tokens the runs step at once while they are one run, and the
 * most their positions' weights may take. */
#define DROP_SPAN       16
#define DROP_SPAN_BYTES (32.0 * 1024 * 1024)

/* H2O_DROP_SPAN=1: one position a step throughout (the tests' plain
 * path). */
static bool span_off(void)
{
	const char *e = getenv("H2O_DROP_SPAN");
	return e != NULL && strcmp(e, "1") == 0;
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
			drop_evict_step(w->cfg, st, w->t + 1, w->b, &w->x[part], w->cap);
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
	bool ok =
	        drop_scratch_new(&x[0], (size_t)n, (size_t)cfg->n_kv_heads, (size_t)cfg->head_size);
	ok = drop_scratch_new(&x[1], (size_t)n, (size_t)cfg->n_kv_heads, (size_t)cfg->head_size) &&
	     ok;
	/* A rule that reads the queries before RoPE: every run keeps them
	 * (the policies share runs until their caches part). */
	const bool prerope = reads_queries(mask);
	for (int i = 0; ok && prerope && i < 2; i++)
		ok = (x[i].qv = drop_queries_new(m, n)) != NULL;
	for (int p = 0; p < POLICY_COUNT && ok; p++) {
		if (!(mask & (1u << p)))
			continue;
		ok = drop_state_new(&st[count], (enum policy_id)p, m, b, n) &&
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
			drop_states_free(st, count, cfg);
			drop_scratch_free(&x[0]);
			drop_scratch_free(&x[1]);
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
			drop_states_free(st, count, cfg);
			drop_scratch_free(&x[0]);
			drop_scratch_free(&x[1]);
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
	drop_states_free(st, count, cfg);
	drop_scratch_free(&x[0]);
	drop_scratch_free(&x[1]);
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
