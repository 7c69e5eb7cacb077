/*
 * app_mouse: what a click or the wheel does, said in the actions the keys
 * already have.
 *
 * The app does not know where anything is drawn: the backend asks the view
 * what is under the mouse (view_pick) and hands the answer here, a spot (a
 * token, a heat cell, the list under it). A click selects, which is what
 * the arrows do, or goes to a step, which is what a typed number does; the
 * wheel is the keys that step or move the selection. So the mouse can do
 * nothing the keyboard cannot, and the modes (typing, the help, the
 * overview) take it as they take keys.
 */
#include "h2o/scene.h"
#include "app_impl.h"

/* A click: select what is under it. A click that selects nothing leaves
 * the state as it was, and is no reason to redraw. */
static unsigned click(struct app *app, const struct app_spot *at)
{
	/* Typing on the hint line ends as it does on any key that is not
	 * part of it; the help closes as on any key that turns no page. */
	if (app->entering != ENTRY_NONE) {
		app->entering = ENTRY_NONE;
		return APP_REDRAW;
	}
	if (app->help) {
		app->help = false;
		return APP_REDRAW;
	}
	switch (at->kind) {
	case SPOT_TOKEN:
		if (at->pos < 0 || at->pos >= app->step)
			return 0;
		app->selected = at->pos;
		app->span_len = 0;
		return APP_REDRAW;
	case SPOT_HEAT:
		if (at->step < 0)
			return 0;
		app_go(app, at->step);
		/* The cell's position, once the step has it (a gap right of
		 * the step's own column has not arrived). */
		if (at->pos >= 0 && at->pos < app->step) {
			app->selected = at->pos;
			app->span_len = 0;
		}
		return APP_REDRAW;
	case SPOT_HEAD:
		/* The overview's cursor to that head, as the arrows move it;
		 * on its row by position, that position selected too. */
		if (!app->overview || at->head < 0 || at->head >= app->heads)
			return 0;
		app->cursor = at->head;
		if (at->pos >= 0 && at->pos < app->step) {
			app->selected = at->pos;
			app->span_len = 0;
		}
		return APP_REDRAW;
	default:
		return 0;
	}
}

/* The wheel: over a walked list, the selection moves through it; over the
 * help, its pages turn; in the pager, its lines scroll; anywhere else, a
 * step. */
static enum app_action wheel(const struct app *app, const struct app_spot *at, int dir)
{
	const bool list = ((at->kind == SPOT_TOKEN || at->kind == SPOT_PANEL) &&
	                   app->walk != WALK_NONE && !app->help) ||
	                  (app->pager && !app->help);
	if (list)
		return dir > 0 ? ACT_SELECT_NEXT : ACT_SELECT_PREV;
	return dir > 0 ? ACT_NEXT : ACT_PREV;
}

unsigned app_mouse(struct app *app, enum app_mouse what, const struct app_spot *at)
{
	struct app_intent want = {.what = APP_WANT_NOTHING};
	unsigned flags;
	if (what == APP_MOUSE_CLICK) {
		/* A notice goes at the next event, as at the next key. */
		const unsigned had = app->notice[0] ? APP_REDRAW : 0;
		app->notice[0] = '\0';
		flags = click(app, at) | had;
	} else {
		flags = app_keys_act(app, wheel(app, at, what == APP_MOUSE_WHEEL_DOWN ? +1 : -1),
		                     &want);
	}
	return app_finish(app, flags, &want);
}
