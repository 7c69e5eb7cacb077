/*
 * timeline: the engine run once over the scene, kept so any step can be
 * shown again.
 *
 * Per step it keeps a summary (figures, softmax normalisers, evictions);
 * per position the step that evicted it; and every `every` steps a snapshot
 * of the engine. Seeking to step t restores the last snapshot before t and
 * replays, so the record of step t comes from the engine itself, bit for bit
 * as it came the first time. Moving one step forward from the current step
 * is a single engine step.
 *
 * The snapshot interval is chosen from the scene size so that the
 * snapshots (the full cache's scores dominate: t numbers at step t) stay
 * within a fixed memory budget.
 */
#include "h2o/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/scene.h"

/* Snapshot memory the timeline aims to stay within. */
#define SNAPSHOT_BUDGET_BYTES (64.0 * 1024 * 1024)
#define MIN_INTERVAL          8

struct timeline {
	const struct scene *sc;
	int heavy, recent;
	int n;
	struct step_summary *sum; /* [1..n] */
	struct eviction *ev;      /* in order */
	int n_ev;
	int *ev_until;   /* [0..n]: evictions at steps 1..t */
	int *evicted_at; /* [pos] */

	int every;   /* snapshot interval */
	void **snap; /* snap[i]: the engine after step i * every */
	struct engine *e;
	struct step_record rec; /* of the engine's current step */
	bool rec_valid;
};

static int choose_interval(const struct scene *sc)
{
	/* Snapshots at steps 0, k, 2k, ... hold about n^2 / (2k) scores. */
	double n = sc->n;
	double k = n * n * sizeof(double) / 2.0 / SNAPSHOT_BUDGET_BYTES;
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
	s->m = rec->m;
	s->h_max = rec->h_max;
	s->h_sum = rec->h_sum;
	s->f_max = rec->f_max;
	s->f_sum = rec->f_sum;
	s->cutoff_pos = rec->cutoff_pos;
	s->cutoff_score = rec->cutoff_score;
	s->n_evicted = rec->n_evicted;
	s->first_evict = tl->n_ev;
	for (int i = 0; i < rec->n_evicted; i++) {
		struct eviction *ev = &tl->ev[tl->n_ev++];
		ev->pos = rec->evicted[i];
		ev->step = rec->step;
		ev->score = rec->evicted_scores[i];
		ev->cutoff_pos = rec->cutoff_pos;
		ev->cutoff_score = rec->cutoff_score;
		tl->evicted_at[ev->pos] = rec->step;
	}
	tl->ev_until[rec->step] = tl->n_ev;
	/* The token that leaves the recent window at this step is the one
	 * `recent` places behind the new one; if it survived, it is now a
	 * heavy hitter. */
	const int leaving = rec->pos - tl->recent;
	s->promoted_pos = leaving >= 0 && tl->evicted_at[leaving] == 0 ? leaving : -1;
}

struct timeline *timeline_new(const struct scene *sc, int heavy, int recent)
{
	struct timeline *tl = calloc(1, sizeof *tl);
	if (!tl)
		return NULL;
	tl->sc = sc;
	tl->heavy = heavy;
	tl->recent = recent;
	tl->n = sc->n;
	tl->every = choose_interval(sc);
	const size_t n = (size_t)sc->n;
	tl->sum = calloc(n + 1, sizeof *tl->sum);
	tl->ev = calloc(n, sizeof *tl->ev);
	tl->ev_until = calloc(n + 1, sizeof *tl->ev_until);
	tl->evicted_at = calloc(n, sizeof *tl->evicted_at);
	tl->snap = calloc(n / (size_t)tl->every + 1, sizeof *tl->snap);
	tl->e = engine_new(sc, heavy, recent);
	if (!tl->sum || !tl->ev || !tl->ev_until || !tl->evicted_at || !tl->snap || !tl->e)
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
	free(tl->ev);
	free(tl->ev_until);
	free(tl->evicted_at);
	free(tl);
}

const struct scene *timeline_scene(const struct timeline *tl)
{
	return tl->sc;
}

int timeline_steps(const struct timeline *tl)
{
	return tl->n;
}

int timeline_heavy(const struct timeline *tl)
{
	return tl->heavy;
}

int timeline_recent(const struct timeline *tl)
{
	return tl->recent;
}

const struct step_summary *timeline_summary(const struct timeline *tl, int t)
{
	return &tl->sum[t];
}

int timeline_eviction_count(const struct timeline *tl)
{
	return tl->n_ev;
}

const struct eviction *timeline_eviction(const struct timeline *tl, int i)
{
	return &tl->ev[i];
}

int timeline_evictions_until(const struct timeline *tl, int t)
{
	return tl->ev_until[t];
}

int timeline_evicted_at(const struct timeline *tl, int pos)
{
	return tl->evicted_at[pos];
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
		int i = t > 0 ? (t - 1) / tl->every : 0;
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

void timeline_weight(const struct timeline *tl, int s, int j, double *wh, double *wf)
{
	const int p = s - 1;
	*wh = -1.0;
	*wf = -1.0;
	if (s < 1 || s > tl->n || j < 0 || j > p)
		return;
	const struct step_summary *sum = &tl->sum[s];
	const double l = engine_logit(tl->sc, p, j);
	*wf = exp(l - sum->f_max) / sum->f_sum;
	const int at = tl->evicted_at[j];
	if (at == 0 || at >= s)
		*wh = exp(l - sum->h_max) / sum->h_sum;
}

enum region timeline_region(const struct timeline *tl, int t, int pos)
{
	if (pos < 0 || pos >= t)
		return REGION_NONE;
	const int at = tl->evicted_at[pos];
	if (at != 0 && at <= t)
		return REGION_EVICTED;
	return pos >= t - tl->recent ? REGION_RECENT : REGION_HEAVY;
}
