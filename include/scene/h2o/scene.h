/*
 * scene: a scene file loaded into plain structs.
 *
 * A scene is the untrusted JSON file a user points the tool at (design §3): the
 * budgets, the vector size and, per token, its text and either q/k/v vectors
 * (a vector scene) or a row of given attention weights (an attention scene).
 * A vector scene may instead be generated from a seeded model ("generate",
 * see generate.h) or read from .npy files named in the scene (src/npy.h).
 * This module is the only one that knows JSON; everything after it works on
 * the arrays below. It validates everything before the engine sees it and
 * never prints: a rejected scene comes back as one line
 * "FILE:LINE:COLUMN: PATH: message" for the caller to print.
 */
#ifndef H2O_SCENE_H
#define H2O_SCENE_H

#include <stdbool.h>
#include <stddef.h>

/* Limits checked before anything is allocated (docs/scene-format.md). */
#define SCENE_MAX_FILE_BYTES  (256L * 1024 * 1024)
#define SCENE_MAX_TOKENS      1000000
#define SCENE_MAX_ATTN_TOKENS 8192
#define SCENE_MAX_DIM         4096
#define SCENE_MAX_BUDGET      1000000
#define SCENE_MAX_TEXT_BYTES  4096
#define SCENE_MAX_WATCH_BYTES 1000 /* also each step note */
#define SCENE_MAX_NOTES       1000 /* step notes in a scene */
/* Numbers in one of q, k, v (layers x heads x tokens x dim, with kv_heads
 * for k and v) or in the attention rows of all heads: 512 MiB of doubles,
 * so that a 12 layer x 12 head x 4,096 token x 64 trace loads. */
#define SCENE_MAX_VALUES (64L * 1024 * 1024)
/* The words a generated scene's "text" may hold, in bytes. */
#define SCENE_MAX_WORDS_BYTES     65536
#define SCENE_MAX_HEAD_NAME_BYTES 32
/* The bytes of a model scene's text (its tokens are bounded by the
 * model's context, seq_len, besides). */
#define SCENE_MAX_MODEL_TEXT_BYTES (1024 * 1024)
/* The memory a model scene's run of its model may take (its caches are
 * sized for the model's whole context, seq_len). */
#define SCENE_MAX_MODEL_RUN_BYTES (2048L * 1024 * 1024)
/* A model scene's load as scene_options.told tells it, from 0 to 1: the
 * text's encoding is its first SCENE_TOLD_ENCODE, the model's run over the
 * text's positions the rest. */
#define SCENE_TOLD_ENCODE 0.1
/* The largest number of query heads in a layer, of layers, and of query
 * heads in all (layers x heads). */
#define SCENE_MAX_HEADS       64
#define SCENE_MAX_LAYERS      256
#define SCENE_MAX_QUERY_HEADS 4096
/* The largest magnitude of a q, k or v number (and of scale): dim of their
 * products or squares stay far from overflowing a double. */
#define SCENE_MAX_MAGNITUDE 1e30 /* npy.h: NPY_MAX_MAGNITUDE, the same bound */
/* cJSON's tree of a file takes about 80 bytes per value (40 times a file
 * of "0,0,0,..."), so a file is refused before parsing when its predicted
 * tree is more than SCENE_PARSE_FACTOR times its size (SCENE_PARSE_FLOOR
 * for a small file) or more than SCENE_PARSE_MAX. Real scenes take at most
 * about 20 times their size. */
#define SCENE_PARSE_FACTOR 24
#define SCENE_PARSE_FLOOR  (128L * 1024 * 1024)
#define SCENE_PARSE_MAX    (2048L * 1024 * 1024)
#define SCENE_ERROR_MAX    1024

enum scene_mode {
	SCENE_VECTOR,    /* every token has q, k and v */
	SCENE_ATTENTION, /* every token has a given attention row, v optional */
};

struct llama_model;
struct llama_tokenizer;

/* The most settings a scene's "policy_settings" holds, and the bytes of
 * one ("pyramidkv-win.window=1000000"). */
#define SCENE_MAX_POLICY_SETTINGS  64
#define SCENE_POLICY_SETTING_BYTES 48

struct scene {
	char *title;       /* never NULL; the file's base name when absent */
	char *description; /* never NULL; "" when absent */
	char *watch;       /* never NULL; "" when absent: what to watch, for help */
	/* Step notes, in the file's order: note_text[i] is shown at step
	 * note_step[i] (1..n, each at most once) in place of watch. */
	int n_notes;
	int *note_step;
	char **note_text;
	/* A scene that teaches ("lesson": true): each score shown as the sum
	 * that made it, and the step sentence saying what the budgets and
	 * H2O's renormalised softmax do. */
	bool lesson;
	int heavy, recent; /* budgets, >= 0, heavy + recent >= 1 */
	int dim;           /* size of a K or V row, >= 1 */
	int n;             /* number of tokens, >= 1 */
	/* Layers and heads (design §2 "Layers and heads"): LAYERS >= 1 layers,
	 * each of HEADS query heads (0 reads as 1) that share KV_HEADS key and
	 * value heads (HEADS divisible by KV_HEADS; query head h reads kv head
	 * h / (HEADS / KV_HEADS)). q and attn hold one block per query head,
	 * layer after layer (block l * HEADS + h); k and v one per kv head
	 * (block l * KV_HEADS + g); see heads.h. */
	int layers;
	int heads;
	int kv_heads;
	/* The prompt's tokens, 0..n: no eviction before its end. A run's
	 * budget starts from it (budget_make; --prompt overrides it there,
	 * never here): the engines read the budget's. */
	int prompt;
	/* Compress every INTERVAL decoding steps after the prompt's end
	 * (design §2), 0 or 1 for every step: the scene's "interval", which
	 * a run's budget starts from as it does from the prompt. */
	int interval;
	char **head_names; /* one short name per query head (layers x heads, its
	                      character, e.g. "local"), or NULL */
	/* The scene's "policies": bit i for scene_options.policy_names[i]
	 * (the caller's table of policies, which the scene stage does not
	 * know), or 0 when the scene names none (or the caller gave no
	 * names): every policy. */
	unsigned policies;
	/* The scene's "policy_settings", one "POLICY.KEY=VALUE" each
	 * (--policy-opt's form, checked by scene_options.check_setting), in
	 * the file's order; a run's settings start from them and
	 * --policy-opt overrides them (budget_resolve). */
	char policy_settings[SCENE_MAX_POLICY_SETTINGS][SCENE_POLICY_SETTING_BYTES];
	int n_policy_settings;
	/* A head view (heads_view): the loaded scene it shows one query head
	 * of, that head's layer and its index in the layer. NULL and 0 for a
	 * loaded scene. */
	const struct scene *parent;
	int view_layer, view_head;
	enum scene_mode mode;
	double scale; /* vector scenes: logit scale, 1/sqrt(dim) unless given */
	char **text;  /* n strings as given in the file: untrusted UTF-8 */
	double *q;    /* vector scenes: n x dim, row-major; NULL otherwise */
	double *k;    /* vector scenes: n x dim; NULL otherwise */
	double *v;    /* n x dim, or NULL when the scene has no values */
	double *attn; /* attention scenes: row i (i + 1 weights) starts at
			 attn + scene_attn_offset(i); NULL otherwise */
	/* A model scene (docs/scene-format.md "Model scenes"): a llama2.c
	 * checkpoint ran over the tokens with a full cache, and q, k, v are
	 * what its attention took in (q and k after RoPE, float32 made
	 * double); layers, heads, kv_heads and dim are the model's, scale
	 * 1/sqrt(head size). Everything a later stage needs to run the model
	 * again (with a cache that evicts) is here. All NULL and 0 for any
	 * other scene. */
	int *tokens;          /* n token ids, BOS (1) first; text[i] is token i's piece */
	char *model_path;     /* the checkpoint, a path that opens the very file
	                         loaded (the scene's folder joined, links
	                         resolved under the folder rule) */
	char *tokenizer_path; /* its tokenizer, the same way */
	/* The model and its tokenizer as the scene loaded and checked them,
	 * the scene's own (scene_free frees them): every later run of the
	 * model, per policy or in the screen's model panel, uses these, so
	 * the file is read once and a file changed since cannot differ. */
	struct llama_model *model;
	struct llama_tokenizer *tokenizer;
	int given;               /* tokens 0 .. given - 1 come from the text (BOS
	                         included): n for a teacher-forced scene */
	int generated;           /* n - given: tokens the model chose after them */
	double temperature;      /* how they were chosen: 0 the highest logit, else
	                         drawn (include/model/h2o/llama_trace.h) with SEED */
	unsigned long long seed; /* A model scene whose policies read the queries before RoPE (one
	 * of scene_options.policy_queries named, or every policy run): the
	 * queries before RoPE, laid out as q, and the model's rotary
	 * embedding (llama_rope_of): dim / 2 frequencies and divisors, its
	 * scale and whether it pairs rows k and k + dim / 2 (else 2k and
	 * 2k + 1). NULL and 0 otherwise. */
	double *q_pre;
	float *rope_freq, *rope_div;
	float rope_scale;
	int rope_neox;
};

/* Offset of token i's attention row in scene.attn (rows are packed). */
static inline size_t scene_attn_offset(int i)
{
	return (size_t)i * ((size_t)i + 1) / 2;
}

/* How a scene is loaded. All false (or a NULL pointer) is the default. */
struct scene_options {
	/* The files a scene names (.npy files, a "text" file) may be
	 * anywhere. By default they must be in the scene file's folder or
	 * below it, links followed (h2o-tui --allow-paths lifts it). */
	bool allow_paths;
	/* The bytes a model scene's model may take, with its run over the
	 * text (0: no bound): told from the checkpoint's header before it is
	 * loaded, and from the text's tokens before the model runs. Past it
	 * the load fails with SCENE_TOO_LARGE, *NEEDED (when not NULL) the
	 * bytes, and ERR saying what they are, without a file name
	 * ("the model \"big.bin\": 61.2 million weights as float32, ..."):
	 * the caller words the refusal. */
	double max_memory;
	double *needed;
	/* Told how far a model scene's forward pass has come, DONE of TOTAL
	 * positions (0 of 1 before the text is encoded, then before each
	 * position and at the end), from the loading thread; a nonzero
	 * return stops the load there: SCENE_STOPPED, everything freed. NULL:
	 * no one is told, nothing stops it. */
	int (*told)(void *ctx, double done, double total);
	void *told_ctx;
	/* The names a scene's "policies" may list, NULL-terminated (at most
	 * SCENE_MAX_POLICY_NAMES), in the order of the bits of
	 * scene.policies; NULL: the field is checked to be a list of strings
	 * and otherwise ignored. */
	const char *const *policy_names;
	/* Bit i: policy_names[i] reads keys, which an attention scene does
	 * not have; the loader refuses such a scene that names it. */
	unsigned policy_keys;
	/* Checks one setting of "policy_settings": policy POLICY's KEY with
	 * VALUE (a JSON number's integer, NUMBER true, or a string); false
	 * with the reason, one line, in ERR. NULL: the field is checked to
	 * be an object of objects and kept as it is. */
	bool (*check_setting)(const char *policy, const char *key, const char *value, bool number,
	                      char *err, size_t size);
	/* Bit i: policy_names[i] reads the queries before RoPE, which a
	 * model scene keeps (scene.q_pre) only when such a policy runs:
	 * one of POLICIES (the caller's choice, bits as scene.policies) or,
	 * when that is 0, of the scene's "policies" (every policy when it
	 * names none). */
	unsigned policy_queries;
	unsigned policies;
};

/* A load's status when a model scene's model would take more memory than
 * scene_options.max_memory allows, and when scene_options.told stopped it. */
#define SCENE_TOO_LARGE (-2)
#define SCENE_STOPPED   (-3)

/*
 * Load the scene at PATH. On success returns 0 and sets *OUT (free it with
 * scene_free). On failure returns -1, leaves *OUT NULL and writes one line
 * (no newline) into ERR: "FILE:LINE:COLUMN: PATH: message", or
 * "FILE: cannot open: reason" / "FILE: cannot read: reason" when the file
 * cannot be read, or "FILE: cannot load: reason" when it is too large or
 * memory runs out (docs/scene-format.md lists them all).
 */
int scene_load_file(const char *path, struct scene **out, char err[SCENE_ERROR_MAX]);

/* The same for a scene held in memory; NAME stands for the file name in
 * messages, and its folder is where the files the scene names are found.
 * TEXT need not be NUL-terminated. */
int scene_load_text(const char *name, const char *text, size_t len, struct scene **out,
                    char err[SCENE_ERROR_MAX]);

/* The same two with OPTIONS (NULL: the defaults). */
int scene_load_file_opts(const char *path, const struct scene_options *options, struct scene **out,
                         char err[SCENE_ERROR_MAX]);
int scene_load_text_opts(const char *name, const char *text, size_t len,
                         const struct scene_options *options, struct scene **out,
                         char err[SCENE_ERROR_MAX]);

/*
 * A model scene given directly, as `h2o-tui --model M --tokenizer T
 * --text FILE` does: the same scene a JSON model scene with these fields
 * gives, without the folder rule (the user named the files). TEXT_FILE is
 * read and trimmed as "text_file" is; otherwise TEXT (LEN bytes) is used as
 * "text" is. GENERATE > 0 makes TEXT the prompt of a generation scene.
 * Errors are one line "FILE: message", FILE the file at fault (or
 * "--text-string" for TEXT).
 */
struct scene_model_args {
	const char *model, *tokenizer;
	const char *text_file;
	const char *text;
	size_t text_len;
	int generate;            /* 0: teacher-forced */
	double temperature;      /* with GENERATE: 0 greedy, else sampled */
	unsigned long long seed; /* with a temperature: 1 .. 2^31 - 1 */
	int heavy, recent;
	double max_memory, *needed; /* as scene_options's */
	int (*told)(void *ctx, double done, double total);
	void *told_ctx;
	/* As scene_options's: keep the queries before RoPE when a policy of
	 * POLICIES (0: every policy) is one of POLICY_QUERIES. */
	unsigned policy_queries, policies;
};
int scene_load_model(const struct scene_model_args *args, struct scene **out,
                     char err[SCENE_ERROR_MAX]);

void scene_free(struct scene *scene);

#endif
