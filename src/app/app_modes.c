/*
 * app_modes: the modes that take keys before the bindings do (typing a
 * number or a search on the hint line, the pager, the heads overview, the
 * help pages), each a small table of its keys (app_keys_impl.h).
 */
#include <stdio.h>
#include <string.h>

#include "h2o/heads.h"
#include "h2o/keys.h"
#include "h2o/scene.h"
#include "h2o/text.h"
#include "h2o/timeline.h"
#include "app_keys_impl.h"

void app_show_head(struct app *app, int head)
{
	app->head = head;
	app->tl = app->tls[head];
	if (app->pool)
		timeline_pool_prefer(app->pool, head);
	/* Its build may be behind the step shown: wait for it there. */
	app_go(app, app->goal >= 0 ? app->goal : app->step);
}

/* --- Typing a step, a position or a search on the hint line. --- */

void app_entry_start(struct app *app, enum app_entry what, const char *first)
{
	app->entering = what;
	snprintf(app->entry, sizeof app->entry, "%s", first);
}

/* The number typed so far. */
static long entry_number(const struct app *app)
{
	long want = 0;
	for (const char *c = app->entry; *c; c++)
		want = want * 10 + (*c - '0');
	return want;
}

static unsigned entry_done(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	const enum app_entry what = app->entering;
	app->entering = ENTRY_NONE;
	if (what == ENTRY_SEARCH) {
		/* Enter alone searches again for the last text. */
		if (app->entry[0])
			snprintf(app->query, sizeof app->query, "%s", app->entry);
		if (app->query[0])
			app_search(app, +1);
		return APP_REDRAW;
	}
	if (!app->entry[0])
		return APP_REDRAW;
	const long want = entry_number(app);
	if (what == ENTRY_POSITION) {
		app_go_position(app, want);
		return APP_REDRAW;
	}
	if (want > app->scene->n)
		snprintf(app->notice, sizeof app->notice, "no step %ld: the last step is %d", want,
		         app->scene->n);
	app_go(app, (int)(want > app->scene->n ? app->scene->n : want));
	return APP_REDRAW;
}

static unsigned entry_erase(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	size_t len = strlen(app->entry);
	if (len == 0) {
		app->entering = ENTRY_NONE;
		return APP_REDRAW;
	}
	/* A whole character: back over its continuation bytes. */
	while (len > 1 && ((unsigned char)app->entry[len - 1] & 0xC0) == 0x80)
		len--;
	app->entry[len - 1] = '\0';
	return APP_REDRAW;
}

static unsigned entry_cancel(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	app->entering = ENTRY_NONE;
	return APP_REDRAW;
}

/* Any other key: a character the entry takes is typed; any other ends
 * the entry and does what it always does. */
static unsigned entry_type(struct app *app, const struct press *p, int arg)
{
	(void)arg;
	const uint32_t key = p->key;
	const size_t len = strlen(app->entry);
	const bool text = app->entering == ENTRY_SEARCH;
	/* Text takes printable characters (no controls, no surrogates). */
	const bool printable = key >= ' ' && key != 0x7F && (key < 0x80 || key >= 0xA0) &&
	                       (key < 0xD800 || key > 0xDFFF) && key < KEYC_BASE;
	if (!(text ? printable : key >= '0' && key <= '9')) {
		app->entering = ENTRY_NONE;
		return PASS;
	}
	char bytes[4];
	/* Numbers up to nine digits; text while its bytes fit. */
	const size_t add = text ? text_encode(key, bytes) : 1;
	if (!text)
		bytes[0] = (char)key;
	if (len + add < sizeof app->entry && (text || len < 9)) {
		memcpy(app->entry + len, bytes, add);
		app->entry[len + add] = '\0';
	}
	return APP_REDRAW;
}

static const struct mode_key entry_keys[] = {
        {KEYC_BACKSPACE, ACT_NONE, entry_erase, 0},
        {KEYC_ENTER, ACT_NONE, entry_done, 0},
        {KEYC_ESC, ACT_NONE, entry_cancel, 0},
};

/* --- The heads overview: the arrows move its cursor over the grid (rows
 * are layers, columns the heads of a layer), Enter opens the head under
 * it. --- */

static unsigned overview_head(struct app *app, const struct press *p, int by)
{
	(void)p;
	const int per = heads_per_layer(app->scene);
	const int layer = app->cursor / per, h = app_clamp(app->cursor % per + by, 0, per - 1);
	app->cursor = layer * per + h;
	return APP_REDRAW;
}

static unsigned overview_layer(struct app *app, const struct press *p, int by)
{
	(void)p;
	const int per = heads_per_layer(app->scene), layers = app->heads / per;
	const int layer = app_clamp(app->cursor / per + by, 0, layers - 1);
	app->cursor = layer * per + app->cursor % per;
	return APP_REDRAW;
}

static unsigned overview_open(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	app->overview = false;
	app_show_head(app, app->cursor);
	return APP_REDRAW;
}

static unsigned pass(struct app *app, const struct press *p, int arg)
{
	(void)app, (void)p, (void)arg;
	return PASS;
}

static const struct mode_key overview_keys[] = {
        {KEYC_LEFT, ACT_NONE, overview_head, -1}, {KEYC_RIGHT, ACT_NONE, overview_head, +1},
        {KEYC_UP, ACT_NONE, overview_layer, -1},  {KEYC_DOWN, ACT_NONE, overview_layer, +1},
        {KEYC_ENTER, ACT_NONE, overview_open, 0},
};

/* --- Help is modal: the keys that step turn its pages (on past the last
 * closes it), q quits, any other key closes it. --- */

static unsigned help_page(struct app *app, const struct press *p, int by)
{
	(void)p;
	if (by > 0)
		app->help = ++app->help_page < APP_HELP_PAGES;
	else
		app->help_page -= app->help_page > 0;
	return APP_REDRAW;
}

static unsigned help_close(struct app *app, const struct press *p, int arg)
{
	(void)arg;
	app->help = false;
	return p->action == ACT_QUIT ? APP_QUIT : APP_REDRAW;
}

static const struct mode_key help_keys[] = {
        {0, ACT_NEXT, help_page, +1},        {0, ACT_PAGE_NEXT, help_page, +1},
        {0, ACT_SELECT_NEXT, help_page, +1}, {0, ACT_PREV, help_page, -1},
        {0, ACT_PAGE_PREV, help_page, -1},   {0, ACT_SELECT_PREV, help_page, -1},
};

static bool entering(const struct app *app)
{
	return app->entering != ENTRY_NONE;
}

/* The pager takes every key but the help's (app_pager.c). */
static bool pager_shown(const struct app *app)
{
	return app->pager && !app->help;
}

static unsigned pager_key(struct app *app, const struct press *p, int arg)
{
	(void)arg;
	return app_pager_key(app, p->key, p->action);
}

static bool overview_shown(const struct app *app)
{
	return app->overview && !app->help;
}

static bool help_shown(const struct app *app)
{
	return app->help;
}

const struct mode app_modes[] = {
        {entering, entry_keys, sizeof entry_keys / sizeof entry_keys[0], entry_type},
        {pager_shown, NULL, 0, pager_key},
        {overview_shown, overview_keys, sizeof overview_keys / sizeof overview_keys[0], pass},
        {help_shown, help_keys, sizeof help_keys / sizeof help_keys[0], help_close},
};
const size_t app_mode_count = sizeof app_modes / sizeof app_modes[0];
