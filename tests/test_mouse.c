/*
 * Unit tests of the mouse: view_pick against drawn frames (what it names
 * at a cell is what the frame shows there), and app_mouse (a click and the
 * wheel do what the keys they stand for do).
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
#include "h2o/frame.h"
#include "h2o/keys.h"
#include "h2o/scene.h"
#include "h2o/timeline.h"
#include "h2o/view.h"
#include "app_fixture.h"

static struct frame *draw(const struct app *app, int cols, int rows)
{
	struct frame *f = frame_new(cols, rows, false);
	assert_non_null(f);
	view_draw(app, f);
	return f;
}

/* Cells X0 .. X1 - 1 of row Y as text (ASCII; anything else a '?'). */
static void row_text(const struct frame *f, int y, int x0, int x1, char *buf, size_t size)
{
	size_t len = 0;
	for (int x = x0; x < x1 && len + 1 < size; x++) {
		const uint32_t cp = frame_cell_const(f, x, y)->cp;
		buf[len++] = cp >= ' ' && cp < 0x7F ? (char)cp : cp == 0 ? ' ' : '?';
	}
	buf[len] = '\0';
}

/* "POS TEXT" as a cache row shows a token: its position, then the start
 * of its text (the column may cut the text). */
static void token_label(const struct scene *sc, int pos, char *buf, size_t size)
{
	snprintf(buf, size, " %d %.4s", pos, sc->text[pos]);
}

static bool is_heat(uint8_t style)
{
	return style >= STYLE_HEAT0 && style <= STYLE_HEAT7;
}

/* Every cell of the frame of APP at COLS x ROWS, picked: a token's row
 * shows that token's position and text in the half picked; a heat cell
 * drawn in a heat style is a weight the timeline has at the step and
 * position picked, its number (where printed) that weight; and every
 * token row of the cache panels picks its token. Returns the tokens and
 * heat cells seen. */
static int check_frame(const struct app *app, int cols, int rows, int *heat_cells)
{
	struct frame *f = draw(app, cols, rows);
	const int split = cols / 2;
	int tokens = 0;
	*heat_cells = 0;
	for (int y = 0; y < rows; y++) {
		for (int x = 0; x < cols; x++) {
			const struct app_spot s = view_pick(app, f, y, x);
			char half[512], want[64];
			row_text(f, y, x < split ? 0 : split + 1, x < split ? split : cols, half,
			         sizeof half);
			if (s.kind == SPOT_TOKEN) {
				assert_in_range(s.pos, 0, app->step - 1);
				token_label(app->scene, s.pos, want, sizeof want);
				/* A cache row, or the heat rows' header (its
				 * policy's name first). */
				if (!strstr(half, want) && strncmp(half + 1, "h2o", 3) != 0 &&
				    strncmp(half + 1, policies[app->compare]->name,
				            strlen(policies[app->compare]->name)) != 0)
					fail_msg("row %d col %d picks %d, but shows \"%s\"", y, x,
					         s.pos, half);
				tokens++;
			}
			const struct cell *c = frame_cell_const(f, x, y);
			if (s.kind == SPOT_HEAT && s.pos >= 0 && is_heat(c->style) &&
			    c->cp != ' ' && (c->cp < '0' || c->cp > '9') && c->cp != '.') {
				/* A heat glyph: the weight it was drawn for. */
				const double w = timeline_weight(app->tl, s.p, s.step, s.pos);
				if (w < 0.0)
					fail_msg("row %d col %d: a heat glyph at step %d, position "
					         "%d, which the cache did not attend",
					         y, x, s.step, s.pos);
				char drawn[8], own[16];
				row_text(f, y, x + 1, x + 5 < cols ? x + 5 : cols, drawn,
				         sizeof drawn);
				snprintf(own, sizeof own, "%.2f", w);
				if (drawn[0] >= '0' && drawn[0] <= '9')
					assert_string_equal(drawn, own);
				/* Its row's label names the step's token. */
				const struct app_spot label = view_pick(app, f, y, 2);
				assert_int_equal(label.kind, SPOT_HEAT);
				assert_int_equal(label.step, s.step);
				assert_int_equal(label.pos, -1);
				char left[512];
				row_text(f, y, 0, split, left, sizeof left);
				snprintf(want, sizeof want, " %d %.4s", s.step - 1,
				         app->scene->text[s.step - 1]);
				if (!strstr(left, want))
					fail_msg("row %d: step %d's label is not in \"%s\"", y,
					         s.step, left);
				(*heat_cells)++;
			}
		}
	}
	/* The other way round: every token's row picks it, at its text. */
	int rows_seen = 0;
	for (int y = 3; y < rows; y++) {
		char left[512];
		row_text(f, y, 0, split, left, sizeof left);
		for (int pos = 0; pos < app->step; pos++) {
			char want[64];
			token_label(app->scene, pos, want, sizeof want);
			const char *at = strstr(left, want);
			/* In the cache panels (the inspector's lines name
			 * tokens too). */
			const enum app_spot_kind row_kind = view_pick(app, f, y, 0).kind;
			if (!at || (row_kind != SPOT_PANEL && row_kind != SPOT_TOKEN))
				continue;
			const int x = (int)(at - left) + (int)strlen(want) - 1;
			const struct app_spot s = view_pick(app, f, y, x);
			rows_seen++;
			if (s.kind != SPOT_TOKEN || s.pos != pos)
				fail_msg("%dx%d, step %d: row %d shows token %d at column %d, "
				         "which picks %d (kind %d): \"%s\"",
				         cols, rows, app->step, y, pos, x, s.pos, (int)s.kind,
				         left);
		}
	}
	assert_true(rows_seen > 0);
	frame_free(f);
	return tokens;
}

static void test_pick_matches_frame(void **state)
{
	(void)state;
	static const struct {
		const char *scene, *keys;
	} cases[] = {
	        {"scenes/cat_sat.json", "right,right,right,right,right,right"},
	        {"scenes/cat_sat.json", "end,j,j,w"},
	        {"scenes/cat_sat.json", "right,right,right,right,right,c,c"},
	        {"scenes/lesson_03_evict.json", "end"},
	        {"scenes/story.json", "pgdn,pgdn,pgdn,pgdn"},
	        {"scenes/story.json", "pgdn,pgdn,pgdn,pgdn,j,w,s"},
	};
	static const struct {
		int cols, rows;
	} sizes[] = {{80, 24}, {120, 36}, {200, 60}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct scene *sc = load(cases[i].scene);
		struct app app;
		assert_int_equal(app_init(&app, sc, sc->heavy, sc->recent, -1, POLICY_FULL), 0);
		press(&app, cases[i].keys);
		/* A long scene's pick lays out its lists for every cell:
		 * one size is enough there. */
		const size_t count =
		        strstr(cases[i].scene, "story") ? 1 : sizeof sizes / sizeof sizes[0];
		for (size_t k = 0; k < count; k++) {
			int heat;
			const int tokens = check_frame(&app, sizes[k].cols, sizes[k].rows, &heat);
			/* Not vacuous: the frame had tokens and heat to pick. */
			assert_true(tokens > 0);
			if (app.selected < 0 || sizes[k].cols >= 120)
				assert_true(heat > 0);
		}
		app_done(&app);
		scene_free(sc);
	}
}

static struct app_spot spot(enum app_spot_kind kind, enum policy_id p, int pos, int step)
{
	return (struct app_spot){.kind = kind, .p = p, .pos = pos, .step = step};
}

/* A click on a token selects it (the inspector's token), as Up and Down
 * would; one on a token not arrived yet, or on nothing, changes nothing. */
static void test_click_selects(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat.json");
	struct app app;
	assert_int_equal(app_init(&app, sc, sc->heavy, sc->recent, -1, POLICY_FULL), 0);
	press(&app, "right,right,right,right");
	struct app_spot at = spot(SPOT_TOKEN, POLICY_FULL, 2, -1);
	assert_true(app_mouse(&app, APP_MOUSE_CLICK, &at) & APP_REDRAW);
	assert_int_equal(app.selected, 2);
	assert_int_equal(app.step, 4);
	at.pos = 5; /* not arrived at step 4 */
	assert_int_equal(app_mouse(&app, APP_MOUSE_CLICK, &at), 0);
	assert_int_equal(app.selected, 2);
	at = spot(SPOT_NONE, POLICY_H2O, -1, -1);
	assert_int_equal(app_mouse(&app, APP_MOUSE_CLICK, &at), 0);
	assert_int_equal(app.selected, 2);
	/* A click ends typing, and closes the help, doing nothing else. */
	press(&app, "1");
	at = spot(SPOT_TOKEN, POLICY_H2O, 0, -1);
	assert_true(app_mouse(&app, APP_MOUSE_CLICK, &at) & APP_REDRAW);
	assert_int_equal(app.entering, ENTRY_NONE);
	assert_int_equal(app.selected, 2);
	press(&app, "?");
	assert_true(app_mouse(&app, APP_MOUSE_CLICK, &at) & APP_REDRAW);
	assert_false(app.help);
	assert_int_equal(app.selected, 2);
	app_done(&app);
	scene_free(sc);
}

/* A heat cell goes to its row's step and selects its column's position;
 * a row's label goes to the step alone. */
static void test_click_heat(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat.json");
	struct app app;
	assert_int_equal(app_init(&app, sc, sc->heavy, sc->recent, -1, POLICY_FULL), 0);
	press(&app, "end");
	struct app_spot at = spot(SPOT_HEAT, POLICY_H2O, 1, 3);
	assert_true(app_mouse(&app, APP_MOUSE_CLICK, &at) & APP_REDRAW);
	assert_int_equal(app.step, 3);
	assert_int_equal(app.selected, 1);
	/* The view reads the step gone to (the app sought it). */
	assert_non_null(app.shown_rec);
	assert_int_equal(app.list.step, 3);
	at = spot(SPOT_HEAT, POLICY_FULL, -1, 5);
	app_mouse(&app, APP_MOUSE_CLICK, &at);
	assert_int_equal(app.step, 5);
	assert_int_equal(app.selected, 1);
	/* A gap right of the step's own column: the step, nothing selected. */
	press(&app, "esc");
	at = spot(SPOT_HEAT, POLICY_H2O, 6, 2);
	app_mouse(&app, APP_MOUSE_CLICK, &at);
	assert_int_equal(app.step, 2);
	assert_int_equal(app.selected, -1);
	app_done(&app);
	scene_free(sc);
}

/* The wheel steps; over a walked list it moves the selection; over the
 * help it turns the pages. */
static void test_wheel(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat.json");
	struct app app;
	assert_int_equal(app_init(&app, sc, sc->heavy, sc->recent, -1, POLICY_FULL), 0);
	const struct app_spot none = spot(SPOT_NONE, POLICY_H2O, -1, -1);
	const struct app_spot list = spot(SPOT_PANEL, POLICY_H2O, -1, -1);
	app_mouse(&app, APP_MOUSE_WHEEL_DOWN, &none);
	app_mouse(&app, APP_MOUSE_WHEEL_DOWN, &list);
	assert_int_equal(app.step, 2);
	assert_true(app_mouse(&app, APP_MOUSE_WHEEL_UP, &none) & APP_REDRAW);
	assert_int_equal(app.step, 1);
	press(&app, "end,w");
	assert_int_equal(app.walk, WALK_H2O);
	app_mouse(&app, APP_MOUSE_WHEEL_DOWN, &list);
	const int first = app.selected;
	assert_true(first >= 0);
	app_mouse(&app, APP_MOUSE_WHEEL_DOWN, &list);
	assert_int_equal(app.list.index[app.selected], app.list.index[first] + 1);
	app_mouse(&app, APP_MOUSE_WHEEL_UP, &list);
	assert_int_equal(app.selected, first);
	assert_int_equal(app.step, sc->n);
	/* Away from the list, the wheel still steps. */
	app_mouse(&app, APP_MOUSE_WHEEL_UP, &none);
	assert_int_equal(app.step, sc->n - 1);
	press(&app, "?");
	const struct app_spot help = spot(SPOT_HELP, POLICY_H2O, -1, -1);
	app_mouse(&app, APP_MOUSE_WHEEL_DOWN, &help);
	assert_true(app.help);
	assert_int_equal(app.help_page, 1);
	app_mouse(&app, APP_MOUSE_WHEEL_UP, &help);
	assert_int_equal(app.help_page, 0);
	assert_int_equal(app.step, sc->n - 1);
	app_done(&app);
	scene_free(sc);
}

/* --keys' names of the mouse. */
static void test_mouse_names(void **state)
{
	(void)state;
	struct key_mouse m;
	assert_true(keys_parse_mouse("click:7:12", &m));
	assert_int_equal(m.what, APP_MOUSE_CLICK);
	assert_int_equal(m.row, 7);
	assert_int_equal(m.col, 12);
	assert_true(keys_parse_mouse("wheel-up", &m));
	assert_int_equal(m.what, APP_MOUSE_WHEEL_UP);
	assert_int_equal(m.row, 0);
	assert_true(keys_parse_mouse("wheel-down:3:4", &m));
	assert_int_equal(m.what, APP_MOUSE_WHEEL_DOWN);
	assert_int_equal(m.col, 4);
	static const char *const bad[] = {
	        "click",      "click:7", "click:0:3",  "click:7:",     "click:a:3",
	        "click:7:3:", "wheel",   "clicks:1:1", "click:12345:1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (keys_parse_mouse(bad[i], &m))
			fail_msg("\"%s\" taken for a mouse event", bad[i]);
	assert_int_equal(keys_parse("click:1:1"), KEYC_NONE);
}

/* Clicks beyond the main panels: a cell of the cache map picks the first
 * of its positions, on H2O's band or the compared one's; a head of the
 * overview's grid moves its cursor, and a column of a head's row by
 * position selects that column's first position too. */
static void test_click_panels(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat.json");
	struct app app;
	assert_int_equal(app_init(&app, sc, sc->heavy, sc->recent, -1, POLICY_FULL), 0);
	press(&app, "right,right,right,right,right,M");
	struct frame *f = draw(&app, 80, 24);
	char text[96];
	row_text(f, 14, 0, 16, text, sizeof text);
	assert_string_equal(text, " h2o       HH?RR");
	for (int x = 11; x < 16; x++) {
		struct app_spot s = view_pick(&app, f, 14, x);
		assert_int_equal(s.kind, SPOT_TOKEN);
		assert_int_equal(s.pos, x - 11);
		s = view_pick(&app, f, 16, x); /* the full cache's band */
		assert_int_equal(s.kind, SPOT_TOKEN);
		assert_int_equal(s.p, POLICY_FULL);
		assert_int_equal(s.pos, x - 11);
	}
	assert_int_equal(view_pick(&app, f, 14, 18).kind, SPOT_NONE); /* past the scene */
	/* A position not arrived yet is picked, and a click on it does
	 * nothing. */
	struct app_spot later = view_pick(&app, f, 14, 16);
	assert_int_equal(later.pos, 5);
	assert_int_equal(app_mouse(&app, APP_MOUSE_CLICK, &later), 0);
	assert_int_equal(view_pick(&app, f, 14, 5).kind, SPOT_NONE); /* the label */
	struct app_spot at = view_pick(&app, f, 14, 12);
	assert_true(app_mouse(&app, APP_MOUSE_CLICK, &at) & APP_REDRAW);
	assert_int_equal(app.selected, 1);
	frame_free(f);
	app_done(&app);
	scene_free(sc);

	sc = load("scenes/heads_8.json");
	assert_int_equal(app_init(&app, sc, sc->heavy, sc->recent, -1, POLICY_FULL), 0);
	press(&app, "end,o");
	f = draw(&app, 80, 24);
	row_text(f, 5, 0, 6, text, sizeof text);
	assert_string_equal(text, " ? L1 ");
	/* The grid's cells: a glyph and the recall, a gap between. */
	for (int h = 0; h < 8; h++)
		for (int x = 8 + 6 * h; x < 13 + 6 * h; x++) {
			const struct app_spot s = view_pick(&app, f, 5, x);
			assert_int_equal(s.kind, SPOT_HEAD);
			assert_int_equal(s.head, h);
		}
	assert_int_equal(view_pick(&app, f, 5, 13).kind, SPOT_NONE);
	at = view_pick(&app, f, 5, 21);
	assert_true(app_mouse(&app, APP_MOUSE_CLICK, &at) & APP_REDRAW);
	assert_int_equal(app.cursor, 2);
	assert_int_equal(app.selected, -1);
	frame_free(f);
	/* The rows by position: head 3's row, a column of it. */
	f = draw(&app, 80, 24);
	row_text(f, 14, 0, 10, text, sizeof text);
	assert_string_equal(text, "  3 topic ");
	at = view_pick(&app, f, 14, 29);
	assert_int_equal(at.kind, SPOT_HEAD);
	assert_int_equal(at.head, 2);
	assert_true(at.pos > 0 && at.pos < 400);
	assert_true(app_mouse(&app, APP_MOUSE_CLICK, &at) & APP_REDRAW);
	assert_int_equal(app.selected, at.pos);
	/* Outside the overview, no head is moved to. */
	press(&app, "o");
	at = (struct app_spot){
	        .kind = SPOT_HEAD, .p = POLICY_H2O, .pos = -1, .step = -1, .head = 5};
	const int cursor = app.cursor;
	assert_int_equal(app_mouse(&app, APP_MOUSE_CLICK, &at), 0);
	assert_int_equal(app.cursor, cursor);
	frame_free(f);
	app_done(&app);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_pick_matches_frame), cmocka_unit_test(test_click_selects),
	        cmocka_unit_test(test_click_heat),         cmocka_unit_test(test_wheel),
	        cmocka_unit_test(test_mouse_names),        cmocka_unit_test(test_click_panels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
