/*
 * view_lesson: a lesson's text on the main screen, so that the scene
 * teaches without a key.
 *
 * A scene with a "watch" paragraph gets a rule labelled "what to watch"
 * above the story line and, below it, the paragraph wrapped by words (at a
 * step with a note of its own, the note, under "at step N"): a
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

/* The text shown at STEP: its step note, or the watch paragraph. */
static const char *lesson_text(const struct scene *sc, int step, bool *note)
{
	for (int i = 0; i < sc->n_notes; i++)
		if (sc->note_step[i] == step) {
			*note = true;
			return sc->note_text[i];
		}
	*note = false;
	return sc->watch;
}

/* The lines the longest of the texts needs (so that the layout holds
 * still from step to step), and the lines the texts get. */
static void lesson_lines(const struct app *app, int cols, int rows, bool ascii, int *need, int *get)
{
	const struct scene *sc = app->scene;
	*need = *get = 0;
	if (app->lesson_hidden)
		return;
	*need = view_wrap_count(sc->watch, text_width(cols), ascii);
	for (int i = 0; i < sc->n_notes; i++) {
		const int lines = view_wrap_count(sc->note_text[i], text_width(cols), ascii);
		*need = lines > *need ? lines : *need;
	}
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
	bool note;
	const char *at = lesson_text(v->sc, v->t, &note);
	const bool cut = get < view_wrap_count(at, text_width(r.w), f->ascii);
	const char *keys = cut ? "E: all of it, e hides"
	                   : v->app->lesson_all && need > strip_lines(f->rows)
	                           ? "E: a strip, e hides"
	                           : "e hides";
	char label[96];
	if (note)
		snprintf(label, sizeof label, "at step %d (%s)", v->t, keys);
	else
		snprintf(label, sizeof label, "%s (%s)", *at ? "what to watch" : "step notes",
		         keys);
	view_rule(f, r.x, r.y, r.w, label);
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
