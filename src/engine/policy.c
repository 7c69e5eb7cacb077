/*
 * policy: the table of policies, what is asked of them through it, and the
 * pieces of rule and wording they share.
 */
#include "h2o/policy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine_kernel.h"
#include "policy_rule.h"

#define X(id, name) extern const struct policy policy_##name;
POLICIES(X)
#undef X

const struct policy *const policies[POLICY_COUNT] = {
#define X(id, name) [POLICY_##id] = &policy_##name,
        POLICIES(X)
#undef X
};

bool policy_reads_keys(enum policy_id p)
{
	return policies[p]->by_key_norm || policies[p]->by_keys;
}

bool policy_reads_queries(enum policy_id p)
{
	return policies[p]->by_queries;
}

int policy_find(const char *name)
{
	for (int i = 0; i < POLICY_COUNT; i++)
		if (strcmp(policies[i]->name, name) == 0)
			return i;
	return -1;
}

int policy_matched_form(enum policy_id p)
{
	return policies[p]->matched_form ? policy_find(policies[p]->matched_form) : -1;
}

int policy_interval(const struct policy_budget *b)
{
	return b->interval > 1 ? b->interval : 1;
}

bool policy_compresses(const struct policy_budget *b, int step)
{
	return step >= b->prompt && (step - b->prompt) % policy_interval(b) == 0;
}

/* The region in which P's tokens wait for the next compression at an
 * interval: where its region rule puts a token older than the B newest,
 * long after the prompt and the sinks (H2O's heavy hitters' region, as
 * its recent region is the recent newest; a window's only one). */
static enum policy_region waiting_region(enum policy_id p, const struct policy_budget *b)
{
	const int budget = b->heavy + b->recent;
	const int t = b->prompt + b->sinks + 2 * budget + 2;
	return policies[p]->region(b, t, t - 1 - budget);
}

int policy_region_budget(enum policy_id p, const struct policy_budget *b, enum policy_region r)
{
	const int most = policies[p]->region_budget(b, r);
	/* A cache that keeps every new token has no interval to wait for. */
	if (most < 0 || policies[p]->grows || policy_interval(b) == 1 || waiting_region(p, b) != r)
		return most;
	return most + policy_interval(b) - 1;
}

int policy_capacity(enum policy_id p, const struct policy_budget *b)
{
	const int old = policy_region_budget(p, b, POLICY_REGION_OLD);
	const int recent = policy_region_budget(p, b, POLICY_REGION_RECENT);
	return old < 0 || recent < 0 ? -1 : old + recent;
}

int policy_pair_decimals(double x, double other)
{
	char xs[48], os[48];
	int digits = 2;
	for (; digits < 6 && x != other; digits++) {
		snprintf(xs, sizeof xs, "%.*f", digits, x);
		snprintf(os, sizeof os, "%.*f", digits, other);
		if (strcmp(xs, os) != 0)
			break;
	}
	return digits;
}

/* X and OTHER with policy_pair_decimals' digits. */
static void format_pair(double x, double other, char *xs, char *os, size_t size)
{
	const int digits = policy_pair_decimals(x, other);
	snprintf(xs, size, "%.*f", digits, x);
	snprintf(os, size, "%.*f", digits, other);
}

void policy_word_cutoff(const struct policy_loss *loss, bool by_weight, enum policy_voice voice,
                        struct policy_words *words)
{
	const double own = by_weight ? loss->weight : loss->score;
	const char *op = own < loss->cutoff_value ? "<" : "=";
	char a[32], c[32];
	format_pair(own, loss->cutoff_value, a, c, sizeof a);
	words->cutoff_pos = loss->cutoff_pos;
	if (voice == POLICY_VOICE_BRIEF) {
		/* The column beside shows the entry's own score. */
		if (by_weight)
			snprintf(words->before, sizeof words->before, "attn %s %s %s ", a, op, c);
		else
			snprintf(words->before, sizeof words->before, "%s %s ", op, c);
		return;
	}
	snprintf(words->before, sizeof words->before, "%s %s %s cut-off %s (",
	         by_weight ? "attn" : "score", a, op, c);
	snprintf(words->after, sizeof words->after, ")");
	if (own == loss->cutoff_value)
		snprintf(words->note, sizeof words->note, ", a tie: the lower position stays");
}

void policy_word(enum policy_id p, const struct policy_budget *b, const struct policy_loss *loss,
                 enum policy_voice voice, struct policy_words *words)
{
	const struct policy *pol = policies[p];
	*words = (struct policy_words){.cutoff_pos = -1};
	if (pol->word_loss) {
		pol->word_loss(b, loss, voice, words);
	} else if (loss->cutoff_pos >= 0) {
		policy_word_cutoff(loss, pol->by_weight, voice, words);
	} else if (voice == POLICY_VOICE_BRIEF) {
		snprintf(words->before, sizeof words->before, "left the window");
	} else {
		snprintf(words->before, sizeof words->before, "only the %d newest tokens stay",
		         policy_capacity(p, b));
	}
}

int policy_promoted_at(enum policy_id p, const struct policy_budget *b, int pos)
{
	return policies[p]->promoted_at ? policies[p]->promoted_at(b, pos) : 0;
}

int policy_default_sinks(int budget)
{
	const int s = 4;
	return s < budget ? s : (budget > 0 ? budget - 1 : 0);
}

int policy_sinks_for(int sinks_given, int budget)
{
	if (sinks_given < 0)
		return policy_default_sinks(budget);
	return sinks_given < budget ? sinks_given : budget - 1;
}

/* The next entry to evict among the first CANDIDATES not yet gone: the
 * lowest key, and on a tie the higher position (ascending positions: a
 * later index). */
static int weakest(const struct policy_cache *c, int candidates, bool by_weight,
                   const unsigned char *gone)
{
	const double *key = by_weight ? c->w : c->score;
	int best = -1;
	for (int i = 0; i < candidates; i++)
		if (!gone[i] && (best < 0 || key[i] <= key[best]))
			best = i;
	return best;
}

int policy_keep_largest(const struct policy_cache *c, int candidates, int keep, bool by_weight,
                        unsigned char *gone)
{
	const double *key = by_weight ? c->w : c->score;
	if (candidates - keep == 1 && !memchr(gone, 1, (size_t)candidates)) {
		/* The usual step of a full cache: one goes, and nothing is
		 * marked yet. The weakest, then the weakest of the others (the
		 * cut-off), each the later index on equal keys as weakest()
		 * picks them, eight keys at a time. */
		double v, va, vb;
		const int first = kernel_weakest(key, 0, candidates, &v);
		const int a = kernel_weakest(key, 0, first, &va);
		const int b = kernel_weakest(key, first + 1, candidates, &vb);
		gone[first] = 1;
		return keep > 0 ? (b >= 0 && (a < 0 || vb <= va) ? b : a) : -1;
	}
	for (int r = candidates - keep; r > 0; r--)
		gone[weakest(c, candidates, by_weight, gone)] = 1;
	return keep > 0 ? weakest(c, candidates, by_weight, gone) : -1;
}

int policy_snap_window(const struct policy *pol, const struct policy_budget *b)
{
	int w = pol->observe_window;
	for (int p = 0; p < POLICY_COUNT; p++)
		if (policies[p] == pol && b->set.p[p].window > 0)
			w = b->set.p[p].window;
	return w < b->prompt ? w : b->prompt;
}

void policy_snap_scores(const struct policy_cache *c, double *score)
{
	const int len = c->len, win = c->window < len ? c->window : len, older = len - win;
	const int kernel = c->kernel > 0 ? c->kernel : 5, half = kernel / 2;
	for (int j = 0; j < older; j++) {
		double sum = 0.0;
		for (int h = 0; h < c->heads; h++) {
			const double *o = c->observed + (size_t)h * (size_t)len;
			const int lo = j - half > 0 ? j - half : 0;
			const int hi = j + half < older - 1 ? j + half : older - 1;
			double pool = c->pool == POLICY_POOL_MAX ? o[lo] : 0.0;
			for (int d = lo; d <= hi; d++) {
				if (c->pool != POLICY_POOL_MAX)
					pool += o[d];
				else if (o[d] > pool)
					pool = o[d];
			}
			sum += c->pool == POLICY_POOL_MAX ? pool : pool / kernel;
		}
		score[j] = sum / c->heads;
	}
}

int policy_snap_select(const struct policy_cache *c, int budget, unsigned char *gone)
{
	const int len = c->len, win = c->window < len ? c->window : len, older = len - win;
	if (budget <= win) {
		for (int i = 0; i < len - budget; i++)
			gone[i] = 1;
		return -1;
	}
	double *score = c->rank;
	policy_snap_scores(c, score);
	if (older <= budget - win)
		return -1;
	const struct policy_cache view = {.len = len, .pos = c->pos, .score = score, .w = score};
	return policy_keep_largest(&view, older, budget - win, false, gone);
}

void policy_cutoff_words(int pos, double value, enum policy_voice voice, const char *brief,
                         const char *full, struct policy_words *words)
{
	words->cutoff_pos = pos;
	if (voice == POLICY_VOICE_BRIEF) {
		snprintf(words->before, sizeof words->before, "%s %.2f ", brief, value);
		return;
	}
	snprintf(words->before, sizeof words->before, "%s %.2f (", full, value);
	snprintf(words->after, sizeof words->after, ")");
}

void policy_snap_words(const struct policy_budget *b, const struct policy_loss *loss,
                       enum policy_voice voice, struct policy_words *words)
{
	if (loss->cutoff_pos >= 0) {
		policy_cutoff_words(loss->cutoff_pos, loss->cutoff_value, voice, "pooled <",
		                    "the prompt's last queries gave it less than the cut-off,",
		                    words);
	} else if (voice == POLICY_VOICE_BRIEF) {
		snprintf(words->before, sizeof words->before, "left the window");
	} else {
		snprintf(words->before, sizeof words->before,
		         "only the observation window's %d newest tokens stay",
		         b->heavy + b->recent);
	}
}

int policy_pyramid_schedule(const struct policy *pol, const struct policy_budget *b, int layer)
{
	const int budget = b->heavy + b->recent, prompt = b->prompt;
	const int w = policy_snap_window(pol, b);
	const int layers = b->layers > 1 ? b->layers : 1;
	/* KVCache-Factory's PyramidKVCluster.update_kv, with B its
	 * max_capacity_prompt and beta 20: below twice the selected budget
	 * every layer keeps B; above it the budgets fall linearly from the
	 * lowest layer to the highest. */
	if (budget <= w || prompt < 2 * (budget - w) || layers == 1)
		return budget;
	int min_num = (budget - w) / 20, max_num = 2 * (budget - w) - min_num;
	if (max_num >= prompt - w) {
		max_num = prompt - w;
		min_num = 2 * (budget - w) - max_num;
	}
	const int steps = (max_num - min_num) / (layers - 1);
	return max_num - layer * steps + w;
}

int policy_pyramid_budget(const struct policy_budget *b, int layer)
{
	return policy_pyramid_schedule(policies[POLICY_PYRAMIDKV], b, layer);
}

int policy_pyramid_held(const struct policy_budget *b, int layer)
{
	const struct policy *pol = policies[POLICY_PYRAMIDKV_WINDOW];
	const int layers = b->layers > 1 ? b->layers : 1;
	long excess = -(long)layers * (b->heavy + b->recent);
	for (int l = 0; l < layers; l++)
		excess += policy_pyramid_schedule(pol, b, l);
	const int own = policy_pyramid_schedule(pol, b, layer);
	if (excess <= 0)
		return own;
	/* One a layer from the lowest, round and round. */
	const long trim = excess / layers + (layer < excess % layers ? 1 : 0);
	return own - (int)trim;
}

void policy_hold(const struct policy_cache *c, int budget, int before, unsigned char *gone)
{
	if (c->len <= budget)
		return;
	int selected = 0;
	while (selected < c->len && c->pos[selected] < before)
		selected++;
	if (selected > budget)
		selected = 0;
	for (int i = selected; i < c->len - (budget - selected); i++)
		gone[i] = 1;
}

/* The mean of entry J when N positions have been appended. */
static double observed_mean(const struct policy_cache *c, int j, int n)
{
	return c->score[j] / (double)(n - c->pos[j]);
}

int policy_observed_select(const struct policy_cache *c, int keep, int n, unsigned char *gone)
{
	if (c->rank) {
		for (int j = 0; j < c->len; j++)
			c->rank[j] = observed_mean(c, j, n);
		const struct policy_cache view = {.len = c->len, .pos = c->pos, .score = c->rank};
		return policy_keep_largest(&view, c->len, keep, false, gone);
	}
	/* A caller without the buffer: policy_keep_largest on the means,
	 * computed as it goes. */
	int low = -1;
	for (int r = c->len - keep; r >= 0; r--) {
		low = -1;
		for (int j = 0; j < c->len; j++)
			if (!gone[j] &&
			    (low < 0 || observed_mean(c, j, n) <= observed_mean(c, low, n)))
				low = j;
		if (r > 0)
			gone[low] = 1;
	}
	return keep > 0 ? low : -1;
}

int policy_ada_safe(int budget)
{
	/* Python's int(n_kept * alpha_safeguard): the double product,
	 * truncated. */
	return (int)(budget * 0.20);
}

/* Whether entry A (an index into the rows) would go before entry B: a
 * lower key, or an equal key at a later index (a later head, or a later
 * position in the same head). */
static bool ada_weaker(const double *key, int a, int b)
{
	return key[a] < key[b] || (key[a] == key[b] && a > b);
}

/* Sift entry I of the heap IDX[0 .. COUNT) down, the strongest at the
 * root. */
static void ada_sift(int *idx, int count, int i, const double *key)
{
	for (;;) {
		int top = i;
		const int l = 2 * i + 1, r = l + 1;
		if (l < count && ada_weaker(key, idx[top], idx[l]))
			top = l;
		if (r < count && ada_weaker(key, idx[top], idx[r]))
			top = r;
		if (top == i)
			return;
		const int t = idx[i];
		idx[i] = idx[top];
		idx[top] = t;
		i = top;
	}
}

/* IDX[0 .. COUNT) sorted weakest first (ada_weaker), by heapsort: the
 * order is total, so the result does not depend on the sort. */
static void ada_sort(int *idx, int count, const double *key)
{
	for (int i = count / 2 - 1; i >= 0; i--)
		ada_sift(idx, count, i, key);
	for (int end = count - 1; end > 0; end--) {
		const int t = idx[0];
		idx[0] = idx[end];
		idx[end] = t;
		ada_sift(idx, end, 0, key);
	}
}

int policy_ada_floor(int budget, int window)
{
	/* int(base_capacity * floor_alpha), floor_alpha 0.2 as the authors'
	 * scripts set it. */
	return (int)((budget - window) * 0.2);
}

int policy_ada_share(int won, int budget, int window)
{
	/* torch: an int tensor times (1 - 0.2) is float32, plus the floor,
	 * then torch.round (half to even: rintf in the default rounding). */
	const volatile float share = (float)won * 0.8f;
	const volatile float sum = share + (float)policy_ada_floor(budget, window);
	return (int)rintf(sum);
}

/* FFY0/AdaKV's split (policy_ada_select with POLICY_ALLOC_AUTHORS): every
 * head's scores in c->rank. */
static int ada_authors(const struct policy_cache *c, int budget, unsigned char *gone)
{
	const int len = c->len, win = c->window < len ? c->window : len, older = len - win;
	const int kv = c->kv_heads > 1 ? c->kv_heads : 1;
	int *idx = c->order, count = 0;
	for (int g = 0; g < kv; g++)
		for (int j = 0; j < older; j++)
			idx[count++] = g * len + j;
	/* The layer's kv x (B - W) best, the strongest at the end, counted
	 * per head into the room the windows leave after the rows (a window
	 * holds at least one position a head). */
	ada_sort(idx, count, c->rank);
	const int top = kv * (budget - win) < count ? kv * (budget - win) : count;
	int *won = idx + count;
	for (int g = 0; g < kv; g++)
		won[g] = 0;
	for (int i = count - top; i < count; i++)
		won[idx[i] / len]++;
	int cut = -1;
	for (int g = 0; g < kv; g++) {
		int *own = idx;
		for (int j = 0; j < older; j++)
			own[j] = g * len + j;
		ada_sort(own, older, c->rank);
		int keep = policy_ada_share(won[g], budget, win);
		keep = keep > older ? older : keep;
		for (int i = 0; i < older - keep; i++)
			gone[own[i]] = 1;
		if (keep > 0 && (cut < 0 || ada_weaker(c->rank, own[older - keep], cut)))
			cut = own[older - keep];
	}
	return cut;
}

int policy_ada_select(const struct policy_cache *c, int budget, unsigned char *gone)
{
	const int len = c->len, win = c->window < len ? c->window : len, older = len - win;
	const int kv = c->kv_heads > 1 ? c->kv_heads : 1, group = c->heads / kv;
	/* The authors compress unless B - W exceeds the P - W before the
	 * window: a prompt of exactly B too. */
	if (len < budget || (len == budget && c->alloc != POLICY_ALLOC_AUTHORS))
		return -1;
	if (budget <= win) {
		for (int g = 0; g < kv; g++)
			for (int i = 0; i < len - budget; i++)
				gone[(size_t)g * (size_t)len + (size_t)i] = 1;
		return -1;
	}
	/* Each head's scores from its own group's rows. */
	for (int g = 0; g < kv; g++) {
		struct policy_cache head = *c;
		head.observed = c->observed + (size_t)g * (size_t)group * (size_t)len;
		head.heads = group;
		policy_snap_scores(&head, c->rank + (size_t)g * (size_t)len);
	}
	if (c->alloc == POLICY_ALLOC_AUTHORS)
		return ada_authors(c, budget, gone);
	/* The safeguard: kvpress raises each head's int(B x 0.2) best to the
	 * largest float. The window already stands above every score (its
	 * scores are padded with the layer's max + 1), so what it adds is the
	 * head's best SAFE - window before it. */
	int safe = policy_ada_safe(budget) - win;
	safe = safe < 0 ? 0 : safe > older ? older : safe;
	int *idx = c->order, count = 0;
	for (int g = 0; g < kv; g++) {
		int *own = idx + count;
		for (int j = 0; j < older; j++)
			own[j] = g * len + j;
		ada_sort(own, older, c->rank);
		/* The strongest SAFE are at the end: kept; the rest compete. */
		count += older - safe;
	}
	/* Every head's competitors, weakest first: the first kv x (len - B)
	 * go, and the next is the lowest kept, the cut-off. */
	ada_sort(idx, count, c->rank);
	const int pruned = kv * (len - budget);
	for (int i = 0; i < pruned; i++)
		gone[idx[i]] = 1;
	return pruned < count ? idx[pruned] : -1;
}
