/*
 * drop_impl: what drop.c and drop_kl.c share (private to the timeline).
 */
#ifndef H2O_DROP_IMPL_H
#define H2O_DROP_IMPL_H

#include <stdbool.h>

#include "h2o/drop.h"

struct llama_model;
struct llama_run;

/* ln p(TOKEN) of LOGITS' softmax over VOCAB (0 when TOKEN < 0), the
 * likeliest id into *TOP (the lower on a tie), its ln p into *TOP_LP and
 * the log-normaliser into *LSE; in double, the maximum taken out first. */
double drop_log_prob(const float *logits, int vocab, int token, int *top, double *top_lp,
                     double *lse);

/*
 * Generating: the full-cache runs that read each policy's own text. While
 * a policy's run has been fed the full cache's tokens, the full cache's
 * own run is that reading already; at the first step it is fed another,
 * it parts (drop_judge_part): a run of its own, copied from the full
 * cache's run before that step, and from then on fed the policy's tokens
 * in the same batch as the policies' runs. So the full model's next-token
 * distribution on the policy's text is at hand at each step, beside the
 * policy's own, without a second pass over the text.
 */
struct drop_judge {
	struct llama_run *run[POLICY_COUNT]; /* per state: its reading, or NULL */
	struct llama_run *spare[POLICY_COUNT];
	int nspare;
};

/* COUNT - 1 spare runs of model M over N positions; false when out of
 * memory (what was made is J's to free). */
bool drop_judge_new(struct drop_judge *j, const struct llama_model *m, int n, int count);
void drop_judge_free(struct drop_judge *j);
/* State I's reading parts from FULL_RUN (the full cache's run, before the
 * step that feeds it another token). */
void drop_judge_part(struct drop_judge *j, int i, const struct llama_run *full_run);

/* Generating, at prediction T: the full model's distribution REF on the
 * run's text against the run's own LOGITS (log-normaliser LSE): DP's
 * kl[t], full_top[t] and, before the last position (T + 1 < N), the full
 * model's ln p of the run's next token (full_logprob[t]). */
void drop_ref_step(const float *ref, const float *logits, double lse, int vocab, int t, int n,
                   struct drop_policy *dp);

#endif
