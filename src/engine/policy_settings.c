/*
 * policy_settings: --policy-opt's settings read, checked and listed (see
 * h2o/policy_settings.h).
 */
#include "h2o/policy_settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/scene.h"

const char policy_settings_keys[] = "window=N, kernel=K (odd), pool=mean|max";
const char policy_settings_ada_keys[] = "alloc=kvpress|authors";
const char policy_settings_pyramid_keys[] = "granularity=kv_head|query_head";

/* The names of enum policy_pool, policy_alloc and policy_granularity's
 * values, in order. */
static const char *const pool_names[] = {"mean", "max"};
static const char *const alloc_names[] = {"kvpress", "authors"};
static const char *const granularity_names[] = {"kv_head", "query_head"};

/* The index of VALUE among the two NAMES, or -1. */
static int name_index(const char *value, const char *const names[2])
{
	for (int i = 0; i < 2; i++)
		if (!strcmp(value, names[i]))
			return i;
	return -1;
}

/* S as an integer from LO to HI into *OUT. */
static bool parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	const long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

bool policy_settings_set(struct policy_settings *s, const char *arg, char *err, size_t size)
{
	const char *dot = strchr(arg, '.'), *eq = strchr(arg, '=');
	if (!dot || !eq || eq < dot) {
		snprintf(err, size, "expected POLICY.KEY=VALUE, got '%.60s'", arg);
		return false;
	}
	char name[32];
	snprintf(name, sizeof name, "%.*s", (int)(dot - arg < 31 ? dot - arg : 31), arg);
	const int p = policy_find(name);
	if (p < 0) {
		snprintf(err, size, "'%.60s': no policy '%s'", arg, name);
		return false;
	}
	if (policies[p]->observe_window <= 0) {
		snprintf(err, size,
		         "'%.60s': %s has no settings (snapkv, snapkv-win, pyramidkv, "
		         "pyramidkv-win, adakv and adakv-win take %s)",
		         arg, name, policy_settings_keys);
		return false;
	}
	const size_t key_len = (size_t)(eq - dot - 1);
	const char *value = eq + 1;
	struct policy_setting *set = &s->p[p];
	if (key_len == 6 && !strncmp(dot + 1, "window", 6)) {
		if (!parse_int(value, 1, SCENE_MAX_TOKENS, &set->window)) {
			snprintf(err, size, "'%.60s': the window is an integer from 1 to %d", arg,
			         SCENE_MAX_TOKENS);
			return false;
		}
	} else if (key_len == 6 && !strncmp(dot + 1, "kernel", 6)) {
		int k;
		if (!parse_int(value, 1, POLICY_MAX_KERNEL, &k) || k % 2 == 0) {
			snprintf(err, size, "'%.60s': the kernel is an odd integer from 1 to %d",
			         arg, POLICY_MAX_KERNEL);
			return false;
		}
		set->kernel = k;
	} else if (key_len == 4 && !strncmp(dot + 1, "pool", 4)) {
		const int i = name_index(value, pool_names);
		if (i < 0) {
			snprintf(err, size, "'%.60s': the pool is mean or max", arg);
			return false;
		}
		set->pool = (enum policy_pool)i;
	} else if (key_len == 5 && !strncmp(dot + 1, "alloc", 5) && p == POLICY_ADAKV) {
		const int i = name_index(value, alloc_names);
		if (i < 0) {
			snprintf(err, size, "'%.60s': the alloc is kvpress or authors", arg);
			return false;
		}
		set->alloc = (enum policy_alloc)i;
	} else if (key_len == 11 && !strncmp(dot + 1, "granularity", 11) && p == POLICY_PYRAMIDKV) {
		const int i = name_index(value, granularity_names);
		if (i < 0) {
			snprintf(err, size, "'%.60s': the granularity is kv_head or query_head",
			         arg);
			return false;
		}
		set->granularity = (enum policy_granularity)i;
	} else {
		const char *own = p == POLICY_ADAKV       ? policy_settings_ada_keys
		                  : p == POLICY_PYRAMIDKV ? policy_settings_pyramid_keys
		                                          : NULL;
		snprintf(err, size, "'%.60s': no key '%.*s' (%s takes %s%s%s)", arg, (int)key_len,
		         dot + 1, name, policy_settings_keys, own ? ", " : "", own ? own : "");
		return false;
	}
	return true;
}

bool policy_settings_check_one(const char *policy, const char *key, const char *value, bool number,
                               char *err, size_t size)
{
	const bool wants_number = !strcmp(key, "window") || !strcmp(key, "kernel");
	const bool wants_string =
	        !strcmp(key, "pool") || !strcmp(key, "alloc") || !strcmp(key, "granularity");
	if (policy_find(policy) >= 0 && wants_number && !number) {
		snprintf(err, size, "the %s is a number, got a string", key);
		return false;
	}
	if (policy_find(policy) >= 0 && wants_string && number) {
		snprintf(err, size, "the %s is a string (%s), got a number", key,
		         !strcmp(key, "pool")    ? "mean or max"
		         : !strcmp(key, "alloc") ? "kvpress or authors"
		                                 : "kv_head or query_head");
		return false;
	}
	char arg[128], msg[256];
	snprintf(arg, sizeof arg, "%.40s.%.20s=%.40s", policy, key, value);
	struct policy_settings scratch = {0};
	if (strlen(policy) <= 40 && strlen(key) <= 20 &&
	    policy_settings_set(&scratch, arg, msg, sizeof msg))
		return true;
	if (strlen(policy) > 40 || strlen(key) > 20) {
		snprintf(err, size, "no such setting");
		return false;
	}
	/* The reason without "'ARG': " before it. */
	const char *reason = strstr(msg, "': ");
	snprintf(err, size, "%s", reason ? reason + 3 : msg);
	return false;
}

/* Add KEY=VALUE of policy P as ITEMS[*K] when it fits. */
static void add(struct policy_setting_item *items, int max, int *k, int p, const char *key,
                const char *value, bool number)
{
	if (*k < max) {
		struct policy_setting_item *it = &items[*k];
		snprintf(it->key, sizeof it->key, "%s.%s", policies[p]->name, key);
		snprintf(it->value, sizeof it->value, "%s", value);
		it->number = number;
	}
	(*k)++;
}

int policy_settings_list(const struct policy_settings *s, struct policy_setting_item *items,
                         int max)
{
	int k = 0;
	for (int p = 0; p < POLICY_COUNT; p++) {
		const struct policy_setting *set = &s->p[p];
		char num[16];
		if (set->window > 0 && set->window != policies[p]->observe_window) {
			snprintf(num, sizeof num, "%d", set->window);
			add(items, max, &k, p, "window", num, true);
		}
		if (set->kernel > 0 && set->kernel != 5) {
			snprintf(num, sizeof num, "%d", set->kernel);
			add(items, max, &k, p, "kernel", num, true);
		}
		if (set->pool != POLICY_POOL_MEAN)
			add(items, max, &k, p, "pool", pool_names[set->pool], false);
		if (set->alloc != POLICY_ALLOC_KVPRESS)
			add(items, max, &k, p, "alloc", alloc_names[set->alloc], false);
		if (set->granularity != POLICY_GRANULARITY_KV_HEAD)
			add(items, max, &k, p, "granularity", granularity_names[set->granularity],
			    false);
	}
	return k;
}

const char *policy_settings_line(const struct policy_settings *s, char *buf, size_t size)
{
	struct policy_setting_item items[POLICY_SETTINGS_MAX];
	const int n = policy_settings_list(s, items, POLICY_SETTINGS_MAX);
	size_t at = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && i < POLICY_SETTINGS_MAX && at < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "%s%s=%s", i ? " " : "", items[i].key,
		                       items[i].value);
	return buf;
}
