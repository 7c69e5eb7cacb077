/*
 * view_lesson: a lesson's text on the main screen, so that the scene
 * teaches without a key.
 *
 * A scene with a "watch" paragraph gets a rule labelled "what to watch"
 * above the story line and, below it, the paragraph wrapped by words (at a
 * step with a note of its own, the note, under "at step N"): a
 * strip of a few lines (more on a taller terminal); E opens all of it in a
 * pager (view_pager.c). A strip too short for the paragraph ends in an
 * ellipsis and its rule says which key shows the rest. The paragraph is scene text: it goes
 * through frame_text and is measured with frame_text_width only.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "h2o/heads.h"
#include "h2o/keys.h"
#include "h2o/lessons.h"
#include "h2o/view.h"
#include "view_panels.h"

/* Lines of a strip at a frame of ROWS: two at 80x24, four from 36 rows. */
static int strip_lines(int rows)
{
	return rows >= 36 ? 4 : rows >= 30 ? 3 : 2;
}

static int note_width(int cols)
{
	return cols - 2;
}

/* The text shown at STEP: its step note, or the watch paragraph. */
static const char *lesson_text(const struct scene *sc, int step, bool *note)
{
	for (int i = 0; i < sc->n_notes; i++)
		if (sc->note_step[i] == step) {
			*note = true;
			return sc->note_text[i];
		}
	*note = false;
	return sc->watch;
}

/* The lines the longest of the texts needs (so that the layout holds
 * still from step to step), and the lines the texts get. */
static void lesson_lines(const struct app *app, int cols, int rows, bool ascii, int *need, int *get)
{
	const struct scene *sc = app->scene;
	*need = *get = 0;
	if (app->lesson_hidden)
		return;
	*need = view_wrap_count(sc->watch, note_width(cols), ascii);
	for (int i = 0; i < sc->n_notes; i++) {
		const int lines = view_wrap_count(sc->note_text[i], note_width(cols), ascii);
		*need = lines > *need ? lines : *need;
	}
	const int most = strip_lines(rows);
	*get = *need < most ? *need : most;
}

int view_lesson_rows(const struct app *app, int cols, int rows, bool ascii)
{
	int need, get;
	lesson_lines(app, cols, rows, ascii, &need, &get);
	return get > 0 ? 1 + get : 0;
}

void panel_lesson_draw(const struct view *v, struct frame *f, struct rect r)
{
	int need, get;
	lesson_lines(v->app, f->cols, f->rows, f->ascii, &need, &get);
	bool note;
	const char *at = lesson_text(v->sc, v->t, &note);
	const bool cut = get < view_wrap_count(at, note_width(r.w), f->ascii);
	const char *keys = cut ? "E: all of it, e hides" : "e hides";
	char label[96];
	if (note)
		snprintf(label, sizeof label, "at step %d (%s)", v->t, keys);
	else
		snprintf(label, sizeof label, "%s (%s)", *at ? "what to watch" : "step notes",
		         keys);
	view_rule(f, r.x, r.y, r.w, label);
	const int x = r.x + 1, maxw = note_width(r.w);
	char line[SCENE_MAX_WATCH_BYTES + 1];
	for (int i = 0; i < get && i + 1 < r.h; i++) {
		const int y = r.y + 1 + i;
		if (i == get - 1 && cut) {
			/* The last line leaves room for the sign of more. */
			if (!view_wrap_next(&at, maxw - 2, f->ascii, line, sizeof line))
				break;
			const int used = frame_text(f, x, y, maxw - 2, line, STYLE_NORMAL);
			frame_put(f, x + used + 1, y, frame_glyph(f, GLYPH_ELLIPSIS), STYLE_DIM);
			break;
		}
		if (!view_wrap_next(&at, maxw, f->ascii, line, sizeof line))
			break;
		frame_text(f, x, y, maxw, line, STYLE_NORMAL);
	}
}

/* A sentence in pieces, each in its style: the tool's words with scene
 * text (a token) among them, measured and drawn piece by piece. */
#define SAID_MAX 16
struct said {
	const char *text[SAID_MAX];
	enum frame_style style[SAID_MAX];
	char own[SAID_MAX][112];
	int count;
};

static void say(struct said *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct said *s, const char *fmt, ...)
{
	if (s->count >= SAID_MAX)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->own[s->count], sizeof s->own[s->count], fmt, ap);
	va_end(ap);
	s->text[s->count] = s->own[s->count];
	s->style[s->count++] = STYLE_NORMAL;
}

static void say_token(struct said *s, const char *text, enum frame_style style)
{
	if (s->count >= SAID_MAX)
		return;
	s->text[s->count] = text;
	s->style[s->count++] = style;
}

static int said_width(const struct said *s, bool ascii)
{
	int w = 0;
	for (int i = 0; i < s->count; i++)
		w += frame_text_width(s->text[i], ascii);
	return w;
}

static void said_draw(struct frame *f, int x, int y, int w, const struct said *s)
{
	int used = 0;
	for (int i = 0; i < s->count && used < w; i++)
		used += frame_text(f, x + used, y, w - used, s->text[i], s->style[i]);
}

/* The first step whose H2O attention is renormalised over fewer tokens
 * than the full cache holds: the step after H2O's first eviction, or 0. */
static int first_renormalised(const struct view *v)
{
	if (timeline_eviction_count(v->tl, POLICY_H2O) == 0)
		return 0;
	const int t = timeline_eviction(v->tl, POLICY_H2O, 0)->step + 1;
	return t <= v->n ? t : 0;
}

/* Why H2O's weights are larger than the full cache's, in FORM 0 (the
 * longest) to 2. */
static void say_renormalised(const struct view *v, int form, struct said *s)
{
	const struct cache_record *h = &v->rec->c[POLICY_H2O];
	int top = 0;
	for (int i = 1; i < h->n_attended; i++)
		if (h->attn[i] > h->attn[top])
			top = i;
	const int pos = h->attended[top];
	const double full = timeline_weight(v->tl, POLICY_FULL, v->t, pos);
	if (form == 2) {
		say(s,
		    "H2O's softmax shares 1 among the %d it holds, not %d: each weight is larger",
		    h->n_attended, v->t);
		return;
	}
	if (form == 0)
		say(s,
		    "H2O renormalises: its softmax shares 1 among the %d %s it holds, not all %d, "
		    "so each gets more (",
		    h->n_attended, view_plural(h->n_attended, "token", "tokens"), v->t);
	else
		say(s, "H2O's softmax shares 1 among the %d it holds, not %d: larger weights (",
		    h->n_attended, v->t);
	say_token(s, v->sc->text[pos], STYLE_HEAVY);
	say(s, form == 0 ? " %.2f, full %.2f)" : " %.2f, not %.2f)", h->attn[top], full);
}

/* Whether H2O at the baseline's budgets attended POS at step T. */
static bool base_held(const struct app_baseline *base, const struct view *v, int pos, int t)
{
	const int at = base->evicted_at[(size_t)v->app->head * (size_t)v->n + (size_t)pos];
	return pos < t && (at == 0 || at >= t);
}

/* After a lesson's budget change, this step against the budgets it opened
 * with, in FORM 0 (the longest) to 4; false when there is nothing to
 * compare. */
static bool say_experiment(const struct view *v, int form, struct said *s)
{
	const struct app *app = v->app;
	const struct app_baseline *base = app->baseline;
	if (!base || (base->heavy == app->b.heavy && base->recent == app->b.recent) ||
	    v->t > base->built[app->head])
		return false;
	const double now = timeline_summary(v->tl, v->t)->c[POLICY_H2O].m.attn_recall;
	const double was = base->recall[(size_t)app->head * ((size_t)v->n + 1) + (size_t)v->t];
	const bool differs = fabs(now - was) >= 0.005;
	say(s, form == 0 ? "At heavy %d + recent %d recall was " : "At %d + %d recall was ",
	    base->heavy, base->recent);
	if (differs)
		say(s, "%.2f, now %.2f", was, now);
	else
		say(s, "%.2f too", was);
	/* The token held by one and not the other with the most of this
	 * step's full attention: what made the difference. */
	int key = -1;
	double most = -1.0;
	for (int pos = 0; differs && pos < v->t; pos++) {
		const bool here = timeline_weight(v->tl, POLICY_H2O, v->t, pos) >= 0.0;
		if (here == base_held(base, v, pos, v->t))
			continue;
		const double w = timeline_weight(v->tl, POLICY_FULL, v->t, pos);
		if (w > most) {
			most = w;
			key = pos;
		}
	}
	if (key >= 0 && form <= 2) {
		const int gone = timeline_evicted_at(v->tl, POLICY_H2O, key);
		say(s, ": ");
		say_token(s, v->sc->text[key], STYLE_HEAVY);
		if (form == 0)
			say(s, ", with %.2f of this step's attention,", most);
		else
			say(s, " (%.2f of it)", most);
		if (gone > 0 && gone < v->t)
			say(s, " is gone since step %d", gone);
		else
			say(s, " is held now");
	}
	/* The token this step evicts, as the opening budgets treated it. */
	const struct cache_summary *h = &timeline_summary(v->tl, v->t)->c[POLICY_H2O];
	if (h->n_evicted > 0 && form != 2 && form != 4) {
		const int pos = timeline_eviction(v->tl, POLICY_H2O, h->first_evict)->pos;
		const int at = base->evicted_at[(size_t)app->head * (size_t)v->n + (size_t)pos];
		if (at != v->t) {
			say(s, "; ");
			say_token(s, v->sc->text[pos], STYLE_GONE);
			if (at == 0)
				say(s, " stayed to the end");
			else if (at > v->t)
				say(s, " stayed to step %d", at);
			else
				say(s, " went at step %d already", at);
		}
	}
	/* And the token the opening budgets evicted at this step, if these
	 * keep it past it. */
	for (int pos = 0; form != 2 && form != 4 && pos < v->t; pos++) {
		const int now_at = timeline_evicted_at(v->tl, POLICY_H2O, pos);
		if (base->evicted_at[(size_t)app->head * (size_t)v->n + (size_t)pos] == v->t &&
		    (now_at == 0 || now_at > v->t)) {
			say(s, "; ");
			say_token(s, v->sc->text[pos], STYLE_GONE);
			say(s, " went at this step");
			break;
		}
	}
	return true;
}

/* With grouped heads, why H2O's scores are not the full cache's even
 * before anything is evicted: they add different weights. */
static bool say_grouped(const struct view *v, int form, struct said *s)
{
	const int group = heads_group(v->sc);
	if (group < 2)
		return false;
	if (form == 0) {
		say(s, "Scores differ: H2O's add the mean attention of the %d query heads ", group);
		say(s, "sharing this kv head (kv mean); the full cache's, this head's own");
	} else if (form == 1)
		say(s,
		    "H2O's scores add the mean of the %d heads sharing this kv head; full's, "
		    "this head's own",
		    group);
	else
		say(s, "H2O adds the kv mean of %d heads, full this head's own", group);
	return true;
}

/* The name of the first key bound to ACTION, in BUF. */
static const char *key_of(enum app_action action, char *buf, size_t size)
{
	size_t count;
	const struct app_binding *b = app_bindings(&count);
	for (size_t i = 0; i < count; i++)
		if (b[i].action == action)
			return keys_name(b[i].key, buf, size);
	return "?";
}

/* Before the first step: the experiment the budget keys make. */
static void say_before(const struct view *v, struct frame *f, int x, int y, int w)
{
	const struct app *app = v->app;
	const struct app_baseline *base = app->baseline;
	char k[4][16];
	struct said s = {.count = 0};
	if (base && (base->heavy != app->b.heavy || base->recent != app->b.recent))
		say(&s,
		    "Budgets changed: at each step this line compares with heavy %d + recent %d",
		    base->heavy, base->recent);
	else
		say(&s,
		    "Try %s %s (heavy) or %s %s (recent): this line then says what the change did",
		    key_of(ACT_HEAVY_DEC, k[0], sizeof k[0]),
		    key_of(ACT_HEAVY_INC, k[1], sizeof k[1]),
		    key_of(ACT_RECENT_DEC, k[2], sizeof k[2]),
		    key_of(ACT_RECENT_INC, k[3], sizeof k[3]));
	said_draw(f, x, y, w, &s);
}

/* At a lesson's last step: that it ended, and the key to the next. */
static bool say_end(const struct view *v, int form, struct said *s)
{
	const struct app *app = v->app;
	if (app->lesson < 0 || v->t != v->n || !app->lessons)
		return false;
	char k[2][16];
	key_of(ACT_LESSON_NEXT, k[0], sizeof k[0]);
	key_of(ACT_LESSON_PREV, k[1], sizeof k[1]);
	if (app->lesson + 1 < app->lessons->count)
		say(s,
		    form == 0 ? "End of lesson %d: %s opens lesson %d"
		              : "End of lesson %d: %s for %d",
		    app->lesson + 1, k[0], app->lesson + 2);
	else if (form == 0)
		say(s, "End of lesson %d, the last: %s goes back a lesson", app->lesson + 1, k[1]);
	else
		say(s, "End of lesson %d, the last", app->lesson + 1);
	return true;
}

void view_lesson_remark(const struct view *v, struct frame *f, int x, int y, int w)
{
	if (!v->sc->lesson)
		return;
	if (v->t == 0) {
		say_before(v, f, x, y, w);
		return;
	}
	if (!v->rec)
		return;
	struct said s;
	const bool renorm = v->t == first_renormalised(v);
	for (int form = 0; form < 5; form++) {
		s.count = 0;
		if (renorm)
			say_renormalised(v, form < 2 ? form : 2, &s);
		else if (!say_experiment(v, form, &s) && !say_end(v, form, &s) &&
		         !say_grouped(v, form, &s))
			return;
		if (said_width(&s, f->ascii) <= w)
			break;
	}
	said_draw(f, x, y, w, &s);
}
