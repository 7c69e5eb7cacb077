/*
 * Unit tests of the view: what every frame keeps, whatever its size. The
 * goldens hold exact frames; these hold the rules behind them: a weight has
 * one style and one glyph everywhere (an absolute scale), the two heat
 * halves line up, and the cache map shows every position.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/app.h"
#include "h2o/budget.h"
#include "h2o/engine.h"
#include "h2o/frame.h"
#include "h2o/keys.h"
#include "h2o/scene.h"
#include "h2o/timeline.h"
#include "h2o/view.h"
#include "layered_fixture.h"
#include "app_fixture.h"

static const struct {
	int cols, rows;
} sizes[] = {{80, 24}, {120, 36}, {200, 60}, {300, 80}};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])

static struct frame *draw(const struct app *app, int cols, int rows, bool ascii)
{
	struct frame *f = frame_new(cols, rows, ascii);
	assert_non_null(f);
	view_draw(app, f);
	return f;
}

/* app_init beside the full cache, with the timelines of H2O and the full
 * cache only: the two panels, the heat, the map and the overview draw
 * those two alone, cell for cell as with every policy run; the others
 * show only in the strip's row, which the tests that use this do not
 * read, and took most of their time. */
static void init_two(struct app *app, const struct scene *sc, int heavy, int recent)
{
	const struct budget b = budget_scene(sc, heavy, recent, -1);
	assert_int_equal(app_init_only(app, sc, &b, POLICY_FULL, false,
	                               ENGINE_POLICY(POLICY_H2O) | ENGINE_POLICY(POLICY_FULL)),
	                 0);
}

static bool is_heat(uint8_t style)
{
	return style >= STYLE_HEAT0 && style <= STYLE_HEAT7;
}

/* A heat-styled cell is its level's glyph, or part of a number or an
 * arrow drawn in that level's style: never another level's glyph. */
static void check_heat_glyphs(const struct frame *f)
{
	for (int y = 0; y < f->rows; y++)
		for (int x = 0; x < f->cols; x++) {
			const struct cell *c = frame_cell_const(f, x, y);
			if (!is_heat(c->style))
				continue;
			const int level = c->style - STYLE_HEAT0;
			const uint32_t own =
			        frame_glyph(f, (enum frame_glyph)(GLYPH_HEAT0 + level));
			const bool number = (c->cp >= '0' && c->cp <= '9') || c->cp == '.';
			const bool arrow = c->cp == frame_glyph(f, GLYPH_MORE_LEFT) ||
			                   c->cp == frame_glyph(f, GLYPH_MORE_RIGHT);
			if (c->cp != own && !number && !arrow)
				fail_msg("cell %d,%d: U+%04X in heat level %d, whose glyph is "
				         "U+%04X",
				         x, y, (unsigned)c->cp, level, (unsigned)own);
		}
}

/* The level a weight printed as W (two decimals) may have: the scale's
 * edges, 1 and 3 in each decade, give or take the rounding. */
static bool level_fits(double w, int level)
{
	static const double edges[] = {0.0, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 2.0};
	return w + 0.005 >= edges[level] && w - 0.005 < edges[level + 1];
}

/* Every printed heat number "G0.28" is in its style's level. */
static int check_heat_numbers(const struct frame *f)
{
	int seen = 0;
	for (int y = 0; y < f->rows; y++)
		for (int x = 0; x + 4 < f->cols; x++) {
			const struct cell *c = frame_cell_const(f, x, y);
			if (!is_heat(c->style) || !(c->cp >= '0' && c->cp <= '9'))
				continue;
			if (x > 0 && is_heat(frame_cell_const(f, x - 1, y)->style) &&
			    frame_cell_const(f, x - 1, y)->cp >= '0' &&
			    frame_cell_const(f, x - 1, y)->cp <= '9')
				continue; /* inside a number */
			char buf[8] = {0};
			for (int i = 0; i < 4; i++)
				buf[i] = (char)frame_cell_const(f, x + i, y)->cp;
			if (buf[1] != '.')
				continue;
			assert_true(level_fits(atof(buf), c->style - STYLE_HEAT0));
			seen++;
		}
	return seen;
}

static void test_heat_one_scale(void **state)
{
	(void)state;
	const char *scenes[] = {"scenes/cat_sat.json", "scenes/long_sink.json",
	                        "scenes/needle.json"};
	for (size_t s = 0; s < sizeof scenes / sizeof scenes[0]; s++) {
		struct scene *sc = load(scenes[s]);
		struct app app;
		init_two(&app, sc, 0, 64);
		press(&app, s == 0 ? "end" : "6,6,enter");
		int numbers = 0;
		for (size_t i = 0; i < SIZE_COUNT; i++)
			for (int ascii = 0; ascii < 2; ascii++) {
				struct frame *f = draw(&app, sizes[i].cols, sizes[i].rows, ascii);
				check_heat_glyphs(f);
				numbers += check_heat_numbers(f);
				frame_free(f);
			}
		/* The worked example prints its weights; the long scenes their
		 * off-screen masses. */
		assert_true(numbers > 0);
		app_done(&app);
		scene_free(sc);
	}
}

/* The text of row Y from column X, W cells, as UTF-32 for comparison. */
static void row_cells(const struct frame *f, int x, int y, int w, struct cell *out)
{
	for (int i = 0; i < w; i++)
		out[i] = *frame_cell_const(f, x + i, y);
}

/* The heat rule: the row whose text starts with "── attention". */
static int heat_rule_row(const struct frame *f)
{
	for (int y = 0; y < f->rows; y++) {
		const struct cell *c = frame_cell_const(f, 3, y);
		if (c->cp == 'a' && frame_cell_const(f, 4, y)->cp == 't' &&
		    frame_cell_const(f, 5, y)->cp == 't')
			return y;
	}
	return -1;
}

/* Before any eviction H2O attends exactly as the full cache: each heat row
 * of the left half is the right half's, cell for cell, past the cache's
 * name. After evictions, the headers (position numbers, pinned columns)
 * still line up. */
static void test_heat_halves_align(void **state)
{
	(void)state;
	const struct {
		const char *scene, *keys;
		bool same_rows;
	} cases[] = {
	        {"scenes/cat_sat.json", "right,right,right,right", true},
	        {"scenes/long_topic.json", "end", false},
	        {"scenes/needle.json", "1,8,0,1,enter", false},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct scene *sc = load(cases[k].scene);
		struct app app;
		init_two(&app, sc, sc->heavy, sc->recent);
		press(&app, cases[k].keys);
		for (size_t i = 0; i < SIZE_COUNT; i++) {
			struct frame *f = draw(&app, sizes[i].cols, sizes[i].rows, false);
			const int split = f->cols / 2, w = f->cols - split - 1;
			const int rule = heat_rule_row(f);
			assert_true(rule > 0);
			struct cell left[300], right[300];
			for (int y = rule + 1; y < f->rows - 4; y++) {
				if (frame_cell_const(f, split, y)->cp != 0x2502)
					break;
				/* Past the name or the step label (10 cells). */
				row_cells(f, 10, y, w - 10, left);
				row_cells(f, split + 1 + 10, y, w - 10, right);
				const bool header = y == rule + 1;
				if (!header && !cases[k].same_rows)
					continue;
				for (int x = 0; x < w - 10; x++) {
					assert_int_equal(left[x].cp, right[x].cp);
					if (!header)
						assert_int_equal(left[x].style, right[x].style);
				}
			}
			frame_free(f);
		}
		app_done(&app);
		scene_free(sc);
	}
}

/* The map at a size where a cell is one position: H2O's heavy and recent
 * letters count exactly what it holds; smaller, it says how many positions
 * a cell holds and still starts at 0. */
static void test_map_every_position(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/long_topic.json");
	struct app app;
	init_two(&app, sc, sc->heavy, sc->recent);
	/* The lesson text hidden: the map has the rows it would have. */
	press(&app, "end,M,e");
	assert_true(app.map);
	for (size_t i = 0; i < SIZE_COUNT; i++) {
		struct frame *f = draw(&app, sizes[i].cols, sizes[i].rows, true);
		char *text = frame_to_text(f);
		assert_non_null(text);
		assert_non_null(strstr(text, "cache map: "));
		assert_non_null(strstr(text, " position  0 "));
		if (sizes[i].cols == 300) {
			assert_non_null(strstr(text, "one a cell"));
			int heavy = 0, recent = 0;
			for (int y = 0; y < f->rows; y++) {
				/* "h2o" rows, not the legend's "h2o:". */
				if (frame_cell_const(f, 1, y)->cp != 'h' ||
				    frame_cell_const(f, 2, y)->cp != '2' ||
				    frame_cell_const(f, 4, y)->cp != ' ')
					continue;
				for (int x = 11; x < f->cols; x++) {
					heavy += frame_cell_const(f, x, y)->cp == 'H';
					recent += frame_cell_const(f, x, y)->cp == 'R';
				}
			}
			assert_int_equal(heavy, sc->heavy);
			assert_int_equal(recent, sc->recent);
		} else {
			assert_null(strstr(text, "one a cell"));
			assert_non_null(strstr(text, " a cell "));
		}
		free(text);
		frame_free(f);
	}
	press(&app, "M");
	assert_false(app.map);
	app_done(&app);
	scene_free(sc);
}

/* The help's rows from the one that starts with START (box borders and
 * padding dropped), joined by spaces up to a row that is empty or starts
 * with a glyph, into OUT; false when no row starts with START. */
static bool help_sentence(const char *text, const char *start, char *out, size_t size)
{
	const char *at = strstr(text, start);
	size_t len = 0;
	out[0] = '\0';
	if (!at)
		return false;
	while (*at) {
		const char *end = strchr(at, '\n');
		if (!end)
			end = at + strlen(at);
		/* The row's text ends at its right border, or on the bottom
		 * border at the line that goes on after it. */
		const char *stop = strstr(at, "\xe2\x94\x82"); /* │ */
		const char *rule = strstr(at, "\xe2\x94\x80"); /* ─ */
		if (rule && (!stop || rule < stop))
			stop = rule;
		if (!stop || stop > end)
			stop = end;
		while (stop > at && stop[-1] == ' ')
			stop--;
		if (stop == at)
			break;
		len += (size_t)snprintf(out + len, size - len, "%s%.*s", len ? " " : "",
		                        (int)(stop - at), at);
		if (len >= size || !*end)
			break;
		at = end + 1;
		/* The next row: past its left border and one space. */
		const char *bar = strstr(at, "\xe2\x94\x82 ");
		if (!bar || bar > strchr(at, '\n'))
			break;
		at = bar + 4;
		if ((unsigned char)*at >= 0x80 || *at == ' ')
			break; /* a mark's glyph, or an empty row */
	}
	return true;
}

/* c's cycle in the help reads whole at every size: page 1 lists the
 * policies by name when all of its lines fit, else says how many there are
 * and that page 2 lists them; page 2 lists every one of them, wrapped by
 * words, none cut. */
static void test_help_cycle(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/lesson_03_evict.json");
	char names[256], want[320], got[1024];
	for (size_t i = 0; i < SIZE_COUNT; i++) {
		struct app app;
		assert_int_equal(app_init(&app, sc, sc->heavy, sc->recent, -1, POLICY_FULL), 0);
		/* The policies c cycles through here: an attention scene runs
		 * none of those that read keys. */
		app_cycle_names(&app, names, sizeof names);
		assert_null(strstr(names, "knorm"));
		assert_null(strstr(names, "keydiff"));
		assert_non_null(strstr(names, "full, window, "));
		int count = 1;
		for (const char *c = names; *c; c++)
			count += *c == ',';
		press(&app, "?");
		struct frame *f = draw(&app, sizes[i].cols, sizes[i].rows, false);
		char *text = frame_to_text(f);
		assert_true(help_sentence(text, "c compares H2O with each", got, sizeof got));
		snprintf(want, sizeof want, "c compares H2O with each in turn: %s", names);
		if (strcmp(got, want) != 0) {
			/* Only where the whole list has no room. */
			assert_int_equal(sizes[i].rows, 24);
			snprintf(want, sizeof want,
			         "c compares H2O with each of %d policies in turn (help page 2 "
			         "lists them)",
			         count);
			assert_string_equal(got, want);
		}
		free(text);
		frame_free(f);
		press(&app, "space");
		f = draw(&app, sizes[i].cols, sizes[i].rows, false);
		text = frame_to_text(f);
		assert_true(help_sentence(text, "c puts each policy", got, sizeof got));
		snprintf(want, sizeof want, "c puts each policy beside H2O in turn: %s", names);
		assert_string_equal(got, want);
		free(text);
		frame_free(f);
		app_done(&app);
	}
	/* With --policies, only those chosen come round, and the help says
	 * so on both pages. */
	struct app app;
	const struct budget b = {.heavy = sc->heavy, .recent = sc->recent, .sinks = -1};
	const unsigned some = 1u << POLICY_H2O | 1u << POLICY_TOVA | 1u << POLICY_WINDOW;
	assert_int_equal(app_init_only(&app, sc, &b, POLICY_TOVA, false, some), 0);
	assert_string_equal(app_cycle_names(&app, names, sizeof names), "window, tova");
	press(&app, "?");
	struct frame *f = draw(&app, 120, 36, false);
	char *text = frame_to_text(f);
	assert_true(help_sentence(text, "c compares H2O with each", got, sizeof got));
	assert_string_equal(got, "c compares H2O with each in turn: window, tova");
	assert_non_null(strstr(text, "compare H2O with the next policy: window"));
	free(text);
	frame_free(f);
	app_done(&app);
	scene_free(sc);
}

/* The overview's grid at every size, for models small and large: the
 * cursor's row and column are on screen, a grid that does not fit says
 * which part it shows, and a small model (5 x 8) fits 80x24 whole. */
static void test_overview_grid(void **state)
{
	(void)state;
	static const struct {
		int layers, heads, kv;
		const char *keys; /* where the cursor goes */
		bool fits_80x24;  /* without a note of what is shown */
	} models[] = {
	        {5, 8, 2, "o,down,down,down,down,right", true},
	        {12, 12, 4, "o,down,down,down,down,down,down,down,down,down,down,down,right", true},
	        {32, 32, 8, "o,K,btab", false},
	        {2, 64, 64, "o,btab,left", false}, /* wider than any screen here */
	};
	for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
		struct scene *sc = fixture_layered(6, 2, 1, 1, models[m].layers, models[m].heads,
		                                   models[m].kv, 0, 5);
		struct app app;
		init_two(&app, sc, 1, 1);
		press(&app, "end");
		press(&app, models[m].keys);
		assert_true(app.overview);
		const int layer = app.cursor / models[m].heads;
		for (size_t s = 0; s < 2; s++) {
			struct frame *f = draw(&app, sizes[s].cols, sizes[s].rows, false);
			char *text = frame_to_text(f);
			if (getenv("H2O_SHOW"))
				printf("%s\n", text);
			char label[32];
			snprintf(label, sizeof label, "\u00bb L%d ", layer + 1);
			assert_non_null(strstr(text, label));
			const bool note = strstr(text, "shown") != NULL;
			if (s == 0)
				assert_int_equal(note, !models[m].fits_80x24);
			assert_non_null(strstr(text, "whole model"));
			free(text);
			frame_free(f);
		}
		app_done(&app);
		scene_free(sc);
	}
}

/* A prompt of 512 compressed at its end to a budget of 128: 384 evicted at
 * one step. The sentence says so, the status line names the phase, and
 * the panels list the evictions (a summary, then walked to the end). */
static void test_prompt_compression(void **state)
{
	(void)state;
	struct scene *sc = fixture_layered(600, 2, 64, 64, 1, 2, 1, 512, 9);
	struct app app;
	assert_int_equal(app_init(&app, sc, 64, 64, -1, POLICY_FULL), 0);
	press(&app, "5,1,1,enter");
	for (size_t s = 0; s < 2; s++) {
		struct frame *f = draw(&app, sizes[s].cols, sizes[s].rows, false);
		char *text = frame_to_text(f);
		assert_non_null(strstr(text, "prompt 511/512"));
		assert_non_null(strstr(text, "nothing is evicted before its end"));
		free(text);
		frame_free(f);
	}
	press(&app, "right");
	for (size_t s = 0; s < SIZE_COUNT; s++) {
		struct frame *f = draw(&app, sizes[s].cols, sizes[s].rows, false);
		char *text = frame_to_text(f);
		if (getenv("H2O_SHOW"))
			printf("%s\n", text);
		assert_non_null(strstr(text, "prompt 512/512"));
		assert_non_null(
		        strstr(text, "the prompt's 512 tokens compressed to 128: 384 evicted"));
		assert_non_null(strstr(text, "EVICTED  384"));
		assert_non_null(strstr(text, "more evicted at this step"));
		free(text);
		frame_free(f);
	}
	/* Walked, every one of them can be reached. */
	press(&app, "w,G");
	assert_int_equal(app.list.start[APP_SEC_EVICTED + 1] - app.list.start[APP_SEC_EVICTED],
	                 384);
	for (size_t s = 0; s < SIZE_COUNT; s++) {
		struct frame *f = draw(&app, sizes[s].cols, sizes[s].rows, s == 1);
		frame_free(f);
	}
	press(&app, "esc,right");
	struct frame *f = draw(&app, 80, 24, false);
	char *text = frame_to_text(f);
	assert_non_null(strstr(text, "decoding"));
	free(text);
	frame_free(f);
	app_done(&app);
	scene_free(sc);
}

/* Row Y of frame F as UTF-8 text, into OUT. */
static void frame_row(const struct frame *f, int y, char *out, size_t size)
{
	char *text = frame_to_text(f);
	const char *line = text;
	for (int i = 0; i < y && line; i++) {
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	assert_non_null(line);
	const char *end = strchr(line, '\n');
	const size_t len = end ? (size_t)(end - line) : strlen(line);
	assert_true(len < size);
	memcpy(out, line, len);
	out[len] = '\0';
	free(text);
}

/* The strip's short names, as the help's words define them. */
static const char *strip_policy(const char *brief)
{
	static const char *const pairs[][2] = {
	        {"win", "window"},         {"strm", "streaming"},    {"knrm", "knorm"},
	        {"snap", "snapkv"},        {"snpw", "snapkv-win"},   {"pyr", "pyramidkv"},
	        {"pyrw", "pyramidkv-win"}, {"ada", "adakv"},         {"adaw", "adakv-win"},
	        {"obs", "observed"},       {"obsw", "observed-win"}, {"rand", "random"},
	        {"kdif", "keydiff"},       {"fu", "full"},           {"wi", "window"},
	        {"st", "streaming"},       {"tv", "tova"},           {"kn", "knorm"},
	        {"sn", "snapkv"},          {"sw", "snapkv-win"},     {"py", "pyramidkv"},
	        {"pw", "pyramidkv-win"},   {"ad", "adakv"},          {"aw", "adakv-win"},
	        {"ob", "observed"},        {"ow", "observed-win"},   {"rn", "random"},
	        {"kd", "keydiff"},         {"exp", "expected"},      {"ex", "expected"},
	};
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
		if (strcmp(pairs[i][0], brief) == 0)
			return pairs[i][1];
	return brief;
}

/* The strip on row 2 of APP's frame at COLS x ROWS: every entry is a
 * policy the timelines run, with the recall of its summary at the step,
 * the compared one in brackets, and those left out counted. Returns the
 * policies named, the count included. */
static int check_strip(const struct app *app, int cols, int rows, unsigned run)
{
	struct frame *f = draw(app, cols, rows, false);
	char row[2048];
	frame_row(f, 2, row, sizeof row);
	frame_free(f);
	if (getenv("H2O_SHOW"))
		printf("%s\n", row);
	const struct step_summary *s = timeline_summary(app->tl, app->step);
	int named = 0;
	char word[32], value[32];
	int len;
	/* The tight form: "rec% h2o88 [wi90] st82 …", the recall in percent. */
	const char *at = strstr(row, " rec% ");
	while (at && sscanf(at, " %31s%n", word, &len) == 1) {
		if ((unsigned char)word[0] >= 0x80)
			break;
		if (word[0] == '+') {
			named += atoi(word + 1);
			break;
		}
		if (strcmp(word, "rec%") != 0) {
			const bool marked = word[0] == '[';
			char *name = word + (marked ? 1 : 0);
			size_t letters = strncmp(name, "h2o", 3) == 0 ? 3 : 0;
			while (name[letters] >= 'a' && name[letters] <= 'z')
				letters++;
			const int percent = atoi(name + letters);
			name[letters] = '\0';
			name = (char *)strip_policy(name);
			int p = 0;
			while (p < POLICY_COUNT && strcmp(policies[p]->name, name) != 0)
				p++;
			assert_true(p < POLICY_COUNT);
			assert_true(run & (1u << p));
			assert_int_equal(marked, p == (int)app->compare);
			assert_int_equal(percent, (int)lround(s->c[p].m.attn_recall * 100.0));
			named++;
		}
		at += len;
	}
	if (strstr(row, " rec% "))
		return named;
	at = strstr(row, " recall ");
	assert_non_null(at);
	at += strlen(" recall ");
	while (sscanf(at, " %31s %31s%n", word, value, &len) == 2) {
		if ((unsigned char)word[0] >= 0x80)
			break; /* the rule after the last entry */
		if (word[0] == '+') {
			named += atoi(word + 1);
			break;
		}
		const bool marked = word[0] == '[';
		const char *name = strip_policy(word + (marked ? 1 : 0));
		int p = 0;
		while (p < POLICY_COUNT && strcmp(policies[p]->name, name) != 0)
			p++;
		assert_true(p < POLICY_COUNT);
		assert_true(run & (1u << p));
		assert_int_equal(marked, p == (int)app->compare);
		char want[32];
		snprintf(want, sizeof want, "%.2f%s", s->c[p].m.attn_recall, marked ? "]" : "");
		assert_string_equal(value, want[0] == '0' ? want + 1 : want);
		named++;
		at += len;
	}
	return named;
}

/* Every policy's recall on one line: the timeline's figures, the
 * compared policy marked, the rest counted on a narrow screen; a hides it,
 * and a run of some policies shows those. */
static void test_strip(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat.json");
	struct app app;
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_WINDOW), 0);
	press(&app, "right,right,right,right,right,right");
	/* Every policy the scene can run (an attention scene: not those
	 * that read keys) but the full cache. */
	const int others = __builtin_popcount(engine_policies_for(sc, 0)) - 1;
	for (size_t s = 0; s < SIZE_COUNT; s++)
		assert_int_equal(check_strip(&app, sizes[s].cols, sizes[s].rows, ~0u), others);
	/* At 80 columns the tight form holds every one: none is counted. */
	struct frame *f = draw(&app, 80, 24, false);
	char row[1024];
	frame_row(f, 2, row, sizeof row);
	frame_free(f);
	assert_null(strstr(row, " +"));
	assert_non_null(strstr(row, " rec% h2o88 [wi90] "));
	/* At 160 columns the wide form holds every one. */
	f = draw(&app, 160, 36, false);
	frame_row(f, 2, row, sizeof row);
	frame_free(f);
	assert_non_null(strstr(row, "── recall  h2o .88  [win .90]  strm .82"));
	app_done(&app);
	/* The compared policy is marked wherever it is. */
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_OBSERVED), 0);
	press(&app, "right,right,right,right,right,right");
	assert_int_equal(check_strip(&app, 80, 24, ~0u), others);
	f = draw(&app, 80, 24, false);
	frame_row(f, 2, row, sizeof row);
	frame_free(f);
	assert_non_null(
	        strstr(row, " rec% h2o88 wi90 st82 tv90 sn100 sw90 py100 pw90 ad100 aw90 [ob"));
	press(&app, "a");
	f = draw(&app, 120, 36, false);
	frame_row(f, 2, row, sizeof row);
	frame_free(f);
	assert_null(strstr(row, "recall"));
	app_done(&app);

	const unsigned some = 1u << POLICY_H2O | 1u << POLICY_TOVA;
	const struct budget b = {.heavy = 2, .recent = 2, .sinks = -1};
	assert_int_equal(app_init_only(&app, sc, &b, POLICY_TOVA, false, some), 0);
	press(&app, "end");
	for (size_t s = 0; s < SIZE_COUNT; s++)
		assert_int_equal(
		        check_strip(&app, sizes[s].cols, sizes[s].rows, some | 1u << POLICY_FULL),
		        2);
	app_done(&app);
	scene_free(sc);
}

/* The vectors of lesson 5's last step: the query, each key and value row,
 * q.k, the weights and the output, the record's numbers. */
static void test_vectors(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/lesson_05_qk.json");
	struct app app;
	assert_int_equal(app_init(&app, sc, 3, 2, -1, POLICY_FULL), 0);
	press(&app, "end,v");
	assert_true(app.vectors);
	const struct cache_record *c = &app.shown_rec->c[POLICY_H2O];
	for (size_t s = 0; s < SIZE_COUNT; s++) {
		struct frame *f = draw(&app, sizes[s].cols, sizes[s].rows, false);
		char *text = frame_to_text(f);
		if (getenv("H2O_SHOW"))
			printf("%s\n", text);
		assert_non_null(strstr(text, "q [  0.50  1.50 ] of it"));
		/* The lesson's dot products, and the weights the engine gave. */
		assert_non_null(strstr(text, "cat     [  0.60  1.20 ] [  0.20  0.90 ]   2.100"));
		for (int j = 0; j < c->n_attended; j++) {
			char w[32];
			snprintf(w, sizeof w, "%7.4f", c->attn[j]);
			assert_non_null(strstr(text, w));
		}
		char out[64];
		snprintf(out, sizeof out, "[ %5.2f %5.2f ]", c->out[0], c->out[1]);
		assert_non_null(strstr(text, out));
		free(text);
		frame_free(f);
	}
	press(&app, "esc");
	assert_false(app.vectors);
	app_done(&app);
	scene_free(sc);

	/* Lesson 6's rows of four stay whole at 80 columns: q.k and the
	 * logit give way first. */
	sc = load("scenes/lesson_06_kv_cache.json");
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_FULL), 0);
	press(&app, "5,enter,v");
	for (size_t s = 0; s < SIZE_COUNT; s++) {
		struct frame *f = draw(&app, sizes[s].cols, sizes[s].rows, false);
		char *text = frame_to_text(f);
		assert_non_null(strstr(text, "The     [  1.00  0.20  0.00  0.50 ] "
		                             "[  1.00  0.00  0.00  0.00 ]"));
		assert_true((strstr(text, "0.370   0.185") != NULL) == (sizes[s].cols > 80));
		free(text);
		frame_free(f);
	}
	app_done(&app);
	scene_free(sc);

	/* A scene of weights alone: the key says why there is nothing. */
	sc = load("scenes/lesson_01_heavy_recent.json");
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_FULL), 0);
	press(&app, "end,v");
	assert_false(app.vectors);
	assert_non_null(strstr(app.notice, "no q, k or v rows"));
	app_done(&app);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_heat_one_scale),
	        cmocka_unit_test(test_heat_halves_align),
	        cmocka_unit_test(test_map_every_position),
	        cmocka_unit_test(test_help_cycle),
	        cmocka_unit_test(test_overview_grid),
	        cmocka_unit_test(test_prompt_compression),
	        cmocka_unit_test(test_strip),
	        cmocka_unit_test(test_vectors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
