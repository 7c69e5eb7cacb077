/*
 * app_keys_impl: how a key is applied, shared by the bindings' handlers
 * (app_keys.c) and the modes that take keys before them (app_modes.c).
 * Private to the app stage.
 */
#ifndef H2O_APP_KEYS_IMPL_H
#define H2O_APP_KEYS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app_impl.h"

static inline int app_clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* One key being applied: the key, the action it is bound to, and what it
 * asks app_key to do after (set by the handlers that load or build). */
struct press {
	uint32_t key;
	enum app_action action;
	struct app_intent *want;
};

/* A handler: the key's change to APP, with the table's ARG. It returns
 * APP_ flags, or PASS when a mode leaves the key to what comes after it. */
typedef unsigned key_fn(struct app *app, const struct press *p, int arg);
#define PASS 0u

/* A mode's key: KEY (a key code), or else ACTION (whatever key is bound
 * to it), handled by FN with ARG. */
struct mode_key {
	uint32_t key;
	enum app_action action;
	key_fn *fn;
	int arg;
};

/* The modes that take keys before the bindings do, in order: while one is
 * on, its table's key is its; any other goes to OTHER, which may PASS it
 * on to the next mode and at last to the bindings (app_modes.c). */
struct mode {
	bool (*on)(const struct app *app);
	const struct mode_key *keys;
	size_t count;
	key_fn *other;
};
extern const struct mode app_modes[];
extern const size_t app_mode_count;

/* Start typing WHAT on the hint line, FIRST typed already. */
void app_entry_start(struct app *app, enum app_entry what, const char *first);

/* Show query head HEAD's panels: its timeline, at the step shown. */
void app_show_head(struct app *app, int head);

#endif
