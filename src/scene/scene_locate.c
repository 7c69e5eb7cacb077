/*
 * scene_locate: where a value of the parsed tree starts in the text.
 *
 * cJSON keeps no positions, and a double is not the number as written: a
 * check that needs the literal (an integer field, whose "0.99999999999999999"
 * a double rounds to 1) finds it here. The text is one cJSON accepted, so
 * walking it needs no grammar: skip strings to their closing quote and
 * containers to their closing bracket. The path last located is kept, so
 * that the values the checks read in file order (a field after the one
 * before it, the elements of an array) cost a walk over the text once, not
 * once per value from the root.
 */
#include "scene_impl.h"

#include <string.h>

static bool is_blank(char c)
{
	return (unsigned char)c >= 1 && (unsigned char)c <= 32; /* cJSON's whitespace */
}

static size_t skip_blank(const struct loader *ld, size_t at)
{
	while (at < ld->len && is_blank(ld->text[at]))
		at++;
	return at;
}

/* Past the string whose opening quote is at AT. */
static size_t skip_string(const struct loader *ld, size_t at)
{
	const size_t start = ++at;

	for (;;) {
		const char *q = memchr(ld->text + at, '"', ld->len - at);
		if (q == NULL)
			return ld->len;
		size_t i = (size_t)(q - ld->text), backslashes = 0;
		while (i - backslashes > start && ld->text[i - backslashes - 1] == '\\')
			backslashes++;
		at = i + 1;
		if (backslashes % 2 == 0)
			return at;
	}
}

/* Past the value at AT. */
static size_t skip_value(const struct loader *ld, size_t at)
{
	const char *s = ld->text;

	if (at >= ld->len)
		return ld->len;
	if (s[at] == '"')
		return skip_string(ld, at);
	if (s[at] != '{' && s[at] != '[') {
		while (at < ld->len && !is_blank(s[at]) && s[at] != ',' && s[at] != ']' &&
		       s[at] != '}')
			at++;
		return at;
	}
	for (int depth = 0; at < ld->len;) {
		const char c = s[at];
		if (c == '"') {
			at = skip_string(ld, at);
			continue;
		}
		at++;
		if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0)
			return at;
	}
	return ld->len;
}

/* From AT, the start of a member ("key": value) or an element: its value. */
static size_t value_of(const struct loader *ld, size_t at, bool member)
{
	if (!member)
		return at;
	if (at >= ld->len || ld->text[at] != '"')
		return ld->len;
	at = skip_blank(ld, skip_string(ld, at));
	return at < ld->len && ld->text[at] == ':' ? skip_blank(ld, at + 1) : ld->len;
}

/* The value of child STEP of the container at AT (an object's member, an
 * array's element): from its first child, or when FROM >= 0 from child
 * FROM, whose value is at FROM_AT. Returns -1 when it has no such child. */
static int child(const struct loader *ld, size_t at, int from, size_t from_at, int step,
                 size_t *out)
{
	const bool object = ld->text[at] == '{';
	int k = from;

	if (ld->text[at] != '{' && ld->text[at] != '[')
		return -1;
	if (from < 0) {
		at = skip_blank(ld, at + 1);
		if (at >= ld->len || ld->text[at] == '}' || ld->text[at] == ']')
			return -1;
		at = value_of(ld, at, object);
		k = 0;
	} else {
		at = from_at;
	}
	for (; k < step; k++) {
		at = skip_blank(ld, skip_value(ld, at));
		if (at >= ld->len || ld->text[at] != ',')
			return -1;
		at = value_of(ld, skip_blank(ld, at + 1), object);
	}
	if (at >= ld->len)
		return -1;
	*out = at;
	return 0;
}

int scene_locate(const struct loader *ld, const struct where *w, size_t *offset)
{
	struct locate_cache *c = ld->cache;
	int same = 0;

	if (c == NULL || w->depth > WHERE_MAX)
		return -1;
	if (c->depth < 0) {
		/* cJSON skips a BOM only when at least two more bytes follow it. */
		const size_t bom = ld->len >= 5 && memcmp(ld->text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
		c->at[0] = skip_blank(ld, bom);
		c->depth = 0;
	}
	/* The containers the last path and this one share are where they were. */
	while (same < c->depth && same < w->depth && c->step[same] == w->step[same])
		same++;
	for (int d = same; d < w->depth; d++) {
		/* In the container both paths share, go on from the last path's
		 * child when this one comes after it. */
		const int from =
		        d == same && d < c->depth && c->step[d] < w->step[d] ? c->step[d] : -1;
		if (child(ld, c->at[d], from, c->at[d + 1], w->step[d], &c->at[d + 1]) != 0) {
			c->depth = d;
			return -1;
		}
		c->step[d] = w->step[d];
		c->depth = d + 1;
	}
	c->depth = w->depth;
	*offset = c->at[w->depth];
	return 0;
}
