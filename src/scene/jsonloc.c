/*
 * jsonloc: a JSON walker over raw text, for error positions (see jsonloc.h).
 *
 * One scanner serves both questions. It reads the text the way cJSON 1.7
 * does (any byte from 1 to 32 is blank, a number is whatever strtod takes
 * from a run of [0-9+-.eE], strings may hold raw control characters, a \u
 * escape with bad hex digits reads as U+0000, nesting stops at 1000) so that
 * it fails exactly where cJSON fails and nowhere else: a disagreement would
 * blame the wrong spot. NUL bytes are the one deliberate difference: cJSON
 * takes them as blanks or string bytes, and a scene must not hold them.
 *
 * The scanner is a loop over three states (a value is due, a key is due,
 * a ',' or a closing bracket is due) with an explicit stack, so hostile
 * nesting cannot exhaust the C stack. Each level of the stack remembers
 * which member it is reading, which is all that a path needs. Decoding and
 * escaping quoted text are the text module's (h2o/text.h).
 */
#include "jsonloc.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/text.h"

enum result {
	SCAN_OK = 0,
	SCAN_FAILED = 1,
	SCAN_FOUND = 2,
	SCAN_NOMEM = -1,
};

struct scan_level {
	unsigned char kind; /* '{' or '[' */
	long index;         /* member being read; -1 before an object's first key */
	size_t key;         /* offset of that member's raw key, past its quote */
	size_t key_len;
};

struct scan {
	const unsigned char *s;
	size_t len, pos;
	struct scan_level *stack;
	int depth, cap;
	unsigned char root; /* first byte of the root value */

	/* jsonloc_find's target, when seeking. */
	bool seeking;
	const int *steps;
	int nsteps;
	size_t found_key, found_value;

	size_t comma; /* the last ',' read, for trailing-comma errors */

	/* The last string read. cJSON lets a string run over line breaks, so a
	 * missing closing quote shows up as an error somewhere after the next
	 * quote; when that error follows such a string directly, the string is
	 * the one to blame. */
	size_t str_start, str_end;
	bool str_newline;

	struct jsonloc_error *err; /* NULL when only looking */
};

static const char bom[] = "\xEF\xBB\xBF";

static bool is_blank(unsigned char c)
{
	return c >= 1 && c <= 32; /* cJSON's whitespace: every control byte but NUL */
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static void skip_blank(struct scan *sc)
{
	while (sc->pos < sc->len && is_blank(sc->s[sc->pos]))
		sc->pos++;
}

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
	if (start == 0 && offset >= 3 && len >= 3 && memcmp(s, bom, 3) == 0)
		start = 3;
	for (size_t i = start; i < offset; i++)
		if ((s[i] & 0xC0) != 0x80)
			c++;
	*line = l;
	*col = c;
}

/* ---- the scanner ----------------------------------------------------- */

/*
 * What cJSON's parse_number takes: it copies at most 63 bytes of
 * [0-9+-.eE] and lets strtod read a prefix of them, so "01" and "1." are
 * numbers, "1e" is the number 1 followed by a stray 'e', and "-" is none.
 */
size_t jsonloc_number_len(const char *text, size_t len, size_t offset)
{
	const unsigned char *s = (const unsigned char *)text + offset;
	size_t run = 0, i = 0, digits = 0;

	if (offset >= len)
		return 0;
	len -= offset;
	while (run < 63 && run < len &&
	       (is_digit(s[run]) || s[run] == '+' || s[run] == '-' || s[run] == '.' ||
	        s[run] == 'e' || s[run] == 'E'))
		run++;

	if (i < run && (s[i] == '+' || s[i] == '-'))
		i++;
	while (i < run && is_digit(s[i]))
		i++, digits++;
	if (i < run && s[i] == '.') {
		i++;
		while (i < run && is_digit(s[i]))
			i++, digits++;
	}
	if (digits == 0)
		return 0;
	if (i < run && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;
		if (j < run && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j < run && is_digit(s[j])) {
			while (j < run && is_digit(s[j]))
				j++;
			i = j;
		}
	}
	return i;
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
static void format_path(const struct scan *sc, bool member, char *buf, size_t size)
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

static int fail(struct scan *sc, size_t at, bool member, const char *fmt, ...)
{
	va_list ap;

	if (sc->err == NULL)
		return SCAN_FAILED;
	sc->err->offset = at;
	format_path(sc, member, sc->err->path, sizeof sc->err->path);
	va_start(ap, fmt);
	vsnprintf(sc->err->message, sizeof sc->err->message, fmt, ap);
	va_end(ap);
	return SCAN_FAILED;
}

static bool blank_between(const struct scan *sc, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (!is_blank(sc->s[i]))
			return false;
	return from <= to;
}

/* Offset just past the last non-blank byte: where an end-of-file error
 * is shown, rather than on an empty line below the text. */
static size_t end_of_text(const struct scan *sc)
{
	size_t p = sc->len;
	while (p > 0 && is_blank(sc->s[p - 1]))
		p--;
	return p;
}

/* NaN, Infinity and the like, as other languages print them. */
static bool is_non_finite_word(const unsigned char *s, size_t left)
{
	static const char *const words[] = {"nan", "inf", "infinity"};
	size_t i = left > 0 && (*s == '-' || *s == '+') ? 1 : 0, n = 0;

	while (i + n < left && is_alpha(s[i + n]))
		n++;
	for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
		if (strlen(words[w]) != n)
			continue;
		size_t k = 0;
		while (k < n && (s[i + k] | 0x20) == words[w][k])
			k++;
		if (k == n)
			return true;
	}
	return false;
}

/* A hint for a few mistakes that are easy to make and hard to see. */
static const char *hint_for(const struct scan *sc, size_t at, bool comma_due)
{
	const unsigned char *s = sc->s + at;
	size_t left = sc->len - at;
	uint32_t cp;

	if (text_decode((const char *)s, left, &cp) > 1 && cp >= 0x2018 && cp <= 0x201F)
		return " (JSON needs straight quotes)";
	if (is_non_finite_word(s, left))
		return " (JSON has no NaN or Infinity)";
	/* `"cat, "q"`: a quote missing or one too many just before. */
	if (sc->str_end == at && (is_alpha(*s) || is_digit(*s)))
		return " (a '\"' missing or misplaced before it?)";
	if (comma_due && (*s == '"' || *s == '{' || *s == '[' || *s == '-' || is_digit(*s) ||
	                  *s == 't' || *s == 'f' || *s == 'n'))
		return " (missing ','?)";
	return "";
}

/* The byte at sc->pos is not what the grammar wants there. */
static int fail_expected(struct scan *sc, bool member, const char *what, bool comma_due)
{
	char got[64];
	size_t at = sc->pos;

	if (sc->str_newline && sc->str_end > 0 && blank_between(sc, sc->str_end, at))
		return fail(sc, sc->str_start, true,
		            "syntax error: string runs past the end of its line (missing closing "
		            "'\"'?)");
	if (at >= sc->len)
		return fail(sc, end_of_text(sc), member,
		            "syntax error: unexpected end of file, expected %s", what);
	jsonloc_describe(got, sizeof got, (const char *)sc->s, sc->len, at);
	return fail(sc, at, member, "syntax error: expected %s, got %s%s", what, got,
	            hint_for(sc, at, comma_due));
}

static unsigned hex4(const unsigned char *p)
{
	unsigned h = 0;

	for (int i = 0; i < 4; i++) {
		unsigned char c = p[i];
		if (is_digit(c))
			h = h << 4 | (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			h = h << 4 | (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			h = h << 4 | (unsigned)(c - 'A' + 10);
		else
			return 0; /* cJSON's parse_hex4 reads bad digits as U+0000 */
	}
	return h;
}

/* Length of the \u escape at S (up to END, the closing quote), 0 when cJSON
 * refuses it, with the reason in *WHY. */
static size_t u_escape_len(const unsigned char *s, const unsigned char *end, const char **why)
{
	*why = "(a \\u needs 4 hex digits)";
	if (end - s < 6)
		return 0;
	unsigned first = hex4(s + 2);
	*why = "(a low surrogate with no high surrogate before it)";
	if (first >= 0xDC00 && first <= 0xDFFF)
		return 0;
	if (first < 0xD800 || first > 0xDBFF)
		return 6;
	*why = "(a high surrogate with no low surrogate after it)";
	if (end - s < 12 || s[6] != '\\' || s[7] != 'u')
		return 0;
	unsigned second = hex4(s + 8);
	if (second < 0xDC00 || second > 0xDFFF)
		return 0;
	return 12;
}

/* Read the string starting at sc->pos (its opening quote). A failing key
 * is not named in the path: it was not read. */
static int scan_string(struct scan *sc, bool is_key)
{
	const unsigned char *s = sc->s;
	size_t start = sc->pos, p = start + 1;
	bool newline = false;

	while (p < sc->len && s[p] != '"') {
		if (s[p] == '\\' && p + 1 < sc->len)
			p++;
		if (s[p] == '\0')
			return fail(sc, p, !is_key, "syntax error: NUL byte inside a string");
		if (s[p] == '\n')
			newline = true;
		p++;
	}
	if (p >= sc->len)
		return fail(sc, start, !is_key,
		            "syntax error: unterminated string (no closing '\"' before the end of "
		            "the file)");

	for (size_t i = start + 1; i < p; i++) {
		if (s[i] != '\\')
			continue;
		unsigned char c = s[i + 1];
		const char *why;
		size_t n;
		switch (c) {
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
		case '"':
		case '\\':
		case '/':
			i++;
			break;
		case 'u':
			n = u_escape_len(s + i, s + p, &why);
			if (n == 0)
				return fail(sc, i, !is_key, "syntax error: invalid \\u escape %s",
				            why);
			i += n - 1;
			break;
		default:
			if (c > 0x20 && c < 0x7F)
				return fail(sc, i, !is_key, "syntax error: invalid escape '\\%c'",
				            c);
			return fail(sc, i, !is_key,
			            "syntax error: invalid escape (a backslash "
			            "before a control byte)");
		}
	}
	if (is_key)
		sc->stack[sc->depth - 1].key_len = p - start - 1;
	sc->str_start = start;
	sc->str_end = p + 1;
	sc->str_newline = newline;
	sc->pos = p + 1;
	return SCAN_OK;
}

static bool take_literal(struct scan *sc, const char *word)
{
	size_t n = strlen(word);

	if (sc->len - sc->pos < n || memcmp(sc->s + sc->pos, word, n) != 0)
		return false;
	sc->pos += n;
	return true;
}

static int push(struct scan *sc, unsigned char kind)
{
	if (sc->depth == sc->cap) {
		int cap = sc->cap ? sc->cap * 2 : 16;
		struct scan_level *stack = realloc(sc->stack, (size_t)cap * sizeof *stack);
		if (stack == NULL)
			return SCAN_NOMEM;
		sc->stack = stack;
		sc->cap = cap;
	}
	sc->stack[sc->depth++] = (struct scan_level){kind, kind == '[' ? 0 : -1, 0, 0};
	return SCAN_OK;
}

static bool at_target(const struct scan *sc)
{
	if (!sc->seeking || sc->depth != sc->nsteps)
		return false;
	for (int k = 0; k < sc->depth; k++)
		if (sc->stack[k].index != sc->steps[k])
			return false;
	return true;
}

/* A value is due at sc->pos (blanks skipped). Returns the next state. */
enum state { DUE_VALUE, DUE_KEY, DUE_NEXT, STOP };

static enum state scan_value(struct scan *sc, int *rc)
{
	const unsigned char *s = sc->s;
	const char *what = sc->depth > 0 ? "a value" : "a JSON object";

	if (at_target(sc)) {
		const struct scan_level *top = sc->depth > 0 ? &sc->stack[sc->depth - 1] : NULL;
		sc->found_value = sc->pos;
		sc->found_key = top && top->kind == '{' ? top->key - 1 : sc->pos;
		*rc = SCAN_FOUND;
		return STOP;
	}
	if (sc->pos >= sc->len) {
		*rc = fail_expected(sc, true, what, false);
		return STOP;
	}
	unsigned char c = s[sc->pos];
	if (sc->depth == 0)
		sc->root = c;
	if (c == '{' || c == '[') {
		if (sc->depth >= JSONLOC_MAX_DEPTH) {
			*rc = fail(sc, sc->pos, true, "syntax error: nested deeper than %d levels",
			           JSONLOC_MAX_DEPTH);
			return STOP;
		}
		if ((*rc = push(sc, c)) != SCAN_OK)
			return STOP;
		sc->pos++;
		skip_blank(sc);
		if (sc->pos < sc->len && s[sc->pos] == (c == '{' ? '}' : ']')) {
			sc->pos++;
			sc->depth--;
			return DUE_NEXT;
		}
		return c == '{' ? DUE_KEY : DUE_VALUE;
	}
	if (c == '"') {
		*rc = scan_string(sc, false);
		return *rc == SCAN_OK ? DUE_NEXT : STOP;
	}
	if (c == '-' || is_digit(c)) {
		size_t n = jsonloc_number_len((const char *)s, sc->len, sc->pos);
		if (n == 0) {
			char got[64];
			size_t w = 1;
			while (sc->pos + w < sc->len && w < 16 &&
			       (is_alpha(s[sc->pos + w]) || is_digit(s[sc->pos + w]) ||
			        s[sc->pos + w] == '.' || s[sc->pos + w] == '-' ||
			        s[sc->pos + w] == '+'))
				w++;
			/* Only [-+.0-9A-Za-z], so safe to show as it is. */
			snprintf(got, sizeof got, "'%.*s'", (int)w, (const char *)s + sc->pos);
			*rc = fail(sc, sc->pos, true, "syntax error: invalid number %s%s", got,
			           hint_for(sc, sc->pos, false));
			return STOP;
		}
		sc->pos += n;
		return DUE_NEXT;
	}
	if (take_literal(sc, "null") || take_literal(sc, "false") || take_literal(sc, "true"))
		return DUE_NEXT;
	*rc = fail_expected(sc, true, what, false);
	return STOP;
}

/* Inside an object, a key is due at sc->pos (blanks skipped). */
static enum state scan_key(struct scan *sc, int *rc)
{
	struct scan_level *top = &sc->stack[sc->depth - 1];

	if (sc->pos >= sc->len || sc->s[sc->pos] != '"') {
		if (sc->pos < sc->len && sc->s[sc->pos] == '}' && top->index >= 0)
			*rc = fail(sc, sc->comma, false, "syntax error: trailing comma before '}'");
		else
			*rc = fail_expected(sc, false, "a field name in double quotes", false);
		return STOP;
	}
	top->index++;
	top->key = sc->pos + 1;
	top->key_len = 0;
	if ((*rc = scan_string(sc, true)) != SCAN_OK)
		return STOP;
	skip_blank(sc);
	if (sc->pos >= sc->len || sc->s[sc->pos] != ':') {
		*rc = fail_expected(sc, true, "':' after the field name", false);
		return STOP;
	}
	sc->pos++;
	skip_blank(sc);
	return DUE_VALUE;
}

/* A value just ended inside a container: a ',' or the closing bracket is due. */
static enum state scan_next(struct scan *sc, int *rc)
{
	struct scan_level *top = &sc->stack[sc->depth - 1];
	unsigned char close = top->kind == '{' ? '}' : ']';

	skip_blank(sc);
	if (sc->pos < sc->len && sc->s[sc->pos] == ',') {
		sc->comma = sc->pos++;
		skip_blank(sc);
		if (top->kind == '{')
			return DUE_KEY;
		if (sc->pos < sc->len && sc->s[sc->pos] == ']') {
			*rc = fail(sc, sc->comma, false, "syntax error: trailing comma before ']'");
			return STOP;
		}
		top->index++;
		return DUE_VALUE;
	}
	if (sc->pos < sc->len && sc->s[sc->pos] == close) {
		sc->pos++;
		sc->depth--;
		return DUE_NEXT;
	}
	*rc = fail_expected(sc, false, close == '}' ? "',' or '}'" : "',' or ']'", true);
	return STOP;
}

static int scan_run(struct scan *sc)
{
	enum state state = DUE_VALUE;
	int rc = SCAN_OK;

	/* cJSON skips a BOM only when at least two more bytes follow it. */
	if (sc->len >= 5 && memcmp(sc->s, bom, 3) == 0)
		sc->pos = 3;
	skip_blank(sc);
	while (state != STOP) {
		switch (state) {
		case DUE_VALUE:
			state = scan_value(sc, &rc);
			break;
		case DUE_KEY:
			state = scan_key(sc, &rc);
			break;
		case DUE_NEXT:
			if (sc->depth == 0) {
				state = STOP;
				break;
			}
			state = scan_next(sc, &rc);
			break;
		case STOP:
			break;
		}
	}
	if (rc != SCAN_OK)
		return rc;

	skip_blank(sc);
	if (sc->pos < sc->len) {
		char got[64];
		jsonloc_describe(got, sizeof got, (const char *)sc->s, sc->len, sc->pos);
		return fail(sc, sc->pos, false,
		            "syntax error: expected the end of the file after the root %s, got %s",
		            sc->root == '{' ? "object" : "value", got);
	}
	return SCAN_OK;
}

int jsonloc_check(const char *text, size_t len, struct jsonloc_error *err)
{
	struct scan sc = {.s = (const unsigned char *)text, .len = len, .err = err};

	int rc = scan_run(&sc);
	free(sc.stack);
	if (rc == SCAN_NOMEM)
		return -1;
	return rc == SCAN_FAILED ? 1 : 0;
}

int jsonloc_find(const char *text, size_t len, const int *steps, int nsteps, size_t *key,
                 size_t *value)
{
	struct scan sc = {
	        .s = (const unsigned char *)text,
	        .len = len,
	        .seeking = true,
	        .steps = steps,
	        .nsteps = nsteps,
	};

	int rc = scan_run(&sc);
	free(sc.stack);
	if (rc != SCAN_FOUND)
		return -1;
	*key = sc.found_key;
	*value = sc.found_value;
	return 0;
}
