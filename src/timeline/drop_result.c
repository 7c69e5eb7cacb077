/*
 * drop_result: what a drop run measured, read back (see drop.h): the
 * perplexities, the first changed choice, the divergence and agreement
 * with the full cache, the KL statistics, and the results freed.
 */
#include "h2o/drop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/report.h"

void drop_result_free(struct drop_result *r)
{
	for (int p = 0; p < POLICY_COUNT; p++) {
		free(r->p[p].logprob);
		free(r->p[p].top);
		free(r->p[p].top_logprob);
		free(r->p[p].fed);
		free(r->p[p].kl);
		free(r->p[p].full_logprob);
		free(r->p[p].full_top);
	}
	memset(r, 0, sizeof *r);
}

double drop_perplexity(const struct drop_result *r, enum policy_id p, int from, int to)
{
	const struct drop_policy *dp = &r->p[p];
	if (!dp->ran || to <= from)
		return 1.0;
	double sum = 0.0;
	for (int t = from; t < to; t++)
		sum += dp->logprob[t];
	return exp(-sum / (to - from));
}

int drop_first_change(const struct drop_result *r, enum policy_id p)
{
	const struct drop_policy *a = &r->p[p], *f = &r->p[POLICY_FULL];
	if (!a->ran || !f->ran)
		return -1;
	for (int t = 0; t < r->n; t++)
		if (a->top[t] != f->top[t])
			return t;
	return -1;
}

bool drop_matched(const struct drop_result *r, enum policy_id p)
{
	return p != POLICY_FULL && r->p[p].ran &&
	       r->p[p].held_peak <= (double)report_matched_bound(&r->budget);
}

double drop_text_perplexity(const struct drop_result *r, enum policy_id p)
{
	const struct drop_policy *dp = &r->p[p];
	if (!dp->ran || !dp->full_logprob || r->n - r->given < 1)
		return 1.0;
	double sum = 0.0;
	for (int t = r->given - 1; t + 1 < r->n; t++)
		sum += dp->full_logprob[t];
	return exp(-sum / (r->n - r->given));
}

int drop_divergence(const struct drop_result *r, enum policy_id p)
{
	const struct drop_policy *a = &r->p[p], *f = &r->p[POLICY_FULL];
	if (!a->ran || !f->ran || !a->fed || !f->fed)
		return -1;
	for (int t = r->given; t < r->n; t++)
		if (a->fed[t] != f->fed[t])
			return t;
	return -1;
}

int drop_common_prefix(const struct drop_result *r, enum policy_id p)
{
	const int d = drop_divergence(r, p);
	return (d < 0 ? r->n : d) - r->given;
}

double drop_agreement(const struct drop_result *r, enum policy_id p, int from, int to)
{
	const struct drop_policy *a = &r->p[p], *f = &r->p[POLICY_FULL];
	if (!a->ran || !f->ran || to <= from)
		return 1.0;
	int same = 0;
	for (int t = from; t < to; t++)
		same += a->top[t] == f->top[t];
	return (double)same / (to - from);
}

void drop_sweep_free(struct drop_sweep *s)
{
	for (int i = 0; s->runs && i < s->count; i++)
		drop_result_free(&s->runs[i]);
	free(s->runs);
	free(s->budgets);
	memset(s, 0, sizeof *s);
}

/* X as JSON, or null when not KNOWN. */
bool drop_judged(const struct drop_result *r)
{
	return r->given - 1 > (r->prompt > 0 ? r->prompt - 1 : 0);
}

double drop_sweep_full(const struct drop_sweep *s)
{
	if (s->count == 0)
		return 1.0;
	const struct drop_result *r0 = &s->runs[0];
	return drop_perplexity(r0, POLICY_FULL, r0->prompt > 0 ? r0->prompt - 1 : 0, r0->given - 1);
}

static int compare_doubles(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int drop_kl_stats(const struct drop_result *r, enum policy_id p, int from, int to,
                  struct drop_kl *out)
{
	const struct drop_policy *dp = &r->p[p];
	*out = (struct drop_kl){0};
	if (!dp->ran || !dp->kl || to <= from)
		return -1;
	const int n = to - from;
	double *v = malloc((size_t)n * sizeof *v);
	if (!v)
		return -1;
	double sum = 0.0;
	for (int t = from; t < to; t++) {
		v[t - from] = dp->kl[t];
		sum += dp->kl[t];
	}
	qsort(v, (size_t)n, sizeof *v, compare_doubles);
	out->mean = sum / n;
	out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
	/* The nearest rank: the smallest value at least 99 % of them are
	 * no greater than. */
	const int rank = (int)ceil(0.99 * n);
	out->p99 = v[rank > 0 ? rank - 1 : 0];
	out->max = v[n - 1];
	free(v);
	return 0;
}

int drop_text_kl(const struct drop_result *r, enum policy_id p, struct drop_kl *out)
{
	if (!r->p[p].full_top) {
		*out = (struct drop_kl){0};
		return -1;
	}
	return drop_kl_stats(r, p, r->given - 1, r->n - 1, out);
}

double drop_text_agreement(const struct drop_result *r, enum policy_id p)
{
	const struct drop_policy *a = &r->p[p];
	if (!a->ran || !a->full_top || r->n - r->given < 1)
		return 1.0;
	int same = 0;
	for (int t = r->given - 1; t + 1 < r->n; t++)
		same += a->top[t] == a->full_top[t];
	return (double)same / (r->n - r->given);
}

int drop_full_top(const struct drop_result *r, enum policy_id p, int t)
{
	const struct drop_policy *a = &r->p[p];
	if (!a->ran || !r->p[POLICY_FULL].ran)
		return -1;
	return a->full_top && t >= r->given - 1 ? a->full_top[t] : r->p[POLICY_FULL].top[t];
}
