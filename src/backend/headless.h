/*
 * headless: the screen's frames as text, for tests and for people without a
 * terminal (design §4).
 *
 * Each frame is a line "--- step T/N ---" (after a key: "--- step T/N after
 * KEY ---") followed by exactly ROWS lines of the frame, trailing spaces
 * trimmed. The frames are drawn by the same view as the terminal's.
 */
#ifndef H2O_HEADLESS_H
#define H2O_HEADLESS_H

#include <stdbool.h>
#include <stdio.h>

struct app;

/* Check a --keys LIST (comma-separated key names). Returns 0, or -1 with a
 * message in ERR naming the bad item. */
int headless_check_keys(const char *list, char *err, size_t size);

/*
 * Print frames of APP at COLS x ROWS to OUT: with KEYS NULL, the frames of
 * steps 0..n; otherwise the frame at the app's current step, then one frame
 * after each key of the (checked) list, stopping after a key that quits.
 * Returns 0, or -1 when out of memory or OUT fails.
 */
int headless_run(struct app *app, int cols, int rows, bool ascii, const char *keys, FILE *out);

#endif
