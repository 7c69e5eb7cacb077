/*
 * model_pool: the model's use of the shared helper thread (h2o/pool.h).
 *
 * One batch at a time may use a model's helper: a second batch that runs
 * at the same time (another thread on the same model) runs both parts of
 * its jobs itself. The helper spins 0.2 ms before it sleeps: a wake-up
 * from sleep costs more than a job of a small model.
 */
#include "model_impl.h"

#include <stdlib.h>

#include "h2o/llama.h"
#include "h2o/pool.h"

#define MODEL_SPIN_NS 200000L

struct model_pool {
	pthread_mutex_t use; /* held by the batch using the helper */
	struct h2o_pool pool;
};

struct model_pool *model_pool_new(void)
{
	struct model_pool *p = calloc(1, sizeof *p);
	if (p == NULL)
		return NULL;
	if (pthread_mutex_init(&p->use, NULL) != 0) {
		free(p);
		return NULL;
	}
	p->pool.spin_ns = MODEL_SPIN_NS;
	return p;
}

void model_pool_free(struct model_pool *p)
{
	if (p == NULL)
		return;
	pool_stop(&p->pool);
	pthread_mutex_destroy(&p->use);
	free(p);
}

int model_pool_acquire(struct model_pool *p)
{
	if (p == NULL || pthread_mutex_trylock(&p->use) != 0)
		return 0;
	if (!pool_start(&p->pool)) {
		pthread_mutex_unlock(&p->use);
		return 0;
	}
	return 1;
}

void model_pool_release(struct model_pool *p)
{
	pthread_mutex_unlock(&p->use);
}

void model_pool_run(struct model_pool *p, void (*fn)(void *arg, int part), void *arg)
{
	pool_run_two(&p->pool, fn, arg);
}

int model_pool_started(struct model_pool *p)
{
	return p != NULL && p->pool.started;
}

void llama_run_two(const struct llama_model *m, void (*part)(void *arg, int part), void *arg)
{
	struct model_pool *pool = NULL;
	if (m->threads != LLAMA_THREADS_ONE && model_pool_acquire(m->pool))
		pool = m->pool;
	if (pool == NULL) {
		part(arg, 0);
		part(arg, 1);
		return;
	}
	model_pool_run(pool, part, arg);
	model_pool_release(pool);
}
