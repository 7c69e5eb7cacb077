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
 * name itself when it is that short; TIGHT, two letters (h2o stays h2o).
 * The help's words define each. */
static const char *strip_name(enum policy_id p, bool tight)
{
	static const struct {
		const char *name, *brief, *tight;
	} briefs[] = {
	        {"full", "full", "fu"},          {"window", "win", "wi"},
	        {"streaming", "strm", "st"},     {"tova", "tova", "tv"},
	        {"knorm", "knrm", "kn"},         {"snapkv", "snap", "sn"},
	        {"snapkv-win", "snpw", "sw"},    {"pyramidkv", "pyr", "py"},
	        {"pyramidkv-win", "pyrw", "pw"}, {"adakv", "ada", "ad"},
	        {"adakv-win", "adaw", "aw"},     {"observed", "obs", "ob"},
	        {"observed-win", "obsw", "ow"},  {"random", "rand", "rn"},
	        {"keydiff", "kdif", "kd"},       {"expected", "exp", "ex"},
	};
	const char *name = policies[p]->name;
	for (size_t i = 0; i < sizeof briefs / sizeof briefs[0]; i++)
		if (strcmp(briefs[i].name, name) == 0)
			return tight ? briefs[i].tight : briefs[i].brief;
	return name;
}

/* "0.75" as ".75" (the strip is tight; 1.00 stays as it is). */
static const char *brief_fraction(double x, char *buf, size_t size)
{
	snprintf(buf, size, "%.2f", x);
	return buf[0] == '0' && buf[1] == '.' ? buf + 1 : buf;
}

/* Policy P's entry: "h2o .75", "h2o .75/3.41" with a perplexity PPL (> 0),
 * in brackets when MARKED; TIGHT, the recall in percent after a two-letter
 * name, "h2o75", "wi70/3.4" (the full cache's, 100, left out: "fu/2.8").
 * Returns BUF. */
static const char *entry(enum policy_id p, double recall, double ppl, bool marked, bool tight,
                         char *buf, size_t size)
{
	char r[16];
	int len;
	if (tight && p == POLICY_FULL && ppl > 0) /* its recall is 1 by definition */
		len = snprintf(buf, size, "%s%s", marked ? "[" : "", strip_name(p, true));
	else if (tight)
		len = snprintf(buf, size, "%s%s%.0f", marked ? "[" : "", strip_name(p, true),
		               recall * 100.0);
	else
		len = snprintf(buf, size, "%s%s %s", marked ? "[" : "", strip_name(p, false),
		               brief_fraction(recall, r, sizeof r));
	if (ppl > 0 && tight)
		len += snprintf(buf + len, size - (size_t)len, ppl < 9.95 ? "/%.1f" : "/%.0f", ppl);
	else if (ppl > 0)
		len += snprintf(buf + len, size - (size_t)len, "/%.2f", ppl);
	if (marked)
		snprintf(buf + len, size - (size_t)len, "]");
	return buf;
}

/* How many of the COUNT entries TEXT fit in ROOM columns, in order: the
 * wide form with a space either side of each, the tight one with a space
 * before each and TAIL (1 or 0) after the last; leaving room to count the
 * rest (" +3 "). */
static int strip_fit(const struct frame *f, char text[][48], int count, int room, bool tight,
                     int tail)
{
	const int pad = tight ? 1 : 2;
	int used = 0;
	for (int i = 0; i < count; i++) {
		char more[16];
		snprintf(more, sizeof more, " +%d ", count - i - 1);
		const int w = pad + frame_text_width(text[i], f->ascii);
		const int need = w + (i + 1 < count ? frame_text_width(more, f->ascii) : tail);
		if (used + need > room)
			return i;
		used += w;
	}
	return count;
}

/* The entries of the SHOWN policies into TEXT, wide or TIGHT. */
static void make_entries(const struct view *v, const enum policy_id *shown, int count,
                         const struct drop_result *d, int upto, bool tight, char text[][48])
{
	const struct step_summary *s = timeline_summary(v->tl, v->t);
	for (int i = 0; i < count; i++) {
		const enum policy_id p = shown[i];
		const double q = d && d->p[p].ran ? drop_perplexity(d, p, 0, upto) : 0;
		entry(p, s->c[p].m.attn_recall, q, p == v->app->compare, tight, text[i],
		      sizeof text[i]);
	}
}

void panel_strip_draw(const struct view *v, struct frame *f, struct rect r)
{
	const struct app *app = v->app;
	if (app->strip_hidden || v->t == 0 || r.w < 20)
		return;
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

	/* The wide form while every policy fits so; else the tight one,
	 * which at 80 columns holds every policy's recall. */
	char text[POLICY_COUNT][48];
	bool tight = false;
	const char *label = ppl ? " recall/ppl " : " recall ";
	int x0 = r.x + 2, end = r.x + r.w - 2; /* a cell of rule stays at the right */
	make_entries(v, shown, count, ppl ? d : NULL, upto, false, text);
	int room = end - x0 - frame_text_width(label, f->ascii);
	int tail = 0;
	int fit = strip_fit(f, text, count, room, false, tail);
	if (fit < count) {
		tight = true;
		tail = 1;
		label = ppl ? " rec%/ppl" : " rec%";
		make_entries(v, shown, count, ppl ? d : NULL, upto, true, text);
		room = end - x0 - frame_text_width(label, f->ascii);
		fit = strip_fit(f, text, count, room, true, tail);
	}
	if (fit < count && strip_fit(f, text, count, room + 2, true, 0) == count) {
		/* Twelve policies all at 100 need the rule's cells either side
		 * too: "─ rec% h2o100 … kd100─". */
		x0 = r.x + 1, end = r.x + r.w - 1, tail = 0;
		room += 2;
		fit = count;
	}
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
		fit = strip_fit(f, text, count, room, tight, tail);
	}
	int x = x0 + frame_text(f, x0, r.y, end - x0, label, STYLE_LABEL);
	for (int i = 0; i < fit; i++) {
		x += frame_text(f, x, r.y, end - x, " ", STYLE_NORMAL);
		x += frame_text(f, x, r.y, end - x, text[i],
		                shown[i] == app->compare ? STYLE_HEAVY : STYLE_NORMAL);
		if (!tight || (i + 1 == fit && x < end))
			x += frame_text(f, x, r.y, end - x, " ", STYLE_NORMAL);
	}
	if (fit < count)
		frame_printf(f, x, r.y, end - x, STYLE_DIM, "%s+%d ", tight ? "" : " ",
		             count - fit);
}
