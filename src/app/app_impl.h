/*
 * app_impl: what the update function's files share (private to src/app/):
 * app.c applies keys and ticks; app_list.c builds the cache lists a user
 * walks and searches.
 */
#ifndef H2O_APP_IMPL_H
#define H2O_APP_IMPL_H

#include "h2o/app.h"

/* The leading policy's list at the shown step (app->list), built again
 * only when what it depends on changed. */
void app_list_build(struct app *app);
/* Select the next (DIR 1) or previous (DIR -1) match of the last search
 * in the list, wrapping round, and say where it stands in the notice. */
void app_search(struct app *app, int dir);
/* Select position POS and walk its list there (a notice if it cannot). */
void app_go_position(struct app *app, long pos);

/* The whole model's figures at the shown step into app->overview_total
 * (app_overview.c), when the overview is open. Seeks every head's
 * timeline: the caller seeks the shown head's after it. */
void app_overview_settle(struct app *app);

/* app_model.c: the real drop at the app's budgets, again (0, or -1 out of
 * memory, the old one kept); and everything of a model freed. */
int app_model_measure(struct app *app);
void app_model_done(struct app *app);

/* A lesson's model scene opened by . or ,: its model and tokenizer loaded
 * from the files the scene names and owned by APP (freed by
 * app_model_done), then app_set_model. 0 (also for a scene without a
 * model), or -1 with one line in ERR. */
int app_open_model(struct app *app, const struct scene *sc, char *err, size_t size);

/* In a lesson, before the first budget change: keep what H2O does at the
 * budgets the scene opened with (app->baseline, app_lesson.c). */
void app_lesson_keep_baseline(struct app *app);
void app_lesson_free(struct app_baseline *base);

#endif
