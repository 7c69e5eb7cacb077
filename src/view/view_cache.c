/*
 * view_cache: the H2O cache panel and, beside it, the compared policy.
 *
 * One policy leads the rows: H2O, or the panel being walked (app.h, enum
 * app_walk). Its list (app.list) gives the sections — its regions (HEAVY
 * and RECENT for H2O), then EVICTED — and their order; the other panel
 * shows the same position on the same row, as that policy holds it (kept,
 * with its score, or evicted, with why), so each row compares one token
 * across the rule.
 *
 * Unwalked, the panel is a summary: when a section has more tokens than
 * rows it shows the most telling ones (the highest scores; the newest; the
 * latest evicted — or, sorted by score, the highest of each) and says how
 * many it left out; the selected token always stays on screen. Walked, the
 * list is shown whole and scrolls so that the selection sits in the
 * middle, the top row naming the section the rows below belong to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/heads.h"
#include "view_cache.h"
#include "view_panels.h"

/* Column layout of one half. */
struct cols {
	int x, w;
	int mark, pos, text, bar; /* x of each column */
	int pos_w, text_w, bar_w;
	int score, attn; /* x of the score and attention columns */
	/* A lesson's sum, "1.40 + 0.20 = 1.60" (old score + attention = new
	 * score; "1.40+0.20=1.60" in a narrow half), in place of the score
	 * and attention columns, from score: SUM_W columns, the new score's
	 * digits from score + sum_at. */
	bool sum, narrow;
	int sum_w, sum_at;
};

#define SCORE_W 7
#define ATTN_W  6
#define SUM_W   22 /* "%6.2f + %4.2f = %-6.2f" */
#define SUM_NW  16 /* "%5.2f+%4.2f=%-5.2f" */

/* A half W wide of a scene of N tokens; SUM: show a lesson's sums. */
static struct cols layout(int x, int w, int n, bool sum)
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
	/* The sum when it leaves the bars as much room as the text; in a
	 * narrow half, written without spaces. */
	for (int narrow = 0; sum && !c.sum && narrow < 2; narrow++) {
		const int sw = narrow ? SUM_NW : SUM_W;
		if (x + w - 1 - sw - 1 - c.bar >= c.text_w) {
			c.sum = true;
			c.narrow = narrow;
			c.sum_w = sw;
			c.sum_at = sw - (narrow ? 5 : 6);
			c.score = x + w - 1 - sw;
		}
	}
	c.bar_w = c.score - 1 - c.bar;
	if (c.bar_w < 0)
		c.bar_w = 0;
	return c;
}

/* One half of the panel: which policy, where, and whether it leads. */
struct side {
	enum policy_id p;
	struct cols c;
	bool lead;
};

static const enum frame_style section_style[SEC_COUNT] = {STYLE_HEAVY, STYLE_RECENT, STYLE_EVICTED};

/* The score right-aligned in its column (reaching left when it needs more
 * room) and this step's attention; returns the column the score's digits
 * start at. */
static int draw_numbers(struct frame *f, const struct cols *c, int y, double score, int decimals,
                        double attn, enum frame_style style)
{
	char buf[80];
	if (c->sum && attn >= 0.0) {
		const int len =
		        snprintf(buf, sizeof buf,
		                 c->narrow ? "%5.*f+%4.2f=%-5.*f" : "%6.*f + %4.2f = %-6.*f",
		                 decimals, score - attn, attn, decimals, score);
		frame_text(f, c->score, y, len, buf, style);
		return c->score;
	}
	const int len = snprintf(buf, sizeof buf, "%.*f", decimals, score);
	/* Alone in a sum's place, the score stands under the sum's. */
	const int x = c->sum ? c->score + c->sum_at : c->score + SCORE_W - len;
	frame_text(f, x, y, len, buf, style);
	if (attn >= 0.0 && !c->sum)
		frame_printf(f, c->attn, y, ATTN_W, STYLE_DIM, "+%.2f", attn);
	return x;
}

static void draw_token_head(const struct view *v, struct frame *f, const struct cols *c, int y,
                            int pos, enum frame_style style)
{
	frame_printf(f, c->pos, y, c->pos_w, STYLE_DIM, "%*d", c->pos_w, pos);
	frame_text(f, c->text, y, c->text_w, v->sc->text[pos], style);
}

/* Why an evicted token went, in its policy's words: "< 1.71 cat at step 5",
 * or for this step's eviction (NOW) "< 1.71 cat now" when ROOM columns
 * cannot hold the step. Returns its width; when DRAW, draws it at X, Y in at
 * most ROOM columns. */
static int draw_why(const struct view *v, struct frame *f, bool draw, const struct side *sd, int x,
                    int y, int room, const struct eviction *ev, bool now)
{
	struct policy_words words;
	view_word_eviction(v, sd->p, ev, POLICY_VOICE_BRIEF, &words);
	const bool ascii = f->ascii;
	const char *cut = words.cutoff_pos >= 0 ? v->sc->text[words.cutoff_pos] : "";
	char tail[128], step[32];
	snprintf(step, sizeof step, " at step %d", ev->step);
	const char *lead = words.cutoff_pos >= 0 ? words.after : words.before;
	int width = (words.cutoff_pos >= 0 ? frame_text_width(words.before, ascii) : 0) +
	            frame_text_width(cut, ascii) + frame_text_width(lead, ascii);
	/* This step's eviction says "now" rather than lose its cut-off. */
	if (now && width + (int)strlen(step) > room)
		snprintf(step, sizeof step, " now");
	snprintf(tail, sizeof tail, "%s%s", lead, step);
	width += (int)strlen(step);
	if (!draw)
		return width;
	int used = 0;
	if (words.cutoff_pos >= 0) {
		used = frame_text(f, x, y, room, words.before, STYLE_EVICTED);
		used += frame_text(f, x + used, y, room - used, cut, STYLE_EVICTED);
	}
	frame_text(f, x + used, y, room - used, tail, STYLE_EVICTED);
	return width;
}

/* Mark the selected token's row on the leading side (every row of a
 * search's match across tokens): a glyph for the text, reverse video for
 * the terminal. */
static void mark_selected(const struct view *v, struct frame *f, const struct side *sd, int y,
                          int pos)
{
	if (!sd->lead || !app_selects(v->app, pos))
		return;
	frame_style(f, sd->c.mark, y, sd->c.attn + ATTN_W - sd->c.mark, STYLE_SELECT);
	frame_put(f, sd->c.mark, y, frame_glyph(f, GLYPH_SELECTED), STYLE_SELECT);
}

/* POS as side SD's policy holds it: kept in a region, with its score bar,
 * or evicted, with why. The full cache keeps everything, plainly. */
static void draw_token_row(const struct view *v, struct frame *f, const struct side *sd, int y,
                           int pos, double bar_max)
{
	const struct cols *c = &sd->c;
	const enum region reg = timeline_region(v->tl, sd->p, v->t, pos);
	if (reg == REGION_EVICTED) {
		const struct eviction *ev = timeline_eviction_of(v->tl, sd->p, pos, v->t);
		const bool now = ev && ev->step == v->t;
		if (now)
			frame_put(f, c->mark, y, frame_glyph(f, GLYPH_GONE), STYLE_GONE);
		draw_token_head(v, f, c, y, pos, now ? STYLE_GONE : STYLE_EVICTED);
		if (!ev)
			return;
		/* Compared on its score, it shows the digits the cut-off does. */
		const int decimals = ev->cutoff_pos >= 0 && !policies[sd->p]->by_weight
		                             ? policy_pair_decimals(ev->score, ev->cutoff_value)
		                             : 2;
		/* This step's eviction keeps its reason whole: short of room
		 * beside the sum, it shows the score alone. */
		double attn = now ? ev->weight : -1.0;
		if (attn >= 0.0 && c->sum &&
		    draw_why(v, f, false, sd, 0, 0, c->score - 1 - c->bar, ev, false) >
		            c->score - 1 - c->bar)
			attn = -1.0;
		const int x = draw_numbers(f, c, y, ev->score, decimals, attn, STYLE_EVICTED);
		/* The why has the room up to the numbers: a lone score in a sum's
		 * place leaves it more. */
		const int why_end = c->sum && x > c->score ? x - 1 : x < c->score ? x : c->score;
		draw_why(v, f, true, sd, c->bar, y, why_end - 1 - c->bar, ev, now);
		return;
	}
	if (reg == REGION_NONE)
		return;
	const enum frame_style style = sd->p == POLICY_FULL   ? STYLE_NORMAL
	                               : reg == REGION_RECENT ? STYLE_RECENT
	                                                      : STYLE_HEAVY;
	const struct step_summary *s = v->t > 0 ? timeline_summary(v->tl, v->t) : NULL;
	if (pos == v->t - 1)
		frame_put(f, c->mark, y, frame_glyph(f, GLYPH_NEW), STYLE_NEW);
	else if (s && sd->p == POLICY_H2O && pos == s->promoted_pos)
		frame_put(f, c->mark, y, frame_glyph(f, GLYPH_PROMOTED), STYLE_HEAVY);
	draw_token_head(v, f, c, y, pos, pos == v->t - 1 ? STYLE_NEW : style);
	const double score = view_cache_kept_score(v, sd->p, pos);
	frame_bar(f, c->bar, y, c->bar_w, score, bar_max, style);
	/* A sum adds what the score gained, which grouped heads share. */
	draw_numbers(f, c, y, score, 2,
	             c->sum ? view_cache_step_added(v, sd->p, pos)
	                    : view_cache_step_weight(v, sd->p, pos),
	             STYLE_NORMAL);
}

/* What a cut section left out: "1,980 earlier evictions, from step 5";
 * SHORT, on a section header that has no "more" line: "1,980 earlier". */
static void more_words(const struct view *v, const struct side *sd, const struct row *row,
                       bool brief, char *buf, size_t size)
{
	char n[32];
	view_format_count(row->more, n);
	if (brief && row->more == view_cache_section_count(&v->app->list, row->sec))
		snprintf(buf, size, "%s not shown", n);
	else if (v->app->list.sort == SORT_SCORE || row->sec == SEC_OLD)
		snprintf(buf, size, brief ? "%s more" : "%s more with lower scores", n);
	else if (row->sec == SEC_RECENT)
		snprintf(buf, size, "%s older", n);
	else if (timeline_eviction(v->tl, sd->p, 0)->step == v->t)
		/* All at this step: a prompt compressed at its end. */
		snprintf(buf, size, brief ? "%s more" : "%s more evicted at this step", n);
	else if (brief)
		snprintf(buf, size, "%s earlier", n);
	else
		snprintf(buf, size, "%s earlier evictions, from step %d", n,
		         timeline_eviction(v->tl, sd->p, 0)->step);
}

static void draw_more(const struct view *v, struct frame *f, const struct side *sd, int y,
                      const struct row *row)
{
	char buf[96];
	more_words(v, sd, row, false, buf, sizeof buf);
	frame_put(f, sd->c.pos, y, frame_glyph(f, GLYPH_ELLIPSIS), STYLE_DIM);
	frame_text(f, sd->c.pos + 2, y, sd->c.w - 4, buf, STYLE_DIM);
}

/* The leading side's section header: its name, how many it holds and, where
 * the rule has one, its budget; and how many it hides when no row says so.
 * Returns the column after the last it wrote. */
static int draw_section_row(const struct view *v, struct frame *f, const struct side *sd, int y,
                            const struct row *row)
{
	const struct app_list *l = &v->app->list;
	const int limit =
	        row->sec == SEC_EVICTED
	                ? -1
	                : policy_region_budget(sd->p, &v->app->b, (enum policy_region)row->sec);
	const char *name =
	        row->sec == SEC_EVICTED ? "EVICTED" : policies[sd->p]->region_name[row->sec];
	const int w = sd->c.w - 2;
	int used = frame_text(f, sd->c.mark, y, w, name, section_style[row->sec]);
	char a[32], b2[32];
	if (limit >= 0 && view_cache_section_count(l, row->sec) > limit && v->t < v->app->b.prompt)
		/* Inside the prompt nothing is evicted yet. */
		used += frame_printf(f, sd->c.mark + used, y, w - used, STYLE_DIM, "  %s (then %s)",
		                     view_format_count(view_cache_section_count(l, row->sec), a),
		                     view_format_count(limit, b2));
	else if (limit >= 0)
		used += frame_printf(f, sd->c.mark + used, y, w - used, STYLE_DIM, "  %s of %s",
		                     view_format_count(view_cache_section_count(l, row->sec), a),
		                     view_format_count(limit, b2));
	else
		used += frame_printf(f, sd->c.mark + used, y, w - used, STYLE_DIM, "  %s",
		                     view_format_count(view_cache_section_count(l, row->sec), a));
	/* A section with no room for its "more" line says here what it hides. */
	if (row->more > 0 && used + 3 < w) {
		char buf[96];
		more_words(v, sd, row, true, buf, sizeof buf);
		frame_put(f, sd->c.mark + used + 2, y, frame_glyph(f, GLYPH_ELLIPSIS), STYLE_DIM);
		used += 4 + frame_text(f, sd->c.mark + used + 4, y, w - used - 4, buf, STYLE_DIM);
	}
	return sd->c.mark + used;
}

/* The other side, on a section header of the leading one: how many of the
 * section's tokens it keeps and how many it evicted ("1 kept, 1 evicted",
 * a zero left out). Nothing for a cache that keeps them all. */
static void draw_follow_section(const struct view *v, struct frame *f, const struct side *sd, int y,
                                int first, const struct row *row)
{
	if (policy_capacity(sd->p, &v->app->b) < 0)
		return;
	const struct app_list *l = &v->app->list;
	int kept = 0, gone = 0;
	for (int i = l->start[row->sec]; i < l->start[row->sec + 1]; i++) {
		if (timeline_region(v->tl, sd->p, v->t, l->pos[i]) == REGION_EVICTED)
			gone++;
		else
			kept++;
	}
	char a[32], b[32], buf[96] = "of these: ";
	view_format_count(kept, a);
	view_format_count(gone, b);
	const size_t len = strlen(buf);
	if (kept && gone)
		snprintf(buf + len, sizeof buf - len, "%s kept, %s evicted", a, b);
	else if (kept || gone)
		snprintf(buf + len, sizeof buf - len, "%s %s", kept ? a : b,
		         kept ? "kept" : "evicted");
	else
		return;
	/* The first row leaves room for the column labels; short of it the
	 * counts go without their "of these". */
	const int w = (y == first ? sd->c.score - 1 : sd->c.x + sd->c.w - 1) - sd->c.mark;
	const char *text = frame_text_width(buf, f->ascii) <= w ? buf : buf + len;
	frame_text(f, sd->c.mark, y, w, text, STYLE_DIM);
}

/* The columns' names; a sum that adds the kv group's mean weight (grouped
 * heads, a cache that evicts) says so. */
static void draw_column_labels(const struct view *v, struct frame *f, const struct side *sd, int y)
{
	const struct cols *c = &sd->c;
	if (c->sum) {
		const bool mean = sd->p != POLICY_FULL && heads_group(v->sc) > 1;
		frame_text(f, c->score, y, c->sum_w,
		           mean ? (c->narrow ? "  old+mean=score" : " old + kv mean = score")
		                : (c->narrow ? "  old+attn=score" : "   old + attn = score"),
		           STYLE_DIM);
		return;
	}
	frame_printf(f, c->score, y, SCORE_W, STYLE_DIM, "%*s", SCORE_W, "score");
	frame_printf(f, c->attn, y, ATTN_W, STYLE_DIM, "%*s", ATTN_W, "+attn");
}

/* The panel's title and what it holds, never cut: short of room, the bars'
 * scale goes first, then what it shares with H2O, then "N of M tokens"
 * becomes "N/M tokens". */
static void draw_title(const struct view *v, struct frame *f, const struct side *sd, int y,
                       double bar_max)
{
	const struct cache_summary *cs = v->t > 0 ? &timeline_summary(v->tl, v->t)->c[sd->p] : NULL;
	const int w = sd->c.w - 2, x = sd->c.mark;
	/* The walked panel says so before its title. */
	if (sd->lead && v->app->walk != WALK_NONE)
		frame_put(f, sd->c.x, y, frame_glyph(f, GLYPH_SELECTED), STYLE_SELECT);
	const int used = frame_text(f, x, y, w, policies[sd->p]->title, STYLE_LABEL);
	char tokens[32], kv[32], cap[32], n[32];
	view_format_count(cs ? cs->m.tokens : 0, tokens);
	view_format_count(cs ? cs->m.kv : 0, kv);
	const int capacity = policy_capacity(sd->p, &v->app->b);
	view_format_count(capacity, cap);
	char held[2][160], shared[64] = "", bars[32] = "";
	if (capacity < 0) {
		snprintf(held[0], sizeof held[0], "  %s %s, %s KV", tokens,
		         view_plural(cs ? cs->m.tokens : 0, "token", "tokens"), kv);
		snprintf(held[1], sizeof held[1], "%s", held[0]);
	} else if (cs && cs->m.tokens > capacity) {
		/* The prompt, read whole: the budget holds from its end. */
		snprintf(held[0], sizeof held[0], "  %s tokens, %s KV (then %s)", tokens, kv, cap);
		snprintf(held[1], sizeof held[1], "%s", held[0]);
	} else {
		snprintf(held[0], sizeof held[0], "  %s of %s %s, %s KV", tokens, cap,
		         view_plural(capacity, "token", "tokens"), kv);
		snprintf(held[1], sizeof held[1], "  %s/%s %s, %s KV", tokens, cap,
		         view_plural(capacity, "token", "tokens"), kv);
	}
	/* What it shares with H2O, unless it keeps everything anyway. */
	if (sd->p != POLICY_H2O && capacity >= 0 && cs)
		snprintf(shared, sizeof shared, ", %s shared with H2O",
		         view_format_count(cs->m.overlap_h2o, n));
	if (sd->p != POLICY_H2O && bar_max > 0.0)
		snprintf(bars, sizeof bars, "  bars to %.2f", bar_max);
	/* The longest that fits: each form drops one more piece. */
	const char *forms[4][3] = {
	        {held[0], shared, bars},
	        {held[0], shared, ""},
	        {held[0], "", ""},
	        {held[1], "", ""},
	};
	int k = 0;
	for (; k < 3; k++) {
		int width = used;
		for (int i = 0; i < 3; i++)
			width += frame_text_width(forms[k][i], f->ascii);
		if (width <= w)
			break;
	}
	int at = x + used;
	for (int i = 0; i < 3; i++)
		at += frame_text(f, at, y, x + w - at, forms[k][i], STYLE_DIM);
}

/* The largest score a kept token of either side draws on these rows: one
 * scale for both halves, so bars compare across the rule. */
static double rows_max(const struct view *v, const struct side *sides, const struct row *rows,
                       int nrows)
{
	double max = 0.0;
	for (int i = 0; i < nrows; i++) {
		if (rows[i].kind != ROW_TOKEN)
			continue;
		for (int k = 0; k < 2; k++) {
			const enum region r = timeline_region(v->tl, sides[k].p, v->t, rows[i].pos);
			if (r != REGION_OLD && r != REGION_RECENT)
				continue;
			const double s = view_cache_kept_score(v, sides[k].p, rows[i].pos);
			max = s > max ? s : max;
		}
	}
	return max;
}

/* A lesson's empty cache says what the panels will show: H2O's sections
 * and columns on its side, what the other policy keeps on the other. */
static void draw_legend(struct frame *f, const struct side *sides, struct rect r)
{
	const struct policy *h2o = policies[POLICY_H2O];
	const struct {
		const char *name, *what;
		enum frame_style style;
	} lines[] = {
	        {h2o->region_name[0], "old tokens, the top scores", STYLE_HEAVY},
	        {h2o->region_name[1], "the newest, kept whatever", STYLE_RECENT},
	        {"EVICTED", "gone for good, and why", STYLE_EVICTED},
	        {"score", "attention gathered so far", STYLE_DIM},
	        {"+attn", "this step's attention", STYLE_DIM},
	};
	const struct cols *c = &sides[0].c;
	const int w = c->w - 2;
	for (int i = 0; i < (int)(sizeof lines / sizeof lines[0]) && 2 + i < r.h; i++) {
		const int y = r.y + 2 + i;
		frame_text(f, c->mark, y, 8, lines[i].name, lines[i].style);
		frame_text(f, c->mark + 8, y, w - 8, lines[i].what, STYLE_NORMAL);
	}
	/* The other side: what its policy keeps, in its own words. */
	const struct cols *o = &sides[1].c;
	const char *at = policies[sides[1].p]->about;
	char line[128];
	for (int y = r.y + 2;
	     y < r.y + r.h && view_wrap_next(&at, o->w - 2, f->ascii, line, sizeof line); y++)
		frame_text(f, o->mark, y, o->w - 2, line, STYLE_DIM);
}

void panel_cache_draw(const struct view *v, struct frame *f, struct rect r)
{
	if (r.h < 2)
		return;
	/* Both halves get the narrower width, so equal scores draw equal
	 * bars on either side of the rule. */
	const int lw = v->split - r.x, rw = r.x + r.w - v->split - 1;
	const int w = lw < rw ? lw : rw;
	const enum policy_id lead = v->app->list.p;
	/* A lesson shows each score as its sum. */
	const bool lesson = v->sc->lesson;
	const struct side sides[2] = {
	        {POLICY_H2O, layout(r.x, w, v->n, lesson), lead == POLICY_H2O},
	        {v->app->compare, layout(v->split + 1, w, v->n, lesson), lead != POLICY_H2O},
	};
	for (int y = r.y; y < r.y + r.h; y++)
		frame_put(f, v->split, y, frame_glyph(f, GLYPH_VLINE), STYLE_BORDER);

	const int body = r.h - 1;
	struct row *rows = malloc((size_t)body * sizeof *rows);
	int *items = malloc(((size_t)v->n + 1) * sizeof *items);
	if (!rows || !items) {
		free(rows);
		free(items);
		frame_text(f, r.x + 1, r.y, r.w - 2, "out of memory", STYLE_WARN);
		return;
	}
	/* At step 0 there is nothing to list. */
	const int nrows = v->t == 0 ? 0
	                  : v->app->walk != WALK_NONE
	                          ? view_cache_walk_rows(v, rows, body)
	                          : view_cache_summary_rows(v, rows, body, items);
	const double bar_max = rows_max(v, sides, rows, nrows);
	int head_end = 0; /* where the leading side's first row's words end */
	for (int k = 0; k < 2; k++)
		draw_title(v, f, &sides[k], r.y, bar_max);
	for (int i = 0; i < nrows; i++) {
		const int y = r.y + 1 + i;
		const struct row *row = &rows[i];
		for (int k = 0; k < 2; k++) {
			const struct side *sd = &sides[k];
			if (row->kind == ROW_TOKEN) {
				draw_token_row(v, f, sd, y, row->pos, bar_max);
				mark_selected(v, f, sd, y, row->pos);
			} else if (row->kind == ROW_SECTION) {
				if (sd->lead) {
					const int end = draw_section_row(v, f, sd, y, row);
					if (i == 0)
						head_end = end;
				} else
					draw_follow_section(v, f, sd, y, r.y + 1, row);
			} else if (sd->lead) {
				draw_more(v, f, sd, y, row);
			}
		}
	}
	/* Column labels on the first row of each half; the leading half's
	 * give way to its section's count of what it hides, the other half's
	 * naming the same columns. */
	for (int k = 0; k < 2 && nrows > 0; k++)
		if (!(sides[k].lead && head_end > sides[k].c.score - 1))
			draw_column_labels(v, f, &sides[k], r.y + 1);
	if (v->t == 0)
		frame_text(f, sides[0].c.mark, r.y + 1, sides[0].c.w - 2,
		           "(empty: no token has arrived)", STYLE_DIM);
	if (v->t == 0 && v->sc->lesson)
		draw_legend(f, sides, r);
	free(rows);
	free(items);
}

struct app_spot view_cache_pick(const struct view *v, struct rect r, int row, int col)
{
	const enum policy_id lead = v->app->list.p;
	struct app_spot spot = {.kind = SPOT_PANEL, .p = lead, .pos = -1, .step = -1};
	if (r.h < 2 || v->t == 0)
		return spot;
	/* The halves as panel_cache_draw lays them out. */
	const int lw = v->split - r.x, rw = r.x + r.w - v->split - 1;
	const int w = lw < rw ? lw : rw;
	int side = -1;
	if (col >= r.x && col < r.x + w)
		side = 0;
	else if (col > v->split && col <= v->split + w)
		side = 1;
	if (side < 0)
		return spot;
	spot.p = side == 0 ? POLICY_H2O : v->app->compare;
	const int i = row - r.y - 1, body = r.h - 1;
	if (i < 0 || i >= body)
		return spot;
	struct row *rows = malloc((size_t)body * sizeof *rows);
	int *items = malloc(((size_t)v->n + 1) * sizeof *items);
	if (rows && items) {
		const int nrows = v->app->walk != WALK_NONE
		                          ? view_cache_walk_rows(v, rows, body)
		                          : view_cache_summary_rows(v, rows, body, items);
		if (i < nrows && rows[i].kind == ROW_TOKEN) {
			spot.kind = SPOT_TOKEN;
			spot.pos = rows[i].pos;
		}
	}
	free(rows);
	free(items);
	return spot;
}
