/*
 * budget: what the user chose for a run, apart from what the scene is.
 *
 * A struct budget holds the choice only: H2O's heavy and recent (B =
 * heavy + recent), the StreamingLLM sinks asked for, the interval and the
 * prompt the run uses (the scene's, or --interval's and --prompt's: the
 * loaded scene is never changed). It is made and checked in one place,
 * budget_make, from the scene and what the user asked; the sweep's budgets
 * come from it through budget_split, the one place that splits a total.
 * The scene's facts (its tokens, layers, key/value heads) are read from
 * the scene. The rules read both at once, as a struct policy_budget, which
 * only policy_budget_make builds. Nothing here allocates or does I/O.
 */
#ifndef H2O_ENGINE_BUDGET_H
#define H2O_ENGINE_BUDGET_H

#include "h2o/policy.h"

struct scene;

/* The user's choice. */
struct budget {
	int heavy, recent; /* H2O's split; B = heavy + recent */
	int sinks;         /* StreamingLLM's sinks asked for, or -1: its default
	                    * (policy_sinks_for: capped below B) */
	/* Compress every INTERVAL decoding steps (design §2); 0 or 1: every
	 * step. */
	int interval;
	int prompt; /* the prompt P the run reads (design §2), 0 for none */
	/* --policy-opt's settings (h2o/policy_settings.h), all 0 for the
	 * defaults. */
	struct policy_settings settings;
};

/* What the user asked for: each field -1 (a ratio below 0, the interval
 * 0) when not given, and then the scene's is taken. */
struct budget_ask {
	int heavy, recent;
	double heavy_ratio, recent_ratio; /* of the prompt: int(ratio x P) */
	int sinks;
	int prompt;
	int interval;
	struct policy_settings settings; /* checked by policy_settings_set */
};

/* Why an ask is refused (budget_make). */
enum budget_error {
	BUDGET_OK,
	BUDGET_PROMPT_TOO_LONG, /* the prompt asked is longer than the scene */
	BUDGET_RATIO_NO_PROMPT, /* a ratio of a prompt the run does not have */
	BUDGET_EMPTY,           /* heavy + recent < 1 */
	BUDGET_SINKS,           /* the sinks asked for are not below B */
};

/* An ask that takes everything from the scene. */
#define BUDGET_ASK_SCENE ((struct budget_ask){-1, -1, -1.0, -1.0, -1, -1, 0})

/* ASK against SCENE (the loaded scene, not a head view) into *OUT: each
 * value the user gave, else the scene's; heavy and recent as ratios are
 * int(ratio x P), truncated, as H2O's scripts compute them. BUDGET_OK, or
 * why it is refused (*OUT then unchanged). */
enum budget_error budget_make(const struct scene *scene, const struct budget_ask *ask,
                              struct budget *out);

/* SCENE's own budget with HEAVY and RECENT and the sinks SINKS (-1: the
 * default): its prompt and its interval. Unchecked (budget_make checks). */
struct budget budget_scene(const struct scene *scene, int heavy, int recent, int sinks);

/* B with its total budget TOTAL split as the sweep splits it: heavy =
 * floor(TOTAL x HEAVY_SHARE), clamped to 0 .. TOTAL, and recent the rest;
 * sinks, interval and prompt B's. */
struct budget budget_split(const struct budget *b, int total, double heavy_share);

/* What a run of N tokens on LAYERS layers of KV_HEADS key/value heads
 * each (0 for one) reads under B, as the rules see it: the only
 * constructor of a struct policy_budget. */
struct policy_budget policy_budget_make(const struct budget *b, int n, int layers, int kv_heads);

/* policy_budget_make with the facts of SCENE, a loaded scene or a head
 * view of one (heads.h: the layers and key/value heads of its model). */
struct policy_budget policy_budget_of(const struct scene *scene, const struct budget *b);

#endif
