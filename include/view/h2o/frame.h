/*
 * frame: the screen as a grid of cells, drawn in memory.
 *
 * Every panel draws into a frame; a backend only flushes one (the text
 * backend for --headless, the ncurses backend for the terminal), so the
 * headless text is the screen. A cell holds one glyph (a code point, plus at
 * most one combining mark) and a semantic style; the backends decide what a
 * style looks like. A wide glyph takes two cells, the second being a
 * continuation cell with cp 0.
 *
 * frame_text is the single entry point for untrusted text (token strings
 * from a scene): it decodes UTF-8, shows control characters and invalid
 * bytes escaped, measures display width and clips with an ellipsis. Nothing
 * else writes scene text into a frame, so no scene byte reaches a terminal
 * raw.
 */
#ifndef H2O_FRAME_H
#define H2O_FRAME_H

#include <stdbool.h>
#include <stdint.h>

/* Semantic styles: X(name, meaning). The backends map them to colours and
 * attributes; the text is the same whatever they do. The heat styles are
 * one absolute scale, half a decade of attention weight each (logarithmic:
 * attention spans from 1/n to 1), the same on every panel and at every
 * size; each has a glyph of its own too (GLYPH_HEAT0 ...), so the level
 * reads without colour. */
#define FRAME_STYLES(X)                              \
	X(NORMAL, "plain text")                      \
	X(TITLE, "the header's title")               \
	X(LABEL, "section and panel labels")         \
	X(DIM, "secondary text")                     \
	X(BORDER, "rules and borders")               \
	X(HEAVY, "heavy hitters")                    \
	X(RECENT, "recent tokens")                   \
	X(EVICTED, "evicted tokens")                 \
	X(NEW, "the token this step appended")       \
	X(GONE, "the token this step evicted")       \
	X(KEY, "key names in hints")                 \
	X(WARN, "warnings")                          \
	X(SELECT, "the selected item")               \
	X(HEAT0, "attention weight below 0.0003")    \
	X(HEAT1, "attention weight 0.0003 to 0.001") \
	X(HEAT2, "attention weight 0.001 to 0.003")  \
	X(HEAT3, "attention weight 0.003 to 0.01")   \
	X(HEAT4, "attention weight 0.01 to 0.03")    \
	X(HEAT5, "attention weight 0.03 to 0.1")     \
	X(HEAT6, "attention weight 0.1 to 0.3")      \
	X(HEAT7, "attention weight 0.3 and above")

enum frame_style {
#define X(name, doc) STYLE_##name,
	FRAME_STYLES(X)
#undef X
	        STYLE_COUNT
};

struct cell {
	uint32_t cp;   /* code point; 0 = right half of the wide glyph before */
	uint32_t comb; /* one combining mark drawn on cp, or 0 */
	uint8_t style; /* enum frame_style */
};

struct frame {
	int cols, rows;
	bool ascii; /* ASCII glyphs only: frame_glyph picks the fallbacks */
	struct cell *cells;
};

/* A rectangle of a frame, for panels. */
struct rect {
	int x, y, w, h;
};

struct frame *frame_new(int cols, int rows, bool ascii);
void frame_free(struct frame *f);
void frame_clear(struct frame *f);

struct cell *frame_cell(struct frame *f, int x, int y);
const struct cell *frame_cell_const(const struct frame *f, int x, int y);

/* Put one trusted glyph (a code point of width 1) at x, y. Out-of-frame
 * writes are ignored. */
void frame_put(struct frame *f, int x, int y, uint32_t cp, enum frame_style style);

/* Fill w cells from x, y with a glyph. */
void frame_fill(struct frame *f, int x, int y, int w, uint32_t cp, enum frame_style style);

/* Set the style of w cells from x, y without changing their glyphs. */
void frame_style(struct frame *f, int x, int y, int w, enum frame_style style);

/*
 * Draw untrusted UTF-8 text at x, y in at most MAXW columns; returns the
 * columns used. Control characters show as ^X (DEL as ^?), C1 controls as
 * <XX>, invalid UTF-8 as U+FFFD ('?' in ASCII frames), zero-width
 * characters other than one combining mark per glyph are dropped, and text
 * wider than MAXW ends in an ellipsis. Never writes outside [x, x + maxw).
 */
int frame_text(struct frame *f, int x, int y, int maxw, const char *text, enum frame_style style);

/* Like frame_text for a printf-style trusted string (labels, numbers). */
int frame_printf(struct frame *f, int x, int y, int maxw, enum frame_style style, const char *fmt,
                 ...) __attribute__((format(printf, 6, 7)));

/* The display width frame_text would give TEXT with no limit. */
int frame_text_width(const char *text, bool ascii);

/* Glyphs with an ASCII fallback, chosen by the frame's ascii flag. */
enum frame_glyph {
	GLYPH_HLINE,
	GLYPH_VLINE,
	GLYPH_ELLIPSIS,
	GLYPH_BULLET,
	GLYPH_ARROW_RIGHT,
	GLYPH_ARROW_LEFT,
	GLYPH_NEW,      /* the token this step appended */
	GLYPH_GONE,     /* the token this step evicted */
	GLYPH_PROMOTED, /* the token that moved from recent to heavy */
	GLYPH_SELECTED, /* the token the inspector shows */
	GLYPH_CORNER_TL,
	GLYPH_CORNER_TR,
	GLYPH_CORNER_BL,
	GLYPH_CORNER_BR,
	GLYPH_MORE_LEFT,  /* attention mass left of the columns shown */
	GLYPH_MORE_RIGHT, /* ... and right of them */
	/* The heat ramp, a glyph per level of the heat styles, by ink. ASCII
	 * has one for each level; Unicode's four shades split the levels at
	 * 0.003, 0.03 and 0.3, so that a full block is attention that
	 * dominates its row. */
	GLYPH_HEAT0,
	GLYPH_HEAT1,
	GLYPH_HEAT2,
	GLYPH_HEAT3,
	GLYPH_HEAT4,
	GLYPH_HEAT5,
	GLYPH_HEAT6,
	GLYPH_HEAT7,
	GLYPH_MARKER, /* a marked column: the current step, the selected token */
	GLYPH_AXIS_Y, /* a plot's y axis, and a tick on it */
	GLYPH_AXIS_TICK,
	GLYPH_COUNT
};
uint32_t frame_glyph(const struct frame *f, enum frame_glyph g);

/* A horizontal bar of VALUE / MAX over w cells, in eighths of a cell
 * (Unicode) or whole cells of '#' (ASCII). */
void frame_bar(struct frame *f, int x, int y, int w, double value, double max,
               enum frame_style style);

/* Write the frame as text: ROWS lines, trailing spaces trimmed, UTF-8 (or
 * ASCII). Returns a malloc'd string; NULL when out of memory. */
char *frame_to_text(const struct frame *f);

#endif
