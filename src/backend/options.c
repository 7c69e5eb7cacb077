/*
 * options: the command line's table read, checked and printed as --help
 * (see options.h).
 */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h2o/app.h"
#include "h2o/gguf.h"
#include "h2o/keys.h"
#include "h2o/plot.h"
#include "headless.h"
#include "steps.h"

enum option_kind { KIND_FLAG, KIND_INT, KIND_REAL, KIND_TEXT, KIND_OWN };

#define ARGUMENT_NONE     no_argument
#define ARGUMENT_REQUIRED required_argument
#define ARGUMENT_OPTIONAL optional_argument

/* One line of the table. */
struct option_spec {
	const char *name;
	int argument;        /* getopt_long's has_arg */
	const char *metavar; /* "" for none */
	enum option_kind kind;
	size_t field; /* offset of its member of struct options */
	const char *what;
	double lo, hi;
	const char *before, *help;
};

static const struct option_spec specs[OPT_COUNT] = {
#define X(id, name, argument, metavar, kind, field, what, lo, hi, before, help) \
	[OPT_##id] = {name,                                                     \
	              ARGUMENT_##argument,                                      \
	              metavar,                                                  \
	              KIND_##kind,                                              \
	              offsetof(struct options, field),                          \
	              what,                                                     \
	              lo,                                                       \
	              hi,                                                       \
	              before,                                                   \
	              help},
        OPTIONS(X)
#undef X
};

/* Each row's field has its kind's type: the parser writes it through a
 * pointer of that type. */
#define TYPE_IS_FLAG(field) _Generic((struct options){0}.field, bool : 1, default : 0)
#define TYPE_IS_INT(field)  _Generic((struct options){0}.field, int : 1, default : 0)
#define TYPE_IS_REAL(field) _Generic((struct options){0}.field, double : 1, default : 0)
#define TYPE_IS_TEXT(field) _Generic((struct options){0}.field, const char * : 1, default : 0)
#define TYPE_IS_OWN(field)  1
#define X(id, name, argument, metavar, kind, field, ...) \
	_Static_assert(TYPE_IS_##kind(field), "--" name ": its field is not of its kind's type");
OPTIONS(X)
#undef X

/* getopt_long's value for option ID: past every character. */
#define OPTION_VALUE_BASE 256

int options_usage_error(const char *fmt, const char *arg)
{
	fputs("h2o-tui: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'h2o-tui --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

/* ---- --help --------------------------------------------------------------- */

/* One entry of --help: LEAD from column 2, TEXT from column 22 wrapped by
 * words at 80 (a lead too wide for its column is followed by two spaces,
 * the text's next lines from column 22). */
static void put_help(FILE *out, const char *lead, const char *text)
{
	enum { TEXT_COL = 22, WIDTH = 80 };
	int col = fprintf(out, "  %s", lead);
	if (col > TEXT_COL - 2) {
		fputs("  ", out);
		col += 2;
	} else {
		fprintf(out, "%*s", TEXT_COL - col, "");
		col = TEXT_COL;
	}
	bool first = true;
	for (const char *s = text; *s; first = false) {
		const size_t word = strcspn(s, " ");
		if (!first && col + 1 + (int)word > WIDTH) {
			fprintf(out, "\n%*s", TEXT_COL, "");
			col = TEXT_COL;
		} else if (!first) {
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

/* HELP with its {names} replaced by the tables' names, into OUT. */
static void expand_help(const char *help, char *out, size_t size)
{
	char names[256];
	size_t at = 0;
	out[0] = '\0';
	for (const char *s = help; *s && at + 1 < size;) {
		const char *with = NULL;
		size_t skip = 0;
		if (*s == '{') {
			skip = strcspn(s, "}") + 1;
			if (!strncmp(s, "{keys}", skip))
				with = keys_names(names, sizeof names);
			else if (!strncmp(s, "{comparable}", skip))
				with = app_comparable_names(names, sizeof names);
			else if (!strncmp(s, "{policies}", skip))
				with = options_policy_names(names, sizeof names);
			else if (!strncmp(s, "{default-compare}", skip))
				with = policies[COMPARE_DEFAULT]->name;
		}
		if (!with) {
			out[at++] = *s++;
			out[at] = '\0';
			continue;
		}
		at += (size_t)snprintf(out + at, size - at, "%s", with);
		at = at < size ? at : size - 1;
		s += skip;
	}
}

void options_help(FILE *out)
{
	fputs("Usage: h2o-tui [OPTIONS] SCENE.json\n"
	      "       h2o-tui [OPTIONS] --model M.bin --tokenizer T.bin --text FILE\n"
	      "Step through the H2O KV-cache eviction of a scene, beside the full cache.\n"
	      "\n",
	      out);
	for (int i = 0; i < OPT_COUNT; i++) {
		const struct option_spec *s = &specs[i];
		char lead[64], text[1024];
		if (s->before)
			fputs(s->before, out);
		snprintf(lead, sizeof lead,
		         s->argument == optional_argument ? "--%s[=%s]"
		         : *s->metavar                    ? "--%s %s"
		                                          : "--%s",
		         s->name, s->metavar);
		expand_help(s->help, text, sizeof text);
		put_help(out, lead, text);
	}
	fputs("\nPolicies (H2O on the left, --compare NAME beside it; --report and --trace\n"
	      "show them all, or those of --policies LIST):\n",
	      out);
	for (int p = 0; p < POLICY_COUNT; p++)
		put_help(out, policies[p]->name, policies[p]->about);
	fputs("\nIn the TUI, press ? for the keys. Exit status: 0 ok, 1 output not written,\n"
	      "2 bad usage, 3 bad scene, 4 out of memory.\n",
	      out);
}

/* ---- values --------------------------------------------------------------- */

static bool parse_int(const char *s, double lo, double hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = (int)v;
	return true;
}

static bool parse_real(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	const double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return false;
	*out = v;
	return true;
}

static bool parse_size(const char *s, double lo, double hi, int *cols, int *rows)
{
	char buf[32];
	const char *x = strchr(s, 'x');
	if (!x || (size_t)(x - s) >= sizeof buf)
		return false;
	memcpy(buf, s, (size_t)(x - s));
	buf[x - s] = '\0';
	return parse_int(buf, lo, hi, cols) && parse_int(x + 1, lo, hi, rows);
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

/* The usage error of a value out of S's range. */
static int range_error(const struct option_spec *s, const char *arg)
{
	char msg[256];
	snprintf(msg, sizeof msg, "--%s: expected %s from %.15g to %.15g, got '%%s'", s->name,
	         s->what, s->lo, s->hi);
	return options_usage_error(msg, arg);
}

const char *options_policy_names(char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = '\0';
	for (int p = 0; p < POLICY_COUNT && at < size; p++)
		at += (size_t)snprintf(buf + at, size - at, "%s%s", p ? ", " : "",
		                       policies[p]->name);
	return buf;
}

/* --policies LIST: the comma-separated names into o->policies. */
static int parse_policies(const char *arg, struct options *o)
{
	unsigned mask = 0;
	for (const char *s = arg;; s++) {
		const size_t len = strcspn(s, ",");
		char name[64];
		snprintf(name, sizeof name, "%.*s",
		         (int)(len < sizeof name ? len : sizeof name - 1), s);
		const int p = len < sizeof name ? policy_find(name) : -1;
		if (p < 0) {
			char names[256], msg[512];
			snprintf(msg, sizeof msg,
			         "--policies: unknown policy '%.*s': expected names among %s",
			         (int)(len < 64 ? len : 64), s,
			         options_policy_names(names, sizeof names));
			return options_usage_error("%s", msg);
		}
		mask |= 1u << p;
		s += len;
		if (!*s)
			break;
	}
	o->policies = mask;
	return -1;
}

static int parse_compare(const char *arg, struct options *o)
{
	const int p = policy_find(arg);
	if (p >= 0 && app_comparable((enum policy_id)p)) {
		o->compare = (enum policy_id)p;
		o->compare_given = true;
		return -1;
	}
	char names[256], msg[512];
	app_comparable_names(names, sizeof names);
	if (p < 0)
		snprintf(msg, sizeof msg, "--compare: unknown policy '%.64s': expected one of %s",
		         arg, names);
	else
		snprintf(msg, sizeof msg, "--compare: %s is always on the left: expected one of %s",
		         arg, names);
	return options_usage_error("%s", msg);
}

/* An option of kind OWN. Returns -1, or the exit status. */
static int parse_own(enum option_id id, int argc, char **argv, struct options *o)
{
	const struct option_spec *s = &specs[id];
	char msg[256];
	switch (id) {
	case OPT_SIZE:
		if (parse_size(optarg, s->lo, s->hi, &o->cols, &o->rows))
			return -1;
		snprintf(msg, sizeof msg,
		         "--size: expected COLSxROWS (each %.0f to %.0f), got '%%s'", s->lo, s->hi);
		return options_usage_error(msg, optarg);
	case OPT_COMPARE:
		return parse_compare(optarg, o);
	case OPT_POLICIES:
		return parse_policies(optarg, o);
	case OPT_TRACE_STEPS:
		/* The form now, the steps once the scene is known. */
		if (steps_parse(optarg, (int)s->hi, NULL) >= 0)
			return EXIT_USAGE;
		o->trace_steps = optarg;
		return -1;
	case OPT_SWEEP:
		/* "--budget-sweep 64": the list as the next argument, when it
		 * is one and no file has that name. */
		if (!optarg && optind < argc && is_list(argv[optind]) &&
		    access(argv[optind], F_OK) != 0)
			optarg = argv[optind++];
		o->sweep = optarg ? optarg : "";
		return -1;
	case OPT_SPLIT:
		if (!parse_real(optarg, s->lo, s->hi, &o->split))
			return range_error(s, optarg);
		o->split_arg = optarg;
		return -1;
	case OPT_TARGET:
		/* Once for the attention tables and once for the model's. */
		if (report_ppl_parse(optarg, &o->ppl_ratio)) {
			o->ppl_given = true;
			o->ppl_arg = optarg;
		} else if (report_target_parse(optarg, &o->target)) {
			o->target_given = true;
		} else {
			return options_usage_error(
			        "--target: expected recall=R or cos=C (0 to 1), "
			        "err=E (0 or more) or ppl=R (1 or more), got '%s'",
			        optarg);
		}
		return -1;
	case OPT_POLICY_OPT:
		if (o->n_policy_opts >= POLICY_SETTINGS_MAX)
			return options_usage_error("--policy-opt: too many settings, last '%s'",
			                           optarg);
		if (policy_settings_set(&o->settings, optarg, msg, sizeof msg)) {
			o->policy_opts[o->n_policy_opts++] = optarg;
			return -1;
		}
		return options_usage_error("--policy-opt: %s", msg);
	case OPT_PLOT:
		if (plot_format_of(optarg) < 0)
			return options_usage_error("--plot: expected a file name ending in .svg, "
			                           ".png or .pdf, got '%s'",
			                           optarg);
		o->plot = optarg;
		return -1;
	case OPT_MAX_MEMORY:
		if (parse_bytes(optarg, &o->max_memory))
			return -1;
		return options_usage_error("--max-memory: expected a size such as 512M, 16G or "
		                           "2T (bytes, or k, M, G, T: powers of 1000), got '%s'",
		                           optarg);
	default:
		return options_usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
	}
}

/* The option getopt_long returned as C. Returns -1, or the exit status. */
static int parse_one(int c, int argc, char **argv, struct options *o)
{
	if (c < OPTION_VALUE_BASE || c >= OPTION_VALUE_BASE + OPT_COUNT)
		return options_usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
	const enum option_id id = (enum option_id)(c - OPTION_VALUE_BASE);
	const struct option_spec *s = &specs[id];
	char *field = (char *)o + s->field;
	switch (s->kind) {
	case KIND_FLAG:
		*(bool *)(void *)field = true;
		return -1;
	case KIND_INT:
		return parse_int(optarg, s->lo, s->hi, (int *)(void *)field)
		               ? -1
		               : range_error(s, optarg);
	case KIND_REAL:
		return parse_real(optarg, s->lo, s->hi, (double *)(void *)field)
		               ? -1
		               : range_error(s, optarg);
	case KIND_TEXT:
		*(const char **)(void *)field = optarg;
		return -1;
	case KIND_OWN:
		break;
	}
	return parse_own(id, argc, argv, o);
}

/* --model without --tokenizer: a GGUF model file carries its own, which
 * the tokenizer loader reads from it. */
static void gguf_tokenizer(struct options *o)
{
	if (o->model == NULL || o->tokenizer != NULL)
		return;
	struct stat st;
	if (llama_file_is_gguf(o->model)) {
		o->tokenizer = o->model;
	} else if (stat(o->model, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* A Hugging Face folder: its tokenizer.json. */
		const int len = snprintf(o->tokenizer_in_folder, sizeof o->tokenizer_in_folder,
		                         "%s/tokenizer.json", o->model);
		if (len > 0 && (size_t)len < sizeof o->tokenizer_in_folder)
			o->tokenizer = o->tokenizer_in_folder;
	}
}

/* The options that go together, or exclude each other. Returns -1, or
 * EXIT_USAGE after the message. */
static int check_together(const struct options *o)
{
	if (o->model && o->scene)
		return options_usage_error("%s",
		                           "--model stands for the scene file: give one of them");
	if (o->model && !o->tokenizer)
		return options_usage_error("%s",
		                           "--model needs --tokenizer, the model's tokenizer");
	if (!o->model && (o->tokenizer || o->text_file || o->text_string || o->generate))
		return options_usage_error("%s", "--tokenizer, --text, --text-string and "
		                                 "--generate go with --model");
	if (o->model && !o->text_file == !o->text_string)
		return options_usage_error(
		        "%s", "--model needs one of --text FILE and --text-string TEXT");
	if ((o->temperature > 0 || o->seed) && !o->generate)
		return options_usage_error("%s", "--temperature and --seed go with --generate");
	if (o->keys && !o->headless)
		return options_usage_error("%s", "--keys goes with --headless");
	if (o->keys) {
		char err[256];
		if (headless_check_keys(o->keys, err, sizeof err) < 0)
			return options_usage_error("%s", err);
	}
	const int modes = o->trace + o->headless + o->report + (o->sweep != NULL);
	if (modes > 1)
		return options_usage_error(
		        "%s", "choose one of --headless, --trace, --report, --budget-sweep");
	if (o->trace_steps && !o->trace)
		return options_usage_error("%s", "--trace-steps goes with --trace");
	const bool measures = o->report || o->sweep;
	if (o->json && !measures)
		return options_usage_error("%s", "--json goes with --report or --budget-sweep");
	if (o->csv && !measures)
		return options_usage_error("%s", "--csv goes with --report or --budget-sweep");
	if (o->csv && o->json)
		return options_usage_error("%s", "choose one of --json, --csv");
	if ((o->target_given || o->ppl_given) && !measures)
		return options_usage_error("%s", "--target goes with --report or --budget-sweep");
	if (o->plot && !measures)
		return options_usage_error("%s", "--plot goes with --report or --budget-sweep");
	if (o->smooth && !(o->report && o->plot))
		return options_usage_error("%s", "--smooth goes with --report and --plot");
	if (o->per_layer && !o->report)
		return options_usage_error("%s", "--per-layer goes with --report");
	if (o->with_prompt && !measures)
		return options_usage_error("%s",
		                           "--with-prompt goes with --report or --budget-sweep");
	if (o->per_head && !measures)
		return options_usage_error("%s", "--per-head goes with --report or --budget-sweep");
	if (o->split >= 0 && !o->sweep)
		return options_usage_error("%s", "--split goes with --budget-sweep");
	if ((o->heavy >= 0 && o->heavy_ratio >= 0) || (o->recent >= 0 && o->recent_ratio >= 0))
		return options_usage_error("%s",
		                           "--heavy-ratio and --recent-ratio give the budgets that "
		                           "--heavy and --recent do: give one of each");
	if (o->split >= 0 &&
	    (o->heavy >= 0 || o->recent >= 0 || o->heavy_ratio >= 0 || o->recent_ratio >= 0))
		return options_usage_error("%s",
		                           "--split and --heavy/--recent both split the budget: "
		                           "give one of them");
	return -1;
}

int options_parse(int argc, char **argv, struct options *o)
{
	struct option longopts[OPT_COUNT + 1];
	for (int i = 0; i < OPT_COUNT; i++)
		longopts[i] = (struct option){specs[i].name, specs[i].argument, NULL,
		                              OPTION_VALUE_BASE + i};
	longopts[OPT_COUNT] = (struct option){NULL, 0, NULL, 0};
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
		const int rc = parse_one(c, argc, argv, o);
		if (rc >= 0)
			return rc;
		/* --help and --version answer at once, whatever follows. */
		if (o->help) {
			options_help(stdout);
			return 0;
		}
		if (o->version) {
			puts("h2o-tui " H2O_VERSION);
			return 0;
		}
	}
	/* No scene: the first lesson of the lesson path (run). */
	if (optind < argc - 1)
		return options_usage_error("%s", "expected exactly one scene file");
	o->scene = optind < argc ? argv[optind] : NULL;
	gguf_tokenizer(o);
	return check_together(o);
}
