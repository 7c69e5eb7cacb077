/*
 * tokenizer_hf: a Hugging Face tokenizer.json as a byte-level BPE tokenizer
 * (tokenizer.h's llama_tokenizer_load_hf_json).
 *
 * What is read: model (type "BPE": vocab, an object of piece to id;
 * merges, as "left right" strings or [left, right] pairs; ignore_merges),
 * added_tokens (id and content; "special" ones are control tokens, never
 * made from text, the others are matched whole), pre_tokenizer (ByteLevel,
 * Split with a Regex and the behaviour Isolated, Digits, or a Sequence of
 * them: the expressions run through PCRE2 as they are written) and
 * post_processor (TemplateProcessing, alone or in a Sequence: a special
 * token before $A is the BOS added, one after it the EOS). Anything else
 * that would change the tokens (a normalizer other than NFC, which leaves
 * ASCII as it is; SentencePiece-style byte fallback; another model type or
 * pre-tokenizer) is refused by name rather than ignored. Every error is
 * one line naming the place in the JSON.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "tokenizer_impl.h"

/* A tokenizer.json larger than this is refused before it is read (the
 * largest in use, Llama 3's and Qwen2's, are under 10 MiB). */
#define HF_MAX_BYTES (64u << 20)

#define GPT2_RE "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"

struct hf {
	const char **tokens;
	size_t *token_len;
	int *types;
	char **merges; /* "left right", allocated */
	size_t *merge_len;
	int n_tokens, n_merges;
	struct tok_pre pre;
	int bos, eos;
	bool add_bos, add_eos;
};

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* One pre-tokenizer P (at PLACE) into H's expressions. */
static int pre_one(struct hf *h, const cJSON *p, const char *place, char *err)
{
	char q[TOK_QUOTE_MAX];
	const char *type = str(p, "type");
	if (type == NULL)
		return model_fail(err, "%s.type: expected a string", place);
	if (h->pre.n_re >= 6)
		return model_fail(err, "%s: more than 6 pre-tokenizers", place);
	if (strcmp(type, "ByteLevel") == 0) {
		const cJSON *re = cJSON_GetObjectItemCaseSensitive(p, "use_regex");
		if (!cJSON_IsFalse(re))
			h->pre.re[h->pre.n_re++] = GPT2_RE;
		return 0;
	}
	if (strcmp(type, "Digits") == 0) {
		const cJSON *one = cJSON_GetObjectItemCaseSensitive(p, "individual_digits");
		h->pre.re[h->pre.n_re++] = cJSON_IsTrue(one) ? "\\p{N}" : "\\p{N}+";
		return 0;
	}
	if (strcmp(type, "Split") == 0) {
		const cJSON *pat = cJSON_GetObjectItemCaseSensitive(p, "pattern");
		const char *re = str(pat, "Regex"), *behavior = str(p, "behavior");
		if (re == NULL)
			return model_fail(err, "%s.pattern.Regex: expected a string", place);
		if (behavior == NULL || strcmp(behavior, "Isolated") != 0)
			return model_fail(err, "%s.behavior: \"%s\", only \"Isolated\" is read",
			                  place, tok_quote(q, behavior));
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "invert")))
			return model_fail(err, "%s.invert: an inverted split is not read", place);
		h->pre.re[h->pre.n_re++] = re;
		return 0;
	}
	return model_fail(err, "%s.type: pre-tokenizer \"%s\" is not one this program reads", place,
	                  tok_quote(q, type));
}

static int read_pre(struct hf *h, const cJSON *root, char *err)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
	if (p == NULL || cJSON_IsNull(p))
		return 0;
	if (!cJSON_IsObject(p))
		return model_fail(err, "pre_tokenizer: expected an object or null");
	const char *type = str(p, "type");
	if (type != NULL && strcmp(type, "Sequence") == 0) {
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(p, "pretokenizers");
		if (!cJSON_IsArray(list))
			return model_fail(err, "pre_tokenizer.pretokenizers: expected an array");
		int i = 0;
		for (const cJSON *q = list->child; q != NULL; q = q->next, i++) {
			char place[64];
			snprintf(place, sizeof place, "pre_tokenizer.pretokenizers[%d]", i);
			if (!cJSON_IsObject(q))
				return model_fail(err, "%s: expected an object", place);
			if (pre_one(h, q, place, err) != 0)
				return -1;
		}
		return 0;
	}
	return pre_one(h, p, "pre_tokenizer", err);
}

/* The id of added or vocabulary token CONTENT, or -1. */
static int token_id(const struct hf *h, const char *content)
{
	const size_t n = strlen(content);
	for (int i = 0; i < h->n_tokens; i++)
		if (h->tokens[i] != NULL && h->token_len[i] == n &&
		    memcmp(h->tokens[i], content, n) == 0)
			return i;
	return -1;
}

/* A TemplateProcessing's "single": special tokens before and after $A. */
static int read_template(struct hf *h, const cJSON *tp, const char *place, char *err)
{
	const cJSON *single = cJSON_GetObjectItemCaseSensitive(tp, "single");
	if (!cJSON_IsArray(single))
		return model_fail(err, "%s.single: expected an array", place);
	bool seen_a = false;
	int i = 0;
	for (const cJSON *e = single->child; e != NULL; e = e->next, i++) {
		const cJSON *sp = cJSON_GetObjectItemCaseSensitive(e, "SpecialToken");
		if (sp == NULL) {
			seen_a = true; /* a Sequence: $A */
			continue;
		}
		const char *name = str(sp, "id");
		const int id = name != NULL ? token_id(h, name) : -1;
		if (id < 0)
			return model_fail(err, "%s.single[%d].SpecialToken.id: not a token", place,
			                  i);
		if (!seen_a && !h->add_bos) {
			h->bos = id;
			h->add_bos = true;
		} else if (seen_a && !h->add_eos) {
			h->eos = id;
			h->add_eos = true;
		}
	}
	return 0;
}

static int read_post(struct hf *h, const cJSON *root, char *err)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "post_processor");
	if (p == NULL || cJSON_IsNull(p))
		return 0;
	const char *type = str(p, "type");
	if (type != NULL && strcmp(type, "TemplateProcessing") == 0)
		return read_template(h, p, "post_processor", err);
	if (type != NULL && strcmp(type, "Sequence") == 0) {
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(p, "processors");
		int i = 0;
		for (const cJSON *q = cJSON_IsArray(list) ? list->child : NULL; q != NULL;
		     q = q->next, i++) {
			const char *t = str(q, "type");
			char place[64];
			snprintf(place, sizeof place, "post_processor.processors[%d]", i);
			if (t != NULL && strcmp(t, "TemplateProcessing") == 0 &&
			    read_template(h, q, place, err) != 0)
				return -1;
		}
	}
	return 0; /* ByteLevel and the others add no tokens */
}

/* Merges: "left right" strings, or [left, right] pairs. */
static int read_merges(struct hf *h, const cJSON *merges, char *err)
{
	if (merges == NULL)
		return 0;
	if (!cJSON_IsArray(merges))
		return model_fail(err, "model.merges: expected an array");
	const int n = cJSON_GetArraySize(merges);
	h->merges = calloc((size_t)(n ? n : 1), sizeof *h->merges);
	h->merge_len = calloc((size_t)(n ? n : 1), sizeof *h->merge_len);
	if (h->merges == NULL || h->merge_len == NULL)
		return model_fail(err, "out of memory");
	int i = 0;
	for (const cJSON *m = merges->child; m != NULL; m = m->next, i++) {
		const char *a = NULL, *b = NULL;
		if (cJSON_IsString(m)) {
			a = m->valuestring;
		} else if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 &&
		           cJSON_IsString(m->child) && cJSON_IsString(m->child->next)) {
			a = m->child->valuestring;
			b = m->child->next->valuestring;
		} else {
			return model_fail(err, "model.merges[%d]: expected a string or two", i);
		}
		const size_t la = strlen(a), lb = b ? strlen(b) : 0;
		h->merges[i] = malloc(la + lb + 2);
		if (h->merges[i] == NULL)
			return model_fail(err, "out of memory");
		memcpy(h->merges[i], a, la);
		if (b != NULL) {
			h->merges[i][la] = ' ';
			memcpy(h->merges[i] + la + 1, b, lb);
		}
		h->merge_len[i] = la + (b ? lb + 1 : 0);
		h->n_merges = i + 1;
	}
	return 0;
}

static int set_token(struct hf *h, int id, const char *s, int type, const char *place, char *err)
{
	if (id < 0 || id >= h->n_tokens)
		return model_fail(err, "%s: id %d, must be 0 to %d", place, id, h->n_tokens - 1);
	if (h->tokens[id] != NULL && type == LLAMA_TOKEN_TYPE_NORMAL)
		return model_fail(err, "%s: id %d is given twice", place, id);
	h->tokens[id] = s;
	h->token_len[id] = strlen(s);
	h->types[id] = type;
	return 0;
}

/* The largest id of the items of O (an object of ids, or an array of
 * objects with "id"), into *MOST; -1 with ERR when one is no integer. */
static int largest_id(const cJSON *o, bool in_objects, const char *place, int *most, char *err)
{
	int i = 0;
	for (const cJSON *e = o->child; e != NULL; e = e->next, i++) {
		const cJSON *v = in_objects ? cJSON_GetObjectItemCaseSensitive(e, "id") : e;
		if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= LLAMA_MAX_VOCAB ||
		    v->valuedouble != (double)(int)v->valuedouble)
			return model_fail(err, "%s[%d]: expected an id from 0 to %d", place, i,
			                  LLAMA_MAX_VOCAB - 1);
		if ((int)v->valuedouble > *most)
			*most = (int)v->valuedouble;
	}
	return 0;
}

static int read_hf(struct hf *h, const cJSON *root, char *err)
{
	char q[TOK_QUOTE_MAX];
	if (!cJSON_IsObject(root))
		return model_fail(err, "expected a JSON object");
	const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
	if (!cJSON_IsObject(model))
		return model_fail(err, "model: expected an object");
	const char *type = str(model, "type");
	if (type == NULL || strcmp(type, "BPE") != 0)
		return model_fail(err, "model.type: \"%s\", only \"BPE\" is read",
		                  tok_quote(q, type));
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(model, "byte_fallback")))
		return model_fail(err, "model.byte_fallback: SentencePiece-style BPE is not read "
		                       "from tokenizer.json");
	const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "normalizer");
	if (norm != NULL && !cJSON_IsNull(norm) &&
	    (str(norm, "type") == NULL || strcmp(str(norm, "type"), "NFC") != 0))
		return model_fail(err, "normalizer: \"%s\" is not read",
		                  tok_quote(q, str(norm, "type")));
	const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
	if (!cJSON_IsObject(vocab))
		return model_fail(err, "model.vocab: expected an object");
	const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
	if (added != NULL && !cJSON_IsArray(added) && !cJSON_IsNull(added))
		return model_fail(err, "added_tokens: expected an array");

	int most = -1;
	if (largest_id(vocab, false, "model.vocab", &most, err) != 0 ||
	    (cJSON_IsArray(added) && largest_id(added, true, "added_tokens", &most, err) != 0))
		return -1;
	if (most < 0)
		return model_fail(err, "model.vocab: no tokens");
	h->n_tokens = most + 1;
	h->tokens = calloc((size_t)h->n_tokens, sizeof *h->tokens);
	h->token_len = calloc((size_t)h->n_tokens, sizeof *h->token_len);
	h->types = malloc((size_t)h->n_tokens * sizeof *h->types);
	if (h->tokens == NULL || h->token_len == NULL || h->types == NULL)
		return model_fail(err, "out of memory");
	for (int i = 0; i < h->n_tokens; i++)
		h->types[i] = LLAMA_TOKEN_TYPE_UNUSED;
	for (const cJSON *e = vocab->child; e != NULL; e = e->next)
		if (set_token(h, (int)e->valuedouble, e->string, LLAMA_TOKEN_TYPE_NORMAL,
		              "model.vocab", err) != 0)
			return -1;
	int i = 0;
	for (const cJSON *e = cJSON_IsArray(added) ? added->child : NULL; e != NULL;
	     e = e->next, i++) {
		char place[48];
		snprintf(place, sizeof place, "added_tokens[%d]", i);
		const char *content = str(e, "content");
		if (content == NULL)
			return model_fail(err, "%s.content: expected a string", place);
		const bool special = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "special"));
		if (set_token(h, (int)cJSON_GetObjectItemCaseSensitive(e, "id")->valuedouble,
		              content,
		              special ? LLAMA_TOKEN_TYPE_CONTROL : LLAMA_TOKEN_TYPE_USER_DEFINED,
		              place, err) != 0)
			return -1;
	}
	for (int k = 0; k < h->n_tokens; k++)
		if (h->tokens[k] == NULL)
			h->tokens[k] = "";
	if (read_merges(h, cJSON_GetObjectItemCaseSensitive(model, "merges"), err) != 0)
		return -1;
	h->pre.whole_words = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(model, "ignore_merges"));
	h->bos = h->eos = -1;
	if (read_pre(h, root, err) != 0 || read_post(h, root, err) != 0)
		return -1;
	return 0;
}

static void hf_free(struct hf *h)
{
	for (int i = 0; i < h->n_merges; i++)
		free(h->merges[i]);
	free(h->merges);
	free(h->merge_len);
	free(h->tokens);
	free(h->token_len);
	free(h->types);
}

int llama_tokenizer_load_hf_json(const char *path, int vocab_size, struct llama_tokenizer **out,
                                 char err[LLAMA_ERR_MAX])
{
	FILE *f;
	uint64_t size;

	*out = NULL;
	if (model_open(path, &f, &size, err) != 0)
		return -1;
	if (size > HF_MAX_BYTES) {
		fclose(f);
		return model_fail(err, "file is %llu bytes, more than a tokenizer.json may be (%u)",
		                  (unsigned long long)size, HF_MAX_BYTES);
	}
	char *buf = malloc((size_t)size + 1);
	if (buf == NULL) {
		fclose(f);
		return model_fail(err, "out of memory for %llu bytes", (unsigned long long)size);
	}
	const size_t got = fread(buf, 1, (size_t)size, f);
	const bool grew = fgetc(f) != EOF;
	fclose(f);
	if (got != (size_t)size || grew) {
		free(buf);
		return model_fail(err, "the file changed while being read");
	}
	buf[size] = '\0';
	const int rc = llama_tokenizer_load_hf_bytes(buf, (size_t)size, vocab_size, out, err);
	free(buf);
	return rc;
}

int llama_tokenizer_load_hf_bytes(const char *json, size_t len, int vocab_size,
                                  struct llama_tokenizer **out, char err[LLAMA_ERR_MAX])
{
	*out = NULL;
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, false);
	if (root == NULL) {
		const size_t at = end != NULL && end >= json ? (size_t)(end - json) : 0;
		return model_fail(err, "byte %zu: not valid JSON", at);
	}
	struct hf h = {0};
	int rc = read_hf(&h, root, err);
	if (rc == 0) {
		const struct llama_vocab_spec spec = {
		        .kind = LLAMA_VOCAB_BPE,
		        .n_tokens = h.n_tokens,
		        .tokens = h.tokens,
		        .token_len = h.token_len,
		        .types = h.types,
		        .n_merges = h.n_merges,
		        .merges = (const char *const *)h.merges,
		        .merge_len = h.merge_len,
		        .bos = h.bos,
		        .eos = h.eos,
		        .unk = -1,
		        .pad = -1,
		        .add_bos = h.add_bos,
		        .add_eos = h.add_eos,
		};
		rc = tok_from_vocab(&spec, vocab_size, &h.pre, out, err);
	}
	hf_free(&h);
	cJSON_Delete(root);
	return rc;
}
