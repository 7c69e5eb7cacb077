/*
 * view_layout: where each panel of the screen goes, for drawing and for
 * finding what is under the mouse (view_hit.c), one computation for both
 * so that a click lands on what was drawn there.
 *
 * Rows: header 2, rule, middle, the lesson text under its rule (when the
 * scene has one and it is shown), rule, story, status, hints. The middle
 * goes to the cache panels first, as much as the whole timeline ever
 * needs there (so the layout holds still while stepping), then the plot
 * when there is room (taller on a taller terminal), keeping a third of the
 * middle for the heat rows below their rule (half for the cache map,
 * which has more to show).
 */
#include "view_panels.h"

/* The most tokens policy P holds over a scene of N: its capacity, or the
 * whole prompt when that is longer (nothing is evicted before its end). */
static int held_most(const struct app *app, enum policy_id p, int n)
{
	int capacity = policy_capacity(p, &app->b);
	if (capacity >= 0 && app->b.prompt > capacity)
		capacity = app->b.prompt;
	return capacity < 0 || capacity > n ? n : capacity;
}

#define PLOT_MAX_ROWS 8 /* chart rows a series at most */

/* The plot's rows for a middle of MIDDLE_H: none on a short terminal, a
 * rule and a row per series, then a chart of K rows per series with its
 * y axis and a row of step ticks, K growing with the terminal. */
static int plot_height(int middle_h)
{
	if (middle_h < 22)
		return 0;
	int k = 1 + (middle_h - 22) / 8;
	k = k > 6 ? 6 : k;
	return k == 1 ? 3 : 1 + 2 * k + 1;
}

/* The tallest plot of the form plot_height gives within ROWS rows, with at
 * most PLOT_MAX_ROWS rows a series. */
static int plot_grown(int rows)
{
	if (rows < 6)
		return 3;
	const int k = (rows - 2) / 2;
	return 1 + 2 * (k > PLOT_MAX_ROWS ? PLOT_MAX_ROWS : k) + 1;
}

void view_layout(const struct app *app, const struct frame *f, struct view_layout *lay)
{
	struct view *v = &lay->v;
	*v = (struct view){
	        .app = app,
	        .sc = app->scene,
	        .tl = app->tl,
	        .t = app->step,
	        .n = app->scene->n,
	        .built = app_built(app),
	        .split = f->cols / 2,
	        .e = app->shown,
	        .rec = app->shown_rec,
	};
	const int lesson_h = view_lesson_rows(app, f->cols, f->rows, f->ascii);
	/* A scene that teaches has a second line under the step sentence. */
	const int remark_h = app->scene->lesson ? 1 : 0;
	const int middle_top = 3, middle_h = f->rows - 3 - 4 - lesson_h - remark_h;
	const int middle_end = middle_top + middle_h; /* the row after the middle */
	int need_cache = 1 + 3 + held_most(app, POLICY_H2O, v->n) +
	                 timeline_eviction_count(app->tl, POLICY_H2O);
	/* The full cache beside H2O mirrors H2O's rows. */
	if (app->compare != POLICY_FULL) {
		const int other = 1 + 3 + held_most(app, app->compare, v->n) +
		                  timeline_eviction_count(app->tl, app->compare);
		need_cache = other > need_cache ? other : need_cache;
	}
	const int need_heat = app->map ? view_map_rows(v, f->cols, -1) : 1 + v->n;
	int plot_h = plot_height(middle_h);
	int min_heat = middle_h / (app->map ? 2 : 3);
	min_heat = min_heat > 4 ? min_heat : 4;
	min_heat = need_heat < min_heat ? need_heat : min_heat;
	int cache_h = middle_h - 1 - plot_h - min_heat;
	cache_h = need_cache < cache_h ? need_cache : cache_h;
	/* Rows neither the cache panels nor the heat rows can use make the
	 * plot taller (a short scene on a tall terminal). */
	const int spare = middle_h - 1 - cache_h - plot_h - need_heat;
	if (plot_h > 0 && spare > 0)
		plot_h = plot_grown(plot_h + spare);
	int heat_h = middle_h - cache_h - plot_h - 1;
	if (app->map) {
		/* The rows between the map's bands and its place go back to
		 * the cache panels. */
		const int left = heat_h - view_map_rows(v, f->cols, heat_h);
		const int back = need_cache - cache_h < left ? need_cache - cache_h : left;
		cache_h += back > 0 ? back : 0;
		heat_h -= back > 0 ? back : 0;
	}
	const int heat_top = middle_top + cache_h + plot_h + 1;
	lay->header = (struct rect){0, 0, f->cols, 2};
	lay->middle = (struct rect){0, middle_top, f->cols, middle_h};
	lay->cache = (struct rect){0, middle_top, f->cols, cache_h};
	lay->plot = (struct rect){0, middle_top + cache_h, f->cols, plot_h};
	lay->heat = (struct rect){0, heat_top - 1, f->cols, heat_h + 1};
	lay->heat_draw = app->map                       ? panel_map_draw
	                 : app->model_view && app->drop ? panel_model_draw
	                                                : panel_heat_draw;
	lay->lesson = (struct rect){0, middle_end, f->cols, lesson_h};
	lay->story = (struct rect){0, f->rows - 3 - remark_h, f->cols, 1 + remark_h};
	lay->status = (struct rect){0, f->rows - 2, f->cols, 1};
	lay->hints = (struct rect){0, f->rows - 1, f->cols, 1};
}
