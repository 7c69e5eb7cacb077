/*
 * app: the state the user drives, and the one place it changes.
 *
 * The app is the model of an Elm-style loop: it holds the scene, the
 * timeline for the current budgets, the current step and the modes of the
 * screen (help overlay, playing, number entry). app_key is the update
 * function: a key in, the state changed, flags out that say what the caller
 * must do. The view draws an app; the backends feed it keys. Nothing here
 * touches a terminal.
 *
 * Numbering, everywhere a number names something: positions count from 0
 * (the order of the scene), steps from 1 (step t appends position t - 1;
 * step 0 is the empty cache), heads from 1 on screen (app.head is 0-based
 * inside).
 */
#ifndef H2O_APP_H
#define H2O_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "h2o/budget.h"
#include "h2o/engine.h"
#include "h2o/keys.h"
#include "h2o/policy.h"
#include "h2o/text.h"

struct app_job;
struct drop_result;
struct lessons;
struct llama_model;
struct llama_tokenizer;
struct scene;
struct timeline;

/* Actions: X(name, help text). The help overlay lists them in this order.
 * COMPARE's help goes on with the policies it cycles through, from the
 * POLICIES table (app_action_help). */
#define APP_ACTIONS(X)                                       \
	X(NEXT, "one step forward")                          \
	X(PREV, "one step back")                             \
	X(FIRST, "step 0; in a walked list, its top")        \
	X(LAST, "last step; in a walked list, its end")      \
	X(PAGE_NEXT, "ten steps on; walked: ten rows down")  \
	X(PAGE_PREV, "ten steps back; walked: ten rows up")  \
	X(DIGIT, "type a step number, Enter jumps")          \
	X(GOTO, "jump to a step: its number, Enter")         \
	X(HEAVY_DEC, "heavy budget down (keeps the step)")   \
	X(HEAVY_INC, "heavy budget up (keeps the step)")     \
	X(RECENT_DEC, "recent budget down (keeps the step)") \
	X(RECENT_INC, "recent budget up (keeps the step)")   \
	X(RESET_BUDGETS, "budgets back to the scene's own")  \
	X(COMPARE, "compare H2O with the next policy")       \
	X(METRIC, "plot output error or recall")             \
	X(PLAY, "play / pause automatic stepping")           \
	X(FASTER, "play faster")                             \
	X(SLOWER, "play slower")                             \
	X(SELECT_PREV, "select the token above (inspector)") \
	X(SELECT_NEXT, "select the token below (inspector)") \
	X(WALK, "walk a list: H2O's, the other, off")        \
	X(SORT, "sort lists by score or position")           \
	X(SEARCH, "search token text, Enter finds it")       \
	X(SEARCH_NEXT, "next match of the search")           \
	X(SEARCH_PREV, "previous match of the search")       \
	X(POSITION, "go to a position: its number, Enter")   \
	X(HEAT_LEFT, "heat rows ten positions left")         \
	X(HEAT_RIGHT, "heat rows right, back to the step")   \
	X(HEAT_SELECTED, "heat rows to the selected token")  \
	X(HEAD_NEXT, "next head of this layer")              \
	X(HEAD_PREV, "previous head of this layer")          \
	X(LAYER_NEXT, "next layer, the same head")           \
	X(LAYER_PREV, "previous layer, the same head")       \
	X(OVERVIEW, "layers x heads grid: arrows, Enter")    \
	X(MAP, "cache map: every position, what each keeps") \
	X(MODEL, "the model's text: what eviction costs it") \
	X(STRIP, "every policy's recall on one line")        \
	X(VECTORS, "this step's q, k, v and their sums")     \
	X(LESSON_NEXT, "next lesson: opens its scene")       \
	X(LESSON_PREV, "previous lesson")                    \
	X(LESSON, "lesson text: show / hide")                \
	X(LESSON_ALL, "lesson text, all of it: a pager")     \
	X(HELP, "show / hide this help")                     \
	X(CLOSE, "close what is open")                       \
	X(QUIT, "quit (Esc never does)")

enum app_action {
	ACT_NONE,
#define X(name, help) ACT_##name,
	APP_ACTIONS(X)
#undef X
	        ACT_COUNT
};

/* Bindings: X(key code, action), in the order the help lists keys. */
#define APP_BINDINGS(X)           \
	X(KEYC_RIGHT, NEXT)       \
	X('l', NEXT)              \
	X(' ', NEXT)              \
	X(KEYC_LEFT, PREV)        \
	X('h', PREV)              \
	X(KEYC_BACKSPACE, PREV)   \
	X(KEYC_HOME, FIRST)       \
	X('g', FIRST)             \
	X(KEYC_END, LAST)         \
	X('G', LAST)              \
	X(KEYC_PGDN, PAGE_NEXT)   \
	X(KEYC_PGUP, PAGE_PREV)   \
	X('0', DIGIT)             \
	X('1', DIGIT)             \
	X('2', DIGIT)             \
	X('3', DIGIT)             \
	X('4', DIGIT)             \
	X('5', DIGIT)             \
	X('6', DIGIT)             \
	X('7', DIGIT)             \
	X('8', DIGIT)             \
	X('9', DIGIT)             \
	X(':', GOTO)              \
	X('[', HEAVY_DEC)         \
	X(']', HEAVY_INC)         \
	X('{', RECENT_DEC)        \
	X('}', RECENT_INC)        \
	X('r', RESET_BUDGETS)     \
	X('c', COMPARE)           \
	X('m', METRIC)            \
	X('p', PLAY)              \
	X('+', FASTER)            \
	X('-', SLOWER)            \
	X(KEYC_UP, SELECT_PREV)   \
	X('k', SELECT_PREV)       \
	X(KEYC_DOWN, SELECT_NEXT) \
	X('j', SELECT_NEXT)       \
	X('w', WALK)              \
	X('s', SORT)              \
	X('/', SEARCH)            \
	X('n', SEARCH_NEXT)       \
	X('N', SEARCH_PREV)       \
	X('#', POSITION)          \
	X('<', HEAT_LEFT)         \
	X('>', HEAT_RIGHT)        \
	X('f', HEAT_SELECTED)     \
	X(KEYC_TAB, HEAD_NEXT)    \
	X(KEYC_BTAB, HEAD_PREV)   \
	X('J', LAYER_NEXT)        \
	X('K', LAYER_PREV)        \
	X('o', OVERVIEW)          \
	X('M', MAP)               \
	X('t', MODEL)             \
	X('a', STRIP)             \
	X('v', VECTORS)           \
	X('.', LESSON_NEXT)       \
	X(',', LESSON_PREV)       \
	X('e', LESSON)            \
	X('E', LESSON_ALL)        \
	X('?', HELP)              \
	X(KEYC_ESC, CLOSE)        \
	X('q', QUIT)

/* Flags app_key returns. */
enum {
	APP_REDRAW = 1u << 0, /* the screen changed */
	APP_QUIT = 1u << 1,   /* the user asked to quit */
};

/* The help overlay's pages: the keys, how to read the screen (with the
 * scene's lesson text), and five of words, every label, figure, mark and
 * policy the screen shows defined in a sentence (view_help.c holds their
 * text). */
#define APP_HELP_PAGES 8

/* Playing speeds, in milliseconds between steps. */
#define APP_SPEEDS                               \
	{                                        \
		1000, 600, 350, 200, 100, 50, 20 \
	}
#define APP_SPEED_COUNT   7
#define APP_SPEED_DEFAULT 2

/* What the plot row draws over the timeline. */
enum app_metric { METRIC_OUT_ERR, METRIC_RECALL };

/* Which cache panel is walked: its list shown whole, scrolling under the
 * selection, and leading the rows of both panels. */
enum app_walk { WALK_NONE, WALK_H2O, WALK_COMPARED };

/* The order of each section of a list. By position: the kept tokens in
 * the order they came, the evicted ones latest eviction first. By score:
 * highest first (an evicted token by its score when it went), a tie
 * keeping the lower position first. */
enum app_sort { SORT_POSITION, SORT_SCORE };

/* What is being typed on the hint line. */
enum app_entry { ENTRY_NONE, ENTRY_STEP, ENTRY_POSITION, ENTRY_SEARCH };

#define APP_ENTRY_MAX 64 /* bytes of typed text, with its NUL */

/* Rows PgUp and PgDn move through a walked list: ten, as they move ten
 * steps otherwise. (The app does not know the panel's height: that is the
 * view's, and the view only reads the app.) */
#define APP_LIST_PAGE 10

/* The sections of a cache list: the policy's two regions in policy_region
 * order, then its evictions. */
enum app_section { APP_SEC_OLD, APP_SEC_RECENT, APP_SEC_EVICTED, APP_SEC_COUNT };

/*
 * A cache's list at the shown step: every position that has arrived, kept
 * or evicted, section by section, each in the app's sort order. It is the
 * order the selection moves in, the search walks and a walked panel
 * scrolls through. POS[start[s] .. start[s + 1]) is section s; INDEX[pos]
 * is where POS holds pos, or -1 (not arrived).
 */
struct app_list {
	enum policy_id p;
	int len;
	int start[APP_SEC_COUNT + 1];
	int *pos;   /* [n] */
	int *index; /* [n] */
	/* What it was built for (app.c rebuilds it when these change). */
	int step;
	enum app_sort sort;
	const struct timeline *tl;
	bool valid;
};

/* What H2O did at the budgets a lesson opened with, kept at the first
 * budget change (app_lesson.c), for the step sentence to compare with:
 * per head h, the attention recall of steps 1 .. built[h] at
 * recall[h * (n + 1) + t], and the step that evicted position pos (0:
 * never, as of built[h]) at evicted_at[h * n + pos]. */
struct app_baseline {
	int heavy, recent;
	int *built;
	double *recall;
	int *evicted_at;
};

struct app {
	const struct scene *scene;
	struct timeline *tl;        /* the shown head's, for the current budgets */
	int heads;                  /* attention heads of the scene */
	int head;                   /* the head shown, 0..heads-1 */
	struct scene *views;        /* [heads]: each head as a scene (heads.h) */
	struct timeline **tls;      /* [heads]: each head's timeline */
	struct timeline_pool *pool; /* their builds, when in the background */
	bool overview;              /* the all-heads overview instead of the panels */
	/* The overview's cursor, a query head (0..heads-1) that Enter opens,
	 * and the whole model's figures at the shown step (app_overview.c):
	 * every policy's, over every query head, kv heads counted once.
	 * overview_heads is how many heads had reached the step (the figures
	 * are over those; heads once all are built). */
	int cursor;
	struct step_metrics overview_total[POLICY_COUNT];
	int overview_heads;
	bool map; /* the cache map instead of the heat rows */
	/* The policy strip (every policy's recall on the rule under the
	 * header) hidden by a, and the vectors of the step (v) in place of
	 * the middle, for a scene with q, k and v. */
	bool strip_hidden;
	bool vectors;
	struct budget choice;   /* the current budgets, as the user chose them */
	struct policy_budget b; /* CHOICE as the rules read it (policy_budget_of) */
	/* The layer-wide plans every head's timelines share (plan.h). */
	struct engine_plans *plans;
	enum policy_id compare; /* the policy beside H2O */
	unsigned policies;      /* those c cycles through (app_set_policies) */
	/* The policies chosen (0: every one); POLICIES are those of them the
	 * scene can run (engine_policies_for), again for each lesson. */
	unsigned chosen;
	enum app_metric metric; /* what the plot row shows */
	int step;               /* 0..app_built() */
	int goal;               /* a step to go to once the timelines reach it, or -1 */
	bool background;        /* timelines built by threads of their own */
	bool was_building;      /* at the last tick (or since a build began) */
	bool help;              /* help overlay shown */
	int help_page;          /* its page, 0 .. APP_HELP_PAGES - 1 */
	/* The lesson text (the scene's "watch" paragraph) on the main screen:
	 * hidden, or shown in a strip of the few lines the view gives it. */
	bool lesson_hidden;
	/* The lesson text, all of it, in a pager over the screen (E,
	 * app_pager.c): open, and the first of its lines shown. */
	bool pager;
	int pager_top;
	/* The screen as the backend last drew it (app_set_screen), which the
	 * pager's pages are of: 0 x 0 until it says. */
	int cols, rows;
	bool ascii;
	/* The lesson path (app_set_lessons), and the place of the scene shown
	 * on it (-1 when it is not on it). A lesson opened by . or , is the
	 * app's own scene (owned), freed when the next one opens. */
	const struct lessons *lessons;
	int lesson;
	struct scene *owned;
	struct app_baseline *baseline; /* NULL until a lesson's budgets change */
	int selected;                  /* position in the inspector, or -1 */
	/* A search's match across tokens (" b" "o" "at" for "boat"): it
	 * selects span_len positions from span_from, while the selection is
	 * there; every other way of selecting sets span_len to 0. */
	int span_from, span_len;
	int heat_anchor;         /* position the heat rows keep in view, or -1 to follow the step */
	enum app_walk walk;      /* the panel walked, if any */
	enum app_sort sort;      /* the order of the lists */
	bool playing;            /* automatic stepping */
	int speed;               /* index into APP_SPEEDS */
	enum app_entry entering; /* what is being typed, if anything */
	char entry[APP_ENTRY_MAX]; /* the text typed so far (UTF-8) */
	char query[APP_ENTRY_MAX]; /* the last search, for n and N */
	char notice[160];          /* a one-off message for the next frame */
	/* The clock (seconds, monotonic) when the builds began and at the
	 * last tick: the time a build has taken so far, for its time left. */
	double build_began, clock;
	/* The shown step as the view reads it: the evicting caches at step
	 * (timeline_seek_lite of tl) and its record (NULL at step 0), and the
	 * list of the leading policy (app_lead) at that step. Every update
	 * function refreshes them, so that drawing changes nothing. */
	/* A model scene (app_set_model): the model, each vocabulary id's text,
	 * the text's token ids, and the real drop at the current budgets (the
	 * model run once per policy, every layer evicted: drop.h); the model
	 * panel (t) in place of the heat rows. NULL without a model. */
	const struct llama_model *model;
	char **vocab;
	int vocab_size;
	const int *tokens;
	int given; /* tokens the text gave; after them, the model's own */
	struct drop_result *drop;
	bool model_view;
	/* The model's work on a thread of its own (app_model.c), when the
	 * timelines build in the background: the real drop, or a lesson being
	 * opened. NULL when none runs. */
	struct app_job *job;
	/* The memory a lesson opened by . or , may take (app_set_memory), 0
	 * for no bound, and whether --max-memory gave it. */
	double max_memory;
	bool max_given;
	const struct engine *shown;
	const struct step_record *shown_rec;
	struct app_list list;
	double *scratch; /* [n]: scores while sorting the list */
};

/* Set up APP for SCENE with budgets HEAVY and RECENT (building the
 * timeline) at step 0, comparing H2O with COMPARE. SINKS is StreamingLLM's
 * sink count, or -1 for its default. Returns -1 when out of memory. */
int app_init(struct app *app, const struct scene *scene, int heavy, int recent, int sinks,
             enum policy_id compare);

/* app_init with the timelines built in the background (timeline_start),
 * so that a long scene opens at once: the steps are there as they are
 * built (app_built), a step further on is gone to when it is (the goal),
 * and every budget change builds the same way. */
int app_init_background(struct app *app, const struct scene *scene, int heavy, int recent,
                        int sinks, enum policy_id compare);

/* app_init (or, when BACKGROUND, app_init_background) with the budget B
 * the user chose (budget_make: its prompt and interval may not be the
 * scene's), whose timelines compute only the policies of the mask
 * POLICIES (a bit each, ENGINE_POLICY; 0: every policy), with H2O and the
 * full cache (timeline_new_only), and whose c cycles through them only:
 * --policies', or the scene's "policies". COMPARE must be one of them. */
int app_init_only(struct app *app, const struct scene *scene, const struct budget *b,
                  enum policy_id compare, bool background, unsigned policies);
/* Let c cycle only through the policies of the mask POLICIES (a bit
 * each, ENGINE_POLICY; 0: every policy, the default), of those the
 * timelines compute. */
void app_set_policies(struct app *app, unsigned policies);

/* The seconds the shown head's build still needs at the rate so far, or
 * -1 when it is not building or has not run long enough to tell. */
double app_time_left(const struct app *app);

/* The steps the shown head's timeline has built (n once it is done), and
 * whether any head's is still building. In the background the shown head
 * is built first; other heads' timelines may be behind it
 * (timeline_built). */
int app_built(const struct app *app);
bool app_building(const struct app *app);

/* Put APP on the lesson path LESSONS (which outlives it) at lesson INDEX,
 * the scene it shows: . and , then open the next and previous lessons. */
void app_set_lessons(struct app *app, const struct lessons *lessons, int index);

/* A model scene: M (with tokenizer T, for its pieces' text) ran over the
 * scene's TOKENS (its ids, scene->n of them, the first GIVEN the text's,
 * then the full cache's own choices), and the real drop is computed now and at
 * every budget change. M, T and TOKENS must outlive the app. Returns -1
 * when out of memory (the app then has no model). */
int app_set_model(struct app *app, const struct llama_model *m, const struct llama_tokenizer *t,
                  const int *tokens, int given);

void app_done(struct app *app);

/* The memory a lesson opened by . or , may take, BYTES (0: no bound):
 * --max-memory's when GIVEN, else what the machine had free. A lesson
 * whose model or screens would take more is not opened (a notice says
 * what it needs), before anything of it is built. */
void app_set_memory(struct app *app, double bytes, bool given);

/* Whether the model is at work in the background (the real drop, or a
 * lesson being opened), and then how far it has come, in words, into
 * WHAT ("model 45%", "opening lesson 8 12%"; WHAT may be NULL). */
bool app_model_busy(const struct app *app, char *what, size_t size);

/* Whether the shown head has vectors for v to show: its q and k rows, or
 * its v rows (a scene that gives its attention weights). */
bool app_has_vectors(const struct app *app);

/* One entry of the APP_BINDINGS table. */
struct app_binding {
	uint32_t key;
	enum app_action action;
};

/* The bindings, in APP_BINDINGS order (the order the help lists keys). */
const struct app_binding *app_bindings(size_t *count);

/* The action bound to KEY, or ACT_NONE. */
enum app_action app_action_of(uint32_t key);
/* The help text of an action, valid until the next call on this thread. */
const char *app_action_help(enum app_action action);

/* Whether POS is selected: the selected token, or one of the tokens a
 * search's match across tokens runs over (app_selection_len of them from
 * app->selected). */
int app_selection_len(const struct app *app);
bool app_selects(const struct app *app, int pos);

/* The policy whose list leads the rows of both cache panels: the walked
 * one, else H2O. */
enum policy_id app_lead(const struct app *app);

/* Whether a match of the search QUERY starts in position POS's text: at
 * any byte of it, running on through the text of the positions after it
 * when it is longer (" b" "oat" match "boat" at the first), ASCII letters
 * matched in either case. */
bool app_matches(const struct app *app, int pos, const char *query);

/* Whether policy P can stand beside H2O: every policy but H2O itself. */
bool app_comparable(enum policy_id p);
/* Their names in POLICIES order, which is the order COMPARE cycles
 * through, ", "-separated ("full, window, streaming, tova"), in BUF.
 * Returns BUF. */
const char *app_comparable_names(char *buf, size_t size);
/* The names of the policies c cycles through on APP's scene, in the order
 * it visits them: the comparable ones the scene runs (app_set_policies,
 * engine_policies_for), into BUF ("full, window, streaming"). Returns BUF. */
const char *app_cycle_names(const struct app *app, char *buf, size_t size);
/* COMPARE's help on APP's scene: its words and app_cycle_names. */
const char *app_compare_help(const struct app *app, char *buf, size_t size);

/* Apply one key. Returns APP_ flags. */
unsigned app_key(struct app *app, uint32_t key);

/* What is at a cell of the screen, as the view drew it (view_pick): a
 * token's row in a cache panel (the side of policy P; POS the token), or
 * a token's cell in the cache map or the model panel's text (SPOT_TOKEN
 * too), any other cell of a cache panel (the list under the mouse: P), a
 * cell of the heat rows (STEP's row; POS the column's position, or -1 on
 * the row's label), a head of the heads overview (HEAD; POS the position
 * of its by-position row's column, or -1), the help overlay, or nothing
 * the mouse acts on. */
enum app_spot_kind { SPOT_NONE, SPOT_TOKEN, SPOT_PANEL, SPOT_HEAT, SPOT_HEAD, SPOT_HELP };
struct app_spot {
	enum app_spot_kind kind;
	enum policy_id p;
	int pos, step;
	int head; /* SPOT_HEAD: a head of the overview (POS a position, or -1) */
};

/* Apply a mouse event WHAT over the spot AT (app_mouse.c), as the keys it
 * stands for: a click on a token selects it (the inspector opens), on a
 * heat cell goes to that step and selects that position; the wheel steps
 * back (up) and forward (down), or moves the selection through a walked
 * list under it, or turns the help's pages. Returns APP_ flags. */
unsigned app_mouse(struct app *app, enum app_mouse what, const struct app_spot *at);

/* Go to step STEP (clamped to 0..n; a step not built yet becomes the goal,
 * as for a typed step number). */
void app_goto(struct app *app, int step);

/* One tick: follows the goal as the timelines build, and advances a step
 * while playing (waiting at the edge of the build, stopping at the last
 * step). Returns APP_ flags. */
unsigned app_tick(struct app *app);

/* Whether ticks are wanted now (playing, a goal, or a build to show), and
 * the milliseconds between them. */
bool app_ticking(const struct app *app);
int app_tick_ms(const struct app *app);

/* The screen the backend draws into: COLS x ROWS, with ASCII glyphs or
 * not. Backends say so before each drawing; what scrolls by pages (the
 * pager) reads it. */
void app_set_screen(struct app *app, int cols, int rows, bool ascii);

/*
 * The pager (E): the lesson text whole, the "watch" paragraph and every
 * step's note under a heading of its own, wrapped by words, over the
 * screen. Its text takes the frame's rows but the first (a title) and the
 * last (where it stands), and its columns but one each side.
 */
void app_pager_page(int cols, int rows, int *width, int *height);

/* Its lines, one at a time: app_pager_begin at WIDTH columns, then
 * app_pager_next gives each line in *LINE (scene text, valid until the
 * next call) and whether it is a heading, false after the last. */
struct app_pager_iter {
	const struct scene *sc;
	int step; /* the step shown: its note's heading says so */
	int width;
	bool ascii;
	int section; /* -1 the watch paragraph, then each note */
	int phase;   /* the section's heading, its text, the blank after it */
	const char *at;
	char heading[64];
	char line[TEXT_WRAP_MAX];
};
void app_pager_begin(struct app_pager_iter *it, const struct app *app, int width, bool ascii);
bool app_pager_next(struct app_pager_iter *it, const char **line, bool *heading);
/* The lines at WIDTH columns. */
int app_pager_lines(const struct app *app, int width, bool ascii);
/* The first line a page of HEIGHT shows of LINES: pager_top, kept so
 * that the last page is full. */
int app_pager_first(const struct app *app, int lines, int height);

/* Ticks while a build runs and nothing plays: the progress shown. */
#define APP_BUILD_TICK_MS 100

#endif
