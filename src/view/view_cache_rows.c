/*
 * view_cache_rows: the rows of the cache panel (view_cache.c), and the
 * weights and scores its rows show. Unwalked, a summary that keeps the
 * most telling tokens of each section and the selected one; walked, the
 * whole list scrolled about the selection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/heads.h"
#include "view_cache.h"
#include "view_panels.h"

static int by_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Where POS is in the N ascending positions of LIST, or -1. A policy that
 * does not run (engine_new_only) has none, and LIST may then be NULL,
 * which bsearch must not be given. */
static int index_of(const int *list, int n, int pos)
{
	if (n <= 0)
		return -1;
	const int *hit = bsearch(&pos, list, (size_t)n, sizeof *list, by_int);
	return hit ? (int)(hit - list) : -1;
}

int view_cache_section_count(const struct app_list *l, int s)
{
	return l->start[s + 1] - l->start[s];
}

/* A policy's named regions, and its evictions unless it keeps everything. */
static bool section_shown(const struct view *v, enum policy_id p, int s)
{
	return s == SEC_EVICTED ? policy_capacity(p, &v->app->b) >= 0
	                        : policies[p]->region_name[s] != NULL;
}

/* An index into a section with its score, so that qsort needs no context. */
struct ranked {
	double score;
	int i;
};

/* Higher scores first; on a tie the lower index (in position order, the
 * lower position). */
static int by_score_desc(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->i - y->i;
}

/* Of the COUNT kept positions SEC (in position order), the SHOWN with the
 * highest scores, in position order, into ITEMS; when out of memory, the
 * first SHOWN. */
static void highest(const struct view *v, const int *sec, int count, int shown, int *items)
{
	struct ranked *r = malloc((size_t)count * sizeof *r);
	for (int i = 0; i < shown; i++)
		items[i] = sec[i];
	if (!r)
		return;
	for (int i = 0; i < count; i++)
		r[i] = (struct ranked){view_cache_kept_score(v, v->app->list.p, sec[i]), i};
	qsort(r, (size_t)count, sizeof *r, by_score_desc);
	int *idx = malloc((size_t)shown * sizeof *idx);
	if (idx) {
		for (int i = 0; i < shown; i++)
			idx[i] = r[i].i;
		qsort(idx, (size_t)shown, sizeof *idx, by_int);
		for (int i = 0; i < shown; i++)
			items[i] = sec[idx[i]];
	}
	free(idx);
	free(r);
}

/* Where POS stands in the leading list, or -1. */
static int list_index(const struct view *v, int pos)
{
	return pos >= 0 && pos < v->n ? v->app->list.index[pos] : -1;
}

/* Positions by their place in the leading list. */
struct by_place {
	int place, pos;
};

static int by_place_asc(const void *a, const void *b)
{
	return ((const struct by_place *)a)->place - ((const struct by_place *)b)->place;
}

/* The selected token stays on screen: if its section left it out, it takes
 * the place of the least telling token shown (by position: the lowest
 * score, the oldest recent one, the earliest eviction; by score, the
 * lowest), and the rows keep the list's order. */
static void keep_selected(const struct view *v, int s, int *items, int shown)
{
	const struct app_list *l = &v->app->list;
	const int sel = v->app->selected, at = list_index(v, sel);
	if (at < l->start[s] || at >= l->start[s + 1] || shown <= 0)
		return;
	for (int i = 0; i < shown; i++)
		if (items[i] == sel)
			return;
	int out = shown - 1;
	if (l->sort == SORT_POSITION && s == SEC_RECENT) {
		out = 0;
	} else if (l->sort == SORT_POSITION && s == SEC_OLD) {
		out = 0;
		for (int i = 1; i < shown; i++)
			if (view_cache_kept_score(v, l->p, items[i]) <=
			    view_cache_kept_score(v, l->p, items[out]))
				out = i;
	}
	items[out] = sel;
	struct by_place *bp = malloc((size_t)shown * sizeof *bp);
	if (!bp)
		return;
	for (int i = 0; i < shown; i++)
		bp[i] = (struct by_place){list_index(v, items[i]), items[i]};
	qsort(bp, (size_t)shown, sizeof *bp, by_place_asc);
	for (int i = 0; i < shown; i++)
		items[i] = bp[i].pos;
	free(bp);
}

/* The summary: H rows of section headers, tokens and "more" lines for the
 * leading list. ITEMS holds at least n ints. */
int view_cache_summary_rows(const struct view *v, struct row *rows, int h, int *items)
{
	const struct app_list *l = &v->app->list;
	const enum policy_id p = l->p;

	/* The sections shown: an empty EVICTED gives its header's row up
	 * when the others would otherwise hide tokens (it hides none). */
	bool shown_sec[SEC_COUNT];
	int avail = h, want = 0, give[SEC_COUNT] = {0};
	for (int s = 0; s < SEC_COUNT; s++) {
		shown_sec[s] = section_shown(v, p, s);
		avail -= shown_sec[s];
		want += shown_sec[s] ? view_cache_section_count(l, s) : 0;
	}
	if (shown_sec[SEC_EVICTED] && view_cache_section_count(l, SEC_EVICTED) == 0 &&
	    want > avail) {
		shown_sec[SEC_EVICTED] = false;
		avail++;
	}
	/* Share the rows out one at a time, round robin, after the headers. */
	for (bool more = true; more && avail > 0;) {
		more = false;
		for (int s = 0; s < SEC_COUNT && avail > 0; s++) {
			if (shown_sec[s] && give[s] < view_cache_section_count(l, s)) {
				give[s]++;
				avail--;
				more = true;
			}
		}
	}

	int nrows = 0;
	for (int s = 0; s < SEC_COUNT && nrows < h; s++) {
		if (!shown_sec[s])
			continue;
		/* A cut section gives one of its rows to a "more" line, unless
		 * it has only one: then a token says more than a line of count,
		 * and the section header says how many it hides. */
		const int count = view_cache_section_count(l, s);
		const bool cut = give[s] < count && give[s] > 1;
		const int shown = cut ? give[s] - 1 : give[s];
		rows[nrows++] = (struct row){
		        .kind = ROW_SECTION, .sec = s, .more = cut ? 0 : count - shown};
		const int *sec = l->pos + l->start[s];
		/* By position the old region shows its highest scores and the
		 * recent one its newest tokens; otherwise a section's list
		 * already starts with what tells most. */
		const bool newest = l->sort == SORT_POSITION && s == SEC_RECENT;
		if (l->sort == SORT_POSITION && s == SEC_OLD && shown < count)
			highest(v, sec, count, shown, items);
		else
			memcpy(items, newest ? sec + count - shown : sec,
			       (size_t)shown * sizeof *items);
		keep_selected(v, s, items, shown);
		/* The newest recent rows close the list: their "more" line
		 * (the older ones) goes first. */
		const struct row more = {.kind = ROW_MORE, .sec = s, .more = count - shown};
		if (cut && newest)
			rows[nrows++] = more;
		for (int i = 0; i < shown; i++)
			rows[nrows++] = (struct row){.kind = ROW_TOKEN, .sec = s, .pos = items[i]};
		if (cut && !newest)
			rows[nrows++] = more;
	}
	return nrows;
}

/* The walked list: every shown section's header and all its tokens, H
 * rows of them around the selection. When the rows start inside a
 * section, the top row names it instead of showing its token (which the
 * row above the selection never is). */
int view_cache_walk_rows(const struct view *v, struct row *rows, int h)
{
	const struct app_list *l = &v->app->list;
	int total = 0, sel_row = -1;
	const int at = list_index(v, v->app->selected);
	for (int s = 0; s < SEC_COUNT; s++) {
		if (!section_shown(v, l->p, s))
			continue;
		if (at >= l->start[s] && at < l->start[s + 1])
			sel_row = total + 1 + at - l->start[s];
		total += 1 + view_cache_section_count(l, s);
	}
	int first = 0;
	if (total > h && sel_row >= 0) {
		first = sel_row - (h - 1) / 2;
		first = first > total - h ? total - h : first;
		first = first < 0 ? 0 : first;
	}
	int nrows = 0, row = 0;
	for (int s = 0; s < SEC_COUNT && nrows < h; s++) {
		if (!section_shown(v, l->p, s))
			continue;
		if (row >= first)
			rows[nrows++] = (struct row){.kind = ROW_SECTION, .sec = s};
		row++;
		for (int i = l->start[s]; i < l->start[s + 1] && nrows < h; i++, row++)
			if (row >= first)
				rows[nrows++] =
				        (struct row){.kind = ROW_TOKEN, .sec = s, .pos = l->pos[i]};
	}
	if (first > 0 && h >= 3 && nrows > 0 && rows[0].kind == ROW_TOKEN)
		rows[0] = (struct row){.kind = ROW_SECTION, .sec = rows[0].sec};
	return nrows;
}

/* This step's weight of POS in policy P's cache, or -1. */
double view_cache_step_weight(const struct view *v, enum policy_id p, int pos)
{
	if (!v->rec)
		return -1.0;
	/* The timeline keeps no full cache at the step (timeline_seek_lite):
	 * its weights and scores are recomputed from the stored steps. */
	if (p == POLICY_FULL)
		return timeline_weight(v->tl, POLICY_FULL, v->t, pos);
	const struct cache_record *r = &v->rec->c[p];
	const int i = index_of(r->attended, r->n_attended, pos);
	return i >= 0 ? r->attn[i] : -1.0;
}

/* What this step added to POS's score in policy P's cache, or -1: its
 * weight, or with grouped heads its group's mean weight (design §2
 * "Grouped scores"); the full cache adds its query head's own. */
double view_cache_step_added(const struct view *v, enum policy_id p, int pos)
{
	if (!v->rec || p == POLICY_FULL)
		return view_cache_step_weight(v, p, pos);
	const struct cache_record *r = &v->rec->c[p];
	const int i = index_of(r->attended, r->n_attended, pos);
	return i >= 0 ? r->group_attn[i] : -1.0;
}

/* The score of a kept POS in policy P's cache after this step, or 0. */
double view_cache_kept_score(const struct view *v, enum policy_id p, int pos)
{
	if (p == POLICY_FULL)
		return timeline_full_score(v->tl, v->t, pos);
	const int i = index_of(engine_positions(v->e, p), engine_len(v->e, p), pos);
	return i >= 0 ? engine_scores(v->e, p)[i] : 0.0;
}
