/*
 * lessons: reading the lesson path (include/scene/h2o/lessons.h).
 */
#include "h2o/lessons.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

void lessons_free(struct lessons *l)
{
	if (!l)
		return;
	for (int i = 0; i < l->count; i++)
		free(l->file[i]);
	free(l->file);
	free(l->dir);
	free(l);
}

/* A name the list may hold: a relative path (the folder's own files, or
 * another folder's through "..", as the last lesson names the model's
 * folder), printable ASCII. */
static bool good_name(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < ' ' || (unsigned char)s[i] >= 0x7F)
			return false;
	return n > 0 && s[0] != '/' && s[n - 1] != '/';
}

static int fail(char *err, size_t size, const char *path, const char *what)
{
	snprintf(err, size, "%s: %s", path, what);
	return -1;
}

/* Up to SIZE bytes of the regular file PATH into TEXT, *LEN of them; WHAT
 * says why not. Opened without blocking, as every file a scene names is: a
 * FIFO (or a device) would wait for a writer on open or read forever. */
static int read_list(const char *path, char *text, size_t size, size_t *len, char *what,
                     size_t what_size)
{
	const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(what, what_size, "cannot open: %s", strerror(errno));
		return -1;
	}
	struct stat st;
	const char *why = fstat(fd, &st) != 0          ? strerror(errno)
	                  : !S_ISREG(st.st_mode)       ? "not a regular file"
	                  : fcntl(fd, F_SETFL, 0) != 0 ? strerror(errno)
	                                               : NULL;
	if (why != NULL) {
		snprintf(what, what_size, "cannot open: %s", why);
		close(fd);
		return -1;
	}
	*len = 0;
	while (*len < size) {
		const ssize_t r = read(fd, text + *len, size - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(what, what_size, "cannot read: %s", strerror(errno));
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		*len += (size_t)r;
	}
	close(fd);
	return 0;
}

int lessons_load(const char *dir, struct lessons **out, char *err, size_t err_size)
{
	*out = NULL;
	char path[4096], what[160];
	snprintf(path, sizeof path, "%s/%s", dir, LESSONS_FILE);
	char text[LESSONS_MAX_BYTES + 1];
	size_t len;
	/* One byte more than the limit tells a list that is too long. */
	if (read_list(path, text, sizeof text, &len, what, sizeof what) != 0)
		return fail(err, err_size, path, what);
	if (len > LESSONS_MAX_BYTES)
		return fail(err, err_size, path, "longer than 4096 bytes");
	text[len] = '\0';

	struct lessons *l = calloc(1, sizeof *l);
	if (!l || !(l->dir = dup_n(dir, strlen(dir))) ||
	    !(l->file = calloc(LESSONS_MAX, sizeof *l->file))) {
		lessons_free(l);
		return fail(err, err_size, path, "out of memory");
	}
	for (const char *s = text; *s;) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		const char *next = e ? e + 1 : s + n;
		while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
			n--;
		while (n > 0 && (*s == ' ' || *s == '\t')) {
			s++;
			n--;
		}
		if (n > 0 && *s != '#') {
			if (!good_name(s, n) || l->count == LESSONS_MAX) {
				const char *what =
				        l->count == LESSONS_MAX
				                ? "more than 100 lessons"
				                : "a line is not a scene's path relative "
				                  "to this folder";
				lessons_free(l);
				return fail(err, err_size, path, what);
			}
			if (!(l->file[l->count] = dup_n(s, n))) {
				lessons_free(l);
				return fail(err, err_size, path, "out of memory");
			}
			l->count++;
		}
		s = next;
	}
	if (l->count == 0) {
		lessons_free(l);
		return fail(err, err_size, path, "lists no scene");
	}
	*out = l;
	return 0;
}

int lessons_find(const struct lessons *l, const char *scene_path)
{
	char *want = realpath(scene_path, NULL);
	int found = -1;
	for (int i = 0; want && found < 0 && i < l->count; i++) {
		char buf[4096];
		char *have = realpath(lessons_path(l, i, buf, sizeof buf), NULL);
		if (have && strcmp(have, want) == 0)
			found = i;
		free(have);
	}
	free(want);
	return found;
}

/* The lessons of DIR when SCENE_PATH is one of them. */
static struct lessons *lessons_in(const char *dir, const char *scene_path, int *index)
{
	struct lessons *l;
	char err[256];
	if (lessons_load(dir, &l, err, sizeof err) < 0)
		return NULL;
	if ((*index = lessons_find(l, scene_path)) >= 0)
		return l;
	lessons_free(l);
	return NULL;
}

struct lessons *lessons_of_scene(const char *scene_path, const char *home, int *index)
{
	const char *slash = strrchr(scene_path, '/');
	char dir[4096];
	if (slash == scene_path)
		snprintf(dir, sizeof dir, "/");
	else if (slash)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - scene_path), scene_path);
	else
		snprintf(dir, sizeof dir, ".");
	struct lessons *l = lessons_in(dir, scene_path, index);
	return l || !home ? l : lessons_in(home, scene_path, index);
}

const char *lessons_path(const struct lessons *l, int i, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", l->dir, l->file[i]);
	return buf;
}
