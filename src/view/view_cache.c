/*
 * view_cache: the H2O cache panel and, beside it, the compared policy.
 *
 * The H2O side lists the cache after this step's eviction in its HEAVY and
 * RECENT regions, then the EVICTED tokens (newest first). Beside it the
 * full cache shows the same position on the same row, so each row compares
 * the two caches' scores for one token; any other policy shows its own
 * cache the same way H2O does, in its own regions (sinks, window, kept by
 * attention). When a section has more tokens than rows it shows the most
 * telling ones (the highest scores; the newest; the latest evicted) and
 * says how many it left out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_panels.h"

enum row_kind { ROW_SECTION, ROW_TOKEN, ROW_MORE };
/* The policy's regions in policy_region order, then its evictions. */
enum section {
	SEC_OLD = POLICY_REGION_OLD,
	SEC_RECENT = POLICY_REGION_RECENT,
	SEC_EVICTED,
	SEC_COUNT
};

struct row {
	enum row_kind kind;
	enum section sec;
	int pos;  /* ROW_TOKEN */
	int more; /* ROW_MORE: how many tokens are not shown */
};

/* Column layout of one half. */
struct cols {
	int x, w;
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

/* One half of the panel: which policy, where. */
struct side {
	enum policy_id p;
	struct cols c;
};

/* An index into a cache with its score, so that qsort needs no context. */
struct ranked {
	double score;
	int i;
};

/* Higher scores first; on a tie the lower index (position). */
static int by_score_desc(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->i - y->i;
}

/* The first SHOWN of entries 0..COUNT-1 of SCORE by score (highest first,
 * the lower index on a tie) into ITEMS; when out of memory, the first
 * SHOWN entries. */
static void highest(const double *score, int count, int shown, int *items)
{
	struct ranked *r = malloc((size_t)count * sizeof *r);
	for (int i = 0; i < count; i++) {
		items[i] = i;
		if (r)
			r[i] = (struct ranked){score[i], i};
	}
	if (!r)
		return;
	qsort(r, (size_t)count, sizeof *r, by_score_desc);
	for (int i = 0; i < shown; i++)
		items[i] = r[i].i;
	free(r);
}

static int by_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* How many kept positions of policy P sit in each region. */
static void count_regions(const struct view *v, enum policy_id p, int count[SEC_COUNT])
{
	const int len = engine_len(v->e, p);
	const int *pos = engine_positions(v->e, p);
	count[SEC_OLD] = count[SEC_RECENT] = 0;
	for (int i = 0; i < len; i++)
		count[timeline_region(v->tl, p, v->t, pos[i]) == REGION_RECENT ? SEC_RECENT
		                                                               : SEC_OLD]++;
	count[SEC_EVICTED] = v->t > 0 ? timeline_evictions_until(v->tl, p, v->t) : 0;
}

/* A policy's named regions, and its evictions unless it keeps everything. */
static bool section_shown(const struct view *v, enum policy_id p, enum section s)
{
	return s == SEC_EVICTED ? policy_capacity(p, &v->app->b) >= 0
	                        : policies[p]->region_name[s] != NULL;
}

static double kept_score(const struct view *v, enum policy_id p, int pos);

/* The selected token stays on screen: if its section left it out, it takes
 * the place of the least telling token shown (the lowest score, the oldest
 * recent one, the earliest eviction). */
static void keep_selected(const struct view *v, enum section s, int *items, int shown)
{
	const int sel = v->app->selected;
	if (sel < 0 || shown <= 0)
		return;
	const enum region r = timeline_region(v->tl, POLICY_H2O, v->t, sel);
	const enum section want = r == REGION_OLD       ? SEC_OLD
	                          : r == REGION_RECENT  ? SEC_RECENT
	                          : r == REGION_EVICTED ? SEC_EVICTED
	                                                : SEC_COUNT;
	if (want != s)
		return;
	for (int i = 0; i < shown; i++)
		if (items[i] == sel)
			return;
	if (s == SEC_RECENT) {
		items[0] = sel; /* older than every recent token shown */
	} else if (s == SEC_OLD) {
		/* Replace the lowest score, then restore position order. */
		int low = 0;
		for (int i = 1; i < shown; i++)
			if (kept_score(v, POLICY_H2O, items[i]) <=
			    kept_score(v, POLICY_H2O, items[low]))
				low = i;
		items[low] = sel;
		qsort(items, (size_t)shown, sizeof *items, by_int);
	} else {
		items[shown - 1] = sel;
	}
}

/* Rows for H rows of policy P's panel body: section headers, tokens,
 * "more" lines. SCRATCH holds at least n ints. */
static int build_rows(const struct view *v, enum policy_id p, struct row *rows, int h, int *scratch)
{
	const int len = engine_len(v->e, p);
	const int *pos = engine_positions(v->e, p);
	int count[SEC_COUNT];
	count_regions(v, p, count);

	/* Share the rows out one at a time, round robin, after the headers. */
	int avail = h, give[SEC_COUNT] = {0};
	for (int s = 0; s < SEC_COUNT; s++)
		avail -= section_shown(v, p, s);
	for (bool more = true; more && avail > 0;) {
		more = false;
		for (int s = 0; s < SEC_COUNT && avail > 0; s++) {
			if (section_shown(v, p, s) && give[s] < count[s]) {
				give[s]++;
				avail--;
				more = true;
			}
		}
	}

	int nrows = 0;
	for (int s = 0; s < SEC_COUNT && nrows < h; s++) {
		if (!section_shown(v, p, s))
			continue;
		rows[nrows++] = (struct row){.kind = ROW_SECTION, .sec = s};
		/* A cut section gives one of its rows to a "more" line, unless
		 * it has only one: then a token says more than the count the
		 * section header already gives. */
		const bool cut = give[s] < count[s] && give[s] > 1;
		const int shown = cut ? give[s] - 1 : give[s];
		int *items = scratch;
		if (s == SEC_OLD) {
			/* The highest scores, in position order. Old positions
			 * lead the cache, the recent ones close it. */
			if (shown < count[s])
				highest(engine_scores(v->e, p), count[s], shown, items);
			else
				for (int i = 0; i < count[s]; i++)
					items[i] = i;
			qsort(items, (size_t)(shown > 0 ? shown : 0), sizeof *items, by_int);
			for (int i = 0; i < shown; i++)
				items[i] = pos[items[i]];
		} else if (s == SEC_RECENT) {
			for (int i = 0; i < shown; i++)
				items[i] = pos[len - shown + i];
		} else {
			const int n_ev = count[SEC_EVICTED];
			for (int i = 0; i < shown; i++)
				items[i] = timeline_eviction(v->tl, p, n_ev - 1 - i)->pos;
		}
		if (p == POLICY_H2O)
			keep_selected(v, s, items, shown);
		/* Recent keeps its newest rows, so its "more" line goes first. */
		const struct row more = {.kind = ROW_MORE, .sec = s, .more = count[s] - shown};
		if (cut && s == SEC_RECENT)
			rows[nrows++] = more;
		for (int i = 0; i < shown; i++)
			rows[nrows++] = (struct row){.kind = ROW_TOKEN, .sec = s, .pos = items[i]};
		if (cut && s != SEC_RECENT)
			rows[nrows++] = more;
	}
	return nrows;
}

/* This step's weight of POS in policy P's cache, or -1. */
static double step_weight(const struct view *v, enum policy_id p, int pos)
{
	if (!v->rec)
		return -1.0;
	/* The timeline keeps no full cache at the step (timeline_seek_lite):
	 * its weights and scores are recomputed from the stored steps. */
	if (p == POLICY_FULL)
		return timeline_weight(v->tl, POLICY_FULL, v->t, pos);
	const struct cache_record *r = &v->rec->c[p];
	const int *hit = bsearch(&pos, r->attended, (size_t)r->n_attended, sizeof(int), by_int);
	return hit ? r->attn[hit - r->attended] : -1.0;
}

/* The score of a kept POS in policy P's cache after this step, or 0. */
static double kept_score(const struct view *v, enum policy_id p, int pos)
{
	if (p == POLICY_FULL)
		return timeline_full_score(v->tl, v->t, pos);
	const int *all = engine_positions(v->e, p);
	const int *hit = bsearch(&pos, all, (size_t)engine_len(v->e, p), sizeof(int), by_int);
	return hit ? engine_scores(v->e, p)[hit - all] : 0.0;
}

static const enum frame_style section_style[SEC_COUNT] = {STYLE_HEAVY, STYLE_RECENT, STYLE_EVICTED};

/* Decimals that tell X from OTHER apart: two, or as many more (up to six)
 * as it takes. It is the rule of policy_word_cutoff, so that an evicted
 * token's score beside "< 0.188" reads 0.187, never 0.19. */
static int pair_decimals(double x, double other)
{
	char a[48], b[48];
	int digits = 2;
	for (; digits < 6 && x != other; digits++) {
		snprintf(a, sizeof a, "%.*f", digits, x);
		snprintf(b, sizeof b, "%.*f", digits, other);
		if (strcmp(a, b) != 0)
			break;
	}
	return digits;
}

/* The score right-aligned in its column (reaching left when it needs more
 * room) and this step's attention; returns the column the score's digits
 * start at. */
static int draw_numbers(struct frame *f, const struct cols *c, int y, double score, int decimals,
                        double attn, enum frame_style style)
{
	char buf[48];
	const int len = snprintf(buf, sizeof buf, "%.*f", decimals, score);
	const int x = c->score + SCORE_W - len;
	frame_text(f, x, y, len, buf, style);
	if (attn >= 0.0)
		frame_printf(f, c->attn, y, ATTN_W, STYLE_DIM, "+%.2f", attn);
	return x;
}

static void draw_token_head(const struct view *v, struct frame *f, const struct cols *c, int y,
                            int pos, enum frame_style style)
{
	frame_printf(f, c->pos, y, c->pos_w, STYLE_DIM, "%*d", c->pos_w, pos);
	frame_text(f, c->text, y, c->text_w, v->sc->text[pos], style);
}

/* Why an evicted token went, in the bar column up to column END, in its
 * policy's words. */
static void draw_why(const struct view *v, struct frame *f, const struct side *sd, int y,
                     const struct eviction *ev, int end)
{
	const struct cols *c = &sd->c;
	const int w = end - 1 - c->bar;
	struct policy_words words;
	view_word_eviction(v, sd->p, ev, POLICY_VOICE_BRIEF, &words);
	char tail[128];
	int used = 0;
	if (words.cutoff_pos >= 0) {
		used = frame_text(f, c->bar, y, w, words.before, STYLE_EVICTED);
		used += frame_text(f, c->bar + used, y, w - used, v->sc->text[words.cutoff_pos],
		                   STYLE_EVICTED);
		snprintf(tail, sizeof tail, "%s at step %d", words.after, ev->step);
	} else {
		snprintf(tail, sizeof tail, "%s at step %d", words.before, ev->step);
	}
	frame_text(f, c->bar + used, y, w - used, tail, STYLE_EVICTED);
}

/* Mark the selected token's row: a glyph for the text, reverse video for
 * the terminal. */
static void mark_selected(const struct view *v, struct frame *f, const struct side *sd, int y,
                          int pos)
{
	if (sd->p != POLICY_H2O || pos != v->app->selected)
		return;
	frame_style(f, sd->c.mark, y, sd->c.attn + ATTN_W - sd->c.mark, STYLE_SELECT);
	frame_put(f, sd->c.mark, y, frame_glyph(f, GLYPH_SELECTED), STYLE_SELECT);
}

static void draw_token_row(const struct view *v, struct frame *f, const struct side *sd, int y,
                           const struct row *row, double bar_max)
{
	const struct cols *c = &sd->c;
	const int pos = row->pos;
	if (row->sec == SEC_EVICTED) {
		const struct eviction *ev = timeline_eviction_of(v->tl, sd->p, pos, v->t);
		const bool now = ev && ev->step == v->t;
		if (now)
			frame_put(f, c->mark, y, frame_glyph(f, GLYPH_GONE), STYLE_GONE);
		draw_token_head(v, f, c, y, pos, now ? STYLE_GONE : STYLE_EVICTED);
		if (!ev)
			return;
		/* Compared on its score, it shows the digits the cut-off does. */
		const int decimals = ev->cutoff_pos >= 0 && !policies[sd->p]->by_weight
		                             ? pair_decimals(ev->score, ev->cutoff_value)
		                             : 2;
		const int x = draw_numbers(f, c, y, ev->score, decimals, now ? ev->weight : -1.0,
		                           STYLE_EVICTED);
		draw_why(v, f, sd, y, ev, x < c->score ? x : c->score);
		return;
	}
	const enum frame_style style = section_style[row->sec];
	const struct step_summary *s = v->t > 0 ? timeline_summary(v->tl, v->t) : NULL;
	if (pos == v->t - 1)
		frame_put(f, c->mark, y, frame_glyph(f, GLYPH_NEW), STYLE_NEW);
	else if (s && sd->p == POLICY_H2O && pos == s->promoted_pos)
		frame_put(f, c->mark, y, frame_glyph(f, GLYPH_PROMOTED), STYLE_HEAVY);
	draw_token_head(v, f, c, y, pos, pos == v->t - 1 ? STYLE_NEW : style);
	const double score = kept_score(v, sd->p, pos);
	frame_bar(f, c->bar, y, c->bar_w, score, bar_max, style);
	draw_numbers(f, c, y, score, 2, step_weight(v, sd->p, pos), STYLE_NORMAL);
}

/* The full cache beside H2O: POS on H2O's row, whatever H2O did with it. */
static void draw_mirror_row(const struct view *v, struct frame *f, const struct cols *c, int y,
                            int pos, double bar_max)
{
	const double score = kept_score(v, POLICY_FULL, pos);
	if (pos == v->t - 1)
		frame_put(f, c->mark, y, frame_glyph(f, GLYPH_NEW), STYLE_NEW);
	draw_token_head(v, f, c, y, pos, pos == v->t - 1 ? STYLE_NEW : STYLE_NORMAL);
	frame_bar(f, c->bar, y, c->bar_w, score, bar_max, STYLE_NORMAL);
	draw_numbers(f, c, y, score, 2, step_weight(v, POLICY_FULL, pos), STYLE_NORMAL);
}

/* What a cut section left out: "… 1,980 earlier evictions, from step 5". */
static void draw_more(const struct view *v, struct frame *f, const struct side *sd, int y,
                      const struct row *row)
{
	char n[32], buf[96];
	view_format_count(row->more, n);
	if (row->sec == SEC_RECENT)
		snprintf(buf, sizeof buf, "%s older", n);
	else if (row->sec == SEC_OLD)
		snprintf(buf, sizeof buf, "%s more with lower scores", n);
	else
		snprintf(buf, sizeof buf, "%s earlier evictions, from step %d", n,
		         timeline_eviction(v->tl, sd->p, 0)->step);
	frame_put(f, sd->c.pos, y, frame_glyph(f, GLYPH_ELLIPSIS), STYLE_DIM);
	frame_text(f, sd->c.pos + 2, y, sd->c.w - 4, buf, STYLE_DIM);
}

static void draw_section_row(const struct view *v, struct frame *f, const struct side *sd, int y,
                             const struct row *row)
{
	int count[SEC_COUNT];
	count_regions(v, sd->p, count);
	/* The budget of each region, where the rule has one. */
	const int limit =
	        row->sec == SEC_EVICTED
	                ? -1
	                : policies[sd->p]->region_budget(&v->app->b, (enum policy_region)row->sec);
	const char *name =
	        row->sec == SEC_EVICTED ? "EVICTED" : policies[sd->p]->region_name[row->sec];
	const int w = sd->c.w - 2;
	int used = frame_text(f, sd->c.mark, y, w, name, section_style[row->sec]);
	char a[32], b2[32];
	if (limit >= 0)
		frame_printf(f, sd->c.mark + used, y, w - used, STYLE_DIM, "  %s of %s",
		             view_format_count(count[row->sec], a), view_format_count(limit, b2));
	else
		frame_printf(f, sd->c.mark + used, y, w - used, STYLE_DIM, "  %s",
		             view_format_count(count[row->sec], a));
}

static void draw_column_labels(struct frame *f, const struct cols *c, int y)
{
	frame_printf(f, c->score, y, SCORE_W, STYLE_DIM, "%*s", SCORE_W, "score");
	frame_printf(f, c->attn, y, ATTN_W, STYLE_DIM, "%*s", ATTN_W, "+attn");
}

static void draw_title(const struct view *v, struct frame *f, const struct side *sd, int y,
                       double bar_max)
{
	const struct cache_summary *cs = v->t > 0 ? &timeline_summary(v->tl, v->t)->c[sd->p] : NULL;
	const int w = sd->c.w - 2, x = sd->c.mark;
	int used = frame_text(f, x, y, w, policies[sd->p]->title, STYLE_LABEL);
	char tokens[32], kv[32], cap[32], shared[32];
	view_format_count(cs ? cs->m.tokens : 0, tokens);
	view_format_count(cs ? cs->m.kv : 0, kv);
	const int capacity = policy_capacity(sd->p, &v->app->b);
	if (capacity < 0)
		used += frame_printf(f, x + used, y, w - used, STYLE_DIM, "  %s tokens, %s KV",
		                     tokens, kv);
	else
		used += frame_printf(f, x + used, y, w - used, STYLE_DIM,
		                     "  %s of %s tokens, %s KV", tokens,
		                     view_format_count(capacity, cap), kv);
	/* What it shares with H2O, unless it keeps everything anyway. */
	if (sd->p != POLICY_H2O && capacity >= 0 && cs)
		used += frame_printf(f, x + used, y, w - used, STYLE_DIM, ", %s shared with H2O",
		                     view_format_count(cs->m.overlap_h2o, shared));
	if (sd->p != POLICY_H2O && bar_max > 0.0)
		frame_printf(f, x + used, y, w - used, STYLE_DIM, "  bars to %.2f", bar_max);
}

/* The largest score a token row will draw: one scale for both halves, so
 * bars compare across the rule. */
static double rows_max(const struct view *v, const struct side *sd, const struct row *rows,
                       int nrows, double max)
{
	for (int i = 0; i < nrows; i++) {
		if (rows[i].kind != ROW_TOKEN || rows[i].sec == SEC_EVICTED)
			continue;
		const double s = kept_score(v, sd->p, rows[i].pos);
		max = s > max ? s : max;
	}
	return max;
}

void panel_cache_draw(const struct view *v, struct frame *f, struct rect r)
{
	if (r.h < 2)
		return;
	/* Both halves get the narrower width, so equal scores draw equal
	 * bars on either side of the rule. */
	const int lw = v->split - r.x, rw = r.x + r.w - v->split - 1;
	const int w = lw < rw ? lw : rw;
	const struct side left = {POLICY_H2O, layout(r.x, w, v->n)};
	const struct side right = {v->app->compare, layout(v->split + 1, w, v->n)};
	const bool mirror = right.p == POLICY_FULL;
	for (int y = r.y; y < r.y + r.h; y++)
		frame_put(f, v->split, y, frame_glyph(f, GLYPH_VLINE), STYLE_BORDER);

	const int body = r.h - 1;
	struct row *lrows = malloc((size_t)body * sizeof *lrows);
	struct row *rrows = malloc((size_t)body * sizeof *rrows);
	int *scratch = malloc(((size_t)v->n + 1) * sizeof *scratch);
	if (!lrows || !rrows || !scratch) {
		free(lrows);
		free(rrows);
		free(scratch);
		frame_text(f, r.x + 1, r.y, r.w - 2, "out of memory", STYLE_WARN);
		return;
	}
	/* At step 0 there is nothing to list. */
	const int nl = v->t > 0 ? build_rows(v, POLICY_H2O, lrows, body, scratch) : 0;
	const int nr = v->t == 0 ? 0 : mirror ? nl : build_rows(v, right.p, rrows, body, scratch);
	const struct row *rr = mirror ? lrows : rrows;

	double bar_max = rows_max(v, &left, lrows, nl, 0.0);
	if (mirror) {
		for (int i = 0; i < nl; i++)
			if (lrows[i].kind == ROW_TOKEN) {
				const double s = kept_score(v, POLICY_FULL, lrows[i].pos);
				bar_max = s > bar_max ? s : bar_max;
			}
	} else {
		bar_max = rows_max(v, &right, rrows, nr, bar_max);
	}

	draw_title(v, f, &left, r.y, bar_max);
	draw_title(v, f, &right, r.y, bar_max);
	for (int i = 0; i < nl; i++) {
		const int y = r.y + 1 + i;
		const struct row *row = &lrows[i];
		if (row->kind == ROW_SECTION) {
			draw_section_row(v, f, &left, y, row);
		} else if (row->kind == ROW_MORE) {
			draw_more(v, f, &left, y, row);
		} else {
			draw_token_row(v, f, &left, y, row, bar_max);
			mark_selected(v, f, &left, y, row->pos);
			if (mirror)
				draw_mirror_row(v, f, &right.c, y, row->pos, bar_max);
		}
	}
	for (int i = 0; i < nr && !mirror; i++) {
		const int y = r.y + 1 + i;
		const struct row *row = &rr[i];
		if (row->kind == ROW_SECTION)
			draw_section_row(v, f, &right, y, row);
		else if (row->kind == ROW_MORE)
			draw_more(v, f, &right, y, row);
		else
			draw_token_row(v, f, &right, y, row, bar_max);
	}
	/* Column labels on the first section row of each half. */
	if (nl > 0)
		draw_column_labels(f, &left.c, r.y + 1);
	if (nr > 0)
		draw_column_labels(f, &right.c, r.y + 1);
	if (v->t == 0)
		frame_text(f, left.c.mark, r.y + 1, left.c.w - 2, "(empty: no token has arrived)",
		           STYLE_DIM);
	free(lrows);
	free(rrows);
	free(scratch);
}
