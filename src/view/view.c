/*
 * view: the screen's layout, and the small one-line panels.
 *
 * Layout, top to bottom: header (title and step, description), the cache
 * panels (H2O left, full cache right), the plot, the attention heat rows
 * with the same split (or the cache map), then the sentence explaining the
 * step, the status figures and the key hints. The cache panels, the plot
 * and the heat rows share what is left in the middle; a taller terminal
 * gives the plot more rows and the heat rows a third of the middle.
 */
#include "h2o/view.h"

#include <stdio.h>

#include "h2o/heads.h"
#include "h2o/keys.h"
#include "h2o/lessons.h"
#include "h2o/cost.h"
#include "view_panels.h"

void view_rule(struct frame *f, int x, int y, int w, const char *label)
{
	frame_fill(f, x, y, w, frame_glyph(f, GLYPH_HLINE), STYLE_BORDER);
	if (label && *label && w > 6) {
		const int used = frame_printf(f, x + 2, y, w - 4, STYLE_LABEL, " %s ", label);
		(void)used;
	}
}

const char *view_format_count(long n, char *buf)
{
	char digits[32];
	const int len = snprintf(digits, sizeof digits, "%ld", n < 0 ? -n : n);
	char *out = buf;
	if (n < 0)
		*out++ = '-';
	for (int i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			*out++ = ',';
		*out++ = digits[i];
	}
	*out = '\0';
	return buf;
}

void view_word_eviction(const struct view *v, enum policy_id p, const struct eviction *ev,
                        enum policy_voice voice, struct policy_words *words)
{
	const struct policy_loss loss = {ev->score, ev->weight, ev->cutoff_pos, ev->cutoff_value};
	policy_word(p, &v->app->b, &loss, voice, words);
}

const char *view_head_where(const struct app *app, int head, int form, bool ascii, char *buf,
                            size_t size)
{
	const struct scene *sc = app->scene;
	const int per = heads_per_layer(sc), layers = app->heads / per;
	const int kv = heads_kv_count(sc), group = heads_group(sc);
	const int layer = head / per, h = head % per;
	int len = 0;
	buf[0] = '\0';
	if (layers > 1)
		len += snprintf(buf, size, form == 0 ? "layer %d/%d%s" : "L%d/%d ", layer + 1,
		                layers, form == 0 ? (ascii ? ", " : " \u00b7 ") : "");
	if (len < (int)size)
		len += snprintf(buf + len, size - (size_t)len, form == 0 ? "head %d/%d" : "H%d/%d",
		                h + 1, per);
	if (group > 1 && len < (int)size)
		snprintf(buf + len, size - (size_t)len, form == 0 ? " (kv %d/%d)" : " kv%d/%d",
		         h / group + 1, kv);
	return buf;
}

static void draw_too_small(struct frame *f)
{
	const char *lines[3];
	char need[64], have[64];
	snprintf(need, sizeof need, "h2o-tui needs %dx%d", VIEW_MIN_COLS, VIEW_MIN_ROWS);
	snprintf(have, sizeof have, "this terminal is %dx%d", f->cols, f->rows);
	lines[0] = need;
	lines[1] = have;
	lines[2] = "enlarge it, or press q";
	const int top = f->rows > 3 ? (f->rows - 3) / 2 : 0;
	for (int i = 0; i < 3; i++) {
		const int w = frame_text_width(lines[i], f->ascii);
		const int x = w < f->cols ? (f->cols - w) / 2 : 0;
		frame_text(f, x, top + i, f->cols - x, lines[i],
		           i == 0 ? STYLE_WARN : STYLE_NORMAL);
	}
}

/* The header's right part: lesson, step, build, playing, the head shown
 * (FORM 0: in words, with its name; 1: in words; 2: briefly) and the
 * budgets. */
static void header_right(const struct view *v, const struct frame *f, int form, char *right,
                         size_t size)
{
	const struct app *app = v->app;
	int len = 0;
	right[0] = '\0';
	if (app->lesson >= 0)
		len += snprintf(right, size, "lesson %d of %d  ", app->lesson + 1,
		                app->lessons->count);
	len += snprintf(right + len, size - (size_t)len, "step %d/%d", v->t, v->n);
	if (v->built < v->n) {
		len += snprintf(right + len, size - (size_t)len,
		                app_building(app) ? "  computing %d%%" : "  out of memory at %d%%",
		                (int)((long)v->built * 100 / v->n));
		const double left = app_time_left(app);
		if (left >= 0) {
			char t[32];
			cost_format_duration(left, t, sizeof t);
			len += snprintf(right + len, size - (size_t)len, ", %s left", t);
		}
	}
	char job[48];
	if (app_model_busy(app, job, sizeof job))
		len += snprintf(right + len, size - (size_t)len, "  %s", job);
	if (app->playing)
		len += snprintf(right + len, size - (size_t)len, "  playing %d ms/step",
		                app_tick_ms(app));
	if (app->heads > 1) {
		char where[96];
		view_head_where(app, app->head, form < 2 ? 0 : 1, f->ascii, where, sizeof where);
		len += snprintf(right + len, size - (size_t)len, "  %s", where);
		const char *name = heads_name(app->scene, app->head);
		if (*name && form == 0)
			len += snprintf(right + len, size - (size_t)len, " %.16s", name);
	}
	char heavy[32], recent[32], dim[32];
	len += snprintf(right + len, size - (size_t)len, "  heavy %s + recent %s",
	                view_format_count(app->b.heavy, heavy),
	                view_format_count(app->b.recent, recent));
	/* Compressing at an interval (design §2): said only when not 1, the
	 * shorter forms in fewer words and, the shortest, without the dim. */
	const int every = policy_interval(&app->b);
	if (every > 1)
		len += snprintf(right + len, size - (size_t)len,
		                form == 0 ? "  every %d steps" : "  every %d", every);
	if (every > 1 && form == 2)
		snprintf(right + len, size - (size_t)len, "  ");
	else
		snprintf(right + len, size - (size_t)len, "  dim %s  ",
		         view_format_count(v->sc->dim, dim));
}

void panel_header_draw(const struct view *v, struct frame *f, struct rect r)
{
	const struct app *app = v->app;
	char right[200];
	/* The long form while it leaves the title room, then the short one. */
	for (int form = 0; form < 3; form++) {
		header_right(v, f, form, right, sizeof right);
		if (app->heads == 1 || frame_text_width(right, f->ascii) <= r.w - 24)
			break;
	}
	const int rw = frame_text_width(right, f->ascii);
	const int x = r.x + r.w - rw > r.x ? r.x + r.w - rw : r.x;
	frame_text(f, x, r.y, r.w - (x - r.x), right, STYLE_LABEL);

	/* The title and the current token, cut to what is left. */
	int used = frame_text(f, r.x + 1, r.y, x - r.x - 2, "h2o-tui ", STYLE_TITLE);
	used += frame_text(f, r.x + 1 + used, r.y, x - r.x - 2 - used, v->sc->title, STYLE_TITLE);
	if (v->t > 0 && x - r.x - 2 - used > 8) {
		used += frame_text(f, r.x + 1 + used, r.y, x - r.x - 2 - used, "  token ",
		                   STYLE_DIM);
		used += frame_printf(f, r.x + 1 + used, r.y, x - r.x - 2 - used, STYLE_NEW, "%d ",
		                     v->t - 1);
		frame_text(f, r.x + 1 + used, r.y, x - r.x - 2 - used, v->sc->text[v->t - 1],
		           STYLE_NEW);
	}
	if (r.h > 1)
		frame_text(f, r.x + 1, r.y + 1, r.w - 2, v->sc->description, STYLE_DIM);
}

void panel_story_draw(const struct view *v, struct frame *f, struct rect r)
{
	const int x0 = r.x + 1, w = r.w - 2;
	if (r.h > 1)
		view_lesson_remark(v, f, x0, r.y + 1, w);
	if (v->t == 0) {
		frame_text(f, x0, r.y, w,
		           "The cache is empty. Step forward to feed the first token; ? lists the "
		           "keys.",
		           STYLE_NORMAL);
		return;
	}
	const struct step_summary *s = timeline_summary(v->tl, v->t);
	const struct cache_summary *h = &s->c[POLICY_H2O];
	const char *token = v->sc->text[v->t - 1];
	const int budget = v->app->b.heavy + v->app->b.recent;
	int used = 0;
	char rest[160];
	const int prompt = v->app->b.prompt, every = policy_interval(&v->app->b);
	if (prompt > 0 && v->t == prompt && h->n_evicted > 0) {
		/* The prompt's end: every evicting cache compresses once. */
		char a[32], b[32], c[32];
		int len = snprintf(rest, sizeof rest,
		                   "the prompt's %s tokens compressed to %s: %s evicted",
		                   view_format_count(prompt, a), view_format_count(h->m.tokens, b),
		                   view_format_count(h->n_evicted, c));
		if (v->rec && v->rec->c[POLICY_H2O].cutoff_pos >= 0)
			snprintf(rest + len, sizeof rest - (size_t)len, ", cut-off %.2f",
			         v->rec->c[POLICY_H2O].cutoff_value);
		used += frame_text(f, x0, r.y, w, rest, STYLE_NORMAL);
	} else if (every > 1 && h->n_evicted > 0) {
		/* Compressing at an interval: this step's rule, back to B. */
		char a[32], b[32], c[32];
		int len = snprintf(rest, sizeof rest, "step %s compresses to %s: %s evicted",
		                   view_format_count(v->t, a), view_format_count(h->m.tokens, b),
		                   view_format_count(h->n_evicted, c));
		if (v->rec && v->rec->c[POLICY_H2O].cutoff_pos >= 0)
			len += snprintf(rest + len, sizeof rest - (size_t)len, ", cut-off %.2f",
			                v->rec->c[POLICY_H2O].cutoff_value);
		snprintf(rest + len, sizeof rest - (size_t)len, " (every %d steps)", every);
		used += frame_text(f, x0, r.y, w, rest, STYLE_NORMAL);
	} else if (h->n_evicted > 0) {
		const struct eviction *ev = timeline_eviction(v->tl, POLICY_H2O, h->first_evict);
		struct policy_words words;
		view_word_eviction(v, POLICY_H2O, ev, POLICY_VOICE_SENTENCE, &words);
		used += frame_text(f, x0, r.y, w, v->sc->text[ev->pos], STYLE_GONE);
		snprintf(rest, sizeof rest, " evicted: %s", words.before);
		used += frame_text(f, x0 + used, r.y, w - used, rest, STYLE_NORMAL);
		if (words.cutoff_pos >= 0) {
			used += frame_text(f, x0 + used, r.y, w - used,
			                   v->sc->text[words.cutoff_pos], STYLE_HEAVY);
			used += frame_text(f, x0 + used, r.y, w - used, words.after, STYLE_NORMAL);
		}
		if (words.note[0])
			used += frame_text(f, x0 + used, r.y, w - used, words.note, STYLE_NORMAL);
	} else {
		used += frame_text(f, x0, r.y, w, token, STYLE_NEW);
		char a[32], b[32], c[32];
		if (budget >= v->n)
			snprintf(rest, sizeof rest,
			         " arrives. The budget (%s) covers all %s tokens: H2O never evicts "
			         "here",
			         view_format_count(budget, a), view_format_count(v->n, b));
		else if (prompt > 0 && v->t < prompt)
			snprintf(rest, sizeof rest,
			         " arrives with the prompt: nothing is evicted before its end, "
			         "step %s",
			         view_format_count(prompt, a));
		else if (v->t <= budget)
			snprintf(rest, sizeof rest,
			         " arrives: %s of %s slots used, nothing to evict yet",
			         view_format_count(v->t, a), view_format_count(budget, b));
		else if (every > 1 && !policy_compresses(&v->app->b, v->t))
			/* Between compressions the cache grows by one a step. */
			snprintf(rest, sizeof rest,
			         " arrives: %s held, compressed to %s at step %s (every %d steps)",
			         view_format_count(h->m.tokens, a), view_format_count(budget, b),
			         view_format_count(v->t + every - (v->t - prompt) % every, c),
			         every);
		else
			snprintf(rest, sizeof rest, " arrives; nothing is evicted");
		used += frame_text(f, x0 + used, r.y, w - used, rest, STYLE_NORMAL);
	}
	if (s->promoted_pos >= 0 && w - used > 12) {
		used += frame_text(f, x0 + used, r.y, w - used, "; ", STYLE_NORMAL);
		used += frame_text(f, x0 + used, r.y, w - used, v->sc->text[s->promoted_pos],
		                   STYLE_HEAVY);
		/* Between compressions it only waits to be judged at the next. */
		const bool waits =
		        every > 1 && !policy_compresses(&v->app->b, v->t) && h->m.tokens > budget;
		frame_text(f, x0 + used, r.y, w - used,
		           waits ? " leaves recent, judged at the next compression"
		                 : " leaves recent for heavy",
		           STYLE_NORMAL);
	}
}

/* The hint line: a few actions, each with its keys from the binding table. */
struct hint {
	enum app_action a, b;
	const char *label;
};

static const struct hint hints[] = {
        {ACT_PREV, ACT_NEXT, "step"},
        {ACT_COMPARE, ACT_NONE, "compare"},
        {ACT_HELP, ACT_NONE, "help"},
        {ACT_QUIT, ACT_NONE, "quit"},
        {ACT_WALK, ACT_NONE, "walk"},
        {ACT_SEARCH, ACT_NONE, "search"},
        {ACT_FIRST, ACT_LAST, "ends"},
        {ACT_PAGE_PREV, ACT_PAGE_NEXT, "10"},
        {ACT_HEAVY_DEC, ACT_HEAVY_INC, "heavy"},
        {ACT_RECENT_DEC, ACT_RECENT_INC, "recent"},
        {ACT_METRIC, ACT_NONE, "plot"},
        {ACT_PLAY, ACT_NONE, "play"},
};

/* While a list is walked, the keys that move through it. */
static const struct hint walk_hints[] = {
        {ACT_SELECT_PREV, ACT_SELECT_NEXT, "row"},
        {ACT_PAGE_PREV, ACT_PAGE_NEXT, "10 rows"},
        {ACT_FIRST, ACT_LAST, "ends"},
        {ACT_SEARCH, ACT_NONE, "search"},
        {ACT_SEARCH_NEXT, ACT_SEARCH_PREV, "match"},
        {ACT_POSITION, ACT_NONE, "position"},
        {ACT_SORT, ACT_NONE, "sort"},
        {ACT_WALK, ACT_NONE, "next list"},
        {ACT_PREV, ACT_NEXT, "step"},
};

/* How a key looks in hints: arrows and short names. */
static const char *key_label(const struct frame *f, uint32_t key, char *buf, size_t size)
{
	switch (key) {
	case KEYC_RIGHT:
		return f->ascii ? "Right" : "\u2192";
	case KEYC_LEFT:
		return f->ascii ? "Left" : "\u2190";
	case KEYC_UP:
		return f->ascii ? "Up" : "\u2191";
	case KEYC_DOWN:
		return f->ascii ? "Down" : "\u2193";
	case KEYC_HOME:
		return "Home";
	case KEYC_END:
		return "End";
	case KEYC_PGUP:
		return "PgUp";
	case KEYC_PGDN:
		return "PgDn";
	case ',':
		return ","; /* "comma" only where a comma separates keys */
	default:
		return keys_name(key, buf, size);
	}
}

/* The first key bound to ACTION. */
static uint32_t first_key(enum app_action action)
{
	size_t count;
	const struct app_binding *b = app_bindings(&count);
	for (size_t i = 0; i < count; i++)
		if (b[i].action == action)
			return b[i].key;
	return KEYC_NONE;
}

/* HINTS from column X to END, each whole or not at all (a key without
 * its word says nothing). Returns the column after them (END once one did
 * not fit, so that none after it is drawn). */
static int draw_hints(struct frame *f, int x, int y, int end, const struct hint *hints,
                      size_t count)
{
	for (size_t i = 0; i < count; i++) {
		char b1[16], b2[16], text[64];
		const char *k1 = key_label(f, first_key(hints[i].a), b1, sizeof b1);
		const char *k2 = hints[i].b != ACT_NONE
		                         ? key_label(f, first_key(hints[i].b), b2, sizeof b2)
		                         : "";
		snprintf(text, sizeof text, "%s%s%s %s", k1, *k2 ? " " : "", k2, hints[i].label);
		if (x + frame_text_width(text, f->ascii) > end)
			return end;
		x += frame_text(f, x, y, end - x, k1, STYLE_KEY);
		if (*k2) {
			x += frame_text(f, x, y, end - x, " ", STYLE_NORMAL);
			x += frame_text(f, x, y, end - x, k2, STYLE_KEY);
		}
		x += frame_printf(f, x, y, end - x, STYLE_DIM, " %s", hints[i].label) + 2;
	}
	return x;
}

/* What is being typed, and what Enter will do with it. */
static void draw_entry(const struct app *app, struct frame *f, struct rect r)
{
	static const char *const what[] = {
	        [ENTRY_STEP] = "go to step: ",
	        [ENTRY_POSITION] = "go to position: ",
	        [ENTRY_SEARCH] = "search token text: ",
	};
	static const char *const then[] = {
	        [ENTRY_STEP] = "_   Enter jumps, Esc cancels",
	        [ENTRY_POSITION] = "_   Enter selects it in its list, Esc cancels",
	        [ENTRY_SEARCH] = "_   Enter finds it (alone: the last search again), Esc cancels",
	};
	const int x = r.x + 1, w = r.w - 2;
	int used = frame_text(f, x, r.y, w, what[app->entering], STYLE_KEY);
	/* Typed text is drawn as scene text is: whatever the keyboard sent. */
	used += frame_text(f, x + used, r.y, w - used, app->entry, STYLE_KEY);
	frame_text(f, x + used, r.y, w - used, then[app->entering], STYLE_KEY);
}

void panel_hints_draw(const struct view *v, struct frame *f, struct rect r)
{
	const struct app *app = v->app;
	if (app->entering != ENTRY_NONE) {
		draw_entry(app, f, r);
		return;
	}
	if (app->notice[0]) {
		frame_text(f, r.x + 1, r.y, r.w - 2, app->notice, STYLE_WARN);
		return;
	}
	int x = r.x + 1;
	const int end = r.x + r.w - 1;
	if (app->overview) {
		/* The overview takes the arrows for its cursor: its own hints,
		 * each key as the binding table and the keyboard name it. */
		const bool a = f->ascii;
		const struct {
			const char *keys, *label;
		} ov[] = {
		        {a ? "Left Right Up Down" : "\u2190\u2192\u2191\u2193", "cursor"},
		        {"Enter", "open the head"},
		        {"Tab", "head"},
		        {"J K", "layer"},
		        {"o", "close"},
		        {"l h", "step"},
		        {"?", "help"},
		};
		for (size_t i = 0; i < sizeof ov / sizeof ov[0]; i++) {
			char text[64];
			snprintf(text, sizeof text, "%s %s", ov[i].keys, ov[i].label);
			if (x + frame_text_width(text, a) > end)
				break;
			x += frame_text(f, x, r.y, end - x, ov[i].keys, STYLE_KEY);
			x += frame_printf(f, x, r.y, end - x, STYLE_DIM, " %s", ov[i].label) + 2;
		}
		return;
	}
	if (app->walk == WALK_NONE) {
		/* On the lesson path, the keys that walk it come after stepping. */
		static const struct hint path[] = {{ACT_LESSON_PREV, ACT_LESSON_NEXT, "lesson"}};
		const size_t skip = app->lesson >= 0 ? 1 : 0;
		x = draw_hints(f, x, r.y, end, hints, skip);
		x = draw_hints(f, x, r.y, end, path, skip);
		draw_hints(f, x, r.y, end, hints + skip, sizeof hints / sizeof hints[0] - skip);
		return;
	}
	/* Which list, in which order, and where the selection is in it. */
	const struct app_list *l = &app->list;
	char at[32], of[32], buf[128];
	const int place = app->selected >= 0 && app->selected < v->n ? l->index[app->selected] : -1;
	view_format_count(l->len, of);
	if (place >= 0)
		snprintf(buf, sizeof buf, "%s list by %s, row %s of %s  ", policies[l->p]->name,
		         l->sort == SORT_SCORE ? "score" : "position",
		         view_format_count(place + 1, at), of);
	else
		snprintf(buf, sizeof buf, "%s list by %s, %s rows  ", policies[l->p]->name,
		         l->sort == SORT_SCORE ? "score" : "position", of);
	x += frame_text(f, x, r.y, end - x, buf, STYLE_LABEL);
	draw_hints(f, x, r.y, end, walk_hints, sizeof walk_hints / sizeof walk_hints[0]);
}

void view_draw(const struct app *app, struct frame *f)
{
	frame_clear(f);
	if (f->cols < VIEW_MIN_COLS || f->rows < VIEW_MIN_ROWS) {
		draw_too_small(f);
		return;
	}
	struct view_layout lay;
	view_layout(app, f, &lay);
	const struct view *v = &lay.v;
	const int remark_h = app->scene->lesson ? 1 : 0;
	const struct {
		panel_draw_fn *draw;
		struct rect r;
	} panels[] = {
	        {panel_header_draw, lay.header},
	        {panel_cache_draw, lay.cache},
	        {panel_plot_draw, lay.plot},
	        /* The heat rows (or the map) draw their rule, with the legend. */
	        {lay.heat_draw, lay.heat},
	        {panel_lesson_draw, lay.lesson},
	        {panel_story_draw, lay.story},
	        {panel_status_draw, lay.status},
	        {panel_hints_draw, lay.hints},
	};
	const int middle_top = lay.middle.y, middle_end = lay.middle.y + lay.middle.h;
	bool panels_skip_middle = false;
	view_rule(f, 0, 2, f->cols, NULL);
	panel_strip_draw(v, f, (struct rect){0, 2, f->cols, 1});
	/* A lesson whose text is hidden says how to bring it back. */
	view_rule(f, 0, f->rows - 4 - remark_h, f->cols,
	          app->lesson_hidden && (*app->scene->watch || app->scene->n_notes)
	                  ? "e shows what to watch"
	                  : NULL);
	if (app->overview || app->vectors) {
		/* The overview and the vectors take the whole middle, heat
		 * rule included. */
		for (int y = middle_top; y < middle_end; y++)
			frame_fill(f, 0, y, f->cols, ' ', STYLE_NORMAL);
		(app->overview ? panel_overview_draw : panel_vectors_draw)(v, f, lay.middle);
		panels_skip_middle = true;
	}
	for (size_t i = 0; i < sizeof panels / sizeof panels[0]; i++)
		if (panels[i].r.h > 0 && (!panels_skip_middle || panels[i].r.y < middle_top ||
		                          panels[i].r.y >= middle_end))
			panels[i].draw(v, f, panels[i].r);
	if (app->pager)
		panel_pager_draw(v, f, (struct rect){0, 0, f->cols, f->rows});
	if (app->help)
		panel_help_draw(v, f, (struct rect){0, 0, f->cols, f->rows});
}
