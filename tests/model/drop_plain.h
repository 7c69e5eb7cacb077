/*
 * drop_plain: the real drop's figures the plain way (drop_plain.c).
 */
#ifndef H2O_TEST_DROP_PLAIN_H
#define H2O_TEST_DROP_PLAIN_H

struct llama_config;
struct llama_model;

/* ln p(NEXT) of LOGITS written out: the largest, the exp sum in id order,
 * then logit - max - ln sum, as the drop computes it. */
double plain_logprob(const struct llama_config *cfg, const float *logits, int next);

/* H2O over the N TOKENS of model M, prompt PROMPT, HEAVY + RECENT kept,
 * compressing every INTERVAL steps: its log-probabilities of the next
 * tokens into LP (n - 1) and, unless NULL, its logits into LOGITS. */
void plain_h2o(const struct llama_model *m, const int *tokens, int n, int prompt, int heavy,
               int recent, int interval, double *lp, float *logits);

/* The stories260K model (under ROOT/models/stories260K/) and TEXT's
 * tokens with BOS: the drop tests' fixture. */
struct drop_fixture {
	struct llama_model *m;
	int tokens[512];
	int n;
};
/* cmocka's setup and teardown of it: 0, or -1 (a line on stderr). */
int drop_fixture_setup(void **state, const char *root, const char *text);
int drop_fixture_teardown(void **state);

#endif
