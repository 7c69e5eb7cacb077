/*
 * options: the command line as one table (design §4).
 *
 * OPTIONS below is every option h2o-tui takes: its name, whether it takes
 * an argument and the argument's name, how the argument is read, the field
 * of struct options it sets, its range (restating the limits the scene and
 * the model stages keep, from their constants), the words before that
 * range in a usage error, and its line of --help. --help, the usage errors
 * of a value out of range and the parser all come from it, so an option is
 * one line here; tests/options_doc_test.sh checks that every one of them
 * is documented in the README, the manual page and design §4.
 */
#ifndef H2O_OPTIONS_H
#define H2O_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "h2o/llama.h"
#include "h2o/policy.h"
#include "h2o/policy_settings.h"
#include "h2o/report.h"
#include "h2o/scene.h"

/* Exit statuses (design §4, the manual page's EXIT STATUS). */
enum {
	EXIT_WRITE = 1,  /* stdout or --plot's file could not be written */
	EXIT_USAGE = 2,  /* a bad command line */
	EXIT_SCENE = 3,  /* a bad or unreadable scene, model, tokenizer or text */
	EXIT_MEMORY = 4, /* out of memory, or a run larger than it may take */
};

/* A --model scene's heavy and recent budgets when not given. */
#define MODEL_DEFAULT_BUDGET 16

/* The policy beside H2O when --compare is not given. */
#define COMPARE_DEFAULT POLICY_FULL

/* --size's largest side, in cells. */
#define OPTIONS_MAX_SIDE 1000

/* --temperature's largest: the limit of a model scene's "temperature"
 * (src/scene/scene_model.c, MODEL_MAX_TEMPERATURE). */
#define OPTIONS_MAX_TEMPERATURE 100.0

/* Text put before an option's line in --help: the model's section. */
#define OPTIONS_MODEL_INTRO                                                                  \
	"\nA model instead of SCENE.json (the model runs here, with a full cache, and its\n" \
	"q, k, v are the scene; --heavy and --recent default to 16):\n"

/*
 * X(ID, NAME, ARGUMENT, METAVAR, KIND, FIELD, WHAT, LO, HI, BEFORE, HELP):
 *
 *   ID        OPT_ID, the option's number
 *   NAME      its long name, without "--"
 *   ARGUMENT  NONE, REQUIRED or OPTIONAL (as getopt_long's has_arg)
 *   METAVAR   the argument's name in --help ("" for none)
 *   KIND      FLAG (sets a bool), INT (an integer from LO to HI), REAL (a
 *             number from LO to HI), TEXT (kept as given), or OWN (read by
 *             its own code in options.c, a range from LO to HI if it has
 *             one; --budget-sweep's list is read once the scene is known,
 *             by budget.c)
 *   FIELD     the member of struct options it sets
 *   WHAT      for INT and REAL: what the usage error says is expected
 *             before "from LO to HI"
 *   BEFORE    text --help prints before the option's line, or NULL
 *   HELP      the option's line of --help; {keys}, {comparable},
 *             {policies} and {default-compare} stand for the tables' names
 *             (keys.c, POLICIES)
 */
#define OPTIONS(X)                                                                                 \
	X(HEADLESS, "headless", NONE, "", FLAG, headless, NULL, 0, 0, NULL,                        \
	  "print frames as text to stdout instead of opening the TUI")                             \
	X(KEYS, "keys", REQUIRED, "LIST", TEXT, keys, NULL, 0, 0, NULL,                            \
	  "with --headless: print the frame at step 0, then one frame after each key of LIST "     \
	  "(comma-separated key names: a printable key by its character, e.g. q ? ], the others "  \
	  "by name: {keys}); the mouse: click:ROW:COL, counted from 1, wheel-up and wheel-down, "  \
	  "a wheel also with :ROW:COL")                                                            \
	X(SIZE, "size", REQUIRED, "COLSxROWS", OWN, cols, NULL, 1, OPTIONS_MAX_SIDE, NULL,         \
	  "frame size for --headless (default 120x36)")                                            \
	X(ASCII, "ascii", NONE, "", FLAG, ascii, NULL, 0, 0, NULL,                                 \
	  "ASCII glyphs only (bars, heat, borders)")                                               \
	X(NO_MOUSE, "no-mouse", NONE, "", FLAG, no_mouse, NULL, 0, 0, NULL,                        \
	  "leave the mouse to the terminal: no clicks on tokens and heat cells, no wheel "         \
	  "(the TUI; --keys' click:ROW:COL and wheels still work headless)")                       \
	X(TRACE, "trace", NONE, "", FLAG, trace, NULL, 0, 0, NULL,                                 \
	  "print the JSON Lines trace of every step and exit")                                     \
	X(TRACE_STEPS, "trace-steps", REQUIRED, "LIST", OWN, trace_steps, NULL, 1,                 \
	  SCENE_MAX_TOKENS, NULL,                                                                  \
	  "with --trace: only the steps of LIST (comma-separated steps and ranges A-B, counted "   \
	  "from 1, e.g. 1,250-256); the run still computes every step up to the last of them, "    \
	  "and no further")                                                                        \
	X(HEAVY, "heavy", REQUIRED, "N", INT, heavy, "an integer", 0, SCENE_MAX_BUDGET, NULL,      \
	  "heavy budget (overrides the scene's)")                                                  \
	X(RECENT, "recent", REQUIRED, "N", INT, recent, "an integer", 0, SCENE_MAX_BUDGET, NULL,   \
	  "recent budget (overrides the scene's)")                                                 \
	X(HEAVY_RATIO, "heavy-ratio", REQUIRED, "R", REAL, heavy_ratio, "a fraction", 0, 1, NULL,  \
	  "heavy budget int(R x P) of the prompt's P tokens, as H2O's scripts set it (e.g. 0.1)")  \
	X(RECENT_RATIO, "recent-ratio", REQUIRED, "R", REAL, recent_ratio, "a fraction", 0, 1,     \
	  NULL, "recent budget int(R x P), likewise")                                              \
	X(COMPARE, "compare", REQUIRED, "NAME", OWN, compare, NULL, 0, 0, NULL,                    \
	  "policy beside H2O at start, one of {comparable} (default {default-compare}; c cycles "  \
	  "them in the TUI)")                                                                      \
	X(POLICIES, "policies", REQUIRED, "LIST", OWN, policies, NULL, 0, 0, NULL,                 \
	  "run only these policies (comma-separated, of {policies}; default all) in --report, "    \
	  "--budget-sweep, --trace, --plot and c's cycle; the full cache is always run as the "    \
	  "reference, h2o too (H2O's panel, overlap_h2o), shown only when listed")                 \
	X(SINKS, "sinks", REQUIRED, "N", INT, sinks, "an integer", 0, SCENE_MAX_BUDGET, NULL,      \
	  "StreamingLLM's attention sinks (default 4, below B)")                                   \
	X(PROMPT, "prompt", REQUIRED, "P", INT, prompt, "an integer", 0, SCENE_MAX_TOKENS, NULL,   \
	  "the first P tokens are the prompt: no eviction before its end, then each cache's rule " \
	  "once (overrides the scene's)")                                                          \
	X(INTERVAL, "interval", REQUIRED, "N", INT, interval, "an integer", 1, SCENE_MAX_TOKENS,   \
	  NULL,                                                                                    \
	  "after the prompt, each cache's rule runs every N steps, back to B at once (kvpress' "   \
	  "DecodingPress; overrides the scene's; default 1)")                                      \
	X(POLICY_OPT, "policy-opt", REQUIRED, "P.KEY=V", OWN, settings, NULL, 0, 0, NULL,          \
	  "a setting of policy P (repeatable): snapkv, snapkv-win, pyramidkv, pyramidkv-win, "     \
	  "adakv and adakv-win take window=N (the observation window, default 64), kernel=K "      \
	  "(the pooling kernel, odd, default 5) and pool=mean|max (default mean), kvpress' "       \
	  "SnapKVPress defaults "                                                                  \
	  "(kvpress/presses/snapkv_press.py, 8bb29b9; KVCache-Factory's scripts use 8, 7, max); "  \
	  "adakv also alloc=kvpress|authors (AdaKVPress, or FFY0/AdaKV's split, "                  \
	  "adaptive_snapkv/monkeypatch/snapkv_utils.py, efe4e2e); pyramidkv also "                 \
	  "granularity=kv_head|query_head (a cache per key/value head, default, or per query "     \
	  "head as KVCache-Factory's default, pyramidkv/pyramidkv_utils.py, c97f9d7); "            \
	  "docs/policies.md")                                                                      \
	X(REPORT, "report", NONE, "", FLAG, report, NULL, 0, 0, NULL,                              \
	  "print every policy's figures over the scene and exit")                                  \
	X(SWEEP, "budget-sweep", OPTIONAL, "LIST", OWN, sweep, NULL, 0, 0, NULL,                   \
	  "the report for each total budget B of LIST (comma-separated; default 1..n, or powers "  \
	  "of two past 64; 0.1 is a tenth of the tokens; also --budget-sweep LIST)")               \
	X(SPLIT, "split", REQUIRED, "R", OWN, split, "heavy's fraction of the budget,", 0, 1,      \
	  NULL,                                                                                    \
	  "with --budget-sweep: heavy's fraction of B (default 0.5, or the ratio of --heavy and "  \
	  "--recent when given)")                                                                  \
	X(TARGET, "target", REQUIRED, "FIG=VALUE", OWN, target, NULL, 0, 0, NULL,                  \
	  "the report's and the sweep's target: recall=0.95 (the default), err=0.1 (at most) or "  \
	  "cos=0.99 (at least); on a model scene also ppl=1.01 (the default): the model's "        \
	  "perplexity at most 1.01 x the full cache's")                                            \
	X(PER_HEAD, "per-head", NONE, "", FLAG, per_head, NULL, 0, 0, NULL,                        \
	  "with --report or --budget-sweep: a row per head too")                                   \
	X(PER_LAYER, "per-layer", NONE, "", FLAG, per_layer, NULL, 0, 0, NULL,                     \
	  "with --report: a row per layer too")                                                    \
	X(WITH_PROMPT, "with-prompt", NONE, "", FLAG, with_prompt, NULL, 0, 0, NULL,               \
	  "with --report or --budget-sweep: the attention figures over every step, the "           \
	  "prompt's too (default: the decode steps, after the prompt)")                            \
	X(PLOT, "plot", REQUIRED, "FILE", OWN, plot, NULL, 0, 0, NULL,                             \
	  "with --report or --budget-sweep: also draw the figures into FILE (.svg, .png or "       \
	  ".pdf), the one file written")                                                           \
	X(SMOOTH, "smooth", REQUIRED, "N", INT, smooth, "an integer", 1, SCENE_MAX_TOKENS, NULL,   \
	  "with --report --plot: each point of the per-step panels the mean of the N steps "       \
	  "around it (default 1: as measured)")                                                    \
	X(JSON, "json", NONE, "", FLAG, json, NULL, 0, 0, NULL,                                    \
	  "with --report or --budget-sweep: one JSON object")                                      \
	X(CSV, "csv", NONE, "", FLAG, csv, NULL, 0, 0, NULL,                                       \
	  "with --report: a CSV row per step and policy; with --budget-sweep: per budget and "     \
	  "policy")                                                                                \
	X(MAX_MEMORY, "max-memory", REQUIRED, "SIZE", OWN, max_memory, NULL, 0, 0, NULL,           \
	  "refuse a run that would need more memory than SIZE (e.g. 16G; default: what the "       \
	  "machine has free)")                                                                     \
	X(QUIET, "quiet", NONE, "", FLAG, quiet, NULL, 0, 0, NULL,                                 \
	  "no progress on stderr for --report, --trace, --budget-sweep")                           \
	X(ALLOW_PATHS, "allow-paths", NONE, "", FLAG, allow_paths, NULL, 0, 0, NULL,               \
	  "let the scene name files outside its own folder")                                       \
	X(MODEL, "model", REQUIRED, "M.bin", TEXT, model, NULL, 0, 0, OPTIONS_MODEL_INTRO,         \
	  "a llama2.c checkpoint, a GGUF file or a Hugging Face folder (e.g. "                     \
	  "models/stories260K/stories260K.bin)")                                                   \
	X(TOKENIZER, "tokenizer", REQUIRED, "T.bin", TEXT, tokenizer, NULL, 0, 0, NULL,            \
	  "its tokenizer (e.g. models/stories260K/tok512.bin; a GGUF file and a folder have "      \
	  "their own)")                                                                            \
	X(TEXT, "text", REQUIRED, "FILE", TEXT, text_file, NULL, 0, 0, NULL,                       \
	  "the text, teacher-forced (white space at its ends dropped)")                            \
	X(TEXT_STRING, "text-string", REQUIRED, "TEXT", TEXT, text_string, NULL, 0, 0, NULL,       \
	  "the text itself")                                                                       \
	X(GENERATE, "generate", REQUIRED, "N", INT, generate, "an integer", 1, LLAMA_MAX_SEQ,      \
	  NULL,                                                                                    \
	  "the text is a prompt: the model adds N tokens of its own (the prompt is then the "      \
	  "text's tokens unless --prompt)")                                                        \
	X(TEMPERATURE, "temperature", REQUIRED, "T", REAL, temperature, "a number", 0,             \
	  OPTIONS_MAX_TEMPERATURE, NULL,                                                           \
	  "with --generate: sample at T (default 0: the likeliest)")                               \
	X(SEED, "seed", REQUIRED, "S", INT, seed, "an integer", 1, INT_MAX, NULL,                  \
	  "with --temperature: the sampler's seed, 1 or more (default 1)")                         \
	X(HELP, "help", NONE, "", FLAG, help, NULL, 0, 0, "\n", "show this help and exit")         \
	X(VERSION, "version", NONE, "", FLAG, version, NULL, 0, 0, NULL,                           \
	  "show the version and exit")

enum option_id {
#define X(id, ...) OPT_##id,
	OPTIONS(X)
#undef X
	        OPT_COUNT
};

struct options {
	bool headless, ascii, trace, report, json, csv, quiet;
	bool no_mouse;      /* --no-mouse: the TUI asks the terminal for no mouse reports */
	bool help, version; /* --help, --version: print, exit 0 */
	bool per_head;      /* --per-head: the report's rows per head */
	bool per_layer;     /* --per-layer: the report's rows per layer */
	bool with_prompt;   /* --with-prompt: the figures over the prompt's steps too */
	int prompt;         /* --prompt: the prompt's length; -1: the scene's */
	int interval;       /* --interval: compress every N decoding steps; 0: the scene's */
	const char *plot;   /* --plot FILE, or NULL */
	int smooth;         /* --smooth N: the report's figure smoothed; 0: not given */
	double split;       /* --split: heavy's fraction of a swept budget; -1: not given */
	const char *split_arg;
	struct report_target target; /* --target FIG=VALUE, an attention figure */
	bool target_given;
	double ppl_ratio; /* --target ppl=R, the model's */
	const char *ppl_arg;
	bool ppl_given;
	bool allow_paths;  /* a scene may name files outside its folder */
	double max_memory; /* bytes a run may take; 0: what the machine has free */
	const char *keys;
	const char *sweep; /* --budget-sweep: "" for the default list */
	/* --trace-steps: the steps the trace writes (steps.h), NULL: every one */
	const char *trace_steps;
	int cols, rows;
	int heavy, recent; /* -1: the scene's */
	/* --heavy-ratio, --recent-ratio: fractions of the prompt; -1: not given */
	double heavy_ratio, recent_ratio;
	int sinks;                       /* -1: the default */
	struct policy_settings settings; /* --policy-opt's, 0: the defaults */
	/* --policy-opt's arguments in order, applied over the scene's
	 * "policy_settings" (budget_resolve). */
	const char *policy_opts[POLICY_SETTINGS_MAX];
	int n_policy_opts;
	enum policy_id compare;
	bool compare_given;
	/* --policies: the policies shown, a bit per policy (ENGINE_POLICY);
	 * 0 when not given (the scene's "policies", else every policy). */
	unsigned policies;
	const char *scene;
	/* A model scene from the command line (--model): the files, the
	 * text (--text FILE or --text-string), and a generation's length,
	 * temperature and seed (0: not given). */
	const char *model, *tokenizer, *text_file, *text_string;
	/* A Hugging Face folder's DIR/tokenizer.json, when --model names a
	 * folder and --tokenizer is not given. */
	char tokenizer_in_folder[4096];
	int generate;
	double temperature;
	int seed;
};

/* Read the command line into *O. Returns -1 when the run goes on, else the
 * exit status: 0 after --help or --version (printed on stdout), EXIT_USAGE
 * after a usage error (one line and the --help hint on stderr). */
int options_parse(int argc, char **argv, struct options *o);

/* A usage error: "h2o-tui: " FMT (with ARG), the --help hint; EXIT_USAGE. */
int options_usage_error(const char *fmt, const char *arg);

/* Every policy's name, "full, h2o, ...", into BUF; returns BUF. */
const char *options_policy_names(char *buf, size_t size);

/* --help into OUT. */
void options_help(FILE *out);

#endif
