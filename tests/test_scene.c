/*
 * test_scene: scene loading (src/scene/) and the JSON locator (src/scene/jsonloc.c).
 *
 * Good scenes are checked field by field (inline, generated and from .npy
 * files); every bad scene under tests/bad/
 * is loaded through scene_load_file and its error line compared with the
 * .err file beside it, byte for byte, as the CLI prints it. The locator is
 * tested on its own, and against cJSON through the loader: on thousands of
 * mangled scenes the two must agree on which texts are malformed, since a
 * disagreement would point users at the wrong place.
 *
 * Usage: test_scene SOURCE_ROOT (or H2O_SOURCE_ROOT in the environment).
 * After an intended change of wording, rewrite the .err files with
 *   H2O_UPDATE_GOLDEN=1 test_scene SOURCE_ROOT
 * and review the diff.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h2o/generate.h"
#include "h2o/heads.h"
#include "h2o/policy.h"
#include "h2o/policy_settings.h"
#include "h2o/scene.h"
#include "../src/scene/jsonloc.h"

/* ---- helpers ---------------------------------------------------------- */

/* The files a scene names may be anywhere (--allow-paths). */
static const struct scene_options allow_paths = {.allow_paths = true};

static struct scene *load_ok_with(const char *name, const char *text,
                                  const struct scene_options *options)
{
	struct scene *sc = NULL;
	char err[SCENE_ERROR_MAX] = "";
	int rc = scene_load_text_opts(name, text, strlen(text), options, &sc, err);
	if (rc != 0)
		print_error("unexpected error: %s\n", err);
	assert_int_equal(rc, 0);
	assert_non_null(sc);
	return sc;
}

static struct scene *load_ok(const char *name, const char *text)
{
	return load_ok_with(name, text, NULL);
}

/* Load TEXT as NAME, expect failure, and return the error line (static
 * buffer). */
static const char *load_err_with(const char *name, const char *text, size_t len,
                                 const struct scene_options *options)
{
	static char err[SCENE_ERROR_MAX];
	struct scene *sc = (struct scene *)&err; /* must be reset to NULL */
	int rc = scene_load_text_opts(name, text, len, options, &sc, err);
	assert_int_equal(rc, -1);
	assert_null(sc);
	assert_null(strchr(err, '\n'));
	return err;
}

static const char *load_err(const char *text, size_t len)
{
	return load_err_with("t.json", text, len, NULL);
}

static const char *load_err_s(const char *text)
{
	return load_err(text, strlen(text));
}

/* A growing string for building large scenes. */
struct buf {
	char *s;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	if (b->len + (size_t)n + 1 > b->cap) {
		b->cap = (b->len + (size_t)n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		assert_non_null(b->s);
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static const char vector_scene[] =
        "{\n"
        "  \"title\": \"Two tokens\",\n"
        "  \"description\": \"The spec's example.\",\n"
        "  \"heavy\": 2,\n"
        "  \"recent\": 1,\n"
        "  \"dim\": 2,\n"
        "  \"tokens\": [\n"
        "    {\"text\": \"The\", \"q\": [0.1, 0.2], \"k\": [0.3, 0.4], \"v\": [1.0, 0.0]},\n"
        "    {\"text\": \"cat\", \"q\": [0.9, 0.1], \"k\": [0.5, 0.5], \"v\": [0.0, 1.0]}\n"
        "  ]\n"
        "}\n";

/* ---- good scenes ------------------------------------------------------ */

static void test_vector_scene(void **state)
{
	(void)state;
	struct scene *sc = load_ok("scenes/two.json", vector_scene);

	assert_string_equal(sc->title, "Two tokens");
	assert_string_equal(sc->description, "The spec's example.");
	assert_int_equal(sc->heavy, 2);
	assert_int_equal(sc->recent, 1);
	assert_int_equal(sc->dim, 2);
	assert_int_equal(sc->n, 2);
	assert_int_equal(sc->mode, SCENE_VECTOR);
	assert_string_equal(sc->text[0], "The");
	assert_string_equal(sc->text[1], "cat");
	const double q[] = {0.1, 0.2, 0.9, 0.1}, k[] = {0.3, 0.4, 0.5, 0.5},
	             v[] = {1.0, 0.0, 0.0, 1.0};
	for (int i = 0; i < 4; i++) {
		assert_true(sc->q[i] == q[i]);
		assert_true(sc->k[i] == k[i]);
		assert_true(sc->v[i] == v[i]);
	}
	assert_null(sc->attn);
	assert_true(sc->scale == 1.0 / sqrt(2.0));
	scene_free(sc);
}

static void test_attention_scene(void **state)
{
	(void)state;
	struct scene *sc =
	        load_ok("a.json", "{\"heavy\": 1, \"recent\": 1, \"dim\": 2, \"tokens\": ["
	                          "{\"text\": \"The\", \"attn\": [1.0], \"v\": [1, 0]},"
	                          "{\"text\": \"cat\", \"attn\": [0.45, 0.55], \"v\": [0, 1]},"
	                          "{\"text\": \"sat\", \"attn\": [0.15, 0.45, 0.40], "
	                          "\"v\": [0.5, 0.5]}]}");
	assert_int_equal(sc->mode, SCENE_ATTENTION);
	assert_int_equal(sc->n, 3);
	assert_null(sc->q);
	assert_null(sc->k);
	assert_non_null(sc->v);
	assert_true(sc->v[5] == 0.5);
	const double row2[] = {0.15, 0.45, 0.40};
	assert_true(sc->attn[scene_attn_offset(0)] == 1.0);
	assert_true(sc->attn[scene_attn_offset(1) + 1] == 0.55);
	for (int j = 0; j < 3; j++)
		assert_true(sc->attn[scene_attn_offset(2) + (size_t)j] == row2[j]);
	scene_free(sc);

	/* Without values: v is NULL, and so is everything vector-shaped. */
	sc = load_ok("a.json", "{\"heavy\": 0, \"recent\": 1, \"dim\": 3, \"tokens\": ["
	                       "{\"text\": \"a\", \"attn\": [1]},"
	                       "{\"text\": \"b\", \"attn\": [0.5, 0.5]}]}");
	assert_int_equal(sc->mode, SCENE_ATTENTION);
	assert_null(sc->v);
	assert_null(sc->q);
	assert_int_equal(sc->dim, 3);
	scene_free(sc);
}

static void test_defaults(void **state)
{
	(void)state;
	const char *text =
	        "{\"heavy\": 1, \"recent\": 1, \"dim\": 4, \"tokens\": ["
	        "{\"text\": \"a\", \"q\": [1,2,3,4], \"k\": [1,2,3,4], \"v\": [1,2,3,4]}]}";
	struct scene *sc = load_ok("some/dir/cat_sat.json", text);
	assert_string_equal(sc->title, "cat_sat.json");
	assert_string_equal(sc->description, "");
	assert_true(sc->scale == 0.5);
	scene_free(sc);

	sc = load_ok("plain.json", text);
	assert_string_equal(sc->title, "plain.json");
	scene_free(sc);

	/* A real file: the title is its base name, whatever the directory. */
	char path[] = "/tmp/h2o-scene-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	char err[SCENE_ERROR_MAX];
	assert_int_equal(scene_load_file(path, &sc, err), 0);
	assert_string_equal(sc->title, strrchr(path, '/') + 1);
	scene_free(sc);
	unlink(path);

	/* An explicit scale wins. */
	sc = load_ok("s.json",
	             "{\"scale\": 0.25, \"heavy\": 1, \"recent\": 0, \"dim\": 1, "
	             "\"tokens\": [{\"text\": \"a\", \"q\": [1], \"k\": [2], \"v\": [3]}]}");
	assert_true(sc->scale == 0.25);
	scene_free(sc);
}

static void test_notes_ignored(void **state)
{
	(void)state;
	struct scene *sc = load_ok(
	        "x.json", "{\"x-note\": {\"anything\": [1, \"two\", null, {\"deep\": true}]},"
	                  " \"heavy\": 1, \"x-\": 0, \"x-note\": \"twice is fine\", \"recent\": 1,"
	                  " \"dim\": 1, \"tokens\": [{\"x-why\": \"a note\", \"text\": \"a\","
	                  " \"attn\": [1], \"x-attn\": \"not a row\"}], \"x-tail\": []}");
	assert_int_equal(sc->n, 1);
	assert_int_equal(sc->mode, SCENE_ATTENTION);
	scene_free(sc);

	/* Nesting right up to cJSON's limit is fine inside a note. */
	struct buf b = {0};
	buf_add(&b, "{\"x-deep\": ");
	for (int i = 0; i < JSONLOC_MAX_DEPTH - 1; i++)
		buf_add(&b, "[");
	for (int i = 0; i < JSONLOC_MAX_DEPTH - 1; i++)
		buf_add(&b, "]");
	buf_add(&b, ", \"heavy\": 1, \"recent\": 1, \"dim\": 1, \"tokens\": "
	            "[{\"text\": \"a\", \"attn\": [1]}]}");
	sc = load_ok("deep.json", b.s);
	scene_free(sc);
	free(b.s);
}

static void test_text_as_given(void **state)
{
	(void)state;
	/* Control characters, escapes and bytes that are not UTF-8 stay as
	 * they are: the renderer escapes them, the loader does not. */
	struct scene *sc =
	        load_ok("t.json", "\xEF\xBB\xBF{\"heavy\": 1, \"recent\": 1, \"dim\": 1, "
	                          "\"tokens\": [{\"text\": \"\\u001b[31m\\t\xff\xfe "
	                          "\xe2\x80\xae\", \"attn\": [1]}]}");
	assert_string_equal(sc->text[0], "\x1b[31m\t\xff\xfe \xe2\x80\xae");
	scene_free(sc);
}

static void test_limits_accepted(void **state)
{
	(void)state;
	/* The largest budgets and dim are allowed; so are weights that sum to
	 * 1 within the tolerance. */
	struct buf b = {0};
	buf_add(&b, "{\"heavy\": %d, \"recent\": %d, \"dim\": %d, \"tokens\": [{\"text\": \"a\"",
	        SCENE_MAX_BUDGET, SCENE_MAX_BUDGET, SCENE_MAX_DIM);
	for (int f = 0; f < 3; f++) {
		buf_add(&b, ", \"%c\": [", "qkv"[f]);
		for (int j = 0; j < SCENE_MAX_DIM; j++)
			buf_add(&b, "%s%d", j ? "," : "", j % 7);
		buf_add(&b, "]");
	}
	buf_add(&b, "}]}");
	struct scene *sc = load_ok("big.json", b.s);
	assert_int_equal(sc->dim, SCENE_MAX_DIM);
	assert_true(sc->v[SCENE_MAX_DIM - 1] == (SCENE_MAX_DIM - 1) % 7);
	scene_free(sc);
	free(b.s);

	sc = load_ok("sum.json", "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"tokens\": ["
	                         "{\"text\": \"a\", \"attn\": [1.0000005]},"
	                         "{\"text\": \"b\", \"attn\": [0.5, 0.4999995]}]}");
	scene_free(sc);
	assert_string_equal(load_err_s("{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"tokens\": ["
	                               "{\"text\": \"a\", \"attn\": [1.000002]}]}"),
	                    "t.json:1:70: tokens[0].attn: weights sum to 1.000002, expected 1 "
	                    "(within 1e-6)");

	/* Text of exactly the limit is fine. */
	char *text = malloc(SCENE_MAX_TEXT_BYTES + 1);
	memset(text, 'a', SCENE_MAX_TEXT_BYTES);
	text[SCENE_MAX_TEXT_BYTES] = '\0';
	b = (struct buf){0};
	buf_add(&b,
	        "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"tokens\": [{\"text\": \"%s\", "
	        "\"attn\": [1]}]}",
	        text);
	sc = load_ok("t.json", b.s);
	assert_int_equal(strlen(sc->text[0]), SCENE_MAX_TEXT_BYTES);
	scene_free(sc);
	free(b.s);
	free(text);
}

/* ---- bad scenes ------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	struct buf b = {0};
	char chunk[4096];
	size_t n;
	buf_add(&b, "%s", "");
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (b.len + n + 1 > b.cap) {
			b.cap = (b.len + n + 1) * 2;
			b.s = realloc(b.s, b.cap);
		}
		memcpy(b.s + b.len, chunk, n);
		b.len += n;
		b.s[b.len] = '\0';
	}
	fclose(f);
	*len = b.len;
	return b.s;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every tests/bad/NAME.json fails with exactly the line in NAME.err. */
static void test_bad_files(void **state)
{
	(void)state;
	const bool update = getenv("H2O_UPDATE_GOLDEN") && *getenv("H2O_UPDATE_GOLDEN");
	DIR *dir = opendir("tests/bad");
	assert_non_null(dir);
	char *names[512];
	int n = 0, failed = 0;
	struct dirent *de;
	while ((de = readdir(dir)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0) {
			assert_true(n < 512);
			names[n++] = strdup(de->d_name);
		}
	}
	closedir(dir);
	qsort(names, (size_t)n, sizeof names[0], cmp_names);
	assert_true(n >= 60);
	/* A scene's "policies" checked against the table, as h2o-tui does. */
	const char *table[POLICY_COUNT + 1];
	unsigned keyed = 0, queried = 0;
	for (int p = 0; p < POLICY_COUNT; p++) {
		table[p] = policies[p]->name;
		keyed |= policy_reads_keys((enum policy_id)p) ? 1u << p : 0u;
		queried |= policy_reads_queries((enum policy_id)p) ? 1u << p : 0u;
	}
	table[POLICY_COUNT] = NULL;
	const struct scene_options with_table = {.policy_names = table,
	                                         .policy_keys = keyed,
	                                         .check_setting = policy_settings_check_one,
	                                         .policy_queries = queried};

	for (int i = 0; i < n; i++) {
		char json[600], errpath[600], err[SCENE_ERROR_MAX], line[SCENE_ERROR_MAX + 1];
		struct scene *sc = NULL;
		snprintf(json, sizeof json, "tests/bad/%s", names[i]);
		snprintf(errpath, sizeof errpath, "tests/bad/%.*s.err", (int)(strlen(names[i]) - 5),
		         names[i]);
		if (scene_load_file_opts(json, &with_table, &sc, err) == 0) {
			print_error("%s: loaded, but it should fail\n", json);
			scene_free(sc);
			failed++;
			continue;
		}
		assert_null(sc);
		assert_null(strchr(err, '\n'));
		snprintf(line, sizeof line, "%s\n", err);
		if (update) {
			FILE *f = fopen(errpath, "w");
			assert_non_null(f);
			fputs(line, f);
			fclose(f);
			continue;
		}
		size_t len;
		char *want = read_file(errpath, &len);
		if (want == NULL) {
			print_error("%s: missing (run with H2O_UPDATE_GOLDEN=1)\n", errpath);
			failed++;
		} else if (strcmp(want, line) != 0) {
			print_error("%s:\n  want: %s  got:  %s", json, want, line);
			failed++;
		}
		free(want);
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	assert_int_equal(failed, 0);
}

static void test_unreadable(void **state)
{
	(void)state;
	struct scene *sc = NULL;
	char err[SCENE_ERROR_MAX];

	assert_int_equal(scene_load_file("tests/bad/no-such-file.json", &sc, err), -1);
	assert_null(sc);
	assert_string_equal(err, "tests/bad/no-such-file.json: cannot open: No such file or "
	                         "directory");
	assert_int_equal(scene_load_file("tests/bad", &sc, err), -1);
	assert_string_equal(err, "tests/bad: cannot open: Is a directory");

	/* Too large: refused from its size, before a byte is read. */
	char path[] = "/tmp/h2o-huge-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, SCENE_MAX_FILE_BYTES + 1), 0); /* sparse */
	close(fd);
	assert_int_equal(scene_load_file(path, &sc, err), -1);
	char want[SCENE_ERROR_MAX];
	snprintf(want, sizeof want, "%s: cannot load: file is larger than 256 MiB", path);
	assert_string_equal(err, want);
	unlink(path);

	/* The same for text in memory: LEN alone decides, TEXT is not read. */
	char one = '{';
	assert_int_equal(
	        scene_load_text("m.json", &one, (size_t)SCENE_MAX_FILE_BYTES + 1, &sc, err), -1);
	assert_string_equal(err, "m.json: cannot load: file is larger than 256 MiB");
}

static void test_text_not_terminated(void **state)
{
	(void)state;
	/* scene_load_text must not read past LEN (AddressSanitizer checks). */
	size_t len = strlen(vector_scene);
	char *exact = malloc(len);
	memcpy(exact, vector_scene, len);
	struct scene *sc = NULL;
	char err[SCENE_ERROR_MAX];
	assert_int_equal(scene_load_text("e.json", exact, len, &sc, err), 0);
	scene_free(sc);
	/* ... nor when the text is cut inside a string or a number. */
	assert_int_equal(scene_load_text("e.json", exact, 50, &sc, err), -1);
	assert_string_equal(err, "e.json:3:18: description: syntax error: unterminated string (no "
	                         "closing '\"' before the end of the file)");
	assert_int_equal(scene_load_text("e.json", exact, 79, &sc, err), -1);
	assert_string_equal(err, "e.json:4:13: $: syntax error: unexpected end of file, "
	                         "expected ',' or '}'");
	free(exact);
	scene_free(NULL);
}

static void test_too_many_tokens(void **state)
{
	(void)state;
	/* The count is checked before anything about the tokens themselves,
	 * so cheap stand-ins are enough to reach the limits. */
	struct buf b = {0};
	buf_add(&b, "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"tokens\": [");
	for (int i = 0; i <= SCENE_MAX_ATTN_TOKENS; i++)
		buf_add(&b, "%s{\"text\": \"\", \"attn\": [1]}", i ? "," : "");
	buf_add(&b, "]}");
	assert_string_equal(load_err(b.s, b.len), "t.json:1:47: tokens: an attention scene has at "
	                                          "most 8192 tokens, got 8193");
	free(b.s);

	b = (struct buf){0};
	buf_add(&b, "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"tokens\": [0");
	for (int i = 0; i < SCENE_MAX_TOKENS; i++)
		buf_add(&b, ",0");
	buf_add(&b, "]}");
	assert_string_equal(load_err(b.s, b.len),
	                    "t.json:1:47: tokens: expected at most 1000000 tokens, got 1000001");
	free(b.s);
}

static void test_messages(void **state)
{
	(void)state;
	/* A column counts code points, not bytes. */
	assert_string_equal(load_err_s("{\"title\": \"\xc3\xa9t\xc3\xa9 \xe6\x97\xa5\", "
	                               "\"heavy\": x}"),
	                    "t.json:1:29: heavy: syntax error: expected a value, got 'x'");
	/* A BOM is not a column. */
	assert_string_equal(
	        load_err_s(
	                "\xEF\xBB\xBF{\"heavy\": -3, \"recent\": 1, \"dim\": 1, \"tokens\": []}"),
	        "t.json:1:11: heavy: expected an integer >= 0, got -3");
	/* Numbers are quoted as written; long ones are cut. */
	assert_string_equal(
	        load_err_s("{\"heavy\": 2.500000000000000000000000000001, \"recent\": 1, "
	                   "\"dim\": 1, \"tokens\": []}"),
	        "t.json:1:11: heavy: expected an integer >= 0, got "
	        "2.5000000000000000000000...");
	/* Error text from the file is made safe to print. */
	assert_string_equal(
	        load_err_s("{\"\xe2\x80\xae\x01"
	                   "ab\": 1}"),
	        "t.json:1:2: $: unknown field \"\\u202e\\u0001ab\" (only names starting "
	        "with \"x-\" are free for notes)");
	/* Case slips are caught by "did you mean". */
	assert_string_equal(load_err_s("{\"Heavy\": 1}"),
	                    "t.json:1:2: $: unknown field \"Heavy\" (did you mean \"heavy\"? only "
	                    "names starting with \"x-\" are free for notes)");
	/* The second of two duplicates is the one pointed at. */
	assert_string_equal(load_err_s("{\"dim\": 1,\n \"dim\": 1}"),
	                    "t.json:2:2: $: duplicate field \"dim\"");
	/* A token with both modes: point at whichever came second. */
	assert_string_equal(load_err_s("{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"tokens\": ["
	                               "{\"k\": [1], \"attn\": [1], \"text\": \"a\"}]}"),
	                    "t.json:1:59: tokens[0]: has both \"attn\" and \"k\"; a scene gives "
	                    "either attention rows (\"attn\") or vectors (\"q\", \"k\", \"v\")");
	/* A root that is not an object. */
	assert_string_equal(load_err_s("  \"scene\"  "),
	                    "t.json:1:3: $: expected a JSON object, got a string (\"scene\")");
	assert_string_equal(load_err_s(""), "t.json:1:1: $: the file is empty, expected a JSON "
	                                    "object");
	assert_string_equal(load_err_s("{} {}"), "t.json:1:4: $: syntax error: expected the end "
	                                         "of the file after the root object, got '{'");
	assert_string_equal(load_err("{\"a\": 1}\0", 9),
	                    "t.json:1:9: $: syntax error: expected the end of the file after the "
	                    "root object, got a NUL byte");
}

/* ---- generated scenes ------------------------------------------------- */

static const char generated_scene[] =
        "{\"title\": \"gen\", \"heavy\": 4, \"recent\": 4, \"dim\": 16,\n"
        " \"generate\": {\"count\": 40, \"seed\": 7, \"text\": \"the cat sat\",\n"
        "   \"noise\": 0.5, \"sinks\": {\"count\": 2, \"strength\": 3},\n"
        "   \"locality\": {\"strength\": 1.5, \"width\": 4, \"pairs\": 3},\n"
        "   \"topics\": {\"rate\": 0.1, \"positions\": [10], \"strength\": 2.5, \"text\": \"T\"},\n"
        "   \"needles\": [{\"pos\": 5, \"query_at\": 30, \"strength\": 9, \"text\": \"N\"}],\n"
        "   \"x-note\": \"free\"}}";

static uint64_t checksum(const double *x, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t u;
		memcpy(&u, &x[i], sizeof u);
		for (int b = 0; b < 8; b++) {
			h ^= (u >> (8 * b)) & 0xFF;
			h *= 0x100000001B3ull;
		}
	}
	return h;
}

static void test_generated_scene(void **state)
{
	(void)state;
	struct scene *a = load_ok("scenes/gen.json", generated_scene);
	struct scene *b = load_ok("scenes/gen.json", generated_scene);
	assert_int_equal(a->mode, SCENE_VECTOR);
	assert_int_equal(a->n, 40);
	assert_int_equal(a->dim, 16);
	assert_true(a->scale == 0.25);
	assert_non_null(a->v);
	assert_null(a->attn);
	assert_string_equal(a->watch, "");

	/* Same file, same numbers, bit for bit. */
	const size_t n = 40 * 16;
	assert_memory_equal(a->q, b->q, n * sizeof(double));
	assert_memory_equal(a->k, b->k, n * sizeof(double));
	assert_memory_equal(a->v, b->v, n * sizeof(double));

	/* What the loader passes on is exactly the file's fields. */
	static const int topics[] = {10};
	static const struct generate_needle needle[] = {{5, 30, 9.0, "N"}};
	const struct generate_params p = {.count = 40,
	                                  .dim = 16,
	                                  .seed = 7,
	                                  .text = "the cat sat",
	                                  .noise = 0.5,
	                                  .sink_count = 2,
	                                  .sink_strength = 3.0,
	                                  .loc_pairs = 3,
	                                  .loc_strength = 1.5,
	                                  .loc_width = 4.0,
	                                  .topic_positions = topics,
	                                  .n_topic_positions = 1,
	                                  .topic_rate = 0.1,
	                                  .topic_strength = 2.5,
	                                  .topic_text = "T",
	                                  .needles = needle,
	                                  .n_needles = 1};
	double *q = malloc(n * sizeof *q), *k = malloc(n * sizeof *k), *v = malloc(n * sizeof *v);
	char **text = calloc(40, sizeof *text);
	assert_int_equal(generate_fill(&p, q, k, v, text), 0);
	assert_memory_equal(a->q, q, n * sizeof(double));
	assert_memory_equal(a->k, k, n * sizeof(double));
	assert_memory_equal(a->v, v, n * sizeof(double));
	for (int i = 0; i < 40; i++) {
		assert_string_equal(a->text[i], text[i]);
		free(text[i]);
	}
	free(text);
	free(q);
	free(k);
	free(v);
	assert_string_equal(a->text[0], "the");
	assert_string_equal(a->text[4], "cat");
	assert_string_equal(a->text[5], "N");
	assert_string_equal(a->text[10], "T");

	/* The golden checksum of this small scene: a change to the model or
	 * to what the loader passes it shows here. */
	uint64_t h = 0xCBF29CE484222325ull;
	h = checksum(a->q, n, h);
	h = checksum(a->k, n, h);
	h = checksum(a->v, n, h);
	if (h != 0x488fdb39f365bc42ull)
		print_error("checksum 0x%016llx\n", (unsigned long long)h);
	assert_true(h == 0x488fdb39f365bc42ull);
	scene_free(a);
	scene_free(b);
}

static void test_generated_defaults(void **state)
{
	(void)state;
	/* Only count and seed: noise 1, no sink, topic, needle or locality. */
	struct scene *sc = load_ok("d.json", "{\"heavy\": 1, \"recent\": 1, \"dim\": 8, "
	                                     "\"generate\": {\"count\": 3, \"seed\": 0}}");
	assert_string_equal(sc->text[0], "t0");
	assert_string_equal(sc->text[2], "t2");
	for (int i = 0; i < 3; i++) {
		assert_true(sc->q[i * 8 + 0] == 0.0 && sc->k[i * 8 + 0] == 0.0); /* sink */
		assert_true(sc->q[i * 8 + 1] == 0.0 && sc->k[i * 8 + 1] == 0.0); /* topic */
		assert_true(sc->k[i * 8 + 2] != 0.0);                            /* noise */
	}
	scene_free(sc);

	/* Empty objects take each knob's defaults. */
	sc = load_ok("d.json", "{\"heavy\": 1, \"recent\": 1, \"dim\": 64, \"scale\": 0.125, "
	                       "\"generate\": {\"count\": 3, \"seed\": 0, \"noise\": 0, "
	                       "\"sinks\": {}, \"locality\": {}, \"topics\": {}}}");
	assert_true(sc->scale == 0.125);
	assert_true(sc->q[0] == 4.0 * 8.0); /* sink strength 4, times sqrt(64) */
	assert_true(sc->k[0] == 1.0 && sc->k[64] == 0.0);
	assert_true(sc->q[1] == 3.0 * 8.0); /* topic strength 3 */
	/* 16 locality pairs of strength 2: q's first pair at position 0. */
	assert_true(sc->k[2] == 1.0 && sc->k[3] == 0.0);
	assert_true(fabs(sc->q[2] - 8.0 * 2.0 / 16) < 1e-15);
	assert_true(sc->k[2 + 32] == 0.0); /* no noise: the rest is zero */
	scene_free(sc);

	/* The largest scene the limits allow is refused cheaply above them. */
	assert_string_equal(
	        load_err_s("{\"heavy\": 1, \"recent\": 1, \"dim\": 4096, "
	                   "\"generate\": {\"count\": 16385, \"seed\": 0}}"),
	        "t.json:1:62: generate.count: 16385 tokens x dim 4096 = 67112960 numbers in each "
	        "of q, k and v, more than the 67108864 allowed");
}

/* Integer fields take the number as written in the file: a literal that is
 * exactly an integer (2.0 and 1e1 are), never one a double rounds to an
 * integer (0.99999999999999999 to 1, 1e-400 to 0, 2^53 + 1 to 2^53). */
static void test_integers_as_written(void **state)
{
	(void)state;
	struct scene *sc = load_ok("i.json", "{\"heavy\": 2.0, \"recent\": 1e0, \"dim\": 200e-2, "
	                                     "\"heads\": 0.1E1, \"tokens\": [{\"text\": \"a\", "
	                                     "\"attn\": [1]}]}");
	assert_int_equal(sc->heavy, 2);
	assert_int_equal(sc->recent, 1);
	assert_int_equal(sc->dim, 2);
	assert_int_equal(sc->heads, 1);
	scene_free(sc);
	sc = load_ok("i.json", "\xEF\xBB\xBF{\"heavy\": -0e-400, \"recent\": 0.010e2, \"dim\": 1, "
	                       "\"tokens\": [{\"text\": \"a\", \"attn\": [1]}]}");
	assert_int_equal(sc->heavy, 0);
	assert_int_equal(sc->recent, 1);
	scene_free(sc);

	static const char *const refused[][2] = {
	        {"2.0000000000000001", "expected an integer >= 0, got 2.0000000000000001"},
	        {"0.99999999999999999", "expected an integer >= 0, got 0.99999999999999999"},
	        {"1e-400", "expected an integer >= 0, got 1e-400"},
	        {"-1e-400", "expected an integer >= 0, got -1e-400"},
	        {"-1", "expected an integer >= 0, got -1"},
	        {"1e19", "must be at most 1000000, got 1e19"},
	        {"1e999999999999", "must be at most 1000000, got 1e999999999999"},
	        {"12345678901234567890", "must be at most 1000000, got 12345678901234567890"},
	        {"1000001", "must be at most 1000000, got 1000001"},
	        {"1000000.5", "expected an integer >= 0, got 1000000.5"},
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		char json[256], want[SCENE_ERROR_MAX];
		snprintf(json, sizeof json,
		         "\xEF\xBB\xBF{\"x-a\": [1, {\"b\": 2}], \"recent\": 1, \"dim\": 1,\n"
		         " \"x-\\\"\\\\\": \"\\\\\\\"]}\", \"heavy\": %s, \"tokens\": [{\"text\": "
		         "\"a\", \"attn\": [1]}]}",
		         refused[i][0]);
		snprintf(want, sizeof want, "t.json:2:31: heavy: %s", refused[i][1]);
		assert_string_equal(load_err_s(json), want);
	}

	/* The seed, up to 2^53 exactly; positions read in order. */
	static const char gen[] = "{\"heavy\": 1, \"recent\": 1, \"dim\": 16, \"generate\": "
	                          "{\"count\": 30, \"seed\": %s, \"topics\": {\"positions\": "
	                          "%s}}}";
	char json[512];
	snprintf(json, sizeof json, gen, "9007199254740992", "[3, 10, 20]");
	struct scene *a = load_ok("g.json", json);
	snprintf(json, sizeof json, gen, "9.007199254740992e15", "[ 3 ,1e1,\n\t20.0 ]");
	struct scene *b = load_ok("g.json", json);
	assert_memory_equal(a->q, b->q, 30 * 16 * sizeof(double));
	assert_memory_equal(a->k, b->k, 30 * 16 * sizeof(double));
	scene_free(a);
	scene_free(b);
	snprintf(json, sizeof json, gen, "9007199254740993", "[]");
	assert_string_equal(load_err_s(json),
	                    "t.json:1:72: generate.seed: expected an integer from 0 to 2^53 "
	                    "(9007199254740992), got 9007199254740993");
	snprintf(json, sizeof json, gen, "4.5", "[]");
	assert_string_equal(load_err_s(json), "t.json:1:72: generate.seed: expected an integer "
	                                      "from 0 to 2^53 (9007199254740992), got 4.5");
	snprintf(json, sizeof json, gen, "1", "[1, 2.5e0]");
	assert_string_equal(load_err_s(json), "t.json:1:103: generate.topics.positions[1]: "
	                                      "expected an integer >= 0, got 2.5e0");
}

/* ---- .npy scenes ------------------------------------------------------ */

static void test_npy_scene(void **state)
{
	(void)state;
	struct scene *sc = NULL;
	char err[SCENE_ERROR_MAX];

	if (scene_load_file("tests/bad/npy/good.json", &sc, err) != 0)
		print_error("%s\n", err);
	assert_non_null(sc);
	assert_int_equal(sc->mode, SCENE_VECTOR);
	assert_int_equal(sc->n, 3);
	const double q[] = {1, 0, 0, 1, 0.5, 0.5}, k[] = {1, 0, 0.5, 0.5, 0, 2},
	             v[] = {2, 0, 0, -1, 1, 1};
	for (int i = 0; i < 6; i++)
		assert_true(sc->q[i] == q[i] && sc->k[i] == k[i] && sc->v[i] == v[i]);
	assert_string_equal(sc->text[0], "The"); /* its "\r\n" is one line break */
	assert_string_equal(sc->text[1], "cat");
	assert_string_equal(sc->text[2], "sat");
	scene_free(sc);

	/* Text as an array, or none; names relative to the scene's directory. */
	sc = load_ok("tests/bad/npy/x.json",
	             "{\"heavy\": 1, \"recent\": 1, \"dim\": 2, \"q\": \"good_k_plain.npy\", "
	             "\"k\": \"good_v_v3.npy\", \"v\": \"good_q_f4.npy\", "
	             "\"text\": [\"a\", \"\", \"\\u001b\"]}");
	assert_true(sc->q[5] == 2.0 && sc->k[0] == 2.0 && sc->v[4] == 0.5);
	assert_string_equal(sc->text[1], "");
	assert_string_equal(sc->text[2], "\x1b");
	scene_free(sc);
	sc = load_ok("tests/bad/npy/x.json", "{\"heavy\": 1, \"recent\": 1, \"dim\": 2, \"q\": "
	                                     "\"good_q_f4.npy\", \"k\": \"good_q_f4.npy\", \"v\": "
	                                     "\"good_q_f4.npy\", \"watch\": \"look\"}");
	assert_string_equal(sc->text[0], "t0");
	assert_string_equal(sc->text[2], "t2");
	assert_string_equal(sc->watch, "look");
	scene_free(sc);
}

/* Write LEN bytes of TEXT into a temporary file; returns its path. */
static char *temp_file(const char *text, size_t len)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/h2o-text-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

/* Load TEXT as t.json, its files anywhere (the temporary ones are in
 * /tmp), and expect failure. */
static const char *load_err_paths(const char *text)
{
	return load_err_with("t.json", text, strlen(text), &allow_paths);
}

static const char *npy_with_text(const char *path)
{
	static char json[512];
	snprintf(
	        json, sizeof json,
	        "{\"heavy\": 1, \"recent\": 1, \"dim\": 2, \"q\": \"tests/bad/npy/good_q_f4.npy\", "
	        "\"k\": \"tests/bad/npy/good_q_f4.npy\", \"v\": \"tests/bad/npy/good_q_f4.npy\", "
	        "\"text\": \"%s\"}",
	        path);
	return json;
}

static void test_npy_text_file(void **state)
{
	(void)state;
	/* No final line break, empty lines, bytes kept as they are. */
	char *path = temp_file("a\n\n\xff\t", 5);
	struct scene *sc = load_ok_with("t.json", npy_with_text(path), &allow_paths);
	assert_string_equal(sc->text[0], "a");
	assert_string_equal(sc->text[1], "");
	assert_string_equal(sc->text[2], "\xff\t");
	scene_free(sc);
	unlink(path);

	char want[SCENE_ERROR_MAX];
	path = temp_file("a\nb\0c\nd\n", 8);
	snprintf(want, sizeof want, "t.json:1:153: text: %s: line 2 holds a NUL byte", path);
	assert_string_equal(load_err_paths(npy_with_text(path)), want);
	unlink(path);

	char *big = malloc(SCENE_MAX_TEXT_BYTES + 8);
	memset(big, 'x', SCENE_MAX_TEXT_BYTES + 7);
	memcpy(big, "a\n", 2);
	big[SCENE_MAX_TEXT_BYTES + 3] = '\n';
	memcpy(big + SCENE_MAX_TEXT_BYTES + 4, "c\n", 2);
	path = temp_file(big, SCENE_MAX_TEXT_BYTES + 6);
	snprintf(want, sizeof want,
	         "t.json:1:153: text: %s: line 2: expected at most 4096 bytes of text, got 4097",
	         path);
	assert_string_equal(load_err_paths(npy_with_text(path)), want);
	unlink(path);
	free(big);

	path = temp_file("", 0);
	snprintf(want, sizeof want,
	         "t.json:1:153: text: %s: has 0 lines, expected 3 (one token per row of q)", path);
	assert_string_equal(load_err_paths(npy_with_text(path)), want);
	unlink(path);
}

/* Sizes are checked from the header, before anything is allocated. */
static void test_npy_limits(void **state)
{
	(void)state;
	char path[] = "/tmp/h2o-npy-XXXXXX", json[512], want[SCENE_ERROR_MAX];
	const int dims[] = {2, 2048};
	const long rows[] = {SCENE_MAX_TOKENS + 1, SCENE_MAX_VALUES / 2048 + 1};
	const char *const msgs[] = {
	        "t.json:1:42: q: %s: expected at most 1000000 rows (tokens), got shape (1000001, "
	        "2)",
	        "t.json:1:45: q: %s: shape (32769, 2048) holds 67110912 numbers, more than the "
	        "67108864 allowed in each of q, k and v"};

	for (int c = 0; c < 2; c++) {
		strcpy(path, "/tmp/h2o-npy-XXXXXX");
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		char dict[128], head[256];
		snprintf(dict, sizeof dict,
		         "{'descr': '<f4', 'fortran_order': False, 'shape': (%ld, %d), }", rows[c],
		         dims[c]);
		size_t len = 10 + strlen(dict) + 1, pad = (64 - len % 64) % 64,
		       hlen = len - 10 + pad;
		memcpy(head, "\x93NUMPY\x01\x00", 8);
		head[8] = (char)(hlen & 0xFF);
		head[9] = (char)(hlen >> 8);
		snprintf(head + 10, sizeof head - 10, "%s%*s\n", dict, (int)pad, "");
		assert_int_equal(write(fd, head, 10 + hlen), (ssize_t)(10 + hlen));
		/* Sparse: the data takes no disk. */
		assert_int_equal(ftruncate(fd, (off_t)(10 + hlen) + (off_t)rows[c] * dims[c] * 4),
		                 0);
		close(fd);
		snprintf(json, sizeof json,
		         "{\"heavy\": 1, \"recent\": 1, \"dim\": %d, \"q\": \"%s\", \"k\": \"%s\", "
		         "\"v\": \"%s\"}",
		         dims[c], path, path, path);
		snprintf(want, sizeof want, msgs[c], path);
		assert_string_equal(load_err_paths(json), want);
		unlink(path);
	}
}

/* ---- layers and key/value heads --------------------------------------- */

/* The numbers of the layered inline scene below: query head H of layer L,
 * token I, element C; key/value head G the same, negated and off by one
 * half (k) or plus 5000 (v). */
static double lq(int l, int h, int i, int c)
{
	return 1000.0 * l + 100.0 * h + 10.0 * i + c;
}

static double lk(int l, int g, int i, int c)
{
	return -lq(l, g, i, c) - 0.5;
}

static double lv(int l, int g, int i, int c)
{
	return 5000.0 + lq(l, g, i, c);
}

/* 2 layers of 4 query heads sharing 2 key/value heads, 3 tokens, dim 2. */
static char *layered_scene(const char *extra)
{
	struct buf b = {0};
	buf_add(&b,
	        "{\"heavy\": 1, \"recent\": 1, \"dim\": 2, \"layers\": 2, \"heads\": 4, "
	        "\"kv_heads\": 2%s,\n \"tokens\": [\n",
	        extra);
	for (int i = 0; i < 3; i++) {
		buf_add(&b, "  {\"text\": \"t%d\"", i);
		for (int f = 0; f < 3; f++) {
			const int count = f == 0 ? 4 : 2;
			buf_add(&b, ", \"%s\": [", f == 0 ? "q" : f == 1 ? "k" : "v");
			for (int l = 0; l < 2; l++) {
				buf_add(&b, "%s[", l ? ", " : "");
				for (int h = 0; h < count; h++) {
					double x0 = f == 0   ? lq(l, h, i, 0)
					            : f == 1 ? lk(l, h, i, 0)
					                     : lv(l, h, i, 0);
					buf_add(&b, "%s[%.1f, %.1f]", h ? ", " : "", x0,
					        f == 1 ? x0 - 1 : x0 + 1);
				}
				buf_add(&b, "]");
			}
			buf_add(&b, "]");
		}
		buf_add(&b, "}%s\n", i < 2 ? "," : "");
	}
	buf_add(&b, " ]}\n");
	return b.s;
}

static void test_layered_inline(void **state)
{
	(void)state;
	char *text = layered_scene(", \"prompt\": 2, \"head_names\": [\"a\", \"b\", \"c\", \"d\"]");
	struct scene *sc = load_ok("layers.json", text);
	free(text);
	assert_int_equal(sc->layers, 2);
	assert_int_equal(sc->heads, 4);
	assert_int_equal(sc->kv_heads, 2);
	assert_int_equal(sc->prompt, 2);
	assert_int_equal(sc->n, 3);
	/* q: block l * 4 + h, each 3 x 2; k and v: block l * 2 + g. */
	for (int l = 0; l < 2; l++)
		for (int i = 0; i < 3; i++)
			for (int c = 0; c < 2; c++) {
				for (int h = 0; h < 4; h++)
					assert_true(sc->q[((l * 4 + h) * 3 + i) * 2 + c] ==
					            lq(l, h, i, c));
				for (int g = 0; g < 2; g++) {
					assert_true(sc->k[((l * 2 + g) * 3 + i) * 2 + c] ==
					            lk(l, g, i, c));
					assert_true(sc->v[((l * 2 + g) * 3 + i) * 2 + c] ==
					            lv(l, g, i, c));
				}
			}
	/* Some by hand: layer 1, head 3, token 2, element 1; the last k. */
	assert_true(sc->q[47] == 1321.0);
	assert_true(sc->q[24] == 1000.0);
	assert_true(sc->k[23] == -1120.5 - 1.0);
	assert_true(sc->v[12] == 6000.0);
	/* Names given per head of a layer serve every layer. */
	assert_non_null(sc->head_names);
	assert_string_equal(sc->head_names[1], "b");
	assert_string_equal(sc->head_names[5], "b");
	assert_string_equal(sc->head_names[7], "d");

	/* As the engine reads it: query head 7 (layer 1, head 3) reads key/value
	 * head 1 of layer 1. */
	struct scene view;
	assert_int_equal(heads_count(sc), 8);
	assert_int_equal(heads_group(sc), 2);
	heads_view(sc, 7, &view);
	assert_int_equal(view.view_layer, 1);
	assert_int_equal(view.view_head, 3);
	assert_true(view.q[0] == lq(1, 3, 0, 0));
	assert_true(view.k[0] == lk(1, 1, 0, 0));
	assert_true(view.v[5] == lv(1, 1, 2, 1));
	assert_string_equal(heads_name(sc, 6), "c");
	scene_free(sc);

	/* One name per head of every layer. */
	text = layered_scene(", \"head_names\": [\"a0\", \"b0\", \"c0\", \"d0\", \"a1\", \"b1\", "
	                     "\"c1\", \"d1\"]");
	sc = load_ok("layers.json", text);
	free(text);
	assert_string_equal(sc->head_names[0], "a0");
	assert_string_equal(sc->head_names[5], "b1");
	assert_string_equal(sc->head_names[7], "d1");
	assert_int_equal(sc->prompt, 0);
	assert_int_equal(sc->interval, 0); /* absent: every step */
	scene_free(sc);

	/* "interval": compress every N steps, read as written. */
	text = layered_scene(", \"prompt\": 2, \"interval\": 8");
	sc = load_ok("interval.json", text);
	free(text);
	assert_int_equal(sc->prompt, 2);
	assert_int_equal(sc->interval, 8);
	scene_free(sc);

	/* Attention scenes: 2 layers of 2 heads, one key/value head for v. */
	sc = load_ok("attn.json",
	             "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"layers\": 2, \"heads\": 2, "
	             "\"kv_heads\": 1, \"prompt\": 2, \"tokens\": [\n"
	             " {\"text\": \"a\", \"attn\": [[[1], [1]], [[1], [1]]], \"v\": [[1], [2]]},\n"
	             " {\"text\": \"b\", \"attn\": [[[0.1, 0.9], [0.2, 0.8]], [[0.3, 0.7], [0.4, "
	             "0.6]]], \"v\": [[3], [4]]}]}");
	assert_int_equal(sc->mode, SCENE_ATTENTION);
	assert_int_equal(sc->prompt, 2);
	assert_int_equal(sc->kv_heads, 1);
	const double w[] = {0.1, 0.2, 0.3, 0.4}; /* token 1's first weight, per query head */
	for (int qh = 0; qh < 4; qh++) {
		assert_true(sc->attn[qh * 3] == 1.0);
		assert_true(sc->attn[qh * 3 + 1] == w[qh]);
	}
	const double v[] = {1, 3, 2, 4}; /* layer 0's tokens, then layer 1's */
	for (int i = 0; i < 4; i++)
		assert_true(sc->v[i] == v[i]);
	assert_null(sc->head_names);
	scene_free(sc);

	/* One head, two layers: each layer's entry is the one-layer field. */
	sc = load_ok("one.json", "{\"heavy\": 1, \"recent\": 1, \"dim\": 2, \"layers\": 2, "
	                         "\"tokens\": [{\"text\": \"a\", \"q\": [[1, 2], [3, 4]], "
	                         "\"k\": [[5, 6], [7, 8]], \"v\": [[9, 10], [11, 12]]}]}");
	assert_true(sc->q[2] == 3.0 && sc->k[3] == 8.0 && sc->v[0] == 9.0);
	assert_int_equal(sc->kv_heads, 1);
	scene_free(sc);

	/* Exactly at the limits: 256 layers of 16 heads, 4,096 query heads. */
	struct buf big = {0};
	buf_add(&big, "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"layers\": 256, \"heads\": 16, "
	              "\"kv_heads\": 4, \"tokens\": [{\"text\": \"a\", \"attn\": [");
	for (int l = 0; l < 256; l++) {
		buf_add(&big, "%s[", l ? ", " : "");
		for (int h = 0; h < 16; h++)
			buf_add(&big, "%s[1]", h ? ", " : "");
		buf_add(&big, "]");
	}
	buf_add(&big, "]}]}");
	sc = load_ok("big.json", big.s);
	free(big.s);
	assert_int_equal(heads_count(sc), SCENE_MAX_QUERY_HEADS);
	assert_true(sc->attn[SCENE_MAX_QUERY_HEADS - 1] == 1.0);
	scene_free(sc);

	/* The limits: a 12 layer x 12 head trace of 4,096 tokens of 64 fits. */
	assert_true(12L * 12 * 4096 * 64 <= SCENE_MAX_VALUES);
	assert_true((long)SCENE_MAX_LAYERS * SCENE_MAX_HEADS > SCENE_MAX_QUERY_HEADS);
}

static const char layered_generated[] =
        "{\"heavy\": 4, \"recent\": 4, \"dim\": 16, %s\"prompt\": 5,\n"
        " \"generate\": {\"count\": 40, \"seed\": 7, \"noise\": 0.5, \"sinks\": {\"count\": 2},\n"
        "   \"locality\": {\"width\": 4}, \"topics\": {\"rate\": 0.1}}}";

static struct scene *load_generated(const char *layout)
{
	char text[512];
	snprintf(text, sizeof text, layered_generated, layout);
	return load_ok("gen.json", text);
}

static void test_layered_generated(void **state)
{
	(void)state;
	const size_t block = 40 * 16;
	struct scene *flat = load_generated("\"heads\": 2, ");
	struct scene *a = load_generated("\"layers\": 2, \"heads\": 2, ");
	struct scene *b = load_generated("\"layers\": 2, \"heads\": 2, ");
	assert_int_equal(a->layers, 2);
	assert_int_equal(a->prompt, 5);
	/* Same file, same numbers. */
	assert_memory_equal(a->q, b->q, 4 * block * sizeof(double));
	assert_memory_equal(a->k, b->k, 4 * block * sizeof(double));
	assert_memory_equal(a->v, b->v, 4 * block * sizeof(double));
	/* Layer 0 is the one-layer scene; layer 1 is a layer of its own. */
	assert_memory_equal(a->q, flat->q, 2 * block * sizeof(double));
	assert_memory_equal(a->k, flat->k, 2 * block * sizeof(double));
	assert_memory_equal(a->v, flat->v, 2 * block * sizeof(double));
	for (int h = 0; h < 2; h++)
		for (int l1 = 0; l1 < 2; l1++) {
			assert_memory_not_equal(a->q + (size_t)h * block,
			                        a->q + (size_t)(2 + l1) * block,
			                        block * sizeof(double));
			assert_memory_not_equal(a->k + (size_t)h * block,
			                        a->k + (size_t)(2 + l1) * block,
			                        block * sizeof(double));
		}
	/* Each layer's own mix: the characters turn a step per layer. */
	assert_string_equal(a->head_names[0], "local");
	assert_string_equal(a->head_names[1], "sink");
	assert_string_equal(a->head_names[2], "sink");
	assert_string_equal(a->head_names[3], "topic");
	for (int i = 0; i < 40; i++)
		assert_string_equal(a->text[i], flat->text[i]);
	scene_free(b);
	scene_free(flat);

	/* Key/value heads: the query heads of a group keep their own q, and
	 * the group's k and v are those of its first query head. */
	struct scene *all = load_generated("\"layers\": 2, \"heads\": 4, ");
	struct scene *grouped = load_generated("\"layers\": 2, \"heads\": 4, \"kv_heads\": 2, ");
	assert_int_equal(grouped->kv_heads, 2);
	assert_memory_equal(grouped->q, all->q, 8 * block * sizeof(double));
	for (int l = 0; l < 2; l++)
		for (int g = 0; g < 2; g++) {
			const size_t from = (size_t)(l * 4 + 2 * g) * block,
			             to = (size_t)(l * 2 + g) * block;
			assert_memory_equal(grouped->k + to, all->k + from, block * sizeof(double));
			assert_memory_equal(grouped->v + to, all->v + from, block * sizeof(double));
		}
	assert_memory_not_equal(grouped->q, grouped->q + block, block * sizeof(double));
	scene_free(all);
	scene_free(grouped);

	/* One head a layer: each layer a character of its own. */
	struct scene *one = load_generated("\"layers\": 3, ");
	assert_string_equal(one->head_names[0], "local");
	assert_string_equal(one->head_names[1], "sink");
	assert_string_equal(one->head_names[2], "topic");
	assert_memory_not_equal(one->k, one->k + block, block * sizeof(double));
	scene_free(one);
	scene_free(a);
}

/* An IEEE half of X, which must be exactly one (a normal half here). */
static uint16_t to_half(double x)
{
	if (x == 0.0)
		return 0;
	int e;
	const double m = frexp(fabs(x), &e); /* x = m 2^e, m in [0.5, 1) */
	const uint16_t bits =
	        (uint16_t)((e + 14) << 10 | ((uint16_t)(m * 2048.0) & 0x3FF)); /* 1.f x 2^(e-1) */
	return x < 0 ? (uint16_t)(bits | 0x8000) : bits;
}

/* Write X (COUNT numbers) as a .npy file of DESCR ("<f2", "<f4", "<f8")
 * and shape SHAPE (a Python tuple) at PATH. */
static void write_npy(const char *path, const char *descr, const char *shape, const double *x,
                      size_t count)
{
	char dict[160], head[256];
	snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
	         shape);
	const size_t len = 10 + strlen(dict) + 1, pad = (64 - len % 64) % 64,
	             hlen = strlen(dict) + pad + 1;
	memcpy(head, "\x93NUMPY\x01\x00", 8);
	head[8] = (char)(hlen & 0xFF);
	head[9] = (char)(hlen >> 8);
	snprintf(head + 10, sizeof head - 10, "%s%*s\n", dict, (int)pad, "");
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(head, 1, 10 + hlen, f), 10 + hlen);
	for (size_t i = 0; i < count; i++) {
		unsigned char b[8];
		size_t n;
		if (descr[2] == '2') {
			const uint16_t u = to_half(x[i]);
			b[0] = (unsigned char)(u & 0xFF), b[1] = (unsigned char)(u >> 8), n = 2;
		} else if (descr[2] == '4') {
			const float fl = (float)x[i];
			uint32_t u;
			memcpy(&u, &fl, sizeof u);
			for (int j = 0; j < 4; j++)
				b[j] = (unsigned char)(u >> (8 * j));
			n = 4;
		} else {
			uint64_t u;
			memcpy(&u, &x[i], sizeof u);
			for (int j = 0; j < 8; j++)
				b[j] = (unsigned char)(u >> (8 * j));
			n = 8;
		}
		assert_int_equal(fwrite(b, 1, n, f), n);
	}
	assert_int_equal(fclose(f), 0);
}

/* Number I of a test array: multiples of 1/4 from -7 to 8, exact in every
 * dtype, and different for neighbours. */
static double npy_value(size_t i, int salt)
{
	return (double)((i * 7 + (size_t)salt) % 61) * 0.25 - 7.0;
}

static void test_layered_npy(void **state)
{
	(void)state;
	static const char *const dtypes[3][3] = {
	        {"<f2", "<f4", "<f8"}, {"<f8", "<f2", "<f4"}, {"<f4", "<f8", "<f2"}};
	enum { L = 2, H = 4, G = 2, N = 3, D = 2 };
	double q[L * H * N * D], k[L * G * N * D], v[L * G * N * D];
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
		q[i] = npy_value(i, 0);
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
		k[i] = npy_value(i, 1);
		v[i] = npy_value(i, 2);
	}
	char dir[] = "/tmp/h2o-layers-XXXXXX", path[3][128], json[1024];
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 3; i++)
		snprintf(path[i], sizeof path[i], "%s/%c.npy", dir, "qkv"[i]);

	for (int t = 0; t < 3; t++) {
		write_npy(path[0], dtypes[t][0], "(2, 4, 3, 2)", q, sizeof q / sizeof q[0]);
		write_npy(path[1], dtypes[t][1], "(2, 2, 3, 2)", k, sizeof k / sizeof k[0]);
		write_npy(path[2], dtypes[t][2], "(2, 2, 3, 2)", v, sizeof v / sizeof v[0]);
		/* The layout given as well must agree; given or not, the same. */
		snprintf(
		        json, sizeof json,
		        "{\"heavy\": 1, \"recent\": 1, \"dim\": 2, %s\"prompt\": 3, \"q\": \"%s\", "
		        "\"k\": \"%s\", \"v\": \"%s\"}",
		        t == 1 ? "\"layers\": 2, \"heads\": 4, \"kv_heads\": 2, " : "", path[0],
		        path[1], path[2]);
		struct scene *sc = load_ok_with("t.json", json, &allow_paths);
		assert_int_equal(sc->layers, L);
		assert_int_equal(sc->heads, H);
		assert_int_equal(sc->kv_heads, G);
		assert_int_equal(sc->n, N);
		assert_int_equal(sc->prompt, 3);
		assert_memory_equal(sc->q, q, sizeof q);
		assert_memory_equal(sc->k, k, sizeof k);
		assert_memory_equal(sc->v, v, sizeof v);
		assert_null(sc->head_names);
		scene_free(sc);
	}

	/* (H, n, d) queries with (n, d) keys and values: one layer, and all
	 * heads share one key/value head. */
	write_npy(path[0], "<f4", "(4, 3, 2)", q, H * N * D);
	write_npy(path[1], "<f2", "(3, 2)", k, N * D);
	write_npy(path[2], "<f8", "(3, 2)", v, N * D);
	snprintf(json, sizeof json,
	         "{\"heavy\": 1, \"recent\": 1, \"dim\": 2, \"head_names\": [\"w\", \"x\", \"y\", "
	         "\"z\"], \"q\": \"%s\", \"k\": \"%s\", \"v\": \"%s\"}",
	         path[0], path[1], path[2]);
	struct scene *sc = load_ok_with("t.json", json, &allow_paths);
	assert_int_equal(sc->layers, 1);
	assert_int_equal(sc->heads, 4);
	assert_int_equal(sc->kv_heads, 1);
	assert_memory_equal(sc->q, q, H * N * D * sizeof(double));
	assert_memory_equal(sc->k, k, N * D * sizeof(double));
	assert_string_equal(sc->head_names[3], "z");
	scene_free(sc);

	/* A (G, n, d) k beside (H, n, d) q: G must divide H. */
	write_npy(path[1], "<f4", "(3, 3, 2)", k, 3 * N * D);
	snprintf(json, sizeof json,
	         "{\"heavy\": 1, \"recent\": 1, \"dim\": 2, \"q\": \"%s\", \"k\": \"%s\", \"v\": "
	         "\"%s\"}",
	         path[0], path[1], path[2]);
	char want[SCENE_ERROR_MAX];
	snprintf(want, sizeof want,
	         "t.json:1:%zu: k: %s has 3 key/value heads, but 4 query heads need a divisor of 4",
	         (size_t)(strstr(json, "\"k\": ") - json) + 6, path[1]);
	assert_string_equal(load_err_paths(json), want);
	for (int i = 0; i < 3; i++)
		unlink(path[i]);
	rmdir(dir);
}

/* The layout's limits from a .npy header, before anything is allocated:
 * sparse files of the shapes, whose data takes no disk. */
static void test_layered_npy_limits(void **state)
{
	(void)state;
	static const char *const shapes[] = {"(65, 64, 1, 1)", "(16, 64, 65537, 1)"};
	static const char *const msgs[] = {
	        "t.json:1:42: q: %s: has 65 layers x 64 heads = 4160 query heads (shape (65, 64, "
	        "1, 1)), more than the 4096 allowed",
	        "t.json:1:42: q: %s: shape (16, 64, 65537, 1) holds 67109888 numbers, more than "
	        "the 67108864 allowed in each of q, k and v"};
	const long long counts[] = {65LL * 64, 16LL * 64 * 65537};

	for (int c = 0; c < 2; c++) {
		char path[] = "/tmp/h2o-npy-XXXXXX", json[512], want[SCENE_ERROR_MAX];
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		close(fd);
		write_npy(path, "<f4", shapes[c], NULL, 0);
		struct stat st;
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(truncate(path, st.st_size + (off_t)counts[c] * 4), 0);
		snprintf(json, sizeof json,
		         "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"q\": \"%s\", \"k\": \"%s\", "
		         "\"v\": \"%s\"}",
		         path, path, path);
		snprintf(want, sizeof want, msgs[c], path);
		assert_string_equal(load_err_paths(json), want);
		unlink(path);
	}
}

/* By default a scene names files only in its own folder or below, links
 * resolved; allow_paths lifts it. */
static void test_paths(void **state)
{
	(void)state;
	static const char fmt[] = "{\"heavy\": 1, \"recent\": 1, \"dim\": 2, \"q\": \"%s\", "
	                          "\"k\": \"%s\", \"v\": \"%s\", \"text\": \"%s\"}";
	char json[4096 + 512], want[SCENE_ERROR_MAX];
	struct scene *sc;

	/* Inside: down and back up, through a link that stays inside (tests/npy
	 * leads to tests/bad/npy), and an absolute name of a file inside. */
	snprintf(json, sizeof json, fmt, "npy/../npy/good_q_f4.npy", "./npy/good_k_f8.npy",
	         "npy//good_v_v2.npy", "npy/tokens.txt");
	scene_free(load_ok("tests/bad/x.json", json));
	snprintf(json, sizeof json, fmt, "npy/good_q_f4.npy", "bad/npy/good_k_f8.npy",
	         "npy/good_v_v2.npy", "npy/tokens.txt");
	scene_free(load_ok("tests/x.json", json));
	char *real = realpath("tests/bad/npy/good_q_f4.npy", NULL);
	assert_non_null(real);
	snprintf(json, sizeof json, fmt, real, real, real, "npy/tokens.txt");
	free(real);
	scene_free(load_ok("tests/bad/x.json", json));

	/* Outside: climbing out (refused before the file is looked for), an
	 * absolute name, a link out of the folder; each of q and text. */
	static const char *const outside[][3] = {
	        {"../npy/good_q_f4.npy", "npy/tokens.txt",
	         "tests/bad/x.json:1:42: q: \"../npy/good_q_f4.npy\" is outside the scene's "
	         "folder (--allow-paths allows it)"},
	        {"npy/good_q_f4.npy", "npy/../../../../../../../../etc/hostname",
	         "tests/bad/x.json:1:123: text: \"npy/../../../../../../../../etc/hostname\" is "
	         "outside the scene's folder (--allow-paths allows it)"},
	        {"npy/../../no such file", "npy/tokens.txt",
	         "tests/bad/x.json:1:42: q: \"npy/../../no such file\" is outside the scene's "
	         "folder (--allow-paths allows it)"},
	        {"/", "npy/tokens.txt",
	         "tests/bad/x.json:1:42: q: \"/\" is outside the scene's folder (--allow-paths "
	         "allows it)"},
	};
	for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
		snprintf(json, sizeof json, fmt, outside[i][0], "npy/good_k_f8.npy",
		         "npy/good_v_v2.npy", outside[i][1]);
		assert_string_equal(load_err_with("tests/bad/x.json", json, strlen(json), NULL),
		                    outside[i][2]);
	}
	snprintf(json, sizeof json, fmt, "npy/good_q_f4.npy", "npy/good_k_f8.npy",
	         "npy/good_v_v2.npy", "npy/tokens.txt");
	snprintf(want, sizeof want,
	         "tests/fuzz/regressions/x.json:1:42: q: \"npy/good_q_f4.npy\" leads outside the "
	         "scene's folder through a symbolic link (--allow-paths allows it)");
	assert_string_equal(
	        load_err_with("tests/fuzz/regressions/x.json", json, strlen(json), NULL), want);

	/* allow_paths: the same files load, wherever they are. */
	sc = load_ok_with("tests/fuzz/regressions/x.json", json, &allow_paths);
	assert_string_equal(sc->text[1], "cat");
	scene_free(sc);
	snprintf(json, sizeof json, fmt, "../npy/good_q_f4.npy", "../bad/npy/good_k_f8.npy",
	         "npy/good_v_v2.npy", "npy/tokens.txt");
	scene_free(load_ok_with("tests/bad/x.json", json, &allow_paths));
}

static void test_watch(void **state)
{
	(void)state;
	struct scene *sc = load_ok("w.json", "{\"watch\": \"the scores\", \"heavy\": 1, "
	                                     "\"recent\": 1, \"dim\": 1, \"tokens\": "
	                                     "[{\"text\": \"a\", \"attn\": [1]}]}");
	assert_string_equal(sc->watch, "the scores");
	scene_free(sc);
	sc = load_ok("w.json", vector_scene);
	assert_string_equal(sc->watch, "");
	scene_free(sc);
}

/* "lesson": true marks a scene that teaches; false when absent. */
static void test_lesson_flag(void **state)
{
	(void)state;
	struct scene *sc = load_ok("l.json", "{\"lesson\": true, \"heavy\": 1, \"recent\": 1, "
	                                     "\"dim\": 1, \"tokens\": [{\"text\": \"a\", "
	                                     "\"attn\": [1]}]}");
	assert_true(sc->lesson);
	scene_free(sc);
	sc = load_ok("l.json", "{\"lesson\": false, \"heavy\": 1, \"recent\": 1, \"dim\": 1, "
	                       "\"tokens\": [{\"text\": \"a\", \"attn\": [1]}]}");
	assert_false(sc->lesson);
	scene_free(sc);
	sc = load_ok("l.json", vector_scene);
	assert_false(sc->lesson);
	scene_free(sc);
}

/* Step notes: in the file's order, each under its step; a generated
 * scene may have them too. */
static void test_notes(void **state)
{
	(void)state;
	struct scene *sc = load_ok("n.json", "{\"notes\": {\"2\": \"b came\", \"1\": \"a\"}, "
	                                     "\"heavy\": 1, \"recent\": 1, \"dim\": 1, "
	                                     "\"tokens\": [{\"text\": \"a\", \"attn\": [1]}, "
	                                     "{\"text\": \"b\", \"attn\": [0.5, 0.5]}]}");
	assert_int_equal(sc->n_notes, 2);
	assert_int_equal(sc->note_step[0], 2);
	assert_string_equal(sc->note_text[0], "b came");
	assert_int_equal(sc->note_step[1], 1);
	assert_string_equal(sc->note_text[1], "a");
	scene_free(sc);
	sc = load_ok("n.json", vector_scene);
	assert_int_equal(sc->n_notes, 0);
	scene_free(sc);
	sc = load_ok("n.json", "{\"heavy\": 4, \"recent\": 4, \"dim\": 64, \"generate\": "
	                       "{\"count\": 10, \"seed\": 1}, \"notes\": {\"10\": \"end\"}}");
	assert_int_equal(sc->n_notes, 1);
	assert_int_equal(sc->note_step[0], 10);
	scene_free(sc);
}

/* Every scene shipped in scenes/ loads; lessons and generated scenes say
 * what they are for. */
static void test_shipped_scenes(void **state)
{
	(void)state;
	DIR *dir = opendir("scenes");
	assert_non_null(dir);
	struct dirent *de;
	int n = 0, lessons = 0;
	while ((de = readdir(dir)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		char path[600], err[SCENE_ERROR_MAX];
		struct scene *sc = NULL;
		snprintf(path, sizeof path, "scenes/%s", de->d_name);
		if (scene_load_file(path, &sc, err) != 0)
			print_error("%s\n", err);
		assert_non_null(sc);
		assert_true(strlen(sc->description) > 0);
		if (strncmp(de->d_name, "lesson_", 7) == 0) {
			assert_true(strlen(sc->watch) > 0);
			assert_true(sc->lesson);
			lessons++;
		}
		scene_free(sc);
		n++;
	}
	closedir(dir);
	assert_true(lessons >= 7);
	assert_true(n >= lessons + 5);
}

/* ---- the locator ------------------------------------------------------ */

static void linecol(const char *text, size_t offset, long line, long col)
{
	long l = 0, c = 0;
	jsonloc_linecol(text, strlen(text), offset, &l, &c);
	if (l != line || c != col)
		print_error("offset %zu in \"%s\": want %ld:%ld, got %ld:%ld\n", offset, text, line,
		            col, l, c);
	assert_true(l == line && c == col);
}

/* "policies": bits in the order of the caller's names; without names the
 * field is only checked to be a list of strings; an unknown name is
 * refused with the names it may take. */
static void test_policies_field(void **state)
{
	(void)state;
	static const char *const names[] = {"full", "h2o", "window", NULL};
	const struct scene_options with = {.policy_names = names};
	const char *text = "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"policies\": [\"window\", "
	                   "\"h2o\"], \"tokens\": [{\"text\": \"a\", \"attn\": [1]}]}";
	struct scene *sc = load_ok_with("p.json", text, &with);
	assert_int_equal(sc->policies, 1u << 2 | 1u << 1);
	scene_free(sc);
	sc = load_ok("p.json", text);
	assert_int_equal(sc->policies, 0);
	scene_free(sc);
	sc = load_ok_with(
	        "p.json",
	        "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"tokens\": [{\"text\": \"a\", "
	        "\"attn\": [1]}]}",
	        &with);
	assert_int_equal(sc->policies, 0);
	scene_free(sc);
	const char *bad = "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"policies\": [\"h2o\", "
	                  "\"tova\"], \"tokens\": [{\"text\": \"a\", \"attn\": [1]}]}";
	assert_string_equal(load_err_with("p.json", bad, strlen(bad), &with),
	                    "p.json:1:57: policies[1]: unknown policy \"tova\" (the policies: "
	                    "full, h2o, window)");
	const char *number = "{\"heavy\": 1, \"recent\": 1, \"dim\": 1, \"policies\": [2], "
	                     "\"tokens\": [{\"text\": \"a\", \"attn\": [1]}]}";
	assert_string_equal(load_err_with("p.json", number, strlen(number), NULL),
	                    "p.json:1:50: policies[0]: expected a policy name (a string), got 2");
}

static void test_jsonloc_linecol(void **state)
{
	(void)state;
	linecol("", 0, 1, 1);
	linecol("ab\ncd", 0, 1, 1);
	linecol("ab\ncd", 2, 1, 3);
	linecol("ab\ncd", 3, 2, 1);
	linecol("ab\ncd", 4, 2, 2);
	linecol("ab\ncd", 99, 2, 3);                  /* clamped to the end */
	linecol("ab\r\ncd", 4, 2, 1);                 /* CR LF is one line break */
	linecol("\xc3\xa9\xe6\x97\xa5x", 5, 1, 3);    /* é and 日 are one column each */
	linecol("\xf0\x9f\x98\x80x", 4, 1, 2);        /* so is an emoji */
	linecol("\xff\xfex", 2, 1, 3);                /* stray bytes count one each */
	linecol("\xEF\xBB\xBF{\"a\"", 4, 1, 2);       /* the BOM is not a column */
	linecol("\n\xEF\xBB\xBF", 4, 2, 2);           /* except where it is not a BOM */
	linecol("{\n\t\"k\": [1, 2, 3]\n}", 9, 2, 8); /* a tab is one column */
}

static void find(const char *text, const int *steps, int nsteps, const char *value_at,
                 const char *key_at)
{
	size_t key = 0, value = 0;
	int rc = jsonloc_find(text, strlen(text), steps, nsteps, &key, &value);
	if (value_at == NULL) {
		assert_int_equal(rc, -1);
		return;
	}
	assert_int_equal(rc, 0);
	if (strncmp(text + value, value_at, strlen(value_at)) != 0)
		print_error("value at %zu: \"%s\", want \"%s\"\n", value, text + value, value_at);
	assert_true(strncmp(text + value, value_at, strlen(value_at)) == 0);
	assert_true(strncmp(text + key, key_at, strlen(key_at)) == 0);
}

static void test_jsonloc_find(void **state)
{
	(void)state;
	const char *t = " {\"a\": [1, [2, [3, 4]], \"x\"],\n"
	                "  \"b\": {\"c\": \"]}\\\"[{,\", \"d\": 5.5e1, \"\\u00e9\": true},\n"
	                "  \"c\": [[], {}, [[]], null]}";
	find(t, NULL, 0, "{\"a\"", "{\"a\"");
	find(t, (const int[]){0}, 1, "[1, [2", "\"a\"");
	find(t, (const int[]){0, 0}, 2, "1, [2", "1, [2");
	find(t, (const int[]){0, 1, 1, 0}, 4, "3, 4", "3, 4");
	find(t, (const int[]){0, 1, 1, 1}, 4, "4]", "4]");
	find(t, (const int[]){0, 2}, 2, "\"x\"", "\"x\"");
	/* A string full of brackets and an escaped quote does not derail it. */
	find(t, (const int[]){1, 1}, 2, "5.5e1", "\"d\"");
	find(t, (const int[]){1, 2}, 2, "true", "\"\\u00e9\"");
	find(t, (const int[]){2, 2, 0}, 3, "[]]", "[]]");
	find(t, (const int[]){2, 3}, 2, "null", "null");
	/* Paths that lead nowhere. */
	find(t, (const int[]){3}, 1, NULL, NULL);
	find(t, (const int[]){0, 0, 0}, 3, NULL, NULL);
	find(t, (const int[]){2, 1, 0}, 3, NULL, NULL);
	/* Duplicate keys are told apart by their place. */
	find("{\"a\": 1, \"a\": 2}", (const int[]){1}, 1, "2}", "\"a\": 2");
	/* Unicode and a BOM before the value. */
	find("\xEF\xBB\xBF{\"\xc3\xa9\": \"\xe6\x97\xa5\", \"k\": [7]}", (const int[]){1, 0}, 2,
	     "7]", "7]");
	/* A malformed text fails quietly before the target. */
	find("{\"a\": [1 2], \"b\": 3}", (const int[]){1}, 1, NULL, NULL);
}

static void check(const char *text, size_t len, const char *path, const char *message,
                  size_t offset)
{
	struct jsonloc_error e;
	int rc = jsonloc_check(text, len, &e);
	if (path == NULL) {
		if (rc != 0)
			print_error("\"%s\": unexpected %s: %s\n", text, e.path, e.message);
		assert_int_equal(rc, 0);
		return;
	}
	assert_int_equal(rc, 1);
	if (strcmp(e.path, path) != 0 || strcmp(e.message, message) != 0 || e.offset != offset)
		print_error("\"%s\": got %zu %s: %s\n", text, e.offset, e.path, e.message);
	assert_string_equal(e.path, path);
	assert_string_equal(e.message, message);
	assert_int_equal(e.offset, offset);
}

#define CHECK_OK(t)              check(t, strlen(t), NULL, NULL, 0)
#define CHECK(t, path, msg, off) check(t, strlen(t), path, msg, off)

static void test_jsonloc_check(void **state)
{
	(void)state;
	/* What cJSON accepts, jsonloc accepts, leniencies included. */
	CHECK_OK("{}");
	CHECK_OK(" [1, -2.5e-3, 01, 1., -.5, \"a\\\"]\", true, false, null, {}] ");
	CHECK_OK("{\"tab\tinside\": \"raw\nline\", \"u\": \"\\u12G4 \\ud83d\\ude00\"}");
	CHECK_OK("\xEF\xBB\xBF{\"a\": 1}");
	CHECK_OK("{\"a\":1}\x01\x1f ");

	/* Paths name what was being read: the container between members,
	 * the member while reading its value. */
	CHECK("{\"a\": [[1, 2], [3 4]]}", "a[1]",
	      "syntax error: expected ',' or ']', got '4' (missing ','?)", 18);
	CHECK("{\"a\": [[1, 2], [3, }]]}", "a[1][1]", "syntax error: expected a value, got '}'",
	      19);
	CHECK("[[1,]]", "$[0]", "syntax error: trailing comma before ']'", 3);
	CHECK("{\"a b\": {\"c\": [1, {\"d\": x}]}}", "$[\"a b\"].c[1].d",
	      "syntax error: expected a value, got 'x'", 24);
	CHECK("{\"a\": {\"b\": 1,}}", "a", "syntax error: trailing comma before '}'", 13);
	CHECK("{\"a\": \"x\\qy\"}", "a", "syntax error: invalid escape '\\q'", 8);
	CHECK("{\"a\\q\": 1}", "$", "syntax error: invalid escape '\\q'", 3);
	CHECK("{\"a\": \"]}\\\"[\" \"b\": 1}", "$",
	      "syntax error: expected ',' or '}', got '\"' (missing ','?)", 14);
	CHECK("{\"\xc3\xa9\": [1, 2", "$[\"\xc3\xa9\"]",
	      "syntax error: unexpected end of file, expected ',' or ']'", 12);
	CHECK("{\"a\": \"\\ude00\"}", "a",
	      "syntax error: invalid \\u escape (a low surrogate with no high surrogate before "
	      "it)",
	      7);
	CHECK("{\"a\": 1e}", "$", "syntax error: expected ',' or '}', got 'e'", 7);
	CHECK("{\"a\": \"x\"y\"}", "$",
	      "syntax error: expected ',' or '}', got 'y' (a '\"' missing or misplaced before it?)",
	      9);
	CHECK("  ", "$", "syntax error: unexpected end of file, expected a JSON object", 0);
	check("{\"a\": \"b\x00\"}", 11, "a", "syntax error: NUL byte inside a string", 8);
	check("{\"a\":\x00 1}", 9, "a", "syntax error: expected a value, got a NUL byte", 5);

	/* A hostile nesting gives a bounded path. */
	struct buf b = {0};
	buf_add(&b, "{\"k\": ");
	for (int i = 0; i < 5000; i++)
		buf_add(&b, "[");
	struct jsonloc_error e;
	assert_int_equal(jsonloc_check(b.s, b.len, &e), 1);
	assert_string_equal(e.message, "syntax error: nested deeper than 1000 levels");
	assert_int_equal(e.offset, 6 + 999);
	assert_true(strlen(e.path) < JSONLOC_PATH_MAX);
	assert_true(strncmp(e.path, "k...[0][0]", 10) == 0);
	free(b.s);
}

static void test_jsonloc_text(void **state)
{
	(void)state;
	char buf[128];
	const char *s = "a\"b\\c\n\x1b\xe2\x80\xae\xc3\xa9\xff";
	assert_string_equal(jsonloc_quote(buf, sizeof buf, s, strlen(s), 64),
	                    "\"a\\\"b\\\\c\\n\\u001b\\u202e\xc3\xa9\\xff\"");
	assert_string_equal(jsonloc_quote(buf, sizeof buf, "abcdef", 6, 3), "\"abc...\"");
	assert_string_equal(jsonloc_quote(buf, 6, "abcdef", 6, 64), "\"abcd");
	assert_string_equal(jsonloc_quote(buf, sizeof buf, "\xf3\xa0\x80\x81", 4, 64),
	                    "\"\\udb40\\udc01\"");

	const char *t = "tru\x00\xe2\x80\x9c\x7f";
	assert_string_equal(jsonloc_describe(buf, sizeof buf, t, 8, 0), "'tru'");
	assert_string_equal(jsonloc_describe(buf, sizeof buf, t, 8, 3), "a NUL byte");
	assert_string_equal(jsonloc_describe(buf, sizeof buf, t, 8, 4), "'\xe2\x80\x9c' (U+201C)");
	assert_string_equal(jsonloc_describe(buf, sizeof buf, t, 8, 7), "byte 0x7f");
	assert_string_equal(jsonloc_describe(buf, sizeof buf, t, 8, 8), "end of file");
	assert_string_equal(jsonloc_describe(buf, sizeof buf, "\xe2\x80\xae", 3, 0), "U+202E");

	assert_int_equal(jsonloc_number_len("1e", 2, 0), 1);
	assert_int_equal(jsonloc_number_len("1.5.3", 5, 0), 3);
	assert_int_equal(jsonloc_number_len("-", 1, 0), 0);
	assert_int_equal(jsonloc_number_len("-.5,", 4, 0), 3);
	assert_int_equal(jsonloc_number_len("x 01]", 5, 2), 2);
	assert_int_equal(jsonloc_number_len("2e+}", 4, 0), 1);
	char digits[80];
	memset(digits, '9', sizeof digits);
	assert_int_equal(jsonloc_number_len(digits, sizeof digits, 0), 63); /* cJSON's cut */
}

/*
 * jsonloc and cJSON must agree on which texts are malformed. The loader
 * reports a syntax error exactly when cJSON refused the text (or it held a
 * NUL byte or trailing text), and "out of memory" if jsonloc then found
 * nothing wrong; so mangle a scene many ways and compare.
 */
static void test_jsonloc_agrees_with_cjson(void **state)
{
	(void)state;
	static const char base[] =
	        "\xEF\xBB\xBF{\"title\": \"a \\\"q\\\" \\u00e9 \\ud83d\\ude00 [{,:}]\",\n"
	        " \"heavy\": 2, \"recent\": 01, \"dim\": 2, \"scale\": 1.5e-1,\n"
	        " \"x-n\": [true, false, null, -0.5, 1., {\"\": []}],\n"
	        " \"tokens\": [{\"text\": \"\xc3\xa9\\n\", \"q\": [1, 2], \"k\": [-3, 4E2], "
	        "\"v\": [5, 6]}]}\n";
	static const char alphabet[] = "{}[]\",:\\ \n0123456789-+.eEtrufalsn\x00\xe2\x80\x9c";
	const char *env = getenv("H2O_FUZZ_ROUNDS");
	const int rounds = env ? atoi(env) : 4000;
	const size_t base_len = sizeof base - 1;
	unsigned long seed = 12345;
	char text[sizeof base + 8];
	int syntax = 0;

	for (int round = 0; round < rounds; round++) {
		size_t len = base_len;
		memcpy(text, base, len);
		int edits = 1 + round % 3;
		for (int e = 0; e < edits; e++) {
			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			size_t at = (seed >> 33) % (len + 1);
			char c = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
			switch ((seed >> 10) % 4) {
			case 0: /* delete */
				if (at < len) {
					memmove(text + at, text + at + 1, len - at - 1);
					len--;
				}
				break;
			case 1: /* insert */
				if (len < sizeof text) {
					memmove(text + at + 1, text + at, len - at);
					text[at] = c;
					len++;
				}
				break;
			case 2: /* replace */
				if (at < len)
					text[at] = c;
				break;
			default: /* truncate, rarely */
				if (e == 0 && round % 7 == 0)
					len = at;
				break;
			}
		}
		struct scene *sc = NULL;
		char err[SCENE_ERROR_MAX];
		int rc = scene_load_text("f.json", text, len, &sc, err);
		scene_free(sc);
		bool loader_syntax = rc != 0 && (strstr(err, ": syntax error: ") ||
		                                 strstr(err, ": the file is empty"));
		struct jsonloc_error je;
		bool jsonloc_syntax = jsonloc_check(text, len, &je) == 1;
		if (rc != 0 && strstr(err, "out of memory"))
			print_error("jsonloc accepts what cJSON refused: %.*s\n", (int)len, text);
		assert_true(rc == 0 || !strstr(err, "out of memory"));
		if (loader_syntax != jsonloc_syntax)
			print_error("disagreement on: %.*s\n(loader: %s)\n", (int)len, text,
			            rc ? err : "ok");
		assert_true(loader_syntax == jsonloc_syntax);
		syntax += loader_syntax;
	}
	/* The mangling must actually exercise both sides. */
	assert_true(syntax > rounds / 4 && syntax < rounds);
}

/* A model scene: the model's layout, the fields a later run reads, the
 * prompt's defaults, and the same scene on every load (sampling too). */
static void test_model_scene(void **state)
{
	(void)state;
	char err[SCENE_ERROR_MAX];
	struct scene *a, *b;
	static const char forced[] = "{\"heavy\": 2, \"recent\": 1, \"model\": \"tiny.bin\", "
	                             "\"tokenizer\": \"tiny_tok.bin\", \"text\": \"ab a\"}";
	assert_int_equal(
	        scene_load_text("tests/bad/model/forced.json", forced, strlen(forced), &a, err), 0);
	assert_int_equal(a->layers, 1);
	assert_int_equal(a->heads, 2);
	assert_int_equal(a->kv_heads, 1);
	assert_int_equal(a->dim, 2);
	assert_true(a->scale == 1.0 / sqrt(2.0));
	assert_int_equal(a->mode, SCENE_VECTOR);
	assert_int_equal(a->prompt, 0);
	/* BOS, then " ab a" merged: " a" (6), "b" (5), " a" (6)... as the
	 * tokenizer's best pairs say; whatever they are, BOS comes first. */
	assert_non_null(a->tokens);
	assert_int_equal(a->tokens[0], 1);
	assert_int_equal(a->given, a->n);
	assert_int_equal(a->generated, 0);
	assert_string_equal(a->text[0], "<s>");
	assert_non_null(strstr(a->model_path, "tests/bad/model/tiny.bin"));
	assert_non_null(strstr(a->tokenizer_path, "tests/bad/model/tiny_tok.bin"));
	assert_non_null(a->q);
	assert_non_null(a->k);
	assert_non_null(a->v);

	static const char gen[] =
	        "{\"heavy\": 2, \"recent\": 1, \"model\": \"tiny.bin\", "
	        "\"tokenizer\": \"tiny_tok.bin\", \"prompt_text\": \"a\", \"generate\": 5, "
	        "\"temperature\": 1.5, \"seed\": 9}";
	assert_int_equal(scene_load_text("tests/bad/model/gen.json", gen, strlen(gen), &b, err), 0);
	assert_int_equal(b->generated, 5);
	assert_int_equal(b->n, b->given + 5);
	assert_int_equal(b->prompt, b->given);
	assert_true(b->temperature == 1.5);
	assert_int_equal(b->seed, 9);
	for (int i = 0; i < b->n; i++)
		assert_true(b->tokens[i] >= 0 && b->tokens[i] < 8);
	struct scene *c;
	assert_int_equal(scene_load_text("tests/bad/model/gen.json", gen, strlen(gen), &c, err), 0);
	assert_memory_equal(b->tokens, c->tokens, (size_t)b->n * sizeof *b->tokens);
	const size_t kv = (size_t)b->n * (size_t)b->dim;
	assert_memory_equal(b->k, c->k, kv * sizeof *b->k);
	scene_free(c);

	/* The command line's scene is the JSON one. */
	const struct scene_model_args args = {
	        .model = "tests/bad/model/tiny.bin",
	        .tokenizer = "tests/bad/model/tiny_tok.bin",
	        .text = "ab a",
	        .text_len = 4,
	        .heavy = 2,
	        .recent = 1,
	};
	assert_int_equal(scene_load_model(&args, &c, err), 0);
	assert_int_equal(c->n, a->n);
	assert_memory_equal(c->tokens, a->tokens, (size_t)a->n * sizeof *a->tokens);
	assert_memory_equal(c->q, a->q, (size_t)a->n * 2 * 2 * sizeof *a->q);
	assert_string_equal(c->model_path, "tests/bad/model/tiny.bin");
	scene_free(c);
	scene_free(a);
	scene_free(b);
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : getenv("H2O_SOURCE_ROOT");
	if (root == NULL || chdir(root) != 0) {
		fprintf(stderr, "usage: test_scene SOURCE_ROOT (or set H2O_SOURCE_ROOT)\n");
		return 2;
	}
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_vector_scene),
	        cmocka_unit_test(test_model_scene),
	        cmocka_unit_test(test_attention_scene),
	        cmocka_unit_test(test_defaults),
	        cmocka_unit_test(test_notes_ignored),
	        cmocka_unit_test(test_text_as_given),
	        cmocka_unit_test(test_limits_accepted),
	        cmocka_unit_test(test_bad_files),
	        cmocka_unit_test(test_unreadable),
	        cmocka_unit_test(test_text_not_terminated),
	        cmocka_unit_test(test_too_many_tokens),
	        cmocka_unit_test(test_messages),
	        cmocka_unit_test(test_generated_scene),
	        cmocka_unit_test(test_generated_defaults),
	        cmocka_unit_test(test_integers_as_written),
	        cmocka_unit_test(test_npy_scene),
	        cmocka_unit_test(test_npy_text_file),
	        cmocka_unit_test(test_npy_limits),
	        cmocka_unit_test(test_layered_inline),
	        cmocka_unit_test(test_layered_generated),
	        cmocka_unit_test(test_layered_npy),
	        cmocka_unit_test(test_layered_npy_limits),
	        cmocka_unit_test(test_paths),
	        cmocka_unit_test(test_watch),
	        cmocka_unit_test(test_lesson_flag),
	        cmocka_unit_test(test_notes),
	        cmocka_unit_test(test_shipped_scenes),
	        cmocka_unit_test(test_policies_field),
	        cmocka_unit_test(test_jsonloc_linecol),
	        cmocka_unit_test(test_jsonloc_find),
	        cmocka_unit_test(test_jsonloc_check),
	        cmocka_unit_test(test_jsonloc_text),
	        cmocka_unit_test(test_jsonloc_agrees_with_cjson),
	};
	return cmocka_run_group_tests_name("scene", tests, NULL, NULL);
}
