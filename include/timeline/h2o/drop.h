/*
 * drop: what eviction does to the model itself (the real drop).
 *
 * A trace scene shows each head's local picture: the policies evict from
 * caches whose queries, keys and values all come from the full cache's
 * forward pass. The real drop runs the model once per policy, and every
 * layer and key/value head of that run keeps only what the policy keeps:
 * the attention at layer l and step t is computed over that policy's
 * cache, its output feeds layer l + 1, and so the policy's own hidden
 * states, logits and next token follow. The rules are design §2's, driven
 * by the run's own attention weights (the floats that multiplied the value
 * rows, as doubles): each cache's score adds the mean of its group's
 * weights, TOVA weighs the mean over all the layer's query heads and keeps
 * the same positions in every key/value head of the layer, nothing goes
 * before the prompt's end, and then each rule runs once over the prompt
 * and once per step (policy_run, the engine's one driver). The SnapKV
 * family reads the run's own observation window: each query head's
 * weights at the prompt's last W steps, summed and divided by W, exactly
 * as the engine's observation (policy.h); AdaKV decides for every kv head
 * of a layer at once. With a budget that never evicts, every policy's
 * logits are the full cache's, bit for bit (the runs are the same
 * arithmetic: llama.h).
 *
 * Teacher-forced: every run is fed the text's tokens, and the figures are
 * each run's log-probability of the text's next token. Generating: after
 * the prompt each run is fed its own greedy choice, so the continuations
 * part where the policy changed the model's mind.
 */
#ifndef H2O_DROP_H
#define H2O_DROP_H

#include <stdbool.h>

#include "h2o/budget.h"
#include "h2o/policy.h"

struct drop_result;
struct llama_model;
struct progress;

#define DROP_ERR_MAX 256
/* drop_measure's and drop_sweep_measure's status when memory ran out (any
 * other failure is -1, with the reason in ERR). */
#define DROP_NOMEM (-2)
/* drop_measure_told's status when its progress asked it to stop
 * (progress_stopped, checked before every step). */
#define DROP_STOPPED (-3)

/* One policy's run over the text. */
struct drop_policy {
	bool ran;
	/* logprob[t]: ln p(token t + 1 | tokens 0 .. t) after step t + 1, the
	 * natural log of its softmax in double; t = 0 .. n - 2. */
	double *logprob;
	/* top[t]: the run's most likely next token after step t + 1 (the
	 * lower id on a tie); t = 0 .. n - 1. */
	int *top;
	double *top_logprob; /* ln p of top[t] */
	/* Generating: the tokens this run was fed, n of them (the prompt's,
	 * then its own choices); NULL when teacher-forced. */
	int *fed;
	/* kl[t]: KL(full || this run) of the next-token distributions after
	 * step t + 1, in nats (llama.cpp's --kl-divergence figure), t = 0 ..
	 * n - 1; 0 for the full cache; NULL when the full cache did not run.
	 * Generating, from the prediction of the first generated token on
	 * (t >= given - 1) both distributions are conditioned on this run's
	 * own text fed[0 .. t]: the full cache's model reading it (as
	 * full_logprob) against this run, which wrote it; before, the text is
	 * the same for every run. */
	double *kl;
	/* The memory the run held, in tokens per key/value cache (every
	 * layer's and kv head's added, divided by their number) after each
	 * step from the prompt's end on (max(P, 1) .. n): its peak and mean. */
	double held_peak, held_mean;
	/* Generating: the full cache's judgement of this run's text.
	 * full_logprob[t] is ln p(fed[t + 1] | fed[0 .. t]) under the model
	 * with a full cache, for t = given - 1 .. n - 2 (the run's own
	 * choices), 0 before; NULL when teacher-forced. */
	double *full_logprob;
	/* Generating: full_top[t] is the full cache's model's likeliest token
	 * after fed[0 .. t] (this run's text), for t = given - 1 .. n - 1, 0
	 * before; the full cache's own top there. NULL when teacher-forced. */
	int *full_top;
};

/* Whether policy P's run in R held no more than its budget, B + interval
 * - 1 tokens per key/value cache at its peak (report_matched_bound): its
 * memory was the others'. The full cache, the reference, is not. */
bool drop_matched(const struct drop_result *r, enum policy_id p);

/* Generating: the full cache's perplexity of policy P's own generated
 * tokens (fed[given .. n - 1], drop_policy.full_logprob); 1 when there are
 * none. */
double drop_text_perplexity(const struct drop_result *r, enum policy_id p);
/* Generating: the first position (given .. n - 1) whose token P's run was
 * fed differs from the full cache's run's, or -1 when they agree
 * throughout; its distance from GIVEN is the generated tokens they have
 * in common (n - given when they never part). */
int drop_divergence(const struct drop_result *r, enum policy_id p);
int drop_common_prefix(const struct drop_result *r, enum policy_id p);

/* The spread of a run's KL divergence over some predictions. */
struct drop_kl {
	double mean, median, p99, max;
};

struct drop_result {
	int n, prompt;
	/* Tokens 0 .. given - 1 are the text's; generating (given < n), each
	 * run is fed its own choices after them. */
	int given;
	bool generate;
	struct policy_budget budget;
	struct drop_policy p[POLICY_COUNT];
};

/* The policies the model runs to show the policies of the mask SHOWN
 * (ENGINE_POLICY): those and the full cache, the reference of the
 * perplexity's target and the KL divergence. */
unsigned drop_policies_run(unsigned shown);

/*
 * Run model M over N tokens once per policy of MASK (the full cache
 * included when asked) under budget B, with B's prompt (no eviction before
 * its end): the first GIVEN of TOKENS teacher-forced, then
 * (GIVEN < N) each run its own greedy choices up to N. 0 and *OUT filled,
 * DROP_NOMEM when memory ran out, or -1 with ERR filled (a text longer than
 * the model's context, a token the model cannot take).
 */
int drop_measure(const struct llama_model *m, const int *tokens, int n, int given,
                 const struct budget *b, unsigned mask, struct drop_result *out,
                 char err[DROP_ERR_MAX]);
/* drop_measure telling PROGRESS (cost.h) how many of the N steps are
 * done, every policy's run having taken each. */
int drop_measure_told(const struct llama_model *m, const int *tokens, int n, int given,
                      const struct budget *b, unsigned mask, struct drop_result *out,
                      char err[DROP_ERR_MAX], const struct progress *progress);
void drop_result_free(struct drop_result *r);
/* The memory drop_measure allocates for model M over N tokens with a
 * prompt of PROMPT for the policies of MASK, in bytes (the model itself
 * is the scene's, loaded already); GENERATE: the model writes after the
 * text, and each policy's text is read by the full cache's model as it
 * goes (a run more per policy). */
double drop_predict_memory(const struct llama_model *m, int n, int prompt, bool generate,
                           unsigned mask);
/* Its multiply-adds, about: every run's matrix products and attention. */
double drop_predict_madds(const struct llama_model *m, int n, unsigned mask);

/* Perplexity of policy P's run over the predictions FROM .. TO - 1 (of
 * logprob), exp of minus their mean; 1 when the range is empty. */
double drop_perplexity(const struct drop_result *r, enum policy_id p, int from, int to);

/* The first prediction (0 .. n - 1) where policy P's top token differs
 * from the full cache's, or -1 when they agree throughout. */
int drop_first_change(const struct drop_result *r, enum policy_id p);

/* Policy P's KL divergence from the full cache over the predictions FROM
 * .. TO - 1 (drop_policy.kl) into OUT: its mean, median (of an even count,
 * the mean of the middle two), 99th percentile (the nearest rank) and
 * maximum. 0, or -1 (OUT zero) when there is none or memory ran out. */
int drop_kl_stats(const struct drop_result *r, enum policy_id p, int from, int to,
                  struct drop_kl *out);
/* The share of predictions FROM .. TO - 1 where policy P's top token is the
 * full cache's. */
double drop_agreement(const struct drop_result *r, enum policy_id p, int from, int to);

/* Generating: the predictions that wrote policy P's generated tokens,
 * t = given - 1 .. n - 2, each compared with the full cache's model
 * reading the same text (drop_policy.kl, full_top): the spread of the KL
 * divergence into OUT as drop_kl_stats (0, or -1 when there is none), and
 * the share of them where P's likeliest token was the full model's (1
 * when there are none). */
int drop_text_kl(const struct drop_result *r, enum policy_id p, struct drop_kl *out);
/* The full cache's model's likeliest next token after step T + 1 of the
 * text policy P's run read: the full cache's own top[t] while every run
 * reads the same text, full_top[t] where P's run wrote its own; -1 when
 * the full cache did not run. */
int drop_full_top(const struct drop_result *r, enum policy_id p, int t);
double drop_text_agreement(const struct drop_result *r, enum policy_id p);

/* The real drop at each of several total budgets. */
struct drop_sweep {
	int count;
	int *budgets;             /* [count], as given */
	struct drop_result *runs; /* [count] */
	double ratio;             /* the target (ppl=R, report.h): perplexity after the
	                           * prompt at most ratio x the full cache's */
	/* the smallest budget meeting it at which the policy was matched
	 * (drop_matched), 0: none */
	int good[POLICY_COUNT];
};

/*
 * drop_measure for each total budget BUDGETS[i] (COUNT of them), B split
 * to it as budget_split splits (heavy = floor(total * HEAVY_SHARE)), its
 * sinks, interval and prompt B's; RATIO is the
 * target (1.01: within 1% of the full cache's perplexity after the
 * prompt); the policies of MASK run (drop_measure's, the full cache among
 * them for the target). PROGRESS (cost.h) is told of the steps done of all the
 * budgets' (NULL: no one). 0, or drop_measure's failure.
 */
int drop_sweep_measure(const struct llama_model *m, const int *tokens, int n, int given,
                       const struct budget *b, const int *budgets, int count, double heavy_share,
                       double ratio, unsigned mask, struct drop_sweep *out, char err[DROP_ERR_MAX],
                       const struct progress *progress);
void drop_sweep_free(struct drop_sweep *s);
/* The full cache's perplexity after the prompt (the sweep's first run;
 * every budget's full cache is the same run). */
double drop_sweep_full(const struct drop_sweep *s);

/* Whether R's text has tokens after the prompt, whose perplexity a target
 * judges: a text that ends at the prompt (the model writes the rest) has
 * none, and its decode figures print as null, "-" or an empty cell. */
bool drop_judged(const struct drop_result *r);

#endif
