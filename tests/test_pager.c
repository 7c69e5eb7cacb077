/*
 * Unit tests of the lesson pager (E, app_pager.c): its lines, its keys,
 * and where it opens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/app.h"
#include "h2o/keys.h"
#include "scene_fixture.h"
#include "app_fixture.h"

/* A scene with a paragraph and NOTES notes of WORDS words each, one a
 * step from step 1. */
static struct scene *scene_with_notes(int notes, int words)
{
	struct scene *sc = fixture_random(30, 4, 2, 2, 1);
	free(sc->watch);
	sc->watch = strdup("Watch the scores.");
	sc->n_notes = notes;
	sc->note_step = calloc((size_t)notes, sizeof *sc->note_step);
	sc->note_text = calloc((size_t)notes, sizeof *sc->note_text);
	for (int i = 0; i < notes; i++) {
		char *text = malloc((size_t)words * 8 + 1);
		text[0] = '\0';
		for (int w = 0; w < words; w++)
			strcat(text, w ? " word" : "word");
		sc->note_step[i] = i + 1;
		sc->note_text[i] = text;
	}
	return sc;
}

/* The pager: its lines are every section's heading and text, wrapped to
 * the screen, a blank between sections; the keys scroll it within them,
 * a page at a time less a line, and Esc, E and q close it, q without
 * quitting; the help opens over it and leaves it open. */
static void test_pager(void **state)
{
	(void)state;
	/* Notes of 20 words: "word" and a space each, 99 columns, two
	 * lines at 78. */
	struct scene *sc = scene_with_notes(6, 20);
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	app_set_screen(&app, 80, 24, false);
	int width, height;
	app_pager_page(80, 24, &width, &height);
	assert_int_equal(width, 78);
	assert_int_equal(height, 22);
	/* 2 for the watch, then 6 x (blank, heading, 2 lines). */
	assert_int_equal(app_pager_lines(&app, width, false), 2 + 6 * 4);
	struct app_pager_iter it;
	const char *line;
	bool heading;
	app_pager_begin(&it, &app, width, false);
	assert_true(app_pager_next(&it, &line, &heading));
	assert_true(heading);
	assert_string_equal(line, "What to watch");
	assert_true(app_pager_next(&it, &line, &heading));
	assert_false(heading);
	assert_string_equal(line, "Watch the scores.");
	assert_true(app_pager_next(&it, &line, &heading));
	assert_string_equal(line, "");
	assert_true(app_pager_next(&it, &line, &heading));
	assert_true(heading);
	assert_string_equal(line, "At step 1");
	assert_true(app_pager_next(&it, &line, &heading));
	assert_int_equal(strlen(line), 15 * 5 - 1); /* 15 words fit in 78 */

	press(&app, "E");
	assert_true(app.pager);
	assert_int_equal(app.pager_top, 0);
	press(&app, "down,j,down");
	assert_int_equal(app.pager_top, 3);
	press(&app, "up");
	assert_int_equal(app.pager_top, 2);
	press(&app, "pgdn"); /* 26 lines, 22 a page: 4 is the last top */
	assert_int_equal(app.pager_top, 4);
	assert_int_equal(app_pager_first(&app, 26, 22), 4);
	press(&app, "home");
	assert_int_equal(app.pager_top, 0);
	press(&app, "end,pgup");
	assert_int_equal(app.pager_top, 0);
	press(&app, "G");
	assert_int_equal(app.pager_top, 4);
	/* A key it does not take does nothing but say so. */
	press(&app, "right,c");
	assert_int_equal(app.step, 0);
	assert_int_equal(app.compare, POLICY_FULL);
	assert_non_null(strstr(app.notice, "Esc, E or q closes"));
	/* Help over it, and back to it. */
	press(&app, "?");
	assert_true(app.help);
	press(&app, "esc");
	assert_false(app.help);
	assert_true(app.pager);
	/* q closes the pager, not the program. */
	assert_int_equal(app_key(&app, 'q'), APP_REDRAW);
	assert_false(app.pager);
	assert_true(app_key(&app, 'q') & APP_QUIT);

	/* At a step with a note, it opens at the note's heading, as far as
	 * the last page lets it: at 80x24 the last page begins at line 4. */
	press(&app, "5,enter,E");
	assert_int_equal(app.pager_top, 4);
	press(&app, "esc");
	app_set_screen(&app, 120, 6, false);
	press(&app, "E"); /* 2 + 6 x 3 lines at 118, 4 a page */
	assert_int_equal(app.pager_top, 2 + 4 * 3 + 1);
	press(&app, "end");
	assert_int_equal(app.pager_top, 20 - 4);
	app_done(&app);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_pager),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
