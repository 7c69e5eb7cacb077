/*
 * tokenizer: llama2.c's tokenizer.bin, and its encode and decode.
 *
 * The file is untrusted: an int32 maximum piece length (1 to
 * LLAMA_TOK_MAX_PIECE), then for each of the model's vocab_size tokens a
 * float32 merge score (finite), an int32 byte length (0 to the maximum)
 * and that many bytes, which may be any bytes at all; nothing may follow.
 * Errors fill the caller's buffer with one line; nothing prints or exits.
 *
 * Encoding is run.c's: an optional BOS (1), the dummy-prefix piece " "
 * when the text is not empty, then each UTF-8 character (up to four bytes)
 * as its piece, or as byte pieces <0xNN> when the vocabulary has no such
 * piece, then merges of the best-scoring adjacent pair (the first of
 * equals, scores above -1e10 only) until no pair is a piece; an optional
 * EOS (2). Two differences, for untrusted vocabularies only: pieces are
 * compared as byte strings of their own length (run.c stops at a NUL), a
 * piece present twice is found as its lowest id, and a byte's piece is
 * found by its text <0xNN> rather than assumed at id NN + 3 (the same in
 * llama2.c's vocabularies).
 *
 * A tokenizer may also come from a model file's vocabulary (vocab.h:
 * SentencePiece-style or GPT-2-style BPE, encoded as llama.cpp does); the
 * same encode and decode serve every kind.
 */
#ifndef H2O_TOKENIZER_H
#define H2O_TOKENIZER_H

#include <stddef.h>

#include "h2o/llama.h"

/* The longest piece a tokenizer may declare, in bytes. */
#define LLAMA_TOK_MAX_PIECE 4096

#define LLAMA_TOKEN_BOS 1
#define LLAMA_TOKEN_EOS 2

struct llama_tokenizer;

/* Load the tokenizer at PATH (a regular file) for a vocabulary of
 * VOCAB_SIZE tokens (the model's). 0 and *OUT, or -1 with ERR filled. */
int llama_tokenizer_load(const char *path, int vocab_size, struct llama_tokenizer **out,
                         char err[LLAMA_ERR_MAX]);
/* The same from the open file FD, read from its start; FD stays the
 * caller's. */
int llama_tokenizer_load_fd(int fd, int vocab_size, struct llama_tokenizer **out,
                            char err[LLAMA_ERR_MAX]);
/* The same from LEN bytes at DATA, which the tokenizer does not keep. */
int llama_tokenizer_load_bytes(const void *data, size_t len, int vocab_size,
                               struct llama_tokenizer **out, char err[LLAMA_ERR_MAX]);
/* A Hugging Face tokenizer.json at PATH (a regular file of at most 64 MiB)
 * for a model of VOCAB_SIZE tokens: byte-level BPE with its vocab, merges,
 * added tokens, pre-tokenizer and post-processor's BOS (tokenizer_hf.c
 * says what is read and what is refused). 0 and *OUT, or -1 with ERR
 * filled (one line naming the place in the JSON, not the file). */
int llama_tokenizer_load_hf_json(const char *path, int vocab_size, struct llama_tokenizer **out,
                                 char err[LLAMA_ERR_MAX]);
/* The same from the LEN bytes of JSON, which the tokenizer does not keep. */
int llama_tokenizer_load_hf_bytes(const char *json, size_t len, int vocab_size,
                                  struct llama_tokenizer **out, char err[LLAMA_ERR_MAX]);
void llama_tokenizer_free(struct llama_tokenizer *t);

int llama_tokenizer_vocab_size(const struct llama_tokenizer *t);
/* The longest piece the file declares (its header), in bytes: a text of
 * B bytes encodes into at least (B + 1) / max_piece tokens besides BOS. */
int llama_tokenizer_max_piece(const struct llama_tokenizer *t);

/* The ids of BOS and EOS (llama2.c's: 1 and 2), -1 when there is none. */
int llama_tokenizer_bos(const struct llama_tokenizer *t);
int llama_tokenizer_eos(const struct llama_tokenizer *t);
/* How many tokens a text of LEN bytes may encode into, at most, BOS and
 * EOS included: LEN + 3 for llama2.c's, 4 LEN + 3 for a model file's. */
size_t llama_tokenizer_max_tokens(const struct llama_tokenizer *t, size_t len);

/*
 * Encode the LEN bytes of TEXT (any bytes, NUL included) into TOKENS, which
 * has room for CAP ids; llama_tokenizer_max_tokens(LEN) always suffice (LEN
 * + 3 for llama2.c's). BOS and EOS (0 or 1) add those tokens; a model
 * file's vocabulary adds them only where it says so (add_bos, add_eos).
 * Time: N log N in the text's N bytes. Returns the number of tokens, or -1
 * with ERR filled when CAP is too small, a byte has no piece to fall back
 * on, or a vocabulary of fewer than 3 tokens (llama2.c's) has no BOS or EOS
 * to add.
 */
int llama_tokenizer_encode(const struct llama_tokenizer *t, const char *text, size_t len, int bos,
                           int eos, int *tokens, int cap, char err[LLAMA_ERR_MAX]);
/* llama_tokenizer_encode, telling TELL(CTX, DONE, LEN) of the bytes
 * encoded so far: at the start, every 64 KiB or so of a byte-level BPE
 * text's words, and at the end. A TELL that returns non-zero stops the
 * encoding: -1, ERR "stopped". */
struct llama_tok_told {
	int (*tell)(void *ctx, size_t done, size_t total);
	void *ctx;
};
int llama_tokenizer_encode_told(const struct llama_tokenizer *t, const char *text, size_t len,
                                int bos, int eos, int *tokens, int cap, char err[LLAMA_ERR_MAX],
                                const struct llama_tok_told *told);

/*
 * The bytes TOKEN stands for after PREV (the token before it, or -1): its
 * piece, without its leading space right after BOS, and a piece <0xNN> as
 * the one raw byte NN. For a model file's vocabulary: SentencePiece's
 * "\xe2\x96\x81" as a space, BPE's byte alphabet as its bytes, a control
 * token as nothing, and the space SPM puts before the text dropped when
 * first or after BOS. *LEN gets their number; NULL (and *LEN 0) for a
 * token out of range. The bytes are raw, not NUL-terminated, valid while T
 * lives; they may be control characters or broken UTF-8, so a caller that
 * shows them escapes them itself.
 */
const char *llama_tokenizer_decode(const struct llama_tokenizer *t, int prev, int token,
                                   size_t *len);

/* The piece of TOKEN as stored (LEN bytes), NULL when out of range. */
const char *llama_tokenizer_piece(const struct llama_tokenizer *t, int token, size_t *len);
float llama_tokenizer_score(const struct llama_tokenizer *t, int token);

#endif
