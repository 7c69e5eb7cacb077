/*
 * view_help: the help overlay, in pages (APP_HELP_PAGES) the keys that
 * step turn.
 *
 * Page 1 lists every key from the binding table (design §7), in one column
 * or two, so that all of them fit at 80x24. Page 2 says how to read the
 * screen: a legend of the panels, the marks, and the scene's "watch"
 * paragraph (a lesson's "what to watch") wrapped by words. Pages 3 and 4
 * define every word and figure the screen shows, one plain sentence each
 * (tests/glossary_test.sh checks that none is missing). A page taller than
 * the screen ends in an ellipsis. The paragraph is scene text, so it is
 * drawn only through frame_text and measured only with frame_text_width;
 * this file must never write scene bytes any other way.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "h2o/keys.h"
#include "view_panels.h"

/* The keys of ACTION as --keys names ("right l space"); digits as "0-9",
 * and the two whose --keys names are not what the keyboard says as they
 * are written there (Shift-Tab, the comma). */
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
		const char *shown = b[i].key == KEYC_BTAB ? "Shift-Tab"
		                    : b[i].key == ','     ? ","
		                                          : keys_name(b[i].key, name, sizeof name);
		len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " " : "", shown);
		if (len >= size)
			break;
	}
}

static const char *const legend[] = {
        "Positions count from 0; steps and heads from 1 (step t appends position t-1)",
        "HEAVY: old tokens kept for their accumulated attention (score)",
        "RECENT: the newest tokens, always kept; EVICTED: removed for good",
        "+attn: attention this step; score = old score + attention",
        /* One sentence, in parentheses so that its two literals read as one. */
        ("Mouse: a click selects what is under it (a cache row, a map cell, a word of the "
         "model's text, an overview's head) or goes to a heat cell's step; the wheel steps."),
};

/* The words of pages 3 to 5: every label and figure the screen shows. */
struct word {
	const char *term, *meaning;
};

static const struct word words_caches[] = {
        {"H2O CACHE", "what H2O keeps: its heavy and recent tokens, within the budget."},
        {"FULL CACHE", "a cache that never evicts: the exact attention H2O is measured against."},
        {"budget", "heavy + recent: the most tokens H2O may hold at once."},
        {"HEAVY", "old tokens kept because their score is among the largest."},
        {"RECENT", "the newest tokens, always kept, whatever their score."},
        {"EVICTED", "tokens removed for good, with the step that removed them."},
        {"score", "the attention a token has received, added up over every step so far."},
        {"+attn", "the attention the token got at this step: old score + attn = new score."},
        {"kv mean", "grouped heads: scores add the mean attention of the kv group."},
        {"cut-off", "the lowest score kept as heavy; an old token below it goes."},
        {"bars to", "the score a full-length bar stands for: every bar uses that scale."},
        {"sinks", "StreamingLLM's first tokens, kept for good beside its recent window."},
        {"shared", "beside another policy: the tokens both it and H2O hold."},
        {"window", "a policy that keeps only the newest tokens (c compares it with H2O)."},
        {"streaming", "StreamingLLM: a few sinks plus a recent window."},
        {"tova", "TOVA: evicts the token this step's query attends to least."},
};

static const struct word words_figures[] = {
        {"step t/n", "step t fed the token at position t - 1; step 0: the empty cache."},
        {"token", "in the header, the position and text of this step's new token."},
        {"tokens", "how many tokens a cache holds after this step's eviction."},
        {"KV", "the numbers a cache stores: a key and a value row of dim a token."},
        {"dim", "the length of one key or value row."},
        {"H2O holds", "H2O's KV numbers as a share of the full cache's."},
        {"out err", "how far H2O's output is from the full cache's (0 is exact); short: err."},
        {"cos", "cosine of H2O's output against the full cache's; 1: same direction."},
        {"recall", "the full cache's attention that falls on tokens H2O holds (1: none lost); "
                   "short: rec."},
};

/* The strip on the rule, the heat rows, heads and the lesson's words. */
static const struct word words_rows[] = {
        {"strip", "(a) each policy's recall at this step, /ppl its perplexity so far; [ ] the "
                  "one c compares; +N not shown. win window, strm streaming, knrm knorm, snap "
                  "snapkv, snpw snapkv-win, pyr pyramidkv, pyrw pyramidkv-win, ada adakv, adaw "
                  "adakv-win, obs observed, obsw observed-win, rand random, kdif keydiff, exp "
                  "expected."},
        {"rec%", "the strip when tight: recall in percent; fu full, wi window, st streaming, "
                 "tv tova, kn knorm, sn snapkv, sw snapkv-win, py pyramidkv, pw pyramidkv-win, "
                 "ad adakv, aw adakv-win, ob observed, ow observed-win, rn random, kd keydiff, ex "
                 "expected."},
        {"attention", "the heat rows: a row per step, a column per position."},
        {"log scale", "heat glyphs step by tenfold weights: <.003, <.03, <.3, and >=.3."},
        {"head", "a query head: its own attention and H2O cache; Tab picks one."},
        {"layer", "a layer of heads: J and K pick one; o shows a row per layer."},
        {"kv", "a key/value head, shared by a group of query heads."},
        {"prompt", "read whole, no eviction; its end cuts to budget; then decoding."},
        {"every N", "with --interval N: caches grow, then cut back to the budget."},
        {"watch", "\"what to watch\": a lesson's words on this scene (e hides them)."},
        {"lesson", "the scenes of the lesson path, in order: . and , walk it."},
};

/* Marks and the model's words; a mark's term in ASCII after the NUL. */
static const struct word words_marks[] = {
        {"\u00bb\0*", "before a panel's title: the list being walked (w); before a row: "
                      "the selected token (j k), which the inspector tells."},
        {"\u25b8\0>", "this step's new token."},
        {"\u2717\0x", "a token evicted at this step."},
        {"\u2191\0^", "a token that moved from recent to heavy at this step."},
        {"\u2026\0~", "a list's tokens not shown: how many, and which."},
        {"\u25c20.86 0.03\u25b8\0<0.86 0.03>",
         "beside the heat rows: the attention that row gave the positions left or right "
         "of the columns shown, summed."},
        {"\u25bc\0v", "the step shown, over a plot or a sparkline; in the model's text, a "
                      "token H2O made e times (1 nat) less likely."},
        {"q k v", "(v) a token's query, key and value rows; q.k a query times a key, "
                  "logit = scale x q.k, weight = the softmax of the logits, out = the "
                  "weights times the v rows, added up."},
        {"softmax", "turns a step's scores into weights that share 1 among the tokens "
                    "a cache holds."},
        {"renormalise", "(H2O renormalises) a cache that holds fewer tokens shares 1 among "
                        "fewer: each weight is larger than the full cache's."},
        {"nats", "log-probability in natural units: 1 nat is a factor of e."},
        {"perplexity", "the model's mean surprise at each next token, as e^(mean nats); "
                       "lower is better: ppl."},
};

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

/* Rows of the text pages: a word and its meaning with a hanging indent,
 * or (TERM NULL) a line of text wrapped by words. Counts rows from Y when
 * F is NULL; else draws them above BOTTOM, and returns a row past BOTTOM
 * when something did not fit. TERM_W is the words' column; the policy
 * pages' is as wide as the longest policy name, so none is cut. */
#define TERM_W        11
#define POLICY_TERM_W 13

static int put_term(struct frame *f, bool ascii, int x, int y, int bottom, int w, int term_w,
                    const char *term, const char *text, enum frame_style style)
{
	char line[SCENE_MAX_WATCH_BYTES + 1];
	const int tx = term ? x + term_w + 1 : x, tw = term ? w - term_w - 1 : w;
	if (f && term && y < bottom)
		frame_text(f, x, y, term_w, term, STYLE_KEY);
	bool any = false;
	while (view_wrap_next(&text, tw, ascii, line, sizeof line)) {
		if (f && y < bottom)
			frame_text(f, tx, y, tw, line, style);
		y++;
		any = true;
	}
	return any ? y : y + 1;
}

static int put_wrapped(struct frame *f, bool ascii, int x, int y, int bottom, int w,
                       const char *term, const char *text, enum frame_style style)
{
	return put_term(f, ascii, x, y, bottom, w, TERM_W, term, text, style);
}

/* The policies c goes through on this scene, in a sentence (PREFIX, then
 * every name). */
static void cycle_text(const struct app *app, const char *prefix, char *buf, size_t size)
{
	char names[256];
	snprintf(buf, size, "%s%s", prefix, app_cycle_names(app, names, sizeof names));
}

static int lay_out_page(const struct view *v, struct frame *f, bool ascii, int page, int x, int y,
                        int bottom, int w)
{
	if (page == 1) {
		for (size_t i = 0; i < sizeof legend / sizeof legend[0]; i++)
			y = put_wrapped(f, ascii, x, y, bottom, w, NULL, legend[i], STYLE_DIM);
		/* The whole cycle, wrapped: the keys' page may have no room. */
		char cycle[320];
		cycle_text(v->app, "c puts each policy beside H2O in turn: ", cycle, sizeof cycle);
		y = put_wrapped(f, ascii, x, y, bottom, w, NULL, cycle, STYLE_DIM);
		if (f && y < bottom)
			draw_marks(f, x, y, x + w);
		y += 2;
		const char *watch = v->sc->watch;
		if (f && y < bottom)
			frame_text(f, x, y, w, "what to watch", STYLE_LABEL);
		y++;
		return put_wrapped(f, ascii, x, y, bottom, w, NULL,
		                   *watch ? watch : "This scene has no lesson text.", STYLE_NORMAL);
	}
	if (page >= 6) {
		/* Every policy, from the table: its name and what it keeps, on
		 * two pages (the second from PyramidKV on) so that each fits
		 * 80x24. */
		const int first = page == 6 ? 0 : POLICY_PYRAMIDKV;
		const int end = page == 6 ? POLICY_PYRAMIDKV : POLICY_COUNT;
		for (int p = first; p < end; p++)
			y = put_term(f, ascii, x, y, bottom, w, POLICY_TERM_W, policies[p]->name,
			             policies[p]->about, STYLE_NORMAL);
		return y;
	}
	const struct word *words = page == 2   ? words_caches
	                           : page == 3 ? words_figures
	                           : page == 4 ? words_rows
	                                       : words_marks;
	const size_t count = page == 2   ? sizeof words_caches / sizeof words_caches[0]
	                     : page == 3 ? sizeof words_figures / sizeof words_figures[0]
	                     : page == 4 ? sizeof words_rows / sizeof words_rows[0]
	                                 : sizeof words_marks / sizeof words_marks[0];
	for (size_t i = 0; i < count; i++) {
		/* A mark's term has its ASCII form after a NUL. */
		const char *term = words[i].term;
		if (ascii && (unsigned char)term[0] >= 0x80)
			term += strlen(term) + 1;
		y = put_wrapped(f, ascii, x, y, bottom, w, term, words[i].meaning, STYLE_NORMAL);
	}
	return y;
}

static void draw_box(struct frame *f, int x0, int y0, int w, int h, const char *title)
{
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
	frame_text(f, x0 + 2, y0, w - 4, title, STYLE_LABEL);
}

static const char *const page_names[APP_HELP_PAGES] = {"keys",
                                                       "reading the screen",
                                                       "words: the caches",
                                                       "words: the figures",
                                                       "words: rows, heads",
                                                       "words: the marks",
                                                       "words: policies",
                                                       "words: more policies"};

/* The box's title: the page, and the keys that turn pages. */
static void page_title(int page, char *buf, size_t size)
{
	snprintf(buf, size, " help %d/%d: %s (%s, q quits, other keys close) ", page + 1,
	         APP_HELP_PAGES, page_names[page],
	         page + 1 < APP_HELP_PAGES ? "Space: next page" : "Space closes");
}

static void draw_text_page(const struct view *v, struct frame *f, struct rect r, int page)
{
	const int w = r.w < 100 ? r.w : 100;
	const int rows = lay_out_page(v, NULL, f->ascii, page, 0, 0, 0, w - 4);
	const int h = rows + 2 < r.h ? rows + 2 : r.h;
	const int x0 = r.x + (r.w - w) / 2, y0 = r.y + (r.h - h) / 2;
	char title[128];
	page_title(page, title, sizeof title);
	draw_box(f, x0, y0, w, h, title);
	const int bottom = y0 + h - 1;
	if (lay_out_page(v, f, f->ascii, page, x0 + 2, y0 + 1, bottom, w - 4) > bottom)
		frame_put(f, x0 + w - 3, bottom - 1, frame_glyph(f, GLYPH_ELLIPSIS), STYLE_DIM);
}

void panel_help_draw(const struct view *v, struct frame *f, struct rect r)
{
	const int page = v->app->help_page;
	if (page > 0 && page < APP_HELP_PAGES) {
		draw_text_page(v, f, r, page);
		return;
	}
	/* The keys, an entry each; in two columns (a small screen), the
	 * actions that come in pairs share an entry, so that every key is
	 * listed at 80x24. */
	static const struct {
		enum app_action first, second;
		const char *help;
	} pairs[] = {
	        {ACT_FASTER, ACT_SLOWER, "play faster / slower"},
	        {ACT_SEARCH_NEXT, ACT_SEARCH_PREV, "next / previous match"},
	        {ACT_HEAD_NEXT, ACT_HEAD_PREV, "next / previous head"},
	        {ACT_LAYER_NEXT, ACT_LAYER_PREV, "next / previous layer"},
	        {ACT_LESSON_NEXT, ACT_LESSON_PREV, "next / previous lesson"},
	};
	const int n_actions = ACT_COUNT - 1;
	/* One column of keys when they fit, else two in a wider box: every
	 * key is always listed. */
	int cols = 1, w = r.w < 76 ? r.w : 76;
	if (n_actions + 3 > r.h) {
		cols = 2;
		w = r.w < 140 ? r.w : 140;
	}
	struct {
		char keys[64];
		const char *help;
	} entry[ACT_COUNT];
	int n = 0;
	char compare[320];
	for (int a = 1; a < ACT_COUNT; a++) {
		/* c's words name the policies it cycles through here. */
		const char *help = a == ACT_COMPARE
		                           ? app_compare_help(v->app, compare, sizeof compare)
		                           : app_action_help((enum app_action)a);
		bool second = false;
		char more[32] = "";
		for (size_t i = 0; cols > 1 && i < sizeof pairs / sizeof pairs[0]; i++) {
			second = second || (int)pairs[i].second == a;
			if ((int)pairs[i].first == a) {
				keys_of(pairs[i].second, more, sizeof more);
				help = pairs[i].help;
			}
		}
		if (second)
			continue;
		keys_of((enum app_action)a, entry[n].keys, sizeof entry[n].keys);
		if (more[0]) {
			const size_t len = strlen(entry[n].keys);
			snprintf(entry[n].keys + len, sizeof entry[n].keys - len, " %s", more);
		}
		entry[n++].help = help;
	}
	const int key_rows = (n + cols - 1) / cols;
	/* Below the keys, the policies c goes through, wrapped by words; when
	 * the screen has no room for all of its lines, one line that says how
	 * many there are and where they are listed (page 2). */
	char cycle[320];
	cycle_text(v->app, "c compares H2O with each in turn: ", cycle, sizeof cycle);
	int cycle_rows = view_wrap_count(cycle, w - 4, f->ascii);
	if (key_rows + 2 + cycle_rows > r.h) {
		char names[256];
		int count = 1;
		for (const char *c = app_cycle_names(v->app, names, sizeof names); *c; c++)
			count += *c == ',';
		snprintf(cycle, sizeof cycle,
		         "c compares H2O with each of %d policies in turn (help page 2 lists them)",
		         count);
		cycle_rows = view_wrap_count(cycle, w - 4, f->ascii);
	}
	/* Borders, keys and the policies c goes through. */
	const int want_h = key_rows + 2 + cycle_rows;
	const int h = want_h < r.h ? want_h : r.h;
	const int x0 = r.x + (r.w - w) / 2, y0 = r.y + (r.h - h) / 2;
	char title[128];
	page_title(0, title, sizeof title);
	draw_box(f, x0, y0, w, h, title);
	/* Two columns keep a gap of two between them, and each its keys as
	 * wide as its widest list of them. */
	const int col_w = w - 4, bottom = y0 + h - 1;
	int keys_w[2] = {cols == 1 ? 20 : 0, 0};
	for (int e = 0; e < n && cols > 1; e++) {
		const int col = e / key_rows, kw = frame_text_width(entry[e].keys, f->ascii);
		keys_w[col] = kw > keys_w[col] ? (kw < 20 ? kw : 20) : keys_w[col];
	}
	/* The texts share what the keys leave, equally. */
	const int text_w =
	        cols == 1 ? col_w - keys_w[0] - 1 : (w - 4 - 2 - keys_w[0] - keys_w[1] - 2) / 2;
	for (int e = 0; e < n; e++) {
		const int col = e / key_rows, y = y0 + 1 + e % key_rows;
		const int x = x0 + 2 + (col ? keys_w[0] + 1 + text_w + 2 : 0);
		if (y >= bottom)
			continue;
		frame_text(f, x, y, keys_w[col], entry[e].keys, STYLE_KEY);
		frame_text(f, x + keys_w[col] + 1, y, text_w, entry[e].help, STYLE_NORMAL);
	}
	/* The policies by name, whole: a key's text may be cut to its column.
	 * With no row left under the keys, the short sentence goes on the
	 * bottom border, as the title goes on the top one. */
	if (y0 + 1 + key_rows < bottom) {
		put_wrapped(f, f->ascii, x0 + 2, y0 + 1 + key_rows, bottom, w - 4, NULL, cycle,
		            STYLE_DIM);
		return;
	}
	char border[336];
	snprintf(border, sizeof border, " %s ", cycle);
	frame_text(f, x0 + 1, bottom, w - 2, border, STYLE_DIM);
}
