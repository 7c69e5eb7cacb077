/*
 * Unit tests of the app's update function: keys in, state out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "h2o/app.h"
#include "h2o/keys.h"
#include "h2o/timeline.h"
#include "scene_fixture.h"

static struct scene *scene30(void)
{
	return fixture_random(30, 4, 2, 2, 1);
}

static void press(struct app *app, const char *names)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", names);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		uint32_t key = keys_parse(tok);
		assert_int_not_equal(key, KEYC_NONE);
		app_key(app, key);
	}
}

static void test_stepping(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_FULL), 0);
	press(&app, "right,l,space");
	assert_int_equal(app.step, 3);
	press(&app, "left,h,backspace,left");
	assert_int_equal(app.step, 0);
	press(&app, "end");
	assert_int_equal(app.step, 30);
	press(&app, "right");
	assert_int_equal(app.step, 30);
	press(&app, "pgup,pgup");
	assert_int_equal(app.step, 10);
	press(&app, "home,pgdn,G");
	assert_int_equal(app.step, 30);
	press(&app, "g");
	assert_int_equal(app.step, 0);
	app_done(&app);
	scene_free(sc);
}

static void test_budgets_recompute_and_keep_step(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "end,]");
	assert_int_equal(app.step, 30);
	assert_int_equal(app.b.heavy, 3);
	assert_int_equal(timeline_budget(app.tl)->heavy, 3);
	assert_int_equal(timeline_summary(app.tl, 30)->c[POLICY_H2O].m.tokens, 5);
	press(&app, "},},{");
	assert_int_equal(app.b.recent, 3);
	press(&app, "[,[,[,{,{,{");
	/* heavy 0 + recent 0 is refused: one slot at least. */
	assert_int_equal(app.b.heavy + app.b.recent, 1);
	assert_true(app.notice[0] != '\0');
	app_done(&app);
	scene_free(sc);
}

static void test_number_entry(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "1,2,enter");
	assert_int_equal(app.step, 12);
	assert_false(app.entering);
	press(&app, ":,7,enter");
	assert_int_equal(app.step, 7);
	press(&app, "9,9,enter");
	assert_int_equal(app.step, 30); /* clamped, with a notice */
	assert_true(app.notice[0] != '\0');
	press(&app, "5,backspace,4,esc");
	assert_int_equal(app.step, 30);
	assert_false(app.entering);
	app_done(&app);
	scene_free(sc);
}

static void test_help_is_modal_and_quit(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "?");
	assert_true(app.help);
	assert_int_equal(app_key(&app, KEYC_RIGHT), APP_REDRAW); /* closes help */
	assert_false(app.help);
	assert_int_equal(app.step, 0);
	press(&app, "?");
	assert_int_equal(app_key(&app, KEYC_ESC), APP_REDRAW);
	assert_false(app.help);
	assert_true(app_key(&app, 'q') & APP_QUIT);
	assert_true(app_key(&app, KEYC_ESC) & APP_QUIT);
	app_done(&app);
	scene_free(sc);
}

static void test_playing(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	assert_int_equal(app_tick(&app), 0); /* not playing */
	press(&app, "p");
	assert_true(app.playing);
	const int before = app_tick_ms(&app);
	press(&app, "+");
	assert_true(app_tick_ms(&app) < before);
	for (int i = 0; i < 40; i++)
		app_tick(&app);
	assert_int_equal(app.step, 30);
	assert_false(app.playing); /* stops at the end */
	press(&app, "p");          /* and plays again from the start */
	assert_int_equal(app.step, 0);
	app_done(&app);
	scene_free(sc);
}

static void test_selection(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "down");
	assert_int_equal(app.selected, -1); /* nothing has arrived */
	assert_true(app.notice[0] != '\0');
	press(&app, "end,down");
	/* The panel's first row: the lowest kept heavy position. */
	const int first = app.selected;
	assert_true(first >= 0);
	assert_int_equal(timeline_region(app.tl, POLICY_H2O, 30, first), REGION_OLD);
	press(&app, "j,k");
	assert_int_equal(app.selected, first);
	press(&app, "k");
	assert_int_equal(app.selected, first); /* clamped at the top */
	/* Selection follows the token when stepping, even once evicted. */
	press(&app, "home");
	assert_int_equal(app.selected, first);
	press(&app, "f");
	assert_int_equal(app.heat_anchor, first);
	press(&app, "esc");
	assert_int_equal(app.selected, -1);
	assert_false(app_key(&app, KEYC_ESC) == APP_REDRAW); /* now Esc quits */
	app_done(&app);
	scene_free(sc);
}

static void test_heat_scroll(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "end,<");
	assert_int_equal(app.heat_anchor, 19);
	press(&app, "<,>");
	assert_int_equal(app.heat_anchor, 19);
	press(&app, ">");
	assert_int_equal(app.heat_anchor, -1); /* caught up: follows the step */
	app_done(&app);
	scene_free(sc);
}

static void test_every_binding_has_help(void **state)
{
	(void)state;
	for (int a = ACT_NONE + 1; a < ACT_COUNT; a++)
		assert_true(app_action_help((enum app_action)a)[0] != '\0');
	assert_int_equal(app_action_of(KEYC_RIGHT), ACT_NEXT);
	assert_int_equal(app_action_of('x'), ACT_NONE);
	char buf[16];
	assert_string_equal(keys_name(KEYC_PGDN, buf, sizeof buf), "pgdn");
	assert_string_equal(keys_name(' ', buf, sizeof buf), "space");
	assert_int_equal(keys_parse("]"), ']');
	assert_int_equal(keys_parse("warp"), KEYC_NONE);
}

/* An app whose timelines build in the background: a step not built yet
 * becomes the goal, ticks follow it, and once built the app is where the
 * keys would have taken it at once. */
static void test_background(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(4000, 32, 20, 20, 5);
	struct app app;
	assert_int_equal(app_init_background(&app, sc, 20, 20, -1, POLICY_FULL), 0);
	assert_true(app_ticking(&app));
	press(&app, "end");
	assert_true(app.step <= app_built(&app));
	assert_true(app.goal == 4000 || app.step == 4000);
	while (app_ticking(&app)) {
		const int before = app.step;
		app_tick(&app);
		assert_true(app.step >= before && app.step <= app_built(&app));
	}
	assert_false(app_building(&app));
	assert_int_equal(app_built(&app), 4000);
	assert_int_equal(app.step, 4000);
	assert_int_equal(app.goal, -1);
	/* A new budget builds again, and comes back to the same step. */
	press(&app, "]");
	assert_int_equal(app.b.heavy, 21);
	while (app_ticking(&app))
		app_tick(&app);
	assert_int_equal(app.step, 4000);
	press(&app, "home,right,right");
	assert_int_equal(app.step, 2);
	app_done(&app);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_stepping),
	        cmocka_unit_test(test_budgets_recompute_and_keep_step),
	        cmocka_unit_test(test_number_entry),
	        cmocka_unit_test(test_help_is_modal_and_quit),
	        cmocka_unit_test(test_playing),
	        cmocka_unit_test(test_selection),
	        cmocka_unit_test(test_heat_scroll),
	        cmocka_unit_test(test_every_binding_has_help),
	        cmocka_unit_test(test_background),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
