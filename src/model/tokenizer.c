/*
 * tokenizer: llama2.c's tokenizer.bin, encode and decode (tokenizer.h).
 *
 * Loading walks the bytes once to check them (every length against the
 * declared maximum and what is left of the file, every score finite,
 * nothing after the last piece) before allocating: the pieces then take
 * at most the file's own size. Lookups go through a hash table of the
 * pieces, which keeps the lowest and highest id of equal ones: a piece is
 * found as its lowest id.
 *
 * Encoding merges through tok_spm_merge's priority queue of adjacent
 * pairs (tokenizer_spm.c), in time N log N: the same merges as run.c's
 * rescan of every pair after every merge, in the same order (the best
 * score, the leftmost of equals). The kinds from a model file's
 * vocabulary encode in tokenizer_spm.c and bpe.c.
 */
#include "h2o/tokenizer.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "tokenizer_impl.h"

static int32_t le32(const unsigned char *b)
{
	const uint32_t u =
	        (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	int32_t v;
	memcpy(&v, &u, sizeof v);
	return v;
}

static bool same(const struct tok_entry *e, const char *s, size_t len)
{
	return e->len == len && (len == 0 || memcmp(e->s, s, len) == 0);
}

/* FNV-1a. */
static uint32_t hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

int tok_lookup(const struct llama_tokenizer *t, const char *s, size_t len, bool last)
{
	for (uint32_t i = hash(s, len) & t->mask;; i = (i + 1) & t->mask) {
		const struct tok_slot *x = &t->slot[i];
		if (x->lo < 0)
			return -1;
		if (same(&t->piece[x->lo], s, len))
			return last ? x->hi : x->lo;
	}
}

int tok_index(struct llama_tokenizer *t)
{
	size_t size = 16;
	while (size < 2 * (size_t)t->n_tokens)
		size *= 2;
	t->slot = malloc(size * sizeof *t->slot);
	if (t->slot == NULL)
		return -1;
	t->mask = (uint32_t)(size - 1);
	for (size_t i = 0; i < size; i++)
		t->slot[i].lo = t->slot[i].hi = -1;
	for (int id = 0; id < t->n_tokens; id++) {
		const struct tok_entry *p = &t->piece[id];
		uint32_t i = hash(p->s, p->len) & t->mask;
		while (t->slot[i].lo >= 0 && !same(&t->piece[t->slot[i].lo], p->s, p->len))
			i = (i + 1) & t->mask;
		if (t->slot[i].lo < 0)
			t->slot[i].lo = id;
		t->slot[i].hi = id;
	}
	return 0;
}

static int lookup(const struct llama_tokenizer *t, const char *s, size_t len)
{
	return tok_lookup(t, s, len, false);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

const char *tok_quote(char out[TOK_QUOTE_MAX], const char *s)
{
	if (s == NULL)
		return "(none)";
	size_t n = 0;
	for (size_t i = 0; s[i] != '\0' && i < 32; i++) {
		const unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7F && c != '\\')
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, 5, "\\x%02X", c);
	}
	if (s[0] != '\0' && strlen(s) > 32)
		n += (size_t)snprintf(out + n, 4, "...");
	out[n] = '\0';
	return out;
}

int tok_byte_piece(const char *s, size_t len)
{
	if (len != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
		return -1;
	const int hi = hex_digit(s[3]), lo = hex_digit(s[4]);
	return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

int llama_tokenizer_load_bytes(const void *data, size_t len, int vocab_size,
                               struct llama_tokenizer **out, char err[LLAMA_ERR_MAX])
{
	const unsigned char *b = data;

	*out = NULL;
	if (vocab_size < 1 || vocab_size > LLAMA_MAX_VOCAB)
		return model_fail(err, "vocabulary of %d tokens, must be 1 to %d", vocab_size,
		                  LLAMA_MAX_VOCAB);
	if (len < 4)
		return model_fail(err, "file is %zu bytes, shorter than its 4-byte header", len);
	const int max_len = le32(b);
	if (max_len < 1 || max_len > LLAMA_TOK_MAX_PIECE)
		return model_fail(err, "max token length (byte 0): %d, must be 1 to %d", max_len,
		                  LLAMA_TOK_MAX_PIECE);

	/* Check everything before allocating anything. */
	size_t at = 4;
	for (int i = 0; i < vocab_size; i++) {
		if (len - at < 8)
			return model_fail(err,
			                  "token %d (byte %zu): the file ends before its score and "
			                  "length (%d tokens expected)",
			                  i, at, vocab_size);
		float score;
		memcpy(&score, b + at, sizeof score);
		const int32_t n = le32(b + at + 4);
		if (!isfinite(score))
			return model_fail(err, "token %d (byte %zu): score is not finite", i, at);
		if (n < 0 || n > max_len)
			return model_fail(
			        err,
			        "token %d (byte %zu): length %ld, must be 0 to the max token "
			        "length %d",
			        i, at + 4, (long)n, max_len);
		at += 8;
		if ((size_t)n > len - at)
			return model_fail(
			        err,
			        "token %d (byte %zu): its %ld bytes run past the end of the "
			        "file (%zu bytes)",
			        i, at, (long)n, len);
		at += (size_t)n;
	}
	if (at != len)
		return model_fail(err, "byte %zu: %zu bytes after the last of %d tokens", at,
		                  len - at, vocab_size);

	struct llama_tokenizer *t = calloc(1, sizeof *t);
	if (t == NULL)
		return model_fail(err, "out of memory");
	t->kind = TOK_LLAMA2C;
	t->vocab_size = vocab_size;
	t->n_tokens = vocab_size;
	t->max_len = max_len;
	t->bos = LLAMA_TOKEN_BOS;
	t->eos = LLAMA_TOKEN_EOS;
	t->unk = 0;
	t->add_bos = true;
	t->add_eos = true;
	t->scores = malloc((size_t)vocab_size * sizeof *t->scores);
	t->piece = malloc((size_t)vocab_size * sizeof *t->piece);
	t->bytes = malloc(len);
	if (t->scores == NULL || t->piece == NULL || t->bytes == NULL) {
		llama_tokenizer_free(t);
		return model_fail(err, "out of memory");
	}
	memcpy(t->bytes, b, len);
	at = 4;
	for (int i = 0; i < vocab_size; i++) {
		memcpy(&t->scores[i], b + at, sizeof(float));
		t->piece[i].len = (uint32_t)le32(b + at + 4);
		t->piece[i].s = t->bytes + at + 8;
		t->piece[i].id = i;
		at += 8 + t->piece[i].len;
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (int i = 0; i < vocab_size; i++) {
		uint32_t u;
		memcpy(&u, &t->scores[i], 4);
		u = __builtin_bswap32(u);
		memcpy(&t->scores[i], &u, 4);
	}
#endif
	if (tok_index(t) != 0) {
		llama_tokenizer_free(t);
		return model_fail(err, "out of memory");
	}
	for (int i = 0; i < 256; i++) {
		char name[7];
		snprintf(name, sizeof name, "<0x%02X>", i);
		t->byte_id[i] = lookup(t, name, 6);
		t->byte_value[i] = (unsigned char)i;
	}
	t->space_id = lookup(t, " ", 1);
	*out = t;
	return 0;
}

/* The tokenizer in F (SIZE bytes), which is closed here. */
static int load_stream(FILE *f, uint64_t size, int vocab_size, struct llama_tokenizer **out,
                       char err[LLAMA_ERR_MAX])
{
	const uint64_t most = 4 + (uint64_t)vocab_size * (8 + LLAMA_TOK_MAX_PIECE);
	if (size > most) {
		fclose(f);
		return model_fail(err, "file is %llu bytes, more than %d tokens can take",
		                  (unsigned long long)size, vocab_size);
	}
	unsigned char *buf = malloc(size ? (size_t)size : 1);
	if (buf == NULL) {
		fclose(f);
		return model_fail(err, "out of memory for %llu bytes", (unsigned long long)size);
	}
	int rc = 0;
	if (fread(buf, 1, (size_t)size, f) != (size_t)size)
		rc = model_fail(err, "the file ended while being read");
	else if (fgetc(f) != EOF)
		rc = model_fail(err, "the file grew while being read");
	fclose(f);
	/* A Hugging Face tokenizer.json: a JSON object, whose second byte a
	 * tokenizer.bin (a little-endian int32 first) never has as text. */
	const bool json = size >= 2 && buf[0] == '{' && buf[1] != 0;
	if (rc == 0 && json)
		rc = llama_tokenizer_load_hf_bytes((const char *)buf, (size_t)size, vocab_size, out,
		                                   err);
	else if (rc == 0)
		rc = llama_tokenizer_load_bytes(buf, (size_t)size, vocab_size, out, err);
	free(buf);
	return rc;
}

int llama_tokenizer_load(const char *path, int vocab_size, struct llama_tokenizer **out,
                         char err[LLAMA_ERR_MAX])
{
	FILE *f;
	uint64_t size;

	*out = NULL;
	if (vocab_size < 1 || vocab_size > LLAMA_MAX_VOCAB)
		return model_fail(err, "vocabulary of %d tokens, must be 1 to %d", vocab_size,
		                  LLAMA_MAX_VOCAB);
	if (model_open(path, &f, &size, err) != 0)
		return -1;
	const int gguf = gguf_tokenizer_if_gguf(fileno(f), vocab_size, out, err);
	if (gguf != 1) {
		fclose(f);
		return gguf;
	}
	return load_stream(f, size, vocab_size, out, err);
}

int llama_tokenizer_load_fd(int fd, int vocab_size, struct llama_tokenizer **out,
                            char err[LLAMA_ERR_MAX])
{
	FILE *f;
	uint64_t size;

	*out = NULL;
	if (vocab_size < 1 || vocab_size > LLAMA_MAX_VOCAB)
		return model_fail(err, "vocabulary of %d tokens, must be 1 to %d", vocab_size,
		                  LLAMA_MAX_VOCAB);
	if (model_open_fd(fd, &f, &size, err) != 0)
		return -1;
	const int gguf = gguf_tokenizer_if_gguf(fileno(f), vocab_size, out, err);
	if (gguf != 1) {
		fclose(f);
		return gguf;
	}
	return load_stream(f, size, vocab_size, out, err);
}

void llama_tokenizer_free(struct llama_tokenizer *t)
{
	if (t == NULL)
		return;
	tok_bpe_free(t->bpe);
	free(t->special);
	free(t->text_bytes);
	free(t->text);
	free(t->type);
	free(t->bytes);
	free(t->slot);
	free(t->piece);
	free(t->scores);
	free(t);
}

int llama_tokenizer_vocab_size(const struct llama_tokenizer *t)
{
	return t->vocab_size;
}

int llama_tokenizer_max_piece(const struct llama_tokenizer *t)
{
	return t->max_len;
}

const char *llama_tokenizer_piece(const struct llama_tokenizer *t, int token, size_t *len)
{
	if (token < 0 || token >= t->n_tokens) {
		*len = 0;
		return NULL;
	}
	*len = t->piece[token].len;
	return t->piece[token].s;
}

float llama_tokenizer_score(const struct llama_tokenizer *t, int token)
{
	return token < 0 || token >= t->n_tokens || t->scores == NULL ? NAN : t->scores[token];
}

int llama_tokenizer_bos(const struct llama_tokenizer *t)
{
	return t->bos;
}

int llama_tokenizer_eos(const struct llama_tokenizer *t)
{
	return t->eos;
}

size_t llama_tokenizer_max_tokens(const struct llama_tokenizer *t, size_t len)
{
	return t->kind == TOK_LLAMA2C ? len + 3 : 4 * len + 3;
}

const char *llama_tokenizer_decode(const struct llama_tokenizer *t, int prev, int token,
                                   size_t *len)
{
	if (t->kind != TOK_LLAMA2C) {
		if (token < 0 || token >= t->n_tokens) {
			*len = 0;
			return NULL;
		}
		const char *s = t->text[token].s;
		*len = t->text[token].len;
		/* SentencePiece's space before the text is not the text's. */
		if (t->kind == TOK_SPM && t->add_space_prefix && (prev < 0 || prev == t->bos) &&
		    *len > 0 && s[0] == ' ') {
			s++;
			(*len)--;
		}
		return s;
	}
	const char *s = llama_tokenizer_piece(t, token, len);
	if (s == NULL)
		return NULL;
	/* After BOS, SentencePiece drops the leading space. */
	if (prev == LLAMA_TOKEN_BOS && *len > 0 && s[0] == ' ') {
		s++;
		(*len)--;
	}
	const int byte = tok_byte_piece(s, *len);
	if (byte >= 0) {
		*len = 1;
		return (const char *)&t->byte_value[byte];
	}
	return s;
}

int llama_tokenizer_encode_told(const struct llama_tokenizer *t, const char *text, size_t len,
                                int bos, int eos, int *tokens, int cap, char err[LLAMA_ERR_MAX],
                                const struct llama_tok_told *told)
{
	const bool tell = told != NULL && told->tell != NULL;
	if (tell && told->tell(told->ctx, 0, len) != 0)
		return model_fail(err, "stopped");
	const int n = t->kind == TOK_BPE
	                      ? tok_bpe_encode(t, text, len, bos, eos, tokens, cap, err, told)
	                      : llama_tokenizer_encode(t, text, len, bos, eos, tokens, cap, err);
	if (n >= 0 && tell && told->tell(told->ctx, len, len) != 0)
		return model_fail(err, "stopped");
	return n;
}

int llama_tokenizer_encode(const struct llama_tokenizer *t, const char *text, size_t len, int bos,
                           int eos, int *tokens, int cap, char err[LLAMA_ERR_MAX])
{
	if (t->kind == TOK_SPM)
		return tok_spm_encode(t, text, len, bos, eos, tokens, cap, err);
	if (t->kind == TOK_BPE)
		return tok_bpe_encode(t, text, len, bos, eos, tokens, cap, err, NULL);

	int n = 0;

#define PUSH(id)                                                            \
	do {                                                                \
		if (n >= cap)                                               \
			return model_fail(err, "more than %d tokens", cap); \
		tokens[n++] = (id);                                         \
	} while (0)

	if ((bos && LLAMA_TOKEN_BOS >= t->vocab_size) || (eos && LLAMA_TOKEN_EOS >= t->vocab_size))
		return model_fail(err,
		                  "a vocabulary of %d tokens has no %s (token %d): llama2.c's "
		                  "tokenizers have at least 3",
		                  t->vocab_size,
		                  bos && LLAMA_TOKEN_BOS >= t->vocab_size ? "BOS" : "EOS",
		                  bos && LLAMA_TOKEN_BOS >= t->vocab_size ? LLAMA_TOKEN_BOS
		                                                          : LLAMA_TOKEN_EOS);
	if (bos)
		PUSH(LLAMA_TOKEN_BOS);
	if (len > 0 && t->space_id >= 0)
		PUSH(t->space_id);

	/* Each UTF-8 character, up to four bytes, as its piece or its bytes. */
	char ch[4];
	size_t cl = 0;
	for (size_t i = 0; i < len; i++) {
		const unsigned char c = (unsigned char)text[i];
		if ((c & 0xC0) != 0x80)
			cl = 0;
		ch[cl++] = (char)c;
		if (i + 1 < len && ((unsigned char)text[i + 1] & 0xC0) == 0x80 && cl < 4)
			continue;
		const int id = lookup(t, ch, cl);
		if (id >= 0) {
			PUSH(id);
		} else {
			for (size_t j = 0; j < cl; j++) {
				const int b = (unsigned char)ch[j];
				if (t->byte_id[b] < 0)
					return model_fail(
					        err,
					        "byte 0x%02X at offset %zu has no piece <0x%02X>",
					        b, i + 1 - cl + j, b);
				PUSH(t->byte_id[b]);
			}
		}
		cl = 0;
	}

	/* Merge the best pair until none is a piece. The pair of the dummy
	 * prefix and the first character merges too, as in run.c (BOS too:
	 * every token so far is a symbol). */
	struct tok_sym *sym = malloc((size_t)(n > 0 ? n : 1) * sizeof *sym);
	if (sym == NULL)
		return model_fail(err, "out of memory");
	for (int i = 0; i < n; i++)
		sym[i] = (struct tok_sym){.s = t->piece[tokens[i]].s,
		                          .len = t->piece[tokens[i]].len,
		                          .id = tokens[i],
		                          .prev = i - 1,
		                          .next = i + 1 < n ? i + 1 : -1};
	if (tok_spm_merge(t, sym, n, true, err) != 0) {
		free(sym);
		return -1;
	}
	int m = 0;
	for (int i = n > 0 ? 0 : -1; i >= 0; i = sym[i].next)
		tokens[m++] = sym[i].id;
	free(sym);
	n = m;
	if (eos)
		PUSH(LLAMA_TOKEN_EOS);
#undef PUSH
	return n;
}
