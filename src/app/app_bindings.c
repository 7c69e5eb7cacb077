/*
 * app_bindings: the key bindings and the actions' help, from the
 * APP_BINDINGS and APP_ACTIONS tables of app.h, which the help overlay,
 * the hint line and the key handler (app_keys.c) all read.
 */
#include "h2o/app.h"

#include <stdio.h>

#include "h2o/engine.h"
#include "h2o/keys.h"

static const struct app_binding bindings[] = {
#define X(key, action) {key, ACT_##action},
        APP_BINDINGS(X)
#undef X
};

static const char *const action_help[ACT_COUNT] = {[ACT_NONE] = "",
#define X(name, help) [ACT_##name] = help,
                                                   APP_ACTIONS(X)
#undef X
};

const struct app_binding *app_bindings(size_t *count)
{
	*count = sizeof bindings / sizeof bindings[0];
	return bindings;
}

enum app_action app_action_of(uint32_t key)
{
	for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++)
		if (bindings[i].key == key)
			return bindings[i].action;
	return ACT_NONE;
}

const char *app_action_help(enum app_action action)
{
	if (action == ACT_COMPARE) {
		static _Thread_local char help[256];
		char names[192];
		snprintf(help, sizeof help, "%s: %s", action_help[action],
		         app_comparable_names(names, sizeof names));
		return help;
	}
	return action >= 0 && action < ACT_COUNT ? action_help[action] : "";
}

bool app_comparable(enum policy_id p)
{
	return p != POLICY_H2O;
}

const char *app_comparable_names(char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int p = 0; p < POLICY_COUNT && len < size; p++)
		if (app_comparable((enum policy_id)p))
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
			                        policies[p]->name);
	return buf;
}

const char *app_cycle_names(const struct app *app, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int p = 0; p < POLICY_COUNT && len < size; p++)
		if (app_comparable((enum policy_id)p) && (app->policies & ENGINE_POLICY(p)))
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
			                        policies[p]->name);
	return buf;
}

const char *app_compare_help(const struct app *app, char *buf, size_t size)
{
	char names[256];
	snprintf(buf, size, "%s: %s", action_help[ACT_COMPARE],
	         app_cycle_names(app, names, sizeof names));
	return buf;
}
