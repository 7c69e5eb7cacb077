/*
 * engine_snapshot: an engine's state as a byte blob and back (engine.h,
 * engine_replay.h).
 */
#include <string.h>

#include "engine_impl.h"
#include "h2o/engine_replay.h"

/* Layout: t, the mask, then per policy of the mask: len, pos[len] (not for
 * the full cache, whose positions are 0 .. len - 1), score[len]. */
struct snap_head {
	int t;
	unsigned mask;
};

size_t engine_snapshot_size_of(const struct engine *e, unsigned mask)
{
	size_t size = sizeof(struct snap_head);
	for (int i = 0; i < POLICY_COUNT; i++) {
		if (!(mask & e->mask & ENGINE_POLICY(i)))
			continue;
		const size_t len = (size_t)engine_len(e, i);
		size += sizeof(int) + len * sizeof(double);
		if (i != POLICY_FULL)
			size += len * sizeof(int);
	}
	return size;
}

void engine_snapshot_of(const struct engine *e, unsigned mask, void *buf)
{
	unsigned char *b = buf;
	const struct snap_head head = {e->t, mask & e->mask};
	memcpy(b, &head, sizeof head);
	b += sizeof head;
	for (int i = 0; i < POLICY_COUNT; i++) {
		if (!(head.mask & ENGINE_POLICY(i)))
			continue;
		const int len = engine_len(e, i);
		memcpy(b, &len, sizeof len);
		b += sizeof len;
		if (i != POLICY_FULL) {
			memcpy(b, engine_positions(e, i), (size_t)len * sizeof(int));
			b += (size_t)len * sizeof(int);
		}
		memcpy(b, engine_scores(e, i), (size_t)len * sizeof(double));
		b += (size_t)len * sizeof(double);
	}
}

size_t engine_snapshot_size(const struct engine *e)
{
	return engine_snapshot_size_of(e, e->mask);
}

void engine_snapshot(const struct engine *e, void *buf)
{
	engine_snapshot_of(e, e->mask, buf);
}

void engine_restore(struct engine *e, const void *buf)
{
	const unsigned char *b = buf;
	struct snap_head head;
	memcpy(&head, b, sizeof head);
	b += sizeof head;
	e->t = e->live = head.t;
	e->streak = -1;
	for (int i = 0; i < POLICY_COUNT; i++) {
		if (!(head.mask & ENGINE_POLICY(i)))
			continue;
		int len;
		memcpy(&len, b, sizeof len);
		b += sizeof len;
		const unsigned char *pos = b;
		if (i != POLICY_FULL)
			b += (size_t)len * sizeof(int);
		const unsigned char *score = b;
		b += (size_t)len * sizeof(double);
		if (!runs(e, i))
			continue;
		if (i == POLICY_FULL) {
			e->f.len = e->f.added = len;
			memcpy(e->f.score, score, (size_t)len * sizeof(double));
			continue;
		}
		cache_restore(e, &e->c[i], head.t, len, pos, score);
	}
	/* The full cache's block stays: its rows depend on the scene alone,
	 * so they are still the rows of the steps they hold. */
}

void engine_restore_full(struct engine *e, const double *scores)
{
	if (!runs(e, POLICY_FULL))
		return;
	e->f.len = e->t;
	e->f.added = e->t;
	memcpy(e->f.score, scores, (size_t)e->t * sizeof *scores);
}
