/*
 * keys: the key vocabulary, named once.
 *
 * A key is a code: a printable key is its Unicode code point, every other
 * key a KEYC_ value above the Unicode range. Each key has one name, used by
 * --keys, the help overlay and the hint line: a printable key is named by
 * its character ("q", "]", "?", or one UTF-8 character such as "é"), the
 * others by the lower-case names of the KEY_NAMES table ("right", "pgdn"),
 * and space and the comma, which --keys cannot write as themselves, by
 * "space" and "comma". Actions and their bindings
 * live in the APP_ACTIONS and APP_BINDINGS tables of app.h, so the key
 * handler, --keys and the help overlay cannot drift apart.
 */
#ifndef H2O_KEYS_H
#define H2O_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KEYC_BASE 0x110000u

/* Named keys: X(code suffix, name). */
#define KEY_NAMES(X)              \
	X(RIGHT, "right")         \
	X(LEFT, "left")           \
	X(UP, "up")               \
	X(DOWN, "down")           \
	X(HOME, "home")           \
	X(END, "end")             \
	X(PGUP, "pgup")           \
	X(PGDN, "pgdn")           \
	X(BACKSPACE, "backspace") \
	X(ENTER, "enter")         \
	X(ESC, "esc")             \
	X(TAB, "tab")             \
	X(BTAB, "btab")           \
	X(RESIZE, "resize")

enum keycode {
	KEYC_NONE = 0,
	KEYC_SPACE = ' ',
	KEYC_FIRST_NAMED = KEYC_BASE,
#define X(code, name) KEYC_##code,
	KEY_NAMES(X)
#undef X
};

/* What the mouse did (app_mouse): a click of the first button, the wheel
 * turned up or down. */
enum app_mouse { APP_MOUSE_CLICK, APP_MOUSE_WHEEL_UP, APP_MOUSE_WHEEL_DOWN };

/* A mouse event as --keys names it: "click:ROW:COL" (ROW and COL from 1,
 * as a terminal's mouse reports count them), "wheel-up", "wheel-down", a
 * wheel also with ":ROW:COL" (over a walked list it moves through the
 * list). A wheel without a place has ROW and COL 0. */
struct key_mouse {
	enum app_mouse what;
	int row, col;
};

/* Parse a mouse event's name into *M. Returns false for a name that is
 * not one (a key's, or a click without its place). */
bool keys_parse_mouse(const char *name, struct key_mouse *m);
#define KEYS_MOUSE_NAMES "click:ROW:COL, wheel-up, wheel-down"

/* Parse one key name ("right", "space", "comma", "q", "]", "é"). Returns
 * KEYC_NONE for a name that is not a key. */
uint32_t keys_parse(const char *name);

/* The name of a key, as keys_parse takes it, in BUF (at least 16 bytes).
 * Returns BUF. */
const char *keys_name(uint32_t key, char *buf, size_t size);

/* Every name keys_parse takes besides a printable character, space-
 * separated ("space right left ..."), in BUF. Returns BUF. (The mouse's
 * names, KEYS_MOUSE_NAMES, are not keys.) */
const char *keys_names(char *buf, size_t size);

#endif
