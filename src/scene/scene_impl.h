/*
 * scene_impl: what the parts of the scene loader share.
 *
 * The loader (scene.h) is split along its passes: scene.c reads the file
 * and runs the passes; scene_error.c writes the one error line, and
 * scene_locate.c finds a value's literal in the text; scene_fields.c sorts an object's members by name; scene_root.c checks the
 * root; scene_inline.c the inline "tokens"; scene_generated.c a "generate"
 * object; scene_npy.c the .npy and "text" files a scene names; and
 * scene_copy.c fills the scene once every check passed. They all work on a
 * struct loader (the raw text, for positions) and a struct plan (what the
 * checks learnt). Only these files include cJSON.
 */
#ifndef H2O_SCENE_IMPL_H
#define H2O_SCENE_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "h2o/generate.h"
#include "h2o/scene.h"
#include "npy.h"

/* Where a checked value sits: the member indices that lead jsonloc to it,
 * and the path the message names. No checked value is more than six steps
 * from the root (tokens, a token, a field, a layer, a head, an element). */
#define WHERE_MAX 6
struct where {
	int depth;
	int step[WHERE_MAX];
	char path[96];
};

/* Where the values on the path last located start in the text (at[0] the
 * root, at[d + 1] child step[d] of at[d]), so that locating the next value,
 * a sibling or a child, does not walk the text from the root again. */
struct locate_cache {
	int depth; /* -1: empty */
	int step[WHERE_MAX];
	size_t at[WHERE_MAX + 1];
};

struct loader {
	const char *name; /* the file name for messages */
	const char *text; /* the raw text, to locate errors in */
	size_t len;
	char *err;
	struct locate_cache *cache;
	bool allow_paths;  /* scene_options: named files may be anywhere */
	double max_memory; /* scene_options: a model's bound, 0 none */
	double *needed;    /* and where to say what it needs, or NULL */
	/* scene_options: told of a model's run, which it may stop. */
	int (*told)(void *ctx, double done, double total);
	void *told_ctx;
	const char *const *policy_names; /* scene_options: what "policies" may name */
	unsigned policy_keys;            /* scene_options: those that read keys */
	/* scene_options: checks a "policy_settings" entry, or NULL. */
	bool (*check_setting)(const char *policy, const char *key, const char *value, bool number,
	                      char *err, size_t size);
	unsigned policy_queries; /* scene_options: those that read queries */
	unsigned policies;       /* scene_options: the caller's choice, 0 none */
};

/* ---- error lines (scene_error.c) -------------------------------------- */

struct where scene_where_root(void);
struct where scene_where_field(const struct where *obj, int index, const char *name);
struct where scene_where_elem(const struct where *arr, int index);

/* printf a double with '.' whatever LC_NUMERIC says. */
void scene_format_double(char *buf, size_t size, const char *fmt, double x);

/* Write "FILE:LINE:COLUMN: PATH: " for byte OFFSET; returns its length. */
size_t scene_put_prefix(const struct loader *ld, size_t offset, const char *path);

/* Something is wrong with the value at W. All return -1. */
int scene_fail_value(const struct loader *ld, const struct where *w, const char *fmt, ...);
/* The value at W is not what was expected; the message ends in ", got ...". */
int scene_fail_got(const struct loader *ld, const struct where *w, const cJSON *got,
                   const char *fmt, ...);
/* The object at OBJ should not have its member INDEX: point at that key. */
int scene_fail_field(const struct loader *ld, const struct where *obj, int index, const char *fmt,
                     ...);
/* An error with no position: the file as a whole. */
int scene_fail_file(char err[SCENE_ERROR_MAX], const char *name, const char *fmt, ...);
int scene_fail_nomem(const struct loader *ld);
/* A scene past the memory bound (scene_options.max_memory): WHAT it
 * needs BYTES for said in ERR (ERR_SIZE bytes, without the file's name)
 * and *NEEDED, for the caller to word the refusal. Returns -1. */
int scene_fail_too_large(char *err, size_t err_size, double *needed, double bytes,
                         const char *what);

/* ---- where a value is (scene_locate.c) --------------------------------- */

/* The offset of the first byte of the value at W in the text cJSON parsed;
 * -1 when there is no such value. Reading values in file order is cheap:
 * the path last located is kept in ld->cache. */
int scene_locate(const struct loader *ld, const struct where *w, size_t *offset);

/* ---- fields (scene_fields.c) ------------------------------------------ */

struct field {
	const cJSON *node; /* NULL when absent */
	int index;         /* member index, to point at it */
};

/* X(ID, name): the root's fields. The order matters: title to watch are
 * the strings (notes, after them, an object of strings), title to scale the fields that belong at the root of a
 * generated scene, q to v the .npy files; the layout and the prompt came
 * last, and go anywhere in a scene; model to seed are a model scene's
 * (scene_model.c), which also reads "text" and "generate" its own way. */
#define ROOT_FIELDS(X)                \
	X(TITLE, "title")             \
	X(DESCRIPTION, "description") \
	X(WATCH, "watch")             \
	X(NOTES, "notes")             \
	X(LESSON, "lesson")           \
	X(HEAVY, "heavy")             \
	X(RECENT, "recent")           \
	X(DIM, "dim")                 \
	X(SCALE, "scale")             \
	X(TOKENS, "tokens")           \
	X(GENERATE, "generate")       \
	X(Q, "q")                     \
	X(K, "k")                     \
	X(V, "v")                     \
	X(TEXT, "text")               \
	X(HEADS, "heads")             \
	X(HEAD_NAMES, "head_names")   \
	X(LAYERS, "layers")           \
	X(KV_HEADS, "kv_heads")       \
	X(PROMPT, "prompt")           \
	X(MODEL, "model")             \
	X(TOKENIZER, "tokenizer")     \
	X(TEXT_FILE, "text_file")     \
	X(PROMPT_TEXT, "prompt_text") \
	X(TEMPERATURE, "temperature") \
	X(SEED, "seed")               \
	X(INTERVAL, "interval")       \
	X(POLICIES, "policies")       \
	X(POLICY_SETTINGS, "policy_settings")

enum root_field {
#define X(id, name) R_##id,
	ROOT_FIELDS(X)
#undef X
	        R_COUNT
};
extern const char *const scene_root_names[R_COUNT];

/* X(ID, name): an inline token's fields; q to v in this order. */
#define TOKEN_FIELDS(X) \
	X(TEXT, "text") \
	X(Q, "q")       \
	X(K, "k")       \
	X(V, "v")       \
	X(ATTN, "attn")

enum token_field {
#define X(id, name) T_##id,
	TOKEN_FIELDS(X)
#undef X
	        T_COUNT
};
extern const char *const scene_token_names[T_COUNT];

/* Sort the members of OBJ into FIELDS by NAMES; "x-" names are notes. */
int scene_scan_fields(const struct loader *ld, const cJSON *obj, const struct where *w,
                      const char *const *names, int count, struct field *fields);
int scene_count_children(const cJSON *node);

/* ---- what the checks learn -------------------------------------------- */

/* Where a scene's tokens come from. */
enum source { SRC_NONE, SRC_TOKENS, SRC_GENERATE, SRC_NPY, SRC_MODEL };

/* One of q, k and v, named as a .npy file. */
struct npy_source {
	struct npy_file file; /* fd -1 until opened */
	struct where w;       /* the string that named it */
	char shown[160];      /* that name, safe to print */
};

/* What the checks learnt, for the copy that follows them. */
struct plan {
	struct field root[R_COUNT];
	unsigned policies; /* "policies": bits of the loader's policy_names */
	/* "policy_settings", "POLICY.KEY=VALUE" each. */
	char settings[SCENE_MAX_POLICY_SETTINGS][SCENE_POLICY_SETTING_BYTES];
	int n_settings;
	/* The first of them that reads keys (policy_keys), or -1, and where
	 * it is named. */
	int keyed;
	struct where w_keyed;
	/* The first of them that reads the queries before RoPE
	 * (policy_queries), or -1, and where it is named. */
	int queried;
	struct where w_queried;
	struct where w_root, w_tokens;
	enum source source;
	int heavy, recent, dim, n;
	/* Layers, query heads per layer and key/value heads per layer, each
	 * >= 1 (kv_heads divides heads); a .npy scene learns them from the
	 * files' shapes, and LAYOUT_GIVEN says which the scene named too,
	 * for the shapes to agree with. */
	int layers, heads, kv_heads;
	bool layout_given[3]; /* layers, heads, kv_heads */
	int prompt;
	int default_prompt; /* without "prompt": a generation scene's given tokens */
	int interval;       /* "interval", 1 ... SCENE_MAX_TOKENS; 0 when absent */
	enum scene_mode mode;
	bool has_v;
	double scale;

	/* "generate": the model's parameters, pointing into the cJSON tree. */
	struct generate_params gen;
	struct generate_needle needles[GENERATE_MAX_NEEDLES];
	int *topic_positions;

	/* .npy files in q, k, v, and a "text" file's bytes. */
	struct npy_source npy[3];
	char *text_file;
	size_t text_len;

	/* A model scene (scene_model.c): what it loaded and encoded. */
	struct model_plan *model;
	bool too_large; /* the model is past max_memory: SCENE_TOO_LARGE */
	bool stopped;   /* the loader's told stopped it: SCENE_STOPPED */
};

/* ---- the checks, in the order scene.c runs them ----------------------- */

/* scene_root.c: values any part checks, the root and "scale". */
int scene_check_int(const struct loader *ld, const cJSON *node, const struct where *w, int min,
                    int max, int *out);

/* How the integer literal of LEN bytes at S compares with LO..HI as
 * written, exactly (no double in between): 2.0 and 1e2 are integers,
 * 0.99999999999999999 and 1e-400 are not. */
enum int_written { INT_OK, INT_NOT_INTEGER, INT_BELOW, INT_ABOVE };
enum int_written scene_int_written(const char *s, size_t len, long long lo, long long hi,
                                   long long *out);
int scene_check_number(const struct loader *ld, const cJSON *node, const struct where *w);
int scene_check_root(const struct loader *ld, const cJSON *root, struct plan *p);
int scene_check_scale(const struct loader *ld, struct plan *p);

/* scene_inline.c: the tokens' mode, then every token. */
int scene_check_mode(const struct loader *ld, const cJSON *tokens, struct plan *p);
int scene_check_tokens(const struct loader *ld, const cJSON *tokens, struct plan *p);

/* scene_generated.c: "generate", and a token text (used for .npy too). */
int scene_check_generate(const struct loader *ld, struct plan *p);
int scene_check_text(const struct loader *ld, const struct field *f, const struct where *w,
                     const char **out);

/* scene_root.c: "head_names", once the heads are known (after the .npy
 * files for a .npy scene), and "prompt", once the tokens are. */
int scene_check_head_names(const struct loader *ld, const struct plan *p);
/* A "policies" that names one reading keys (scene_options.policy_keys) in
 * an attention scene, or one reading the queries before RoPE
 * (scene_options.policy_queries) in a model scene: refused. */
int scene_check_policy_keys(const struct loader *ld, const struct plan *p);
int scene_check_prompt(const struct loader *ld, struct plan *p);
/* Whether the numbers the scene's arrays will hold are within
 * SCENE_MAX_VALUES; W is where to point when they are not. */
int scene_check_values(const struct loader *ld, const struct plan *p, const struct where *w);

/* scene_npy.c: the .npy files' headers and the root's "text". */
int scene_check_npy(const struct loader *ld, struct plan *p);
int scene_check_text_source(const struct loader *ld, struct plan *p);
/* "notes": an object whose keys are step numbers 1 .. n and whose values
 * are strings; checked once the scene's token count is known. */
int scene_check_notes(const struct loader *ld, const struct plan *p);
/* The next line of a "text" file from *AT (END is the end of the file). */
const char *scene_next_line(const char **at, const char *end, size_t *len);

/* scene_npy.c: the string at W names a file (WHAT says what kind): a
 * non-empty string without NUL, resolved into PATH against the scene's
 * folder and, unless --allow-paths, inside it; SHOWN gets it as messages
 * show it. Then open it: a regular file, its descriptor (or -1). */
int scene_check_file_name(const struct loader *ld, const cJSON *node, const struct where *w,
                          const char *what, char *shown, size_t shown_size, char *path,
                          size_t path_size);
int scene_open_named(const struct loader *ld, const struct where *w, const char *shown,
                     const char *path, struct stat *st);
/* The file NAME of the folder DIR (a path scene_check_file_name gave),
 * opened as scene_open_named opens one: unless --allow-paths, NAME with
 * every link resolved must lie in the scene's folder. The descriptor, or
 * -1 with WHY ("cannot open: ..." or where a link leads). */
int scene_open_in_folder(const struct loader *ld, const char *dir, const char *name, char *why,
                         size_t size);
/* Whether the string literal at W holds the escape \u0000. */
bool scene_holds_nul(const struct loader *ld, const struct where *w);

/* scene_model.c: a model scene's fields, its model, tokenizer and text
 * (after scene_check_root); the forward pass in the last pass; and the
 * plan's model parts freed. */
int scene_check_model(const struct loader *ld, struct plan *p);
int scene_build_model(const struct loader *ld, struct plan *p, struct scene *sc);
void scene_model_done(struct plan *p);

/* scene_copy.c: the last pass, the scene's arrays filled. */
int scene_build(const struct loader *ld, struct plan *p, struct scene **out);

/* scene.c: all of FD, up to LIMIT bytes (never more read or allocated);
 * MSG says why not. */
int scene_read_all(int fd, size_t hint, size_t limit, char **buf, size_t *len, char *msg,
                   size_t size);

#endif
