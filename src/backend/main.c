/*
 * main: the command line (design §4). Parses options, loads the scene and
 * hands over to the trace, the headless frames or the terminal.
 *
 * Exit status: 0 success, 2 bad usage, 3 bad scene, 4 out of memory.
 * Nothing touches the terminal before the scene has loaded and the options
 * have been checked.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "h2o/app.h"
#include "h2o/cost.h"
#include "h2o/drop.h"
#include "h2o/engine.h"
#include "h2o/gguf.h"
#include "h2o/heads.h"
#include "h2o/keys.h"
#include "h2o/lessons.h"
#include "h2o/llama.h"
#include "headless.h"
#include "h2o/plot.h"
#include "h2o/policy.h"
#include "h2o/report.h"
#include "h2o/scene.h"
#include "h2o/text.h"
#include "h2o/tokenizer.h"
#include "h2o/trace.h"
#include "tui.h"

enum { EXIT_USAGE = 2, EXIT_SCENE = 3, EXIT_MEMORY = 4 };

struct options {
	bool headless, ascii, trace, report, json, csv, quiet;
	bool per_head;    /* --per-head: the report's rows per head */
	bool per_layer;   /* --per-layer: the report's rows per layer */
	int prompt;       /* --prompt: the prompt's length; -1: the scene's */
	int interval;     /* --interval: compress every N decoding steps; 0: the scene's */
	const char *plot; /* --plot FILE, or NULL */
	double split;     /* --split: heavy's fraction of a swept budget; -1: not given */
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
	int cols, rows;
	int heavy, recent; /* -1: the scene's */
	/* --heavy-ratio, --recent-ratio: fractions of the prompt; -1: not given */
	double heavy_ratio, recent_ratio;
	int sinks; /* -1: the default */
	enum policy_id compare;
	const char *scene;
	/* A model scene from the command line (--model): the files, the
	 * text (--text FILE or --text-string), and a generation's length,
	 * temperature and seed (0: not given). */
	const char *model, *tokenizer, *text_file, *text_string;
	int generate;
	double temperature;
	int seed;
};

/* A --model scene's heavy and recent budgets when not given. */
#define MODEL_DEFAULT_BUDGET 16

/* The policy beside H2O when --compare is not given. */
#define COMPARE_DEFAULT POLICY_FULL

/* One entry of --help: LEAD from column 2, TEXT from column 22 wrapped by
 * words at 80 (a lead too wide for its column takes a line of its own). */
static void put_help(FILE *out, const char *lead, const char *text)
{
	enum { TEXT_COL = 22, WIDTH = 80 };
	int col = fprintf(out, "  %s", lead);
	if (col > TEXT_COL - 2) {
		fputc('\n', out);
		col = 0;
	}
	fprintf(out, "%*s", TEXT_COL - col, "");
	col = TEXT_COL;
	for (const char *s = text; *s;) {
		const size_t word = strcspn(s, " ");
		if (col > TEXT_COL && col + 1 + (int)word > WIDTH) {
			fprintf(out, "\n%*s", TEXT_COL, "");
			col = TEXT_COL;
		} else if (col > TEXT_COL) {
			fputc(' ', out);
			col++;
		}
		fwrite(s, 1, word, out);
		col += (int)word;
		s += word;
		s += strspn(s, " ");
	}
	fputc('\n', out);
}

/* --help: the options, with the key names and the policies from their
 * tables (keys.c, POLICIES). */
static void usage(FILE *out)
{
	char names[256], text[512];
	fputs("Usage: h2o-tui [OPTIONS] SCENE.json\n"
	      "       h2o-tui [OPTIONS] --model M.bin --tokenizer T.bin --text FILE\n"
	      "Step through the H2O KV-cache eviction of a scene, beside the full cache.\n"
	      "\n"
	      "  --headless          print frames as text to stdout instead of opening the TUI\n",
	      out);
	snprintf(text, sizeof text,
	         "with --headless: print the frame at step 0, then one frame after each key of "
	         "LIST (comma-separated key names: a printable key by its character, e.g. q ? ], "
	         "the others by name: %s)",
	         keys_names(names, sizeof names));
	put_help(out, "--keys LIST", text);
	fputs("  --size COLSxROWS    frame size for --headless (default 120x36)\n"
	      "  --ascii             ASCII glyphs only (bars, heat, borders)\n"
	      "  --trace             print the JSON Lines trace of every step and exit\n"
	      "  --heavy N           heavy budget (overrides the scene's)\n"
	      "  --recent N          recent budget (overrides the scene's)\n"
	      "  --heavy-ratio R     heavy budget int(R x P) of the prompt's P tokens, as\n"
	      "                      H2O's scripts set it (e.g. 0.1)\n"
	      "  --recent-ratio R    recent budget int(R x P), likewise\n",
	      out);
	snprintf(text, sizeof text,
	         "policy beside H2O at start, one of %s (default %s; c cycles them in the TUI)",
	         app_comparable_names(names, sizeof names), policies[COMPARE_DEFAULT]->name);
	put_help(out, "--compare NAME", text);
	fputs("  --sinks N           StreamingLLM's attention sinks (default 4, below B)\n"
	      "  --prompt P          the first P tokens are the prompt: no eviction before\n"
	      "                      its end, then each cache's rule once (overrides the scene's)\n"
	      "  --interval N        after the prompt, each cache's rule runs every N steps,\n"
	      "                      back to B at once (kvpress' DecodingPress; overrides the\n"
	      "                      scene's; default 1)\n"
	      "  --report            print every policy's figures over the scene and exit\n"
	      "  --budget-sweep[=LIST]  the report for each total budget B of LIST\n"
	      "                      (comma-separated; default 1..n, or powers of two past 64;\n"
	      "                      0.1 is a tenth of the tokens; also --budget-sweep LIST)\n"
	      "  --split R           with --budget-sweep: heavy's fraction of B (default 0.5,\n"
	      "                      or the ratio of --heavy and --recent when given)\n"
	      "  --target FIG=VALUE  the report's and the sweep's target: recall=0.95 (the\n"
	      "                      default), err=0.1 (at most) or cos=0.99 (at least);\n"
	      "                      on a model scene also ppl=1.01 (the default): the\n"
	      "                      model's perplexity at most 1.01 x the full cache's\n"
	      "  --per-head          with --report or --budget-sweep: a row per head too\n"
	      "  --per-layer         with --report: a row per layer too\n"
	      "  --plot FILE         with --report or --budget-sweep: also draw the figures\n"
	      "                      into FILE (.svg, .png or .pdf), the one file written\n"
	      "  --json              with --report or --budget-sweep: one JSON object\n"
	      "  --csv               with --report: a CSV row per step and policy; with\n"
	      "                      --budget-sweep: per budget and policy\n"
	      "  --max-memory SIZE   refuse a run that would need more memory than SIZE\n"
	      "                      (e.g. 16G; default: what the machine has free)\n"
	      "  --quiet             no progress on stderr for --report, --trace, --budget-sweep\n"
	      "  --allow-paths       let the scene name files outside its own folder\n"
	      "\n"
	      "A model instead of SCENE.json (the model runs here, with a full cache, and its\n"
	      "q, k, v are the scene; --heavy and --recent default to 16):\n"
	      "  --model M.bin       a llama2.c checkpoint (e.g. "
	      "models/stories260K/stories260K.bin)\n"
	      "  --tokenizer T.bin   its tokenizer (e.g. models/stories260K/tok512.bin)\n"
	      "  --text FILE         the text, teacher-forced (white space at its ends dropped)\n"
	      "  --text-string TEXT  the text itself\n"
	      "  --generate N        the text is a prompt: the model adds N tokens of its own\n"
	      "                      (the prompt is then the text's tokens unless --prompt)\n"
	      "  --temperature T     with --generate: sample at T (default 0: the likeliest)\n"
	      "  --seed S            with --temperature: the sampler's seed, 1 or more (default "
	      "1)\n"
	      "\n"
	      "  --help              show this help and exit\n"
	      "  --version           show the version and exit\n"
	      "\n"
	      "Policies (H2O on the left, --compare NAME beside it; --report and --trace\n"
	      "show them all):\n",
	      out);
	for (int p = 0; p < POLICY_COUNT; p++)
		put_help(out, policies[p]->name, policies[p]->about);
	fputs("\nIn the TUI, press ? for the keys. Exit status: 0 ok, 2 bad usage, 3 bad scene,\n"
	      "4 out of memory.\n",
	      out);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("h2o-tui: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'h2o-tui --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

/* Out of memory while doing WHAT: one line, EXIT_MEMORY. */
static int out_of_memory(const char *what)
{
	fprintf(stderr, "h2o-tui: out of memory while %s\n", what);
	return EXIT_MEMORY;
}

/* A mode failed (-1) doing WHAT: either stdout could not be written, which
 * stdout's error flag tells (exit 1), or memory ran out. */
static int mode_failed(const char *what)
{
	return ferror(stdout) ? 1 : out_of_memory(what);
}

static bool parse_int(const char *s, long lo, long hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

static bool parse_size(const char *s, int *cols, int *rows)
{
	char buf[32];
	const char *x = strchr(s, 'x');
	if (!x || (size_t)(x - s) >= sizeof buf)
		return false;
	memcpy(buf, s, (size_t)(x - s));
	buf[x - s] = '\0';
	return parse_int(buf, 1, 1000, cols) && parse_int(x + 1, 1, 1000, rows);
}

/* A size in bytes: a positive number, then k, M, G or T (powers of
 * 1000), or nothing. */
static bool parse_bytes(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v > 0) || v > 1e18)
		return false;
	static const char units[] = "kMGT";
	const char *u = *end ? strchr(units, *end) : NULL;
	if (*end && (!u || end[1]))
		return false;
	for (const char *k = units; u && k <= u; k++)
		v *= 1000.0;
	*out = v;
	return true;
}

/* Whether S looks like --budget-sweep's LIST: digits, '.' and ','. */
static bool is_list(const char *s)
{
	return *s && strspn(s, "0123456789.,") == strlen(s) && strpbrk(s, "0123456789");
}

/* --model without --tokenizer: a GGUF model file carries its own, which
 * the tokenizer loader reads from it. */
static bool gguf_tokenizer(struct options *o)
{
	if (!llama_file_is_gguf(o->model))
		return false;
	o->tokenizer = o->model;
	return true;
}

/* Returns -1 when parsing went on to the end, else the exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	enum {
		OPT_HEADLESS = 256,
		OPT_KEYS,
		OPT_COMPARE,
		OPT_SINKS,
		OPT_REPORT,
		OPT_SWEEP,
		OPT_SPLIT,
		OPT_TARGET,
		OPT_PER_HEAD,
		OPT_PER_LAYER,
		OPT_PROMPT,
		OPT_INTERVAL,
		OPT_HEAVY_RATIO,
		OPT_RECENT_RATIO,
		OPT_PLOT,
		OPT_JSON,
		OPT_CSV,
		OPT_SIZE,
		OPT_ASCII,
		OPT_TRACE,
		OPT_HEAVY,
		OPT_RECENT,
		OPT_MAX_MEMORY,
		OPT_QUIET,
		OPT_ALLOW_PATHS,
		OPT_MODEL,
		OPT_TOKENIZER,
		OPT_TEXT,
		OPT_TEXT_STRING,
		OPT_GENERATE,
		OPT_TEMPERATURE,
		OPT_SEED,
		OPT_HELP,
		OPT_VERSION
	};
	static const struct option longopts[] = {
	        {"headless", no_argument, NULL, OPT_HEADLESS},
	        {"keys", required_argument, NULL, OPT_KEYS},
	        {"size", required_argument, NULL, OPT_SIZE},
	        {"ascii", no_argument, NULL, OPT_ASCII},
	        {"trace", no_argument, NULL, OPT_TRACE},
	        {"heavy", required_argument, NULL, OPT_HEAVY},
	        {"recent", required_argument, NULL, OPT_RECENT},
	        {"compare", required_argument, NULL, OPT_COMPARE},
	        {"sinks", required_argument, NULL, OPT_SINKS},
	        {"report", no_argument, NULL, OPT_REPORT},
	        {"budget-sweep", optional_argument, NULL, OPT_SWEEP},
	        {"split", required_argument, NULL, OPT_SPLIT},
	        {"target", required_argument, NULL, OPT_TARGET},
	        {"per-head", no_argument, NULL, OPT_PER_HEAD},
	        {"per-layer", no_argument, NULL, OPT_PER_LAYER},
	        {"prompt", required_argument, NULL, OPT_PROMPT},
	        {"interval", required_argument, NULL, OPT_INTERVAL},
	        {"heavy-ratio", required_argument, NULL, OPT_HEAVY_RATIO},
	        {"recent-ratio", required_argument, NULL, OPT_RECENT_RATIO},
	        {"plot", required_argument, NULL, OPT_PLOT},
	        {"json", no_argument, NULL, OPT_JSON},
	        {"csv", no_argument, NULL, OPT_CSV},
	        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
	        {"quiet", no_argument, NULL, OPT_QUIET},
	        {"allow-paths", no_argument, NULL, OPT_ALLOW_PATHS},
	        {"model", required_argument, NULL, OPT_MODEL},
	        {"tokenizer", required_argument, NULL, OPT_TOKENIZER},
	        {"text", required_argument, NULL, OPT_TEXT},
	        {"text-string", required_argument, NULL, OPT_TEXT_STRING},
	        {"generate", required_argument, NULL, OPT_GENERATE},
	        {"temperature", required_argument, NULL, OPT_TEMPERATURE},
	        {"seed", required_argument, NULL, OPT_SEED},
	        {"help", no_argument, NULL, OPT_HELP},
	        {"version", no_argument, NULL, OPT_VERSION},
	        {NULL, 0, NULL, 0},
	};
	*o = (struct options){.cols = 120,
	                      .rows = 36,
	                      .heavy = -1,
	                      .recent = -1,
	                      .heavy_ratio = -1,
	                      .recent_ratio = -1,
	                      .sinks = -1,
	                      .prompt = -1,
	                      .split = -1,
	                      .target = REPORT_DEFAULT_TARGET,
	                      .ppl_ratio = REPORT_PPL_DEFAULT,
	                      .compare = COMPARE_DEFAULT};
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_HEADLESS:
			o->headless = true;
			break;
		case OPT_KEYS:
			o->keys = optarg;
			break;
		case OPT_SIZE:
			if (!parse_size(optarg, &o->cols, &o->rows))
				return usage_error(
				        "--size: expected COLSxROWS (each 1 to 1000), got '%s'",
				        optarg);
			break;
		case OPT_ASCII:
			o->ascii = true;
			break;
		case OPT_TRACE:
			o->trace = true;
			break;
		case OPT_HEAVY:
			if (!parse_int(optarg, 0, SCENE_MAX_BUDGET, &o->heavy))
				return usage_error(
				        "--heavy: expected an integer from 0 to 1000000, got '%s'",
				        optarg);
			break;
		case OPT_RECENT:
			if (!parse_int(optarg, 0, SCENE_MAX_BUDGET, &o->recent))
				return usage_error(
				        "--recent: expected an integer from 0 to 1000000, got '%s'",
				        optarg);
			break;
		case OPT_HEAVY_RATIO:
		case OPT_RECENT_RATIO: {
			char *end;
			const double r = strtod(optarg, &end);
			if (end == optarg || *end || !(r >= 0 && r <= 1))
				return usage_error(c == OPT_HEAVY_RATIO
				                           ? "--heavy-ratio: expected a fraction "
				                             "from 0 to 1, got '%s'"
				                           : "--recent-ratio: expected a fraction "
				                             "from 0 to 1, got '%s'",
				                   optarg);
			*(c == OPT_HEAVY_RATIO ? &o->heavy_ratio : &o->recent_ratio) = r;
			break;
		}
		case OPT_COMPARE: {
			const int p = policy_find(optarg);
			if (p < 0 || !app_comparable((enum policy_id)p)) {
				char names[256], msg[512];
				app_comparable_names(names, sizeof names);
				if (p < 0)
					snprintf(msg, sizeof msg,
					         "--compare: unknown policy '%.64s': expected one "
					         "of %s",
					         optarg, names);
				else
					snprintf(msg, sizeof msg,
					         "--compare: %s is always on the left: expected "
					         "one of %s",
					         optarg, names);
				return usage_error("%s", msg);
			}
			o->compare = (enum policy_id)p;
			break;
		}
		case OPT_SINKS:
			if (!parse_int(optarg, 0, SCENE_MAX_BUDGET, &o->sinks))
				return usage_error(
				        "--sinks: expected an integer from 0 to 1000000, got '%s'",
				        optarg);
			break;
		case OPT_REPORT:
			o->report = true;
			break;
		case OPT_SWEEP:
			/* "--budget-sweep 64": the list as the next argument,
			 * when it is one and no file has that name. */
			if (!optarg && optind < argc && is_list(argv[optind]) &&
			    access(argv[optind], F_OK) != 0)
				optarg = argv[optind++];
			o->sweep = optarg ? optarg : "";
			break;
		case OPT_SPLIT: {
			char *end;
			errno = 0;
			o->split = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->split >= 0 && o->split <= 1))
				return usage_error("--split: expected heavy's fraction of the "
				                   "budget, from 0 to "
				                   "1, got '%s'",
				                   optarg);
			o->split_arg = optarg;
			break;
		}
		case OPT_TARGET:
			/* Once for the attention tables and once for the model's. */
			if (report_ppl_parse(optarg, &o->ppl_ratio)) {
				o->ppl_given = true;
				o->ppl_arg = optarg;
			} else if (report_target_parse(optarg, &o->target)) {
				o->target_given = true;
			} else {
				return usage_error(
				        "--target: expected recall=R or cos=C (0 to 1), err=E (0 "
				        "or more) or ppl=R (1 or more), got '%s'",
				        optarg);
			}
			break;
		case OPT_PER_LAYER:
			o->per_layer = true;
			break;
		case OPT_PROMPT:
			if (!parse_int(optarg, 0, SCENE_MAX_TOKENS, &o->prompt))
				return usage_error(
				        "--prompt: expected an integer from 0 to 1000000, got '%s'",
				        optarg);
			break;
		case OPT_INTERVAL:
			if (!parse_int(optarg, 1, SCENE_MAX_TOKENS, &o->interval))
				return usage_error("--interval: expected an integer from 1 to "
				                   "1000000, got '%s'",
				                   optarg);
			break;
		case OPT_PER_HEAD:
			o->per_head = true;
			break;
		case OPT_PLOT:
			if (plot_format_of(optarg) < 0)
				return usage_error("--plot: expected a file name ending in .svg, "
				                   ".png or .pdf, got '%s'",
				                   optarg);
			o->plot = optarg;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_CSV:
			o->csv = true;
			break;
		case OPT_MAX_MEMORY:
			if (!parse_bytes(optarg, &o->max_memory))
				return usage_error(
				        "--max-memory: expected a size such as 512M, 16G or "
				        "2T (bytes, or k, M, G, T: powers of 1000), got '%s'",
				        optarg);
			break;
		case OPT_QUIET:
			o->quiet = true;
			break;
		case OPT_ALLOW_PATHS:
			o->allow_paths = true;
			break;
		case OPT_MODEL:
			o->model = optarg;
			break;
		case OPT_TOKENIZER:
			o->tokenizer = optarg;
			break;
		case OPT_TEXT:
			o->text_file = optarg;
			break;
		case OPT_TEXT_STRING:
			o->text_string = optarg;
			break;
		case OPT_GENERATE:
			if (!parse_int(optarg, 1, 65536, &o->generate))
				return usage_error(
				        "--generate: expected an integer from 1 to 65536, got '%s'",
				        optarg);
			break;
		case OPT_TEMPERATURE: {
			char *end;
			errno = 0;
			o->temperature = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(o->temperature >= 0 && o->temperature <= 100))
				return usage_error("--temperature: expected a number from 0 to "
				                   "100, got '%s'",
				                   optarg);
			break;
		}
		case OPT_SEED:
			if (!parse_int(optarg, 1, 2147483647, &o->seed))
				return usage_error("--seed: expected an integer from 1 to "
				                   "2147483647, got '%s'",
				                   optarg);
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		case OPT_VERSION:
			puts("h2o-tui " H2O_VERSION);
			return 0;
		default:
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	/* No scene: the first lesson of the lesson path (run). */
	if (optind < argc - 1)
		return usage_error("%s", "expected exactly one scene file");
	o->scene = optind < argc ? argv[optind] : NULL;
	if (o->model && o->scene)
		return usage_error("%s", "--model stands for the scene file: give one of them");
	if (o->model && !o->tokenizer && !gguf_tokenizer(o))
		return usage_error("%s", "--model needs --tokenizer, the model's tokenizer");
	if (!o->model && (o->tokenizer || o->text_file || o->text_string || o->generate))
		return usage_error("%s", "--tokenizer, --text, --text-string and --generate go "
		                         "with --model");
	if (o->model && !o->text_file == !o->text_string)
		return usage_error("%s", "--model needs one of --text FILE and --text-string TEXT");
	if ((o->temperature > 0 || o->seed) && !o->generate)
		return usage_error("%s", "--temperature and --seed go with --generate");
	if (o->keys && !o->headless)
		return usage_error("%s", "--keys goes with --headless");
	if (o->keys) {
		char err[256];
		if (headless_check_keys(o->keys, err, sizeof err) < 0)
			return usage_error("%s", err);
	}
	const int modes = o->trace + o->headless + o->report + (o->sweep != NULL);
	if (modes > 1)
		return usage_error("%s",
		                   "choose one of --headless, --trace, --report, --budget-sweep");
	if (o->json && !o->report && !o->sweep)
		return usage_error("%s", "--json goes with --report or --budget-sweep");
	if (o->csv && !o->report && !o->sweep)
		return usage_error("%s", "--csv goes with --report or --budget-sweep");
	if (o->csv && o->json)
		return usage_error("%s", "choose one of --json, --csv");
	if ((o->target_given || o->ppl_given) && !o->report && !o->sweep)
		return usage_error("%s", "--target goes with --report or --budget-sweep");
	if (o->plot && !o->report && !o->sweep)
		return usage_error("%s", "--plot goes with --report or --budget-sweep");
	if (o->per_layer && !o->report)
		return usage_error("%s", "--per-layer goes with --report");
	if (o->per_head && !o->report && !o->sweep)
		return usage_error("%s", "--per-head goes with --report or --budget-sweep");
	if (o->split >= 0 && !o->sweep)
		return usage_error("%s", "--split goes with --budget-sweep");
	if ((o->heavy >= 0 && o->heavy_ratio >= 0) || (o->recent >= 0 && o->recent_ratio >= 0))
		return usage_error("%s", "--heavy-ratio and --recent-ratio give the budgets that "
		                         "--heavy and --recent do: give one of each");
	if (o->split >= 0 &&
	    (o->heavy >= 0 || o->recent >= 0 || o->heavy_ratio >= 0 || o->recent_ratio >= 0))
		return usage_error("%s", "--split and --heavy/--recent both split the budget: "
		                         "give one of them");
	return -1;
}

/* --budget-sweep's LIST ("" for 1..n, or powers of two and n past 64
 * tokens) into *BUDGETS (COUNT of them, to free). An entry with a '.' is
 * a fraction of the token count (0 < f <= 1), rounded, at least 1.
 * Returns -1, or the exit status of a bad list. */
static int sweep_budgets(const struct scene *scene, const char *list, int **budgets, int *count)
{
	const int n = scene->n;
	int *out = malloc(((size_t)n + 64) * sizeof *out);
	if (!out)
		return out_of_memory("computing the budget sweep");
	int k = 0;
	if (*list == '\0') {
		for (int b = 1; b <= n; b = n <= 64 ? b + 1 : b * 2)
			out[k++] = b;
		if (out[k - 1] != n)
			out[k++] = n;
	} else {
		for (const char *p = list; *p; k++) {
			char *end;
			errno = 0;
			const size_t len = strcspn(p, ",");
			const bool fraction = memchr(p, '.', len) != NULL;
			long b = -1;
			if (fraction) {
				const double f = strtod(p, &end);
				if (!errno && end != p && f > 0 && f <= 1)
					b = lround(f * n) > 1 ? lround(f * n) : 1;
			} else {
				b = strtol(p, &end, 10);
			}
			if (errno || end == p || (*end && *end != ',') || b < 1 ||
			    b > SCENE_MAX_BUDGET || k >= n + 63) {
				free(out);
				return usage_error(
				        "--budget-sweep: expected budgets from 1 to 1000000, or "
				        "fractions of the tokens (0 to 1, e.g. 0.1), "
				        "comma-separated, got '%s'",
				        list);
			}
			out[k] = (int)b;
			p = *end ? end + 1 : end;
		}
	}
	*budgets = out;
	*count = k;
	return -1;
}

/* Progress on stderr, when it is a terminal: one line redrawn in place,
 * at most every PROGRESS_MS, with the time left at the rate so far. */
#define PROGRESS_MS 100

struct meter {
	const char *what;
	double start, last;
	bool shown;
};

static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void meter_show(void *ctx, double done, double total)
{
	struct meter *m = ctx;
	const double now = seconds_now();
	if (m->shown && now - m->last < PROGRESS_MS / 1000.0 && done < total)
		return;
	m->last = now;
	m->shown = true;
	const double frac = total > 0 ? done / total : 1;
	enum { BAR = 24 };
	char bar[BAR + 1];
	for (int i = 0; i < BAR; i++)
		bar[i] = i < (int)(frac * BAR) ? '#' : '.';
	bar[BAR] = '\0';
	char left[48] = "";
	const double elapsed = now - m->start;
	if (frac > 0 && frac < 1 && elapsed >= 1) {
		char t[32];
		cost_format_duration(elapsed * (1 - frac) / frac, t, sizeof t);
		snprintf(left, sizeof left, "  %s left", t);
	}
	fprintf(stderr, "\r\033[Kh2o-tui: %s [%s] %3.0f%%%s", m->what, bar, 100 * frac, left);
	fflush(stderr);
}

/* The progress of WHAT for a mode: on stderr when it is a terminal and
 * --quiet is not given, else none (NULL). */
static const struct progress *progress_for(const struct options *o, struct meter *m,
                                           struct progress *p, const char *what)
{
	if (o->quiet || !isatty(STDERR_FILENO))
		return NULL;
	*m = (struct meter){.what = what, .start = seconds_now()};
	*p = (struct progress){meter_show, m};
	return p;
}

/* Clear the progress line, if one was shown. */
static void progress_done(const struct meter *m, const struct progress *p)
{
	if (p && m->shown)
		fputs("\r\033[K", stderr);
}

/* The run of cost C needs more memory than it may take: one line naming
 * the figure and the option, EXIT_MEMORY. Returns -1 when it fits. */
static int refuse_if_too_large(const struct options *o, const struct scene *scene,
                               const struct cost *c)
{
	const double limit = o->max_memory > 0 ? o->max_memory : cost_available_memory();
	if (limit <= 0 || c->bytes <= limit)
		return -1;
	char need[32], have[32];
	cost_format_bytes(c->bytes, need, sizeof need);
	cost_format_bytes(limit, have, sizeof have);
	const int heads = heads_count(scene);
	char what[96];
	snprintf(what, sizeof what, "%d token%s, %d head%s", scene->n, scene->n == 1 ? "" : "s",
	         heads, heads == 1 ? "" : "s");
	if (o->max_memory > 0)
		fprintf(stderr,
		        "h2o-tui: %s: needs about %s of memory (%s), more than --max-memory %s "
		        "allows\n",
		        o->scene, need, what, have);
	else
		fprintf(stderr,
		        "h2o-tui: %s: needs about %s of memory (%s), more than the %s this machine "
		        "has free; --max-memory SIZE raises the limit\n",
		        o->scene, need, what, have);
	return EXIT_MEMORY;
}

/* --plot: draw RUN (or SWEEP) into the file, and say on stderr what it
 * drew (unless --quiet). The one file this program writes. Returns 0, or
 * 1 when the file cannot be written. */
static int write_plot(const struct options *o, const struct report_run *run,
                      const struct drop_result *drop, const struct report_sweep *sweep,
                      const struct drop_sweep *model)
{
	char err[256];
	struct plot_info info;
	const int rc = run ? plot_report(run, drop, o->plot, &info, err, sizeof err)
	                   : plot_sweep(sweep, model, o->plot, &info, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "h2o-tui: %s: %s\n", o->plot, err);
		return 1;
	}
	const int panels = info.panels - (info.model_curves > 0);
	if (!o->quiet && info.model_curves > 0)
		fprintf(stderr,
		        "h2o-tui: wrote %s: %d panel%s of %d curves, one per policy, and the "
		        "model's %s, %d curves, one per policy run on the model\n",
		        o->plot, panels, panels == 1 ? "" : "s", info.curves,
		        run ? "log-probability lost over the steps"
		            : "perplexity against the budget",
		        info.model_curves);
	else if (!o->quiet)
		fprintf(stderr, "h2o-tui: wrote %s: %d panel%s of %d curves, one per policy\n",
		        o->plot, panels, panels == 1 ? "" : "s", info.curves);
	return 0;
}

/* Display widths need a UTF-8 LC_CTYPE; the user's own is kept when it is
 * one. Returns whether the user's locale was UTF-8. */
static bool setup_locale(bool keep_user_ctype)
{
	setlocale(LC_ALL, "");
	/* Numbers on screen and in the trace use a decimal point whatever
	 * the user's locale: "0,5" is not JSON. */
	setlocale(LC_NUMERIC, "C");
	const bool utf8 = text_locale_is_utf8();
	if (!utf8 && !keep_user_ctype && !setlocale(LC_CTYPE, "C.UTF-8"))
		setlocale(LC_CTYPE, "en_US.UTF-8");
	return utf8;
}

/* A model scene's model and tokenizer, loaded again for the real drop
 * (drop.h): the loader ran the model for the trace and let it go. */
struct model_pair {
	struct llama_model *m;
	struct llama_tokenizer *t;
};

/* 0 with *MP filled (both NULL for a scene without a model), or the exit
 * status after one line on stderr. */
static int model_pair_load(const struct scene *sc, struct model_pair *mp)
{
	char err[LLAMA_ERR_MAX];
	*mp = (struct model_pair){0};
	if (!sc->model_path)
		return 0;
	if (llama_load(sc->model_path, &mp->m, err) != 0) {
		fprintf(stderr, "%s\n", err);
		return EXIT_SCENE;
	}
	if (llama_tokenizer_load(sc->tokenizer_path, llama_model_config(mp->m)->vocab_size, &mp->t,
	                         err) != 0) {
		fprintf(stderr, "%s\n", err);
		llama_free(mp->m);
		mp->m = NULL;
		return EXIT_SCENE;
	}
	return 0;
}

static void model_pair_free(struct model_pair *mp)
{
	llama_tokenizer_free(mp->t);
	llama_free(mp->m);
}

/* The model's name for the drop's table: its file's base name. */
static const char *model_name(const struct scene *sc)
{
	const char *slash = strrchr(sc->model_path, '/');
	return slash ? slash + 1 : sc->model_path;
}

/* A model scene's report: the real drop at budget B (drop.h) into *R,
 * printed inside the report in every format. 0, or the exit status. */
static int report_drop(const struct scene *sc, const struct model_pair *mp,
                       const struct policy_budget *b, struct drop_result *r)
{
	char err[DROP_ERR_MAX];
	if (drop_measure(mp->m, sc->tokens, sc->n, sc->given, sc->prompt, b, ENGINE_ALL_POLICIES, r,
	                 err) != 0)
		return out_of_memory("running the model per policy");
	return 0;
}

/* A model scene's sweep: the real drop at each of its budgets into *S. */
static int sweep_drop(const struct scene *sc, const struct model_pair *mp, const int *budgets,
                      int count, const struct report_split *split, int sinks, double ratio,
                      struct drop_sweep *s)
{
	char err[DROP_ERR_MAX];
	if (drop_sweep_measure(mp->m, sc->tokens, sc->n, sc->given, sc->prompt, budgets, count,
	                       split->heavy, sinks, sc->interval, ratio, s, err) != 0)
		return out_of_memory("running the model per policy and budget");
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc = parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	/* H2O_KERNEL=avx512|avx2|portable: the engine's kernels, to test each
	 * variant; one this processor cannot run is a usage error. */
	const char *kernel = getenv("H2O_KERNEL");
	const int kernel_rc = kernel && *kernel ? engine_kernel_select(kernel) : 0;
	if (kernel_rc < 0)
		return usage_error(kernel_rc == -1 ? "H2O_KERNEL=%s: this processor cannot run it"
		                                   : "H2O_KERNEL=%s: not avx512, avx2 or portable",
		                   kernel);
	const bool interactive = !o.headless && !o.trace && !o.report && !o.sweep;
	if (interactive && !isatty(STDOUT_FILENO))
		return usage_error("%s",
		                   "stdout is not a terminal: use --headless for text frames");
	const bool utf8 = setup_locale(interactive);

	char err[SCENE_ERROR_MAX];
	/* The lesson path the scene is on, if any; without a scene, its first
	 * lesson (the scenes' folder is the source tree's, H2O_SCENES_DIR). */
	int lesson = -1;
	struct lessons *lessons = NULL;
	char first[4096];
	if (o.model) {
		/* No lesson path. */
	} else if (!o.scene) {
		if (lessons_load(H2O_SCENES_DIR, &lessons, err, sizeof err) < 0)
			return usage_error("expected a scene file (SCENE.json); the lessons: %s",
			                   err);
		o.scene = lessons_path(lessons, lesson = 0, first, sizeof first);
	} else
		lessons = lessons_of_scene(o.scene, H2O_SCENES_DIR, &lesson);
	struct scene *scene;
	const struct scene_options load = {.allow_paths = o.allow_paths};
	const struct scene_model_args model = {
	        .model = o.model,
	        .tokenizer = o.tokenizer,
	        .text_file = o.text_file,
	        .text = o.text_string,
	        .text_len = o.text_string ? strlen(o.text_string) : 0,
	        .generate = o.generate,
	        .temperature = o.temperature,
	        .seed = (unsigned long long)o.seed,
	        .heavy = o.heavy >= 0 ? o.heavy : MODEL_DEFAULT_BUDGET,
	        .recent = o.recent >= 0 ? o.recent : MODEL_DEFAULT_BUDGET,
	};
	if (o.model) {
		o.scene = o.model; /* what messages name */
		if (scene_load_model(&model, &scene, err) < 0) {
			fprintf(stderr, "%s\n", err);
			return EXIT_SCENE;
		}
	} else if (scene_load_file_opts(o.scene, &load, &scene, err) < 0) {
		fprintf(stderr, "%s\n", err);
		lessons_free(lessons);
		return EXIT_SCENE;
	}
	if (o.prompt > scene->n) {
		fprintf(stderr,
		        "h2o-tui: --prompt %d: the scene has only %d tokens\n"
		        "Try 'h2o-tui --help' for more information.\n",
		        o.prompt, scene->n);
		scene_free(scene);
		lessons_free(lessons);
		return EXIT_USAGE;
	}
	if (o.prompt >= 0)
		scene->prompt = o.prompt;
	if (o.interval > 0)
		scene->interval = o.interval;
	if ((o.heavy_ratio >= 0 || o.recent_ratio >= 0) && scene->prompt < 1) {
		scene_free(scene);
		lessons_free(lessons);
		return usage_error("%s", "--heavy-ratio and --recent-ratio are fractions of the "
		                         "prompt, and the scene has none: give --prompt P");
	}
	/* H2O's scripts: int(ratio * the prompt's length), truncated. */
	const int heavy = o.heavy >= 0         ? o.heavy
	                  : o.heavy_ratio >= 0 ? (int)(o.heavy_ratio * scene->prompt)
	                                       : scene->heavy;
	const int recent = o.recent >= 0         ? o.recent
	                   : o.recent_ratio >= 0 ? (int)(o.recent_ratio * scene->prompt)
	                                         : scene->recent;
	if (heavy + recent < 1) {
		scene_free(scene);
		lessons_free(lessons);
		return usage_error("%s", "--heavy and --recent: heavy + recent must be at least 1");
	}
	if (o.sinks >= heavy + recent) {
		scene_free(scene);
		lessons_free(lessons);
		return usage_error("%s", "--sinks: must be less than heavy + recent");
	}
	const struct policy_budget b = {
	        .heavy = heavy,
	        .recent = recent,
	        .sinks = policy_sinks_for(o.sinks, heavy + recent),
	        .n = scene->n,
	        .prompt = scene->prompt,
	        .layers = scene->layers,
	        .interval = scene->interval,
	        .kv_heads = scene->kv_heads,
	};
	if (o.ppl_given && !scene->model_path) {
		scene_free(scene);
		lessons_free(lessons);
		return usage_error("--target ppl=%s: the scene has no model, so no perplexity to "
		                   "compare: use recall, err or cos",
		                   strchr(o.ppl_arg, '=') + 1);
	}
	if (o.target.figure != REPORT_RECALL && !scene->v) {
		scene_free(scene);
		lessons_free(lessons);
		return usage_error("--target %s: the scene has no values, so no output to "
		                   "compare: use recall",
		                   report_figure_word(o.target.figure));
	}
	/* The sweep splits each budget as --split says, or as --heavy and
	 * --recent do. */
	char split_source[64];
	struct report_split split = {.heavy = 0.5};
	if (o.split >= 0) {
		snprintf(split_source, sizeof split_source, "--split %.40s", o.split_arg);
		split = (struct report_split){o.split, split_source};
	} else if (o.heavy >= 0 || o.recent >= 0 || o.heavy_ratio >= 0 || o.recent_ratio >= 0) {
		snprintf(split_source, sizeof split_source, "heavy %d : recent %d", heavy, recent);
		split = (struct report_split){(double)heavy / (heavy + recent), split_source};
	}
	const enum report_format format = o.json ? REPORT_JSON : o.csv ? REPORT_CSV : REPORT_TEXT;
	/* The report's CSV and plot are its steps. */
	const unsigned keep = (o.per_head ? REPORT_KEEP_HEADS : 0) |
	                      (o.per_layer ? REPORT_KEEP_LAYERS : 0) |
	                      (o.report && (o.csv || o.plot) ? REPORT_KEEP_STEPS : 0);

	int *budgets = NULL, count = 0;
	if (o.sweep)
		rc = sweep_budgets(scene, o.sweep, &budgets, &count);
	const enum cost_mode mode = o.trace    ? COST_TRACE
	                            : o.report ? COST_REPORT
	                            : o.sweep  ? COST_SWEEP
	                                       : COST_SCREENS;
	const long cores = sysconf(_SC_NPROCESSORS_ONLN);
	struct cost cost = cost_of(scene, &b, mode, budgets, count, cores > 0 ? (int)cores : 1);
	/* And the report's kept figures. */
	cost.bytes += o.report  ? report_keep_bytes(scene, keep)
	              : o.sweep ? count * report_keep_bytes(scene, keep)
	                        : 0;
	if (rc < 0)
		rc = refuse_if_too_large(&o, scene, &cost);
	struct meter meter;
	struct progress progress;
	struct model_pair mp = {0};
	if (rc < 0) {
		const int mrc = model_pair_load(scene, &mp);
		rc = mrc ? mrc : rc;
	}
	if (rc >= 0) {
		/* Refused, or a bad list. */
	} else if (o.trace) {
		/* The trace grows with the square of the tokens: the line says
		 * how large it will be. */
		char size[32], what[64];
		cost_format_bytes(cost.trace_bytes, size, sizeof size);
		snprintf(what, sizeof what, "tracing (about %s)", size);
		const struct progress *pr = progress_for(&o, &meter, &progress, what);
		/* A model scene's trace carries the model run per policy. */
		struct drop_result drop = {0};
		char derr[DROP_ERR_MAX];
		if (mp.m && drop_measure(mp.m, scene->tokens, scene->n, scene->given, scene->prompt,
		                         &b, ENGINE_ALL_POLICIES, &drop, derr) != 0)
			rc = out_of_memory("running the model per policy");
		else
			rc = trace_write_drop(scene, &b, mp.m ? &drop : NULL, stdout, pr) < 0
			             ? mode_failed("writing the trace")
			             : 0;
		drop_result_free(&drop);
		progress_done(&meter, pr);
	} else if (o.report) {
		const struct progress *pr =
		        progress_for(&o, &meter, &progress, "computing the report");
		struct report_run run;
		struct drop_result drop = {0};
		const struct report_model model = {&drop, NULL, mp.m ? model_name(scene) : NULL,
		                                   o.ppl_ratio};
		if (report_measure(scene, &b, &o.target, keep, &run, pr, 0, scene->n) < 0) {
			rc = out_of_memory("computing the report");
		} else {
			rc = mp.m ? report_drop(scene, &mp, &b, &drop) : 0;
			if (rc == 0)
				rc = report_print_model(&run, mp.m ? &model : NULL, format,
				                        o.per_head, stdout) < 0
				             ? mode_failed("computing the report")
				             : 0;
			if (rc == 0 && o.plot)
				rc = write_plot(&o, &run, mp.m ? &drop : NULL, NULL, NULL);
			report_run_done(&run);
		}
		drop_result_free(&drop);
		progress_done(&meter, pr);
	} else if (o.sweep) {
		const struct progress *pr =
		        progress_for(&o, &meter, &progress, "computing the budget sweep");
		struct report_sweep sw;
		struct drop_sweep ds = {0};
		const struct report_model model = {NULL, &ds, mp.m ? model_name(scene) : NULL,
		                                   o.ppl_ratio};
		if (report_sweep_measure(scene, budgets, count, &split, o.sinks, &o.target, keep,
		                         &sw, pr) < 0) {
			rc = out_of_memory("computing the budget sweep");
		} else {
			rc = mp.m ? sweep_drop(scene, &mp, budgets, count, &split, o.sinks,
			                       o.ppl_ratio, &ds)
			          : 0;
			if (rc == 0)
				rc = report_sweep_print_model(&sw, mp.m ? &model : NULL, format,
				                              o.per_head, stdout) < 0
				             ? mode_failed("computing the budget sweep")
				             : 0;
			if (rc == 0 && o.plot)
				rc = write_plot(&o, NULL, NULL, &sw, mp.m ? &ds : NULL);
			report_sweep_done(&sw);
		}
		drop_sweep_free(&ds);
		progress_done(&meter, pr);
	} else {
		struct app app;
		/* The terminal shows a long scene while its timeline builds;
		 * headless frames are of the whole timeline. */
		const int ok = o.headless ? app_init(&app, scene, heavy, recent, o.sinks, o.compare)
		                          : app_init_background(&app, scene, heavy, recent, o.sinks,
		                                                o.compare);
		if (ok >= 0)
			app_set_lessons(&app, lessons, lesson);
		const bool model_ok =
		        ok < 0 || !mp.m ||
		        app_set_model(&app, mp.m, mp.t, scene->tokens, scene->given) == 0;
		if (ok < 0 || !model_ok) {
			rc = out_of_memory("building the timeline");
		} else if (o.headless) {
			rc = headless_run(&app, o.cols, o.rows, o.ascii, o.keys, stdout) < 0
			             ? mode_failed("drawing the frames")
			             : 0;
		} else {
			rc = tui_run(&app, o.ascii || !utf8);
		}
		app_done(&app);
	}
	model_pair_free(&mp);
	if (fflush(stdout) != 0 && rc == 0)
		rc = 1;
	free(budgets);
	scene_free(scene);
	lessons_free(lessons);
	return rc;
}
