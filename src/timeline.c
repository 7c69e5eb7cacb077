/*
 * timeline: the engine run once over the scene, kept so any step can be
 * shown again.
 *
 * Per step it keeps a summary of every cache (figures, softmax normalisers,
 * evictions); per policy and position the step that evicted it; and every
 * `every` steps a snapshot of the engine. Seeking to step t restores the
 * last snapshot before t and replays, so the record of step t comes from
 * the engine itself, bit for bit as it came the first time. Moving one step
 * forward from the current step is a single engine step.
 *
 * The snapshot interval is chosen from the scene size so that the
 * snapshots (the full cache dominates: t positions and scores at step t)
 * stay within a fixed memory budget.
 */
#include "h2o/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/scene.h"

/* Snapshot memory the timeline aims to stay within. */
#define SNAPSHOT_BUDGET_BYTES (64.0 * 1024 * 1024)
#define MIN_INTERVAL          8

struct policy_log {
	struct eviction *ev; /* in order */
	int n_ev;
	int *ev_until;   /* [0..n]: evictions at steps 1..t */
	int *evicted_at; /* [pos] */
};

struct timeline {
	const struct scene *sc;
	struct policy_budget b;
	int n;
	struct step_summary *sum; /* [1..n] */
	struct policy_log log[POLICY_COUNT];

	int every;   /* snapshot interval */
	void **snap; /* snap[i]: the engine after step i * every */
	struct engine *e;
	struct step_record rec; /* of the engine's current step */
	bool rec_valid;
};

static int choose_interval(const struct scene *sc)
{
	/* Snapshots at steps 0, k, 2k, ... hold about n^2 / (2k) positions
	 * and scores of the full cache. */
	const double n = sc->n;
	const double k = n * n * (sizeof(double) + sizeof(int)) / 2.0 / SNAPSHOT_BUDGET_BYTES;
	if (k < MIN_INTERVAL)
		return MIN_INTERVAL;
	return k > n ? (int)n : (int)ceil(k);
}

static void *take_snapshot(const struct engine *e)
{
	void *buf = malloc(engine_snapshot_size(e));
	if (buf)
		engine_snapshot(e, buf);
	return buf;
}

static void summarise(struct timeline *tl, const struct step_record *rec)
{
	struct step_summary *s = &tl->sum[rec->step];
	for (int p = 0; p < POLICY_COUNT; p++) {
		const struct cache_record *r = &rec->c[p];
		struct cache_summary *cs = &s->c[p];
		struct policy_log *log = &tl->log[p];
		cs->m = r->m;
		cs->max = r->max;
		cs->sum = r->sum;
		cs->n_evicted = r->n_evicted;
		cs->first_evict = log->n_ev;
		for (int i = 0; i < r->n_evicted; i++) {
			struct eviction *ev = &log->ev[log->n_ev++];
			ev->pos = r->evicted[i];
			ev->step = rec->step;
			ev->score = r->evicted_scores[i];
			ev->weight = r->evicted_weights[i];
			ev->cutoff_pos = r->cutoff_pos;
			ev->cutoff_value = r->cutoff_value;
			log->evicted_at[ev->pos] = rec->step;
		}
		log->ev_until[rec->step] = log->n_ev;
	}
	/* The token that leaves H2O's recent window at this step is the one
	 * `recent` places behind the new one; if it survived, it is now a
	 * heavy hitter. */
	const int leaving = rec->pos - tl->b.recent;
	s->promoted_pos =
	        leaving >= 0 && tl->log[POLICY_H2O].evicted_at[leaving] == 0 ? leaving : -1;
}

struct timeline *timeline_new(const struct scene *sc, const struct policy_budget *b)
{
	struct timeline *tl = calloc(1, sizeof *tl);
	if (!tl)
		return NULL;
	tl->sc = sc;
	tl->b = *b;
	tl->b.n = sc->n;
	tl->n = sc->n;
	tl->every = choose_interval(sc);
	const size_t n = (size_t)sc->n;
	tl->sum = calloc(n + 1, sizeof *tl->sum);
	tl->snap = calloc(n / (size_t)tl->every + 1, sizeof *tl->snap);
	tl->e = engine_new(sc, &tl->b);
	bool ok = tl->sum && tl->snap && tl->e;
	for (int p = 0; p < POLICY_COUNT && ok; p++) {
		struct policy_log *log = &tl->log[p];
		log->ev = calloc(n, sizeof *log->ev);
		log->ev_until = calloc(n + 1, sizeof *log->ev_until);
		log->evicted_at = calloc(n, sizeof *log->evicted_at);
		ok = log->ev && log->ev_until && log->evicted_at;
	}
	if (!ok)
		goto fail;
	for (int t = 0;; t++) {
		if (t % tl->every == 0 && !(tl->snap[t / tl->every] = take_snapshot(tl->e)))
			goto fail;
		if (!engine_step(tl->e, &tl->rec))
			break;
		summarise(tl, &tl->rec);
	}
	tl->rec_valid = true;
	return tl;
fail:
	timeline_free(tl);
	return NULL;
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	if (tl->snap)
		for (int i = 0; i <= tl->n / tl->every; i++)
			free(tl->snap[i]);
	free(tl->snap);
	engine_free(tl->e);
	free(tl->sum);
	for (int p = 0; p < POLICY_COUNT; p++) {
		free(tl->log[p].ev);
		free(tl->log[p].ev_until);
		free(tl->log[p].evicted_at);
	}
	free(tl);
}

const struct scene *timeline_scene(const struct timeline *tl)
{
	return tl->sc;
}

const struct policy_budget *timeline_budget(const struct timeline *tl)
{
	return &tl->b;
}

int timeline_steps(const struct timeline *tl)
{
	return tl->n;
}

const struct step_summary *timeline_summary(const struct timeline *tl, int t)
{
	return &tl->sum[t];
}

int timeline_eviction_count(const struct timeline *tl, enum policy_id p)
{
	return tl->log[p].n_ev;
}

const struct eviction *timeline_eviction(const struct timeline *tl, enum policy_id p, int i)
{
	return &tl->log[p].ev[i];
}

int timeline_evictions_until(const struct timeline *tl, enum policy_id p, int t)
{
	return tl->log[p].ev_until[t];
}

int timeline_evicted_at(const struct timeline *tl, enum policy_id p, int pos)
{
	return tl->log[p].evicted_at[pos];
}

const struct eviction *timeline_eviction_of(const struct timeline *tl, enum policy_id p, int pos,
                                            int t)
{
	const int at = tl->log[p].evicted_at[pos];
	if (at == 0 || at > t)
		return NULL;
	const struct cache_summary *cs = &tl->sum[at].c[p];
	for (int i = 0; i < cs->n_evicted; i++) {
		const struct eviction *ev = &tl->log[p].ev[cs->first_evict + i];
		if (ev->pos == pos)
			return ev;
	}
	return NULL;
}

const struct engine *timeline_seek(struct timeline *tl, int t, const struct step_record **rec)
{
	if (t < 0)
		t = 0;
	if (t > tl->n)
		t = tl->n;
	int now = engine_step_count(tl->e);
	if (!(tl->rec_valid && now == t) && !(now < t && t - now <= tl->every)) {
		/* Restore the last snapshot strictly before t (step 0 for t = 0),
		 * so that replaying produces the record of step t itself. */
		const int i = t > 0 ? (t - 1) / tl->every : 0;
		engine_restore(tl->e, tl->snap[i]);
		tl->rec_valid = false;
		now = engine_step_count(tl->e);
	}
	while (now < t) {
		engine_step(tl->e, &tl->rec);
		tl->rec_valid = true;
		now++;
	}
	if (rec)
		*rec = t > 0 ? &tl->rec : NULL;
	return tl->e;
}

double timeline_weight(const struct timeline *tl, enum policy_id p, int s, int j)
{
	if (s < 1 || s > tl->n || j < 0 || j > s - 1)
		return -1.0;
	const int at = tl->log[p].evicted_at[j];
	if (at != 0 && at < s)
		return -1.0;
	const struct cache_summary *cs = &tl->sum[s].c[p];
	return exp(engine_logit(tl->sc, s - 1, j) - cs->max) / cs->sum;
}

enum region timeline_region(const struct timeline *tl, enum policy_id p, int t, int pos)
{
	if (pos < 0 || pos >= t)
		return REGION_NONE;
	const int at = tl->log[p].evicted_at[pos];
	if (at != 0 && at <= t)
		return REGION_EVICTED;
	return policies[p]->region(&tl->b, t, pos) == POLICY_REGION_RECENT ? REGION_RECENT
	                                                                   : REGION_OLD;
}
