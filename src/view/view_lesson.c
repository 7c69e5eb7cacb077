/*
 * view_lesson: a lesson's text on the main screen, so that the scene
 * teaches without a key.
 *
 * A scene with a "watch" paragraph gets a rule labelled "what to watch"
 * above the story line and, below it, the paragraph wrapped by words: a
 * strip of a few lines (more on a taller terminal), or the whole of it
 * after E. A strip too short for the paragraph ends in an ellipsis and its
 * rule says which key shows the rest. The paragraph is scene text: it goes
 * through frame_text and is measured with frame_text_width only.
 */
#include <stdio.h>

#include "h2o/view.h"
#include "view_panels.h"

/* Lines of a strip at a frame of ROWS: two at 80x24, four from 36 rows. */
static int strip_lines(int rows)
{
	return rows >= 36 ? 4 : rows >= 30 ? 3 : 2;
}

/* Lines of the whole paragraph at most: the middle keeps eight rows (the
 * cache panels' headings and a few tokens, the heat rows' rule and a few
 * rows). */
static int whole_lines(int rows)
{
	const int most = rows - VIEW_MIN_ROWS + 9;
	return most > 2 ? most : 2;
}

static int text_width(int cols)
{
	return cols - 2;
}

/* The lines the paragraph needs, and the lines it gets. */
static void lesson_lines(const struct app *app, int cols, int rows, bool ascii, int *need, int *get)
{
	*need = *get = 0;
	if (app->lesson_hidden || !*app->scene->watch)
		return;
	*need = view_wrap_count(app->scene->watch, text_width(cols), ascii);
	const int most = app->lesson_all ? whole_lines(rows) : strip_lines(rows);
	*get = *need < most ? *need : most;
}

int view_lesson_rows(const struct app *app, int cols, int rows, bool ascii)
{
	int need, get;
	lesson_lines(app, cols, rows, ascii, &need, &get);
	return get > 0 ? 1 + get : 0;
}

void panel_lesson_draw(const struct view *v, struct frame *f, struct rect r)
{
	int need, get;
	lesson_lines(v->app, f->cols, f->rows, f->ascii, &need, &get);
	const bool cut = get < need;
	view_rule(f, r.x, r.y, r.w,
	          cut ? "what to watch (E: all of it, e hides)"
	          : v->app->lesson_all && need > strip_lines(f->rows)
	                  ? "what to watch (E: a strip, e hides)"
	                  : "what to watch (e hides)");
	const char *at = v->sc->watch;
	const int x = r.x + 1, maxw = text_width(r.w);
	char line[SCENE_MAX_WATCH_BYTES + 1];
	for (int i = 0; i < get && i + 1 < r.h; i++) {
		const int y = r.y + 1 + i;
		if (i == get - 1 && cut) {
			/* The last line leaves room for the sign of more. */
			if (!view_wrap_next(&at, maxw - 2, f->ascii, line, sizeof line))
				break;
			const int used = frame_text(f, x, y, maxw - 2, line, STYLE_NORMAL);
			frame_put(f, x + used + 1, y, frame_glyph(f, GLYPH_ELLIPSIS), STYLE_DIM);
			break;
		}
		if (!view_wrap_next(&at, maxw, f->ascii, line, sizeof line))
			break;
		frame_text(f, x, y, maxw, line, STYLE_NORMAL);
	}
}
