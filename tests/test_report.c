/*
 * The report's vocabulary and measurements (src/timeline/report.c): the
 * targets users type, the sweep's split of a budget, the smallest budget
 * that meets a target, and the figures kept per head and per step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "h2o/heads.h"
#include "h2o/report.h"
#include "h2o/report_print.h"
#include "h2o/scene.h"
#include "app_fixture.h"

static void test_target_parse(void **state)
{
	(void)state;
	struct report_target t;
	assert_true(report_target_parse("recall=0.95", &t));
	assert_int_equal(t.figure, REPORT_RECALL);
	assert_true(t.value == 0.95);
	assert_true(report_target_parse("err=2.5", &t));
	assert_int_equal(t.figure, REPORT_ERR);
	assert_true(report_target_parse("cos=1", &t));
	assert_int_equal(t.figure, REPORT_COS);
	/* Recall and cosine are at most 1; nothing is negative or unknown. */
	const char *bad[] = {"recall=1.5", "cos=1.01",   "err=-1",    "recall",
	                     "recall=",    "ppl=3",      "recal=0.9", "recall=0.9x",
	                     "=0.9",       "recall=nan", "err=inf"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_false(report_target_parse(bad[i], &t));
	char text[48];
	report_target_text(&(struct report_target){REPORT_ERR, 0.1}, text, sizeof text);
	assert_string_equal(text, "err <= 0.1");
	/* Recall and cosine are good high, error low. */
	assert_true(report_target_missed(&(struct report_target){REPORT_RECALL, 0.9}, 0.89));
	assert_false(report_target_missed(&(struct report_target){REPORT_RECALL, 0.9}, 0.9));
	assert_true(report_target_missed(&(struct report_target){REPORT_ERR, 0.1}, 0.11));
	assert_false(report_target_missed(&(struct report_target){REPORT_ERR, 0.1}, 0.1));
}

/* ppl=R: the model's target, a ratio of at least 1 to the full cache's
 * perplexity; the attention parser does not take it, nor it theirs. */
static void test_ppl_parse(void **state)
{
	(void)state;
	double r = 0;
	struct report_target t;
	assert_true(report_ppl_parse("ppl=1.01", &r));
	assert_true(r == 1.01);
	assert_true(report_ppl_parse("ppl=1", &r));
	assert_true(r == 1.0);
	assert_true(report_ppl_parse("ppl=2.5", &r));
	assert_true(r == 2.5);
	assert_false(report_target_parse("ppl=1.01", &t));
	const char *bad[] = {"ppl=0.99", "ppl=0",   "ppl=-1",   "ppl=",       "ppl",
	                     "ppl=inf",  "ppl=nan", "ppl=1.5x", "recall=0.9", "pp=1.1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_false(report_ppl_parse(bad[i], &r));
	assert_true(r == 2.5); /* a refused one leaves the ratio alone */
	char text[48];
	report_ppl_text(1.01, text, sizeof text);
	assert_string_equal(text, "ppl <= 1.01 x full");
	/* At most R times the full cache's: 3 is 1.5 x 2 exactly. */
	assert_true(report_ppl_meets(3.0, 2.0, 1.5));
	assert_false(report_ppl_meets(3.0000001, 2.0, 1.5));
	assert_true(report_ppl_meets(2.0, 2.0, 1.0));
	assert_false(report_ppl_meets(2.0000001, 2.0, 1.0));
}

/* The row of policy NAME in the report's text TEXT: its rank among the
 * policy rows (lines that start with a policy's name), or -1. */
static int row_of(const char *text, const char *name)
{
	int rank = 0;
	for (const char *line = text; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		for (int p = 0; p < POLICY_COUNT; p++) {
			const size_t len = strlen(policies[p]->name);
			if (strncmp(line, policies[p]->name, len) == 0 && line[len] == ' ') {
				if (!strcmp(policies[p]->name, name))
					return rank;
				rank++;
				break;
			}
		}
	}
	return -1;
}

/* The text report's rows: the full cache, then the matched policies (those
 * that held no more than their budget) before the others, each kind the
 * best mean of the target's figure first, a tie in the order of POLICIES;
 * checked against the summaries for every figure a target can name. */
static void test_report_order(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat_qkv.json");
	const struct budget b = budget_scene(sc, 1, 1, 1);
	const struct report_target targets[] = {
	        {REPORT_RECALL, 0.95}, {REPORT_ERR, 0.05}, {REPORT_COS, 0.99}};
	for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++) {
		struct report_run run;
		assert_int_equal(report_measure(sc, &b, &targets[k], 0, &run, NULL, 0, 1), 0);
		FILE *f = tmpfile();
		assert_non_null(f);
		assert_int_equal(report_print(&run, REPORT_TEXT, false, f), 0);
		static char text[8192];
		rewind(f);
		text[fread(text, 1, sizeof text - 1, f)] = '\0';
		fclose(f);
		int rank[POLICY_COUNT];
		for (int p = 0; p < POLICY_COUNT; p++) {
			rank[p] = row_of(text, policies[p]->name);
			assert_true(rank[p] >= 0);
		}
		assert_int_equal(rank[POLICY_FULL], 0);
		const enum report_figure fig = targets[k].figure;
		for (int p = 1; p < POLICY_COUNT; p++)
			for (int q = 1; q < POLICY_COUNT; q++) {
				if (p == q)
					continue;
				const double mp = report_summary_mean(&run.sum[p], fig);
				const double mq = report_summary_mean(&run.sum[q], fig);
				const bool p_better = fig == REPORT_ERR ? mp < mq : mp > mq;
				const bool kp = report_matched(&run, (enum policy_id)p),
				           kq = report_matched(&run, (enum policy_id)q);
				if ((kp && !kq) || (kp == kq && (p_better || (mp == mq && p < q))))
					assert_true(rank[p] < rank[q]);
			}
		/* And the text says so. */
		assert_non_null(strstr(text, "rows: full, then the policies that held their "
		                             "budget (matched), the "));
		assert_non_null(strstr(text, fig == REPORT_ERR   ? "lowest mean err first"
		                             : fig == REPORT_COS ? "highest mean cos first"
		                                                 : "highest mean recall first"));
		report_run_done(&run);
	}
	scene_free(sc);
}

static void test_split(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat.json");
	const struct budget base = budget_scene(sc, 0, 0, -1);
	for (int total = 1; total <= 9; total++) {
		const struct budget b = budget_split(&base, total, 0.5);
		assert_int_equal(b.heavy, total / 2);
		assert_int_equal(b.recent, total - total / 2);
	}
	/* 10 * 0.3 is 3.0000000000000004 or 2.9999999999999996 in binary:
	 * either way three heavy. */
	assert_int_equal(budget_split(&base, 10, 0.3).heavy, 3);
	assert_int_equal(budget_split(&base, 7, 1).recent, 0);
	assert_int_equal(budget_split(&base, 7, 0).heavy, 0);
	scene_free(sc);
}

/* The smallest budget meeting the target is the smallest of the list,
 * whatever its order. */
static void test_sweep_smallest(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat_qkv.json");
	const struct report_split half = {.heavy = 0.5};
	const struct report_target t = REPORT_DEFAULT_TARGET;
	const struct budget b = budget_scene(sc, 0, 0, -1);
	struct report_sweep up, down;
	assert_int_equal(
	        report_sweep_measure(sc, &b, (const int[]){4, 5, 6, 7}, 4, &half, &t, 0, &up, NULL),
	        0);
	assert_int_equal(report_sweep_measure(sc, &b, (const int[]){7, 6, 5, 4}, 4, &half, &t, 0,
	                                      &down, NULL),
	                 0);
	for (int p = 0; p < POLICY_COUNT; p++)
		assert_int_equal(up.good[p], down.good[p]);
	/* The golden sweep: every evicting policy first reaches 0.95 at 5. */
	assert_int_equal(up.good[POLICY_H2O], 5);
	report_sweep_done(&up);
	report_sweep_done(&down);
	scene_free(sc);
}

/* Kept steps add up to the summary, and heads to their own summaries. */
static void test_kept(void **state)
{
	(void)state;
	struct scene *sc = load("tests/scenes/two_heads.json");
	const struct budget b = budget_scene(sc, 1, 1, 1);
	const struct report_target t = REPORT_DEFAULT_TARGET;
	struct report_run run;
	assert_int_equal(
	        report_measure(sc, &b, &t, REPORT_KEEP_HEADS | REPORT_KEEP_STEPS, &run, NULL, 0, 1),
	        0);
	assert_int_equal(run.heads, heads_count(sc));
	assert_true(run.heads > 1);
	for (int p = 0; p < POLICY_COUNT; p++) {
		double recall = 0, heads_tokens = 0;
		for (int s = 0; s < sc->n; s++)
			recall += run.steps[(size_t)s * POLICY_COUNT + p].attn_recall;
		assert_true(recall == run.sum[p].recall_sum);
		for (int h = 0; h < run.heads; h++)
			heads_tokens += run.head_sum[(size_t)h * POLICY_COUNT + p].tokens;
		assert_int_equal((int)heads_tokens, run.sum[p].tokens);
	}
	report_run_done(&run);
	scene_free(sc);
}

/* Memory held: a policy that keeps every token after the prompt holds
 * more than its budget and is not matched; one that evicts every step
 * holds at most B per kv cache, at its peak and on average; the sweep's
 * smallest budget counts only the matched. */
static void test_matched(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat.json");
	const struct budget b = budget_scene(sc, 1, 1, 1);
	const struct report_target t = REPORT_DEFAULT_TARGET;
	struct report_run run;
	assert_int_equal(report_measure(sc, &b, &t, 0, &run, NULL, 0, 1), 0);
	assert_true(report_matched(&run, POLICY_H2O));
	assert_true(report_held_peak(&run.sum[POLICY_H2O]) == 2.0);
	assert_true(report_held_mean(&run.sum[POLICY_H2O]) <= 2.0);
	/* No prompt: SnapKV keeps the whole scene. */
	assert_false(report_matched(&run, POLICY_SNAPKV));
	assert_true(report_held_peak(&run.sum[POLICY_SNAPKV]) == sc->n);
	assert_false(report_matched(&run, POLICY_FULL));
	assert_true(report_bytes_peak(&run.sum[POLICY_H2O]) ==
	            (double)run.sum[POLICY_H2O].kv_peak * REPORT_KV_BYTES);
	report_run_done(&run);
	const struct report_split half = {.heavy = 0.5};
	struct report_sweep sw;
	const struct budget base = budget_scene(sc, 0, 0, 0);
	assert_int_equal(
	        report_sweep_measure(sc, &base, (const int[]){1, 2, 4}, 3, &half, &t, 0, &sw, NULL),
	        0);
	for (int p = 0; p < POLICY_COUNT; p++)
		if (policies[p]->grows) {
			assert_false(sw.ever_matched[p]);
			assert_int_equal(sw.good[p], 0);
		}
	assert_true(sw.ever_matched[POLICY_H2O]);
	report_sweep_done(&sw);
	scene_free(sc);
}

/* The attention figures are over the steps after the prompt unless
 * REPORT_WITH_PROMPT: the kept steps' figures from P + 1 on add up to the
 * summary, and with the prompt's steps from 1 on. */
static void test_decode_steps(void **state)
{
	(void)state;
	struct scene *sc = load("scenes/cat_sat_qkv.json");
	sc->prompt = 3;
	const struct budget b = budget_scene(sc, 1, 1, 1);
	const struct report_target t = REPORT_DEFAULT_TARGET;
	for (int with = 0; with < 2; with++) {
		struct report_run run;
		const unsigned keep = REPORT_KEEP_STEPS | (with ? REPORT_WITH_PROMPT : 0);
		assert_int_equal(report_measure(sc, &b, &t, keep, &run, NULL, 0, 1), 0);
		assert_int_equal(run.decode, !with);
		assert_int_equal(run.from, with ? 1 : 4);
		assert_int_equal(run.held_from, 3);
		for (int p = 0; p < POLICY_COUNT; p++) {
			double recall = 0, err = 0;
			for (int s = run.from; s <= sc->n; s++) {
				recall += run.steps[(size_t)(s - 1) * POLICY_COUNT + p].attn_recall;
				err += run.steps[(size_t)(s - 1) * POLICY_COUNT + p].out_err;
			}
			assert_int_equal(run.sum[p].steps, sc->n - run.from + 1);
			assert_true(recall == run.sum[p].recall_sum);
			assert_true(err == run.sum[p].err_sum);
		}
		report_run_done(&run);
	}
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_target_parse),   cmocka_unit_test(test_ppl_parse),
	        cmocka_unit_test(test_report_order),   cmocka_unit_test(test_split),
	        cmocka_unit_test(test_sweep_smallest), cmocka_unit_test(test_kept),
	        cmocka_unit_test(test_matched),        cmocka_unit_test(test_decode_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
