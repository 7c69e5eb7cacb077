/*
 * generate: the seeded attention model behind "generate" scenes.
 *
 * Each attention feature owns its own coordinates of q and k, so that the
 * logit of query i on key j is exactly the sum the format documents
 * (docs/scene-format.md, "Generated scenes"):
 *
 *   coordinate 0          sink:     k = 1 for j < S,     q = sink strength
 *   coordinate 1          topic:    k = 1 for topics,    q = topic strength
 *   2 .. 2+N-1            needles:  k = 1 at its pos,    q = strength at query_at
 *   next 2 * pairs        locality: k = (cos, sin) of 2 pi theta_m j,
 *                                   q = strength / pairs * the same at i
 *   the rest (C of them)  noise:    k, q = sqrt(noise) / C^(1/4) * normal
 *
 * and q is multiplied by sqrt(dim), which the default scale 1/sqrt(dim)
 * takes away again. Values are normal / sqrt(dim), so |v| is about 1.
 *
 * Why plain arithmetic everywhere: a scene is shared as a small file, and
 * whoever opens it must see the same numbers. Draws are splitmix64 of a
 * counter (any draw without the ones before it, so a position's numbers
 * do not depend on the count); normals are Irwin-Hall sums of twelve
 * uniforms done in integers, exact; sines and cosines are Taylor
 * polynomials in turns. None of it calls libm except floor and sqrt.
 * Nothing here checks its input (scene_generated.c does) or does I/O.
 */
#include "h2o/generate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN 0x9E3779B97F4A7C15u
#define PI     3.14159265358979323846

/* The random streams: changing one knob moves only its own numbers. */
enum stream {
	STREAM_TOPIC = 1,
	STREAM_Q_NOISE = 2,
	STREAM_K_NOISE = 3,
	STREAM_VALUE = 4,
};

enum { CH_SINK = 0, CH_TOPIC = 1, CH_NEEDLES = 2 };

/* splitmix64's output function (Steele, Lea and Flood 2014). */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
	return z ^ (z >> 31);
}

/* Draw INDEX of STREAM: splitmix64 started from a state the seed and the
 * stream fix, read at any point without running the ones before. */
static uint64_t draw(uint64_t seed, uint64_t stream, uint64_t index)
{
	const uint64_t base = mix64(seed + stream * GOLDEN);
	return mix64(base + (index + 1) * GOLDEN);
}

/* A uniform number in [0, 1) from the top 53 bits of a draw. */
static double uniform(uint64_t seed, uint64_t stream, uint64_t index)
{
	return (double)(draw(seed, stream, index) >> 11) * 0x1p-53;
}

double generate_normal(uint64_t seed, uint64_t stream, uint64_t index)
{
	/* Twelve uniforms of 21 bits, three per draw, centred on their cells:
	 * the sum is an integer, so (S + 6) / 2^21 - 6 is exact and the
	 * variance is 1 (to within 2^-42). */
	const uint64_t mask = (1u << 21) - 1;
	uint64_t sum = 0;

	for (uint64_t d = 0; d < 4; d++) {
		const uint64_t r = draw(seed, stream, index * 4 + d);
		sum += (r >> 43) + ((r >> 22) & mask) + ((r >> 1) & mask);
	}
	return (double)(sum + 6) * 0x1p-21 - 6.0;
}

/* sin and cos of 2 pi T for T in [0, 1): the quarter turn by symmetry,
 * the rest by Taylor polynomials (error below 1e-17 on [0, pi/2]). */
static void sincos_turns(double t, double *s, double *c)
{
	const double x = t * 4.0;
	int quad = (int)x;
	if (quad > 3) /* t rounded up to 1 */
		quad = 3;
	const double a = (x - quad) * (PI / 2), a2 = a * a;
	double ps = 1.0, pc = 1.0;

	/* sin a = a (1 - a^2/(2*3) (1 - a^2/(4*5) (1 - ...))), to a^21;
	 * cos a = 1 - a^2/(1*2) (1 - a^2/(3*4) (1 - ...)), to a^22. */
	for (int k = 10; k >= 1; k--)
		ps = 1.0 - a2 / ((2.0 * k) * (2.0 * k + 1.0)) * ps;
	for (int k = 11; k >= 1; k--)
		pc = 1.0 - a2 / ((2.0 * k - 1.0) * (2.0 * k)) * pc;
	const double sa = a * ps, ca = pc;
	switch (quad) {
	case 0:
		*s = sa, *c = ca;
		break;
	case 1:
		*s = ca, *c = -sa;
		break;
	case 2:
		*s = -sa, *c = -ca;
		break;
	default:
		*s = -ca, *c = sa;
		break;
	}
}

int generate_min_dim(const struct generate_params *p)
{
	return CH_NEEDLES + p->n_needles + 2 * p->loc_pairs + (p->noise > 0.0);
}

bool generate_is_topic(const struct generate_params *p, int j)
{
	for (int i = 0; i < p->n_topic_positions; i++)
		if (p->topic_positions[i] == j)
			return true;
	return p->topic_rate > 0.0 && uniform(p->seed, STREAM_TOPIC, (uint64_t)j) < p->topic_rate;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

size_t generate_count_words(const char *text, size_t *longest)
{
	size_t words = 0, len = 0;

	*longest = 0;
	for (const char *s = text;; s++) {
		if (*s && !is_blank(*s)) {
			len++;
			continue;
		}
		if (len > 0) {
			words++;
			*longest = len > *longest ? len : *longest;
		}
		len = 0;
		if (!*s)
			return words;
	}
}

/* The next word of TEXT from *AT, wrapping to the start; NULL if none. */
static const char *next_word(const char *text, const char **at, size_t *len)
{
	for (int pass = 0; pass < 2; pass++) {
		const char *s = *at;
		while (*s && is_blank(*s))
			s++;
		if (*s) {
			const char *e = s;
			while (*e && !is_blank(*e))
				e++;
			*len = (size_t)(e - s);
			*at = e;
			return s;
		}
		*at = text;
	}
	return NULL;
}

static char *dup_bytes(const char *s, size_t len)
{
	char *d = malloc(len + 1);

	if (d != NULL) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

static int fill_text(const struct generate_params *p, const bool *topic, char **text)
{
	const char *at = p->text;

	for (int i = 0; i < p->count; i++) {
		size_t len = 0;
		const char *word = p->text ? next_word(p->text, &at, &len) : NULL;
		const char *over = NULL;
		for (int n = 0; n < p->n_needles && over == NULL; n++)
			if (p->needles[n].pos == i)
				over = p->needles[n].text;
		if (over == NULL && topic[i])
			over = p->topic_text;
		if (over != NULL) {
			text[i] = dup_bytes(over, strlen(over));
		} else if (word != NULL) {
			text[i] = dup_bytes(word, len);
		} else {
			char name[16];
			snprintf(name, sizeof name, "t%d", i);
			text[i] = dup_bytes(name, strlen(name));
		}
		if (text[i] == NULL) {
			for (int j = 0; j < i; j++) {
				free(text[j]);
				text[j] = NULL;
			}
			return -1;
		}
	}
	return 0;
}

int generate_fill(const struct generate_params *p, double *q, double *k, double *v, char **text)
{
	const size_t dim = (size_t)p->dim;
	const int loc = CH_NEEDLES + p->n_needles, noise = loc + 2 * p->loc_pairs;
	const uint64_t c_noise = (uint64_t)(p->dim - noise);
	/* q carries 1/scale, so that scale * q.k is the model's logit. */
	const double amp_q = sqrt((double)p->dim);
	const double amp_noise = c_noise ? sqrt(p->noise) / sqrt(sqrt((double)c_noise)) : 0.0;
	const double amp_v = 1.0 / sqrt((double)p->dim);
	const double loc_q = amp_q * (p->loc_strength / (p->loc_pairs ? p->loc_pairs : 1));
	double theta[GENERATE_MAX_PAIRS];
	bool *topic = malloc((size_t)p->count);

	if (topic == NULL)
		return -1;
	for (int i = 0; i < p->count; i++)
		topic[i] = p->topic_rate > 0.0 &&
		           uniform(p->seed, STREAM_TOPIC, (uint64_t)i) < p->topic_rate;
	for (int i = 0; i < p->n_topic_positions; i++)
		topic[p->topic_positions[i]] = true;

	/* Rotary frequencies at the quantiles of a half-Cauchy distribution
	 * of scale 1/width: the mean of cos(omega d) over them approaches
	 * exp(-d / width) (the Fourier pair of the Cauchy density). In turns
	 * per position: theta = tan(pi (m + 1/2) / (2 pairs)) / (2 pi width). */
	for (int m = 0; m < p->loc_pairs; m++) {
		double s, c;
		sincos_turns((m + 0.5) / (4.0 * p->loc_pairs), &s, &c);
		theta[m] = s / c / (2.0 * PI * p->loc_width);
	}

	/* K, V and TEXT may be NULL (another query head's key/value head has
	 * them): each number comes from its own stream, so q is the same. */
	for (int i = 0; i < p->count; i++) {
		double *qi = q + (size_t)i * dim, *ki = k ? k + (size_t)i * dim : NULL;
		memset(qi, 0, dim * sizeof *qi);
		if (ki != NULL)
			memset(ki, 0, dim * sizeof *ki);

		qi[CH_SINK] = amp_q * p->sink_strength;
		qi[CH_TOPIC] = amp_q * p->topic_strength;
		if (ki != NULL) {
			ki[CH_SINK] = i < p->sink_count ? 1.0 : 0.0;
			ki[CH_TOPIC] = topic[i] ? 1.0 : 0.0;
		}
		for (int n = 0; n < p->n_needles; n++) {
			if (ki != NULL && p->needles[n].pos == i)
				ki[CH_NEEDLES + n] = 1.0;
			if (p->needles[n].query_at == i)
				qi[CH_NEEDLES + n] = amp_q * p->needles[n].strength;
		}
		for (int m = 0; m < p->loc_pairs; m++) {
			double t = theta[m] * i, s, c;
			t -= floor(t);
			sincos_turns(t, &s, &c);
			if (ki != NULL) {
				ki[loc + 2 * m] = c;
				ki[loc + 2 * m + 1] = s;
			}
			qi[loc + 2 * m] = loc_q * c;
			qi[loc + 2 * m + 1] = loc_q * s;
		}
		if (p->noise > 0.0) {
			for (uint64_t c = 0; c < c_noise; c++) {
				const uint64_t at = (uint64_t)i * c_noise + c;
				qi[noise + (int)c] = amp_q * amp_noise *
				                     generate_normal(p->seed, STREAM_Q_NOISE, at);
				if (ki != NULL)
					ki[noise + (int)c] =
					        amp_noise *
					        generate_normal(p->seed, STREAM_K_NOISE, at);
			}
		}
		for (size_t c = 0; v != NULL && c < dim; c++)
			v[(size_t)i * dim + c] = amp_v * generate_normal(p->seed, STREAM_VALUE,
			                                                 (uint64_t)i * dim + c);
	}

	int rc = text != NULL ? fill_text(p, topic, text) : 0;
	free(topic);
	return rc;
}

/* Each character scales the model's parts: x[0] sinks, x[1] locality,
 * x[2] topics. */
static const struct {
	const char *name;
	double x[3];
} characters[] = {
        {"local", {0.3, 2.0, 0.3}},
        {"sink", {1.5, 0.5, 0.3}},
        {"topic", {0.5, 0.5, 1.5}},
};

const char *generate_head_character(int h)
{
	return generate_head_character_at(0, h);
}

const char *generate_head_character_at(int layer, int h)
{
	return characters[(h + layer) % 3].name;
}

void generate_head(struct generate_params *p, int h)
{
	generate_head_at(p, 0, h);
}

void generate_head_at(struct generate_params *p, int layer, int h)
{
	const double *x = characters[(h + layer) % 3].x;
	p->sink_strength *= x[0];
	p->loc_strength *= x[1];
	p->topic_strength *= x[2];
	/* A stream of its own: the seed is any 64-bit value, so heads only
	 * need seeds apart; layers step by another odd constant, so that no
	 * head of one layer shares the seed of a head of another. */
	p->seed += (uint64_t)h * 0x9E3779B97F4A7C15u + (uint64_t)layer * 0xD1B54A32D192ED03u;
}
