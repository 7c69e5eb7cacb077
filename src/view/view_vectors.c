/*
 * view_vectors: the arithmetic of one step of H2O's cache, in numbers (v).
 *
 * Lessons 5 and 6 speak of a query meeting each cached key and of K and V
 * rows that go together; this view shows them. For the shown head at the
 * shown step: the query row q of the new token, then a row per position
 * H2O's cache attended (before this step's eviction) with its key and
 * value rows, q.k, the logit (scale x q.k), the softmax weight, and last
 * the output, the weighted sum of the value rows. Every number is the
 * engine's: the rows are the scene's (the ones the engine copied), the
 * logits engine_logit's, the weights and the output the step record's;
 * q.k is the engine's logit divided by its scale. A scene that gives its
 * attention instead of q and k shows the given weights with the value
 * rows and the output.
 */
#include <stdio.h>

#include "view_panels.h"

#define VEC_CELL 6 /* columns of one number: " -0.50" */

/* DIM numbers of ROW from column X, at most SHOWN of them, "…" after
 * them when there are more; Returns the columns taken. */
static int put_row(struct frame *f, int x, int y, int w, const double *row, int dim, int shown,
                   enum frame_style style)
{
	int used = frame_text(f, x, y, w, "[", STYLE_DIM);
	for (int i = 0; i < shown && i < dim; i++)
		used += frame_printf(f, x + used, y, w - used, style, "%6.2f", row[i]);
	if (shown < dim)
		used += frame_text(f, x + used, y, w - used, f->ascii ? " ~" : " \u2026",
		                   STYLE_DIM);
	used += frame_text(f, x + used, y, w - used, " ]", STYLE_DIM);
	return used;
}

/* The columns put_row takes for SHOWN of DIM numbers. */
static int row_width(int dim, int shown)
{
	return 1 + VEC_CELL * shown + (shown < dim ? 2 : 0) + 2;
}

/* The rows to show when COUNT do not fit in ROWS: the largest weights,
 * a tie keeping the lower position, listed in position order, into PICK.
 * Returns how many. */
#define VEC_MAX_ROWS 128
static int pick_rows(const double *w, int count, int rows, int *pick)
{
	if (rows > VEC_MAX_ROWS)
		rows = VEC_MAX_ROWS;
	if (count <= rows) {
		for (int i = 0; i < count; i++)
			pick[i] = i;
		return count;
	}
	int k = 0;
	for (; k < rows; k++) {
		int best = -1;
		for (int i = 0; i < count; i++) {
			bool taken = false;
			for (int j = 0; j < k && !taken; j++)
				taken = pick[j] == i;
			if (!taken && (best < 0 || w[i] > w[best]))
				best = i;
		}
		pick[k] = best;
	}
	for (int i = 1; i < k; i++)
		for (int j = i; j > 0 && pick[j - 1] > pick[j]; j--) {
			const int t = pick[j];
			pick[j] = pick[j - 1];
			pick[j - 1] = t;
		}
	return k;
}

static bool evicted_now(const struct cache_record *c, int pos)
{
	for (int i = 0; i < c->n_evicted; i++)
		if (c->evicted[i] == pos)
			return true;
	return false;
}

void panel_vectors_draw(const struct view *v, struct frame *f, struct rect r)
{
	const struct app *app = v->app;
	const struct scene *hs = &app->views[app->head];
	const bool qk = hs->q && hs->k;
	char title[96];
	snprintf(title, sizeof title, "vectors of step %d: H2O's cache, %s", v->t,
	         qk ? "q.k, softmax, weighted sum of v" : "the given weights and v");
	if (r.h < 1)
		return;
	view_rule(f, r.x, r.y, r.w, title);
	const int x = r.x + 1, w = r.w - 2;
	if (r.h < 4)
		return;
	if (!v->rec) {
		frame_text(f, x, r.y + 1, w,
		           "Step 0: nothing has arrived. Step forward: each step's query meets the "
		           "keys held.",
		           STYLE_NORMAL);
		return;
	}
	const struct cache_record *c = &v->rec->c[POLICY_H2O];
	const int dim = hs->dim, q_pos = v->t - 1;
	/* The mark, the position (as wide as the scene's last), the token. */
	int pw = 3;
	for (int n = v->n - 1; n >= 1000; n /= 10)
		pw++;
	const int lead = 2 + pw + 1 + 8;
	/* Every number of the rows, q.k and the logit when they fit; on a
	 * narrow screen the logit goes first (the header says how it follows
	 * from q.k), then q.k, so that a key and a value row stay whole; then
	 * q.k comes back and the rows lose their last numbers. */
	const int rows_w = (qk ? 1 : 0) + (hs->v ? 1 : 0);
	int shown = dim;
	bool show_logit = qk, show_dot = qk;
#define VEC_FITS()                                                                                 \
	(lead + rows_w * (row_width(dim, shown) + 1) + (show_dot ? 8 : 0) + (show_logit ? 8 : 0) + \
	         8 <=                                                                              \
	 w)
	if (!VEC_FITS())
		show_logit = false;
	if (!VEC_FITS())
		show_dot = false;
	if (!VEC_FITS()) {
		show_dot = qk;
		while (shown > 1 && !VEC_FITS())
			shown--;
	}
#undef VEC_FITS
	int y = r.y + 1;
	/* The query, and the arithmetic of the weights (on a line of its own
	 * when the query's leaves it no room). */
	int used = 0;
	if (qk) {
		used = frame_text(f, x, y, w, "q ", STYLE_LABEL);
		used += put_row(f, x + used, y, w - used, hs->q + (size_t)q_pos * (size_t)dim, dim,
		                shown, STYLE_NEW);
		used += frame_printf(f, x + used, y, w - used, STYLE_DIM, " of ");
	}
	used += frame_text(f, x + used, y, w - used, v->sc->text[q_pos], STYLE_NEW);
	char how[128];
	if (qk)
		snprintf(how, sizeof how, "  logit = %.4g q.k  weight = e^(logit %c %.2f) / %.2f",
		         hs->scale, c->max < 0 ? '+' : '-', c->max < 0 ? -c->max : c->max, c->sum);
	else
		snprintf(how, sizeof how,
		         "  the scene gives the weights; H2O shares 1 among what it holds");
	if (used + frame_text_width(how, f->ascii) > w && r.h >= 8) {
		y++;
		used = 0;
	}
	frame_text(f, x + used, y, w - used, how, STYLE_DIM);
	y++;
	/* The heading of the columns. */
	used = frame_printf(f, x, y, w, STYLE_LABEL, "  %*s %-8s", pw, "pos", "token");
	const int rw = row_width(dim, shown);
	if (qk)
		used += frame_printf(f, x + used, y, w - used, STYLE_LABEL, "%-*s", rw + 1, "k");
	if (hs->v)
		used += frame_printf(f, x + used, y, w - used, STYLE_LABEL, "%-*s", rw + 1, "v");
	frame_printf(f, x + used, y, w - used, STYLE_LABEL, "%s%s weight",
	             show_dot ? "    q.k " : "", show_logit ? "  logit " : "");
	y++;
	/* A row per attended position; the last row is the output's. */
	const int room = r.y + r.h - y - 1;
	int pick[VEC_MAX_ROWS];
	const int count = pick_rows(c->attn, c->n_attended, room - (c->n_attended > room), pick);
	double weights_shown = 0;
	for (int i = 0; i < count; i++, y++) {
		const int j = pick[i], pos = c->attended[j];
		const bool gone = evicted_now(c, pos);
		const enum frame_style st = pos == q_pos ? STYLE_NEW
		                            : gone       ? STYLE_GONE
		                                         : STYLE_NORMAL;
		const uint32_t mark = pos == q_pos ? frame_glyph(f, GLYPH_NEW)
		                      : gone       ? frame_glyph(f, GLYPH_GONE)
		                                   : ' ';
		frame_put(f, x, y, mark, st);
		used = 2 + frame_printf(f, x + 2, y, w - 2, STYLE_DIM, "%*d ", pw, pos);
		used += frame_text(f, x + used, y, 8, v->sc->text[pos], st);
		used = lead;
		if (qk)
			used += put_row(f, x + used, y, w - used, hs->k + (size_t)pos * (size_t)dim,
			                dim, shown, STYLE_NORMAL) +
			        1;
		if (hs->v)
			used += put_row(f, x + used, y, w - used, hs->v + (size_t)pos * (size_t)dim,
			                dim, shown, STYLE_NORMAL) +
			        1;
		const double logit = qk ? engine_logit(hs, q_pos, pos) : 0;
		if (show_dot)
			used += frame_printf(f, x + used, y, w - used, STYLE_NORMAL, "%7.3f ",
			                     logit / hs->scale);
		if (show_logit)
			used += frame_printf(f, x + used, y, w - used, STYLE_NORMAL, "%7.3f ",
			                     logit);
		frame_printf(f, x + used, y, w - used, view_heat_style(c->attn[j]), "%7.4f",
		             c->attn[j]);
		weights_shown += c->attn[j];
	}
	if (count < c->n_attended) {
		frame_printf(f, x, y, w, STYLE_DIM,
		             "%s %d more, weight %.4f: the %d largest weights shown of %d",
		             f->ascii ? "~" : "\u2026", c->n_attended - count, 1.0 - weights_shown,
		             count, c->n_attended);
		y++;
	}
	/* The output: the weights times the value rows, added up. */
	if (!hs->v) {
		frame_text(f, x, y, w, "no value rows in this scene: no output to show", STYLE_DIM);
		return;
	}
	used = frame_text(f, x, y, w, "out = sum of weight x v ", STYLE_LABEL);
	if (c->out)
		used += put_row(f, x + used, y, w - used, c->out, dim, shown, STYLE_HEAVY);
	if (c->m.has_out)
		frame_printf(f, x + used, y, w - used, STYLE_DIM, "  out err %.4f", c->m.out_err);
}
