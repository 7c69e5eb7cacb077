/*
 * app_fixture: what the app's and the view's tests share: a scene loaded
 * from a file, and keys pressed by their --keys names. Include after
 * <cmocka.h>.
 */
#ifndef H2O_TEST_APP_FIXTURE_H
#define H2O_TEST_APP_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "h2o/app.h"
#include "h2o/keys.h"
#include "h2o/scene.h"

/* The scene of PATH, which must load. */
static inline struct scene *load(const char *path)
{
	struct scene *sc = NULL;
	char err[SCENE_ERROR_MAX];
	assert_int_equal(scene_load_file(path, &sc, err), 0);
	return sc;
}

/* The keys of NAMES (comma-separated, as --keys names them) pressed in
 * turn. */
static inline void press(struct app *app, const char *names)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", names);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		const uint32_t key = keys_parse(tok);
		assert_int_not_equal(key, KEYC_NONE);
		app_key(app, key);
	}
}

#endif
