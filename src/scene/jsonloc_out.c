/*
 * jsonloc_out: what the JSON locator writes for a message (see
 * jsonloc.h): untrusted text quoted and a byte described through the text
 * module's escaping, a byte offset as a line and column, and the path of
 * what the scanner (jsonloc.c) was reading. Every writer is bounded: it
 * never overflows its buffer and always ends it with a NUL.
 */
#include "jsonloc.h"
#include "jsonloc_impl.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "h2o/text.h"

/* ---- quoting --------------------------------------------------------- */

/*
 * Whether a code point may be echoed to a terminal inside a message as it
 * is. Invisible and direction-changing ones could hide or reorder the
 * message itself (the "Trojan Source" trick), so they are escaped instead.
 */
static bool is_safe_glyph(uint32_t cp)
{
	return (text_class(cp) & (TEXT_CONTROL | TEXT_DECEPTIVE)) == 0;
}

/* A bounded writer: never overflows, always NUL-terminated. */
struct out {
	char *buf;
	size_t size, used;
};

static void out_mem(struct out *o, const void *p, size_t n)
{
	if (o->size == 0)
		return;
	size_t room = o->size - 1 - o->used;
	if (n > room)
		n = room;
	memcpy(o->buf + o->used, p, n);
	o->used += n;
	o->buf[o->used] = '\0';
}

static void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

static void out_fmt(struct out *o, const char *fmt, ...)
{
	char tmp[32];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		out_mem(o, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void out_sink(void *o, const char *p, size_t n)
{
	out_mem(o, p, n);
}

/* Quote S. RAW means S is still JSON-escaped text from the file (a key the
 * scanner saw), so its backslashes are escapes already and stay as they are. */
static void out_quoted(struct out *o, const unsigned char *s, size_t len, size_t max, bool raw)
{
	const unsigned flags = TEXT_ESCAPE_MESSAGE | (raw ? TEXT_ESCAPE_SOURCE : 0u);

	out_str(o, "\"");
	if (text_escape((const char *)s, len, max, flags, out_sink, o) < len)
		out_str(o, "...");
	out_str(o, "\"");
}

char *jsonloc_quote(char *buf, size_t size, const char *s, size_t len, size_t max)
{
	struct out o = {buf, size, 0};

	if (size > 0)
		buf[0] = '\0';
	out_quoted(&o, (const unsigned char *)s, len, max, false);
	return buf;
}

char *jsonloc_describe(char *buf, size_t size, const char *text, size_t len, size_t offset)
{
	const unsigned char *s = (const unsigned char *)text;
	struct out o = {buf, size, 0};
	uint32_t cp;
	size_t n;

	if (size > 0)
		buf[0] = '\0';
	if (offset >= len) {
		out_str(&o, "end of file");
		return buf;
	}
	unsigned char c = s[offset];
	if (c == '\0') {
		out_str(&o, "a NUL byte");
	} else if (is_alpha(c)) {
		/* A whole word reads better than its first letter: got 'tru'. */
		for (n = 0; offset + n < len && n < 16; n++) {
			unsigned char w = s[offset + n];
			if (!is_alpha(w) && !is_digit(w) && w != '_')
				break;
		}
		bool more = offset + n < len && (is_alpha(s[offset + n]) ||
		                                 is_digit(s[offset + n]) || s[offset + n] == '_');
		out_str(&o, "'");
		out_mem(&o, s + offset, n);
		out_str(&o, more ? "...'" : "'");
	} else if (c == '\'') {
		out_str(&o, "\"'\"");
	} else if (c > 0x20 && c < 0x7F) {
		out_fmt(&o, "'%c'", c);
	} else if ((n = text_decode(text + offset, len - offset, &cp)) == 0 || cp < 0x80) {
		out_fmt(&o, "byte 0x%02x", c);
	} else if (is_safe_glyph(cp)) {
		out_str(&o, "'");
		out_mem(&o, s + offset, n);
		out_fmt(&o, "' (U+%04lX)", (unsigned long)cp);
	} else {
		out_fmt(&o, "U+%04lX", (unsigned long)cp);
	}
	return buf;
}

/* ---- positions ------------------------------------------------------- */

void jsonloc_linecol(const char *text, size_t len, size_t offset, long *line, long *col)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t start = 0;
	long l = 1, c = 1;

	if (offset > len)
		offset = len;
	for (size_t i = 0; i < offset; i++) {
		if (s[i] == '\n') {
			l++;
			start = i + 1;
		}
	}
	/* An editor does not show the BOM, so it is not a column either. */
	if (start == 0 && offset >= 3 && len >= 3 && memcmp(s, JSONLOC_BOM, 3) == 0)
		start = 3;
	for (size_t i = start; i < offset; i++)
		if ((s[i] & 0xC0) != 0x80)
			c++;
	*line = l;
	*col = c;
}

/* Append path component K (the member stack level K is reading) to O. */
static void out_component(struct out *o, const struct scan *sc, int k, bool first)
{
	const struct scan_level *lv = &sc->stack[k];

	if (lv->kind == '[') {
		out_fmt(o, "%s[%ld]", first ? "$" : "", lv->index);
		return;
	}
	const unsigned char *key = sc->s + lv->key;
	bool plain = lv->key_len > 0 && lv->key_len <= 40 && (is_alpha(key[0]) || key[0] == '_');
	for (size_t i = 0; plain && i < lv->key_len; i++)
		plain = is_alpha(key[i]) || is_digit(key[i]) || key[i] == '_' || key[i] == '-';
	if (plain) {
		if (!first)
			out_str(o, ".");
		out_mem(o, key, lv->key_len);
	} else {
		out_str(o, first ? "$[" : "[");
		out_quoted(o, key, lv->key_len, 16, true);
		out_str(o, "]");
	}
}

static size_t component_len(const struct scan *sc, int k, bool first)
{
	char tmp[JSONLOC_PATH_MAX];
	struct out o = {tmp, sizeof tmp, 0};

	out_component(&o, sc, k, first);
	return o.used;
}

/*
 * The path of what is being read: every open container's current member,
 * the innermost one only when MEMBER (a value or key is being read, not the
 * punctuation between members). A path too long for the buffer keeps its
 * first component and as many of the last ones as fit, around "...".
 */
void jsonloc_format_path(const struct scan *sc, bool member, char *buf, size_t size)
{
	struct out o = {buf, size, 0};
	int n = sc->depth;

	buf[0] = '\0';
	if (n > 0 && (!member || sc->stack[n - 1].index < 0))
		n--;
	if (n == 0) {
		out_str(&o, "$");
		return;
	}
	size_t total = 0;
	for (int k = 0; k < n; k++)
		total += component_len(sc, k, k == 0);
	int from = 1;
	if (total >= size) {
		size_t head = component_len(sc, 0, true) + 3;
		size_t room = head < size - 1 ? size - 1 - head : 0;
		size_t tail = 0;
		from = n;
		while (from > 1 && tail + component_len(sc, from - 1, false) <= room)
			tail += component_len(sc, --from, false);
	}
	out_component(&o, sc, 0, true);
	if (from > 1)
		out_str(&o, "...");
	for (int k = from; k < n; k++)
		out_component(&o, sc, k, false);
}
