/*
 * test_lessons: reading the lesson path (src/scene/lessons.c).
 *
 * Each case writes a folder of its own under a temporary directory: a
 * lessons.txt, the scenes it names (empty files: the list never loads them)
 * and, for the last lesson's case, a second folder beside it that the list
 * reaches through "..", as scenes/lessons.txt reaches models/stories260K/.
 *
 * Usage: test_lessons (any arguments are ignored).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h2o/lessons.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/h2o-lessons-XXXXXX");
	assert_non_null(mkdtemp(root));
	char dir[128];
	snprintf(dir, sizeof dir, "%s/scenes", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof dir, "%s/models", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	put("scenes/one.json", "{}");
	put("scenes/two.json", "{}");
	put("models/last.json", "{}");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	const char *files[] = {"scenes/one.json", "scenes/two.json", "scenes/lessons.txt",
	                       "models/last.json", "models/lessons.txt"};
	char path[256];
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(path, sizeof path, "%s/%s", root, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/scenes", root);
	rmdir(path);
	snprintf(path, sizeof path, "%s/models", root);
	rmdir(path);
	rmdir(root);
	return 0;
}

static void at(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "%s/%s", root, rel);
}

/* Comments, blank lines and white space around a name are not lessons; a
 * name may climb out of the folder; each is found by the file it names. */
static void test_path_in_order(void **state)
{
	(void)state;
	put("scenes/lessons.txt", "# the path\n\n  one.json \ntwo.json\r\n../models/last.json\n");
	char dir[128], err[256];
	at(dir, sizeof dir, "scenes");
	struct lessons *l;
	assert_int_equal(lessons_load(dir, &l, err, sizeof err), 0);
	assert_int_equal(l->count, 3);
	assert_string_equal(l->file[0], "one.json");
	assert_string_equal(l->file[1], "two.json");
	assert_string_equal(l->file[2], "../models/last.json");

	char path[256], buf[256];
	at(path, sizeof path, "models/last.json");
	assert_int_equal(lessons_find(l, path), 2);
	/* The same file by another name. */
	at(path, sizeof path, "scenes/../scenes/./two.json");
	assert_int_equal(lessons_find(l, path), 1);
	at(path, sizeof path, "scenes/lessons.txt");
	assert_int_equal(lessons_find(l, path), -1);
	at(path, sizeof path, "scenes/missing.json");
	assert_int_equal(lessons_find(l, path), -1);
	assert_string_equal(lessons_path(l, 2, buf, sizeof buf),
	                    strcat(strcpy(path, dir), "/../models/last.json"));
	lessons_free(l);
}

/* A scene of the folder finds its list there; the last lesson, whose own
 * folder has no list, finds it in the program's scenes folder (HOME). */
static void test_of_scene(void **state)
{
	(void)state;
	put("scenes/lessons.txt", "one.json\ntwo.json\n../models/last.json\n");
	char home[128], path[256];
	at(home, sizeof home, "scenes");
	int index = -1;
	at(path, sizeof path, "scenes/two.json");
	struct lessons *l = lessons_of_scene(path, NULL, &index);
	assert_non_null(l);
	assert_int_equal(index, 1);
	lessons_free(l);

	at(path, sizeof path, "models/last.json");
	assert_null(lessons_of_scene(path, NULL, &index));
	l = lessons_of_scene(path, home, &index);
	assert_non_null(l);
	assert_int_equal(index, 2);
	lessons_free(l);

	/* A list of its own folder that does not hold it: HOME's. */
	put("models/lessons.txt", "other.json\n");
	l = lessons_of_scene(path, home, &index);
	assert_non_null(l);
	assert_int_equal(index, 2);
	lessons_free(l);
}

/* Every bad list is refused with the list's path and what is wrong. */
static void test_bad_lists(void **state)
{
	(void)state;
	const struct {
		const char *text, *what;
	} bad[] = {
	        {"one.json\n/etc/passwd\n", "not a scene's path relative to this folder"},
	        {"one.json\nmodels/\n", "not a scene's path relative to this folder"},
	        {"one\x01.json\n", "not a scene's path relative to this folder"},
	        {"# nothing\n\n", "lists no scene"},
	};
	char dir[128], err[256];
	at(dir, sizeof dir, "scenes");
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		put("scenes/lessons.txt", bad[i].text);
		struct lessons *l = (struct lessons *)1;
		assert_int_equal(lessons_load(dir, &l, err, sizeof err), -1);
		assert_null(l);
		assert_non_null(strstr(err, "lessons.txt: "));
		assert_non_null(strstr(err, bad[i].what));
	}
	/* One lesson too many. */
	char many[LESSONS_MAX * 10 + 16] = "";
	for (int i = 0; i <= LESSONS_MAX; i++)
		strcat(many, "one.json\n");
	put("scenes/lessons.txt", many);
	struct lessons *l0 = (struct lessons *)1;
	assert_int_equal(lessons_load(dir, &l0, err, sizeof err), -1);
	assert_null(l0);
	assert_non_null(strstr(err, "more than 100 lessons"));
	at(dir, sizeof dir, "nowhere");
	struct lessons *l;
	assert_int_equal(lessons_load(dir, &l, err, sizeof err), -1);
	assert_non_null(strstr(err, "cannot open"));
}

/* A list that is a FIFO is refused at once, as every scene input is: it
 * was read with fopen, which waits for a writer that never comes, and
 * every mode hung before its first line. A folder is refused too. */
static void test_not_regular(void **state)
{
	(void)state;
	char dir[128], path[256], err[256];
	at(dir, sizeof dir, "scenes");
	at(path, sizeof path, "scenes/lessons.txt");
	assert_int_equal(mkfifo(path, 0600), 0);
	struct lessons *l = (struct lessons *)1;
	assert_int_equal(lessons_load(dir, &l, err, sizeof err), -1);
	assert_null(l);
	assert_non_null(strstr(err, "lessons.txt: cannot open: not a regular file"));
	/* A scene of the folder is then simply not a lesson. */
	int index = 7;
	at(path, sizeof path, "scenes/one.json");
	assert_null(lessons_of_scene(path, NULL, &index));
	at(path, sizeof path, "scenes/lessons.txt");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(lessons_load(dir, &l, err, sizeof err), -1);
	assert_non_null(strstr(err, "lessons.txt: cannot open: not a regular file"));
	assert_int_equal(rmdir(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_path_in_order, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_of_scene, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_bad_lists, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
