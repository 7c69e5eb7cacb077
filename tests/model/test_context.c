/*
 * test_context: a GGUF or Hugging Face model's context comes from its
 * metadata (max_position_embeddings here), capped at LLAMA_MAX_CONTEXT,
 * and a run sized to its text (llama_run_new_len) holds exactly that many
 * positions, past the 4096 a run used to stop at, with the logits of a
 * run sized to the whole context, bit for bit. And the encoding of a long
 * text tells its progress (llama_tokenizer_encode_told) and stops when
 * asked.
 *
 * Usage: test_context  (from the source root: it reads
 * tests/model/hf/tiny_qwen2, which tools/hf_fixture.py writes)
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "h2o/llama.h"
#include "h2o/tokenizer.h"

#define DIR "tests/model/hf/tiny_qwen2"

static void test_context_from_config(void **state)
{
	(void)state;
	struct llama_model *m;
	char err[LLAMA_ERR_MAX];
	assert_int_equal(llama_load(DIR, &m, err), 0);
	/* config.json says 32768: no longer cut to 4096. */
	assert_int_equal(llama_model_config(m)->seq_len, 32768);
	llama_free(m);
}

/* The folder's files, but config.json with max_position_embeddings
 * 1048576 (a descriptor on a copy in memory). */
static int huge_context(void *ctx, const char *name, char err[LLAMA_ERR_MAX])
{
	(void)ctx;
	char path[512];
	snprintf(path, sizeof path, "%s/%s", DIR, name);
	const int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || strcmp(name, "config.json") != 0) {
		if (fd < 0)
			snprintf(err, LLAMA_ERR_MAX, "cannot open");
		return fd;
	}
	char text[4096];
	const ssize_t got = read(fd, text, sizeof text - 1);
	close(fd);
	assert_true(got > 0);
	text[got] = '\0';
	char *at = strstr(text, "32768");
	assert_non_null(at);
	char out[4200];
	snprintf(out, sizeof out, "%.*s1048576%s", (int)(at - text), text, at + 5);
	FILE *f = tmpfile();
	assert_non_null(f);
	fputs(out, f);
	fflush(f);
	const int dup_fd = dup(fileno(f));
	fclose(f);
	lseek(dup_fd, 0, SEEK_SET);
	return dup_fd;
}

static void test_context_capped(void **state)
{
	(void)state;
	struct llama_model *m;
	char err[LLAMA_ERR_MAX];
	const struct llama_folder f = {.dir = DIR, .open = huge_context};
	assert_int_equal(llama_load_folder_within(&f, NULL, &m, err), 0);
	assert_int_equal(llama_model_config(m)->seq_len, LLAMA_MAX_CONTEXT);
	/* The run of a short text takes what its positions take, a tiny
	 * part of the whole context's. */
	assert_true(llama_run_bytes_len(m, 100) * 100 < llama_run_bytes(m));
	llama_free(m);
}

static void test_run_past_4096(void **state)
{
	(void)state;
	struct llama_model *m;
	char err[LLAMA_ERR_MAX];
	assert_int_equal(llama_load(DIR, &m, err), 0);
	const struct llama_config *c = llama_model_config(m);
	enum { N = 4500 };
	/* Sized to the text: N positions, and the bytes say so. */
	assert_true(llama_run_bytes_len(m, N) < llama_run_bytes_len(m, N + 64));
	assert_true(llama_run_bytes_len(m, N) * 4 < llama_run_bytes(m));
	assert_int_equal(llama_run_bytes_len(m, 0), llama_run_bytes(m));
	struct llama_run *r = llama_run_new_len(m, N), *whole = llama_run_new(m);
	assert_non_null(r);
	assert_non_null(whole);
	uint32_t x = 27;
	for (int pos = 0; pos < N; pos++) {
		x = x * 1664525u + 1013904223u;
		const int tok = (int)(x >> 8) % c->vocab_size;
		assert_int_equal(llama_step(m, r, tok, pos), 0);
		assert_int_equal(llama_step(m, whole, tok, pos), 0);
	}
	/* The last step saw all N positions, as the whole context's run did. */
	assert_int_equal(llama_run_len(r, 1, 1), N);
	assert_memory_equal(llama_logits(r), llama_logits(whole),
	                    (size_t)c->vocab_size * sizeof(float));
	assert_memory_equal(llama_run_weights(r, 1, 3), llama_run_weights(whole, 1, 3),
	                    (size_t)N * sizeof(float));
	/* And no more: position N is past its caches. */
	assert_int_equal(llama_step(m, r, 0, N), -1);
	assert_int_equal(llama_step(m, whole, 0, N), 0);
	llama_run_free(r);
	llama_run_free(whole);
	llama_free(m);
}

struct seen {
	size_t last, calls, stop_at;
	bool ascending;
};

static int record(void *ctx, size_t done, size_t total)
{
	struct seen *s = ctx;
	(void)total;
	s->ascending = s->ascending && (s->calls == 0 || done >= s->last);
	s->last = done;
	return ++s->calls == s->stop_at;
}

static void test_encode_told(void **state)
{
	(void)state;
	struct llama_tokenizer *t;
	char err[LLAMA_ERR_MAX];
	assert_int_equal(llama_tokenizer_load(DIR "/tokenizer.json", 282, &t, err), 0);
	const char piece[] = "the cat sat on the mat and was there. ";
	const size_t reps = 8000, plen = sizeof piece - 1, len = reps * plen;
	char *text = malloc(len);
	assert_non_null(text);
	for (size_t i = 0; i < reps; i++)
		memcpy(text + i * plen, piece, plen);
	const int cap = (int)llama_tokenizer_max_tokens(t, len);
	int *a = malloc((size_t)cap * sizeof *a), *b = malloc((size_t)cap * sizeof *b);
	assert_non_null(a);
	assert_non_null(b);
	const int n = llama_tokenizer_encode(t, text, len, 1, 0, a, cap, err);
	assert_true(n > 0);
	/* Told from 0 to the end, ascending, often enough to show (every
	 * 64 KiB of a 304 KB text), the same tokens. */
	struct seen s = {.ascending = true};
	const struct llama_tok_told told = {record, &s};
	assert_int_equal(llama_tokenizer_encode_told(t, text, len, 1, 0, b, cap, err, &told), n);
	assert_memory_equal(a, b, (size_t)n * sizeof *a);
	assert_true(s.ascending);
	assert_int_equal(s.last, len);
	assert_true(s.calls >= 5);
	/* Stopped in the middle: -1, "stopped". */
	struct seen stop = {.ascending = true, .stop_at = 3};
	const struct llama_tok_told halt = {record, &stop};
	assert_int_equal(llama_tokenizer_encode_told(t, text, len, 1, 0, b, cap, err, &halt), -1);
	assert_string_equal(err, "stopped");
	assert_int_equal(stop.calls, 3);
	free(a);
	free(b);
	free(text);
	llama_tokenizer_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_context_from_config),
	        cmocka_unit_test(test_context_capped),
	        cmocka_unit_test(test_run_past_4096),
	        cmocka_unit_test(test_encode_told),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
