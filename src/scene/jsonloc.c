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
#include "jsonloc_impl.h"

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

static void skip_blank(struct scan *sc)
{
	while (sc->pos < sc->len && is_blank(sc->s[sc->pos]))
		sc->pos++;
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

static int fail(struct scan *sc, size_t at, bool member, const char *fmt, ...)
{
	va_list ap;

	if (sc->err == NULL)
		return SCAN_FAILED;
	sc->err->offset = at;
	jsonloc_format_path(sc, member, sc->err->path, sizeof sc->err->path);
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
	if (sc->len >= 5 && memcmp(sc->s, JSONLOC_BOM, 3) == 0)
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
