/*
 * budget: the user's choice made and checked once (see budget.h).
 */
#include "h2o/budget.h"

#include <math.h>

#include "h2o/scene.h"

enum budget_error budget_make(const struct scene *sc, const struct budget_ask *ask,
                              struct budget *out)
{
	if (ask->prompt > sc->n)
		return BUDGET_PROMPT_TOO_LONG;
	const int prompt = ask->prompt >= 0 ? ask->prompt : sc->prompt;
	if ((ask->heavy_ratio >= 0 || ask->recent_ratio >= 0) && prompt < 1)
		return BUDGET_RATIO_NO_PROMPT;
	/* H2O's scripts: int(ratio * the prompt's length), truncated. */
	const int heavy = ask->heavy >= 0         ? ask->heavy
	                  : ask->heavy_ratio >= 0 ? (int)(ask->heavy_ratio * prompt)
	                                          : sc->heavy;
	const int recent = ask->recent >= 0         ? ask->recent
	                   : ask->recent_ratio >= 0 ? (int)(ask->recent_ratio * prompt)
	                                            : sc->recent;
	if (heavy + recent < 1)
		return BUDGET_EMPTY;
	if (ask->sinks >= heavy + recent)
		return BUDGET_SINKS;
	*out = (struct budget){
	        .heavy = heavy,
	        .recent = recent,
	        .sinks = ask->sinks,
	        .interval = ask->interval > 0 ? ask->interval : sc->interval,
	        .prompt = prompt,
	        .settings = ask->settings,
	};
	return BUDGET_OK;
}

struct budget budget_scene(const struct scene *sc, int heavy, int recent, int sinks)
{
	return (struct budget){
	        .heavy = heavy,
	        .recent = recent,
	        .sinks = sinks,
	        .interval = sc->interval,
	        .prompt = sc->prompt,
	};
}

struct budget budget_split(const struct budget *b, int total, double heavy_share)
{
	/* A fraction written in decimal (0.3) is a little off in binary;
	 * 1e-9 keeps floor(10 * 0.3) at 3. */
	int heavy = (int)floor(total * heavy_share + 1e-9);
	heavy = heavy < 0 ? 0 : heavy > total ? total : heavy;
	struct budget out = *b;
	out.heavy = heavy;
	out.recent = total - heavy;
	return out;
}

struct policy_budget policy_budget_make(const struct budget *b, int n, int layers, int kv_heads)
{
	return (struct policy_budget){
	        .heavy = b->heavy,
	        .recent = b->recent,
	        .sinks = policy_sinks_for(b->sinks, b->heavy + b->recent),
	        .n = n,
	        .prompt = b->prompt,
	        .layers = layers,
	        .interval = b->interval,
	        .kv_heads = kv_heads,
	        .set = b->settings,
	};
}

struct policy_budget policy_budget_of(const struct scene *sc, const struct budget *b)
{
	const struct scene *root = sc->parent ? sc->parent : sc;
	return policy_budget_make(b, sc->n, root->layers, root->kv_heads);
}
