/*
 * view_model: a model scene's text and what eviction costs it (t).
 *
 * In place of the heat rows: the real drop at this step (drop.h: the model
 * run once per policy, every layer's cache evicted by it). The rule says
 * so; the first line gives the perplexity of the text so far under the
 * full cache, under H2O and under the compared policy; then the text so
 * far, its newest lines, each token that H2O made at least e times less
 * likely than the full cache did marked; the last line what each would
 * say next, or when generating, where the continuations part.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "h2o/drop.h"
#include "view_panels.h"

/* A token this many nats less likely under the policy than under the full
 * cache is marked: e times less likely. */
#define MODEL_MARK_NATS 1.0

/* How much less likely policy P made token I (1 .. n - 1) than the full
 * cache did, in nats. */
static double drop_of(const struct drop_result *r, enum policy_id p, int i)
{
	return r->p[POLICY_FULL].logprob[i - 1] - r->p[p].logprob[i - 1];
}

/* The perplexity words of policy P over predictions 0 .. UPTO - 1. */
static int put_ppl(struct frame *f, int x, int y, int w, const struct drop_result *r,
                   enum policy_id p, int upto)
{
	const double ppl = drop_perplexity(r, p, 0, upto);
	const double full = drop_perplexity(r, POLICY_FULL, 0, upto);
	if (p == POLICY_FULL)
		return frame_printf(f, x, y, w, STYLE_NORMAL, "full %.2f", ppl);
	/* A change that rounds to nothing has no sign: "-0.0%" would say the
	 * policy did better than the full cache by nothing. */
	const double change = 100.0 * (ppl / full - 1.0);
	const bool none = fabs(change) < 0.05;
	return frame_printf(f, x, y, w, p == POLICY_H2O ? STYLE_HEAVY : STYLE_NORMAL,
	                    "%s %.2f (%s%.1f%%)", policies[p]->name, ppl,
	                    none         ? ""
	                    : change > 0 ? "+"
	                                 : "-",
	                    none ? 0.0 : fabs(change));
}

/* Token I's text: the scene's (the text, or the full cache's own
 * continuation). */
static const char *token_text(const struct view *v, int i)
{
	return v->sc->text[i];
}

/* Whether a word ends after token I: the next starts with a space, or is
 * not a letter or digit, or there is none. */
static bool word_ends(const struct view *v, int i)
{
	if (i + 1 >= v->t)
		return true;
	const unsigned char c = (unsigned char)token_text(v, i + 1)[0];
	return !(c >= 0x80 || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'));
}

/* Token I's marks: H2O made it e times less likely. */
static bool token_marked(const struct view *v, int i)
{
	const struct drop_result *r = v->app->drop;
	return i > 0 && i < r->given && drop_of(r, POLICY_H2O, i) >= MODEL_MARK_NATS;
}

/* The columns of the word that starts at token I (its tokens up to the one
 * after which a word ends, a mark after it included). */
static int word_width(const struct view *v, int i, bool ascii)
{
	int width = 0;
	bool marked = false;
	for (int j = i; j < v->t && strcmp(token_text(v, j), "\n") != 0; j++) {
		width += frame_text_width(token_text(v, j), ascii);
		marked = marked || token_marked(v, j);
		if (word_ends(v, j))
			break;
	}
	return width + (marked ? 1 : 0);
}

/* The text's tokens 0 .. T - 1 wrapped into W columns from line FIRST on,
 * at most H lines from Y; returns the lines the whole text takes. Lines
 * break between words (inside one only when it is wider than W), the space
 * before a word that starts a line dropped. A word with a token H2O made e
 * times less likely is marked after its end. */
static int put_text(const struct view *v, struct frame *f, bool ascii, int x, int y, int w, int h,
                    int first, const int *pick, int *picked)
{
	const bool draw = f != NULL;
	const uint32_t mark = ascii ? 'v' : 0x25BC; /* ▼ */
	int line = 0, col = 0;
	bool word_marked = false;
	for (int i = 0; i < v->t; i++) {
		const char *s = token_text(v, i);
		if (strcmp(s, "\n") == 0) {
			line++, col = 0;
			word_marked = false;
			continue;
		}
		const bool marked = token_marked(v, i);
		word_marked = word_marked || marked;
		const bool put_mark = word_marked && word_ends(v, i);
		if (col > 0 && (i == 0 || word_ends(v, i - 1))) {
			const int ww = word_width(v, i, ascii);
			if (ww <= w && col + ww > w)
				line++, col = 0;
		}
		if (col == 0 && i > 0 && s[0] == ' ' && s[1] != '\0' &&
		    strcmp(token_text(v, i - 1), "\n") != 0)
			s++; /* the space the line break stands for */
		int tw = frame_text_width(s, ascii) + (put_mark ? 1 : 0);
		tw = tw < w ? tw : w;
		if (col > 0 && col + tw > w)
			line++, col = 0;
		/* PICK (a line, a column of the text): the token drawn there. */
		if (pick && line == pick[0] && pick[1] >= col && pick[1] < col + tw)
			*picked = i;
		if (draw && line >= first && line - first < h) {
			const int yy = y + line - first;
			const enum frame_style st = app_selects(v->app, i) ? STYLE_SELECT
			                            : i == v->t - 1        ? STYLE_NEW
			                            : marked               ? STYLE_GONE
			                                                   : STYLE_NORMAL;
			int used = frame_text(f, x + col, yy, w - col, s, st);
			if (put_mark && col + used < w)
				frame_put(f, x + col + used, yy, mark, STYLE_GONE);
		}
		col += tw;
		if (word_ends(v, i))
			word_marked = false;
	}
	return line + 1;
}

/* The last line: what each would say next, or where generating parted. */
static void put_next(const struct view *v, struct frame *f, int x, int y, int w)
{
	const struct app *app = v->app;
	const struct drop_result *r = app->drop;
	const int t = v->t - 1; /* the prediction after step v->t */
	int used = 0;
	if (r->generate) {
		const int change = drop_first_change(r, POLICY_H2O);
		if (change < 0 || change + 1 >= r->n) {
			frame_printf(
			        f, x, y, w, STYLE_DIM,
			        "generating: H2O's continuation is the full cache's throughout");
			return;
		}
		used = frame_printf(f, x, y, w, STYLE_LABEL,
		                    "H2O's words from step %d on: ", change + 1);
		for (int i = change + 1; i < r->n && used < w; i++)
			used += frame_text(f, x + used, y, w - used,
			                   app->vocab[r->p[POLICY_H2O].fed[i]], STYLE_HEAVY);
		return;
	}
	if (t < 0 || t >= r->n) {
		frame_printf(f, x, y, w, STYLE_DIM, "the next token: step forward first");
		return;
	}
	used = frame_printf(f, x, y, w, STYLE_LABEL, "next: ");
	const enum policy_id show[2] = {POLICY_FULL, POLICY_H2O};
	for (int k = 0; k < 2 && used < w; k++) {
		const struct drop_policy *dp = &r->p[show[k]];
		used += frame_printf(f, x + used, y, w - used, STYLE_NORMAL, "%s%s \u201c",
		                     k ? " \u00b7 " : "", policies[show[k]]->name);
		used += frame_text(f, x + used, y, w - used, app->vocab[dp->top[t]],
		                   k ? STYLE_HEAVY : STYLE_NORMAL);
		used += frame_printf(f, x + used, y, w - used, STYLE_NORMAL, "\u201d %.0f%%",
		                     100.0 * exp(dp->top_logprob[t]));
	}
	int marked = 0;
	for (int i = 1; i < v->t; i++)
		marked += drop_of(r, POLICY_H2O, i) >= MODEL_MARK_NATS;
	if (used < w)
		frame_printf(f, x + used, y, w - used, STYLE_DIM,
		             "   %s: %d of %d tokens e times less likely under H2O",
		             f->ascii ? "v" : "\u25bc", marked, v->t > 1 ? v->t - 1 : 0);
}

void panel_model_draw(const struct view *v, struct frame *f, struct rect r)
{
	const struct app *app = v->app;
	const struct drop_result *d = app->drop;
	view_rule(f, r.x, r.y, r.w, "the model itself: every layer's cache evicted by each policy");
	if (r.h < 2 || !d)
		return;
	const int x = r.x + 1, w = r.w - 2;
	const int upto = v->t - 1 > 0 ? v->t - 1 : 0; /* predictions of known tokens */
	int used = 0;
	if (d->generate) {
		/* The text is the full cache's own; H2O's parts from it. */
		const int change = drop_first_change(d, POLICY_H2O);
		used = frame_printf(
		        f, x, r.y + 1, w, STYLE_LABEL,
		        "writing: after the %d given tokens the text is the full cache's; ",
		        d->given);
		if (change >= 0 && change + 1 < d->n)
			frame_printf(f, x + used, r.y + 1, w - used, STYLE_HEAVY,
			             "H2O's parts from it at step %d (last line)", change + 1);
		else
			frame_printf(f, x + used, r.y + 1, w - used, STYLE_DIM,
			             "H2O's is the same");
	} else {
		used = frame_printf(f, x, r.y + 1, w, STYLE_LABEL, "perplexity so far: ");
	}
	if (d->generate) {
		/* said above */
	} else if (upto == 0) {
		frame_printf(f, x + used, r.y + 1, w - used, STYLE_DIM, "no prediction yet");
	} else {
		used += put_ppl(f, x + used, r.y + 1, w - used, d, POLICY_FULL, upto);
		used += frame_printf(f, x + used, r.y + 1, w - used, STYLE_NORMAL, "  ");
		used += put_ppl(f, x + used, r.y + 1, w - used, d, POLICY_H2O, upto);
		if (app->compare != POLICY_FULL && app->compare != POLICY_H2O) {
			used += frame_printf(f, x + used, r.y + 1, w - used, STYLE_NORMAL, "  ");
			put_ppl(f, x + used, r.y + 1, w - used, d, app->compare, upto);
		}
	}
	const int text_h = r.h - 3;
	if (text_h > 0) {
		const int lines = put_text(v, NULL, f->ascii, x, r.y + 2, w, text_h, 0, NULL, NULL);
		const int first = lines > text_h ? lines - text_h : 0;
		put_text(v, f, f->ascii, x, r.y + 2, w, text_h, first, NULL, NULL);
	}
	if (r.h >= 3)
		put_next(v, f, x, r.y + r.h - 1, w);
}

struct app_spot view_model_pick(const struct view *v, const struct frame *f, struct rect r, int row,
                                int col)
{
	struct app_spot spot = {.kind = SPOT_NONE, .p = POLICY_H2O, .pos = -1, .step = -1};
	const int x = r.x + 1, w = r.w - 2, text_h = r.h - 3;
	if (!v->app->drop || text_h <= 0 || row < r.y + 2 || row >= r.y + 2 + text_h)
		return spot;
	/* The text's lines as panel_model_draw lays them out: its last
	 * TEXT_H. */
	const int lines = put_text(v, NULL, f->ascii, x, r.y + 2, w, text_h, 0, NULL, NULL);
	const int first = lines > text_h ? lines - text_h : 0;
	const int at[2] = {row - (r.y + 2) + first, col - x};
	int picked = -1;
	put_text(v, NULL, f->ascii, x, r.y + 2, w, text_h, first, at, &picked);
	if (picked >= 0) {
		spot.kind = SPOT_TOKEN;
		spot.pos = picked;
	}
	return spot;
}
