/*
 * keys: key names to codes and back, from the KEY_NAMES table.
 */
#include "h2o/keys.h"

#include <stdio.h>
#include <string.h>

#include "h2o/text.h"

static const struct {
	uint32_t code;
	const char *name;
} names[] = {{KEYC_SPACE, "space"},
             /* The list's separator cannot name itself there. */
             {',', "comma"},
#define X(code, name) {KEYC_##code, name},
             KEY_NAMES(X)
#undef X
};

uint32_t keys_parse(const char *name)
{
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(name, names[i].name) == 0)
			return names[i].code;
	/* A single printable character names itself: ASCII, or one UTF-8
	 * sequence (so a search can be typed in any script). */
	if (name[0] > ' ' && name[0] < 0x7F && name[1] == '\0')
		return (unsigned char)name[0];
	uint32_t cp;
	const size_t len = text_decode(name, strlen(name), &cp);
	if (len > 1 && name[len] == '\0' && cp >= 0xA0 && !(text_class(cp) & TEXT_CONTROL))
		return cp;
	return KEYC_NONE;
}

/* The mouse's names, and the event each is. */
static const struct {
	const char *name;
	enum app_mouse what;
} mouse_names[] = {
        {"click", APP_MOUSE_CLICK},
        {"wheel-up", APP_MOUSE_WHEEL_UP},
        {"wheel-down", APP_MOUSE_WHEEL_DOWN},
};

/* A number from 1 to 9999 at *AT, up to END; false for anything else. */
static bool place_number(const char *at, const char *end, int *out)
{
	if (end - at < 1 || end - at > 4 || *at == '0')
		return false;
	int v = 0;
	for (; at < end; at++) {
		if (*at < '0' || *at > '9')
			return false;
		v = v * 10 + (*at - '0');
	}
	*out = v;
	return true;
}

bool keys_parse_mouse(const char *name, struct key_mouse *m)
{
	const char *colon = strchr(name, ':');
	const size_t len = colon ? (size_t)(colon - name) : strlen(name);
	for (size_t i = 0; i < sizeof mouse_names / sizeof mouse_names[0]; i++) {
		const char *n = mouse_names[i].name;
		if (strlen(n) != len || strncmp(name, n, len) != 0)
			continue;
		*m = (struct key_mouse){mouse_names[i].what, 0, 0};
		if (!colon) /* a wheel may leave its place out, a click not */
			return m->what != APP_MOUSE_CLICK;
		const char *second = strchr(colon + 1, ':');
		return second && place_number(colon + 1, second, &m->row) &&
		       place_number(second + 1, second + 1 + strlen(second + 1), &m->col);
	}
	return false;
}

const char *keys_names(char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof names[0] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " " : "",
		                        names[i].name);
	return buf;
}

const char *keys_name(uint32_t key, char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (names[i].code == key) {
			snprintf(buf, size, "%s", names[i].name);
			return buf;
		}
	}
	if (key > ' ' && key < 0x7F) {
		snprintf(buf, size, "%c", (char)key);
	} else if (key >= 0xA0 && key < KEYC_BASE && (key < 0xD800 || key > 0xDFFF) &&
	           !(text_class(key) & TEXT_CONTROL) && size > 4) {
		const size_t len = text_encode(key, buf);
		buf[len] = '\0';
	} else
		snprintf(buf, size, "U+%04X", (unsigned)key);
	return buf;
}
