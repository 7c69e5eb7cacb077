/*
 * view_map: the cache map, every position of the scene at once (M).
 *
 * One cell per position, the lines wrapping, or several positions per cell
 * when even wrapped they do not fit (the rule says how many). For H2O and
 * for the compared policy, on aligned rows: where each position sits after
 * this step (its region's letter: H heavy, R recent, S sinks, W window, C
 * cache, K kept by attention; a dot once evicted, nothing before it
 * arrives), and under it this step's attention on it, on the heat scale
 * every panel shares. A cell of several positions shows the most kept of
 * them (a region before an eviction; in lower case when that region holds
 * under half of them) and the attention they got together.
 * It is the picture of what a policy keeps over a whole long trace, for the
 * head shown; the selected token is marked above its column.
 */
#include <stdio.h>

#include "view_panels.h"

#define LABEL_W    11 /* " streaming " */
#define BAND_ROWS  5  /* position ticks, then marks and heat for each cache */
#define TICK_EVERY 10

static int map_cells(int cols)
{
	return cols - LABEL_W - 1;
}

/* What a cell shows of policy P: the most kept region of its positions. */
enum mark { MARK_NONE, MARK_EVICTED, MARK_RECENT, MARK_OLD };

static enum mark mark_of(enum region r)
{
	switch (r) {
	case REGION_OLD:
		return MARK_OLD;
	case REGION_RECENT:
		return MARK_RECENT;
	case REGION_EVICTED:
		return MARK_EVICTED;
	case REGION_NONE:
		break;
	}
	return MARK_NONE;
}

/* The letter of policy P's region R: the first of its section name. */
static uint32_t region_letter(enum policy_id p, enum policy_region r)
{
	const char *name = policies[p]->region_name[r];
	return name && name[0] ? (uint32_t)(unsigned char)name[0] : 'K';
}

static enum frame_style mark_style(const struct view *v, enum policy_id p, enum mark m)
{
	switch (m) {
	case MARK_OLD:
		/* A cache that keeps everything is plain, as in its panel, and
		 * dim: all of it is kept, the heat under it is what tells. */
		return policy_capacity(p, &v->app->b) < 0 ? STYLE_DIM : STYLE_HEAVY;
	case MARK_RECENT:
		return STYLE_RECENT;
	case MARK_EVICTED:
		return STYLE_EVICTED;
	case MARK_NONE:
		break;
	}
	return STYLE_NORMAL;
}

struct map_layout {
	int x0;      /* the first cell's column */
	int cells;   /* cells per line */
	int per;     /* positions per cell */
	int lines;   /* lines (bands); 0 when the map does not fit */
	bool legend; /* a legend line below them */
};

/* The map of V in BODY rows below its rule, COLS wide from X: as many bands
 * as fit (a legend line below), and as few positions a cell as they allow. */
static struct map_layout map_layout(const struct view *v, int x, int cols, int body)
{
	struct map_layout m = {.x0 = x + LABEL_W, .cells = map_cells(cols)};
	int bands = (body - 1) / BAND_ROWS;
	m.legend = bands >= 1;
	bands = bands >= 1 ? bands : body >= BAND_ROWS ? 1 : 0;
	if (m.cells < 1 || bands < 1 || v->n < 1)
		return m;
	const long room = (long)m.cells * bands;
	m.per = (int)((v->n + room - 1) / room);
	const long per_line = (long)m.cells * m.per;
	m.lines = (int)((v->n + per_line - 1) / per_line);
	return m;
}

int view_map_rows(const struct view *v, int cols, int rows)
{
	/* The bands, the legend and the selected token's line. */
	if (rows < 0) {
		const int cells = map_cells(cols) > 1 ? map_cells(cols) : 1;
		return (v->n > 0 ? (v->n + cells - 1) / cells : 1) * BAND_ROWS + 2;
	}
	const struct map_layout m = map_layout(v, 0, cols, rows);
	const int used = m.lines * BAND_ROWS + (m.legend ? 2 : 0);
	return m.lines > 0 && used < rows ? used : rows;
}

static void draw_ticks(const struct view *v, struct frame *f, const struct map_layout *m, int x,
                       int y, int line)
{
	frame_text(f, x + 1, y, LABEL_W - 2, "position", STYLE_DIM);
	const long start = (long)line * m->cells * m->per;
	/* The selected token's cell, marked; ticks keep clear of it. */
	int sel = -1;
	if (v->app->selected >= 0 && v->app->selected >= start &&
	    v->app->selected < start + (long)m->cells * m->per)
		sel = (int)((v->app->selected - start) / m->per);
	for (int c = 0; c < m->cells; c += TICK_EVERY) {
		const long pos = start + (long)c * m->per;
		if (pos >= v->n)
			break;
		char buf[24];
		const int len = snprintf(buf, sizeof buf, "%ld", pos);
		if (len >= TICK_EVERY || c + len > m->cells || (sel >= c && sel < c + len + 1))
			continue;
		frame_text(f, m->x0 + c, y, len, buf, STYLE_DIM);
	}
	if (sel >= 0)
		frame_put(f, m->x0 + sel, y, frame_glyph(f, GLYPH_MARKER), STYLE_SELECT);
}

static void draw_policy(const struct view *v, struct frame *f, const struct map_layout *m, int x,
                        int y, int line, enum policy_id p)
{
	frame_text(f, x + 1, y, LABEL_W - 2, policies[p]->name, STYLE_LABEL);
	frame_text(f, x + 3, y + 1, LABEL_W - 4, "attn", STYLE_DIM);
	const long start = (long)line * m->cells * m->per;
	const int sel = v->app->selected;
	for (int c = 0; c < m->cells; c++) {
		const long a = start + (long)c * m->per;
		const long b = a + m->per < v->n ? a + m->per : v->n;
		if (a >= v->n)
			break;
		enum mark best = MARK_NONE;
		int of[MARK_OLD + 1] = {0};
		double sum = 0.0;
		bool held = false;
		for (long pos = a; pos < b; pos++) {
			const enum mark mk = mark_of(timeline_region(v->tl, p, v->t, (int)pos));
			best = mk > best ? mk : best;
			of[mk]++;
			const double w =
			        v->t > 0 ? timeline_weight(v->tl, p, v->t, (int)pos) : -1.0;
			if (w >= 0.0) {
				sum += w;
				held = true;
			}
		}
		const bool selected = sel >= a && sel < b;
		if (best != MARK_NONE) {
			uint32_t glyph = best == MARK_OLD ? region_letter(p, POLICY_REGION_OLD)
			                 : best == MARK_RECENT
			                         ? region_letter(p, POLICY_REGION_RECENT)
			                         : frame_glyph(f, GLYPH_BULLET);
			/* A region that holds under half of the cell's positions
			 * that have arrived: lower case. */
			const int arrived = of[MARK_EVICTED] + of[MARK_RECENT] + of[MARK_OLD];
			if (best != MARK_EVICTED && 2 * of[best] < arrived && glyph >= 'A' &&
			    glyph <= 'Z')
				glyph += 'a' - 'A';
			frame_put(f, m->x0 + c, y, glyph,
			          selected ? STYLE_SELECT : mark_style(v, p, best));
		}
		if (held)
			frame_put(f, m->x0 + c, y + 1, view_heat_glyph(f, sum),
			          view_heat_style(sum));
	}
}

/* "H heavy  R recent" for policy P, into BUF; the letters of the regions
 * it uses. */
static int legend_of(enum policy_id p, char *buf, size_t size)
{
	int len = snprintf(buf, size, "%s:", policies[p]->name);
	for (int r = 0; r < 2; r++) {
		const char *name = policies[p]->region_name[r];
		if (!name)
			continue;
		len += snprintf(buf + len, size - (size_t)len, " %c ", name[0]);
		for (const char *s = name; *s && (size_t)len + 1 < size; s++)
			buf[len++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
		buf[len] = '\0';
	}
	return len;
}

/* Where the selected token is in policy P after this step, and what it got. */
static int selected_words(const struct view *v, enum policy_id p, char *buf, size_t size)
{
	const int pos = v->app->selected;
	const enum region r = timeline_region(v->tl, p, v->t, pos);
	int len;
	if (r == REGION_EVICTED)
		len = snprintf(buf, size, "%s evicted it at step %d", policies[p]->name,
		               timeline_evicted_at(v->tl, p, pos));
	else if (r == REGION_NONE)
		len = snprintf(buf, size, "%s: not arrived", policies[p]->name);
	else
		len = snprintf(buf, size, "%s keeps it", policies[p]->name);
	const double w = v->t > 0 ? timeline_weight(v->tl, p, v->t, pos) : -1.0;
	if (w >= 0.0)
		len += snprintf(buf + len, size - (size_t)len, ", attn %.2f", w);
	return len;
}

static void draw_legend(const struct view *v, struct frame *f, int x, int y, int w, int per,
                        bool marks, bool selection)
{
	const enum policy_id cmp = v->app->compare;
	int used = 0;
	char buf[160];
	if (marks) {
		legend_of(POLICY_H2O, buf, sizeof buf);
		used += frame_text(f, x + used, y, w - used, buf, STYLE_DIM);
		legend_of(cmp, buf, sizeof buf);
		used += frame_text(f, x + used, y, w - used, "   ", STYLE_DIM);
		used += frame_text(f, x + used, y, w - used, buf, STYLE_DIM);
		snprintf(buf, sizeof buf, "   %s evicted", f->ascii ? "." : "\u00b7");
		used += frame_text(f, x + used, y, w - used, buf, STYLE_DIM);
		if (per > 1)
			used += frame_text(f, x + used, y, w - used,
			                   "   lower case: under half the cell", STYLE_DIM);
		used += frame_text(f, x + used, y, w - used, "   ", STYLE_DIM);
	}
	if (!selection || v->app->selected < 0)
		return;
	const int pos = v->app->selected;
	frame_put(f, x + used, y, frame_glyph(f, GLYPH_MARKER), STYLE_SELECT);
	used += 1;
	used += frame_printf(f, x + used, y, w - used, STYLE_NORMAL, " %d ", pos);
	used += frame_text(f, x + used, y, w - used, v->sc->text[pos], STYLE_SELECT);
	selected_words(v, POLICY_H2O, buf, sizeof buf);
	used += frame_text(f, x + used, y, w - used, ": ", STYLE_NORMAL);
	used += frame_text(f, x + used, y, w - used, buf, STYLE_NORMAL);
	selected_words(v, cmp, buf, sizeof buf);
	used += frame_text(f, x + used, y, w - used, "; ", STYLE_NORMAL);
	frame_text(f, x + used, y, w - used, buf, STYLE_NORMAL);
}

void panel_map_draw(const struct view *v, struct frame *f, struct rect r)
{
	const struct map_layout m = map_layout(v, r.x, r.w, r.h - 1);
	if (m.lines < 1) {
		view_rule(f, r.x, r.y, r.w, "cache map");
		return;
	}

	char count[32], l0[96], l1[64], l2[32];
	view_format_count(v->n, count);
	if (m.per == 1) {
		snprintf(l0, sizeof l0, "cache map: %s positions, one a cell", count);
		snprintf(l1, sizeof l1, "cache map: one position a cell");
	} else {
		snprintf(l0, sizeof l0, "cache map: %s positions, %d a cell", count, m.per);
		snprintf(l1, sizeof l1, "cache map: %d positions a cell", m.per);
	}
	snprintf(l2, sizeof l2, "map: %d a cell", m.per);
	const char *const labels[] = {l0, l1, l2};
	view_heat_rule(f, r, labels, 3);

	int y = r.y + 1;
	for (int line = 0; line < m.lines; line++, y += BAND_ROWS) {
		draw_ticks(v, f, &m, r.x, y, line);
		draw_policy(v, f, &m, r.x, y + 1, line, POLICY_H2O);
		draw_policy(v, f, &m, r.x, y + 3, line, v->app->compare);
	}
	if (!m.legend)
		return;
	/* The legend below the bands, the selected token beside it or, with
	 * a row to spare, under it. */
	const bool two = y + 1 < r.y + r.h && v->app->selected >= 0;
	draw_legend(v, f, r.x + 1, y, r.w - 2, m.per, true, !two);
	if (two)
		draw_legend(v, f, r.x + 1, y + 1, r.w - 2, m.per, false, true);
}

struct app_spot view_map_pick(const struct view *v, struct rect r, int row, int col)
{
	struct app_spot spot = {.kind = SPOT_NONE, .p = POLICY_H2O, .pos = -1, .step = -1};
	const struct map_layout m = map_layout(v, r.x, r.w, r.h - 1);
	const int dy = row - (r.y + 1), c = col - m.x0;
	if (m.lines < 1 || dy < 0 || dy >= m.lines * BAND_ROWS || c < 0 || c >= m.cells)
		return spot;
	/* Any row of a band, over a cell: its first position. */
	const long pos = ((long)(dy / BAND_ROWS) * m.cells + c) * m.per;
	if (pos >= v->n)
		return spot;
	const int in_band = dy % BAND_ROWS;
	spot.kind = SPOT_TOKEN;
	spot.p = in_band >= 3 ? v->app->compare : POLICY_H2O;
	spot.pos = (int)pos;
	return spot;
}
