/*
 * view_heads: every attention head at a glance.
 *
 * One row per head, one column per position: what that head's H2O cache
 * holds after this step (heavy, recent, evicted), with the head's attention
 * recall beside the row. A last row counts, per position, how many heads
 * keep it, so a token every head keeps stands apart from one only a single
 * head does. The row spans every position that has arrived: on a long
 * scene a column stands for several, showing the most a head keeps there.
 */
#include <stdio.h>
#include <string.h>

#include "h2o/heads.h"
#include "view_panels.h"

#define NAME_W   14 /* "12 local     " */
#define RECALL_W 8

/* The state a column shows for head TL over positions [from, to): heavy
 * if any of them is a heavy hitter, else recent if any is recent, else
 * evicted; NONE when none has arrived. */
static enum region column_region(const struct timeline *tl, int t, int from, int to)
{
	enum region best = REGION_NONE;
	for (int pos = from; pos < to; pos++) {
		const enum region r = timeline_region(tl, POLICY_H2O, t, pos);
		if (r == REGION_OLD)
			return r;
		if (r == REGION_RECENT || (r == REGION_EVICTED && best == REGION_NONE))
			best = r;
	}
	return best;
}

/* The heads FIRST .. FIRST + COUNT - 1 (a layer) in R: a row each, a column
 * per position, what its H2O cache holds; the cursor's row marked. */
static void draw_positions(const struct view *v, struct frame *f, struct rect r, int first,
                           int count)
{
	const struct app *app = v->app;
	const int x0 = r.x + 1 + NAME_W, avail = r.w - 2 - NAME_W - RECALL_W - 1;
	if (r.h < 4 || avail < 4)
		return;
	/* Every position that has arrived, a column each or in even buckets. */
	const int shown = v->t > 0 ? v->t : 1;
	const int cols = avail < shown ? avail : shown;
	int y = r.y;
	char label[128];
	char where[96] = "";
	if (count < app->heads)
		snprintf(where, sizeof where, "layer %d: ", first / count + 1);
	snprintf(label, sizeof label, "%s%d %s by position: %s heavy  %s recent  %s evicted%s",
	         where, count, view_plural(count, "head", "heads"), f->ascii ? "#" : "\u2588",
	         f->ascii ? "+" : "\u2592", f->ascii ? "." : "\u00b7",
	         cols < shown ? "  (a column holds several positions)" : "");
	frame_text(f, r.x + 1, y, r.w - 2, label, STYLE_LABEL);
	y++;
	/* Every ten columns, the first position of that column; the
	 * selected token's column marked (the numbers keep clear of it). */
	const int sel = app->selected >= 0 && app->selected < v->t
	                        ? (int)((long)app->selected * cols / shown)
	                        : -1;
	for (int c = 0; c < cols; c += 10) {
		char num[16];
		const int len = snprintf(num, sizeof num, "%d", (int)((long)c * shown / cols));
		if (sel < c || sel > c + len)
			frame_text(f, x0 + c, y, cols - c, num, STYLE_DIM);
	}
	if (sel >= 0)
		frame_put(f, x0 + sel, y, frame_glyph(f, GLYPH_MARKER), STYLE_SELECT);
	frame_text(f, x0 + cols + 1, y, RECALL_W, "recall", STYLE_DIM);
	y++;

	const int rows = r.h - 3; /* title, numbers, the count row */
	const int at = app->cursor - first;
	const int top = first + (at >= rows ? at - rows + 1 : 0);
	for (int h = top; h < first + count && y < r.y + 2 + rows; h++, y++) {
		const struct timeline *tl = app->tls[h];
		/* Heads count from 1, as the header's "head 2/8" does. */
		frame_printf(f, r.x + 1, y, NAME_W - 1, h == app->cursor ? STYLE_SELECT : STYLE_DIM,
		             "%2d %s", h - first + 1, heads_name(app->scene, h));
		if (timeline_built(tl) < v->t) {
			/* Its build has not reached this step yet. */
			frame_text(f, x0, y, cols, "computing\u2026", STYLE_DIM);
			continue;
		}
		for (int c = 0; c < cols && v->t > 0; c++) {
			const int from = (int)((long)c * shown / cols);
			const int to = (int)((long)(c + 1) * shown / cols);
			const enum region reg =
			        column_region(tl, v->t, from, to > from ? to : from + 1);
			uint32_t glyph = ' ';
			enum frame_style style = STYLE_NORMAL;
			if (reg == REGION_OLD)
				glyph = f->ascii ? '#' : 0x2588, style = STYLE_HEAVY;
			else if (reg == REGION_RECENT)
				glyph = f->ascii ? '+' : 0x2592, style = STYLE_RECENT;
			else if (reg == REGION_EVICTED)
				glyph = f->ascii ? '.' : 0x00B7, style = STYLE_EVICTED;
			frame_put(f, x0 + c, y, glyph, style);
		}
		if (v->t > 0)
			frame_printf(f, x0 + cols + 1, y, RECALL_W, STYLE_NORMAL, "%.4f",
			             timeline_summary(tl, v->t)->c[POLICY_H2O].m.attn_recall);
	}
	/* How many heads keep something in each column: a digit, '+' past
	 * nine. */
	y = r.y + r.h - 1;
	frame_text(f, r.x + 1, y, NAME_W - 1, "kept by", STYLE_LABEL);
	for (int c = 0; c < cols && v->t > 0; c++) {
		const int from = (int)((long)c * shown / cols);
		const int to = (int)((long)(c + 1) * shown / cols);
		int kept = 0;
		for (int h = first; h < first + count; h++) {
			if (timeline_built(app->tls[h]) < v->t)
				continue;
			const enum region reg =
			        column_region(app->tls[h], v->t, from, to > from ? to : from + 1);
			kept += reg == REGION_OLD || reg == REGION_RECENT;
		}
		frame_put(f, x0 + c, y, kept > 9 ? '+' : (uint32_t)('0' + kept),
		          kept == count ? STYLE_HEAVY
		          : kept == 1   ? STYLE_WARN
		                        : STYLE_DIM);
	}
	frame_text(f, x0 + cols + 1, y, RECALL_W, "heads", STYLE_DIM);
}

/* The grid's columns: a label of LABEL_W, then a cell of CELL_W (a glyph
 * and the recall, "▓0.93") or, when the heads of a layer do not fit so,
 * of one glyph; a gap before each cell, a rule where a kv group starts. */
#define LABEL_W 6 /* "» L12 " */

/* The figures of policy P over the whole model, "H2O 48 tokens, 384 KV
 * err 0.1234  cos 0.9876  recall 0.9512", into BUF. */
static int total_part(char *buf, size_t size, const char *name, const struct step_metrics *m,
                      bool figures)
{
	char tokens[32], kv[32];
	int len = snprintf(buf, size, "%s %s %s, %s KV", name, view_format_count(m->tokens, tokens),
	                   view_plural(m->tokens, "token", "tokens"), view_format_count(m->kv, kv));
	if (figures && m->has_out)
		len += snprintf(buf + len, size - (size_t)len, "  err %.4f  cos %.4f", m->out_err,
		                m->out_cos);
	if (figures)
		len += snprintf(buf + len, size - (size_t)len, "  recall %.4f", m->attn_recall);
	return len;
}

/* The whole model's figures on rows Y and Y + 1. */
static void draw_totals(const struct view *v, struct frame *f, int x, int y, int w)
{
	const struct app *app = v->app;
	char buf[320];
	if (v->t == 0) {
		frame_text(f, x, y, w, "whole model: nothing yet at step 0", STYLE_DIM);
		return;
	}
	int len = snprintf(buf, sizeof buf, "whole model  ");
	total_part(buf + len, sizeof buf - (size_t)len, "H2O", &app->overview_total[POLICY_H2O],
	           true);
	frame_text(f, x, y, w, buf, STYLE_NORMAL);
	len = snprintf(buf, sizeof buf, "             ");
	if (app->compare != POLICY_FULL) {
		len += total_part(buf + len, sizeof buf - (size_t)len, policies[app->compare]->name,
		                  &app->overview_total[app->compare], true);
		len += snprintf(buf + len, sizeof buf - (size_t)len, "   ");
	}
	len += total_part(buf + len, sizeof buf - (size_t)len, "full",
	                  &app->overview_total[POLICY_FULL], false);
	const struct scene *sc = app->scene;
	if (app->overview_heads < app->heads)
		snprintf(buf + len, sizeof buf - (size_t)len, "  (%d of %d %s computed)",
		         app->overview_heads, app->heads, view_plural(app->heads, "head", "heads"));
	else if (heads_group(sc) > 1)
		snprintf(buf + len, sizeof buf - (size_t)len, "  (a kv head's cache counted once)");
	frame_text(f, x, y + 1, w, buf, STYLE_DIM);
}

/* Where the overview drawn in R puts things: the grid's cells and rows
 * (the columns LEFT .. LEFT + NCOLS - 1 of a layer's heads, CELL_W wide,
 * and the layers TOP .. TOP + NROWS - 1), and the cursor's layer by
 * position below them (POSITIONS; no rows when there is no room). */
struct overview_geom {
	int per, layers, cell_w, ncols, left, nrows, top;
	struct rect positions;
};

static bool overview_geom(const struct view *v, struct rect r, struct overview_geom *g)
{
	const struct app *app = v->app;
	const int w = r.w - 2;
	if (r.h < 6 || w < 40)
		return false;
	g->per = heads_per_layer(app->scene);
	g->layers = app->heads / g->per;
	const int per = g->per, layers = g->layers;
	const int cur_layer = app->cursor / per, cur_head = app->cursor % per;
	/* Cells with the recall while every head of a layer fits so, else a
	 * glyph each; past that, the columns around the cursor. */
	const int room = w - LABEL_W;
	g->cell_w = per * 6 <= room ? 5 : 1;
	g->ncols = room / (g->cell_w + 1);
	g->ncols = g->ncols < per ? g->ncols : per;
	g->left = 0;
	if (g->ncols < per) {
		g->left = cur_head - g->ncols / 2;
		g->left = g->left < 0 ? 0 : g->left > per - g->ncols ? per - g->ncols : g->left;
	}
	/* Title, column numbers, the layers, two rows of totals, the cursor's
	 * line; below, when there is room, the cursor's layer by position. */
	const int grid_rows = r.h - 5;
	g->nrows = layers < grid_rows ? layers : grid_rows;
	g->top = 0;
	if (g->nrows < layers) {
		g->top = cur_layer - g->nrows / 2;
		g->top = g->top < 0 ? 0 : g->top > layers - g->nrows ? layers - g->nrows : g->top;
	}
	const int y = r.y + 2 + g->nrows + 2 + 2;
	g->positions = (struct rect){r.x, y, r.w, r.y + r.h - y >= 4 ? r.y + r.h - y : 0};
	return true;
}

void panel_overview_draw(const struct view *v, struct frame *f, struct rect r)
{
	const struct app *app = v->app;
	const struct scene *sc = app->scene;
	const int x0 = r.x + 1, w = r.w - 2;
	struct overview_geom g;
	if (!overview_geom(v, r, &g))
		return;
	const int per = g.per, layers = g.layers, group = heads_group(sc);
	const int cur_layer = app->cursor / per, cur_head = app->cursor % per;
	const int cell_w = g.cell_w, ncols = g.ncols, left = g.left, nrows = g.nrows, top = g.top;

	int y = r.y;
	char buf[256];
	/* What of the grid is off screen comes first: it must not be cut. */
	int len = 0;
	if (nrows < layers || ncols < per) {
		len += snprintf(buf, sizeof buf, "shown: ");
		if (nrows < layers)
			len += snprintf(buf + len, sizeof buf - (size_t)len, "layers %d-%d of %d%s",
			                top + 1, top + nrows, layers, ncols < per ? ", " : "");
		if (ncols < per)
			len += snprintf(buf + len, sizeof buf - (size_t)len, "heads %d-%d of %d",
			                left + 1, left + ncols, per);
		len += snprintf(buf + len, sizeof buf - (size_t)len, " (arrows scroll)   ");
	}
	snprintf(buf + len, sizeof buf - (size_t)len,
	         "%d layer%s x %d head%s, recall at step %d; glyph: attention lost%s", layers,
	         layers == 1 ? "" : "s", per, per == 1 ? "" : "s", v->t,
	         group > 1 ? (f->ascii ? "; | parts kv groups" : "; \u2502 parts kv groups") : "");
	frame_text(f, x0, y++, w, buf, STYLE_LABEL);

	/* Where cell C (0-based in the layer) starts. */
#define CELL_X(c) (x0 + LABEL_W + ((c)-left) * (cell_w + 1) + 1)
	frame_text(f, x0, y, LABEL_W, "layer", STYLE_DIM);
	for (int c = left; c < left + ncols; c++) {
		if (c == cur_head)
			frame_put(f, CELL_X(c), y, frame_glyph(f, GLYPH_MARKER), STYLE_SELECT);
		if (cell_w > 1)
			frame_printf(f, CELL_X(c) + 1, y, cell_w - 1,
			             c == cur_head ? STYLE_SELECT : STYLE_DIM, "%*d", cell_w - 1,
			             c + 1);
	}
	/* The keys, at the right of the numbers when there is room. */
	static const char *const keys[] = {"arrows move, Enter opens, o closes",
	                                   "arrows, Enter opens", "Enter opens"};
	const int after = CELL_X(left + ncols) + 2;
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		const int kw = frame_text_width(keys[k], f->ascii);
		if (after + kw <= x0 + w) {
			frame_text(f, x0 + w - kw, y, kw, keys[k], STYLE_DIM);
			break;
		}
	}
	y++;
	for (int l = top; l < top + nrows; l++, y++) {
		if (l == cur_layer)
			frame_put(f, x0, y, frame_glyph(f, GLYPH_SELECTED), STYLE_SELECT);
		frame_printf(f, x0 + 2, y, LABEL_W - 2, l == cur_layer ? STYLE_SELECT : STYLE_DIM,
		             "L%d", l + 1);
		for (int c = left; c < left + ncols; c++) {
			const int h = l * per + c, x = CELL_X(c);
			if (group > 1 && c > left && c % group == 0)
				frame_put(f, x - 1, y, frame_glyph(f, GLYPH_VLINE), STYLE_BORDER);
			const bool cursor = h == app->cursor;
			if (v->t == 0 || timeline_built(app->tls[h]) < v->t) {
				/* Nothing yet, or its build has not reached the step. */
				frame_put(f, x, y, v->t == 0 ? '-' : frame_glyph(f, GLYPH_ELLIPSIS),
				          cursor ? STYLE_SELECT : STYLE_DIM);
				continue;
			}
			const double recall =
			        timeline_summary(app->tls[h], v->t)->c[POLICY_H2O].m.attn_recall;
			const double lost = 1.0 - recall > 0.0 ? 1.0 - recall : 0.0;
			frame_put(f, x, y, view_heat_glyph(f, lost), view_heat_style(lost));
			if (cell_w > 1)
				frame_printf(f, x + 1, y, cell_w - 1,
				             cursor ? STYLE_SELECT : STYLE_NORMAL, "%.2f", recall);
			else if (cursor)
				frame_style(f, x, y, 1, STYLE_SELECT);
		}
	}
#undef CELL_X
	y = r.y + 2 + nrows;
	draw_totals(v, f, x0, y, w);
	y += 2;

	/* The cursor's head, and what of the grid is off screen. */
	char where[96];
	view_head_where(app, app->cursor, 0, f->ascii, where, sizeof where);
	len = snprintf(buf, sizeof buf, "%s", where);
	const char *name = heads_name(sc, app->cursor);
	if (*name)
		len += snprintf(buf + len, sizeof buf - (size_t)len, " %.16s", name);
	if (v->t > 0 && timeline_built(app->tls[app->cursor]) >= v->t) {
		const struct step_metrics *m =
		        &timeline_summary(app->tls[app->cursor], v->t)->c[POLICY_H2O].m;
		len += snprintf(buf + len, sizeof buf - (size_t)len, ": H2O %d %s", m->tokens,
		                view_plural(m->tokens, "token", "tokens"));
		if (m->has_out)
			len += snprintf(buf + len, sizeof buf - (size_t)len, ", err %.4f",
			                m->out_err);
		len += snprintf(buf + len, sizeof buf - (size_t)len, ", recall %.4f",
		                m->attn_recall);
		/* The selected token (a click on a row by position selects
		 * one), as this head's H2O holds it. */
		const int pos = app->selected;
		if (pos >= 0 && pos < v->t) {
			const enum region reg =
			        timeline_region(app->tls[app->cursor], POLICY_H2O, v->t, pos);
			snprintf(buf + len, sizeof buf - (size_t)len, "; token %d: %s", pos,
			         reg == REGION_OLD      ? "heavy"
			         : reg == REGION_RECENT ? "recent"
			                                : "evicted");
		}
	}
	frame_put(f, x0, y, frame_glyph(f, GLYPH_SELECTED), STYLE_SELECT);
	frame_text(f, x0 + 2, y, w - 2, buf, STYLE_NORMAL);
	y += 2;

	/* The cursor's layer, head by head and position by position. */
	if (g.positions.h > 0)
		draw_positions(v, f, g.positions, cur_layer * per, per);
}

/* The columns of the by-position rows (draw_positions) in R: the first's
 * x, and how many; 0 when they are not drawn. */
static int position_cols(const struct view *v, struct rect r, int *x0)
{
	const int avail = r.w - 2 - NAME_W - RECALL_W - 1;
	*x0 = r.x + 1 + NAME_W;
	if (r.h < 4 || avail < 4)
		return 0;
	const int shown = v->t > 0 ? v->t : 1;
	return avail < shown ? avail : shown;
}

struct app_spot view_overview_pick(const struct view *v, struct rect r, int row, int col)
{
	struct app_spot spot = {.kind = SPOT_NONE, .p = POLICY_H2O, .pos = -1, .step = -1};
	const struct app *app = v->app;
	struct overview_geom g;
	if (!overview_geom(v, r, &g))
		return spot;
	const int x0 = r.x + 1;
	/* A cell of the grid: that layer's head. */
	if (row >= r.y + 2 && row < r.y + 2 + g.nrows) {
		const int c = (col - (x0 + LABEL_W + 1)) / (g.cell_w + 1);
		const int in = (col - (x0 + LABEL_W + 1)) % (g.cell_w + 1);
		if (col < x0 + LABEL_W + 1 || c >= g.ncols || in >= g.cell_w)
			return spot;
		spot.kind = SPOT_HEAD;
		spot.head = (g.top + row - (r.y + 2)) * g.per + g.left + c;
		return spot;
	}
	/* A head's row by position: that head, and the column's first
	 * position. */
	const struct rect pr = g.positions;
	const int first = (app->cursor / g.per) * g.per;
	const int rows = pr.h - 3, at = app->cursor - first;
	const int top = first + (at >= rows ? at - rows + 1 : 0);
	int px;
	const int cols = position_cols(v, pr, &px);
	if (pr.h == 0 || cols == 0 || row < pr.y + 2 || row >= pr.y + 2 + rows)
		return spot;
	const int h = top + row - (pr.y + 2);
	if (h >= first + g.per)
		return spot;
	spot.kind = SPOT_HEAD;
	spot.head = h;
	if (col >= px && col < px + cols && v->t > 0)
		spot.pos = (int)((long)(col - px) * v->t / cols);
	return spot;
}
