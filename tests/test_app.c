/*
 * Unit tests of the app's update function: keys in, state out.
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
#include "h2o/engine.h"
#include "h2o/keys.h"
#include "h2o/lessons.h"
#include "h2o/timeline.h"
#include "layered_fixture.h"
#include "scene_fixture.h"
#include "app_fixture.h"

static struct scene *scene30(void)
{
	return fixture_random(30, 4, 2, 2, 1);
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

/* r: the budgets the scene names, whatever the run opened with or the
 * budget keys made of them since, and the status line says so. */
static void test_reset_budgets(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	app_init(&app, sc, 3, 1, -1, POLICY_FULL);
	press(&app, "end,],},}");
	assert_int_equal(app.b.heavy, 4);
	assert_int_equal(app.b.recent, 3);
	press(&app, "r");
	assert_int_equal(app.step, 30);
	assert_int_equal(app.b.heavy, sc->heavy);
	assert_int_equal(app.b.recent, sc->recent);
	assert_int_equal(timeline_budget(app.tl)->heavy, 2);
	assert_int_equal(timeline_summary(app.tl, 30)->c[POLICY_H2O].m.tokens, 4);
	assert_non_null(strstr(app.notice, "scene's own, heavy 2 + recent 2"));
	press(&app, "r");
	assert_non_null(strstr(app.notice, "scene's own already"));
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
	assert_int_equal(app_key(&app, 'c'), APP_REDRAW); /* closes help */
	assert_false(app.help);
	assert_int_equal(app.compare, POLICY_FULL);
	/* The keys that step turn its pages; past the last page it closes. */
	press(&app, "?,right,space,left,pgdn,j");
	assert_true(app.help);
	assert_int_equal(app.help_page, 3);
	press(&app, "k,k,k,k,up");
	assert_int_equal(app.help_page, 0);
	press(&app, "right,right,right,right,right,right,right");
	assert_true(app.help); /* the last of APP_HELP_PAGES */
	assert_int_equal(app.help_page, APP_HELP_PAGES - 1);
	press(&app, "right");
	assert_false(app.help);
	assert_int_equal(app.step, 0);
	press(&app, "?");
	assert_int_equal(app.help_page, 0);
	assert_int_equal(app_key(&app, KEYC_ESC), APP_REDRAW);
	assert_false(app.help);
	assert_true(app_key(&app, 'q') & APP_QUIT);
	/* Esc never quits: with nothing open it does nothing at all, and
	 * dismissing a notice with it leaves the screen. */
	press(&app, "x");
	assert_true(app.notice[0] != '\0');
	assert_int_equal(app_key(&app, KEYC_ESC), APP_REDRAW);
	assert_true(app.notice[0] == '\0');
	assert_int_equal(app_key(&app, KEYC_ESC), APP_REDRAW);
	assert_int_equal(app_key(&app, KEYC_ESC), APP_REDRAW);
	assert_int_equal(app.step, 0);
	assert_false(app.help);
	/* The cache map is open until Esc closes it. */
	press(&app, "M");
	assert_true(app.map);
	assert_int_equal(app_key(&app, KEYC_ESC), APP_REDRAW);
	assert_false(app.map);
	/* One head: o opens no empty grid, it says why, as Tab does. */
	press(&app, "o");
	assert_false(app.overview);
	assert_non_null(strstr(app.notice, "one attention head"));
	app_done(&app);
	scene_free(sc);
}

/* Every key of APP_BINDINGS reaches its action's handler (app_keys.c's
 * table): none of them says it is bound to nothing, in any mode a key
 * before it left open. */
static void test_every_binding_has_a_handler(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	size_t count;
	const struct app_binding *b = app_bindings(&count);
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_FULL), 0);
	for (size_t i = 0; i < count; i++) {
		app.help = false;
		app.entering = ENTRY_NONE;
		app_key(&app, b[i].key);
		assert_null(strstr(app.notice, "is not bound"));
	}
	app_done(&app);
	scene_free(sc);
}

/* e hides and shows a lesson's text, E opens all of it in the pager (and
 * brings it back when hidden); a scene without one says so. */
static void test_lesson_text(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "e");
	assert_false(app.lesson_hidden);
	assert_true(app.notice[0] != '\0');
	press(&app, "E");
	assert_false(app.pager);
	app_done(&app);
	free(sc->watch);
	sc->watch = strdup("Watch the scores.");
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	assert_false(app.lesson_hidden);
	assert_false(app.pager);
	press(&app, "E");
	assert_true(app.pager);
	press(&app, "E");
	assert_false(app.pager);
	press(&app, "e");
	assert_true(app.lesson_hidden);
	press(&app, "E,esc");
	assert_false(app.pager);
	press(&app, "e");
	assert_false(app.lesson_hidden);
	assert_int_equal(app.step, 0);
	app_done(&app);
	scene_free(sc);
}

/* In a scene that teaches, the first budget change keeps what H2O did at
 * the opening budgets, for the step sentence to compare with; later
 * changes keep that, and a scene that does not teach keeps nothing. */
static void test_lesson_baseline(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "end,{");
	assert_null(app.baseline);
	app_done(&app);
	sc->lesson = true;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	double recall[31];
	int gone[30];
	for (int t = 1; t <= 30; t++)
		recall[t] = timeline_summary(app.tl, t)->c[POLICY_H2O].m.attn_recall;
	for (int pos = 0; pos < 30; pos++)
		gone[pos] = timeline_evicted_at(app.tl, POLICY_H2O, pos);
	press(&app, "end,{,{");
	assert_int_equal(app.b.recent, 0);
	assert_non_null(app.baseline);
	assert_int_equal(app.baseline->heavy, 2);
	assert_int_equal(app.baseline->recent, 2);
	assert_int_equal(app.baseline->built[0], 30);
	for (int t = 1; t <= 30; t++)
		assert_true(app.baseline->recall[t] == recall[t]);
	for (int pos = 0; pos < 30; pos++)
		assert_int_equal(app.baseline->evicted_at[pos], gone[pos]);
	app_done(&app);
	scene_free(sc);
}

/* . and , walk the lesson path: a lesson that cannot be loaded leaves the
 * scene shown, with a notice; a good one opens with its own budgets; off
 * the path and at its ends the keys say so. */
static void test_lesson_path(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	char dir[] = "scenes", bad[] = "no_such_lesson.json", good[] = "lesson_03_evict.json";
	char *files[] = {bad, bad, good};
	const struct lessons path = {dir, 3, files};
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_WINDOW);
	press(&app, ".");
	assert_non_null(strstr(app.notice, "not a lesson"));
	app_set_lessons(&app, &path, 0);
	press(&app, "comma");
	assert_non_null(strstr(app.notice, "is the first"));
	press(&app, "3,enter,.");
	assert_ptr_equal(app.scene, sc);
	assert_int_equal(app.lesson, 0);
	assert_int_equal(app.step, 3);
	assert_non_null(strstr(app.notice, "no_such_lesson.json"));
	app_set_lessons(&app, &path, 1);
	press(&app, ".");
	assert_int_equal(app.lesson, 2);
	assert_int_equal(app.step, 0);
	assert_int_equal(app.scene->n, 7);
	assert_int_equal(app.b.heavy, 2);
	assert_int_equal(app.compare, POLICY_WINDOW);
	press(&app, "end,.");
	assert_non_null(strstr(app.notice, "is the last"));
	assert_int_equal(app.step, 7);
	app_done(&app);
	scene_free(sc);
}

/* a hides the policy strip and v opens the vectors, on every lesson of
 * the path that has them: the next lesson keeps both, and one of weights
 * alone closes the vectors, v then saying why they cannot open. */
static void test_strip_vectors_keys(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	char dir[] = "scenes", weights[] = "lesson_01_heavy_recent.json",
	     qk[] = "lesson_05_qk.json", kv[] = "lesson_06_kv_cache.json";
	char *files[] = {weights, qk, kv, weights};
	const struct lessons path = {dir, 4, files};
	struct app app;
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_FULL), 0);
	app_set_lessons(&app, &path, 0);
	assert_false(app.strip_hidden);
	press(&app, "a,.");
	assert_int_equal(app.lesson, 1);
	assert_true(app.strip_hidden);
	assert_false(app.vectors);
	press(&app, "v");
	assert_true(app.vectors);
	press(&app, ".");
	assert_int_equal(app.lesson, 2);
	assert_true(app.vectors);
	assert_true(app.strip_hidden);
	press(&app, ".");
	assert_int_equal(app.lesson, 3);
	assert_false(app.vectors);
	press(&app, "v");
	assert_false(app.vectors);
	assert_non_null(strstr(app.notice, "no q, k or v rows"));
	press(&app, "a");
	assert_false(app.strip_hidden);
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
	/* Nothing is open now: Esc does nothing, and q is what quits. */
	assert_int_equal(app_key(&app, KEYC_ESC), APP_REDRAW);
	assert_int_equal(app.selected, -1);
	assert_true(app_key(&app, 'q') & APP_QUIT);
	app_done(&app);
	scene_free(sc);
}

/* The list the panels and the selection follow: every arrived position,
 * in sections, by position or by score. */
static void test_walk_lists(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	struct app app;
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "end");
	const struct app_list *l = &app.list;
	assert_int_equal(l->p, POLICY_H2O);
	assert_int_equal(l->len, 30);
	assert_int_equal(l->start[APP_SEC_RECENT] - l->start[APP_SEC_OLD], 2);
	assert_int_equal(l->start[APP_SEC_EVICTED] - l->start[APP_SEC_RECENT], 2);
	assert_int_equal(l->start[APP_SEC_COUNT] - l->start[APP_SEC_EVICTED], 26);
	for (int i = 0; i < l->len; i++)
		assert_int_equal(l->index[l->pos[i]], i);
	/* By position: kept ones ascending, evictions latest first. */
	for (int i = l->start[APP_SEC_OLD] + 1; i < l->start[APP_SEC_EVICTED]; i++)
		if (i != l->start[APP_SEC_RECENT])
			assert_true(l->pos[i] > l->pos[i - 1]);
	for (int i = l->start[APP_SEC_EVICTED] + 1; i < l->len; i++)
		assert_true(timeline_evicted_at(app.tl, POLICY_H2O, l->pos[i]) <=
		            timeline_evicted_at(app.tl, POLICY_H2O, l->pos[i - 1]));

	/* Walked, the far keys move through the list, not the steps. */
	press(&app, "w");
	assert_int_equal(app.walk, WALK_H2O);
	press(&app, "down");
	assert_int_equal(app.selected, l->pos[0]);
	press(&app, "pgdn");
	assert_int_equal(app.selected, l->pos[10]);
	press(&app, "end");
	assert_int_equal(app.selected, l->pos[29]);
	press(&app, "pgup,up");
	assert_int_equal(app.selected, l->pos[18]);
	press(&app, "home");
	assert_int_equal(app.selected, l->pos[0]);
	assert_int_equal(app.step, 30);

	/* By score: each section highest first; Down follows that order. */
	press(&app, "s");
	assert_int_equal(app.sort, SORT_SCORE);
	const double *score = engine_scores(app.shown, POLICY_H2O);
	const int *kept = engine_positions(app.shown, POLICY_H2O);
	for (int i = l->start[APP_SEC_OLD] + 1; i < l->start[APP_SEC_RECENT]; i++) {
		double a = 0, b = 0;
		for (int k = 0; k < engine_len(app.shown, POLICY_H2O); k++) {
			a = kept[k] == l->pos[i - 1] ? score[k] : a;
			b = kept[k] == l->pos[i] ? score[k] : b;
		}
		assert_true(a >= b);
	}
	for (int i = l->start[APP_SEC_EVICTED] + 1; i < l->len; i++)
		assert_true(timeline_eviction_of(app.tl, POLICY_H2O, l->pos[i - 1], 30)->score >=
		            timeline_eviction_of(app.tl, POLICY_H2O, l->pos[i], 30)->score);
	const int at = l->index[app.selected];
	press(&app, "down");
	assert_int_equal(l->index[app.selected], at + 1);

	/* The compared panel leads next: the full cache, every position. */
	press(&app, "w");
	assert_int_equal(app.walk, WALK_COMPARED);
	assert_int_equal(l->p, POLICY_FULL);
	assert_int_equal(l->start[APP_SEC_RECENT], 30);
	assert_int_equal(l->len, 30);
	press(&app, "c");
	assert_int_equal(l->p, POLICY_WINDOW);
	press(&app, "w");
	assert_int_equal(app.walk, WALK_NONE);
	assert_int_equal(l->p, POLICY_H2O);
	/* Esc leaves a walked list before it closes the inspector. */
	press(&app, "w,esc");
	assert_int_equal(app.walk, WALK_NONE);
	assert_true(app.selected >= 0);
	press(&app, "esc");
	assert_int_equal(app.selected, -1);
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

/* J and K go through the layers at the same head; Tab and Shift-Tab go
 * round the heads of the layer shown. */
static void test_layer_keys(void **state)
{
	(void)state;
	struct scene *sc = fixture_layered(12, 4, 2, 2, 3, 4, 2, 0, 7);
	struct app app;
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_FULL), 0);
	assert_int_equal(app.heads, 12);
	press(&app, "end,tab");
	assert_int_equal(app.head, 1);
	press(&app, "J");
	assert_int_equal(app.head, 5); /* layer 2, head 2 */
	assert_ptr_equal(app.tl, app.tls[5]);
	assert_int_equal(app.step, 12);
	press(&app, "J,J");
	assert_int_equal(app.head, 1); /* round past the last layer */
	press(&app, "K");
	assert_int_equal(app.head, 9);
	press(&app, "tab,tab,tab");
	assert_int_equal(app.head, 8); /* round within layer 3 */
	press(&app, "btab");
	assert_int_equal(app.head, 11);
	assert_int_equal(app.step, 12);
	app_done(&app);
	scene_free(sc);

	/* One layer: J says so, and Tab still works. */
	sc = fixture_layered(8, 4, 2, 2, 1, 4, 4, 0, 3);
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "J");
	assert_int_equal(app.head, 0);
	assert_non_null(strstr(app.notice, "one layer"));
	press(&app, "tab");
	assert_int_equal(app.head, 1);
	app_done(&app);
	scene_free(sc);
	/* One head a layer: Tab says to use J and K. */
	sc = fixture_layered(8, 4, 2, 2, 3, 1, 1, 0, 3);
	app_init(&app, sc, 2, 2, -1, POLICY_FULL);
	press(&app, "tab");
	assert_int_equal(app.head, 0);
	assert_non_null(strstr(app.notice, "J and K"));
	press(&app, "J");
	assert_int_equal(app.head, 1);
	app_done(&app);
	scene_free(sc);
}

/* The overview's cursor: arrows move it over layers x heads, stopping at
 * the edges; Enter opens the head under it; Esc leaves the head shown as
 * it was. Its whole-model figures count a kv head's cache once. */
static void test_overview_cursor(void **state)
{
	(void)state;
	struct scene *sc = fixture_layered(12, 4, 2, 2, 3, 4, 2, 0, 7);
	struct app app;
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_FULL), 0);
	press(&app, "end,tab,o");
	assert_true(app.overview);
	assert_int_equal(app.cursor, 1);
	press(&app, "down,right,right,right");
	assert_int_equal(app.cursor, 7); /* layer 2, the last head */
	assert_int_equal(app.step, 12);  /* the arrows did not step */
	press(&app, "down,down,left");
	assert_int_equal(app.cursor, 10);
	press(&app, "up,J");
	assert_int_equal(app.cursor, 10); /* J moves the cursor too */
	assert_int_equal(app.head, 1);
	press(&app, "esc");
	assert_false(app.overview);
	assert_int_equal(app.head, 1);
	press(&app, "o,K,tab,enter");
	assert_false(app.overview);
	assert_int_equal(app.head, 8 + 2); /* layer 3 (K from 1 wraps), head 3 */
	assert_ptr_equal(app.tl, app.tls[10]);

	/* Step 12 of 12 tokens at a budget of 4: every kv head holds 4, the
	 * full cache 12, counted once a kv head: 3 layers x 2. */
	press(&app, "o");
	assert_int_equal(app.overview_heads, 12);
	assert_int_equal(app.overview_total[POLICY_H2O].tokens, 3 * 2 * 4);
	assert_int_equal(app.overview_total[POLICY_FULL].tokens, 3 * 2 * 12);
	assert_int_equal(app.overview_total[POLICY_FULL].kv, 3 * 2 * 12 * 2 * 4);
	assert_true(app.overview_total[POLICY_FULL].out_err < 1e-9);
	assert_true(app.overview_total[POLICY_H2O].out_err > 0.0);
	double recall = 0.0;
	for (int h = 0; h < 12; h++)
		recall += timeline_summary(app.tls[h], 12)->c[POLICY_H2O].m.attn_recall;
	assert_true(fabs(app.overview_total[POLICY_H2O].attn_recall - recall / 12) < 1e-12);
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
	/* The separator of --keys has a name; other characters name themselves. */
	assert_int_equal(keys_parse("comma"), ',');
	assert_string_equal(keys_name(',', buf, sizeof buf), "comma");
	assert_int_equal(keys_parse("\xc3\xa9"), 0xE9);
	assert_string_equal(keys_name(0xE9, buf, sizeof buf), "\xc3\xa9");
	assert_int_equal(keys_parse("\xc3\xa9x"), KEYC_NONE);
	assert_int_equal(keys_parse("\xc2\x9b"), KEYC_NONE); /* a C1 control */
	/* Every new key has a --keys name that reads back to it. */
	size_t count;
	const struct app_binding *b = app_bindings(&count);
	for (size_t i = 0; i < count; i++)
		assert_int_equal(keys_parse(keys_name(b[i].key, buf, sizeof buf)), b[i].key);
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

/* The screen of some policies (--policies): its timelines compute those,
 * H2O and the full cache, and c cycles through those shown. */
static void test_policies_only(void **state)
{
	(void)state;
	struct scene *sc = scene30();
	const struct budget b = budget_scene(sc, 2, 2, -1);
	const unsigned shown = ENGINE_POLICY(POLICY_WINDOW) | ENGINE_POLICY(POLICY_TOVA);
	struct app app;
	assert_int_equal(app_init_only(&app, sc, &b, POLICY_WINDOW, false, shown), 0);
	press(&app, "end");
	const struct step_record *rec = app.shown_rec;
	assert_non_null(rec);
	for (int p = 0; p < POLICY_COUNT; p++) {
		const bool on = (shown | ENGINE_POLICY(POLICY_H2O) | ENGINE_POLICY(POLICY_FULL)) &
		                ENGINE_POLICY(p);
		/* The screen's seek leaves the full cache out (seek_lite). */
		if (p != POLICY_FULL)
			assert_int_equal(rec->c[p].n_attended > 0, on);
		assert_int_equal(timeline_summary(app.tl, 30)->c[p].m.tokens > 0, on);
	}
	press(&app, "c");
	assert_int_equal(app.compare, POLICY_TOVA);
	press(&app, "c");
	assert_int_equal(app.compare, POLICY_WINDOW);
	app_done(&app);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_policies_only),
	        cmocka_unit_test(test_stepping),
	        cmocka_unit_test(test_budgets_recompute_and_keep_step),
	        cmocka_unit_test(test_number_entry),
	        cmocka_unit_test(test_help_is_modal_and_quit),
	        cmocka_unit_test(test_playing),
	        cmocka_unit_test(test_selection),
	        cmocka_unit_test(test_walk_lists),
	        cmocka_unit_test(test_heat_scroll),
	        cmocka_unit_test(test_reset_budgets),
	        cmocka_unit_test(test_every_binding_has_help),
	        cmocka_unit_test(test_lesson_text),
	        cmocka_unit_test(test_lesson_baseline),
	        cmocka_unit_test(test_lesson_path),
	        cmocka_unit_test(test_background),
	        cmocka_unit_test(test_layer_keys),
	        cmocka_unit_test(test_overview_cursor),
	        cmocka_unit_test(test_every_binding_has_a_handler),
	        cmocka_unit_test(test_strip_vectors_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
