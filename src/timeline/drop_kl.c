/*
 * drop_kl: generating, each policy's own text read by the full cache's
 * model as the policies write it, and the divergence of the two
 * next-token distributions (see drop_impl.h).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "drop_impl.h"
#include "h2o/llama.h"

double drop_log_prob(const float *logits, int vocab, int token, int *top, double *top_lp,
                     double *lse)
{
	double m = -INFINITY;
	int best = 0;
	for (int i = 0; i < vocab; i++)
		if ((double)logits[i] > m) {
			m = logits[i];
			best = i;
		}
	double sum = 0.0;
	for (int i = 0; i < vocab; i++)
		sum += exp((double)logits[i] - m);
	*top = best;
	*top_lp = (double)logits[best] - m - log(sum);
	*lse = m + log(sum);
	return token >= 0 ? (double)logits[token] - m - log(sum) : 0.0;
}

bool drop_judge_new(struct drop_judge *j, const struct llama_model *m, int n, int count)
{
	*j = (struct drop_judge){0};
	for (int i = 0; i + 1 < count; i++) {
		j->spare[i] = llama_run_new_len(m, n);
		if (!j->spare[i])
			return false;
		j->nspare++;
	}
	return true;
}

void drop_judge_free(struct drop_judge *j)
{
	for (int i = 0; i < POLICY_COUNT; i++) {
		llama_run_free(j->run[i]);
		if (i < j->nspare)
			llama_run_free(j->spare[i]);
	}
	*j = (struct drop_judge){0};
}

void drop_judge_part(struct drop_judge *j, int i, const struct llama_run *full_run)
{
	struct llama_run *r = j->spare[--j->nspare];
	j->spare[j->nspare] = NULL;
	/* The same model and length, and R keeps no queries before RoPE: the
	 * copy cannot be refused. */
	const int copied = llama_run_copy(r, full_run);
	assert(copied == 0);
	(void)copied;
	j->run[i] = r;
}

void drop_ref_step(const float *ref, const float *logits, double lse, int vocab, int t, int n,
                   struct drop_policy *dp)
{
	int top;
	double top_lp, ref_lse;
	const double next = drop_log_prob(ref, vocab, dp->top[t], &top, &top_lp, &ref_lse);
	dp->full_top[t] = top;
	if (t + 1 < n)
		dp->full_logprob[t] = next;
	/* KL(full || run) as the teacher-forced figure: summed over the
	 * vocabulary in id order from 0.0. */
	double kl = 0.0;
	for (int v = 0; v < vocab; v++) {
		const double lp = (double)ref[v] - ref_lse;
		kl += exp(lp) * (lp - ((double)logits[v] - lse));
	}
	dp->kl[t] = kl;
}
