/*
 * view_loading: the frame shown while a scene loads (view_loading.h).
 *
 * A block in the middle of the frame, one line each: the file, the phase,
 * a bar with the percent done, the time since the load began (and what is
 * left at the rate so far), and the key that quits. A frame too short for
 * all of them keeps the bar, the file and the key first.
 */
#include "h2o/view_loading.h"

#include <stdio.h>
#include <string.h>

#include "h2o/cost.h"
#include "h2o/frame.h"
#include "h2o/scene.h"

/* The block's lines, top to bottom. */
enum line { L_FILE, L_PHASE, L_BAR, L_TIME, L_GAP, L_QUIT, L_COUNT };

/* Which lines a short frame keeps first. */
static const enum line keep_order[L_COUNT] = {L_BAR, L_FILE, L_QUIT, L_PHASE, L_TIME, L_GAP};

/* The widest the block grows. */
#define BLOCK_MAX 64

enum view_load_phase view_load_phase_of(double fraction)
{
	if (fraction < 0)
		return VIEW_LOAD_READING;
	return fraction < SCENE_TOLD_ENCODE ? VIEW_LOAD_TOKENIZING : VIEW_LOAD_RUNNING;
}

static const char *phase_words(enum view_load_phase p)
{
	switch (p) {
	case VIEW_LOAD_TOKENIZING:
		return "tokenizing the text";
	case VIEW_LOAD_RUNNING:
		return "running the model over the text";
	case VIEW_LOAD_READING:
		break;
	}
	return "reading the scene";
}

/* The bar and its percent over W cells from X: an empty bar and no
 * percent when the load cannot tell how far it is. */
static void draw_bar(struct frame *f, int x, int y, int w, double fraction)
{
	const bool told = fraction >= 0;
	const int bw = w - 7; /* "[" bar "] 100%" */
	if (bw < 4) {
		if (told)
			frame_printf(f, x, y, w, STYLE_NORMAL, "%d%%", (int)(fraction * 100));
		return;
	}
	frame_put(f, x, y, '[', STYLE_BORDER);
	frame_fill(f, x + 1, y, bw, f->ascii ? '.' : 0x2591, STYLE_DIM);
	if (told)
		frame_bar(f, x + 1, y, bw, fraction > 1 ? 1 : fraction, 1.0, STYLE_TITLE);
	frame_put(f, x + 1 + bw, y, ']', STYLE_BORDER);
	/* Never 100 % before the load is done. */
	if (told)
		frame_printf(f, x + bw + 3, y, 4, STYLE_NORMAL, "%3d%%",
		             (int)(100 * (fraction > 1 ? 1 : fraction)));
}

static void draw_line(const struct view_loading *l, struct frame *f, enum line line, int x, int y,
                      int w)
{
	char a[32], b[32];
	double left;
	int used;
	switch (line) {
	case L_FILE:
		used = frame_text(f, x, y, w, "loading ", STYLE_LABEL);
		/* The file's name is the user's: frame_text shows it safely.
		 * A path too long for the line gives way to its base name. */
		const char *name = l->file ? l->file : "";
		const char *slash = strrchr(name, '/');
		if (slash && slash[1] && frame_text_width(name, f->ascii) > w - used)
			name = slash + 1;
		frame_text(f, x + used, y, w - used, name, STYLE_NORMAL);
		break;
	case L_PHASE:
		frame_text(f, x, y, w, phase_words(l->phase), STYLE_NORMAL);
		break;
	case L_BAR:
		draw_bar(f, x, y, w, l->fraction);
		break;
	case L_TIME:
		cost_format_duration(l->elapsed, a, sizeof a);
		/* The time left at the rate so far, once there is a rate and
		 * while it is a second or more. */
		left = l->fraction > 0.01 && l->fraction < 1 && l->elapsed >= 1
		               ? l->elapsed * (1 - l->fraction) / l->fraction
		               : 0;
		if (left >= 1) {
			cost_format_duration(left, b, sizeof b);
			frame_printf(f, x, y, w, STYLE_DIM, "%s elapsed, about %s left", a, b);
		} else {
			frame_printf(f, x, y, w, STYLE_DIM, "%s elapsed", a);
		}
		break;
	case L_QUIT:
		used = frame_text(f, x, y, w, "q", STYLE_KEY);
		frame_text(f, x + used, y, w - used, " quits", STYLE_DIM);
		break;
	case L_GAP:
	case L_COUNT:
		break;
	}
}

void view_loading_draw(const struct view_loading *l, struct frame *f)
{
	frame_clear(f);
	const int shown = f->rows < L_COUNT ? f->rows : L_COUNT;
	bool keep[L_COUNT] = {false};
	for (int i = 0; i < shown; i++)
		keep[keep_order[i]] = true;
	int w = f->cols - 4;
	if (w > BLOCK_MAX)
		w = BLOCK_MAX;
	if (w < 1)
		w = f->cols;
	const int x = (f->cols - w) / 2;
	int y = (f->rows - shown) / 2;
	for (int i = 0; i < L_COUNT; i++)
		if (keep[i])
			draw_line(l, f, (enum line)i, x, y++, w);
}
