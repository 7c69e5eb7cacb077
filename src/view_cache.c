/*
 * view_cache: the H2O cache panel and, beside it, the full cache panel.
 *
 * The H2O side lists the cache after this step's eviction in its HEAVY and
 * RECENT regions, then the EVICTED tokens (newest first). The full side
 * shows the same position on the same row, so each row compares the two
 * caches' scores for one token. When a section has more tokens than rows it
 * shows the most telling ones (heavy: the highest scores; recent: the
 * newest; evicted: the latest) and says how many it left out.
 */
#include <stdio.h>
#include <stdlib.h>

#include "view_panels.h"

enum row_kind { ROW_BLANK, ROW_SECTION, ROW_TOKEN, ROW_MORE };
enum section { SEC_HEAVY, SEC_RECENT, SEC_EVICTED, SEC_COUNT };

struct row {
	enum row_kind kind;
	enum section sec;
	int pos;  /* ROW_TOKEN */
	int more; /* ROW_MORE: how many tokens are not shown */
};

/* Column layout of one half. */
struct cols {
	int x, w;                 /* the half */
	int mark, pos, text, bar; /* x of each column */
	int pos_w, text_w, bar_w;
	int score, attn; /* x of the score and attention columns */
};

#define SCORE_W 7
#define ATTN_W  6

static struct cols layout(int x, int w, int n)
{
	struct cols c = {.x = x, .w = w};
	c.pos_w = 1;
	for (int v = n - 1; v >= 10; v /= 10)
		c.pos_w++;
	c.text_w = w / 6 < 6 ? 6 : w / 6 > 16 ? 16 : w / 6;
	c.mark = x + 1;
	c.pos = c.mark + 2;
	c.text = c.pos + c.pos_w + 1;
	c.bar = c.text + c.text_w + 1;
	c.attn = x + w - 1 - ATTN_W;
	c.score = c.attn - 1 - SCORE_W;
	c.bar_w = c.score - 1 - c.bar;
	if (c.bar_w < 0)
		c.bar_w = 0;
	return c;
}

struct sections {
	int count[SEC_COUNT];
	int *items[SEC_COUNT]; /* positions, in display order */
};

static const double *sort_scores;

static int by_score_desc(const void *a, const void *b)
{
	const int i = *(const int *)a, j = *(const int *)b;
	if (sort_scores[i] != sort_scores[j])
		return sort_scores[i] < sort_scores[j] ? 1 : -1;
	return i - j;
}

static int by_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Rows for H rows of panel body: section headers, tokens, "more" lines. */
static int build_rows(const struct view *v, struct row *rows, int h, int *scratch)
{
	const int len = engine_h2o_len(v->e);
	const int rlen = engine_h2o_recent_len(v->e);
	const int *pos = engine_h2o_positions(v->e);
	const int n_ev = v->t > 0 ? timeline_evictions_until(v->tl, v->t) : 0;
	const int count[SEC_COUNT] = {len - rlen, rlen, n_ev};

	/* Share the rows out one at a time, round robin, after the headers. */
	int avail = h - SEC_COUNT, give[SEC_COUNT] = {0};
	for (bool more = true; more && avail > 0;) {
		more = false;
		for (int s = 0; s < SEC_COUNT && avail > 0; s++) {
			if (give[s] < count[s]) {
				give[s]++;
				avail--;
				more = true;
			}
		}
	}

	int nrows = 0;
	for (int s = 0; s < SEC_COUNT && nrows < h; s++) {
		rows[nrows++] = (struct row){.kind = ROW_SECTION, .sec = s};
		const bool cut = give[s] < count[s];
		const int shown = cut ? give[s] - 1 : give[s];
		int *items = scratch;
		if (s == SEC_HEAVY) {
			/* The highest scores, in position order. */
			for (int i = 0; i < count[s]; i++)
				items[i] = i;
			if (cut) {
				sort_scores = engine_h2o_scores(v->e);
				qsort(items, (size_t)count[s], sizeof *items, by_score_desc);
			}
			qsort(items, (size_t)(shown > 0 ? shown : 0), sizeof *items, by_int);
			for (int i = 0; i < shown; i++)
				items[i] = pos[items[i]];
		} else if (s == SEC_RECENT) {
			for (int i = 0; i < shown; i++)
				items[i] = pos[len - shown + i];
		} else {
			for (int i = 0; i < shown; i++)
				items[i] = timeline_eviction(v->tl, n_ev - 1 - i)->pos;
		}
		/* Recent keeps its newest rows, so its "more" line goes first. */
		if (cut && s == SEC_RECENT && give[s] > 0)
			rows[nrows++] =
			        (struct row){.kind = ROW_MORE, .sec = s, .more = count[s] - shown};
		for (int i = 0; i < shown; i++)
			rows[nrows++] = (struct row){.kind = ROW_TOKEN, .sec = s, .pos = items[i]};
		if (cut && s != SEC_RECENT && give[s] > 0)
			rows[nrows++] =
			        (struct row){.kind = ROW_MORE, .sec = s, .more = count[s] - shown};
	}
	return nrows;
}

/* This step's H2O weight of POS, or -1 when H2O did not attend it. */
static double h2o_attn(const struct view *v, int pos)
{
	if (!v->rec)
		return -1.0;
	const int *hit =
	        bsearch(&pos, v->rec->attended, (size_t)v->rec->n_attended, sizeof(int), by_int);
	return hit ? v->rec->attn[hit - v->rec->attended] : -1.0;
}

/* The H2O score of a kept POS after this step. */
static double h2o_score(const struct view *v, int pos)
{
	const int *all = engine_h2o_positions(v->e);
	const int *hit = bsearch(&pos, all, (size_t)engine_h2o_len(v->e), sizeof(int), by_int);
	return hit ? engine_h2o_scores(v->e)[hit - all] : 0.0;
}

static const struct eviction *eviction_of(const struct view *v, int pos)
{
	const int at = timeline_evicted_at(v->tl, pos);
	if (at == 0 || at > v->t)
		return NULL;
	const struct step_summary *s = timeline_summary(v->tl, at);
	for (int i = 0; i < s->n_evicted; i++) {
		const struct eviction *ev = timeline_eviction(v->tl, s->first_evict + i);
		if (ev->pos == pos)
			return ev;
	}
	return NULL;
}

static const char *const section_name[SEC_COUNT] = {"HEAVY", "RECENT", "EVICTED"};
static const enum frame_style section_style[SEC_COUNT] = {STYLE_HEAVY, STYLE_RECENT, STYLE_EVICTED};

static void draw_numbers(struct frame *f, const struct cols *c, int y, double score, double attn,
                         enum frame_style style)
{
	frame_printf(f, c->score, y, SCORE_W, style, "%*.2f", SCORE_W, score);
	if (attn >= 0.0)
		frame_printf(f, c->attn, y, ATTN_W, STYLE_DIM, "+%.2f", attn);
}

static void draw_token_head(const struct view *v, struct frame *f, const struct cols *c, int y,
                            int pos, enum frame_style style)
{
	frame_printf(f, c->pos, y, c->pos_w, STYLE_DIM, "%*d", c->pos_w, pos);
	frame_text(f, c->text, y, c->text_w, v->sc->text[pos], style);
}

static void draw_h2o_row(const struct view *v, struct frame *f, const struct cols *c, int y,
                         const struct row *row, double bar_max)
{
	const int pos = row->pos;
	const struct step_summary *s = v->t > 0 ? timeline_summary(v->tl, v->t) : NULL;
	if (row->sec == SEC_EVICTED) {
		const struct eviction *ev = eviction_of(v, pos);
		const bool now = ev && ev->step == v->t;
		if (now)
			frame_put(f, c->mark, y, frame_glyph(f, GLYPH_GONE), STYLE_GONE);
		draw_token_head(v, f, c, y, pos, now ? STYLE_GONE : STYLE_EVICTED);
		/* Why: the score column already shows its own score, so the
		 * comparison starts from the cut-off it lost to. */
		char why[96], a[32], b[32];
		int used = 0;
		if (ev && ev->cutoff_pos >= 0) {
			view_format_pair(ev->score, ev->cutoff_score, a, b, sizeof a);
			snprintf(why, sizeof why, "%s %s ",
			         ev->score < ev->cutoff_score ? "<" : "=", b);
			used = frame_text(f, c->bar, y, c->bar_w, why, STYLE_EVICTED);
			used += frame_text(f, c->bar + used, y, c->bar_w - used,
			                   v->sc->text[ev->cutoff_pos], STYLE_EVICTED);
			snprintf(why, sizeof why, " at step %d", ev->step);
		} else {
			snprintf(why, sizeof why, "left the window at step %d", ev ? ev->step : 0);
		}
		frame_text(f, c->bar + used, y, c->bar_w - used, why, STYLE_EVICTED);
		draw_numbers(f, c, y, ev ? ev->score : 0.0, now ? h2o_attn(v, pos) : -1.0,
		             STYLE_EVICTED);
		return;
	}
	const enum frame_style style = row->sec == SEC_HEAVY ? STYLE_HEAVY : STYLE_RECENT;
	if (pos == v->t - 1)
		frame_put(f, c->mark, y, frame_glyph(f, GLYPH_NEW), STYLE_NEW);
	else if (s && pos == s->promoted_pos)
		frame_put(f, c->mark, y, frame_glyph(f, GLYPH_PROMOTED), STYLE_HEAVY);
	draw_token_head(v, f, c, y, pos, pos == v->t - 1 ? STYLE_NEW : style);
	const double score = h2o_score(v, pos);
	frame_bar(f, c->bar, y, c->bar_w, score, bar_max, style);
	draw_numbers(f, c, y, score, h2o_attn(v, pos), STYLE_NORMAL);
}

static void draw_full_row(const struct view *v, struct frame *f, const struct cols *c, int y,
                          int pos, double bar_max)
{
	const double score = engine_full_scores(v->e)[pos];
	if (pos == v->t - 1)
		frame_put(f, c->mark, y, frame_glyph(f, GLYPH_NEW), STYLE_NEW);
	draw_token_head(v, f, c, y, pos, pos == v->t - 1 ? STYLE_NEW : STYLE_NORMAL);
	frame_bar(f, c->bar, y, c->bar_w, score, bar_max, STYLE_NORMAL);
	draw_numbers(f, c, y, score, v->rec ? v->rec->full_attn[pos] : -1.0, STYLE_NORMAL);
}

static void draw_section_row(const struct view *v, struct frame *f, const struct cols *l,
                             const struct cols *r, int y, const struct row *row)
{
	const int len = engine_h2o_len(v->e);
	const int rlen = engine_h2o_recent_len(v->e);
	const int count[SEC_COUNT] = {len - rlen, rlen,
	                              v->t > 0 ? timeline_evictions_until(v->tl, v->t) : 0};
	const int budget[SEC_COUNT] = {v->app->heavy, v->app->recent, -1};
	int used = frame_text(f, l->mark, y, l->w - 2, section_name[row->sec],
	                      section_style[row->sec]);
	if (budget[row->sec] >= 0)
		frame_printf(f, l->mark + used, y, l->w - used - 2, STYLE_DIM, "  %d of %d",
		             count[row->sec], budget[row->sec]);
	else
		frame_printf(f, l->mark + used, y, l->w - used - 2, STYLE_DIM, "  %d",
		             count[row->sec]);
	if (row->sec == SEC_HEAVY) {
		/* Column labels, once, over both halves. */
		const struct cols *halves[2] = {l, r};
		for (int i = 0; i < 2; i++) {
			frame_printf(f, halves[i]->score, y, SCORE_W, STYLE_DIM, "%*s", SCORE_W,
			             "score");
			frame_printf(f, halves[i]->attn, y, ATTN_W, STYLE_DIM, "%*s", ATTN_W,
			             "+attn");
		}
	}
}

void panel_cache_draw(const struct view *v, struct frame *f, struct rect r)
{
	if (r.h < 2)
		return;
	/* Both halves get the narrower width, so equal scores draw equal
	 * bars on either side of the rule. */
	const int lw = v->split - r.x, rw = r.x + r.w - v->split - 1;
	const int w = lw < rw ? lw : rw;
	const struct cols left = layout(r.x, w, v->n);
	const struct cols right = layout(v->split + 1, w, v->n);
	for (int y = r.y; y < r.y + r.h; y++)
		frame_put(f, v->split, y, frame_glyph(f, GLYPH_VLINE), STYLE_BORDER);

	const int body = r.h - 1;
	struct row *rows = malloc((size_t)body * sizeof *rows);
	int *scratch = malloc(((size_t)v->n + 1) * sizeof *scratch);
	if (!rows || !scratch) {
		free(rows);
		free(scratch);
		frame_text(f, r.x + 1, r.y, r.w - 2, "out of memory", STYLE_WARN);
		return;
	}
	/* At step 0 there is nothing to list. */
	const int nrows = v->t > 0 ? build_rows(v, rows, body, scratch) : 0;

	/* One scale for both halves, so bars compare across the rule. */
	double bar_max = 0.0;
	for (int i = 0; i < nrows; i++) {
		if (rows[i].kind != ROW_TOKEN)
			continue;
		const double full = engine_full_scores(v->e)[rows[i].pos];
		const double h2o = rows[i].sec == SEC_EVICTED ? 0.0 : h2o_score(v, rows[i].pos);
		bar_max = full > bar_max ? full : bar_max;
		bar_max = h2o > bar_max ? h2o : bar_max;
	}

	const struct step_metrics *m = v->t > 0 ? &timeline_summary(v->tl, v->t)->m : NULL;
	int used = frame_text(f, left.mark, r.y, left.w - 2, "H2O CACHE", STYLE_LABEL);
	frame_printf(f, left.mark + used, r.y, left.w - used - 2, STYLE_DIM,
	             "  %d of %d tokens, %ld KV", m ? m->tokens_h : 0,
	             v->app->heavy + v->app->recent, m ? m->kv_h : 0L);
	used = frame_text(f, right.mark, r.y, right.w - 2, "FULL CACHE", STYLE_LABEL);
	used += frame_printf(f, right.mark + used, r.y, right.w - used - 2, STYLE_DIM,
	                     "  %d tokens, %ld KV", m ? m->tokens_f : 0, m ? m->kv_f : 0L);
	if (bar_max > 0.0)
		frame_printf(f, right.mark + used, r.y, right.w - used - 2, STYLE_DIM,
		             "  bars to %.2f", bar_max);

	for (int i = 0; i < nrows; i++) {
		const int y = r.y + 1 + i;
		const struct row *row = &rows[i];
		switch (row->kind) {
		case ROW_SECTION:
			draw_section_row(v, f, &left, &right, y, row);
			break;
		case ROW_MORE:
			frame_put(f, left.pos, y, frame_glyph(f, GLYPH_ELLIPSIS), STYLE_DIM);
			frame_printf(f, left.pos + 2, y, left.w - 6, STYLE_DIM, "%d more %s",
			             row->more, row->sec == SEC_RECENT ? "older" : "not shown");
			break;
		case ROW_TOKEN:
			draw_h2o_row(v, f, &left, y, row, bar_max);
			draw_full_row(v, f, &right, y, row->pos, bar_max);
			break;
		case ROW_BLANK:
			break;
		}
	}
	if (v->t == 0)
		frame_text(f, left.mark, r.y + 1, left.w - 2, "(empty: no token has arrived)",
		           STYLE_DIM);
	free(rows);
	free(scratch);
}
