/*
 * main: the command line (design §4). Reads the options (options.c), loads
 * the scene, resolves the budgets (budget.c) and hands over to one mode:
 * the trace, the report, the budget sweep, the headless frames or the
 * terminal.
 *
 * Exit status (options.h): 0 success, 1 stdout or --plot's file not
 * written, 2 bad usage, 3 bad scene, 4 out of memory. Nothing touches the
 * terminal before the options have been checked; the screen then goes up
 * at once and shows the scene's loading (tui.h).
 */
#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "budget.h"
#include "h2o/app.h"
#include "h2o/cost.h"
#include "h2o/llama.h"
#include "h2o/drop.h"
#include "h2o/engine.h"
#include "h2o/heads.h"
#include "h2o/lessons.h"
#include "h2o/llama.h"
#include "h2o/report.h"
#include "h2o/report_print.h"
#include "h2o/scene.h"
#include "h2o/text.h"
#include "h2o/tokenizer.h"
#include "h2o/trace.h"
#include "headless.h"
#include "options.h"
#include "output.h"
#include "plot_write.h"
#include "progress.h"
#include "steps.h"
#include "tui.h"

/* A model scene's model and tokenizer for the real drop (drop.h): the
 * scene's own, as it loaded and checked them; both NULL for a scene
 * without a model. */
struct model_pair {
	const struct llama_model *m;
	const struct llama_tokenizer *t;
};

/* A run: the options and everything made of them, freed in one place
 * (run_free). */
struct run {
	struct options o;
	bool utf8;               /* the user's locale is UTF-8 */
	struct lessons *lessons; /* the lesson path the scene is on, or NULL */
	int lesson;
	char first[4096]; /* the first lesson's path, without a scene */
	struct scene *scene;
	struct budget_choice choice;
	int *budgets, count; /* --budget-sweep's */
	bool *steps;         /* --trace-steps': steps[t] for each step written */
	struct cost cost;
	unsigned keep; /* the report's kept figures (REPORT_KEEP_*) */
	enum report_format format;
	struct model_pair mp;
	/* Told of a model scene's run as it loads, which it may stop
	 * (tui.h, tui_load); NULL outside the interactive screen. */
	int (*told)(void *ctx, double done, double total);
	void *told_ctx;
	/* The policies shown (--policies, else the scene's "policies", else
	 * every one), a bit each (ENGINE_POLICY). */
	unsigned shown;
};

static void run_free(struct run *r)
{
	free(r->budgets);
	free(r->steps);
	scene_free(r->scene);
	lessons_free(r->lessons);
}

/* Display widths need a UTF-8 LC_CTYPE; the user's own is kept when it is
 * one. Returns whether the user's locale was UTF-8. */
static bool setup_locale(bool keep_user_ctype)
{
	setlocale(LC_ALL, "");
	/* Numbers on screen and in the trace use a decimal point whatever
	 * the user's locale: "0,5" is not JSON. */
	setlocale(LC_NUMERIC, "C");
	const bool utf8 = text_locale_is_utf8();
	if (!utf8 && !keep_user_ctype && !setlocale(LC_CTYPE, "C.UTF-8"))
		setlocale(LC_CTYPE, "en_US.UTF-8");
	return utf8;
}

static void stderr_sink(void *ctx, const char *p, size_t n)
{
	(void)ctx;
	fwrite(p, 1, n, stderr);
}

/* The real drop failed with RC (drop.h) and ERR while doing WHAT: out of
 * memory (EXIT_MEMORY), or the model's reason, after its file's name
 * (EXIT_SCENE). */
static int drop_failed(const struct scene *sc, int rc, const char *err, const char *what)
{
	if (rc == DROP_NOMEM)
		return output_out_of_memory(what);
	fputs("h2o-tui: ", stderr);
	text_escape(sc->model_path, strlen(sc->model_path), SIZE_MAX, TEXT_ESCAPE_MESSAGE,
	            stderr_sink, NULL);
	fprintf(stderr, ": %s\n", err);
	return EXIT_SCENE;
}

/* The model's name for the drop's table: its file's base name. */
static const char *model_name(const struct scene *sc)
{
	const char *slash = strrchr(sc->model_path, '/');
	return slash ? slash + 1 : sc->model_path;
}

/* The memory limit of the run: --max-memory's, else what the machine has
 * free (0: unknown, no limit). */
static double memory_limit(const struct options *o)
{
	return o->max_memory > 0 ? o->max_memory : cost_available_memory();
}

/* NAME needs NEED bytes of memory for WHAT, more than O's limit: one line
 * naming the figure and the option, EXIT_MEMORY. */
static int refuse(const struct options *o, const char *name, double need, const char *what)
{
	char needed[32], have[32];
	cost_format_bytes(need, needed, sizeof needed);
	cost_format_bytes(memory_limit(o), have, sizeof have);
	fputs("h2o-tui: ", stderr);
	/* The name is the user's: a file name may hold anything. */
	text_escape(name, strlen(name), SIZE_MAX, TEXT_ESCAPE_MESSAGE, stderr_sink, NULL);
	if (o->max_memory > 0)
		fprintf(stderr,
		        ": needs about %s of memory (%s), more than --max-memory %s allows\n",
		        needed, what, have);
	else
		fprintf(stderr,
		        ": needs about %s of memory (%s), more than the %s this machine has free; "
		        "--max-memory SIZE raises the limit\n",
		        needed, what, have);
	return EXIT_MEMORY;
}

/* The run of cost R->cost needs more memory than it may take: one line
 * naming the figure and the option, EXIT_MEMORY. Returns -1 when it fits. */
static int refuse_if_too_large(const struct run *r)
{
	const double limit = memory_limit(&r->o);
	if (limit <= 0 || r->cost.bytes <= limit)
		return -1;
	const int n = r->scene->n, heads = heads_count(r->scene);
	char what[96];
	snprintf(what, sizeof what, "%d token%s, %d head%s", n, n == 1 ? "" : "s", heads,
	         heads == 1 ? "" : "s");
	return refuse(&r->o, r->o.scene, r->cost.bytes, what);
}

/* ---- preparing a run ------------------------------------------------------ */

/* The scene of R's options (a file, the first lesson, or --model's) into
 * R->scene. Returns -1, or the exit status. */
static int load_scene(struct run *r)
{
	struct options *o = &r->o;
	char err[SCENE_ERROR_MAX];
	double needed = 0;
	int rc;
	/* The lesson path the scene is on, if any; without a scene, its first
	 * lesson (the scenes' folder is the source tree's, H2O_SCENES_DIR). */
	if (o->model) {
		/* No lesson path. */
	} else if (!o->scene) {
		if (lessons_load(H2O_SCENES_DIR, &r->lessons, err, sizeof err) < 0)
			return options_usage_error(
			        "expected a scene file (SCENE.json); the lessons: %s", err);
		o->scene = lessons_path(r->lessons, r->lesson = 0, r->first, sizeof r->first);
	} else
		r->lessons = lessons_of_scene(o->scene, H2O_SCENES_DIR, &r->lesson);
	/* The names a scene's "policies" may list, in the order of the bits
	 * of scene.policies: the table's. */
	const char *names[POLICY_COUNT + 1];
	unsigned keyed = 0, queried = 0;
	for (int p = 0; p < POLICY_COUNT; p++) {
		names[p] = policies[p]->name;
		keyed |= policy_reads_keys((enum policy_id)p) ? 1u << p : 0u;
		queried |= policy_reads_queries((enum policy_id)p) ? 1u << p : 0u;
	}
	names[POLICY_COUNT] = NULL;
	if (o->model) {
		const struct scene_model_args model = {
		        .model = o->model,
		        .tokenizer = o->tokenizer,
		        .text_file = o->text_file,
		        .text = o->text_string,
		        .text_len = o->text_string ? strlen(o->text_string) : 0,
		        .generate = o->generate,
		        .temperature = o->temperature,
		        .seed = (unsigned long long)o->seed,
		        .heavy = o->heavy >= 0 ? o->heavy : MODEL_DEFAULT_BUDGET,
		        .recent = o->recent >= 0 ? o->recent : MODEL_DEFAULT_BUDGET,
		        .max_memory = memory_limit(o),
		        .needed = &needed,
		        .told = r->told,
		        .told_ctx = r->told_ctx,
		        .policy_queries = queried,
		        .policies = o->policies,
		};
		o->scene = o->model; /* what messages name */
		rc = scene_load_model(&model, &r->scene, err);
	} else {
		const struct scene_options load = {.allow_paths = o->allow_paths,
		                                   .max_memory = memory_limit(o),
		                                   .needed = &needed,
		                                   .told = r->told,
		                                   .told_ctx = r->told_ctx,
		                                   .policy_names = names,
		                                   .policy_keys = keyed,
		                                   .check_setting = policy_settings_check_one,
		                                   .policy_queries = queried,
		                                   .policies = o->policies};
		rc = scene_load_file_opts(o->scene, &load, &r->scene, err);
	}
	if (rc == SCENE_TOO_LARGE)
		return refuse(o, o->scene, needed, err);
	if (rc == SCENE_STOPPED)
		return 0; /* the user quit while the model ran */
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		return EXIT_SCENE;
	}
	return -1;
}

/* load_scene for tui_load: told of the model's run, and stopped by it. */
static int load_told(void *ctx, int (*told)(void *, double, double), void *told_ctx)
{
	struct run *r = ctx;
	r->told = told;
	r->told_ctx = told_ctx;
	const int rc = load_scene(r);
	r->told = NULL;
	return rc;
}

/* The policies shown, into R->shown, and the one beside H2O on the screen
 * among them (the first of c's cycle from the default, or the full cache
 * when only H2O is shown). Returns -1, or the exit status. */
static int choose_policies(struct run *r)
{
	struct options *o = &r->o;
	/* A policy the scene cannot run as it is meant (one that reads keys
	 * on an attention scene, one that reads the queries before RoPE on a
	 * model scene), chosen on the command line: refused, not run as a
	 * window. */
	for (int p = 0; p < POLICY_COUNT; p++) {
		const bool chosen = (o->policies & ENGINE_POLICY(p)) ||
		                    (o->compare_given && o->compare == (enum policy_id)p);
		const char *why = engine_policy_refused(r->scene, (enum policy_id)p);
		if (chosen && why) {
			fprintf(stderr, "h2o-tui: %s %s: %s is %s\n",
			        o->compare_given && o->compare == (enum policy_id)p ? "--compare"
			                                                            : "--policies",
			        policies[p]->name, o->scene, why);
			return EXIT_USAGE;
		}
	}
	r->shown = o->policies          ? o->policies
	           : r->scene->policies ? r->scene->policies
	                                : ENGINE_ALL_POLICIES;
	/* By default, an attention scene runs every policy but those that
	 * read keys, which it has none of (the report says so). */
	r->shown = engine_policies_for(r->scene, r->shown);
	if (o->compare_given) {
		if (r->shown & ENGINE_POLICY(o->compare))
			return -1;
		char names[256];
		size_t at = 0;
		names[0] = '\0';
		for (int p = 0; p < POLICY_COUNT && at < sizeof names; p++)
			if (r->shown & ENGINE_POLICY(p))
				at += (size_t)snprintf(names + at, sizeof names - at, "%s%s",
				                       at ? ", " : "", policies[p]->name);
		char msg[512];
		snprintf(msg, sizeof msg, "--compare %s: not among the policies chosen (%s)",
		         policies[o->compare]->name, names);
		return options_usage_error("%s", msg);
	}
	for (int k = 0; k < POLICY_COUNT; k++) {
		const enum policy_id p = (enum policy_id)((COMPARE_DEFAULT + k) % POLICY_COUNT);
		if (app_comparable(p) && (r->shown & ENGINE_POLICY(p))) {
			o->compare = p;
			break;
		}
	}
	return -1;
}

/* What the options ask of the loaded scene: budgets, targets, the sweep's
 * list, the memory it will take, the model. Returns -1, or the exit
 * status. */
static int prepare_run(struct run *r)
{
	const struct options *o = &r->o;
	const struct scene *scene = r->scene;
	int rc = budget_resolve(o, scene, &r->choice);
	if (rc >= 0)
		return rc;
	if ((rc = choose_policies(r)) >= 0)
		return rc;
	/* The model's own cache, which the real run evicts from, is one per
	 * key/value head: no copy per query head to evict from. */
	if (scene->model_path && r->choice.budget.settings.p[POLICY_PYRAMIDKV].granularity ==
	                                 POLICY_GRANULARITY_QUERY_HEAD)
		return options_usage_error("%s", "pyramidkv.granularity=query_head: a model "
		                                 "scene's cache is the model's, one per key/value "
		                                 "head; it runs on attention and vector scenes");
	if (o->ppl_given && !scene->model_path)
		return options_usage_error("--target ppl=%s: the scene has no model, so no "
		                           "perplexity to compare: use recall, err or cos",
		                           strchr(o->ppl_arg, '=') + 1);
	if (o->target.figure != REPORT_RECALL && !scene->v)
		return options_usage_error("--target %s: the scene has no values, so no output "
		                           "to compare: use recall",
		                           report_figure_word(o->target.figure));
	r->format = o->json ? REPORT_JSON : o->csv ? REPORT_CSV : REPORT_TEXT;
	/* The report's CSV and plot are its steps. */
	r->keep = (o->per_head ? REPORT_KEEP_HEADS : 0) | (o->per_layer ? REPORT_KEEP_LAYERS : 0) |
	          (o->with_prompt ? REPORT_WITH_PROMPT : 0) |
	          (o->report && (o->csv || o->plot) ? REPORT_KEEP_STEPS : 0);
	if (o->sweep && (rc = budget_sweep_list(scene, o->sweep, &r->budgets, &r->count)) >= 0)
		return rc;
	if (o->trace_steps) {
		r->steps = calloc((size_t)scene->n + 1, sizeof *r->steps);
		if (!r->steps)
			return output_out_of_memory("reading --trace-steps");
		if ((rc = steps_parse(o->trace_steps, scene->n, r->steps)) >= 0)
			return rc;
	}
	const enum cost_mode mode = o->trace    ? COST_TRACE
	                            : o->report ? COST_REPORT
	                            : o->sweep  ? COST_SWEEP
	                                        : COST_SCREENS;
	const long cores = sysconf(_SC_NPROCESSORS_ONLN);
	r->cost = cost_of(scene, &r->choice.budget, mode, r->shown, r->budgets, r->count,
	                  cores > 0 ? (int)cores : 1);
	/* And the report's kept figures. */
	r->cost.bytes += o->report  ? report_keep_bytes(scene, r->keep)
	                 : o->sweep ? r->count * report_keep_bytes(scene, r->keep)
	                            : 0;
	if ((rc = refuse_if_too_large(r)) >= 0)
		return rc;
	r->mp = (struct model_pair){scene->model, scene->tokenizer};
	return -1;
}

/* ---- the modes ------------------------------------------------------------ */

/* The model's runs' share of the work of R, the model run once per policy
 * RUNS times (cost_of counts them in r->cost.madds). */
static double model_share(const struct run *r, int runs)
{
	const double model =
	        runs * drop_predict_madds(r->mp.m, r->scene->n, drop_policies_run(r->shown));
	const double all = r->cost.madds;
	return all > 0 && model < all ? model / all : 0.5;
}

/* --trace: the JSON Lines trace on stdout (a model scene's carries the
 * model run per policy). */
static int run_trace(const struct run *r)
{
	const struct scene *scene = r->scene;
	/* The trace grows with the square of the tokens: the line says how
	 * large it will be. */
	char size[32], what[64];
	cost_format_bytes(r->cost.trace_bytes, size, sizeof size);
	snprintf(what, sizeof what,
	         r->steps ? "tracing the steps of --trace-steps" : "tracing (about %s)", size);
	struct meter meter;
	const struct progress *pr = progress_start(&meter, r->o.quiet, what);
	struct drop_result drop = {0};
	char derr[DROP_ERR_MAX];
	int rc;
	const int drc =
	        r->mp.m ? drop_measure(r->mp.m, scene->tokens, scene->n, scene->given,
	                               &r->choice.budget, drop_policies_run(r->shown), &drop, derr)
	                : 0;
	if (drc != 0)
		rc = drop_failed(scene, drc, derr, "running the model per policy");
	else
		rc = trace_write_drop(scene, &r->choice.budget, r->mp.m ? &drop : NULL, r->shown,
		                      r->steps, stdout, pr) < 0
		             ? output_failed("writing the trace")
		             : 0;
	drop_result_free(&drop);
	progress_done(&meter);
	return rc;
}

/* --report: every policy's figures over the scene (and a model scene's
 * real drop at the same budget), then --plot's file. */
static int run_report(const struct run *r)
{
	const struct options *o = &r->o;
	const struct scene *scene = r->scene;
	const struct budget *b = &r->choice.budget;
	struct meter meter;
	const struct progress *whole = progress_start(&meter, o->quiet, "computing the report");
	/* The engines' figures, then the model run once per policy. */
	const double share = r->mp.m ? model_share(r, 1) : 0.0;
	struct progress_phase engines, runs;
	const struct progress *pr = progress_phase(&engines, whole, 0.0, 1.0 - share);
	struct report_run run;
	struct drop_result drop = {0};
	const struct report_model model = {&drop, NULL, r->mp.m ? model_name(scene) : NULL,
	                                   o->ppl_ratio};
	char err[DROP_ERR_MAX];
	int rc = 0;
	if (report_measure_only(scene, b, &o->target, r->keep, r->shown, &run, pr, 0, scene->n) <
	    0) {
		rc = output_out_of_memory("computing the report");
	} else {
		const int drc = r->mp.m ? drop_measure_told(
		                                  r->mp.m, scene->tokens, scene->n, scene->given, b,
		                                  drop_policies_run(r->shown), &drop, err,
		                                  progress_phase(&runs, whole, 1.0 - share, share))
		                        : 0;
		if (drc != 0)
			rc = drop_failed(scene, drc, err, "running the model per policy");
		if (rc == 0 && report_print_model(&run, r->mp.m ? &model : NULL, r->format,
		                                  o->per_head, stdout) < 0)
			rc = output_failed("computing the report");
		if (rc == 0 && o->plot)
			rc = plot_write(o->plot, o->quiet, o->smooth, &run, r->mp.m ? &drop : NULL,
			                NULL, NULL);
		report_run_done(&run);
	}
	drop_result_free(&drop);
	progress_done(&meter);
	return rc;
}

/* --budget-sweep: the report at each budget of the list (and a model
 * scene's real drop at each), then --plot's file. */
static int run_sweep(const struct run *r)
{
	const struct options *o = &r->o;
	const struct scene *scene = r->scene;
	const struct report_split *split = &r->choice.split;
	struct meter meter;
	const struct progress *whole =
	        progress_start(&meter, o->quiet, "computing the budget sweep");
	/* The engines at every budget, then the model's runs at every one. */
	const double share = r->mp.m ? model_share(r, r->count) : 0.0;
	struct progress_phase engines, runs;
	const struct progress *pr = progress_phase(&engines, whole, 0.0, 1.0 - share);
	struct report_sweep sw;
	struct drop_sweep ds = {0};
	const struct report_model model = {NULL, &ds, r->mp.m ? model_name(scene) : NULL,
	                                   o->ppl_ratio};
	char err[DROP_ERR_MAX];
	int rc = 0;
	if (report_sweep_measure_only(scene, &r->choice.budget, r->budgets, r->count, split,
	                              &o->target, r->keep, r->shown, &sw, pr) < 0) {
		rc = output_out_of_memory("computing the budget sweep");
	} else {
		const int drc =
		        r->mp.m ? drop_sweep_measure(
		                          r->mp.m, scene->tokens, scene->n, scene->given,
		                          &r->choice.budget, r->budgets, r->count, split->heavy,
		                          o->ppl_ratio, drop_policies_run(r->shown), &ds, err,
		                          progress_phase(&runs, whole, 1.0 - share, share))
		                : 0;
		if (drc != 0)
			rc = drop_failed(scene, drc, err,
			                 "running the model per policy and budget");
		if (rc == 0 && report_sweep_print_model(&sw, r->mp.m ? &model : NULL, r->format,
		                                        o->per_head, stdout) < 0)
			rc = output_failed("computing the budget sweep");
		if (rc == 0 && o->plot)
			rc = plot_write(o->plot, o->quiet, o->smooth, NULL, NULL, &sw,
			                r->mp.m ? &ds : NULL);
		report_sweep_done(&sw);
	}
	drop_sweep_free(&ds);
	progress_done(&meter);
	return rc;
}

/* The screens: --headless's frames on stdout, or the terminal. */
static int run_screens(const struct run *r)
{
	const struct options *o = &r->o;
	struct app app;
	/* The terminal shows a long scene while its timeline builds;
	 * headless frames are of the whole timeline. */
	/* The app is given the choice itself (0: every policy), and runs what
	 * each lesson's scene can of it. */
	const int ok = app_init_only(&app, r->scene, &r->choice.budget, o->compare, !o->headless,
	                             o->policies ? o->policies : r->scene->policies);
	if (ok >= 0) {
		app_set_lessons(&app, r->lessons, r->lesson);
		app_set_memory(&app, memory_limit(o), o->max_memory > 0);
	}
	const bool model_ok =
	        ok < 0 || !r->mp.m ||
	        app_set_model(&app, r->mp.m, r->mp.t, r->scene->tokens, r->scene->given) == 0;
	int rc;
	if (ok < 0 || !model_ok)
		rc = output_out_of_memory("building the timeline");
	else if (o->headless)
		rc = headless_run(&app, o->cols, o->rows, o->ascii, o->keys, stdout) < 0
		             ? output_failed("drawing the frames")
		             : 0;
	else
		rc = tui_end(tui_run(&app)); /* the terminal back before the builds stop */
	app_done(&app);
	return rc;
}

/* ---- main ----------------------------------------------------------------- */

/* What the loading frame names: the scene's file, or --model's, or the
 * first lesson when there is neither. */
static const char *screen_file(const struct options *o)
{
	return o->model ? o->model : o->scene ? o->scene : "the first lesson";
}

/* Before the scene: the engine's kernels, a terminal for the screen, the
 * locale. Returns -1, or the exit status. */
static int prepare_process(struct run *r)
{
	const struct options *o = &r->o;
	/* H2O_KERNEL=avx512|avx2|portable: the engine's and the model's
	 * kernels, to test each
	 * variant; one this processor cannot run is a usage error. */
	const char *kernel = getenv("H2O_KERNEL");
	int kernel_rc = kernel && *kernel ? engine_kernel_select(kernel) : 0;
	if (kernel_rc == 0 && kernel && *kernel)
		kernel_rc = llama_kernel_select(kernel);
	if (kernel_rc < 0)
		return options_usage_error(kernel_rc == -1
		                                   ? "H2O_KERNEL=%s: this processor cannot run it"
		                                   : "H2O_KERNEL=%s: not avx512, avx2 or portable",
		                           kernel);
	const bool interactive = !o->headless && !o->trace && !o->report && !o->sweep;
	if (interactive && !isatty(STDOUT_FILENO))
		return options_usage_error(
		        "%s", "stdout is not a terminal: use --headless for text frames");
	r->utf8 = setup_locale(interactive);
	return -1;
}

int main(int argc, char **argv)
{
	output_guard();
	struct run r = {.lesson = -1};
	int rc = options_parse(argc, argv, &r.o);
	if (rc < 0)
		rc = prepare_process(&r);
	/* The screen goes up at once and shows the scene's loading, on a
	 * thread, which q stops (a model scene runs its model as it loads);
	 * the other modes load here. */
	const bool interactive = !r.o.headless && !r.o.trace && !r.o.report && !r.o.sweep;
	if (rc < 0 && interactive)
		rc = tui_start(r.o.ascii || !r.utf8, !r.o.no_mouse);
	if (rc < 0)
		rc = interactive ? tui_load(load_told, &r, screen_file(&r.o)) : load_scene(&r);
	if (rc < 0)
		rc = prepare_run(&r);
	if (rc < 0)
		rc = r.o.trace    ? run_trace(&r)
		     : r.o.report ? run_report(&r)
		     : r.o.sweep  ? run_sweep(&r)
		                  : run_screens(&r);
	/* Whatever ended the run, the terminal is given back, then what was
	 * said on stderr meanwhile. */
	rc = tui_end(rc);
	run_free(&r);
	return output_finish(rc);
}
