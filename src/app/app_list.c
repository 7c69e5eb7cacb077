/*
 * app_list: the cache lists a user walks and searches (app.h, struct
 * app_list): every arrived position of the leading policy, section by
 * section, in the app's sort order; the search over token text and going
 * to a position. Part of the update function (app_impl.h).
 */
#include "h2o/app.h"

#include <stdio.h>
#include <stdlib.h>

#include "app_impl.h"
#include "h2o/engine.h"
#include "h2o/scene.h"
#include "h2o/timeline.h"

enum policy_id app_lead(const struct app *app)
{
	return app->walk == WALK_COMPARED ? app->compare : POLICY_H2O;
}

/* An arrived position with its sort key, so that qsort needs no context. */
struct keyed {
	double score;
	int pos;
};

/* Higher scores first; on a tie the lower position. */
static int by_score_desc(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->pos - y->pos;
}

/* The score of every arrived position of policy P at step T into
 * SCORE[pos]: a kept one's now, an evicted one's when it went. Returns -1
 * when out of memory. */
static int list_scores(const struct app *app, enum policy_id p, int t, double *score)
{
	if (p == POLICY_FULL) {
		/* The timeline keeps no full cache at the step: its scores
		 * are recomputed, all positions at once. */
		int *all = malloc((size_t)t * sizeof *all);
		if (!all)
			return -1;
		for (int i = 0; i < t; i++)
			all[i] = i;
		const int rc = timeline_full_scores(app->tl, t, all, t, score);
		free(all);
		return rc;
	}
	const int len = engine_len(app->shown, p);
	const int *pos = engine_positions(app->shown, p);
	const double *sc = engine_scores(app->shown, p);
	for (int i = 0; i < len; i++)
		score[pos[i]] = sc[i];
	for (int i = timeline_evictions_until(app->tl, p, t) - 1; i >= 0; i--) {
		const struct eviction *ev = timeline_eviction(app->tl, p, i);
		score[ev->pos] = ev->score;
	}
	return 0;
}

/* Sort each section of LIST by score, highest first. */
static void sort_by_score(struct app *app, struct app_list *list)
{
	struct keyed *k = malloc((size_t)list->len * sizeof *k);
	if (!k || list_scores(app, list->p, list->step, app->scratch) < 0) {
		free(k);
		snprintf(app->notice, sizeof app->notice,
		         "out of memory: the list stays by position");
		return;
	}
	for (int s = 0; s < APP_SEC_COUNT; s++) {
		const int from = list->start[s], count = list->start[s + 1] - from;
		for (int i = 0; i < count; i++)
			k[i] = (struct keyed){app->scratch[list->pos[from + i]],
			                      list->pos[from + i]};
		qsort(k, (size_t)count, sizeof *k, by_score_desc);
		for (int i = 0; i < count; i++)
			list->pos[from + i] = k[i].pos;
	}
	free(k);
}

/* The leading policy's list at the shown step (app.h, struct app_list),
 * built again only when what it depends on changed: the sort by score of
 * the full cache recomputes every score. */
void app_list_build(struct app *app)
{
	struct app_list *list = &app->list;
	const enum policy_id p = app_lead(app);
	const int t = app->step;
	if (list->valid && list->p == p && list->step == t && list->sort == app->sort &&
	    list->tl == app->tl)
		return;
	for (int i = 0; i < list->len; i++)
		list->index[list->pos[i]] = -1;
	list->p = p;
	list->step = t;
	list->sort = app->sort;
	list->tl = app->tl;
	list->valid = true;
	int k = 0;
	/* Kept ones by region, in the order they came. */
	if (p == POLICY_FULL) {
		list->start[APP_SEC_OLD] = 0;
		for (int pos = 0; pos < t; pos++)
			list->pos[k++] = pos;
		list->start[APP_SEC_RECENT] = k;
	} else {
		const int len = engine_len(app->shown, p);
		const int *pos = engine_positions(app->shown, p);
		for (int s = APP_SEC_OLD; s <= APP_SEC_RECENT; s++) {
			const enum region want = s == APP_SEC_OLD ? REGION_OLD : REGION_RECENT;
			list->start[s] = k;
			for (int i = 0; i < len; i++)
				if (timeline_region(app->tl, p, t, pos[i]) == want)
					list->pos[k++] = pos[i];
		}
	}
	/* Evicted ones, latest first (within a step, the higher position
	 * first, as the panel has always listed them). */
	list->start[APP_SEC_EVICTED] = k;
	for (int i = t > 0 ? timeline_evictions_until(app->tl, p, t) - 1 : -1; i >= 0; i--)
		list->pos[k++] = timeline_eviction(app->tl, p, i)->pos;
	list->start[APP_SEC_COUNT] = k;
	list->len = k;
	if (app->sort == SORT_SCORE && k > 0)
		sort_by_score(app, list);
	for (int i = 0; i < k; i++)
		list->index[list->pos[i]] = i;
}

static unsigned char fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* The tokens a match of NEEDLE spans when it starts in position POS's
 * text, at any byte of it, and runs on through the text of the positions
 * after it (a word the model split into pieces, " b" "oat", is found
 * whole), ASCII letters in either case; 0 when no match starts there. */
static int match_span(const struct scene *sc, int pos, const char *needle)
{
	if (!*needle)
		return 0;
	for (const char *start = sc->text[pos]; *start; start++) {
		const char *hay = start;
		int at = pos;
		size_t i = 0;
		for (; needle[i]; i++) {
			while (!*hay && at + 1 < sc->n)
				hay = sc->text[++at];
			if (!*hay || fold((unsigned char)*hay) != fold((unsigned char)needle[i]))
				break;
			hay++;
		}
		if (!needle[i])
			return at - pos + 1;
	}
	return 0;
}

bool app_matches(const struct app *app, int pos, const char *query)
{
	return pos >= 0 && pos < app->scene->n && match_span(app->scene, pos, query) > 0;
}

/* The leading policy's name for section S, as its panel heads it. */
static const char *section_name(enum policy_id p, int s)
{
	return s == APP_SEC_EVICTED ? "EVICTED" : policies[p]->region_name[s];
}

/* Select the next (DIR 1) or previous (DIR -1) token of the list after
 * the selection that the last search matches, wrapping round, and say
 * where it stands: its rank among the matches, and how many of them each
 * section holds. */
void app_search(struct app *app, int dir)
{
	const struct app_list *list = &app->list;
	const char *q = app->query;
	if (!*q) {
		snprintf(app->notice, sizeof app->notice, "no search yet: / types one");
		return;
	}
	int count[APP_SEC_COUNT] = {0}, total = 0;
	for (int s = 0; s < APP_SEC_COUNT; s++)
		for (int i = list->start[s]; i < list->start[s + 1]; i++)
			if (app_matches(app, list->pos[i], q))
				count[s]++, total++;
	if (total == 0) {
		int later = -1;
		for (int pos = app->step; pos < app->scene->n && later < 0; pos++)
			if (app_matches(app, pos, q))
				later = pos;
		if (later >= 0)
			snprintf(app->notice, sizeof app->notice,
			         "\"%s\" matches no token yet: position %d, the first, arrives at "
			         "step %d",
			         q, later, later + 1);
		else
			snprintf(app->notice, sizeof app->notice, "\"%s\" matches no token", q);
		return;
	}
	const int sel = app->selected;
	const int from = sel >= 0 && sel < app->scene->n ? list->index[sel] : -1;
	int at = from;
	for (int i = 0; i < list->len; i++) {
		at = from < 0 && i == 0 ? (dir > 0 ? 0 : list->len - 1)
		                        : (at + dir + list->len) % list->len;
		if (app_matches(app, list->pos[at], q))
			break;
	}
	app->selected = list->pos[at];
	/* The whole match is selected, as far as it has arrived. */
	int span = match_span(app->scene, app->selected, q);
	span = span < app->step - app->selected ? span : app->step - app->selected;
	app->span_from = app->selected;
	app->span_len = span;
	/* The match is shown in its whole list (H2O's leads both unwalked
	 * and walked, so the list stays the one just searched). */
	if (app->walk == WALK_NONE)
		app->walk = WALK_H2O;
	int rank = 0;
	for (int i = 0; i <= at; i++)
		rank += app_matches(app, list->pos[i], q);
	/* A match across tokens: how many, and the positions it runs over. */
	char across[64] = "";
	if (span > 1)
		snprintf(across, sizeof across, ", %d tokens %d-%d", span, app->selected,
		         app->selected + span - 1);
	int len = snprintf(app->notice, sizeof app->notice, "\"%s\": match %d of %d%s (%s:", q,
	                   rank, total, across, policies[list->p]->name);
	const char *sep = " ";
	for (int s = 0; s < APP_SEC_COUNT && len < (int)sizeof app->notice; s++) {
		/* The sections the panel shows: EVICTED unless nothing is. */
		if (!section_name(list->p, s) ||
		    (s == APP_SEC_EVICTED && policy_capacity(list->p, &app->b) < 0))
			continue;
		len += snprintf(app->notice + len, sizeof app->notice - (size_t)len, "%s%s %d", sep,
		                section_name(list->p, s), count[s]);
		sep = ", ";
	}
	if (len < (int)sizeof app->notice)
		snprintf(app->notice + len, sizeof app->notice - (size_t)len, ")");
}

int app_selection_len(const struct app *app)
{
	if (app->selected < 0)
		return 0;
	return app->span_len > 1 && app->span_from == app->selected ? app->span_len : 1;
}

bool app_selects(const struct app *app, int pos)
{
	return pos >= app->selected && pos < app->selected + app_selection_len(app);
}

/* Select position POS and walk its list there. */
void app_go_position(struct app *app, long pos)
{
	if (pos >= app->scene->n) {
		snprintf(app->notice, sizeof app->notice,
		         "no position %ld: positions run from 0 to %d", pos, app->scene->n - 1);
		return;
	}
	if (pos >= app->step) {
		snprintf(app->notice, sizeof app->notice,
		         "position %ld has not arrived yet: step %ld appends it", pos, pos + 1);
		return;
	}
	app->selected = (int)pos;
	app->span_len = 0;
	if (app->walk == WALK_NONE)
		app->walk = WALK_H2O;
}
