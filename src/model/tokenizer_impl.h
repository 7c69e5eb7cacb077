/*
 * tokenizer_impl: what the tokenizer's files share (tokenizer.h, vocab.h).
 *
 * One struct for every kind: llama2.c's tokenizer.bin (run.c's encoding),
 * a SentencePiece-style vocabulary from a model file (llama.cpp's SPM
 * encoding) and a GPT-2-style byte-level BPE vocabulary. Pieces are kept
 * by id, and found by their bytes through an open-addressing hash table.
 */
#ifndef H2O_TOKENIZER_IMPL_H
#define H2O_TOKENIZER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "h2o/tokenizer.h"
#include "h2o/vocab.h"

enum tok_kind { TOK_LLAMA2C, TOK_SPM, TOK_BPE };

struct tok_entry {
	const char *s;
	uint32_t len;
	int id;
};

struct tok_bpe; /* bpe.c */

/* The lowest and highest id of one piece's bytes; -1 for an empty slot. */
struct tok_slot {
	int32_t lo, hi;
};

struct llama_tokenizer {
	enum tok_kind kind;
	int vocab_size; /* the model's: ids are below it */
	int n_tokens;   /* the vocabulary's pieces, at most vocab_size */
	int max_len;    /* the longest piece, in bytes */
	float *scores;
	struct tok_entry *piece; /* by id */
	struct tok_slot *slot;   /* mask + 1 of them, hashed by the pieces' bytes */
	uint32_t mask;
	char *bytes;      /* the pieces' bytes */
	int byte_id[256]; /* the id of <0xNN> (BPE: of the byte's own piece), -1 if none */
	int space_id;     /* llama2.c: the id of " ", -1 when there is none */
	unsigned char byte_value[256];

	/* From a model file's vocabulary (SPM and BPE). */
	int bos, eos, unk;
	bool add_bos, add_eos, add_space_prefix;
	unsigned char *type;    /* enum llama_token_type by id */
	struct tok_entry *text; /* what each token decodes to, by id */
	char *text_bytes;       /* their bytes */
	int *special;           /* user-defined tokens matched whole, longest first */
	int n_special;
	struct tok_bpe *bpe;
};

/* The id of the piece that is the LEN bytes at S, or -1: the lowest of
 * equal pieces when LAST is false, the highest when true. */
int tok_lookup(const struct llama_tokenizer *t, const char *s, size_t len, bool last);
/* Index t->piece into t->slot. 0, or -1 when out of memory. */
int tok_index(struct llama_tokenizer *t);
/* S (NULL: "(none)") as a message may show it: printable ASCII as it is,
 * any other byte as \xNN, at most 32 bytes of S; OUT has room for 136. */
#define TOK_QUOTE_MAX 136
const char *tok_quote(char out[TOK_QUOTE_MAX], const char *s);
/* The byte a piece <0xNN> stands for, or -1. */
int tok_byte_piece(const char *s, size_t len);

/* A symbol of a merge: LEN bytes at S (its text, or with PIECES its
 * piece's), token ID (or -1), linked to its neighbours; LEN 0 once merged
 * into the symbol on its left. */
struct tok_sym {
	const char *s;
	uint32_t len;
	int id;
	int prev, next;
};

/*
 * Merge the N symbols SYM (linked in order) by the best-scoring adjacent
 * pair whose bytes are a piece, the leftmost of equal scores, until no
 * pair is: with a priority queue, in time N log N. PIECES: llama2.c's
 * way (symbols are pieces, possibly not adjacent in memory; scores above
 * -1e10 only; equal pieces found as the lowest id); otherwise llama.cpp's
 * way (symbols are adjacent bytes of one text; control tokens never made;
 * equal pieces found as the highest id), SPM's by the pieces' scores, or
 * BPE's (t->bpe) by the merges' ranks, lowest first. 0, or -1 with ERR filled
 * when out of memory.
 */
int tok_spm_merge(const struct llama_tokenizer *t, struct tok_sym *sym, int n, bool pieces,
                  char err[LLAMA_ERR_MAX]);

/* Encoding and freeing for the kinds from a vocabulary (tokenizer_spm.c,
 * bpe.c); same contract as llama_tokenizer_encode. */
int tok_spm_encode(const struct llama_tokenizer *t, const char *text, size_t len, int bos, int eos,
                   int *tokens, int cap, char err[LLAMA_ERR_MAX]);
int tok_bpe_encode(const struct llama_tokenizer *t, const char *text, size_t len, int bos, int eos,
                   int *tokens, int cap, char err[LLAMA_ERR_MAX],
                   const struct llama_tok_told *told);
/* A pre-tokenizer given by its expressions rather than its name. */
struct tok_pre {
	const char *re[6];
	int n_re;
	bool whole_words; /* a word that is a piece is taken whole */
};
/* Build t->bpe from SPEC (merges, and the pre-tokenizer PRE or else the
 * one SPEC names). 0, or -1 with ERR. */
int tok_bpe_init(struct llama_tokenizer *t, const struct llama_vocab_spec *spec,
                 const struct tok_pre *pre, char err[LLAMA_ERR_MAX]);
/* llama_tokenizer_from_vocab with the pre-tokenizer PRE (BPE), or NULL. */
int tok_from_vocab(const struct llama_vocab_spec *spec, int vocab_size, const struct tok_pre *pre,
                   struct llama_tokenizer **out, char err[LLAMA_ERR_MAX]);
void tok_bpe_free(struct tok_bpe *b);
/* The piece pieces A and B merge into, and its RANK; -1 if they do not. */
int tok_bpe_pair(const struct llama_tokenizer *t, int a, int b, int *rank);
/* What token I decodes to, into OUT (room for its piece); its length. */
size_t tok_bpe_text(const struct llama_tokenizer *t, int i, char *out);

/*
 * Split the LEN bytes at TEXT at every occurrence of T's user-defined
 * tokens, longest first (llama.cpp's partition): calls EMIT for each text
 * fragment (ID -1) and each token (ID), in order. Returns what the last
 * EMIT returned if not 0 (stops there), else 0.
 */
typedef int (*tok_emit_fn)(void *ctx, const char *s, size_t len, int id);
int tok_partition(const struct llama_tokenizer *t, const char *text, size_t len, tok_emit_fn emit,
                  void *ctx, char err[LLAMA_ERR_MAX]);

#endif
