/*
 * bpe: GPT-2-style byte-level BPE (vocab.h's LLAMA_VOCAB_BPE), encoded as
 * llama.cpp does.
 *
 * User-defined tokens split the text first (tok_partition). The
 * pre-tokenizer's regular expressions (PCRE2, UTF-8 with Unicode
 * properties), applied one after the other, split each fragment into
 * words: every match a word, and what lies between matches too. Each
 * word's bytes become GPT-2's byte alphabet (a printable byte is its own
 * character, the others U+0100 and up, in order), one symbol per byte;
 * pairs then merge by rank, the lowest first and the leftmost of equals,
 * with the priority queue the SentencePiece kind uses (a score of minus the
 * rank). Llama 3's pre-tokenizer takes a word that is a piece whole.
 *
 * A byte that is not valid UTF-8 is a word of its own (llama.cpp reads it
 * as U+FFFD for the expressions; PCRE2 refuses it).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "tokenizer_impl.h"

#define MAX_RES 6
/* The most backtracking one match may take (PCRE2's match limit). */
#define HF_MATCH_LIMIT 1000000

struct merge_slot {
	int32_t a, b, rank, id; /* a -1 for an empty slot */
};

struct tok_bpe {
	pcre2_code *re[MAX_RES];
	int n_re;
	bool whole_words; /* a word that is a piece is taken whole (Llama 3) */
	struct merge_slot *merge;
	uint32_t mask;
	char byte_char[256][2]; /* each byte's character in the alphabet, UTF-8 */
	unsigned char byte_char_len[256];
	int16_t byte_of[324]; /* the byte a code point of the alphabet stands for, or -1 */
};

/* The pre-tokenizers, by the names llama.cpp's GGUF files give them. */
#define GPT2_RE "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
#define LLAMA3_RE                                                                                  \
	"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" \
	"\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define QWEN2_RE                                                                                   \
	"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" \
	"\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

static const struct pretok {
	const char *names; /* space-separated */
	bool whole_words;
	const char *re[MAX_RES];
} pretoks[] = {
        {"llama3 llama-v3 llama-bpe falcon3 dbrx smaug-bpe", true, {LLAMA3_RE}},
        {"qwen2 deepseek-r1-qwen stablelm2", false, {QWEN2_RE}},
        {"smollm starcoder refact command-r codeshell exaone minerva-7b",
         false,
         {"\\p{N}", GPT2_RE}},
        {"gpt-2 phi-2 roberta-bpe mpt olmo jais jina-es jina-de gigachat jina-v1-en jina-v2-es "
         "jina-v2-de jina-v2-code",
         false,
         {GPT2_RE}},
        {"falcon", false, {"[\\p{P}\\$\\+<=>\\^~\\|`]+", GPT2_RE, "[0-9][0-9][0-9]"}},
        {"default", false, {"[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2_RE, "\\p{N}+", "[0-9][0-9][0-9]"}},
};

static bool named(const char *names, const char *name)
{
	const size_t n = strlen(name);
	for (const char *p = names; *p;) {
		const char *end = strchr(p, ' ');
		const size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && memcmp(p, name, n) == 0)
			return true;
		p += len + (end != NULL);
	}
	return false;
}

void tok_bpe_free(struct tok_bpe *b)
{
	if (b == NULL)
		return;
	for (int i = 0; i < b->n_re; i++)
		pcre2_code_free(b->re[i]);
	free(b->merge);
	free(b);
}

static uint32_t pair_hash(int32_t a, int32_t b)
{
	uint64_t h = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) * 0x9E3779B97F4A7C15u;
	return (uint32_t)(h >> 32);
}

int tok_bpe_pair(const struct llama_tokenizer *t, int a, int b, int *rank)
{
	const struct tok_bpe *p = t->bpe;
	for (uint32_t i = pair_hash(a, b) & p->mask;; i = (i + 1) & p->mask) {
		const struct merge_slot *s = &p->merge[i];
		if (s->a < 0)
			return -1;
		if (s->a == a && s->b == b) {
			*rank = s->rank;
			return s->id;
		}
	}
}

/* GPT-2's byte alphabet: the printable bytes stand for themselves, the
 * others for U+0100 on, in byte order. */
static void byte_alphabet(struct tok_bpe *b)
{
	int next = 256;
	for (int cp = 0; cp < 324; cp++)
		b->byte_of[cp] = -1;
	for (int c = 0; c < 256; c++) {
		const bool self = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174;
		const int cp = self ? c : next++;
		b->byte_of[cp] = (int16_t)c;
		if (cp < 0x80) {
			b->byte_char[c][0] = (char)cp;
			b->byte_char_len[c] = 1;
		} else {
			b->byte_char[c][0] = (char)(0xC0 | cp >> 6);
			b->byte_char[c][1] = (char)(0x80 | (cp & 0x3F));
			b->byte_char_len[c] = 2;
		}
	}
}

int tok_bpe_init(struct llama_tokenizer *t, const struct llama_vocab_spec *spec,
                 const struct tok_pre *given, char err[LLAMA_ERR_MAX])
{
	const char *pre = spec->pre != NULL ? spec->pre : "default";
	struct tok_pre by_name = {0};
	const struct tok_pre *pt = given;
	for (size_t k = 0; k < sizeof pretoks / sizeof pretoks[0] && pt == NULL; k++)
		if (named(pretoks[k].names, pre)) {
			by_name.whole_words = pretoks[k].whole_words;
			for (int i = 0; i < MAX_RES && pretoks[k].re[i] != NULL; i++)
				by_name.re[by_name.n_re++] = pretoks[k].re[i];
			pt = &by_name;
		}
	if (pt == NULL) {
		char q[TOK_QUOTE_MAX];
		return model_fail(err, "pre-tokenizer \"%s\" is not one this program knows",
		                  tok_quote(q, pre));
	}
	if (pt->n_re < 0 || pt->n_re > MAX_RES)
		return model_fail(err, "%d pre-tokenizer expressions, at most %d", pt->n_re,
		                  MAX_RES);
	if (spec->n_merges < 0 ||
	    (spec->n_merges > 0 && (spec->merges == NULL || spec->merge_len == NULL)))
		return model_fail(err, "%d merges without their list", spec->n_merges);

	struct tok_bpe *b = calloc(1, sizeof *b);
	if (b == NULL)
		return model_fail(err, "out of memory");
	t->bpe = b;
	b->whole_words = pt->whole_words;
	byte_alphabet(b);
	for (int i = 0; i < pt->n_re; i++) {
		int code;
		PCRE2_SIZE at;
		b->re[i] = pcre2_compile((PCRE2_SPTR)pt->re[i], PCRE2_ZERO_TERMINATED,
		                         PCRE2_UTF | PCRE2_UCP, &code, &at, NULL);
		if (b->re[i] == NULL) {
			PCRE2_UCHAR msg[120];
			pcre2_get_error_message(code, msg, sizeof msg);
			return model_fail(err, "pre-tokenizer expression %d, at character %zu: %s",
			                  i, (size_t)at, (const char *)msg);
		}
		b->n_re = i + 1;
	}

	size_t size = 16;
	while (size < 2 * (size_t)spec->n_merges)
		size *= 2;
	b->merge = malloc(size * sizeof *b->merge);
	if (b->merge == NULL)
		return model_fail(err, "out of memory");
	b->mask = (uint32_t)(size - 1);
	for (size_t i = 0; i < size; i++)
		b->merge[i].a = -1;
	char *buf = malloc(2 * LLAMA_TOK_MAX_PIECE + 1);
	if (buf == NULL)
		return model_fail(err, "out of memory");
	for (int r = 0; r < spec->n_merges; r++) {
		const char *m = spec->merges[r];
		const size_t len = spec->merge_len[r];
		/* "left right": the first space after the first byte. */
		const char *sp = len > 1 && m != NULL ? memchr(m + 1, ' ', len - 1) : NULL;
		if (sp == NULL || len > 2 * LLAMA_TOK_MAX_PIECE + 1) {
			free(buf);
			return model_fail(err, "merge %d is not two pieces and a space", r);
		}
		const size_t ll = (size_t)(sp - m), rl = len - ll - 1;
		const int a = tok_lookup(t, m, ll, true), c = tok_lookup(t, sp + 1, rl, true);
		memcpy(buf, m, ll);
		memcpy(buf + ll, sp + 1, rl);
		const int id = tok_lookup(t, buf, ll + rl, true);
		/* A merge of what is no piece, or into no piece, never applies. */
		if (a < 0 || c < 0 || id < 0)
			continue;
		uint32_t i = pair_hash(a, c) & b->mask;
		while (b->merge[i].a >= 0 && !(b->merge[i].a == a && b->merge[i].b == c))
			i = (i + 1) & b->mask;
		if (b->merge[i].a < 0) /* the first rank of a pair listed twice */
			b->merge[i] = (struct merge_slot){.a = a, .b = c, .rank = r, .id = id};
	}
	free(buf);
	for (int c = 0; c < 256; c++)
		t->byte_id[c] = tok_lookup(t, b->byte_char[c], b->byte_char_len[c], true);
	return 0;
}

/* What token I decodes to: a normal piece's characters back to bytes. */
size_t tok_bpe_text(const struct llama_tokenizer *t, int i, char *out)
{
	const struct tok_entry *p = &t->piece[i];
	switch (t->type != NULL ? t->type[i] : LLAMA_TOKEN_TYPE_NORMAL) {
	case LLAMA_TOKEN_TYPE_CONTROL:
	case LLAMA_TOKEN_TYPE_UNUSED:
	case LLAMA_TOKEN_TYPE_UNKNOWN:
		return 0;
	case LLAMA_TOKEN_TYPE_USER_DEFINED:
		memcpy(out, p->s, p->len);
		return p->len;
	default:
		break;
	}
	size_t n = 0;
	for (uint32_t j = 0; j < p->len;) {
		const unsigned char c = (unsigned char)p->s[j];
		int cp = -1;
		uint32_t cl = 1;
		if (c < 0x80)
			cp = c;
		else if (c >= 0xC0 && c < 0xE0 && j + 1 < p->len)
			cp = (c & 0x1F) << 6 | ((unsigned char)p->s[j + 1] & 0x3F), cl = 2;
		if (cp >= 0 && cp < 324 && t->bpe->byte_of[cp] >= 0) {
			out[n++] = (char)t->bpe->byte_of[cp];
		} else { /* not of the alphabet: as it is */
			memcpy(out + n, p->s + j, cl);
			n += cl;
		}
		j += cl;
	}
	return n;
}

/* ---- encoding --------------------------------------------------------------- */

struct bpe_run {
	const struct llama_tokenizer *t;
	int *tokens;
	int n, cap;
	char *word;          /* a word in the byte alphabet: room for 2 LEN */
	struct tok_sym *sym; /* room for LEN */
	size_t *spans;       /* words: offset, then twice the length (+1: a bad byte) */
	size_t *spans2;      /* room for LEN + 1 words each */
	pcre2_match_data *md;
	pcre2_match_context *mc;
	char *err;
	/* Progress: the whole text, and the byte last told. */
	const char *text;
	size_t len, told_at;
	const struct llama_tok_told *told;
};

/* Tell R's listener, every 64 KiB or so, that the text's bytes before AT
 * are encoded; -1 (ERR "stopped") when it asks to stop. */
static int tell_at(struct bpe_run *r, size_t at)
{
	if (r->told == NULL || r->told->tell == NULL || at - r->told_at < ((size_t)1 << 16))
		return 0;
	r->told_at = at;
	if (r->told->tell(r->told->ctx, at, r->len) != 0)
		return model_fail(r->err, "stopped");
	return 0;
}

static int push(struct bpe_run *r, int id)
{
	if (r->n >= r->cap)
		return model_fail(r->err, "more than %d tokens", r->cap);
	r->tokens[r->n++] = id;
	return 0;
}

static int encode_word(struct bpe_run *r, const char *s, size_t len)
{
	const struct llama_tokenizer *t = r->t;
	const struct tok_bpe *b = t->bpe;
	size_t wl = 0;
	int n = 0;
	for (size_t i = 0; i < len; i++) {
		const unsigned char c = (unsigned char)s[i];
		r->sym[n] = (struct tok_sym){.s = r->word + wl,
		                             .len = b->byte_char_len[c],
		                             .id = t->byte_id[c],
		                             .prev = n - 1,
		                             .next = n + 1};
		memcpy(r->word + wl, b->byte_char[c], b->byte_char_len[c]);
		wl += b->byte_char_len[c];
		n++;
	}
	if (n == 0)
		return 0;
	if (b->whole_words) {
		const int id = tok_lookup(t, r->word, wl, true);
		if (id >= 0)
			return push(r, id);
	}
	r->sym[n - 1].next = -1;
	if (tok_spm_merge(t, r->sym, n, false, r->err) != 0)
		return -1;
	for (int i = 0; i >= 0; i = r->sym[i].next) {
		if (r->sym[i].id < 0)
			return model_fail(r->err, "byte 0x%02X of the text has no piece",
			                  (unsigned char)s[i]);
		if (push(r, r->sym[i].id) != 0)
			return -1;
	}
	return 0;
}

/* The length of the valid UTF-8 character at S (N bytes left), 0 if none. */
static size_t utf8_valid(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		len = 2, cp = s[0] & 0x1F;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		len = 3, cp = s[0] & 0x0F;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return len;
}

static int bpe_fragment(void *ctx, const char *s, size_t len, int id)
{
	struct bpe_run *r = ctx;
	const struct tok_bpe *b = r->t->bpe;
	if (id >= 0)
		return push(r, id);

	/* Spans are an offset and twice a length, plus 1 for a bad byte: a
	 * word of its own that no expression sees. */
	size_t nw = 0;
	size_t at = 0;
	while (at < len) {
		size_t run = 0, cl;
		while (at + run < len &&
		       (cl = utf8_valid((const unsigned char *)s + at + run, len - at - run)) > 0)
			run += cl;
		if (run > 0) {
			r->spans[2 * nw] = at;
			r->spans[2 * nw + 1] = run << 1; /* low bit 0: to split */
			nw++;
			at += run;
		}
		if (at < len) {
			r->spans[2 * nw] = at;
			r->spans[2 * nw + 1] = 1u << 1 | 1; /* a bad byte, whole */
			nw++;
			at++;
		}
	}
	for (int k = 0; k < b->n_re; k++) {
		size_t m = 0;
		for (size_t w = 0; w < nw; w++) {
			const size_t off = r->spans[2 * w], wl = r->spans[2 * w + 1] >> 1;
			if (r->spans[2 * w + 1] & 1) {
				r->spans2[2 * m] = r->spans[2 * w];
				r->spans2[2 * m + 1] = r->spans[2 * w + 1];
				m++;
				continue;
			}
			size_t from = 0, last = 0;
			while (from < wl) {
				const int rc = pcre2_match(b->re[k], (PCRE2_SPTR)s + off, wl, from,
				                           PCRE2_NO_UTF_CHECK, r->md, r->mc);
				if (rc == PCRE2_ERROR_NOMATCH)
					break;
				if (rc < 0)
					return model_fail(r->err, "the pre-tokenizer failed (%d)",
					                  rc);
				const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
				if (ov[1] == ov[0]) { /* empty: step one character on */
					from = ov[0] + 1;
					while (from < wl &&
					       ((unsigned char)s[off + from] & 0xC0) == 0x80)
						from++;
					continue;
				}
				if (ov[0] > last) {
					r->spans2[2 * m] = off + last;
					r->spans2[2 * m + 1] = (ov[0] - last) << 1;
					m++;
				}
				r->spans2[2 * m] = off + ov[0];
				r->spans2[2 * m + 1] = (ov[1] - ov[0]) << 1;
				m++;
				last = from = ov[1];
			}
			if (last < wl) {
				r->spans2[2 * m] = off + last;
				r->spans2[2 * m + 1] = (wl - last) << 1;
				m++;
			}
		}
		size_t *swap = r->spans;
		r->spans = r->spans2;
		r->spans2 = swap;
		nw = m;
	}
	for (size_t w = 0; w < nw; w++) {
		if (tell_at(r, (size_t)(s - r->text) + r->spans[2 * w]) != 0)
			return -1;
		if (encode_word(r, s + r->spans[2 * w], r->spans[2 * w + 1] >> 1) != 0)
			return -1;
	}
	return 0;
}

int tok_bpe_encode(const struct llama_tokenizer *t, const char *text, size_t len, int bos, int eos,
                   int *tokens, int cap, char err[LLAMA_ERR_MAX], const struct llama_tok_told *told)
{
	struct bpe_run r = {.t = t,
	                    .tokens = tokens,
	                    .cap = cap,
	                    .err = err,
	                    .text = text,
	                    .len = len,
	                    .told = told};

	if (bos && t->add_bos && push(&r, t->bos) != 0)
		return -1;
	if (len > SIZE_MAX / 4 / sizeof(size_t) - 1)
		return model_fail(err, "a text of %zu bytes is too long", len);
	r.word = malloc(2 * len + 1);
	r.sym = malloc((len + 1) * sizeof *r.sym);
	r.spans = malloc((len + 1) * 2 * sizeof *r.spans);
	r.spans2 = malloc((len + 1) * 2 * sizeof *r.spans2);
	r.md = pcre2_match_data_create(4, NULL);
	/* An expression from a tokenizer.json is untrusted: a match that
	 * backtracks without end is refused, not waited for. */
	r.mc = pcre2_match_context_create(NULL);
	if (r.mc != NULL)
		pcre2_set_match_limit(r.mc, HF_MATCH_LIMIT);
	int rc = r.word && r.sym && r.spans && r.spans2 && r.md && r.mc
	                 ? 0
	                 : model_fail(err, "out of memory");
	if (rc == 0)
		rc = tok_partition(t, text, len, bpe_fragment, &r, err);
	pcre2_match_data_free(r.md);
	pcre2_match_context_free(r.mc);
	free(r.word);
	free(r.sym);
	free(r.spans);
	free(r.spans2);
	if (rc != 0)
		return -1;
	if (eos && t->add_eos && push(&r, t->eos) != 0)
		return -1;
	return r.n;
}
