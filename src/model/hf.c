/*
 * hf: a Hugging Face checkpoint folder as a model: config.json (cJSON) and
 * model.safetensors, or the shards model.safetensors.index.json maps.
 *
 * The folder becomes the metadata and tensor table a GGUF file of the same
 * model would hold (model_impl.h, gguf_synth_*): config.json's fields under
 * GGUF's keys, each tensor under GGUF's name, its data in place in the
 * mapped safetensors file. gguf_model.c then builds the model exactly as
 * from a GGUF file, one code path below the loaders. Hugging Face keeps a
 * llama's Q/K rows unpermuted, so the table says so and RoPE rotates
 * halves, as for the qwens.
 *
 * A safetensors file: an 8-byte little-endian header length N, N bytes of
 * JSON ({"NAME": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
 * "__metadata__": {...}}), then the data. Every offset is checked against
 * the file, and every tensor's size against its shape and type (F32, F16,
 * BF16; others refused by name).
 */
#include "h2o/gguf.h"
#include "model_impl.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define HF_MAX_JSON (64L * 1024 * 1024)

/* NAME in the folder F, opened for reading through F's opener (the
 * caller's checks), or as F->dir/NAME; -1 with ERR naming it as SHOWN. */
static int folder_open_as(const struct llama_folder *f, const char *name, const char *shown,
                          char *err)
{
	char path[4096], why[LLAMA_ERR_MAX];
	int fd;

	if (f->open != NULL) {
		why[0] = '\0';
		if ((fd = f->open(f->ctx, name, why)) < 0)
			model_fail(err, "%s: %s", shown, why);
		return fd;
	}
	snprintf(path, sizeof path, "%s/%s", f->dir, name);
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		model_fail(err, "%s: cannot open: %s", shown, strerror(errno));
	return fd;
}

/* A name of this file's own, shown as it is. */
static int folder_open(const struct llama_folder *f, const char *name, char *err)
{
	return folder_open_as(f, name, name, err);
}

/* The bytes of NAME in F, read whole (at most HF_MAX_JSON), NUL-ended. */
static char *slurp(const struct llama_folder *f, const char *name, char *err)
{
	struct stat st;

	const int fd = folder_open(f, name, err);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > HF_MAX_JSON) {
		close(fd);
		model_fail(err, "%s: not a regular file of at most %ld bytes", name, HF_MAX_JSON);
		return NULL;
	}
	char *b = malloc((size_t)st.st_size + 1);
	if (b == NULL || read(fd, b, (size_t)st.st_size) != (ssize_t)st.st_size) {
		free(b);
		close(fd);
		model_fail(err, "%s: cannot read", name);
		return NULL;
	}
	b[st.st_size] = '\0';
	close(fd);
	return b;
}

/* config.json's integer KEY into GGUF's ARCH.GKEY; DEF when missing (< 0:
 * required). */
static int cfg_int(struct gguf_file *g, const cJSON *cfg, const char *key, const char *arch,
                   const char *gkey, long def, char *err)
{
	char k[128];
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, key);
	double d = (double)def;
	if (v == NULL || cJSON_IsNull(v)) {
		if (def < 0)
			return model_fail(err, "config.json: \"%s\" is missing", key);
	} else if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long)v->valuedouble ||
	           v->valuedouble < 0 || v->valuedouble > 4294967295.0) {
		return model_fail(err, "config.json: \"%s\" is not a count", key);
	} else {
		d = v->valuedouble;
	}
	snprintf(k, sizeof k, "%s.%s", arch, gkey);
	return gguf_synth_u32(g, k, (uint32_t)d) != 0 ? model_fail(err, "out of memory") : 0;
}

static int cfg_float(struct gguf_file *g, const cJSON *cfg, const char *key, const char *arch,
                     const char *gkey, char *err)
{
	char k[128];
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, key);
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v))
		return model_fail(err, "config.json: \"%s\" is not a number", key);
	snprintf(k, sizeof k, "%s.%s", arch, gkey);
	return gguf_synth_f32(g, k, (float)v->valuedouble) != 0 ? model_fail(err, "out of memory")
	                                                        : 0;
}

static int read_config(struct gguf_file *g, const struct llama_folder *dir, int *tied, char *err)
{
	char *text = slurp(dir, "config.json", err);
	if (text == NULL)
		return -1;
	cJSON *cfg = cJSON_Parse(text);
	free(text);
	if (cfg == NULL || !cJSON_IsObject(cfg)) {
		cJSON_Delete(cfg);
		return model_fail(err, "config.json: not a JSON object");
	}
	const cJSON *mt = cJSON_GetObjectItemCaseSensitive(cfg, "model_type");
	const char *arch = cJSON_IsString(mt) ? mt->valuestring : NULL;
	int rc = 0;
	if (arch == NULL)
		rc = model_fail(err, "config.json: \"model_type\" is missing or not a string");
	else if (strlen(arch) > 32)
		rc = model_fail(err, "config.json: \"model_type\" is too long");
	if (rc == 0 && gguf_synth_str(g, "general.architecture", arch) != 0)
		rc = model_fail(err, "out of memory");
	if (rc == 0)
		rc = cfg_int(g, cfg, "hidden_size", arch, "embedding_length", -1, err);
	if (rc == 0)
		rc = cfg_int(g, cfg, "intermediate_size", arch, "feed_forward_length", -1, err);
	if (rc == 0)
		rc = cfg_int(g, cfg, "num_hidden_layers", arch, "block_count", -1, err);
	if (rc == 0)
		rc = cfg_int(g, cfg, "num_attention_heads", arch, "attention.head_count", -1, err);
	const cJSON *kvh = cJSON_GetObjectItemCaseSensitive(cfg, "num_key_value_heads");
	if (rc == 0 && kvh != NULL && !cJSON_IsNull(kvh))
		rc = cfg_int(g, cfg, "num_key_value_heads", arch, "attention.head_count_kv", -1,
		             err);
	if (rc == 0)
		rc = cfg_int(g, cfg, "max_position_embeddings", arch, "context_length", 2048, err);
	const cJSON *hd = cJSON_GetObjectItemCaseSensitive(cfg, "head_dim");
	if (rc == 0 && hd != NULL && !cJSON_IsNull(hd))
		rc = cfg_int(g, cfg, "head_dim", arch, "attention.key_length", -1, err);
	if (rc == 0)
		rc = cfg_float(g, cfg, "rms_norm_eps", arch, "attention.layer_norm_rms_epsilon",
		               err);
	if (rc == 0)
		rc = cfg_float(g, cfg, "rope_theta", arch, "rope.freq_base", err);
	const cJSON *rs = cJSON_GetObjectItemCaseSensitive(cfg, "rope_scaling");
	if (rc == 0 && rs != NULL && !cJSON_IsNull(rs)) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(rs, "rope_type");
		if (t == NULL)
			t = cJSON_GetObjectItemCaseSensitive(rs, "type");
		char k[128];
		snprintf(k, sizeof k, "%s.rope.scaling.type", arch);
		if (!cJSON_IsString(t) || strlen(t->valuestring) > 32)
			rc = model_fail(err, "config.json: \"rope_scaling\" has no type");
		else if (gguf_synth_str(g, k, t->valuestring) != 0)
			rc = model_fail(err, "out of memory");
		if (rc == 0)
			rc = cfg_float(g, rs, "factor", arch, "rope.scaling.factor", err);
	}
	const cJSON *tie = cJSON_GetObjectItemCaseSensitive(cfg, "tie_word_embeddings");
	*tied = cJSON_IsTrue(tie);
	cJSON_Delete(cfg);
	return rc;
}

/* GGUF's name for the Hugging Face tensor NAME, into OUT (its own name
 * when there is none: gguf_model.c refuses it as not part of the model). */
static void gguf_name(const char *name, char *out, size_t size)
{
	static const char *const map[][2] = {
	        {"input_layernorm.weight", "attn_norm.weight"},
	        {"post_attention_layernorm.weight", "ffn_norm.weight"},
	        {"self_attn.q_proj.weight", "attn_q.weight"},
	        {"self_attn.k_proj.weight", "attn_k.weight"},
	        {"self_attn.v_proj.weight", "attn_v.weight"},
	        {"self_attn.q_proj.bias", "attn_q.bias"},
	        {"self_attn.k_proj.bias", "attn_k.bias"},
	        {"self_attn.v_proj.bias", "attn_v.bias"},
	        {"self_attn.o_proj.weight", "attn_output.weight"},
	        {"self_attn.q_norm.weight", "attn_q_norm.weight"},
	        {"self_attn.k_norm.weight", "attn_k_norm.weight"},
	        {"mlp.gate_proj.weight", "ffn_gate.weight"},
	        {"mlp.up_proj.weight", "ffn_up.weight"},
	        {"mlp.down_proj.weight", "ffn_down.weight"},
	};
	int layer, at = 0;
	if (strcmp(name, "model.embed_tokens.weight") == 0) {
		snprintf(out, size, "token_embd.weight");
		return;
	}
	if (strcmp(name, "model.norm.weight") == 0) {
		snprintf(out, size, "output_norm.weight");
		return;
	}
	if (strcmp(name, "lm_head.weight") == 0) {
		snprintf(out, size, "output.weight");
		return;
	}
	if (sscanf(name, "model.layers.%d.%n", &layer, &at) == 1 && at > 0 && layer >= 0)
		for (size_t i = 0; i < sizeof map / sizeof *map; i++)
			if (strcmp(name + at, map[i][0]) == 0) {
				snprintf(out, size, "blk.%d.%s", layer, map[i][1]);
				return;
			}
	snprintf(out, size, "%s", name);
}

/* Every tensor of the safetensors file NAME in DIR into G. */
static int read_safetensors(struct gguf_file *g, const struct llama_folder *dir, const char *name,
                            int tied, char *err)
{
	char shown[MODEL_SHOWN_MAX];
	struct stat st;

	const char *raw = name;
	name = model_shown_str(name, shown); /* from the index: untrusted */
	const int fd = folder_open_as(dir, raw, name, err);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 8) {
		close(fd);
		return model_fail(err,
		                  "%s: not a safetensors file (a regular file of 8 bytes or more)",
		                  name);
	}
	const size_t size = (size_t)st.st_size;
	unsigned char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return model_fail(err, "%s: cannot map: %s", name, strerror(errno));
	if (gguf_synth_map(g, map, size) != 0) {
		munmap(map, size);
		return model_fail(err, "%s: too many files", name);
	}
	uint64_t n = 0;
	for (int i = 7; i >= 0; i--)
		n = n << 8 | map[i];
	if (n < 2 || n > size - 8 || n > (uint64_t)HF_MAX_JSON)
		return model_fail(err, "%s: byte 0: header of %llu bytes, the file has %zu", name,
		                  (unsigned long long)n, size);
	cJSON *h = cJSON_ParseWithLength((const char *)map + 8, (size_t)n);
	if (h == NULL || !cJSON_IsObject(h)) {
		cJSON_Delete(h);
		return model_fail(err, "%s: byte 8: the header is not a JSON object", name);
	}
	const unsigned char *data = map + 8 + n;
	const uint64_t data_len = size - 8 - n;
	int rc = 0;
	const cJSON *t;
	cJSON_ArrayForEach(t, h)
	{
		if (strcmp(t->string, "__metadata__") == 0)
			continue;
		const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
		const cJSON *sh = cJSON_GetObjectItemCaseSensitive(t, "shape");
		const cJSON *off = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
		char gname[96], tshown[MODEL_SHOWN_MAX];
		gguf_name(t->string, gname, sizeof gname);
		const char *tn = model_shown_str(gname, tshown);
		if (!cJSON_IsString(dt) || !cJSON_IsArray(sh) || !cJSON_IsArray(off) ||
		    cJSON_GetArraySize(off) != 2 || cJSON_GetArraySize(sh) < 1 ||
		    cJSON_GetArraySize(sh) > GGUF_MAX_DIMS) {
			rc = model_fail(err,
			                "%s: tensor \"%s\": needs a dtype, a shape of 1 to 4 "
			                "dimensions and two data_offsets",
			                name, tn);
			break;
		}
		enum ggml_type type;
		char dshown[MODEL_SHOWN_MAX];
		int es;
		if (strcmp(dt->valuestring, "F32") == 0)
			type = GGML_F32, es = 4;
		else if (strcmp(dt->valuestring, "F16") == 0)
			type = GGML_F16, es = 2;
		else if (strcmp(dt->valuestring, "BF16") == 0)
			type = GGML_BF16, es = 2;
		else {
			rc = model_fail(err,
			                "%s: tensor \"%s\": dtype \"%s\" is not supported (F32, "
			                "F16 and BF16 are)",
			                name, tn, model_shown_str(dt->valuestring, dshown));
			break;
		}
		/* Hugging Face's shape is outermost first; GGUF's ne innermost first. */
		uint64_t ne[GGUF_MAX_DIMS], total = 1;
		const int nd = cJSON_GetArraySize(sh);
		for (int d = 0; d < nd && rc == 0; d++) {
			const cJSON *x = cJSON_GetArrayItem(sh, nd - 1 - d);
			if (!cJSON_IsNumber(x) || x->valuedouble < 1 || x->valuedouble > 1e12)
				rc = model_fail(err, "%s: tensor \"%s\": a bad dimension", name,
				                tn);
			else
				ne[d] = (uint64_t)x->valuedouble, total *= ne[d];
		}
		if (rc != 0)
			break;
		const cJSON *b = cJSON_GetArrayItem(off, 0), *e = cJSON_GetArrayItem(off, 1);
		if (!cJSON_IsNumber(b) || !cJSON_IsNumber(e) || b->valuedouble < 0 ||
		    e->valuedouble > (double)data_len || b->valuedouble > e->valuedouble ||
		    (uint64_t)e->valuedouble - (uint64_t)b->valuedouble != total * (uint64_t)es) {
			rc = model_fail(err,
			                "%s: tensor \"%s\": data_offsets do not hold its %llu "
			                "elements within the file's %llu bytes of data",
			                name, tn, (unsigned long long)total,
			                (unsigned long long)data_len);
			break;
		}
		if (tied && strcmp(gname, "output.weight") == 0)
			continue; /* the embedding is the classifier */
		if (gguf_find_tensor(g, gname) != NULL) {
			rc = model_fail(err, "%s: tensor \"%s\" appears twice", name, tn);
			break;
		}
		if (gguf_synth_tensor(g, gname, nd, ne, type, data + (uint64_t)b->valuedouble) !=
		    0) {
			rc = model_fail(err, "out of memory");
			break;
		}
	}
	cJSON_Delete(h);
	return rc;
}

/* The shards the index maps tensors to, each read once. */
static int read_index(struct gguf_file *g, const struct llama_folder *dir, int tied, char *err)
{
	char *text = slurp(dir, "model.safetensors.index.json", err);
	if (text == NULL)
		return -1;
	cJSON *idx = cJSON_Parse(text);
	free(text);
	const cJSON *wm = cJSON_GetObjectItemCaseSensitive(idx, "weight_map");
	if (!cJSON_IsObject(wm)) {
		cJSON_Delete(idx);
		return model_fail(err, "model.safetensors.index.json: no \"weight_map\" object");
	}
	const char *done[GGUF_SYNTH_MAX_MAPS];
	int n = 0, rc = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, wm)
	{
		if (!cJSON_IsString(e) || strchr(e->valuestring, '/') != NULL ||
		    e->valuestring[0] == '.') {
			char shown[MODEL_SHOWN_MAX];
			rc = model_fail(err,
			                "model.safetensors.index.json: \"%s\": not a file "
			                "name in the folder",
			                model_shown_str(e->string, shown));
			break;
		}
		int seen = 0;
		for (int i = 0; i < n; i++)
			seen |= strcmp(done[i], e->valuestring) == 0;
		if (seen)
			continue;
		if (n == GGUF_SYNTH_MAX_MAPS) {
			rc = model_fail(err, "model.safetensors.index.json: more than %d shards",
			                GGUF_SYNTH_MAX_MAPS);
			break;
		}
		done[n++] = e->valuestring;
		if ((rc = read_safetensors(g, dir, e->valuestring, tied, err)) != 0)
			break;
	}
	cJSON_Delete(idx);
	return rc;
}

int llama_load_folder_within(const struct llama_folder *dir, struct llama_limit *limit,
                             struct llama_model **out, char err[LLAMA_ERR_MAX])
{
	char index_err[LLAMA_ERR_MAX];
	int tied = 0;

	*out = NULL;
	struct gguf_file *g = gguf_synth_new();
	if (g == NULL)
		return model_fail(err, "out of memory");
	int rc = read_config(g, dir, &tied, err);
	if (rc == 0 && gguf_synth_u32(g, "h2o.hf_rows", 1) != 0)
		rc = model_fail(err, "out of memory");
	/* Sharded when the folder has an index, one file otherwise. */
	int index = -1;
	if (rc == 0 && (index = folder_open(dir, "model.safetensors.index.json", index_err)) >= 0)
		close(index);
	if (rc == 0)
		rc = index >= 0 ? read_index(g, dir, tied, err)
		                : read_safetensors(g, dir, "model.safetensors", tied, err);
	if (rc != 0) {
		gguf_close(g);
		return -1;
	}
	/* The tables are the model's; its tokenizer is the folder's own file. */
	return gguf_model_load(g, 0, limit, out, err);
}

int hf_model_load(const char *dir, struct llama_limit *limit, struct llama_model **out, char *err)
{
	const struct llama_folder f = {.dir = dir};
	return llama_load_folder_within(&f, limit, out, err);
}
