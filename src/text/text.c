/*
 * text: one decoder, one table of unsafe code points, one width rule and
 * one escaper for every output scene text reaches (see text.h).
 */
#include "h2o/text.h"

#include <langinfo.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <wchar.h>

/* ---- decoding ---------------------------------------------------------- */

size_t text_decode(const char *text, size_t n, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t len;
	uint32_t min, v;

	*cp = TEXT_REPLACEMENT;
	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	} else if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		len = 2, min = 0x80, v = s[0] & 0x1Fu;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3, min = 0x800, v = s[0] & 0x0Fu;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4, min = 0x10000, v = s[0] & 0x07u;
	} else {
		return 0; /* a continuation byte, C0, C1 (overlong) or F5..FF */
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3Fu);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return len;
}

/* The next code point of [S, END), S < END: a bad byte is one U+FFFD. */
static size_t decode_next(const char *s, const char *end, uint32_t *cp)
{
	size_t n = text_decode(s, (size_t)(end - s), cp);
	return n > 0 ? n : 1;
}

size_t text_encode(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	} else if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	} else if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* ---- what is unsafe ---------------------------------------------------- */

#define C TEXT_CONTROL
#define I TEXT_INVISIBLE
#define D TEXT_DECEPTIVE

/*
 * Every range of unsafe code points with its classes, in order and not
 * overlapping. TEXT_INVISIBLE is the set the cell grid has always dropped
 * and TEXT_DECEPTIVE the set error messages have always escaped; where the
 * two differ, the caller's own output stays as it was (text.h says why
 * each caller refuses what it does).
 */
static const struct {
	uint32_t lo, hi;
	unsigned classes;
} unsafe[] = {
        {0x0000, 0x001F, C},       /* C0 */
        {0x007F, 0x009F, C},       /* DEL, C1 */
        {0x00AD, 0x00AD, I | D},   /* soft hyphen */
        {0x034F, 0x034F, D},       /* combining grapheme joiner */
        {0x061C, 0x061C, D},       /* Arabic letter mark */
        {0x115F, 0x1160, D},       /* Hangul choseong and jungseong fillers */
        {0x17B4, 0x17B5, D},       /* Khmer inherent vowels */
        {0x180B, 0x180D, D},       /* Mongolian free variation selectors */
        {0x180E, 0x180E, I | D},   /* Mongolian vowel separator */
        {0x180F, 0x180F, D},       /* Mongolian free variation selector four */
        {0x200B, 0x200F, I | D},   /* zero-width space, joiners, LRM, RLM */
        {0x2028, 0x202E, I | D},   /* line and paragraph separators, embeddings, overrides */
        {0x2060, 0x206F, I | D},   /* word joiner, invisible operators, isolates */
        {0x3164, 0x3164, D},       /* Hangul filler */
        {0xD800, 0xDFFF, D},       /* surrogates */
        {0xFE00, 0xFE0F, I | D},   /* variation selectors */
        {0xFEFF, 0xFEFF, I | D},   /* zero-width no-break space, the BOM */
        {0xFFA0, 0xFFA0, D},       /* halfwidth Hangul filler */
        {0xFFF0, 0xFFFF, D},       /* interlinear annotation, specials */
        {0x1D173, 0x1D17A, D},     /* musical symbol formatting controls */
        {0x1F3FB, 0x1F3FF, I},     /* emoji skin tone modifiers */
        {0xE0000, 0xE0FFF, I | D}, /* tags, variation selectors supplement */
        {0xF0000, 0x10FFFF, D},    /* private use planes 15 and 16 */
};

#undef C
#undef I
#undef D

unsigned text_class(uint32_t cp)
{
	size_t lo = 0, hi = sizeof unsafe / sizeof unsafe[0];

	if (cp > 0x10FFFF)
		return TEXT_DECEPTIVE; /* not a code point at all */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cp < unsafe[mid].lo)
			hi = mid;
		else if (cp > unsafe[mid].hi)
			lo = mid + 1;
		else
			return unsafe[mid].classes;
	}
	return 0;
}

/* ---- display width ----------------------------------------------------- */

static void glyph_ascii(struct text_glyph *g, const char *s)
{
	g->n = 0;
	g->comb = 0;
	while (*s && g->n < 4)
		g->cp[g->n++] = (unsigned char)*s++;
	g->width = g->n;
}

static bool is_invisible(uint32_t cp)
{
	return (text_class(cp) & TEXT_INVISIBLE) != 0;
}

/* Deceptive (it can hide or reorder text around it), but not one of the
 * replacement character's own: drawn as U+FFFD, or dropped when it has
 * no width, so that no cell carries it to the terminal. */
static bool is_deceptive(uint32_t cp)
{
	return cp != TEXT_REPLACEMENT && (text_class(cp) & TEXT_DECEPTIVE) != 0;
}

/*
 * Zero-width code points are attached to the unit before (one combining
 * mark) or dropped, so a unit always has a width. A code point wcwidth
 * gives no width (unassigned, a line separator) would leave the terminal
 * and the grid disagreeing on the columns after it, so it shows as U+FFFD.
 */
bool text_next_glyph(const char **s, const char *end, bool ascii, struct text_glyph *g)
{
	while (*s < end) {
		uint32_t cp;
		*s += decode_next(*s, end, &cp);
		if (cp < 0x20) {
			char esc[3] = {'^', (char)(cp + 0x40), 0};
			glyph_ascii(g, esc);
		} else if (cp == 0x7F) {
			glyph_ascii(g, "^?");
		} else if (cp >= 0x80 && cp < 0xA0) {
			char esc[5];
			snprintf(esc, sizeof esc, "<%02X>", (unsigned)cp);
			glyph_ascii(g, esc);
		} else if (cp < 0x80) {
			g->cp[0] = cp, g->n = 1, g->width = 1, g->comb = 0;
		} else if (ascii) {
			int w = wcwidth((wchar_t)cp);
			if (w == 0)
				continue; /* a combining mark on a '?' adds nothing */
			glyph_ascii(g, "?");
		} else {
			int w = is_invisible(cp) ? 0 : wcwidth((wchar_t)cp);
			if (w == 0)
				continue; /* handled by the look-ahead below */
			if (w < 0 || is_deceptive(cp)) {
				cp = TEXT_REPLACEMENT;
				w = 1;
			}
			g->cp[0] = cp, g->n = 1, g->width = w, g->comb = 0;
		}
		/* Attach the first combining mark that follows a plain glyph;
		 * drop any further zero-width code points. */
		while (*s < end && !ascii) {
			uint32_t next;
			size_t len = decode_next(*s, end, &next);
			if (next < 0xA0 || wcwidth((wchar_t)next) != 0)
				break;
			*s += len;
			if (!is_invisible(next) && !is_deceptive(next) && g->n == 1 &&
			    g->comb == 0 && g->cp[0] >= 0x20)
				g->comb = next;
		}
		return true;
	}
	return false;
}

int text_width(const char *s, size_t len, bool ascii)
{
	const char *end = s + len;
	struct text_glyph g;
	int w = 0;

	while (text_next_glyph(&s, end, ascii, &g))
		w += g.width;
	return w;
}

size_t text_clip(const char *text, size_t len, int maxw, bool ascii, int *width)
{
	const char *s = text, *end = text + len;
	struct text_glyph g;
	int used = 0;

	for (;;) {
		const char *at = s;
		if (!text_next_glyph(&s, end, ascii, &g))
			break;
		if (used + g.width > maxw) {
			*width = used;
			return (size_t)(at - text);
		}
		used += g.width;
	}
	*width = used;
	return len;
}

/* ---- escaping ---------------------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

bool text_wrap_next(const char **at, int maxw, bool ascii, char *line, size_t size)
{
	const char *s = *at;
	size_t len = 0;

	line[0] = '\0';
	while (is_blank(*s))
		s++;
	if (*s == '\0') {
		*at = s;
		return false;
	}
	for (;;) {
		while (is_blank(*s))
			s++;
		if (*s == '\0')
			break;
		if (*s == '\n') {
			s++;
			break;
		}
		const char *e = s;
		while (*e != '\0' && *e != '\n' && !is_blank(*e))
			e++;
		const size_t old = len, wl = (size_t)(e - s);
		if (len + 1 + wl >= size) {
			if (len > 0)
				break; /* the word starts the next line */
			/* A word longer than the whole buffer stands alone, as
			 * much of it as fits (cut where a character starts), and
			 * the rest of it is skipped: the drawing ends it with an
			 * ellipsis. */
			size_t cut = size - 1;
			while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
				cut--;
			memcpy(line, s, cut);
			line[cut] = '\0';
			s = e;
			break;
		}
		if (len > 0)
			line[len++] = ' ';
		memcpy(line + len, s, wl);
		len += wl;
		line[len] = '\0';
		if (old > 0 && text_width(line, len, ascii) > maxw) {
			line[old] = '\0'; /* the word starts the next line */
			break;
		}
		s = e;
	}
	*at = s;
	return true;
}

int text_wrap_count(const char *text, int maxw, bool ascii)
{
	char line[TEXT_WRAP_MAX];
	int n = 0;

	while (text_wrap_next(&text, maxw, ascii, line, sizeof line))
		n++;
	return n;
}

static void put_u_escape(text_sink *put, void *ctx, uint32_t cp)
{
	char tmp[16];
	int n;

	if (cp > 0xFFFF) { /* as JSON writes it: a surrogate pair */
		cp -= 0x10000;
		n = snprintf(tmp, sizeof tmp, "\\u%04x\\u%04x", (unsigned)(0xD800 + (cp >> 10)),
		             (unsigned)(0xDC00 + (cp & 0x3FF)));
	} else {
		n = snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)cp);
	}
	put(ctx, tmp, (size_t)n);
}

size_t text_escape(const char *text, size_t len, size_t max, unsigned flags, text_sink *put,
                   void *ctx)
{
	const unsigned char *s = (const unsigned char *)text;
	const unsigned refused =
	        TEXT_CONTROL | (flags & TEXT_ESCAPE_DECEPTIVE ? TEXT_DECEPTIVE : 0u);
	size_t i = 0, run = 0; /* S[run, i) is safe and not yet written */

	while (i < len && i < max) {
		const unsigned char c = s[i];
		const char *esc = NULL;
		char tmp[8];
		uint32_t cp = c;
		size_t n = 1;

		if (c == '"' || (c == '\\' && !(flags & TEXT_ESCAPE_SOURCE))) {
			esc = c == '"' ? "\\\"" : "\\\\";
		} else if ((flags & TEXT_ESCAPE_SHORT) && (c == '\n' || c == '\t' || c == '\r')) {
			esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
		} else if (c < 0x80) {
			if (!(text_class(cp) & refused)) {
				i++;
				continue;
			}
		} else if ((n = text_decode(text + i, len - i, &cp)) == 0) {
			n = 1;
			if (flags & TEXT_ESCAPE_BYTES) {
				snprintf(tmp, sizeof tmp, "\\x%02x", c);
				esc = tmp;
			} else {
				esc = "\\ufffd";
			}
		} else if (!(text_class(cp) & refused)) {
			i += n;
			continue;
		}
		/* S[i, i + N) needs an escape: write what came before, then it. */
		if (i > run)
			put(ctx, text + run, i - run);
		if (esc)
			put(ctx, esc, strlen(esc));
		else
			put_u_escape(put, ctx, cp);
		i += n;
		run = i;
	}
	if (i > run)
		put(ctx, text + run, i - run);
	return i;
}

/* ---- the locale -------------------------------------------------------- */

bool text_locale_is_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);

	return cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "UTF8") == 0);
}
