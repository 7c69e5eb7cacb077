/*
 * timeline_impl: the timeline's snapshot intervals, for the tests and the
 * benchmark.
 *
 * A timeline chooses its intervals from the scene's size (timeline.c). The
 * tests need small scenes with long intervals, so that every path between
 * snapshots runs, and the benchmark measures what the intervals cost.
 * Nothing else should pick them.
 */
#ifndef H2O_TIMELINE_IMPL_H
#define H2O_TIMELINE_IMPL_H

#include "h2o/timeline.h"

/* timeline_new with snapshots of the caches that evict every EVERY steps
 * and the full cache's scores every FULL_EVERY steps (rounded up to a
 * multiple of EVERY); 0 for either: chosen from the scene. */
struct timeline *timeline_new_every(const struct scene *scene, const struct budget *b, int every,
                                    int full_every);

/* The intervals TL uses. */
void timeline_intervals(const struct timeline *tl, int *every, int *full_every);

#endif
