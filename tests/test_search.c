/*
 * Unit tests of the search over token text (app_list.c): matches within
 * and across tokens, n and N, the whole match selected, and going to a
 * position.
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
#include "scene_fixture.h"
#include "app_fixture.h"

static struct scene *scene30(void)
{
	return fixture_random(30, 4, 2, 2, 1);
}

static void set_text(struct scene *sc, int pos, const char *text)
{
	free(sc->text[pos]);
	sc->text[pos] = fixture_strdup(text);
}

static void test_search_and_position(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	set_text(sc, 3, "Password");
	set_text(sc, 20, " pass");
	set_text(sc, 25, "word");
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "/,p,a,s,s,enter");
	assert_int_equal(app.selected, -1); /* nothing has arrived */
	assert_non_null(strstr(app.notice, "position 3"));
	assert_string_equal(app.query, "pass");

	press(&app, "end,/,enter"); /* Enter alone: the last search again */
	assert_int_equal(app.walk, WALK_H2O);
	const int first = app.selected;
	assert_true(first == 3 || first == 20);
	assert_non_null(strstr(app.notice, "match 1 of 2"));
	press(&app, "n");
	assert_int_equal(app.selected, first == 3 ? 20 : 3);
	press(&app, "n"); /* round again */
	assert_int_equal(app.selected, first);
	press(&app, "N");
	assert_int_equal(app.selected, first == 3 ? 20 : 3);
	assert_true(app_matches(&app, 3, "PASS"));
	assert_true(app_matches(&app, 3, "WORDt")); /* on into position 4 */
	assert_false(app_matches(&app, 25, "pass"));
	press(&app, "/,x,y,z,enter");
	assert_non_null(strstr(app.notice, "matches no token"));

	/* Typing: Backspace takes a character back, Esc drops the text. */
	press(&app, "/,w,o,backspace,esc");
	assert_int_equal(app.entering, ENTRY_NONE);
	assert_string_equal(app.query, "xyz");

	press(&app, "#,2,5,enter");
	assert_int_equal(app.selected, 25);
	press(&app, "#,3,0,enter");
	assert_int_equal(app.selected, 25); /* no such position */
	assert_true(app.notice[0] != '\0');
	press(&app, "esc,esc,1,0,enter,#,2,0,enter");
	assert_int_equal(app.step, 10);
	assert_int_equal(app.selected, -1); /* position 20 arrives at step 21 */
	assert_non_null(strstr(app.notice, "step 21"));
	/* Letters typed into a search are not keys. */
	press(&app, "/,q,enter");
	assert_int_equal(app.step, 10);
	app_done(&app);
	scene_free(sc);
}

/* A word the model split into pieces is found whole and selected whole,
 * from the piece it starts in, and the notice names the tokens it runs
 * over; any other way of selecting selects one token again. */
static void test_search_across_tokens(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	set_text(sc, 5, " b");
	set_text(sc, 6, "o");
	set_text(sc, 7, "at");
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	assert_true(app_matches(&app, 5, "boat"));
	assert_true(app_matches(&app, 5, "B"));
	assert_false(app_matches(&app, 6, "boat"));
	assert_true(app_matches(&app, 6, "OAT"));
	assert_true(app_matches(&app, 4, "t b")); /* "t" " b" */
	assert_false(app_matches(&app, 4, "tb"));
	assert_true(app_matches(&app, 7, "att"));  /* into the last "t"s */
	assert_false(app_matches(&app, 29, "tt")); /* nothing after the last */
	press(&app, "end,/,b,o,a,t,enter");
	assert_int_equal(app.selected, 5);
	assert_non_null(strstr(app.notice, "match 1 of 1"));
	assert_non_null(strstr(app.notice, "match 1 of 1, 3 tokens 5-7 ("));
	assert_int_equal(app_selection_len(&app), 3);
	assert_false(app_selects(&app, 4));
	assert_true(app_selects(&app, 5) && app_selects(&app, 6) && app_selects(&app, 7));
	assert_false(app_selects(&app, 8));
	press(&app, "j");
	assert_int_equal(app_selection_len(&app), 1);
	press(&app, "n");
	assert_int_equal(app_selection_len(&app), 3);
	press(&app, "#,6,enter");
	assert_int_equal(app_selection_len(&app), 1);
	/* Before its last piece arrives, a match is still found where it
	 * starts. */
	press(&app, "esc,esc,7,enter,/,o,a,t,enter");
	assert_int_equal(app.selected, 6);
	assert_int_equal(app_selection_len(&app), 1); /* "at" has not arrived */
	app_done(&app);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_search_and_position),
	        cmocka_unit_test(test_search_across_tokens),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
