/*
 * view_heads: every attention head at a glance.
 *
 * One row per head, one column per position: what that head's H2O cache
 * holds after this step (heavy, recent, evicted), with the head's attention
 * recall beside the row. A last row counts, per position, how many heads
 * keep it, so a token every head keeps stands apart from one only a single
 * head does. The columns follow the step, as the heat rows do.
 */
#include <stdio.h>

#include "h2o/heads.h"
#include "view_panels.h"

#define NAME_W   14 /* "12 local     " */
#define RECALL_W 8

void panel_overview_draw(const struct view *v, struct frame *f, struct rect r)
{
	const struct app *app = v->app;
	const int x0 = r.x + 1 + NAME_W, avail = r.w - 2 - NAME_W - RECALL_W - 1;
	if (r.h < 4 || avail < 4)
		return;
	const int cols = avail < v->n ? avail : v->n;
	int first = v->t - cols;
	first = first < 0 ? 0 : first;
	int y = r.y;
	char label[96];
	snprintf(label, sizeof label, "%d heads: %s heavy  %s recent  %s evicted   (o closes)",
	         app->heads, f->ascii ? "#" : "\u2588", f->ascii ? "+" : "\u2592",
	         f->ascii ? "." : "\u00b7");
	frame_text(f, r.x + 1, y, r.w - 2, label, STYLE_LABEL);
	y++;
	/* Position numbers every ten columns. */
	for (int c = 0; c < cols; c++)
		if ((first + c) % 10 == 0)
			frame_printf(f, x0 + c, y, cols - c, STYLE_DIM, "%d", first + c);
	frame_text(f, x0 + cols + 1, y, RECALL_W, "recall", STYLE_DIM);
	y++;

	const int rows = r.h - 3; /* title, numbers, the count row */
	const int top = app->head >= rows ? app->head - rows + 1 : 0;
	for (int h = top; h < app->heads && y < r.y + 2 + rows; h++, y++) {
		const struct timeline *tl = app->tls[h];
		const bool shown = h == app->head;
		frame_printf(f, r.x + 1, y, NAME_W - 1, shown ? STYLE_SELECT : STYLE_DIM, "%2d %s",
		             h, heads_name(app->scene, h));
		for (int c = 0; c < cols; c++) {
			const enum region reg = timeline_region(tl, POLICY_H2O, v->t, first + c);
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
	/* How many heads keep each position: a digit, '+' past nine. */
	y = r.y + r.h - 1;
	frame_text(f, r.x + 1, y, NAME_W - 1, "kept by", STYLE_LABEL);
	for (int c = 0; c < cols && v->t > 0; c++) {
		int kept = 0;
		for (int h = 0; h < app->heads; h++) {
			const enum region reg =
			        timeline_region(app->tls[h], POLICY_H2O, v->t, first + c);
			kept += reg == REGION_OLD || reg == REGION_RECENT;
		}
		if (first + c < v->t)
			frame_put(f, x0 + c, y, kept > 9 ? '+' : (uint32_t)('0' + kept),
			          kept == app->heads ? STYLE_HEAVY
			          : kept == 1        ? STYLE_WARN
			                             : STYLE_DIM);
	}
	frame_text(f, x0 + cols + 1, y, RECALL_W, "heads", STYLE_DIM);
}
