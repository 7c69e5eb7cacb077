/*
 * view_panels: what the panels of the screen share.
 *
 * view_draw builds one struct view per frame (the app's state at its step)
 * and hands each panel its rectangle. A panel only reads the view and draws
 * inside its rectangle.
 */
#ifndef H2O_VIEW_PANELS_H
#define H2O_VIEW_PANELS_H

#include <stdbool.h>
#include <stddef.h>

#include "h2o/app.h"
#include "h2o/engine.h"
#include "h2o/frame.h"
#include "h2o/scene.h"
#include "h2o/text.h"
#include "h2o/timeline.h"

struct view {
	const struct app *app;
	const struct scene *sc;
	const struct timeline *tl;
	const struct engine *e;        /* at step t */
	const struct step_record *rec; /* of step t; NULL at step 0 */
	int t, n;
	int built; /* steps the timeline has built: every step read is <= built */
	int split; /* column of the rule between the H2O and full halves */
};

typedef void panel_draw_fn(const struct view *v, struct frame *f, struct rect r);

panel_draw_fn panel_header_draw;
panel_draw_fn panel_cache_draw; /* H2O panel left of v->split, full cache right */
panel_draw_fn panel_heat_draw;  /* attention heat rows, same split */
panel_draw_fn panel_plot_draw;  /* error or recall over the timeline */
panel_draw_fn panel_story_draw; /* the sentence explaining the step */
panel_draw_fn panel_status_draw;
panel_draw_fn panel_hints_draw;
panel_draw_fn panel_inspect_draw; /* the selected token, beside the H2O heat */
/* The narrowest half the inspector shares the heat area with H2O's rows
 * in: its longest sentence ("this step: attention 0.06 in H2O, 0.06 in the
 * full cache") whole, the half of 120 columns; narrower, it takes the
 * whole area. */
#define INSPECT_HALF_W 59
panel_draw_fn panel_overview_draw; /* every head at a glance */
panel_draw_fn panel_help_draw;     /* the help overlay, over everything */
panel_draw_fn panel_pager_draw;    /* the lesson text whole (E), over the panels */

panel_draw_fn panel_map_draw;   /* every position at once: what each cache keeps (M) */
panel_draw_fn panel_model_draw; /* a model scene's text and perplexity (t) */
/* Every policy's recall (and perplexity) at the step, on the rule under
 * the header (a hides it). */
panel_draw_fn panel_strip_draw;
/* The step's query, the held keys and values, q.k, the weights and the
 * output, in place of the middle (v). */
panel_draw_fn panel_vectors_draw;
/* The rows below its rule the map of V fills, COLS wide, in ROWS rows (its
 * bands come five rows each, so it may leave some), or when ROWS < 0 the
 * rows it would like: one position a cell. */
int view_map_rows(const struct view *v, int cols, int rows);

/* Where each panel goes on a frame (view_layout.c): the rectangles
 * view_draw hands the panels, and the view of the app they draw from.
 * MIDDLE is what the cache panels, the plot and the heat rows share (the
 * heads overview takes it whole); HEAT includes its rule, and HEAT_DRAW
 * is what fills it (the heat rows, the cache map or the model panel). */
struct view_layout {
	struct view v;
	struct rect header, middle, cache, plot, heat, lesson, story, status, hints;
	panel_draw_fn *heat_draw;
};
void view_layout(const struct app *app, const struct frame *f, struct view_layout *lay);

/* What panel_cache_draw and panel_heat_draw, drawn in R, show at ROW, COL
 * (view_hit.c asks them): a spot of the kind app_mouse takes. */
struct app_spot view_cache_pick(const struct view *v, struct rect r, int row, int col);
struct app_spot view_heat_pick(const struct view *v, struct rect r, int row, int col);
/* The token under a cell of the cache map, the model panel's text or the
 * heads overview, drawn in R as their panels draw them. */
struct app_spot view_map_pick(const struct view *v, struct rect r, int row, int col);
struct app_spot view_model_pick(const struct view *v, const struct frame *f, struct rect r, int row,
                                int col);
struct app_spot view_overview_pick(const struct view *v, struct rect r, int row, int col);

/* The heat scale every panel shares (view_heat.c): absolute and
 * logarithmic, VIEW_HEAT_LEVELS levels of half a decade each, so that a
 * weight has one style and one glyph everywhere. */
#define VIEW_HEAT_LEVELS 8
int view_heat_level(double w);
enum frame_style view_heat_style(double w);
uint32_t view_heat_glyph(const struct frame *f, double w);
/* The rule over the heat area at row r.y: the first of the COUNT LABELS
 * (longest first) that fits at its left, the scale's legend at its right. */
void view_heat_rule(struct frame *f, struct rect r, const char *const *labels, int count);

/* Policy P's words for its eviction EV (policy_word). */
void view_word_eviction(const struct view *v, enum policy_id p, const struct eviction *ev,
                        enum policy_voice voice, struct policy_words *words);

/* Where query head HEAD (0-based, layer after layer) sits, 1-based:
 * "layer 3/12 \u00b7 head 5/12 (kv 2/4)" (FORM 0), or "L3/12 H5/12 kv2/4"
 * (FORM 1, for narrow screens); the layer left out with one layer, the kv
 * head when every query head has its own. In BUF; returns BUF. */
const char *view_head_where(const struct app *app, int head, int form, bool ascii, char *buf,
                            size_t size);

/* N with thousands separators ("1,984") in BUF (at least 32 bytes). */
const char *view_format_count(long n, char *buf);

/* Text wrapped by words (text_wrap_next, text_wrap_count): what the
 * panels call it. */
static inline bool view_wrap_next(const char **at, int maxw, bool ascii, char *line, size_t size)
{
	return text_wrap_next(at, maxw, ascii, line, size);
}

static inline int view_wrap_count(const char *text, int maxw, bool ascii)
{
	return text_wrap_count(text, maxw, ascii);
}

/* The lesson text (view_lesson.c): the scene's "watch" paragraph, on the
 * main screen below its labelled rule. view_lesson_rows is the rows it
 * takes at a frame of COLS x ROWS, its rule included (0 when hidden or the
 * scene has none); panel_lesson_draw draws it there, rule first. */
int view_lesson_rows(const struct app *app, int cols, int rows, bool ascii);
panel_draw_fn panel_lesson_draw;
/* In a scene that teaches, the line under the step sentence: once, why
 * H2O's weights are larger than the full cache's, and after a budget
 * change what it did to this step; X, Y, W wide. */
void view_lesson_remark(const struct view *v, struct frame *f, int x, int y, int w);

/* A rule across r.w cells at row y, with an optional label near its left. */
void view_rule(struct frame *f, int x, int y, int w, const char *label);

/* ONE when N is 1, else MANY: "1 token", "2 tokens". */
static inline const char *view_plural(long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

#endif
