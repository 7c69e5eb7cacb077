/*
 * view_cache.h: what view_cache.c (the cache panel drawn) and
 * view_cache_rows.c (its rows, weights and scores) share.
 */
#ifndef H2O_VIEW_CACHE_H
#define H2O_VIEW_CACHE_H

#include "view_panels.h"

enum row_kind { ROW_SECTION, ROW_TOKEN, ROW_MORE };
/* The policy's regions in policy_region order, then its evictions: the
 * sections of an app_list. */
enum section {
	SEC_OLD = APP_SEC_OLD,
	SEC_RECENT = APP_SEC_RECENT,
	SEC_EVICTED = APP_SEC_EVICTED,
	SEC_COUNT = APP_SEC_COUNT
};

struct row {
	enum row_kind kind;
	enum section sec;
	int pos;  /* ROW_TOKEN */
	int more; /* ROW_MORE, and ROW_SECTION when no row says it: how many
	           * tokens are not shown */
};

/* The tokens in section S of list L. */
int view_cache_section_count(const struct app_list *l, int s);
/* The rows of the panel H high into ROWS: unwalked, a summary (ITEMS is
 * room for the section's tokens); walked, the whole list scrolled. Return
 * how many. */
int view_cache_summary_rows(const struct view *v, struct row *rows, int h, int *items);
int view_cache_walk_rows(const struct view *v, struct row *rows, int h);
/* This step's weight of POS in policy P's cache, what it added to POS's
 * score, and the score of a kept POS after this step. */
double view_cache_step_weight(const struct view *v, enum policy_id p, int pos);
double view_cache_step_added(const struct view *v, enum policy_id p, int pos);
double view_cache_kept_score(const struct view *v, enum policy_id p, int pos);

#endif
