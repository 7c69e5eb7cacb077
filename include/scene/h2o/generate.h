/*
 * generate: a seeded model of attention that writes a long vector scene.
 *
 * A scene file may hold a "generate" object instead of thousands of tokens
 * (docs/scene-format.md, "Generated scenes"). The loader checks its fields
 * and hands them here; this module builds every token's q, k and v so that
 * the logits scale * q.k have the structure real attention has: attention
 * sinks, a local band that decays with distance, "topic" tokens that every
 * query looks at, needles that one late query looks for, and noise. The
 * numbers depend only on the parameters: the random draws come from a
 * counter-based splitmix64 and the trigonometry from polynomials in plain
 * arithmetic, so the same file gives the same bits on every IEEE-754
 * machine (no rand(), no libm beyond floor and sqrt, which IEEE defines
 * exactly). The module is pure: no I/O, no globals, no JSON; it must never
 * validate user input itself (scene_generated.c does, with positions in
 * the file), so every precondition below is the caller's to keep.
 */
#ifndef H2O_GENERATE_H
#define H2O_GENERATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GENERATE_MAX_NEEDLES 16
#define GENERATE_MAX_PAIRS   64
/* Strengths, noise: logits beyond this are no longer an attention pattern
 * but a one-hot, and exp() of them would only lose precision. */
#define GENERATE_MAX_STRENGTH 50.0
#define GENERATE_MAX_WIDTH    1000000.0
/* The largest seed: every integer up to 2^53 is exact in a JSON double. */
#define GENERATE_MAX_SEED 9007199254740992.0

/* One needle: the key at POS answers the query at QUERY_AT and no other. */
struct generate_needle {
	int pos, query_at; /* 0 <= pos < query_at < count */
	double strength;   /* the logit the needle adds at (query_at, pos) */
	const char *text;  /* its token text, or NULL for the usual word */
};

struct generate_params {
	int count;     /* tokens, >= 1 */
	int dim;       /* >= generate_min_dim() */
	uint64_t seed; /* any value; the file's seed */

	/* Token text: words separated by ASCII blanks, taken in turn and
	 * repeated; NULL (or no word) names token i "t<i>". */
	const char *text;

	double noise; /* standard deviation of each logit's random part, >= 0 */

	int sink_count; /* positions 0 .. sink_count - 1 are sinks */
	double sink_strength;

	int loc_pairs; /* rotary pairs for the local band; 0: no locality */
	double loc_strength, loc_width;

	/* Topic tokens: the positions listed, and each other position with
	 * probability topic_rate; every query adds topic_strength to them. */
	const int *topic_positions; /* each in [0, count), no duplicates */
	int n_topic_positions;
	double topic_rate; /* 0 .. 1 */
	double topic_strength;
	const char *topic_text; /* their token text, or NULL */

	const struct generate_needle *needles;
	int n_needles; /* 0 .. GENERATE_MAX_NEEDLES */
};

/* The words of TEXT as generate_fill splits them (runs of anything but
 * ASCII blanks); *LONGEST gets the longest word's bytes. */
size_t generate_count_words(const char *text, size_t *longest);

/* The dim the parameters need: the sink and topic channels, one channel per
 * needle, two per locality pair, and one more when there is noise. */
int generate_min_dim(const struct generate_params *p);

/* Whether position J is a topic token (listed or drawn at topic_rate). */
bool generate_is_topic(const struct generate_params *p, int j);

/*
 * Fill Q, K and V (count x dim each, row-major, allocated by the caller)
 * and TEXT (count strings, each malloc'd here, freed by the caller with
 * free()). Returns 0, or -1 when out of memory, with every string it made
 * freed and TEXT's entries set to NULL. K, V and TEXT may each be NULL:
 * every part comes from its own random stream, so what is filled is the
 * same without them (a query head that shares another's key/value head).
 */
int generate_fill(const struct generate_params *p, double *q, double *k, double *v, char **text);

/* The random draw behind everything: unit variance normal number INDEX of
 * random stream STREAM for SEED (documented so that other tools can
 * reproduce a scene; exposed for the tests). */
double generate_normal(uint64_t seed, uint64_t stream, uint64_t index);

/*
 * Head H of a multi-head generated scene: the same model with the
 * character generate_head_character(h) ("local", "sink" or "topic", in
 * turn), which makes one part of the logit stronger and the others weaker,
 * and its own random stream, so heads keep different tokens.
 */
void generate_head(struct generate_params *p, int h);
const char *generate_head_character(int h);

/* The same for head H of layer LAYER of a layered scene: the characters
 * turn one step further in each layer, so that each layer has its own mix
 * and order of them, and each layer has random streams of its own.
 * Layer 0 is generate_head and generate_head_character. */
void generate_head_at(struct generate_params *p, int layer, int h);
const char *generate_head_character_at(int layer, int h);

#endif
