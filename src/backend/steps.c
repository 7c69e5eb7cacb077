/*
 * steps: --trace-steps' LIST read and checked (see steps.h).
 */
#include "steps.h"

#include <stdio.h>

#include "h2o/scene.h"
#include "options.h"

/* A step number at *S: digits only, at most SCENE_MAX_TOKENS (a larger
 * one is read as SCENE_MAX_TOKENS + 1, past any scene). Returns whether
 * there was one, *S moved past it. */
static bool read_step(const char **s, long *v)
{
	const char *p = *s;
	long n = 0;
	while (*p >= '0' && *p <= '9') {
		n = n * 10 + (*p - '0');
		if (n > SCENE_MAX_TOKENS)
			n = SCENE_MAX_TOKENS + 1;
		p++;
	}
	if (p == *s)
		return false;
	*s = p;
	*v = n;
	return true;
}

int steps_parse(const char *list, int n, bool *want)
{
	char msg[160];
	for (const char *s = list;; s++) {
		long from, to;
		if (!read_step(&s, &from))
			goto bad;
		to = from;
		if (*s == '-') {
			s++;
			if (!read_step(&s, &to))
				goto bad;
		}
		if (from < 1 || to < from || (*s != ',' && *s != '\0'))
			goto bad;
		if (to > SCENE_MAX_TOKENS)
			goto bad;
		if (want && to > n) {
			snprintf(msg, sizeof msg,
			         "--trace-steps: step %ld is past the scene's last step, %d, in "
			         "'%%s'",
			         to, n);
			return options_usage_error(msg, list);
		}
		for (long t = from; want && t <= to; t++)
			want[t] = true;
		if (*s == '\0')
			return -1;
	}
bad:
	snprintf(msg, sizeof msg,
	         "--trace-steps: expected steps from 1 to %d and ranges A-B (A at most B), "
	         "comma-separated, got '%%s'",
	         SCENE_MAX_TOKENS);
	return options_usage_error(msg, list);
}
