/*
 * report: every policy's figures over a whole scene, as a table, JSON or
 * CSV.
 *
 * The report runs the engine once and summarises each policy: its budget,
 * what it holds at the end, its mean and worst output error, its mean
 * attention recall and the first step at which it missed the target (a
 * figure and a threshold: recall >= 0.95 unless the user names another).
 * The budget sweep repeats that for a list of budgets and names, for each
 * policy, the smallest budget whose mean meets the same target. The
 * measured figures are kept in a struct report_run, so that a writer
 * (text, JSON, CSV here; the plot above this stage) can read them.
 */
#ifndef H2O_REPORT_H
#define H2O_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "h2o/engine.h"
#include "h2o/policy.h"

struct drop_result;
struct drop_sweep;
struct progress;
struct scene;

/* The figures a target can name, with the word the command line and the
 * text use for each, the direction that is good, and the JSON/CSV key of
 * its per-step value. */
#define REPORT_FIGURES                                  \
	X(REPORT_RECALL, "recall", true, "attn_recall") \
	X(REPORT_ERR, "err", false, "out_err")          \
	X(REPORT_COS, "cos", true, "out_cos")

enum report_figure {
#define X(id, word, high, key) id,
	REPORT_FIGURES
#undef X
	        REPORT_FIGURE_COUNT
};

/* A target: FIGURE at least VALUE (recall, cos) or at most VALUE (err).
 * A step misses it when its figure is on the wrong side; a budget meets
 * it when the policy's mean over the steps is on the right side. */
struct report_target {
	enum report_figure figure;
	double value;
};

/* The default target, and the one the sweep's JSON also names by its
 * older key "budget_for_recall_0.95". */
#define REPORT_DEFAULT_TARGET ((struct report_target){REPORT_RECALL, 0.95})

/* Parse "recall=0.95", "err=0.1", "cos=0.99" into *T. Recall and cos
 * take 0..1, err any number >= 0. False when S is none of them. */
bool report_target_parse(const char *s, struct report_target *t);
/* "recall", "err", "cos". */
const char *report_figure_word(enum report_figure f);
/* "attn_recall", "out_err", "out_cos". */
const char *report_figure_key(enum report_figure f);
/* Whether the larger F is the better (recall, cos). */
bool report_figure_high(enum report_figure f);
/* Whether a per-step VALUE misses target T. */
bool report_target_missed(const struct report_target *t, double value);
/* The value of figure F in M. */
double report_figure_of(enum report_figure f, const struct step_metrics *m);
/* "recall >= 0.95", "err <= 0.1" into BUF. */
void report_target_text(const struct report_target *t, char *buf, int size);
/* "recall < 0.95": what a step that misses T shows, into BUF. */
void report_target_miss_text(const struct report_target *t, char *buf, int size);

/* The model's target (a model scene's real drop, drop.h): a policy meets
 * ppl=R when its perplexity over the decoded tokens (those after the
 * prompt) is at most R times the full cache's. It is the same --target
 * vocabulary, FIG=VALUE; the attention tables keep their own target
 * (recall >= 0.95 unless another is named) beside it. */
#define REPORT_PPL_DEFAULT 1.01
/* Parse "ppl=1.01" into *RATIO: a finite number of at least 1. False when
 * S is not ppl=R (it may be an attention target: report_target_parse). */
bool report_ppl_parse(const char *s, double *ratio);
/* Whether perplexity PPL meets ppl=RATIO against the full cache's FULL. */
bool report_ppl_meets(double ppl, double full, double ratio);
/* "ppl <= 1.01 x full" into BUF. */
void report_ppl_text(double ratio, char *buf, int size);

/* One policy's figures over a scene (over all heads, or one head). The
 * attention figures (err, cos, recall, the first miss) are summed over the
 * run's figure steps, report_run.from .. n: the steps after the prompt
 * unless REPORT_WITH_PROMPT; the memory held over the steps from the
 * prompt's end on (report_run.held_from .. n), whatever the figures'
 * steps, since every policy holds the same while the prompt is read. */
struct report_summary {
	int tokens; /* held at the last step, every cache of the row added */
	long kv;
	double err_sum, err_max, cos_sum, recall_sum;
	int first_miss;  /* first figure step that missed the target, 0 if none */
	int steps;       /* the figure steps the sums cover */
	int caches;      /* the key/value caches the row adds up (layers x kv heads) */
	int held_peak;   /* the most tokens held after a step, every cache added */
	long kv_peak;    /* the KV numbers then */
	double held_sum; /* tokens held after each step, summed over the held steps */
	int held_steps;
};

/* What to keep beside the summaries. */
enum {
	REPORT_KEEP_HEADS = 1u << 0,  /* a summary per head */
	REPORT_KEEP_STEPS = 1u << 1,  /* every step's figures (over all heads;
	                                * per head too with REPORT_KEEP_HEADS) */
	REPORT_KEEP_LAYERS = 1u << 2, /* a summary per layer */
	/* The attention figures over every step, the prompt's too; without
	 * it over the steps after the prompt only (the decode figures). */
	REPORT_WITH_PROMPT = 1u << 3,
};

/* The policies computed to show the policies of the mask SHOWN (a bit per
 * policy, ENGINE_POLICY): those, the full cache, the reference every
 * figure is measured against, and H2O, overlap_h2o's. */
unsigned report_policies_run(unsigned shown);
/* The bytes of one KV number: the caches are float32, as the model's. */
#define REPORT_KV_BYTES 4

/* One run of the engine over a scene at one budget. */
struct report_run {
	const struct scene *scene;
	/* The policies shown (ENGINE_ALL_POLICIES for report_measure): only
	 * report_policies_run of them were computed, the others' figures
	 * are zero. */
	unsigned policies;
	struct policy_budget budget; /* as the rules read it (policy_budget_of) */
	struct report_target target;
	int heads;
	struct report_summary sum[POLICY_COUNT];
	struct report_summary *head_sum; /* [h * POLICY_COUNT + p], or NULL */
	int layers;
	/* [l * POLICY_COUNT + p] with REPORT_KEEP_LAYERS (the report then has
	 * a row per layer), or NULL */
	struct report_summary *layer_sum;
	struct step_metrics *steps;      /* [(t - 1) * POLICY_COUNT + p], or NULL */
	struct step_metrics *head_steps; /* [((t - 1) * heads + h) * POLICY_COUNT + p], or NULL */
	/* The figure steps, from .. scene->n: from = P + 1 (the decode
	 * steps), or 1 with REPORT_WITH_PROMPT or when the prompt is the
	 * whole scene; decode says which. */
	int from;
	bool decode;
	int held_from; /* the held memory's steps, held_from .. n: max(P, 1) */
};

/* Run the engine over SCENE at budget B (every head), keeping what KEEP
 * asks for; PROGRESS (NULL: no one) is told DONE + step of TOTAL. Returns
 * 0, or -1 when out of memory (nothing to free then). */
int report_measure(const struct scene *scene, const struct budget *b,
                   const struct report_target *target, unsigned keep, struct report_run *run,
                   const struct progress *progress, double done, double total);
/* report_measure computing only what the policies of the mask SHOWN
 * need (report_policies_run); each of them gets exactly the figures
 * report_measure gives it. */
int report_measure_only(const struct scene *scene, const struct budget *b,
                        const struct report_target *target, unsigned keep, unsigned shown,
                        struct report_run *run, const struct progress *progress, double done,
                        double total);
void report_run_done(struct report_run *run);
/* The bytes report_measure allocates on SCENE for KEEP (for a run larger
 * than the machine can hold, refused before it starts). */
double report_keep_bytes(const struct scene *scene, unsigned keep);

/* The mean of figure F in S over its figure steps. */
double report_summary_mean(const struct report_summary *s, enum report_figure f);

/* The tokens S held per key/value cache: at its peak and on average over
 * the held steps. */
double report_held_peak(const struct report_summary *s);
double report_held_mean(const struct report_summary *s);
/* The bytes S's caches held at its peak and on average (REPORT_KV_BYTES a
 * KV number). */
double report_bytes_peak(const struct report_summary *s);
double report_bytes_mean(const struct report_summary *s);

/* The most tokens a key/value cache of a policy that evicts while
 * decoding holds under B: B + interval - 1 (design §2). */
int report_matched_bound(const struct policy_budget *b);
/* Whether policy P's whole-run row in RUN held at most the matched bound
 * per key/value cache at its peak: its memory is the others'. The full
 * cache, the reference, is never matched (unless B covers every token). */
bool report_matched(const struct report_run *run, enum policy_id p);

/* How the sweep turns a total budget B into heavy and recent. */
struct report_split {
	double heavy;       /* heavy's fraction: heavy = floor(B * heavy) */
	const char *source; /* what the user gave ("--split 0.25"), or NULL */
};

/* The sweep: a run per total budget. */
struct report_sweep {
	int count;
	int *budgets;
	struct report_run *runs;
	struct report_split split;
	unsigned policies; /* shown, as report_run.policies */
	/* The smallest budget meeting the target at which the policy was
	 * matched (report_matched), 0: none. */
	int good[POLICY_COUNT];
	bool unlimited[POLICY_COUNT]; /* keeps everything: needs no budget */
	/* Matched at some budget of the list; a policy never matched has no
	 * place in the smallest budget's line but the list of those. */
	bool ever_matched[POLICY_COUNT];
};

/* Measure SCENE for each total budget of BUDGETS (COUNT of them, copied),
 * B split to it by SPLIT (budget_split), its sinks, interval and prompt
 * B's. Every budget is measured before anything is written, so running out
 * of memory (-1, nothing to free) leaves no partial output behind. */
int report_sweep_measure(const struct scene *scene, const struct budget *b, const int *budgets,
                         int count, const struct report_split *split,
                         const struct report_target *target, unsigned keep,
                         struct report_sweep *sweep, const struct progress *progress);
/* report_sweep_measure for the policies of the mask SHOWN only
 * (report_measure_only). */
int report_sweep_measure_only(const struct scene *scene, const struct budget *b, const int *budgets,
                              int count, const struct report_split *split,
                              const struct report_target *target, unsigned keep, unsigned shown,
                              struct report_sweep *sweep, const struct progress *progress);
void report_sweep_done(struct report_sweep *sweep);

#endif
