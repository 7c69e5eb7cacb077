/*
 * headless: frames to text.
 */
#include "headless.h"

#include <stdlib.h>
#include <string.h>

#include "h2o/app.h"
#include "h2o/frame.h"
#include "h2o/keys.h"
#include "h2o/scene.h"
#include "h2o/view.h"

/* One item of a --keys list: a key, or a mouse event (KEY is then
 * KEYC_NONE and MOUSE true), or neither (a bad name). */
struct item {
	uint32_t key;
	bool mouse;
	struct key_mouse m;
};

/* Call FN for each comma-separated item of LIST; stops at the first
 * non-zero return and returns it. */
static int each_key(const char *list, int (*fn)(const char *name, const struct item *it, void *ctx),
                    void *ctx)
{
	const char *p = list;
	for (;;) {
		const char *comma = strchr(p, ',');
		const size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char name[32];
		struct item it = {.key = KEYC_NONE};
		if (len > 0 && len < sizeof name) {
			memcpy(name, p, len);
			name[len] = '\0';
			it.key = keys_parse(name);
			if (it.key == KEYC_NONE)
				it.mouse = keys_parse_mouse(name, &it.m);
		} else {
			snprintf(name, sizeof name, "%.*s", (int)(len < 24 ? len : 24), p);
		}
		int rc = fn(name, &it, ctx);
		if (rc)
			return rc;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

struct check {
	char *err;
	size_t size;
};

static int check_one(const char *name, const struct item *it, void *ctx)
{
	struct check *c = ctx;
	if (it->key != KEYC_NONE || it->mouse)
		return 0;
	char names[256];
	if (name[0] == '\0')
		snprintf(c->err, c->size, "--keys: empty key name in the list");
	else
		snprintf(c->err, c->size,
		         "--keys: unknown key \"%s\" (the mouse: " KEYS_MOUSE_NAMES
		         "; a printable character, or one of %s)",
		         name, keys_names(names, sizeof names));
	return -1;
}

int headless_check_keys(const char *list, char *err, size_t size)
{
	struct check c = {err, size};
	return each_key(list, check_one, &c);
}

struct run {
	struct app *app;
	struct frame *f;
	FILE *out;
	int failed;
};

static int print_frame(struct run *r, const char *after)
{
	view_draw(r->app, r->f);
	char *text = frame_to_text(r->f);
	if (!text)
		return -1;
	if (after)
		fprintf(r->out, "--- step %d/%d after %s ---\n", r->app->step, r->app->scene->n,
		        after);
	else
		fprintf(r->out, "--- step %d/%d ---\n", r->app->step, r->app->scene->n);
	fputs(text, r->out);
	free(text);
	return ferror(r->out) ? -1 : 0;
}

static int run_one(const char *name, const struct item *it, void *ctx)
{
	struct run *r = ctx;
	unsigned flags;
	if (it->mouse) {
		/* What the last frame showed under the mouse, as the terminal
		 * asks the view (a place counts from 1; none: nowhere). */
		const struct app_spot at = view_pick(r->app, r->f, it->m.row - 1, it->m.col - 1);
		flags = app_mouse(r->app, it->m.what, &at);
	} else {
		flags = app_key(r->app, it->key);
	}
	if (flags & APP_QUIT)
		return 1;
	return print_frame(r, name);
}

int headless_run(struct app *app, int cols, int rows, bool ascii, const char *keys, FILE *out)
{
	struct run r = {.app = app, .f = frame_new(cols, rows, ascii), .out = out};
	if (!r.f)
		return -1;
	app_set_screen(app, cols, rows, ascii);
	int rc = 0;
	if (keys) {
		rc = print_frame(&r, NULL);
		if (rc == 0)
			rc = each_key(keys, run_one, &r);
		if (rc > 0)
			rc = 0; /* a key quit */
	} else {
		for (int t = 0; t <= app->scene->n && rc == 0; t++) {
			app_goto(app, t);
			rc = print_frame(&r, NULL);
		}
	}
	frame_free(r.f);
	return rc;
}
