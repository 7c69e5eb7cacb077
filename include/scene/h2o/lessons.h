/*
 * lessons: the lesson path, the order in which the lesson scenes teach.
 *
 * The order is kept in one place, a file `lessons.txt` in the scenes'
 * folder: one scene a line, its path relative to that folder (a file of
 * the folder, or of another through "..": the last lesson is a model
 * scene beside its model); blank lines and lines starting with '#' are
 * comments. scenes/README.md's table of
 * lessons follows it (tests/lessons_test.sh checks), and the program reads
 * it to open the first lesson when started without a scene and to go from
 * one lesson to the next. This module only reads the list; it loads no
 * scene and never writes.
 */
#ifndef H2O_LESSONS_H
#define H2O_LESSONS_H

#include <stddef.h>

#define LESSONS_FILE      "lessons.txt"
#define LESSONS_MAX       100  /* lessons in a path */
#define LESSONS_MAX_BYTES 4096 /* of the list file */

struct lessons {
	char *dir;   /* the folder the names are relative to */
	int count;   /* 1 .. LESSONS_MAX */
	char **file; /* [count]: the names, as listed */
};

/* Read DIR/lessons.txt into *OUT. Returns 0, or -1 with a message in ERR
 * (ERR_SIZE bytes): the file cannot be read, is too large, lists no scene
 * or too many, or a name is absolute, ends in '/' or holds a control
 * character. */
int lessons_load(const char *dir, struct lessons **out, char *err, size_t err_size);

/* The place of the scene file SCENE_PATH on L (the same file, every link
 * and ".." resolved), or -1. */
int lessons_find(const struct lessons *l, const char *scene_path);

/* The lessons of the folder SCENE_PATH is in, or else of HOME (the
 * program's own scenes folder; may be NULL), when the scene is on them,
 * and in *INDEX its place; NULL when neither list holds it. */
struct lessons *lessons_of_scene(const char *scene_path, const char *home, int *index);

/* Lesson I's path (DIR/NAME) in BUF; returns BUF. */
const char *lessons_path(const struct lessons *l, int i, char *buf, size_t size);

void lessons_free(struct lessons *l);

#endif
