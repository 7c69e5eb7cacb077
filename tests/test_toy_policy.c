/*
 * The test build with one policy more (tests/toy_policy.c, added to
 * POLICIES by H2O_TEST_TOY_POLICY): everything that lists, names, draws or
 * reports policies picks the toy up from the table, with no other edit.
 * tests/names_test.sh does the same for the command line of this build.
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
#include "h2o/policy.h"
#include "h2o/report.h"
#include "h2o/report_print.h"
#include "h2o/scene.h"
#include "h2o/trace.h"
#include "h2o/view.h"

#ifndef H2O_TEST_TOY_POLICY
#error "the toy policy's test is built with H2O_TEST_TOY_POLICY (tests/meson.build)"
#endif

extern const struct policy policy_toy;

static struct scene *load(const char *path)
{
	char err[SCENE_ERROR_MAX];
	struct scene *sc;
	assert_int_equal(scene_load_file(path, &sc, err), 0);
	return sc;
}

/* What FN writes to a stream, as a string to free. */
static int trace_text(const struct scene *sc, const struct budget *b, FILE *out)
{
	return trace_write(sc, b, out, NULL);
}

static char *written(int (*fn)(const struct scene *, const struct budget *, FILE *),
                     const struct scene *sc, const struct budget *b)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	assert_non_null(out);
	assert_int_equal(fn(sc, b, out), 0);
	assert_int_equal(fclose(out), 0);
	return text;
}

static int report_text(const struct scene *sc, const struct budget *b, FILE *out)
{
	return report_write(sc, b, false, out, NULL);
}

static int report_json(const struct scene *sc, const struct budget *b, FILE *out)
{
	return report_write(sc, b, true, out, NULL);
}

static int sweep_text(const struct scene *sc, const struct budget *b, FILE *out)
{
	(void)b;
	return report_sweep(sc, (const int[]){2, 4, 7}, 3, -1, false, out, NULL);
}

/* The frame of APP as text, to free. */
static char *drawn(const struct app *app, int cols, int rows)
{
	struct frame *f = frame_new(cols, rows, false);
	assert_non_null(f);
	view_draw(app, f);
	char *text = frame_to_text(f);
	assert_non_null(text);
	frame_free(f);
	return text;
}

static void press(struct app *app, const char *name)
{
	const uint32_t key = keys_parse(name);
	assert_int_not_equal(key, KEYC_NONE);
	app_key(app, key);
}

static void test_registered(void **state)
{
	(void)state;
	assert_int_equal(POLICY_COUNT, POLICY_TOY + 1);
	assert_ptr_equal(policies[POLICY_TOY], &policy_toy);
	assert_int_equal(policy_find("toy"), POLICY_TOY);
	const struct policy_budget b = {2, 3, 1, 10, 0, 0, 0, 0, {{{0}}}};
	assert_int_equal(policy_capacity(POLICY_TOY, &b), 5);
	assert_int_equal(policy_promoted_at(POLICY_TOY, &b, 4), 0);
	/* The table's names but H2O's, in order, the toy last. */
	char names[256], want[256] = "", help[300];
	for (int p = 0; p < POLICY_COUNT; p++)
		if (p != POLICY_H2O)
			snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s",
			         *want ? ", " : "", policies[p]->name);
	assert_non_null(strstr(want, ", toy"));
	assert_string_equal(app_comparable_names(names, sizeof names), want);
	snprintf(help, sizeof help, "compare H2O with the next policy: %s", want);
	assert_string_equal(app_action_help(ACT_COMPARE), help);
}

/* c goes through every policy but H2O, the toy included (on a scene with
 * keys, which every policy can run). */
static void test_compare_cycle(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat_qkv.json");
	struct app app;
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_FULL), 0);
	/* From full: each policy after it in the table (H2O skipped), the
	 * toy last, then full again. */
	for (int p = POLICY_FULL + 1; p <= POLICY_COUNT; p++) {
		if (p == POLICY_H2O)
			continue;
		press(&app, "c");
		assert_int_equal(app.compare, p < POLICY_COUNT ? p : POLICY_FULL);
	}
	app_done(&app);
	scene_free(sc);
}

/* Beside H2O the toy's panel has its title, its regions with their
 * budgets and its evictions in its own words; the status line and the
 * heat rows name it. */
static void test_panel(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat.json");
	struct app app;
	assert_int_equal(app_init(&app, sc, 2, 2, -1, POLICY_TOY), 0);
	app_goto(&app, sc->n);
	char *text = drawn(&app, 120, 36);
	assert_non_null(strstr(text, "TOY ENDS  4 of 4 tokens"));
	assert_non_null(strstr(text, "   toy 4/16 KV"));
	free(text);
	/* Its own list, walked (w twice): its regions and evictions. */
	press(&app, "w");
	press(&app, "w");
	text = drawn(&app, 120, 36);
	assert_non_null(strstr(text, "FIRST  2 of 2"));
	assert_non_null(strstr(text, "NEWEST  2 of 2"));
	assert_non_null(strstr(text, "EVICTED  3"));
	assert_non_null(strstr(text, "in the middle at step 7"));
	assert_non_null(strstr(text, "   toy 4/16 KV"));
	free(text);
	/* The help overlay lists it with the others, on a scene with keys
	 * (where c cycles through every policy). */
	app_done(&app);
	scene_free(sc);
	sc = load("scenes/cat_sat_qkv.json");
	assert_int_equal(app_init(&app, sc, sc->heavy, sc->recent, -1, POLICY_FULL), 0);
	press(&app, "?");
	text = drawn(&app, 120, 40);
	char names[256], line[300];
	app_comparable_names(names, sizeof names);
	snprintf(line, sizeof line, "c compares H2O with each in turn: %s", names);
	/* The overlay wraps the line: its text without the borders, each run
	 * of white space one space. */
	size_t n = 0;
	for (const char *c = text; *c; c++) {
		if (strncmp(c, "\u2502", 3) == 0) {
			c += 2;
			continue;
		}
		const bool space = *c == ' ' || *c == '\n';
		if (!space || (n > 0 && text[n - 1] != ' '))
			text[n++] = space ? ' ' : *c;
	}
	text[n] = '\0';
	assert_non_null(strstr(text, line));
	free(text);
	app_done(&app);
	scene_free(sc);
}

static void test_words(void **state)
{
	(void)state;
	const struct policy_budget b = {2, 2, 1, 7, 0, 0, 0, 0, {{{0}}}};
	struct policy_words w;
	policy_word(POLICY_TOY, &b, &(struct policy_loss){1.0, 0.1, -1, 0.0}, POLICY_VOICE_SENTENCE,
	            &w);
	assert_string_equal(w.before, "only the first 2 and the newest 2 tokens stay");
	assert_int_equal(w.cutoff_pos, -1);
}

/* The report has a row for it (text and JSON), the sweep a budget. */
static void test_report(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat.json");
	const struct budget b = {2, 2, 1, 0, sc->prompt, {{{0}}}};
	char *text = written(report_text, sc, &b);
	assert_non_null(strstr(text, "\ntoy                4        4"));
	free(text);
	text = written(report_json, sc, &b);
	assert_non_null(strstr(text, "{\"name\": \"toy\", \"tokens\": 4"));
	free(text);
	/* The sweep's last line names the toy with the table's last policy. */
	char last[64];
	snprintf(last, sizeof last, "  %s ", policies[POLICY_TOY - 1]->name);
	text = written(sweep_text, sc, &b);
	assert_non_null(strstr(text, last));
	assert_non_null(strstr(text, "  toy "));
	free(text);
	scene_free(sc);
}

/* Every step of the trace has a "toy" key. */
static void test_trace(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat.json");
	const struct budget b = {2, 2, 1, 0, sc->prompt, {{{0}}}};
	char *text = written(trace_text, sc, &b);
	int lines = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), lines++)
		assert_non_null(strstr(line, ", \"toy\": {\"attended\": "));
	assert_int_equal(lines, sc->n);
	free(text);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_registered), cmocka_unit_test(test_compare_cycle),
	        cmocka_unit_test(test_panel),      cmocka_unit_test(test_words),
	        cmocka_unit_test(test_report),     cmocka_unit_test(test_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
