/*
 * policy_settings: the settings researchers vary (struct policy_settings,
 * h2o/policy.h), read from "POLICY.KEY=VALUE" (--policy-opt) and printed
 * beside every table that used them. The SnapKV-scored policies (snapkv,
 * snapkv-win, pyramidkv, pyramidkv-win, adakv, adakv-win) take
 *
 *   window=N   the observation window, 1 or more (kvpress: 64)
 *   kernel=K   the pooling kernel, odd, 1 to 255 (kvpress: 5)
 *   pool=mean|max  the pooling (kvpress: mean; KVCache-Factory: either)
 *
 * and adakv also
 *
 *   alloc=kvpress|authors  how a layer's budget is split among its kv
 *                          heads: kvpress' AdaKVPress, or FFY0/AdaKV's
 *
 * and pyramidkv also
 *
 *   granularity=kv_head|query_head  a cache per key/value head from the
 *                          group's mean scores (KVCache-Factory's opt-in
 *                          kv_head), or per query head from its own
 *                          (its default query_head, the keys repeated)
 *
 * docs/policies.md names the upstream each default follows. Nothing here
 * allocates or does I/O.
 */
#ifndef H2O_POLICY_SETTINGS_H
#define H2O_POLICY_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "h2o/policy.h"

/* The largest pooling kernel. */
#define POLICY_MAX_KERNEL 255

/* The keys, for --help: "window=N, kernel=K (odd), pool=mean|max". */
extern const char policy_settings_keys[];

/* AdaKV's own: "alloc=kvpress|authors". */
extern const char policy_settings_ada_keys[];

/* PyramidKV's own: "granularity=kv_head|query_head". */
extern const char policy_settings_pyramid_keys[];

/* Read ARG, "POLICY.KEY=VALUE", into S (a key given twice: the last).
 * Returns true, or false with the reason, one line without the option's
 * name, in ERR. */
bool policy_settings_set(struct policy_settings *s, const char *arg, char *err, size_t size);

/* One setting of a scene's "policy_settings" (scene_options.check_setting):
 * POLICY's KEY with VALUE, from a JSON number (NUMBER) or string. window
 * and kernel take numbers, pool, alloc and granularity strings. Returns true, or false
 * with the reason, one line without the setting's name, in ERR. */
bool policy_settings_check_one(const char *policy, const char *key, const char *value, bool number,
                               char *err, size_t size);

/* One setting that differs from its policy's default. */
struct policy_setting_item {
	char key[48];   /* "snapkv.window" */
	char value[16]; /* "8", "max", "query_head" */
	bool number;    /* VALUE is a number (JSON writes it bare) */
};

/* The settings of S that differ from the defaults, in policy order and
 * then window, kernel, pool, alloc, granularity, into ITEMS (at most MAX); returns how many
 * there are (more than MAX when they did not fit). */
int policy_settings_list(const struct policy_settings *s, struct policy_setting_item *items,
                         int max);

/* The most items policy_settings_list gives. */
#define POLICY_SETTINGS_MAX (5 * POLICY_COUNT)

/* Those settings as one line, "snapkv.window=8 snapkv.pool=max", into BUF
 * ("" for none); returns BUF. */
const char *policy_settings_line(const struct policy_settings *s, char *buf, size_t size);

#endif
