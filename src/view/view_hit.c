/*
 * view_hit: what the screen shows at a cell, for the mouse.
 *
 * view_pick answers with the layout view_draw used (view_layout) and the
 * panels' own layouts (view_cache_pick, view_heat_pick, view_map_pick,
 * view_model_pick, view_overview_pick), so a click means what the user
 * saw under it. Like view_draw it only reads the app.
 */
#include "h2o/view.h"

#include "view_panels.h"

static bool inside(struct rect r, int row, int col)
{
	return row >= r.y && row < r.y + r.h && col >= r.x && col < r.x + r.w;
}

struct app_spot view_pick(const struct app *app, const struct frame *f, int row, int col)
{
	const struct app_spot none = {.kind = SPOT_NONE, .p = POLICY_H2O, .pos = -1, .step = -1};
	if (f->cols < VIEW_MIN_COLS || f->rows < VIEW_MIN_ROWS || row < 0 || col < 0 ||
	    row >= f->rows || col >= f->cols)
		return none;
	if (app->help)
		return (struct app_spot){.kind = SPOT_HELP, .p = POLICY_H2O, .pos = -1, .step = -1};
	/* The pager covers the whole screen: nothing under it is picked. */
	if (app->pager)
		return none;
	struct view_layout lay;
	view_layout(app, f, &lay);
	/* The overview and the vectors cover the middle: the overview's
	 * heads are picked, nothing under the vectors. */
	if (app->overview && inside(lay.middle, row, col))
		return view_overview_pick(&lay.v, lay.middle, row, col);
	if (app->vectors && inside(lay.middle, row, col))
		return none;
	if (lay.cache.h > 0 && inside(lay.cache, row, col))
		return view_cache_pick(&lay.v, lay.cache, row, col);
	if (lay.heat.h > 0 && inside(lay.heat, row, col)) {
		if (lay.heat_draw == panel_heat_draw)
			return view_heat_pick(&lay.v, lay.heat, row, col);
		if (lay.heat_draw == panel_map_draw)
			return view_map_pick(&lay.v, lay.heat, row, col);
		if (lay.heat_draw == panel_model_draw)
			return view_model_pick(&lay.v, f, lay.heat, row, col);
	}
	return none;
}
