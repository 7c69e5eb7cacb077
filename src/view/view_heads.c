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

void panel_overview_draw(const struct view *v, struct frame *f, struct rect r)
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
	snprintf(label, sizeof label, "%d heads: %s heavy  %s recent  %s evicted%s   (o closes)",
	         app->heads, f->ascii ? "#" : "\u2588", f->ascii ? "+" : "\u2592",
	         f->ascii ? "." : "\u00b7",
	         cols < shown ? "  (a column holds several positions)" : "");
	frame_text(f, r.x + 1, y, r.w - 2, label, STYLE_LABEL);
	y++;
	/* Every ten columns, the first position of that column. */
	for (int c = 0; c < cols; c += 10)
		frame_printf(f, x0 + c, y, cols - c, STYLE_DIM, "%d",
		             (int)((long)c * shown / cols));
	frame_text(f, x0 + cols + 1, y, RECALL_W, "recall", STYLE_DIM);
	y++;

	const int rows = r.h - 3; /* title, numbers, the count row */
	const int top = app->head >= rows ? app->head - rows + 1 : 0;
	for (int h = top; h < app->heads && y < r.y + 2 + rows; h++, y++) {
		const struct timeline *tl = app->tls[h];
		/* Heads count from 1, as the header's "head 2/8" does. */
		frame_printf(f, r.x + 1, y, NAME_W - 1, h == app->head ? STYLE_SELECT : STYLE_DIM,
		             "%2d %s", h + 1, heads_name(app->scene, h));
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
		for (int h = 0; h < app->heads; h++) {
			if (timeline_built(app->tls[h]) < v->t)
				continue;
			const enum region reg =
			        column_region(app->tls[h], v->t, from, to > from ? to : from + 1);
			kept += reg == REGION_OLD || reg == REGION_RECENT;
		}
		frame_put(f, x0 + c, y, kept > 9 ? '+' : (uint32_t)('0' + kept),
		          kept == app->heads ? STYLE_HEAVY
		          : kept == 1        ? STYLE_WARN
		                             : STYLE_DIM);
	}
	frame_text(f, x0 + cols + 1, y, RECALL_W, "heads", STYLE_DIM);
}
