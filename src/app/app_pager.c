/*
 * app_pager: the lesson text, all of it, in a pager over the screen (E).
 *
 * A strip of two lines at 80x24 cannot hold a lesson's paragraph, and
 * giving it the middle of the screen still cut it and hid the panels: the
 * pager shows the "watch" paragraph and every step's note, each under a
 * heading, wrapped to the screen's width, and scrolls. Its lines come
 * from one iterator, which the view draws and the keys count, so the two
 * cannot disagree on where the text ends. Part of the update function
 * (app_impl.h).
 */
#include "h2o/app.h"

#include <stdio.h>

#include "h2o/keys.h"
#include "h2o/scene.h"
#include "app_impl.h"

void app_set_screen(struct app *app, int cols, int rows, bool ascii)
{
	app->cols = cols;
	app->rows = rows;
	app->ascii = ascii;
}

void app_pager_page(int cols, int rows, int *width, int *height)
{
	*width = cols > 3 ? cols - 2 : 1;
	*height = rows > 3 ? rows - 2 : 1;
}

void app_pager_begin(struct app_pager_iter *it, const struct app *app, int width, bool ascii)
{
	it->sc = app->scene;
	it->step = app->step;
	it->width = width;
	it->ascii = ascii;
	it->section = -1;
	it->phase = 0;
	it->at = NULL;
	it->heading[0] = '\0';
	it->line[0] = '\0';
}

/* The text of section S: the watch paragraph (-1) or note S. */
static const char *section_text(const struct scene *sc, int s)
{
	return s < 0 ? sc->watch : sc->note_text[s];
}

/* Whether section S has anything to show. */
static bool section_shown(const struct scene *sc, int s)
{
	return s >= sc->n_notes ? false : s >= 0 || *sc->watch;
}

bool app_pager_next(struct app_pager_iter *it, const char **line, bool *heading)
{
	const struct scene *sc = it->sc;
	for (;;) {
		if (it->section >= sc->n_notes)
			return false;
		if (!section_shown(sc, it->section)) {
			it->section++;
			it->phase = 0;
			continue;
		}
		if (it->phase == 0) {
			it->phase = 1;
			it->at = section_text(sc, it->section);
			if (it->section < 0)
				snprintf(it->heading, sizeof it->heading, "What to watch");
			else
				snprintf(it->heading, sizeof it->heading, "At step %d%s",
				         sc->note_step[it->section],
				         sc->note_step[it->section] == it->step
				                 ? " (the step shown)"
				                 : "");
			*line = it->heading;
			*heading = true;
			return true;
		}
		if (it->phase == 1) {
			if (text_wrap_next(&it->at, it->width, it->ascii, it->line,
			                   sizeof it->line)) {
				*line = it->line;
				*heading = false;
				return true;
			}
			it->phase = 2;
		}
		/* A blank line between sections, none after the last. */
		it->section++;
		it->phase = 0;
		if (it->section < sc->n_notes) {
			*line = "";
			*heading = false;
			return true;
		}
	}
}

int app_pager_lines(const struct app *app, int width, bool ascii)
{
	struct app_pager_iter it;
	const char *line;
	bool heading;
	int n = 0;
	app_pager_begin(&it, app, width, ascii);
	while (app_pager_next(&it, &line, &heading))
		n++;
	return n;
}

int app_pager_first(const struct app *app, int lines, int height)
{
	const int last = lines > height ? lines - height : 0;
	return app->pager_top < 0 ? 0 : app->pager_top > last ? last : app->pager_top;
}

/* The lines and the page of the screen last drawn; without one yet, a
 * page of APP_LIST_PAGE and no end known. */
static void pager_span(const struct app *app, int *lines, int *height)
{
	if (app->cols <= 0 || app->rows <= 0) {
		*lines = -1;
		*height = APP_LIST_PAGE;
		return;
	}
	int width;
	app_pager_page(app->cols, app->rows, &width, height);
	*lines = app_pager_lines(app, width, app->ascii);
}

/* Put the first line shown at TOP, within the text. */
static void pager_scroll_to(struct app *app, long top)
{
	int lines, height;
	pager_span(app, &lines, &height);
	const long last = lines < 0 ? top : lines > height ? lines - height : 0;
	app->pager_top = (int)(top < 0 ? 0 : top > last ? last : top);
}

void app_pager_open(struct app *app)
{
	const struct scene *sc = app->scene;
	if (!*sc->watch && sc->n_notes == 0) {
		snprintf(app->notice, sizeof app->notice,
		         "this scene has no lesson text (no \"watch\" or \"notes\")");
		return;
	}
	app->pager = true;
	app->pager_top = 0;
	/* At a step with a note of its own, the note is what the strip
	 * showed cut: the pager opens at it. */
	int lines, height;
	pager_span(app, &lines, &height);
	if (lines < 0)
		return;
	int width;
	app_pager_page(app->cols, app->rows, &width, &height);
	struct app_pager_iter it;
	const char *line;
	bool heading;
	app_pager_begin(&it, app, width, app->ascii);
	for (int n = 0; app_pager_next(&it, &line, &heading); n++)
		if (heading && it.section >= 0 && sc->note_step[it.section] == app->step) {
			pager_scroll_to(app, n);
			break;
		}
}

/* What a key does in the pager: scroll by BY lines (a page when PAGE),
 * to an end (END -1 or +1), or close it. */
static const struct {
	uint32_t key; /* a key, or else ACTION's keys */
	enum app_action action;
	int by, page, end;
	bool close;
} pager_keys[] = {
        {' ', ACT_NONE, +1, 1, 0, false},      {0, ACT_SELECT_PREV, -1, 0, 0, false},
        {0, ACT_SELECT_NEXT, +1, 0, 0, false}, {0, ACT_PAGE_PREV, -1, 1, 0, false},
        {0, ACT_PAGE_NEXT, +1, 1, 0, false},   {0, ACT_FIRST, 0, 0, -1, false},
        {0, ACT_LAST, 0, 0, +1, false},        {0, ACT_CLOSE, 0, 0, 0, true},
        {0, ACT_LESSON_ALL, 0, 0, 0, true},    {0, ACT_QUIT, 0, 0, 0, true},
};

unsigned app_pager_key(struct app *app, uint32_t key, enum app_action action)
{
	if (action == ACT_HELP)
		return 0;
	for (size_t i = 0; i < sizeof pager_keys / sizeof pager_keys[0]; i++) {
		if (pager_keys[i].key ? pager_keys[i].key != key : pager_keys[i].action != action)
			continue;
		if (pager_keys[i].close) {
			/* q closes the pager, not the program: the text was
			 * what was open. */
			app->pager = false;
			return APP_REDRAW;
		}
		int lines, height;
		pager_span(app, &lines, &height);
		const int page = height > 1 ? height - 1 : 1;
		if (pager_keys[i].end)
			pager_scroll_to(app, pager_keys[i].end < 0 ? 0 : (long)1 << 30);
		else
			pager_scroll_to(app,
			                (long)app->pager_top +
			                        pager_keys[i].by * (pager_keys[i].page ? page : 1));
		return APP_REDRAW;
	}
	char name[16];
	snprintf(app->notice, sizeof app->notice,
	         "%s: the lesson text is open (Esc, E or q closes it)",
	         keys_name(key, name, sizeof name));
	return APP_REDRAW;
}
