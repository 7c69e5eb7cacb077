/*
 * view_pager: the lesson text, all of it, over the screen (E).
 *
 * The title rule says what it is and which keys close it; below it the
 * lines of app_pager_next from the first the app scrolled to (headings as
 * labels, the text as it is: scene text, through frame_text only); the
 * last row says which lines are shown of how many, and how to move, or
 * the notice of a key the pager does not take.
 */
#include <stdio.h>

#include "view_panels.h"

void panel_pager_draw(const struct view *v, struct frame *f, struct rect r)
{
	const struct app *app = v->app;
	for (int y = r.y; y < r.y + r.h; y++)
		frame_fill(f, r.x, y, r.w, ' ', STYLE_NORMAL);
	int width, height;
	app_pager_page(r.w, r.h, &width, &height);
	const int lines = app_pager_lines(app, width, f->ascii);
	const int first = app_pager_first(app, lines, height);
	char title[96];
	if (app->lesson >= 0)
		snprintf(title, sizeof title, "lesson %d, all of its text (Esc, E or q closes)",
		         app->lesson + 1);
	else
		snprintf(title, sizeof title, "the scene's text, all of it (Esc, E or q closes)");
	view_rule(f, r.x, r.y, r.w, title);

	struct app_pager_iter it;
	const char *line;
	bool heading;
	app_pager_begin(&it, app, width, f->ascii);
	for (int n = 0; n < first + height && app_pager_next(&it, &line, &heading); n++)
		if (n >= first)
			frame_text(f, r.x + 1, r.y + 1 + n - first, width, line,
			           heading ? STYLE_LABEL : STYLE_NORMAL);

	/* Where it stands, then the keys (or the notice of a key it took). */
	const int last = first + height < lines ? first + height : lines;
	char where[96];
	snprintf(where, sizeof where, " lines %d%s%d of %d", lines ? first + 1 : 0,
	         f->ascii ? "-" : "\u2013", last, lines);
	const int y = r.y + r.h - 1;
	const int used = frame_text(f, r.x, y, r.w, where, STYLE_DIM);
	const char *keys = f->ascii ? "Up Down PgUp PgDn Home End scroll; Esc, E or q closes"
	                            : "\u2191 \u2193 PgUp PgDn Home End scroll; Esc, E or q closes";
	frame_text(f, r.x + used + 3, y, r.w - used - 4, app->notice[0] ? app->notice : keys,
	           app->notice[0] ? STYLE_NORMAL : STYLE_DIM);
}
