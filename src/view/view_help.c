/*
 * view_help: the help overlay, listing every key from the binding table.
 *
 * Below the keys come a legend of the panels and, when the scene has a
 * "watch" paragraph (a lesson's "what to watch"), that paragraph wrapped by
 * words. Every key is always listed (design §7); when the screen is short the
 * paragraph keeps its room before the legend does, since it is the one
 * thing in the overlay that belongs to this scene. The paragraph is scene
 * text, so it is drawn only through frame_text and measured only with
 * frame_text_width; this file must never write scene bytes any other way.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "h2o/keys.h"
#include "view_panels.h"

/* The keys of ACTION as --keys names ("right l space"); digits as "0-9". */
static void keys_of(enum app_action action, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	if (action == ACT_DIGIT) {
		snprintf(buf, size, "0-9 enter");
		return;
	}
	size_t count;
	const struct app_binding *b = app_bindings(&count);
	for (size_t i = 0; i < count; i++) {
		if (b[i].action != action)
			continue;
		char name[16];
		len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " " : "",
		                        keys_name(b[i].key, name, sizeof name));
		if (len >= size)
			break;
	}
}

static const char *const legend[] = {
        "Positions count from 0; steps and heads from 1 (step t appends position t-1)",
        "HEAVY: old tokens kept for their accumulated attention (score)",
        "RECENT: the newest tokens, always kept; EVICTED: removed for good",
        "+attn: attention this step; score = old score + attention",
};
enum { LEGEND_ROWS = (int)(sizeof legend / sizeof legend[0]) + 2 }; /* blank, legend, marks */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* view_panels.h says what it does. */
bool view_wrap_next(const char **at, int maxw, bool ascii, char *line, size_t size)
{
	const char *s = *at;
	size_t len = 0;

	line[0] = '\0';
	while (is_space(*s))
		s++;
	if (*s == '\0') {
		*at = s;
		return false;
	}
	for (;;) {
		while (is_space(*s))
			s++;
		if (*s == '\0')
			break;
		if (*s == '\n') {
			s++;
			break;
		}
		const char *e = s;
		while (*e != '\0' && *e != '\n' && !is_space(*e))
			e++;
		const size_t old = len, wl = (size_t)(e - s);
		if (len + 1 + wl >= size)
			break;
		if (len > 0)
			line[len++] = ' ';
		memcpy(line + len, s, wl);
		len += wl;
		line[len] = '\0';
		if (old > 0 && frame_text_width(line, ascii) > maxw) {
			line[old] = '\0'; /* the word starts the next line */
			break;
		}
		s = e;
	}
	*at = s;
	return true;
}

int view_wrap_count(const char *text, int maxw, bool ascii)
{
	char line[SCENE_MAX_WATCH_BYTES + 1];
	int n = 0;

	while (view_wrap_next(&text, maxw, ascii, line, sizeof line))
		n++;
	return n;
}

/* The marks, drawn with the glyphs the panels use. */
static void draw_marks(struct frame *f, int x, int y, int right)
{
	static const struct {
		enum frame_glyph glyph;
		const char *text;
	} marks[] = {
	        {GLYPH_NEW, " new token   "},
	        {GLYPH_GONE, " evicted at this step   "},
	        {GLYPH_PROMOTED, " moved from recent to heavy"},
	};
	for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
		frame_put(f, x, y, frame_glyph(f, marks[i].glyph), STYLE_NEW);
		x += 1 + frame_text(f, x + 1, y, right - x - 1, marks[i].text, STYLE_DIM);
	}
}

/* The "what to watch" paragraph in rows [Y, BOTTOM); a paragraph cut short
 * ends in an ellipsis. */
static void draw_watch(struct frame *f, const char *watch, int x, int y, int bottom, int maxw)
{
	char line[SCENE_MAX_WATCH_BYTES + 1];

	frame_text(f, x, y++, maxw, "what to watch", STYLE_LABEL);
	while (y < bottom && view_wrap_next(&watch, maxw, f->ascii, line, sizeof line)) {
		char rest[sizeof line];
		const char *more = watch;
		const bool cut =
		        y == bottom - 1 && view_wrap_next(&more, maxw, f->ascii, rest, sizeof rest);
		if (!cut) {
			frame_text(f, x, y++, maxw, line, STYLE_NORMAL);
			continue;
		}
		const int used = frame_text(f, x, y, maxw - 2, line, STYLE_NORMAL);
		frame_put(f, x + used + 1, y, frame_glyph(f, GLYPH_ELLIPSIS), STYLE_DIM);
		break;
	}
}

void panel_help_draw(const struct view *v, struct frame *f, struct rect r)
{
	const int n_actions = ACT_COUNT - 1;
	const char *watch = v->sc->watch;
	/* One column of keys when it leaves room for the rest, else two in a
	 * wider box: every key is always listed. A paragraph gets a wider
	 * box: rows are what the keys leave it. */
	int cols = 1, w = r.w < (*watch ? 100 : 76) ? r.w : (*watch ? 100 : 76);
	int watch_rows = *watch ? 2 + view_wrap_count(watch, w - 4, f->ascii) : 0;
	if (n_actions + 2 + watch_rows + LEGEND_ROWS > r.h) {
		cols = 2;
		w = r.w < 140 ? r.w : 140;
		watch_rows = *watch ? 2 + view_wrap_count(watch, w - 4, f->ascii) : 0;
	}
	const int key_rows = (n_actions + cols - 1) / cols;
	/* Borders, keys and the policies c goes through always; the paragraph
	 * next; the legend if room is left. */
	const int base_h = key_rows + 3;
	const bool with_legend = base_h + watch_rows + LEGEND_ROWS <= r.h || !*watch;
	const int want_h = base_h + watch_rows + (with_legend ? LEGEND_ROWS : 0);
	const int h = want_h < r.h ? want_h : r.h;
	const int x0 = r.x + (r.w - w) / 2, y0 = r.y + (r.h - h) / 2;

	for (int y = y0; y < y0 + h; y++)
		frame_fill(f, x0, y, w, ' ', STYLE_NORMAL);
	frame_put(f, x0, y0, frame_glyph(f, GLYPH_CORNER_TL), STYLE_BORDER);
	frame_fill(f, x0 + 1, y0, w - 2, frame_glyph(f, GLYPH_HLINE), STYLE_BORDER);
	frame_put(f, x0 + w - 1, y0, frame_glyph(f, GLYPH_CORNER_TR), STYLE_BORDER);
	for (int y = y0 + 1; y < y0 + h - 1; y++) {
		frame_put(f, x0, y, frame_glyph(f, GLYPH_VLINE), STYLE_BORDER);
		frame_put(f, x0 + w - 1, y, frame_glyph(f, GLYPH_VLINE), STYLE_BORDER);
	}
	frame_put(f, x0, y0 + h - 1, frame_glyph(f, GLYPH_CORNER_BL), STYLE_BORDER);
	frame_fill(f, x0 + 1, y0 + h - 1, w - 2, frame_glyph(f, GLYPH_HLINE), STYLE_BORDER);
	frame_put(f, x0 + w - 1, y0 + h - 1, frame_glyph(f, GLYPH_CORNER_BR), STYLE_BORDER);
	frame_text(f, x0 + 2, y0, w - 4, " keys (q quits, any other key closes this help) ",
	           STYLE_LABEL);

	/* Two columns keep a gap of two between them, and each its keys as
	 * wide as its widest list of them. */
	const int col_w = w - 4, bottom = y0 + h - 1;
	int keys_w[2] = {cols == 1 ? 20 : 0, 0};
	for (int a = 1; a < ACT_COUNT && cols > 1; a++) {
		char keys[64];
		keys_of((enum app_action)a, keys, sizeof keys);
		const int col = (a - 1) / key_rows, kw = frame_text_width(keys, f->ascii);
		keys_w[col] = kw > keys_w[col] ? (kw < 20 ? kw : 20) : keys_w[col];
	}
	/* The texts share what the keys leave, equally. */
	const int text_w =
	        cols == 1 ? col_w - keys_w[0] - 1 : (w - 4 - 2 - keys_w[0] - keys_w[1] - 2) / 2;
	for (int a = 1; a < ACT_COUNT; a++) {
		const int col = (a - 1) / key_rows, y = y0 + 1 + (a - 1) % key_rows;
		const int x = x0 + 2 + (col ? keys_w[0] + 1 + text_w + 2 : 0);
		if (y >= bottom)
			continue;
		char keys[64];
		keys_of((enum app_action)a, keys, sizeof keys);
		frame_text(f, x, y, keys_w[col], keys, STYLE_KEY);
		frame_text(f, x + keys_w[col] + 1, y, text_w, app_action_help(a), STYLE_NORMAL);
	}
	int y = y0 + 1 + key_rows;
	/* The policies by name, whole: a key's text may be cut to its column. */
	if (y < bottom) {
		char names[256], line[320];
		snprintf(line, sizeof line, "c compares H2O with each in turn: %s",
		         app_comparable_names(names, sizeof names));
		frame_text(f, x0 + 2, y++, w - 4, line, STYLE_DIM);
	}
	if (with_legend) {
		y++;
		for (size_t i = 0; i < sizeof legend / sizeof legend[0] && y < bottom; i++, y++)
			frame_text(f, x0 + 2, y, w - 4, legend[i], STYLE_DIM);
		if (y < bottom)
			draw_marks(f, x0 + 2, y++, x0 + w - 2);
	}
	if (*watch && y + 1 < bottom)
		draw_watch(f, watch, x0 + 2, y + 1, bottom, w - 4);
}
