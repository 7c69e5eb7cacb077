/*
 * drop_query: what a rule that reads the queries before RoPE (policy
 * by_queries, ExpectedAttentionPress) is given in the real drop: a model
 * run's queries before RoPE (llama_run_keep_prerope), its value rows by
 * position, the model's logit scale and rotary embedding.
 */
#ifndef H2O_DROP_QUERY_H
#define H2O_DROP_QUERY_H

#include <stddef.h>

#include "h2o/llama.h"
#include "h2o/policy.h"

struct drop_queries;

/* Room for caches of up to CAP positions of M; NULL when out of memory. */
struct drop_queries *drop_queries_new(const struct llama_model *m, int cap);
void drop_queries_free(struct drop_queries *q);
/* The bytes drop_queries_new takes. */
double drop_queries_bytes(const struct llama_model *m, int cap);
/* Into VIEW (the cache of layer L's kv head G of run R, its LEN slots, at
 * step SEEN) the queries of the group's heads before RoPE, as doubles,
 * positions SEEN - POLICY_QUERIES_READ .. SEEN - 1 (from 0), the values by
 * position, the scale, the rule's room and the rotary embedding. */
void drop_queries_view(struct drop_queries *q, const struct llama_run *r, int l, int g, int seen,
                       int len, struct policy_cache *view);

#endif
