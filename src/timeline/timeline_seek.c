/*
 * timeline_seek: a timeline's engines taken to any step, and the full
 * cache's scores at any step added up from the kept ones (timeline.c says
 * how the snapshots and the kept scores are chosen).
 */
#include "h2o/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "h2o/engine_replay.h"
#include "h2o/scene.h"
#include "timeline_state.h"

static int clamp_step(const struct timeline *tl, int t)
{
	return t < 0 ? 0 : t > tl->n ? tl->n : t;
}

/* Take E from step NOW to step T: steps nobody reads are replayed without
 * figures, the last one fills *REC. */
static void replay(struct engine *e, int now, int t, struct step_record *rec, bool *rec_valid)
{
	for (; now < t - 1; now++)
		engine_advance(e);
	if (now < t) {
		engine_step(e, rec);
		*rec_valid = true;
	}
}

const struct engine *timeline_seek(struct timeline *tl, int t, const struct step_record **rec)
{
	t = clamp_step(tl, t);
	int now = engine_step_count(tl->e);
	if (!(tl->rec_valid && now == t) && !(now < t && t - now <= tl->full_every)) {
		/* Restore the last kept state strictly before t (step 0 for
		 * t = 0), so that replaying produces the record of step t. */
		const int c = t > 0 ? (t - 1) / tl->full_every * tl->full_every : 0;
		engine_restore(tl->e, tl->snap[c / tl->every]);
		engine_restore_full(tl->e, tl->full_snap[c / tl->full_every]);
		tl->rec_valid = false;
		now = c;
	}
	replay(tl->e, now, t, &tl->rec, &tl->rec_valid);
	if (rec)
		*rec = t > 0 ? &tl->rec : NULL;
	return tl->e;
}

const struct engine *timeline_seek_lite(struct timeline *tl, int t, const struct step_record **rec)
{
	t = clamp_step(tl, t);
	int now = engine_step_count(tl->lite);
	if (!(tl->lrec_valid && now == t) && !(now < t && t - now <= tl->every)) {
		const int i = t > 0 ? (t - 1) / tl->every : 0;
		engine_restore(tl->lite, tl->snap[i]);
		tl->lrec_valid = false;
		now = i * tl->every;
	}
	if (now < t) {
		engine_advance_to(tl->lite, t - 1);
		engine_step(tl->lite, &tl->lrec);
		tl->lrec_valid = true;
		/* The figures against the full cache are the timeline's. */
		const struct step_summary *s = &tl->sum[t];
		for (int p = 0; p < POLICY_COUNT; p++)
			tl->lrec.c[p].m = s->c[p].m;
		struct cache_record *full = &tl->lrec.c[POLICY_FULL];
		full->max = s->c[POLICY_FULL].max;
		full->sum = s->c[POLICY_FULL].sum;
	}
	if (rec)
		*rec = t > 0 ? &tl->lrec : NULL;
	return tl->lite;
}

/* Where the full cache's score of POS after step T starts: the kept score
 * of the last kept step C <= T (0 if POS arrived after C), and the first
 * step whose weight it still needs. */
static double full_score_base(const struct timeline *tl, int t, int pos, int *from)
{
	const int c = t / tl->full_every * tl->full_every;
	if (pos < c) {
		*from = c + 1;
		return tl->full_snap[c / tl->full_every][pos];
	}
	/* The engine gives an arriving position the score 0 and adds its
	 * first weight to it. */
	*from = pos + 1;
	return 0.0;
}

/* Weight of key J at step S of the full cache from logit L: the engine's
 * softmax, one number at a time. */
static double full_weight(const struct timeline *tl, int s, double l)
{
	const struct cache_summary *cs = &tl->sum[s].c[POLICY_FULL];
	return engine_weight(l, cs->max, cs->sum);
}

double timeline_full_score(const struct timeline *tl, int t, int pos)
{
	t = clamp_step(tl, t);
	if (pos < 0 || pos >= t)
		return 0.0;
	int from;
	double score = full_score_base(tl, t, pos, &from);
	for (int s = from; s <= t; s++)
		score += full_weight(tl, s, engine_logit(tl->sc, s - 1, pos));
	return score;
}

int timeline_full_scores(const struct timeline *tl, int t, const int *pos, int count, double *out)
{
	t = clamp_step(tl, t);
	const struct scene *sc = tl->sc;
	if (sc->mode != SCENE_VECTOR || count < 2) {
		for (int i = 0; i < count; i++)
			out[i] = timeline_full_score(tl, t, pos[i]);
		return 0;
	}
	/* The positions' keys laid out for the engine's kernel, so that each
	 * step's logits of all of them take one pass (each summed in
	 * engine_logit's order). */
	struct engine_keys *ks = engine_keys_new(sc, pos, count);
	double *logit = malloc((size_t)count * sizeof *logit);
	double *score = malloc((size_t)count * sizeof *score);
	int *from = malloc((size_t)count * sizeof *from);
	if (!ks || !logit || !score || !from) {
		engine_keys_free(ks);
		free(logit);
		free(score);
		free(from);
		return -1;
	}
	int first = t + 1;
	for (int i = 0; i < count; i++) {
		if (pos[i] >= t) {
			score[i] = 0.0;
			from[i] = t + 1;
			continue;
		}
		score[i] = full_score_base(tl, t, pos[i], &from[i]);
		first = from[i] < first ? from[i] : first;
	}
	for (int s = first; s <= t; s++) {
		engine_keys_logits(ks, s - 1, logit);
		for (int i = 0; i < count; i++)
			if (s >= from[i])
				score[i] += full_weight(tl, s, logit[i]);
	}
	memcpy(out, score, (size_t)count * sizeof *out);
	engine_keys_free(ks);
	free(logit);
	free(score);
	free(from);
	return 0;
}
