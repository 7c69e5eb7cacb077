/*
 * view_inspect: the token inspector, for the token selected in the H2O
 * panel.
 *
 * It tells one token's story in H2O's cache: where it sits now (its score
 * and rank, or the step and cut-off that evicted it), the step it entered
 * and the step it became a heavy hitter, this step's attention in both
 * caches, and its score over the whole timeline as a sparkline with a
 * marker at the current step. It takes the right half of the heat area.
 */
#include <stdio.h>
#include <stdlib.h>

#include "h2o/heads.h"
#include "view_panels.h"

/* H2O's score of POS after each step 1..n into SCORE[1..n] (0 before it
 * arrives; frozen at its last value once evicted). Recomputed from the
 * timeline's weights in step order, exactly as the engine summed them. */
static void score_history(const struct view *v, int pos, double *score)
{
	double s = 0.0;
	score[0] = 0.0;
	for (int t = 1; t <= v->built; t++) {
		const double w = timeline_weight(v->tl, POLICY_H2O, t, pos);
		if (w >= 0.0)
			s += w;
		score[t] = s;
	}
}

/* Rank (1 = largest score) of POS among H2O's kept tokens now. */
static int rank_of(const struct view *v, int pos, int *of)
{
	const int len = engine_len(v->e, POLICY_H2O);
	const int *p = engine_positions(v->e, POLICY_H2O);
	const double *sc = engine_scores(v->e, POLICY_H2O);
	double own = -1.0;
	for (int i = 0; i < len; i++)
		if (p[i] == pos)
			own = sc[i];
	int rank = 1;
	for (int i = 0; i < len; i++)
		if (sc[i] > own || (sc[i] == own && p[i] < pos))
			rank++;
	*of = len;
	return rank;
}

/* The score over the token's life in H2O: from the step it entered to the
 * step it was evicted (or the end), so a short life still fills the line. */
static void draw_sparkline(const struct view *v, struct frame *f, int x, int y, int w,
                           const double *score, int pos)
{
	const int evicted = timeline_evicted_at(v->tl, POLICY_H2O, pos);
	const int from = pos + 1, last = evicted ? evicted : v->built, steps = last - pos;
	if (w <= 0 || steps <= 0)
		return;
	const int cols = w < steps ? w : steps;
	double top = 0.0;
	for (int t = from; t <= last; t++)
		top = score[t] > top ? score[t] : top;
	static const char ascii_ramp[] = "_.-=+*#@";
	for (int c = 0; c < cols; c++) {
		/* The last step of the bucket: the score is cumulative. */
		const int t = from + (int)((long)(c + 1) * steps / cols) - 1;
		int level = top > 0.0 ? (int)(score[t] / top * 8.0 + 0.5) : 1;
		level = level < 1 ? 1 : level > 8 ? 8 : level;
		const uint32_t glyph =
		        f->ascii ? (uint32_t)ascii_ramp[level - 1] : 0x2580u + (uint32_t)level;
		frame_put(f, x + c, y, glyph, t <= v->t ? STYLE_HEAVY : STYLE_DIM);
	}
	if (v->t >= from && v->t <= last) {
		const int c = (int)((long)(v->t - from) * cols / steps);
		frame_put(f, x + c, y - 1, f->ascii ? 'v' : 0x25BC, STYLE_NEW);
	}
	char span[64];
	snprintf(span, sizeof span, "steps %d-%d", from, last);
	frame_text(f, x, y + 1, w, span, STYLE_DIM);
}

void panel_inspect_draw(const struct view *v, struct frame *f, struct rect r)
{
	const int pos = v->app->selected;
	if (pos < 0 || r.h < 2 || r.w < 20)
		return;
	const int x = r.x + 1, w = r.w - 2;
	const struct policy_budget *b = &v->app->b;
	char buf[160];
	int y = r.y;

	int used = frame_text(f, x, y, w, "INSPECT ", STYLE_LABEL);
	used += frame_printf(f, x + used, y, w - used, STYLE_SELECT, "%d ", pos);
	used += frame_text(f, x + used, y, w - used, v->sc->text[pos], STYLE_SELECT);
	/* A search's match across tokens: the inspector tells its first. */
	const int span = app_selection_len(v->app);
	if (span > 1)
		used += frame_printf(f, x + used, y, w - used, STYLE_DIM, "  (first of %d: %d-%d)",
		                     span, pos, pos + span - 1);
	/* The keys when they fit whole. */
	static const char *const keys[] = {"  (esc closes, f shows it in the heat)",
	                                   "  (esc closes)"};
	for (int i = 0; i < 2; i++)
		if (frame_text_width(keys[i], f->ascii) <= w - used) {
			frame_text(f, x + used, y, w - used, keys[i], STYLE_DIM);
			break;
		}
	y++;

	if (pos >= v->t) {
		snprintf(buf, sizeof buf, "not arrived yet: it enters at step %d", pos + 1);
		frame_text(f, x, y, w, buf, STYLE_DIM);
		return;
	}
	const struct eviction *ev = timeline_eviction_of(v->tl, POLICY_H2O, pos, v->t);
	const enum region region = timeline_region(v->tl, POLICY_H2O, v->t, pos);
	if (ev) {
		struct policy_words words;
		view_word_eviction(v, POLICY_H2O, ev, POLICY_VOICE_SENTENCE, &words);
		used = frame_printf(f, x, y, w, STYLE_EVICTED, "evicted at step %d: %s", ev->step,
		                    words.before);
		if (words.cutoff_pos >= 0) {
			used += frame_text(f, x + used, y, w - used, v->sc->text[words.cutoff_pos],
			                   STYLE_EVICTED);
			used += frame_text(f, x + used, y, w - used, words.after, STYLE_EVICTED);
		}
		frame_text(f, x + used, y, w - used, words.note, STYLE_EVICTED);
	} else {
		int of;
		const int rank = rank_of(v, pos, &of);
		const int *kp = engine_positions(v->e, POLICY_H2O);
		double score = 0.0;
		for (int i = 0; i < engine_len(v->e, POLICY_H2O); i++)
			if (kp[i] == pos)
				score = engine_scores(v->e, POLICY_H2O)[i];
		char at[32], all[32];
		frame_printf(f, x, y, w, region == REGION_RECENT ? STYLE_RECENT : STYLE_HEAVY,
		             "kept, %s: score %.2f%s, rank %s of %s",
		             region == REGION_RECENT ? "recent" : "heavy", score,
		             heads_group(v->sc) > 1 ? " (kv means summed)" : "",
		             view_format_count(rank, at), view_format_count(of, all));
	}
	if (++y >= r.y + r.h)
		return;

	/* Its path: entered, protected while recent, then heavy or gone. */
	const int heavy_at = policy_promoted_at(POLICY_H2O, b, pos);
	const int gone_at = timeline_evicted_at(v->tl, POLICY_H2O, pos);
	int len = snprintf(buf, sizeof buf, "entered at step %d", pos + 1);
	if (gone_at && heavy_at && gone_at <= heavy_at)
		snprintf(buf + len, sizeof buf - (size_t)len,
		         "; evicted at step %d, as it left RECENT", gone_at);
	else if (heavy_at && heavy_at <= v->built)
		snprintf(buf + len, sizeof buf - (size_t)len,
		         "; recent until step %d, heavy from step %d", heavy_at - 1, heavy_at);
	frame_text(f, x, y, w, buf, STYLE_NORMAL);
	if (++y >= r.y + r.h)
		return;

	/* With grouped heads H2O's score adds the kv group's mean weight,
	 * not this head's own: both are named. */
	const bool grouped = heads_group(v->sc) > 1;
	if (v->rec) {
		const double wh = timeline_weight(v->tl, POLICY_H2O, v->t, pos);
		const double wf = timeline_weight(v->tl, POLICY_FULL, v->t, pos);
		const struct cache_record *h = &v->rec->c[POLICY_H2O];
		double mean = -1.0;
		for (int i = 0; grouped && i < h->n_attended; i++)
			if (h->attended[i] == pos)
				mean = h->group_attn[i];
		if (wh >= 0.0 && mean >= 0.0)
			snprintf(buf, sizeof buf,
			         "this step: attn %.2f (kv mean %.2f) in H2O, %.2f in full", wh,
			         mean, wf);
		else if (wh >= 0.0)
			snprintf(buf, sizeof buf,
			         "this step: attention %.2f in H2O, %.2f in the full cache", wh,
			         wf);
		else
			snprintf(buf, sizeof buf, "this step: not in H2O; %.2f in the full cache",
			         wf);
		frame_text(f, x, y, w, buf, STYLE_NORMAL);
		if (++y >= r.y + r.h)
			return;
	}

	double *score = malloc(((size_t)v->n + 1) * sizeof *score);
	if (!score)
		return;
	score_history(v, pos, score);
	if (y + 2 < r.y + r.h) {
		/* The score now, and the step it is at: "1.58 at step 5". */
		char now[48];
		const int now_w = snprintf(now, sizeof now, "%.2f at step %d", score[v->t], v->t);
		/* With grouped heads the line sums this head's own weights,
		 * which the score (the kv means' sum) is not. */
		const int least = grouped ? 16 : 14;
		const int spark = now_w + 1 > least ? now_w + 1 : least;
		frame_text(f, x, y, spark, grouped ? "this head's sum" : "H2O score", STYLE_DIM);
		draw_sparkline(v, f, x + spark, y + 1, w - spark, score, pos);
		frame_text(f, x, y + 1, spark - 1, now, STYLE_DIM);
	}
	free(score);
}
