/*
 * The loading frame (view_loading.h) as text, for its goldens: the frames
 * the terminal shows while a scene loads, drawn by the same function, at
 * one size, in one load's phases.
 *
 *   loading_frame COLSxROWS [ascii]
 *
 * Prints, for each phase of a model scene's load (reading, tokenizing,
 * running the model, near its end), a line "--- loading: WHAT ---" and
 * the frame, as --headless prints frames. cli_test.sh's golden mode
 * compares it with tests/golden/ (tests/meson.build).
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/frame.h"
#include "h2o/view_loading.h"

int main(int argc, char **argv)
{
	int cols, rows;
	if ((argc != 2 && !(argc == 3 && strcmp(argv[2], "ascii") == 0)) ||
	    sscanf(argv[1], "%dx%d", &cols, &rows) != 2 || cols < 1 || rows < 1) {
		fprintf(stderr, "usage: %s COLSxROWS [ascii]\n", argv[0]);
		return 2;
	}
	/* As h2o-tui --headless sets it up: UTF-8 text, C numbers. */
	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "en_US.UTF-8");
	setlocale(LC_NUMERIC, "C");
	struct frame *f = frame_new(cols, rows, argc == 3);
	if (!f)
		return 1;
	/* What the screen is told as stories260K's model scene loads. */
	static const struct {
		const char *what;
		double fraction, elapsed;
	} at[] = {
	        {"reading", -1, 0.2},
	        {"tokenizing", 0.04, 0.6},
	        {"running the model", 0.42, 12.3},
	        {"near the end", 0.995, 95},
	};
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		const struct view_loading l = {
		        .file = "models/stories260K/story_model.json",
		        .phase = view_load_phase_of(at[i].fraction),
		        .fraction = at[i].fraction,
		        .elapsed = at[i].elapsed,
		};
		view_loading_draw(&l, f);
		char *text = frame_to_text(f);
		if (!text)
			return 1;
		printf("--- loading: %s ---\n%s", at[i].what, text);
		free(text);
	}
	frame_free(f);
	return fflush(stdout) == 0 ? 0 : 1;
}
