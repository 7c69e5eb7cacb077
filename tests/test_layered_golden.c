/*
 * Golden frames of a scene the loader cannot read yet: layers, query heads
 * sharing kv heads and a prompt, built in C (layered_fixture.h) and drawn
 * by headless_run exactly as h2o-tui --headless draws a file's scene.
 *
 *   test_layered_golden ROOT NAME COLSxROWS HEAVY RECENT KEYS [ascii]
 *
 * The scene is fixed: 16 tokens of dim 4, 3 layers of 4 query heads
 * sharing 2 kv heads, a prompt of 8. Its frames must equal
 * ROOT/tests/golden/NAME; with H2O_REGEN=1 they rewrite it instead, as
 * cli_test.sh does for the goldens of the command line.
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/app.h"
#include "headless.h"
#include "layered_fixture.h"

int main(int argc, char **argv)
{
	if (argc != 7 && !(argc == 8 && strcmp(argv[7], "ascii") == 0)) {
		fprintf(stderr, "usage: %s ROOT NAME COLSxROWS HEAVY RECENT KEYS [ascii]\n",
		        argv[0]);
		return 2;
	}
	/* As h2o-tui --headless sets it up: UTF-8 text, C numbers. */
	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "en_US.UTF-8");
	setlocale(LC_NUMERIC, "C");
	int cols, rows;
	if (sscanf(argv[3], "%dx%d", &cols, &rows) != 2)
		return 2;
	const int heavy = atoi(argv[4]), recent = atoi(argv[5]);
	struct scene *sc = fixture_layered(16, 4, heavy, recent, 3, 4, 2, 8, 11);
	struct app app;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out || app_init(&app, sc, heavy, recent, -1, POLICY_FULL) != 0)
		return 1;
	const int rc = headless_run(&app, cols, rows, argc == 8, argv[6], out);
	fclose(out);
	app_done(&app);
	scene_free(sc);
	if (rc != 0)
		return 1;

	char path[4096];
	snprintf(path, sizeof path, "%s/tests/golden/%s", argv[1], argv[2]);
	const char *regen = getenv("H2O_REGEN");
	if (regen && strcmp(regen, "1") == 0) {
		FILE *g = fopen(path, "w");
		if (!g || fwrite(text, 1, len, g) != len || fclose(g) != 0)
			return 1;
		printf("rewrote tests/golden/%s\n", argv[2]);
		free(text);
		return 0;
	}
	FILE *g = fopen(path, "r");
	if (!g) {
		fprintf(stderr, "no golden %s (H2O_REGEN=1 writes it)\n", path);
		return 1;
	}
	char *want = malloc(len + 2);
	const size_t got = fread(want, 1, len + 1, g);
	fclose(g);
	int differs = got != len || memcmp(want, text, len) != 0;
	if (differs) {
		/* Where it starts to differ, for the log. */
		size_t i = 0, line = 1;
		while (i < len && i < got && want[i] == text[i])
			line += text[i++] == '\n';
		fprintf(stderr, "frames differ from tests/golden/%s from line %zu\n", argv[2],
		        line);
		fwrite(text, 1, len, stderr);
	}
	free(want);
	free(text);
	return differs;
}
