/*
 * cost: what a run will take, from the same sizes the engine and the
 * timeline allocate by (engine_predict_memory, timeline_predict_memory).
 */
#include "h2o/cost.h"

#include <stdio.h>

#include "h2o/drop.h"
#include "h2o/engine_replay.h"
#include "h2o/heads.h"
#include "h2o/llama.h"
#include "h2o/report.h"
#include "h2o/scene.h"
#include "h2o/timeline.h"

/* Bytes of the trace per number it prints, about: up to 17 significant
 * digits, a separator, and the keys around them (15.0 measured on a
 * generated 2,000-token scene of dim 16: 137.5 MB for 9.2 million numbers). */
#define TRACE_BYTES_PER_NUMBER 15.0

/* Positions attended over one head SC with budget B: the full cache's t
 * at step t; added over the other caches, min(t, engine_cache_cap) each
 * (B + 1, or B + N at an interval of N), and at most t for one that grows
 * after the prompt (policy.grows). */
static void attended(const struct scene *sc, const struct budget *b, unsigned mask, double *full,
                     double *evicting)
{
	const double n = sc->n;
	const double cap = engine_cache_cap(sc, b);
	*full = n * (n + 1) / 2;
	*evicting = 0;
	for (int p = 0; p < POLICY_COUNT; p++)
		if (p != POLICY_FULL && (mask & ENGINE_POLICY(p)))
			*evicting +=
			        policies[p]->grows ? *full : cap * (cap + 1) / 2 + (n - cap) * cap;
}

/* Multiply-adds of the policies of MASK (the full cache always) over one
 * head SC with budget B. */
static double head_madds(const struct scene *sc, const struct budget *b, unsigned mask)
{
	const double dim = sc->mode == SCENE_VECTOR ? sc->dim : 1;
	const double per = sc->v ? 2 * dim : dim; /* logits, and outputs */
	double full, evicting;
	attended(sc, b, mask, &full, &evicting);
	return per * (full + evicting);
}

/* Numbers the trace prints for one head SC: positions, weights and scores
 * of what every cache attends, and the outputs. */
static double head_trace_numbers(const struct scene *sc, const struct budget *b, unsigned mask)
{
	double full, evicting;
	attended(sc, b, mask, &full, &evicting);
	int count = 0;
	for (int p = 0; p < POLICY_COUNT; p++)
		count += (mask & ENGINE_POLICY(p)) != 0;
	const double out = sc->v ? (double)sc->n * sc->dim * count : 0;
	return 3 * (full + evicting) + out;
}

/* Budget TOTAL of a sweep of B. What a run costs depends on the total
 * only, not on how the sweep splits it, so any split will do. */
static struct budget sweep_budget(const struct budget *b, int total)
{
	return budget_split(b, total, 0.5);
}

struct cost cost_of(const struct scene *sc, const struct budget *b, enum cost_mode mode,
                    unsigned shown, const int *budgets, int count, int threads)
{
	struct cost c = {0};
	/* What the modes compute for the policies shown that the scene can
	 * run (engine_policies_for: not those an attention scene or a model
	 * scene refuses), the screens' timelines as the report. */
	shown = engine_policies_for(sc, shown);
	const unsigned mask = report_policies_run(shown);
	const int heads = heads_count(sc);
	const int at_once = threads < 1 ? 1 : threads < heads ? threads : heads;
	for (int h = 0; h < heads; h++) {
		struct scene view;
		heads_view(sc, h, &view);
		const double engine = engine_predict_memory(&view, b, mask, 0);
		switch (mode) {
		case COST_SCREENS:
			c.madds += head_madds(&view, b, mask);
			/* Every head's timeline; only AT_ONCE builder engines
			 * at a time. */
			c.bytes += timeline_predict_memory_only(&view, b, shown) -
			           (h < at_once ? 0 : engine);
			break;
		case COST_REPORT:
		case COST_TRACE:
			c.madds += head_madds(&view, b, mask);
			c.bytes += engine;
			if (mode == COST_TRACE)
				c.trace_bytes +=
				        TRACE_BYTES_PER_NUMBER * head_trace_numbers(&view, b, mask);
			break;
		case COST_SWEEP:
			for (int i = 0; i < count; i++) {
				const struct budget bi = sweep_budget(b, budgets[i]);
				c.madds += head_madds(&view, &bi, mask);
			}
			break;
		}
	}
	if (mode == COST_SWEEP) {
		/* One budget's engines at a time: the largest. */
		for (int i = 0; i < count; i++) {
			const struct budget bi = sweep_budget(b, budgets[i]);
			double bytes = 0;
			for (int h = 0; h < heads; h++) {
				struct scene view;
				heads_view(sc, h, &view);
				bytes += engine_predict_memory(&view, &bi, mask, 0);
			}
			c.bytes = bytes > c.bytes ? bytes : c.bytes;
		}
	}
	if (sc->model) {
		/* The model the scene holds for the whole run (its weights in
		 * the form they are held, llama_model_bytes), and the model
		 * run once per policy (drop.h): once for the report, the trace
		 * and the screens' model panel, once per budget, one budget at
		 * a time, for the sweep. */
		c.bytes += (double)llama_model_bytes(sc->model);
		const unsigned all = mode == COST_SCREENS
		                             ? engine_policies_for(sc, ENGINE_ALL_POLICIES)
		                             : drop_policies_run(shown);
		const int runs = mode == COST_SWEEP ? count : 1;
		c.madds += runs * drop_predict_madds(sc->model, sc->n, all);
		c.bytes += drop_predict_memory(sc->model, sc->n, b->prompt, sc->generated > 0, all);
	}
	return c;
}

double cost_available_memory(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	char line[256];
	double kib = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1)
			break;
	fclose(f);
	return kib * 1024.0;
}

void cost_format_duration(double seconds, char *buf, int size)
{
	const long s = (long)(seconds + 0.5);
	if (s < 60)
		snprintf(buf, (size_t)size, "%ld s", s);
	else if (s < 3600)
		snprintf(buf, (size_t)size, "%ld min %02ld s", s / 60, s % 60);
	else
		snprintf(buf, (size_t)size, "%ld h %02ld min", s / 3600, s % 3600 / 60);
}

void cost_format_bytes(double bytes, char *buf, int size)
{
	static const char *const unit[] = {"bytes", "kB", "MB", "GB", "TB", "PB"};
	int u = 0;
	while (bytes >= 1000.0 && u < 5) {
		bytes /= 1000.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, (size_t)size, "%.0f %s", bytes, unit[u]);
	else
		snprintf(buf, (size_t)size, bytes < 10 ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}
