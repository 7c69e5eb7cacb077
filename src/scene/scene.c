/*
 * scene: reading, checking and converting a scene file (design §3).
 *
 * The file is untrusted, so loading goes in three passes and allocates for
 * the scene only in the last: cJSON parses the text; the checks walk the
 * tree and stop at the first thing wrong, in a fixed order (the root's
 * fields, then the budgets and sizes, then each token); only a scene that
 * passed every check is copied into the arrays, whose sizes the file itself
 * has then proven. Nothing here prints or exits: an error becomes one line
 * in the caller's buffer, located in the raw text by jsonloc because cJSON
 * keeps no positions.
 *
 * A scene gives its tokens one of three ways: inline ("tokens"), from the
 * seeded model ("generate", computed by generate.c once its fields pass),
 * or from .npy files named in "q", "k" and "v" (read by npy.c; their
 * headers are checked with the other fields, the numbers read in the last
 * pass, and any error points at the string that named the file).
 *
 * This file reads the file and runs the passes; each pass has its own file
 * (scene_impl.h lists them).
 */
#include "h2o/scene.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h2o/llama.h"
#include "h2o/tokenizer.h"
#include "jsonloc.h"
#include "scene_impl.h"

_Static_assert(JSONLOC_MAX_DEPTH == CJSON_NESTING_LIMIT,
               "jsonloc must stop nesting exactly where cJSON does");

static void plan_init(struct plan *p)
{
	memset(p, 0, sizeof *p);
	p->keyed = -1;
	p->queried = -1;
	for (int i = 0; i < 3; i++)
		p->npy[i].file.fd = -1;
}

static void plan_done(struct plan *p)
{
	for (int i = 0; i < 3; i++)
		npy_close(&p->npy[i].file);
	free(p->topic_positions);
	free(p->text_file);
	scene_model_done(p);
}

static bool all_blank(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((unsigned char)text[i] >= 1 && (unsigned char)text[i] <= 32))
			return false;
	return true;
}

/* What malloc takes for a block of N bytes: glibc's 8 bytes of header,
 * 16-byte steps, 32 bytes at least. A model, for a bound, not a promise. */
static size_t block(size_t n)
{
	const size_t b = (n + 8 + 15) & ~(size_t)15;
	return b < 32 ? 32 : b;
}

/*
 * The memory cJSON's tree of TEXT will take, predicted in one cheap pass
 * without building it: a node per value (a cJSON struct in its own block)
 * and a block per string, key or value, of its bytes as written (never
 * fewer than decoded). *VALUES gets the number of values. The text need
 * not be valid JSON: cJSON refuses it later if it is not.
 */
static uint64_t predict_tree(const char *text, size_t len, size_t *values)
{
	size_t nodes = 0, keys = 0;
	uint64_t strings = 0;

	for (size_t i = 0; i < len;) {
		const unsigned char c = (unsigned char)text[i];
		if (c == '"') {
			/* To the next quote that no backslash escapes. */
			const size_t start = ++i;
			for (;;) {
				const char *q = memchr(text + i, '"', len - i);
				size_t at = q ? (size_t)(q - text) : len, backslashes = 0;
				while (at - backslashes > start &&
				       text[at - backslashes - 1] == '\\')
					backslashes++;
				i = at + 1;
				if (q == NULL || backslashes % 2 == 0)
					break;
			}
			strings += block((i > len ? len : i - 1) - start + 1);
			nodes++;
		} else if (c == ':') {
			keys++; /* the string before it is a key, not a value */
			i++;
		} else if (c == '{' || c == '[') {
			nodes++;
			i++;
		} else if (c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) {
			nodes++; /* a number, true, false or null */
			while (i < len && (((unsigned char)text[i] >= '0' && text[i] <= '9') ||
			                   (text[i] >= 'a' && text[i] <= 'z') || text[i] == '.' ||
			                   text[i] == '-' || text[i] == '+' || text[i] == 'E'))
				i++;
		} else {
			i++;
		}
	}
	nodes -= keys < nodes ? keys : nodes;
	*values = nodes;
	return (uint64_t)nodes * block(sizeof(cJSON)) + strings;
}

/* A text cJSON refused: jsonloc says where and why. */
static int fail_syntax(const struct loader *ld)
{
	struct jsonloc_error e;

	if (jsonloc_check(ld->text, ld->len, &e) == 1) {
		size_t used = scene_put_prefix(ld, e.offset, e.path);
		snprintf(ld->err + used, SCENE_ERROR_MAX - used, "%s", e.message);
		return -1;
	}
	/* jsonloc accepts exactly what cJSON accepts, so cJSON failed for want
	 * of memory (or jsonloc could not get its stack). */
	return scene_fail_nomem(ld);
}

/* Load TEXT, which has a NUL byte at TEXT[LEN] (cJSON is safer so). */
static int load(const char *name, const char *text, size_t len, const struct scene_options *options,
                struct scene **out, char err[SCENE_ERROR_MAX])
{
	struct locate_cache cache = {.depth = -1};
	struct loader ld = {name,
	                    text,
	                    len,
	                    err,
	                    &cache,
	                    options && options->allow_paths,
	                    options ? options->max_memory : 0,
	                    options ? options->needed : NULL,
	                    options ? options->told : NULL,
	                    options ? options->told_ctx : NULL,
	                    options ? options->policy_names : NULL,
	                    options ? options->policy_keys : 0,
	                    options ? options->check_setting : NULL,
	                    options ? options->policy_queries : 0,
	                    options ? options->policies : 0};
	struct plan p;
	const char *end = NULL;

	if (all_blank(text, len)) {
		size_t used = scene_put_prefix(&ld, 0, "$");
		snprintf(err + used, SCENE_ERROR_MAX - used,
		         "the file is empty, expected a JSON object");
		return -1;
	}
	/* cJSON's tree is many times the file (40 for "0,0,0,..."): refuse a
	 * file whose tree would pass the bound before building it, unless it
	 * is malformed, which says more. */
	size_t values;
	const uint64_t tree = predict_tree(text, len, &values);
	const uint64_t allowed =
	        len > SCENE_PARSE_MAX / SCENE_PARSE_FACTOR     ? (uint64_t)SCENE_PARSE_MAX
	        : len > SCENE_PARSE_FLOOR / SCENE_PARSE_FACTOR ? (uint64_t)len * SCENE_PARSE_FACTOR
	                                                       : (uint64_t)SCENE_PARSE_FLOOR;
	if (tree > allowed) {
		struct jsonloc_error e;
		if (jsonloc_check(text, len, &e) == 1)
			return fail_syntax(&ld);
		const uint64_t mib = 1024 * 1024;
		size_t used = scene_put_prefix(&ld, 0, "$");
		snprintf(err + used, SCENE_ERROR_MAX - used,
		         "%zu values would take about %llu MiB to parse, more than the %llu MiB "
		         "allowed (%d times the file's size, at least %ld and at most %ld MiB)",
		         values, (unsigned long long)((tree + mib - 1) / mib),
		         (unsigned long long)(allowed / mib), SCENE_PARSE_FACTOR,
		         SCENE_PARSE_FLOOR / (long)mib, SCENE_PARSE_MAX / (long)mib);
		return -1;
	}
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	bool tail = root != NULL && !all_blank(end, len - (size_t)(end - text));
	if (root == NULL || tail || memchr(text, '\0', len) != NULL) {
		cJSON_Delete(root);
		return fail_syntax(&ld);
	}

	plan_init(&p);
	int rc = scene_check_root(&ld, root, &p);
	if (rc == 0 && p.source == SRC_TOKENS) {
		rc = scene_check_mode(&ld, p.root[R_TOKENS].node, &p);
		if (rc == 0)
			rc = scene_check_values(&ld, &p, &p.w_tokens);
		if (rc == 0)
			rc = scene_check_scale(&ld, &p);
		if (rc == 0)
			rc = scene_check_tokens(&ld, p.root[R_TOKENS].node, &p);
	} else if (rc == 0 && p.source == SRC_GENERATE) {
		rc = scene_check_generate(&ld, &p);
		if (rc == 0)
			rc = scene_check_scale(&ld, &p);
	} else if (rc == 0 && p.source == SRC_MODEL) {
		/* Before the model runs: a policy it cannot run is named at
		 * once. */
		rc = scene_check_policy_keys(&ld, &p);
		if (rc == 0)
			rc = scene_check_model(&ld, &p);
		if (rc == 0)
			rc = scene_check_head_names(&ld, &p);
		if (rc == 0)
			rc = scene_check_values(&ld, &p, &p.w_root);
	} else if (rc == 0) {
		rc = scene_check_npy(&ld, &p);
		if (rc == 0)
			rc = scene_check_head_names(&ld, &p);
		if (rc == 0)
			rc = scene_check_scale(&ld, &p);
		if (rc == 0)
			rc = scene_check_text_source(&ld, &p);
	}
	if (rc == 0)
		rc = scene_check_policy_keys(&ld, &p);
	if (rc == 0)
		rc = scene_check_prompt(&ld, &p);
	if (rc == 0)
		rc = scene_check_notes(&ld, &p);
	if (rc == 0)
		rc = scene_build(&ld, &p, out);
	if (rc != 0 && p.too_large)
		rc = SCENE_TOO_LARGE;
	if (rc != 0 && p.stopped)
		rc = SCENE_STOPPED;
	plan_done(&p);
	cJSON_Delete(root);
	return rc;
}

int scene_load_text(const char *name, const char *text, size_t len, struct scene **out,
                    char err[SCENE_ERROR_MAX])
{
	return scene_load_text_opts(name, text, len, NULL, out, err);
}

int scene_load_text_opts(const char *name, const char *text, size_t len,
                         const struct scene_options *options, struct scene **out,
                         char err[SCENE_ERROR_MAX])
{
	*out = NULL;
	err[0] = '\0';
	if (len > (size_t)SCENE_MAX_FILE_BYTES)
		return scene_fail_file(err, name, "cannot load: file is larger than %ld MiB",
		                       SCENE_MAX_FILE_BYTES / (1024 * 1024));
	char *copy = malloc(len + 1);
	if (copy == NULL)
		return scene_fail_file(err, name, "cannot load: out of memory");
	if (len > 0)
		memcpy(copy, text, len);
	copy[len] = '\0';
	int rc = load(name, copy, len, options, out, err);
	free(copy);
	return rc;
}

/* LIMIT bytes in words: whole MiB as MiB, anything else in bytes. */
static void limit_words(size_t limit, char *out, size_t size)
{
	const size_t mib = 1024 * 1024;
	if (limit >= mib && limit % mib == 0)
		snprintf(out, size, "%zu MiB", limit / mib);
	else
		snprintf(out, size, "%zu bytes", limit);
}

/* Read all of FD, refusing more than LIMIT bytes: reading stops one byte
 * past the limit, so a huge pipe is not slurped whole, and never asks for
 * more memory than that. HINT is the size fstat reported (0 for pipes and
 * the like), which callers check against LIMIT before calling; a file that
 * grew since is still cut off here. On failure MSG says why ("cannot
 * read: ...", "cannot load: ..."), for the caller to place. */
int scene_read_all(int fd, size_t hint, size_t limit, char **buf, size_t *len, char *msg,
                   size_t size)
{
	const size_t stop = limit + 1;
	size_t cap = hint < limit ? hint + 1 : stop, used = 0;
	if (cap < 4096)
		cap = 4096 < stop ? 4096 : stop;
	char *b = malloc(cap + 1);

	if (b == NULL) {
		snprintf(msg, size, "cannot load: out of memory");
		return -1;
	}
	while (used < stop) {
		if (used == cap) {
			size_t ncap = cap < stop / 2 ? cap * 2 : stop;
			char *nb = realloc(b, ncap + 1);
			if (nb == NULL) {
				free(b);
				snprintf(msg, size, "cannot load: out of memory");
				return -1;
			}
			b = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, b + used, cap - used);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			snprintf(msg, size, "cannot read: %s", strerror(e));
			return -1;
		}
		if (r == 0)
			break;
		used += (size_t)r;
	}
	if (used > limit) {
		char words[32];
		limit_words(limit, words, sizeof words);
		free(b);
		snprintf(msg, size, "cannot load: file is larger than %s", words);
		return -1;
	}
	b[used] = '\0';
	*buf = b;
	*len = used;
	return 0;
}

int scene_load_file(const char *path, struct scene **out, char err[SCENE_ERROR_MAX])
{
	return scene_load_file_opts(path, NULL, out, err);
}

int scene_load_file_opts(const char *path, const struct scene_options *options, struct scene **out,
                         char err[SCENE_ERROR_MAX])
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;

	*out = NULL;
	err[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return scene_fail_file(err, path, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return scene_fail_file(err, path, "cannot open: %s", strerror(e));
	}
	if (S_ISDIR(st.st_mode)) { /* it opens fine and fails only at read() */
		close(fd);
		return scene_fail_file(err, path, "cannot open: %s", strerror(EISDIR));
	}
	/* Refuse a large file before reading any of it. */
	if (S_ISREG(st.st_mode) && st.st_size > SCENE_MAX_FILE_BYTES) {
		close(fd);
		return scene_fail_file(err, path, "cannot load: file is larger than %ld MiB",
		                       SCENE_MAX_FILE_BYTES / (1024 * 1024));
	}
	size_t hint = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 0;
	char msg[SCENE_ERROR_MAX / 2];
	int rc =
	        scene_read_all(fd, hint, (size_t)SCENE_MAX_FILE_BYTES, &buf, &len, msg, sizeof msg);
	close(fd);
	if (rc != 0)
		return scene_fail_file(err, path, "%s", msg);
	rc = load(path, buf, len, options, out, err);
	free(buf);
	return rc;
}

void scene_free(struct scene *scene)
{
	if (scene == NULL)
		return;
	if (scene->text != NULL)
		for (int i = 0; i < scene->n; i++)
			free(scene->text[i]);
	free(scene->text);
	free(scene->title);
	free(scene->description);
	free(scene->watch);
	for (int i = 0; i < scene->n_notes; i++)
		free(scene->note_text[i]);
	free(scene->note_text);
	free(scene->note_step);
	free(scene->q);
	free(scene->q_pre);
	free(scene->rope_freq);
	free(scene->rope_div);
	free(scene->k);
	free(scene->v);
	free(scene->attn);
	free(scene->tokens);
	free(scene->model_path);
	free(scene->tokenizer_path);
	llama_free(scene->model);
	llama_tokenizer_free(scene->tokenizer);
	if (scene->head_names != NULL)
		for (int h = 0; h < scene->layers * scene->heads; h++)
			free(scene->head_names[h]);
	free(scene->head_names);
	free(scene);
}
