/*
 * tokenizer_spm: the merge both SentencePiece-style encodings share, and
 * tokenizers built from a model file's vocabulary (vocab.h).
 *
 * The merge keeps a priority queue of adjacent pairs whose bytes are a
 * piece, best score first and leftmost of equals: popping a pair whose
 * symbols changed since it was pushed (one merged away, or grown) skips
 * it, and a merge pushes only the two pairs beside it. A text of N
 * symbols takes at most N - 1 merges and 3N pushes: time N log N, where
 * rescanning every pair after every merge (run.c) takes N squared.
 *
 * From a vocabulary, SPM encodes as llama.cpp does: user-defined tokens
 * split the text first (longest first, each matched whole); each other
 * fragment gets a " " before it when the vocabulary adds one and it comes
 * first or after a token, then its spaces become "\xe2\x96\x81", its
 * UTF-8 characters are merged, and a character that is no piece becomes
 * its bytes' pieces <0xNN>. Control tokens are never made from text.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "tokenizer_impl.h"

struct bigram {
	float score;
	int left, right, id;
	uint32_t size;
};

struct heap {
	struct bigram *b;
	size_t n, cap;
};

/* A before B: the better score, then the one further left. */
static bool before(const struct bigram *a, const struct bigram *b)
{
	return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static int heap_push(struct heap *h, struct bigram x)
{
	if (h->n == h->cap) {
		const size_t cap = h->cap ? 2 * h->cap : 64;
		struct bigram *b = realloc(h->b, cap * sizeof *b);
		if (b == NULL)
			return -1;
		h->b = b;
		h->cap = cap;
	}
	size_t i = h->n++;
	while (i > 0 && before(&x, &h->b[(i - 1) / 2])) {
		h->b[i] = h->b[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->b[i] = x;
	return 0;
}

static struct bigram heap_pop(struct heap *h)
{
	const struct bigram top = h->b[0], last = h->b[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(&h->b[c + 1], &h->b[c]))
			c++;
		if (!before(&h->b[c], &last))
			break;
		h->b[i] = h->b[c];
		i = c;
	}
	if (h->n > 0)
		h->b[i] = last;
	return top;
}

/* Push the pair (L, R) if its bytes are a piece the merge may make. */
static int try_pair(const struct llama_tokenizer *t, const struct tok_sym *sym, int l, int r,
                    bool pieces, char *buf, struct heap *h)
{
	if (l < 0 || r < 0)
		return 0;
	const struct tok_sym *a = &sym[l], *b = &sym[r];
	const size_t size = (size_t)a->len + b->len;
	const char *s = a->s;
	if (pieces) {
		if (size > 2 * (size_t)t->max_len)
			return 0; /* longer than any piece */
		memcpy(buf, a->s, a->len);
		memcpy(buf + a->len, b->s, b->len);
		s = buf;
	} else if (size > (size_t)t->max_len) {
		return 0;
	}
	const int id = tok_lookup(t, s, size, !pieces);
	if (id < 0)
		return 0;
	if (pieces && !(t->scores[id] > -1e10f))
		return 0;
	if (!pieces && t->type != NULL && t->type[id] == LLAMA_TOKEN_TYPE_CONTROL)
		return 0;
	const float score = t->scores != NULL ? t->scores[id] : 0.0f;
	return heap_push(
	        h,
	        (struct bigram){
	                .score = score, .left = l, .right = r, .id = id, .size = (uint32_t)size});
}

int tok_spm_merge(const struct llama_tokenizer *t, struct tok_sym *sym, int n, bool pieces,
                  char err[LLAMA_ERR_MAX])
{
	struct heap h = {0};
	char *buf = pieces ? malloc(2 * (size_t)t->max_len) : NULL;
	int rc = 0;

	if (pieces && buf == NULL)
		return model_fail(err, "out of memory");
	for (int i = 0; i + 1 < n && rc == 0; i++)
		rc = try_pair(t, sym, i, i + 1, pieces, buf, &h);
	while (rc == 0 && h.n > 0) {
		const struct bigram g = heap_pop(&h);
		struct tok_sym *a = &sym[g.left], *b = &sym[g.right];
		/* Merged away (id -2), or grown since: not this pair any more. */
		if (a->id == -2 || b->id == -2 || a->next != g.right ||
		    (size_t)a->len + b->len != g.size)
			continue;
		a->id = g.id;
		a->len = g.size;
		if (pieces)
			a->s = t->piece[g.id].s;
		a->next = b->next;
		if (b->next >= 0)
			sym[b->next].prev = g.left;
		b->id = -2;
		rc = try_pair(t, sym, a->prev, g.left, pieces, buf, &h);
		if (rc == 0)
			rc = try_pair(t, sym, g.left, a->next, pieces, buf, &h);
	}
	free(h.b);
	free(buf);
	return rc == 0 ? 0 : model_fail(err, "out of memory");
}

/* The first LEN bytes at P in the N bytes at S, or NULL. */
static const char *find(const char *s, size_t n, const char *p, size_t len)
{
	const char *end = s + n;
	while ((size_t)(end - s) >= len) {
		const char *c = memchr(s, p[0], (size_t)(end - s) - len + 1);
		if (c == NULL)
			return NULL;
		if (memcmp(c, p, len) == 0)
			return c;
		s = c + 1;
	}
	return NULL;
}

/* A fragment of the text being partitioned: bytes [OFF, OFF + LEN), or a
 * token (ID >= 0). */
struct frag {
	size_t off, len;
	int id;
};

int tok_partition(const struct llama_tokenizer *t, const char *text, size_t len, tok_emit_fn emit,
                  void *ctx, char err[LLAMA_ERR_MAX])
{
	if (len == 0)
		return 0;
	/* Each token matched splits one fragment into at most three: a text
	 * of LEN bytes has at most 2 LEN + 1 fragments. */
	size_t cap = 16, n = 1;
	struct frag *f = malloc(cap * sizeof *f), *g = malloc(cap * sizeof *g);
	int rc = 0;
	if (f == NULL || g == NULL) {
		rc = model_fail(err, "out of memory");
		goto done;
	}
	f[0] = (struct frag){.off = 0, .len = len, .id = -1};
	for (int k = 0; k < t->n_special; k++) {
		const int id = t->special[k];
		const char *p = t->piece[id].s;
		const size_t pl = t->piece[id].len;
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			size_t off = f[i].off, rest = f[i].len;
			while (f[i].id < 0 && rest >= pl) {
				const char *hit = find(text + off, rest, p, pl);
				if (hit == NULL)
					break;
				const size_t at = (size_t)(hit - text);
				if (m + 3 > cap) {
					cap *= 2;
					struct frag *ng = realloc(g, cap * sizeof *g),
					            *nf = ng ? realloc(f, cap * sizeof *f) : NULL;
					if (ng != NULL)
						g = ng;
					if (nf == NULL) {
						rc = model_fail(err, "out of memory");
						goto done;
					}
					f = nf;
				}
				if (at > off)
					g[m++] = (struct frag){
					        .off = off, .len = at - off, .id = -1};
				g[m++] = (struct frag){.off = at, .len = pl, .id = id};
				rest -= at - off + pl;
				off = at + pl;
			}
			if (m + 1 > cap) {
				cap *= 2;
				struct frag *ng = realloc(g, cap * sizeof *g),
				            *nf = ng ? realloc(f, cap * sizeof *f) : NULL;
				if (ng != NULL)
					g = ng;
				if (nf == NULL) {
					rc = model_fail(err, "out of memory");
					goto done;
				}
				f = nf;
			}
			if (f[i].id >= 0)
				g[m++] = f[i];
			else if (rest > 0)
				g[m++] = (struct frag){.off = off, .len = rest, .id = -1};
		}
		struct frag *swap = f;
		f = g;
		g = swap;
		n = m;
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = emit(ctx, text + f[i].off, f[i].len, f[i].id);
done:
	free(f);
	free(g);
	return rc;
}

struct spm_run {
	const struct llama_tokenizer *t;
	int *tokens;
	int n, cap;
	bool prev_special;
	char *esc;           /* room for 3 LEN + 3 bytes */
	struct tok_sym *sym; /* room for as many symbols */
	char *err;
};

static int push(struct spm_run *r, int id)
{
	if (r->n >= r->cap)
		return model_fail(r->err, "more than %d tokens", r->cap);
	r->tokens[r->n++] = id;
	return 0;
}

/* The length of the UTF-8 character whose first byte is C (1 for a byte
 * that cannot start one), as llama.cpp counts it. */
static size_t utf8_len(unsigned char c)
{
	static const unsigned char lens[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
	return lens[c >> 4];
}

static int spm_fragment(void *ctx, const char *s, size_t len, int id)
{
	struct spm_run *r = ctx;
	const struct llama_tokenizer *t = r->t;

	if (id >= 0) {
		r->prev_special = true;
		return push(r, id);
	}
	size_t e = 0;
	if (t->add_space_prefix && r->prev_special) {
		memcpy(r->esc, "\xe2\x96\x81", 3);
		e = 3;
	}
	for (size_t i = 0; i < len; i++) {
		if (s[i] == ' ') {
			memcpy(r->esc + e, "\xe2\x96\x81", 3);
			e += 3;
		} else {
			r->esc[e++] = s[i];
		}
	}
	r->prev_special = false;

	int n = 0;
	for (size_t at = 0; at < e; n++) {
		size_t cl = utf8_len((unsigned char)r->esc[at]);
		if (cl > e - at)
			cl = e - at;
		int tid = tok_lookup(t, r->esc + at, cl, true);
		if (tid >= 0 && t->type != NULL && t->type[tid] == LLAMA_TOKEN_TYPE_CONTROL)
			tid = -1;
		r->sym[n] = (struct tok_sym){.s = r->esc + at,
		                             .len = (uint32_t)cl,
		                             .id = tid,
		                             .prev = n - 1,
		                             .next = n + 1};
		at += cl;
	}
	if (n == 0)
		return 0;
	r->sym[n - 1].next = -1;
	if (tok_spm_merge(t, r->sym, n, false, r->err) != 0)
		return -1;
	for (int i = 0; i >= 0; i = r->sym[i].next) {
		const struct tok_sym *y = &r->sym[i];
		if (y->id >= 0) {
			if (push(r, y->id) != 0)
				return -1;
			continue;
		}
		for (uint32_t j = 0; j < y->len; j++) {
			const int b = (unsigned char)y->s[j];
			if (t->byte_id[b] < 0)
				return model_fail(r->err,
				                  "byte 0x%02X of the text has no piece <0x%02X>",
				                  b, b);
			if (push(r, t->byte_id[b]) != 0)
				return -1;
		}
	}
	return 0;
}

int tok_spm_encode(const struct llama_tokenizer *t, const char *text, size_t len, int bos, int eos,
                   int *tokens, int cap, char err[LLAMA_ERR_MAX])
{
	struct spm_run r = {.t = t, .tokens = tokens, .cap = cap, .prev_special = true, .err = err};

	if (bos && t->add_bos && push(&r, t->bos) != 0)
		return -1;
	if (len > (SIZE_MAX - 3) / 3 / sizeof *r.sym)
		return model_fail(err, "a text of %zu bytes is too long", len);
	r.esc = malloc(3 * len + 3);
	r.sym = malloc((3 * len + 3) * sizeof *r.sym);
	int rc = r.esc != NULL && r.sym != NULL ? 0 : model_fail(err, "out of memory");
	if (rc == 0)
		rc = tok_partition(t, text, len, spm_fragment, &r, err);
	free(r.esc);
	free(r.sym);
	if (rc != 0)
		return -1;
	if (eos && t->add_eos && push(&r, t->eos) != 0)
		return -1;
	return r.n;
}

/* ---- tokenizers from a vocabulary ---------------------------------------- */

/* Longest first, then by id. */
static int compare_special(const void *pa, const void *pb)
{
	const struct tok_entry *a = pa, *b = pb;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* What token I decodes to, SentencePiece's way, into OUT (room for three
 * times its piece); its length. */
static size_t spm_text(const struct llama_tokenizer *t, int i, char *out)
{
	const struct tok_entry *p = &t->piece[i];
	switch (t->type != NULL ? t->type[i] : LLAMA_TOKEN_TYPE_NORMAL) {
	case LLAMA_TOKEN_TYPE_CONTROL:
	case LLAMA_TOKEN_TYPE_UNUSED:
		return 0;
	case LLAMA_TOKEN_TYPE_UNKNOWN:
		memcpy(out, "\xe2\x96\x85", 3); /* llama.cpp shows an unknown token as this */
		return 3;
	case LLAMA_TOKEN_TYPE_USER_DEFINED:
		memcpy(out, p->s, p->len);
		return p->len;
	case LLAMA_TOKEN_TYPE_BYTE: {
		const int b = tok_byte_piece(p->s, p->len);
		if (b >= 0) {
			out[0] = (char)b;
			return 1;
		}
		memcpy(out, p->s, p->len);
		return p->len;
	}
	default: {
		size_t n = 0;
		for (uint32_t j = 0; j < p->len; j++) {
			if (j + 3 <= p->len && memcmp(p->s + j, "\xe2\x96\x81", 3) == 0) {
				out[n++] = ' ';
				j += 2;
			} else {
				out[n++] = p->s[j];
			}
		}
		return n;
	}
	}
}

/* Fill T's decoded texts, one token at a time through TEXT_OF (into a
 * buffer of three times the longest piece). */
static int build_texts(struct llama_tokenizer *t,
                       size_t (*text_of)(const struct llama_tokenizer *, int, char *), size_t total,
                       char err[LLAMA_ERR_MAX])
{
	/* No token decodes to more than three times its piece. */
	t->text = malloc((size_t)t->n_tokens * sizeof *t->text);
	t->text_bytes = malloc(3 * total + 1);
	if (t->text == NULL || t->text_bytes == NULL)
		return model_fail(err, "out of memory");
	size_t at = 0;
	for (int i = 0; i < t->n_tokens; i++) {
		const size_t n = text_of(t, i, t->text_bytes + at);
		t->text[i] =
		        (struct tok_entry){.s = t->text_bytes + at, .len = (uint32_t)n, .id = i};
		at += n;
	}
	return 0;
}

int llama_tokenizer_from_vocab(const struct llama_vocab_spec *spec, int vocab_size,
                               struct llama_tokenizer **out, char err[LLAMA_ERR_MAX])
{
	*out = NULL;
	if (spec->kind != LLAMA_VOCAB_SPM && spec->kind != LLAMA_VOCAB_BPE)
		return model_fail(err, "tokenizer kind %d is neither SentencePiece nor BPE",
		                  (int)spec->kind);
	if (vocab_size < 1 || vocab_size > LLAMA_MAX_VOCAB)
		return model_fail(err, "vocabulary of %d tokens, must be 1 to %d", vocab_size,
		                  LLAMA_MAX_VOCAB);
	if (spec->n_tokens < 1 || spec->n_tokens > vocab_size)
		return model_fail(err, "the tokenizer has %d tokens, must be 1 to the model's %d",
		                  spec->n_tokens, vocab_size);
	if (spec->tokens == NULL || spec->token_len == NULL)
		return model_fail(err, "the tokenizer has no token list");
	const int n = spec->n_tokens;
	size_t total = 0;
	int max_len = 1;
	for (int i = 0; i < n; i++) {
		const size_t l = spec->token_len[i];
		if (l > LLAMA_TOK_MAX_PIECE)
			return model_fail(err, "token %d is %zu bytes, longer than %d", i, l,
			                  LLAMA_TOK_MAX_PIECE);
		if (l > 0 && spec->tokens[i] == NULL)
			return model_fail(err, "token %d has no bytes", i);
		if (spec->scores != NULL && !isfinite(spec->scores[i]))
			return model_fail(err, "token %d: score is not finite", i);
		if (spec->types != NULL && (spec->types[i] < LLAMA_TOKEN_TYPE_UNDEFINED ||
		                            spec->types[i] > LLAMA_TOKEN_TYPE_BYTE))
			return model_fail(err, "token %d: type %d, must be 0 to 6", i,
			                  spec->types[i]);
		total += l;
		if ((int)l > max_len)
			max_len = (int)l;
	}
	const struct {
		const char *name;
		int id;
	} named[] = {
	        {"BOS", spec->bos}, {"EOS", spec->eos}, {"UNK", spec->unk}, {"PAD", spec->pad}};
	for (size_t k = 0; k < sizeof named / sizeof named[0]; k++)
		if (named[k].id < -1 || named[k].id >= n)
			return model_fail(err, "%s token %d, must be -1 (none) or 0 to %d",
			                  named[k].name, named[k].id, n - 1);
	if (spec->add_bos && spec->bos < 0)
		return model_fail(err, "the tokenizer adds a BOS token but names none");
	if (spec->add_eos && spec->eos < 0)
		return model_fail(err, "the tokenizer adds an EOS token but names none");

	struct llama_tokenizer *t = calloc(1, sizeof *t);
	if (t == NULL)
		return model_fail(err, "out of memory");
	t->kind = spec->kind == LLAMA_VOCAB_SPM ? TOK_SPM : TOK_BPE;
	t->vocab_size = vocab_size;
	t->n_tokens = n;
	t->max_len = max_len;
	t->bos = spec->bos;
	t->eos = spec->eos;
	t->unk = spec->unk;
	t->add_bos = spec->add_bos;
	t->add_eos = spec->add_eos;
	t->add_space_prefix = spec->kind == LLAMA_VOCAB_SPM && spec->add_space_prefix;
	t->space_id = -1;
	t->scores = malloc((size_t)n * sizeof *t->scores);
	t->type = malloc((size_t)n);
	t->piece = malloc((size_t)n * sizeof *t->piece);
	t->bytes = malloc(total + 1);
	t->special = malloc((size_t)n * sizeof *t->special);
	if (t->scores == NULL || t->type == NULL || t->piece == NULL || t->bytes == NULL ||
	    t->special == NULL) {
		llama_tokenizer_free(t);
		return model_fail(err, "out of memory");
	}
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		const size_t l = spec->token_len[i];
		if (l > 0)
			memcpy(t->bytes + at, spec->tokens[i], l);
		t->piece[i] = (struct tok_entry){.s = t->bytes + at, .len = (uint32_t)l, .id = i};
		at += l;
		t->scores[i] = spec->scores != NULL ? spec->scores[i] : 0.0f;
		t->type[i] = (unsigned char)(spec->types != NULL ? spec->types[i]
		                                                 : LLAMA_TOKEN_TYPE_NORMAL);
		if (t->type[i] == LLAMA_TOKEN_TYPE_USER_DEFINED && l > 0)
			t->special[t->n_special++] = i;
	}
	struct tok_entry *order = malloc((size_t)(t->n_special ? t->n_special : 1) * sizeof *order);
	if (order == NULL || tok_index(t) != 0) {
		free(order);
		llama_tokenizer_free(t);
		return model_fail(err, "out of memory");
	}
	for (int k = 0; k < t->n_special; k++)
		order[k] = t->piece[t->special[k]];
	qsort(order, (size_t)t->n_special, sizeof *order, compare_special);
	for (int k = 0; k < t->n_special; k++)
		t->special[k] = order[k].id;
	free(order);
	for (int b = 0; b < 256; b++)
		t->byte_value[b] = (unsigned char)b;

	int rc = 0;
	if (t->kind == TOK_SPM) {
		for (int b = 0; b < 256; b++) {
			char name[7];
			snprintf(name, sizeof name, "<0x%02X>", b);
			t->byte_id[b] = tok_lookup(t, name, 6, true);
			if (t->byte_id[b] < 0) {
				const char c = (char)b;
				t->byte_id[b] = tok_lookup(t, &c, 1, true);
			}
		}
		rc = build_texts(t, spm_text, total, err);
	} else {
		rc = model_fail(err, "BPE vocabularies are not supported yet");
	}
	if (rc != 0) {
		llama_tokenizer_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
