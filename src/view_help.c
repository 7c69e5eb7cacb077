/*
 * view_help: the help overlay, listing every key from the binding table.
 */
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
        "HEAVY: old tokens kept for their accumulated attention (score)",
        "RECENT: the newest tokens, always kept; EVICTED: removed for good",
        "+attn: attention this step; score = old score + attention",
};

void panel_help_draw(const struct view *v, struct frame *f, struct rect r)
{
	(void)v;
	const int n_actions = ACT_COUNT - 1;
	const int want_h = n_actions + 4 + (int)(sizeof legend / sizeof legend[0]);
	const int h = want_h < r.h ? want_h : r.h;
	const int w = r.w < 76 ? r.w : 76;
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

	const int keys_w = 20, bottom = y0 + h - 1;
	int y = y0 + 1;
	for (int a = 1; a < ACT_COUNT && y < bottom; a++, y++) {
		char keys[64];
		keys_of((enum app_action)a, keys, sizeof keys);
		frame_text(f, x0 + 2, y, keys_w, keys, STYLE_KEY);
		frame_text(f, x0 + 2 + keys_w + 1, y, w - keys_w - 5, app_action_help(a),
		           STYLE_NORMAL);
	}
	y++;
	for (size_t i = 0; i < sizeof legend / sizeof legend[0] && y < bottom; i++, y++)
		frame_text(f, x0 + 2, y, w - 4, legend[i], STYLE_DIM);
	if (y >= bottom)
		return;
	/* The marks, drawn with the glyphs the panels use. */
	static const struct {
		enum frame_glyph glyph;
		const char *text;
	} marks[] = {
	        {GLYPH_NEW, " new token   "},
	        {GLYPH_GONE, " evicted at this step   "},
	        {GLYPH_PROMOTED, " moved from recent to heavy"},
	};
	int x = x0 + 2;
	for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
		frame_put(f, x, y, frame_glyph(f, marks[i].glyph), STYLE_NEW);
		x += 1 + frame_text(f, x + 1, y, x0 + w - 2 - x - 1, marks[i].text, STYLE_DIM);
	}
}
