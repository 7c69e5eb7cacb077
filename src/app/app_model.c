/*
 * app_model: a model scene's real drop, kept at the app's budgets, and the
 * model's work off the screen's thread.
 *
 * The real drop runs the model once per policy over the whole text, and a
 * lesson that is a model scene runs it once more as it loads: seconds for
 * a small model, minutes for a large one. On the terminal (app->background)
 * that work is a job on a thread of its own, as the timelines' builds are:
 * the tick polls it (app_model_poll), the header tells how far it has come
 * (app_model_busy), and quitting stops it between two steps of the model
 * (app_model_done) instead of waiting for the rest of the text. Headless
 * frames do it at once, on the caller's thread, so that every frame is the
 * finished one.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_impl.h"
#include "h2o/app.h"
#include "h2o/cost.h"
#include "h2o/drop.h"
#include "h2o/lessons.h"
#include "h2o/llama.h"
#include "h2o/scene.h"
#include "h2o/tokenizer.h"

/* What a job does: the real drop at the app's budgets, or a lesson opened
 * (its scene loaded, the model run as it loads, then its real drop). */
enum job_kind { JOB_DROP, JOB_LESSON };

struct app_job {
	pthread_t thread;
	enum job_kind kind;
	atomic_bool stop;     /* asked to stop: the user quit, or new budgets */
	atomic_bool finished; /* the thread is done: its results may be read */
	atomic_int per_mille; /* how far it has come, 0 .. 1000 */
	struct budget b;      /* the budgets of the real drop */
	/* JOB_DROP: the app's model and text. */
	const struct llama_model *model;
	const int *tokens;
	int n, given;
	/* JOB_LESSON: the lesson's file and place on the path, and its cost
	 * bound (app.max_memory). */
	char path[4096];
	int index;
	double max_memory;
	double held; /* what the scene shown holds meanwhile */
	int threads;
	/* Results. */
	int rc;                   /* 0, or why not (err) */
	bool too_large;           /* the lesson needs more than max_memory */
	double needed;            /* and how much */
	struct drop_result *drop; /* the real drop, or NULL */
	struct scene *sc;         /* JOB_LESSON: the lesson's scene */
	char err[SCENE_ERROR_MAX];
};

static void vocab_free(struct app *app)
{
	for (int i = 0; app->vocab && i < app->vocab_size; i++)
		free(app->vocab[i]);
	free(app->vocab);
	app->vocab = NULL;
	app->vocab_size = 0;
}

static void drop_free(struct drop_result *r)
{
	if (r)
		drop_result_free(r);
	free(r);
}

/* ---- the job ------------------------------------------------------------ */

/* The job's progress between FROM and FROM + SHARE of the whole. */
struct job_phase {
	struct app_job *job;
	double from, share;
};

static void phase_report(void *ctx, double done, double total)
{
	const struct job_phase *ph = ctx;
	const double f = total > 0 ? done / total : 0;
	atomic_store(&ph->job->per_mille, (int)(1000 * (ph->from + ph->share * f)));
}

static bool phase_stop(void *ctx)
{
	const struct job_phase *ph = ctx;
	return atomic_load(&ph->job->stop);
}

static int phase_told(void *ctx, double done, double total)
{
	phase_report(ctx, done, total);
	return phase_stop(ctx);
}

/* The real drop of MODEL over TOKENS at the job's budgets, told as a
 * phase: 0 and job->drop, or -1 with job->err. */
static int job_drop(struct app_job *job, const struct llama_model *model, const int *tokens, int n,
                    int given, double from, double share)
{
	struct job_phase ph = {job, from, share};
	const struct progress pr = {.report = phase_report, .ctx = &ph, .stop = phase_stop};
	struct drop_result *r = calloc(1, sizeof *r);
	char err[DROP_ERR_MAX];
	const int rc = r ? drop_measure_told(model, tokens, n, given, &job->b,
	                                     (1u << POLICY_COUNT) - 1u, r, err, &pr)
	                 : DROP_NOMEM;
	if (rc != 0) {
		free(r);
		snprintf(job->err, sizeof job->err, "%s",
		         rc == DROP_NOMEM ? "out of memory while running the model" : err);
		return -1;
	}
	job->drop = r;
	return 0;
}

/* The memory a lesson's screens take (cost.h) at its own budgets, with
 * THREADS builds at once: its timelines, its model and the model's runs. */
static double lesson_bytes(const struct scene *sc, int threads)
{
	const struct budget b = app_lesson_budget(sc);
	return cost_of(sc, &b, COST_SCREENS, ENGINE_ALL_POLICIES, NULL, 0, threads).bytes;
}

/* Open a lesson: its scene (the model run as it loads, within the bound),
 * the cost of its screens against the bound, its real drop. */
static void job_lesson(struct app_job *job)
{
	struct job_phase load = {job, 0, 1.0 / (1 + POLICY_COUNT)};
	const struct scene_options opts = {.max_memory = job->max_memory,
	                                   .needed = &job->needed,
	                                   .told = phase_told,
	                                   .told_ctx = &load};
	job->rc = scene_load_file_opts(job->path, &opts, &job->sc, job->err);
	if (job->rc == SCENE_TOO_LARGE)
		job->too_large = true;
	if (job->rc != 0)
		return;
	const double bytes = lesson_bytes(job->sc, job->threads);
	if (job->max_memory > 0 && bytes > job->max_memory) {
		job->too_large = true;
		job->needed = bytes;
		app_lesson_cost_words(job->sc, job->err, sizeof job->err);
		job->rc = -1;
		return;
	}
	const struct scene *sc = job->sc;
	job->b = app_lesson_budget(sc);
	if (sc->model && job_drop(job, sc->model, sc->tokens, sc->n, sc->given, load.share,
	                          1.0 - load.share) != 0)
		job->rc = -1;
}

static void *job_run(void *arg)
{
	struct app_job *job = arg;
	if (job->kind == JOB_DROP)
		job->rc = job_drop(job, job->model, job->tokens, job->n, job->given, 0, 1);
	else
		job_lesson(job);
	atomic_store(&job->finished, true);
	return NULL;
}

/* Start JOB (filled) on a thread of its own: 0, or -1 (nothing started)
 * when no thread can be made. */
static int job_start(struct app *app, struct app_job *job)
{
	atomic_init(&job->stop, false);
	atomic_init(&job->finished, false);
	atomic_init(&job->per_mille, 0);
	if (pthread_create(&job->thread, NULL, job_run, job) != 0)
		return -1;
	app->job = job;
	return 0;
}

/* Stop APP's job, if any, and wait for it (a step of the model at most):
 * everything it made is freed. */
static void job_cancel(struct app *app)
{
	struct app_job *job = app->job;
	if (!job)
		return;
	atomic_store(&job->stop, true);
	pthread_join(job->thread, NULL);
	drop_free(job->drop);
	scene_free(job->sc);
	free(job);
	app->job = NULL;
}

/* ---- the model of the shown scene ------------------------------------- */

void app_model_done(struct app *app)
{
	job_cancel(app);
	drop_free(app->drop);
	app->drop = NULL;
	vocab_free(app);
	app->model = NULL;
}

/* The model runs the policies c cycles through (app_set_policies), H2O
 * and the full cache: the panel shows H2O and the compared one against
 * the full cache. */
int app_model_measure(struct app *app)
{
	if (!app->model)
		return 0;
	if (app->background) {
		/* The old budgets' figures go: the panel waits for the new. */
		job_cancel(app);
		drop_free(app->drop);
		app->drop = NULL;
		struct app_job *job = calloc(1, sizeof *job);
		if (!job)
			return -1;
		job->kind = JOB_DROP;
		job->b = app->choice;
		job->model = app->model;
		job->tokens = app->tokens;
		job->n = app->scene->n;
		job->given = app->given;
		if (job_start(app, job) != 0) {
			free(job);
			return -1;
		}
		return 0;
	}
	struct drop_result *r = calloc(1, sizeof *r);
	char err[DROP_ERR_MAX];
	if (!r || drop_measure(app->model, app->tokens, app->scene->n, app->given, &app->choice,
	                       drop_policies_run(app->policies | ENGINE_POLICY(POLICY_H2O)), r,
	                       err) != 0) {
		free(r);
		return -1;
	}
	drop_free(app->drop);
	app->drop = r;
	return 0;
}

/* Each vocabulary id's text, and the model, tokens and text's length
 * (the run is app_model_measure's). */
static int set_vocab(struct app *app, const struct llama_model *m, const struct llama_tokenizer *t,
                     const int *tokens, int given)
{
	app_model_done(app);
	const int vocab = llama_model_config(m)->vocab_size;
	app->vocab = calloc((size_t)vocab, sizeof *app->vocab);
	if (!app->vocab)
		return -1;
	app->vocab_size = vocab;
	/* Each id's text as it reads in the middle of a text (after a token
	 * that is not BOS): the untrusted bytes, drawn only by frame_text. */
	for (int i = 0; i < vocab; i++) {
		size_t len = 0;
		const char *piece = llama_tokenizer_decode(t, LLAMA_TOKEN_EOS, i, &len);
		app->vocab[i] = malloc(len + 1);
		if (!app->vocab[i]) {
			app_model_done(app);
			return -1;
		}
		if (len)
			memcpy(app->vocab[i], piece, len);
		app->vocab[i][len] = '\0';
	}
	app->model = m;
	app->tokens = tokens;
	app->given = given;
	return 0;
}

int app_set_model(struct app *app, const struct llama_model *m, const struct llama_tokenizer *t,
                  const int *tokens, int given)
{
	if (set_vocab(app, m, t, tokens, given) != 0 || app_model_measure(app) != 0) {
		app_model_done(app);
		return -1;
	}
	return 0;
}

int app_open_model(struct app *app, const struct scene *sc, char *err, size_t size)
{
	if (!sc->model)
		return 0;
	/* The scene loaded and checked them, and keeps them. */
	if (app_set_model(app, sc->model, sc->tokenizer, sc->tokens, sc->given) != 0) {
		snprintf(err, size, "out of memory while running the model");
		return -1;
	}
	return 0;
}

/* ---- opening a lesson in the background -------------------------------- */

int app_model_open_lesson(struct app *app, const char *path, int index, int threads)
{
	if (app->job && app->job->kind == JOB_LESSON)
		return -1;
	struct app_job *job = calloc(1, sizeof *job);
	if (!job)
		return -1;
	job->kind = JOB_LESSON;
	snprintf(job->path, sizeof job->path, "%s", path);
	job->index = index;
	/* The scene shown stays held until the lesson replaces it. */
	job->held = app->max_memory > 0 ? app_lesson_held(app, threads) : 0;
	job->max_memory = app_lesson_bound(app->max_memory, job->held);
	job->threads = threads;
	/* The shown scene's real drop, if it is still running, gives way. */
	job_cancel(app);
	if (job_start(app, job) != 0) {
		free(job);
		return -1;
	}
	return 0;
}

/* The lesson JOB opened (its scene loaded, its real drop run) in place of
 * APP's scene; a notice when it cannot be. */
static void lesson_opened(struct app *app, struct app_job *job)
{
	const int index = job->index;
	if (job->rc != 0) {
		if (job->too_large)
			app_lesson_refuse(app, index, job->needed, job->held, job->err);
		else
			snprintf(app->notice, sizeof app->notice, "lesson %d: %.130s", index + 1,
			         job->err);
		/* The shown scene's real drop gave way to the lesson: again. */
		if (app->model && !app->drop)
			app_model_measure(app);
		return;
	}
	struct scene *sc = job->sc;
	struct drop_result *drop = job->drop;
	job->sc = NULL;
	job->drop = NULL;
	struct app next;
	const struct budget b = app_lesson_budget(sc);
	if (app_init_only(&next, sc, &b, app->compare, true, app->chosen) != 0 ||
	    (sc->model && set_vocab(&next, sc->model, sc->tokenizer, sc->tokens, sc->given) != 0)) {
		next.owned = sc;
		app_done(&next);
		drop_free(drop);
		snprintf(app->notice, sizeof app->notice,
		         "lesson %d: out of memory while opening it", index + 1);
		return;
	}
	next.owned = sc;
	next.drop = drop;
	app_lesson_swap(app, &next, index);
}

unsigned app_model_poll(struct app *app)
{
	struct app_job *job = app->job;
	if (!job || !atomic_load(&job->finished))
		return job ? APP_REDRAW : 0;
	pthread_join(job->thread, NULL);
	app->job = NULL;
	if (job->kind == JOB_DROP) {
		if (job->rc == 0) {
			app->drop = job->drop;
			job->drop = NULL;
		} else {
			snprintf(app->notice, sizeof app->notice, "the model's figures: %.120s",
			         job->err);
		}
	} else {
		lesson_opened(app, job);
	}
	drop_free(job->drop);
	scene_free(job->sc);
	free(job);
	return APP_REDRAW;
}

bool app_model_busy(const struct app *app, char *what, size_t size)
{
	const struct app_job *job = app->job;
	if (!job)
		return false;
	if (what && size) {
		const int pm = atomic_load(&job->per_mille);
		if (job->kind == JOB_LESSON)
			snprintf(what, size, "opening lesson %d %d%%", job->index + 1, pm / 10);
		else
			snprintf(what, size, "model %d%%", pm / 10);
	}
	return true;
}
