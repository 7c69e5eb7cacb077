/*
 * view_strip: every policy's recall at the shown step on one line, the
 * rule under the header, so that eleven policies compare at a glance
 * instead of by ten presses of c.
 *
 * The figures are the timeline's (the same attn_recall the status line
 * and the report print); on a model scene each policy's perplexity of the
 * text so far (drop_perplexity, the model panel's figure) follows its
 * recall. Only the policies the timelines compute appear, in POLICIES
 * order; the full cache, whose recall is 1 by definition, only where its
 * perplexity says something. The policy c compares with H2O is in
 * brackets. What does not fit is dropped from the end and counted ("+3").
 */
#include <stdio.h>
#include <string.h>

#include "h2o/drop.h"
#include "view_panels.h"

/* The short name of policy P on the strip: four letters at most, the
 * name itself when it is that short. The help's words define each. */
static const char *strip_name(enum policy_id p)
{
	static const struct {
		const char *name, *brief;
	} briefs[] = {
	        {"window", "win"},   {"streaming", "strm"},  {"knorm", "knrm"},
	        {"snapkv", "snap"},  {"snapkv-win", "snpw"}, {"pyramidkv", "pyr"},
	        {"adakv", "ada"},    {"observed", "obs"},    {"random", "rand"},
	        {"keydiff", "kdif"}, {"expected", "exp"},
	};
	const char *name = policies[p]->name;
	for (size_t i = 0; i < sizeof briefs / sizeof briefs[0]; i++)
		if (strcmp(briefs[i].name, name) == 0)
			return briefs[i].brief;
	return name;
}

/* "0.75" as ".75" (the strip is tight; 1.00 stays as it is). */
static const char *brief_fraction(double x, char *buf, size_t size)
{
	snprintf(buf, size, "%.2f", x);
	return buf[0] == '0' && buf[1] == '.' ? buf + 1 : buf;
}

/* Policy P's entry: "h2o .75", "h2o .75/3.41" with a perplexity PPL (> 0),
 * in brackets when MARKED. Returns BUF. */
static const char *entry(enum policy_id p, double recall, double ppl, bool marked, char *buf,
                         size_t size)
{
	char r[16];
	int len = snprintf(buf, size, "%s%s %s", marked ? "[" : "", strip_name(p),
	                   brief_fraction(recall, r, sizeof r));
	if (ppl > 0)
		len += snprintf(buf + len, size - (size_t)len, "/%.2f", ppl);
	if (marked)
		snprintf(buf + len, size - (size_t)len, "]");
	return buf;
}

/* How many of the COUNT entries TEXT fit in ROOM columns, in order, each
 * with a space either side, leaving room to count the rest (" +3 "). */
static int strip_fit(const struct frame *f, char text[][48], int count, int room)
{
	int used = 0;
	for (int i = 0; i < count; i++) {
		char more[16];
		snprintf(more, sizeof more, " +%d ", count - i - 1);
		const int need = 2 + frame_text_width(text[i], f->ascii) +
		                 (i + 1 < count ? frame_text_width(more, f->ascii) : 0);
		if (used + need > room)
			return i;
		used += 2 + frame_text_width(text[i], f->ascii);
	}
	return count;
}

void panel_strip_draw(const struct view *v, struct frame *f, struct rect r)
{
	const struct app *app = v->app;
	if (app->strip_hidden || v->t == 0 || r.w < 20)
		return;
	const struct step_summary *s = timeline_summary(v->tl, v->t);
	/* The model's perplexity of the text's tokens seen so far: a
	 * teacher-forced drop only (a generating one's texts differ). */
	const struct drop_result *d = app->drop && !app->drop->generate ? app->drop : NULL;
	const int upto = v->t - 1;
	const bool ppl = d && upto > 0;
	const unsigned run = app->policies | ENGINE_POLICY(POLICY_H2O) | ENGINE_POLICY(POLICY_FULL);
	enum policy_id shown[POLICY_COUNT];
	int count = 0;
	for (int p = 0; p < POLICY_COUNT; p++)
		if ((run & ENGINE_POLICY(p)) && (p != POLICY_FULL || ppl))
			shown[count++] = (enum policy_id)p;

	char text[POLICY_COUNT][48];
	for (int i = 0; i < count; i++) {
		const enum policy_id p = shown[i];
		const double q = ppl && d->p[p].ran ? drop_perplexity(d, p, 0, upto) : 0;
		entry(p, s->c[p].m.attn_recall, q, p == app->compare, text[i], sizeof text[i]);
	}
	const char *label = ppl ? " recall/ppl " : " recall ";
	const int x0 = r.x + 2, end = r.x + r.w - 2; /* a cell of rule stays at the right */
	const int room = end - x0 - frame_text_width(label, f->ascii);
	int fit = strip_fit(f, text, count, room);
	/* The compared policy is never among those counted: when it would
	 * be, it comes right after H2O. */
	int cmp = 0;
	while (cmp < count && shown[cmp] != app->compare)
		cmp++;
	if (cmp < count && cmp >= fit) {
		int to = 0;
		while (to < count && shown[to] != POLICY_H2O)
			to++;
		to = to < count ? to + 1 : 0;
		char moved[48];
		memcpy(moved, text[cmp], sizeof moved);
		const enum policy_id p = shown[cmp];
		for (int i = cmp; i > to; i--) {
			memcpy(text[i], text[i - 1], sizeof text[i]);
			shown[i] = shown[i - 1];
		}
		memcpy(text[to], moved, sizeof moved);
		shown[to] = p;
		fit = strip_fit(f, text, count, room);
	}
	int x = x0 + frame_text(f, x0, r.y, end - x0, label, STYLE_LABEL);
	for (int i = 0; i < fit; i++) {
		x += frame_text(f, x, r.y, end - x, " ", STYLE_NORMAL);
		x += frame_text(f, x, r.y, end - x, text[i],
		                shown[i] == app->compare ? STYLE_HEAVY : STYLE_NORMAL);
		x += frame_text(f, x, r.y, end - x, " ", STYLE_NORMAL);
	}
	if (fit < count)
		frame_printf(f, x, r.y, end - x, STYLE_DIM, " +%d ", count - fit);
}
