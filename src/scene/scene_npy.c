/*
 * scene_npy: the files a scene names, .npy files and a "text" file.
 *
 * A name is relative to the scene file's folder. Each of q, k and v is
 * opened here and its header checked (npy.c) against dim and the others'
 * shapes, which give the scene's layers and heads; its numbers are read in the last pass (scene_copy.c), and any
 * error points at the string that named the file. A "text" file is read
 * whole and checked line by line.
 */
#include "scene_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonloc.h"

/* NAME as a message shows it: as written when it is a plain path, else
 * quoted and escaped (it comes from the file, and reaches a terminal). */
static void shown_name(const char *name, char *buf, size_t size)
{
	size_t len = strlen(name);
	bool plain = len > 0 && len < 100;

	for (size_t i = 0; i < len && plain; i++) {
		const unsigned char c = (unsigned char)name[i];
		plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		        (c >= '0' && c <= '9') || strchr("._-+/", c) != NULL;
	}
	if (plain)
		snprintf(buf, size, "%s", name);
	else
		jsonloc_quote(buf, size, name, len, 60);
}

/* NAME, written in the scene, as a path: relative to the scene file's
 * directory, like an include. */
static int resolve(const struct loader *ld, const char *name, char *out, size_t size)
{
	const char *slash = strrchr(ld->name, '/');
	int n;

	if (name[0] == '/' || slash == NULL)
		n = snprintf(out, size, "%s", name);
	else
		n = snprintf(out, size, "%.*s/%s", (int)(slash - ld->name), ld->name, name);
	return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* Whether the string literal at W holds the escape \u0000: cJSON decodes
 * it into a NUL byte, which ends the C string there, so "a.npy\u0000.txt"
 * would name a.npy without a word. */
bool scene_holds_nul(const struct loader *ld, const struct where *w)
{
	const char *s = ld->text;
	size_t at;

	if (scene_locate(ld, w, &at) != 0 || s[at] != '"')
		return false;
	for (size_t i = at + 1; i < ld->len && s[i] != '"'; i++) {
		if (s[i] != '\\')
			continue;
		if (ld->len - i > 5 && s[i + 1] == 'u' && memcmp(s + i + 2, "0000", 4) == 0)
			return true;
		i++; /* the escaped character, which may be a quote */
	}
	return false;
}

/* Whether the relative NAME climbs out of its folder: "a/../b" stays in,
 * "../b" and "a/../../b" do not. */
static bool climbs_out(const char *name)
{
	int depth = 0;

	for (const char *p = name; *p != '\0';) {
		const size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return true;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			depth++;
		}
		p += n + (p[n] == '/');
	}
	return false;
}

/* Whether PATH is FOLDER or below it; both resolved by realpath. */
static bool within(const char *folder, const char *path)
{
	const size_t n = strlen(folder);

	if (strcmp(folder, "/") == 0)
		return true;
	return strncmp(path, folder, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The scene's folder (its file's name up to the last '/'), every link
 * resolved; NULL when it cannot be. */
static char *folder_real(const struct loader *ld)
{
	const char *slash = strrchr(ld->name, '/');
	char *folder = slash == NULL       ? strdup(".")
	               : slash == ld->name ? strdup("/")
	                                   : strndup(ld->name, (size_t)(slash - ld->name));
	char *base = folder ? realpath(folder, NULL) : NULL;
	free(folder);
	return base;
}

/*
 * By default a scene names only files in its own folder or below, so that
 * a scene from elsewhere cannot read, say, a key in the user's home into
 * its token texts: NAME must not climb out with "..", and PATH with every
 * link resolved must lie in the folder with every link resolved (a link
 * out of the folder leads outside). PATH becomes that resolved path, for
 * the caller to open, so the file opened is the one checked.
 */
static int check_inside(const struct loader *ld, const struct where *w, const char *name,
                        const char *shown, char *path, size_t size)
{
	char quoted[160];

	jsonloc_quote(quoted, sizeof quoted, name, strlen(name), 60);
	if (name[0] != '/' && climbs_out(name))
		return scene_fail_value(
		        ld, w, "%s is outside the scene's folder (--allow-paths allows it)",
		        quoted);
	char *real = realpath(path, NULL);
	if (real == NULL)
		return scene_fail_value(ld, w, "%s: cannot open: %s", shown, strerror(errno));
	char *base = folder_real(ld);
	const bool inside = base != NULL && within(base, real);
	const size_t len = strlen(real);
	if (inside && len < size)
		memcpy(path, real, len + 1);
	free(base);
	free(real);
	if (!inside && name[0] == '/')
		return scene_fail_value(
		        ld, w, "%s is outside the scene's folder (--allow-paths allows it)",
		        quoted);
	if (!inside)
		return scene_fail_value(ld, w,
		                        "%s leads outside the scene's folder through a symbolic "
		                        "link (--allow-paths allows it)",
		                        quoted);
	if (len >= size)
		return scene_fail_value(ld, w, "%s: the file name is too long", shown);
	return 0;
}

/* The string at W names a file: a non-empty string without NUL, resolved
 * into PATH, and by default in the scene's folder. */
int scene_check_file_name(const struct loader *ld, const cJSON *node, const struct where *w,
                          const char *what, char *shown, size_t shown_size, char *path,
                          size_t path_size)
{
	if (!cJSON_IsString(node))
		return scene_fail_got(ld, w, node, "expected %s", what);
	if (scene_holds_nul(ld, w))
		return scene_fail_value(ld, w,
		                        "expected %s, got a name holding \\u0000 (a NUL "
		                        "character)",
		                        what);
	if (node->valuestring[0] == '\0')
		return scene_fail_value(ld, w, "expected %s, got an empty string", what);
	shown_name(node->valuestring, shown, shown_size);
	if (resolve(ld, node->valuestring, path, path_size) != 0)
		return scene_fail_value(ld, w, "%s: the file name is too long", shown);
	if (!ld->allow_paths)
		return check_inside(ld, w, node->valuestring, shown, path, path_size);
	return 0;
}

/* Open FD's file for blocking reads if it is a regular one; WHY when not. */
static const char *regular_blocking(int fd, struct stat *st)
{
	int flags;
	if (fstat(fd, st) != 0)
		return strerror(errno);
	if (S_ISDIR(st->st_mode))
		return strerror(EISDIR);
	if (!S_ISREG(st->st_mode)) /* a FIFO or a device could block or never end */
		return "not a regular file";
	if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
		return strerror(errno);
	return NULL;
}

int scene_open_in_folder(const struct loader *ld, const char *dir, const char *name, char *why,
                         size_t size)
{
	char path[4096];
	struct stat st;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
		snprintf(why, size, "cannot open: the file name is too long");
		return -1;
	}
	char *real = NULL;
	if (!ld->allow_paths) {
		/* The file with every link resolved, in the scene's folder. */
		char *base = folder_real(ld);
		real = realpath(path, NULL);
		const int e = errno;
		const bool inside = base != NULL && real != NULL && within(base, real);
		free(base);
		if (real == NULL) {
			snprintf(why, size, "cannot open: %s", strerror(e));
			return -1;
		}
		if (!inside) {
			free(real);
			snprintf(why, size,
			         "leads outside the scene's folder through a symbolic link "
			         "(--allow-paths allows it)");
			return -1;
		}
	}
	const char *open_path = real != NULL ? real : path;
	int fd = open(open_path,
	              O_RDONLY | O_CLOEXEC | O_NONBLOCK | (real != NULL ? O_NOFOLLOW : 0));
	free(real);
	const char *bad = fd < 0 ? strerror(errno) : regular_blocking(fd, &st);
	if (bad != NULL) {
		if (fd >= 0)
			close(fd);
		snprintf(why, size, "cannot open: %s", bad);
		return -1;
	}
	return fd;
}

/* Open PATH, which the string at W names (SHOWN as messages show it), for
 * reading: with O_NONBLOCK, so that a FIFO without a writer cannot hang
 * the open before fstat refuses it, then blocking again for the reads.
 * Only a regular file passes. Returns the descriptor, and its fstat in
 * *ST, or -1 with the error written. */
int scene_open_named(const struct loader *ld, const struct where *w, const char *shown,
                     const char *path, struct stat *st)
{
	/* Inside the folder, PATH has no links left: one that appears now is
	 * not the file checked. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (ld->allow_paths ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return scene_fail_value(ld, w, "%s: cannot open: %s", shown, strerror(errno));
	const char *why = regular_blocking(fd, st);
	if (why != NULL) {
		close(fd);
		return scene_fail_value(ld, w, "%s: cannot open: %s", shown, why);
	}
	return fd;
}

/* What a file's shape says: (layers, heads, n, dim), with 1 for the
 * leading dimensions a shape of rank 3 or 2 leaves out. */
struct layout {
	uint64_t layers, heads, n, dim;
};

static bool layout_of(const struct npy_header *h, struct layout *out)
{
	const uint64_t *s = h->shape;
	if (h->rank < 2 || h->rank > 4)
		return false;
	out->layers = h->rank == 4 ? s[0] : 1;
	out->heads = h->rank == 4 ? s[1] : h->rank == 3 ? s[0] : 1;
	out->n = s[h->rank - 2];
	out->dim = s[h->rank - 1];
	return true;
}

/* The scene's own "layers", "heads" or "kv_heads" (WHICH 0, 1, 2) against
 * what the file's shape says. */
static int check_given(const struct loader *ld, const struct plan *p, const struct npy_source *src,
                       int which, uint64_t got, const char *shape)
{
	static const char *const what[2][3] = {{"layers", "query heads", "key/value heads"},
	                                       {"layer", "query head", "key/value head"}};
	static const char *const field[3] = {"layers", "heads", "kv_heads"};
	const int want = which == 0 ? p->layers : which == 1 ? p->heads : p->kv_heads;
	if (!p->layout_given[which] || got == (uint64_t)want)
		return 0;
	return scene_fail_value(ld, &src->w,
	                        "%s: has %llu %s (shape %s), but the scene says \"%s\": %d",
	                        src->shown, (unsigned long long)got, what[got == 1][which], shape,
	                        field[which], want);
}

/* q's shape: the scene's tokens and layout, within the limits. */
static int check_q(const struct loader *ld, struct plan *p, const struct npy_source *src,
                   const struct layout *q, const char *shape)
{
	if (q->layers == 0 || q->heads == 0)
		return scene_fail_value(ld, &src->w,
		                        "%s: expected at least 1 layer and 1 head, got shape %s",
		                        src->shown, shape);
	if (q->n == 0)
		return scene_fail_value(ld, &src->w, "%s: expected at least 1 row, got shape %s",
		                        src->shown, shape);
	if (q->n > SCENE_MAX_TOKENS)
		return scene_fail_value(ld, &src->w,
		                        "%s: expected at most %d rows (tokens), got shape %s",
		                        src->shown, SCENE_MAX_TOKENS, shape);
	if (q->layers > SCENE_MAX_LAYERS)
		return scene_fail_value(
		        ld, &src->w, "%s: has %llu layers (shape %s), more than the %d allowed",
		        src->shown, (unsigned long long)q->layers, shape, SCENE_MAX_LAYERS);
	if (q->heads > SCENE_MAX_HEADS)
		return scene_fail_value(
		        ld, &src->w,
		        "%s: has %llu query heads in a layer (shape %s), more than the %d allowed",
		        src->shown, (unsigned long long)q->heads, shape, SCENE_MAX_HEADS);
	/* Both within their limits now: the product cannot wrap. */
	const uint64_t heads = q->layers * q->heads;
	if (heads > SCENE_MAX_QUERY_HEADS)
		return scene_fail_value(
		        ld, &src->w,
		        "%s: has %llu layers x %llu heads = %llu query heads (shape "
		        "%s), more than the %d allowed",
		        src->shown, (unsigned long long)q->layers, (unsigned long long)q->heads,
		        (unsigned long long)heads, shape, SCENE_MAX_QUERY_HEADS);
	if (src->file.h.count > (uint64_t)SCENE_MAX_VALUES)
		return scene_fail_value(
		        ld, &src->w,
		        "%s: shape %s holds %llu numbers, more than the %ld allowed "
		        "in each of q, k and v",
		        src->shown, shape, (unsigned long long)src->file.h.count, SCENE_MAX_VALUES);
	if (check_given(ld, p, src, 0, q->layers, shape) != 0 ||
	    check_given(ld, p, src, 1, q->heads, shape) != 0)
		return -1;
	p->n = (int)q->n;
	p->layers = (int)q->layers;
	p->heads = (int)q->heads;
	return 0;
}

/* k's or v's shape against q's (QF its file) and, for v, k's. */
static int check_kv(const struct loader *ld, struct plan *p, int i, const struct layout *q,
                    const struct layout *kv, const char *shape)
{
	const struct npy_source *src = &p->npy[i], *qf = &p->npy[0];
	if (qf->file.h.rank == 2 && src->file.h.rank == 2 && kv->n != q->n)
		return scene_fail_value(ld, &src->w, "%s: expected shape (%d, %d) like q, got %s",
		                        src->shown, p->n, p->dim, shape);
	if (kv->layers != q->layers)
		return scene_fail_value(ld, &src->w,
		                        "%s: has %llu layer%s (shape %s), but q (%s) has %d",
		                        src->shown, (unsigned long long)kv->layers,
		                        kv->layers == 1 ? "" : "s", shape, qf->shown, p->layers);
	if (kv->n != q->n)
		return scene_fail_value(
		        ld, &src->w, "%s: has %llu tokens (shape %s), but q (%s) has %d",
		        src->shown, (unsigned long long)kv->n, shape, qf->shown, p->n);
	if (kv->heads == 0 || (uint64_t)p->heads % kv->heads != 0)
		return scene_fail_value(ld, &src->w,
		                        "%s has %llu key/value head%s, but %d query heads need a "
		                        "divisor of %d",
		                        src->shown, (unsigned long long)kv->heads,
		                        kv->heads == 1 ? "" : "s", p->heads, p->heads);
	if (i == 2 && kv->heads != (uint64_t)p->kv_heads)
		return scene_fail_value(
		        ld, &src->w, "%s: has %llu key/value head%s (shape %s), but k (%s) has %d",
		        src->shown, (unsigned long long)kv->heads, kv->heads == 1 ? "" : "s", shape,
		        p->npy[1].shown, p->kv_heads);
	if (i == 1 && check_given(ld, p, src, 2, kv->heads, shape) != 0)
		return -1;
	p->kv_heads = (int)kv->heads;
	return 0;
}

/* q, k and v: each file's header, and shapes that agree with dim and with
 * each other; they give the scene's tokens, layers and heads. The numbers
 * are read by build_npy. */
int scene_check_npy(const struct loader *ld, struct plan *p)
{
	static const char *const heads[3] = {"heads", "kv_heads", "kv_heads"};
	struct layout q = {0};

	for (int i = 0; i < 3; i++) {
		const struct field *f = &p->root[R_Q + i];
		struct npy_source *src = &p->npy[i];
		char path[4096], msg[NPY_MSG_MAX], shape[64];

		src->w = scene_where_field(&p->w_root, f->index, scene_root_names[R_Q + i]);
		if (scene_check_file_name(ld, f->node, &src->w, "the name of a .npy file",
		                          src->shown, sizeof src->shown, path, sizeof path) != 0)
			return -1;
		struct stat st;
		const int fd = scene_open_named(ld, &src->w, src->shown, path, &st);
		if (fd < 0)
			return -1;
		if (npy_open_fd(fd, &src->file, msg) != 0)
			return scene_fail_value(ld, &src->w, "%s: %s", src->shown, msg);
		const struct npy_header *h = &src->file.h;
		npy_format_shape(h, shape, sizeof shape);
		struct layout l;
		if (!layout_of(h, &l) || l.dim != (uint64_t)p->dim)
			return scene_fail_value(
			        ld, &src->w,
			        "%s: expected shape (n, %d), (%s, n, %d) or (layers, "
			        "%s, n, %d), got %s",
			        src->shown, p->dim, heads[i], p->dim, heads[i], p->dim, shape);
		if (i == 0) {
			if (check_q(ld, p, src, &l, shape) != 0)
				return -1;
			q = l;
		} else if (check_kv(ld, p, i, &q, &l, shape) != 0) {
			return -1;
		}
	}
	p->mode = SCENE_VECTOR;
	p->has_v = true;
	return 0;
}

/* The next line of a "text" file from *AT (END is the end of the file):
 * its bytes without the line break and one '\r' before it. */
const char *scene_next_line(const char **at, const char *end, size_t *len)
{
	const char *s = *at, *nl = memchr(s, '\n', (size_t)(end - s));
	const char *e = nl ? nl : end;

	*at = nl ? nl + 1 : end;
	*len = (size_t)(e - s) - (e > s && e[-1] == '\r');
	return s;
}

/* The "text" file: one token per line, as many lines as q has rows. */
static int check_text_file(const struct loader *ld, const cJSON *node, const struct where *w,
                           struct plan *p)
{
	char path[4096], shown[160], msg[128];
	struct stat st;

	if (scene_check_file_name(
	            ld, node, w,
	            "an array of strings or the name of a text file with one token per "
	            "line",
	            shown, sizeof shown, path, sizeof path) != 0)
		return -1;
	const int fd = scene_open_named(ld, w, shown, path, &st);
	if (fd < 0)
		return -1;
	if (st.st_size > SCENE_MAX_FILE_BYTES) {
		close(fd);
		return scene_fail_value(ld, w, "%s: cannot open: larger than 256 MiB", shown);
	}
	int rc = scene_read_all(fd, (size_t)st.st_size, (size_t)SCENE_MAX_FILE_BYTES, &p->text_file,
	                        &p->text_len, msg, sizeof msg);
	close(fd);
	if (rc != 0)
		return scene_fail_value(ld, w, "%s: %s", shown, msg);

	/* No text file: no pointer arithmetic on NULL either. */
	const char *at = p->text_file, *end = at ? at + p->text_len : NULL;
	int lines = 0;
	while (at < end) {
		size_t len;
		const char *line = scene_next_line(&at, end, &len);
		lines++;
		if (memchr(line, '\0', len) != NULL)
			return scene_fail_value(ld, w, "%s: line %d holds a NUL byte", shown,
			                        lines);
		if (len > SCENE_MAX_TEXT_BYTES)
			return scene_fail_value(
			        ld, w, "%s: line %d: expected at most %d bytes of text, got %zu",
			        shown, lines, SCENE_MAX_TEXT_BYTES, len);
	}
	if (lines != p->n)
		return scene_fail_value(ld, w,
		                        "%s: has %d line%s, expected %d (one token per row of q)",
		                        shown, lines, lines == 1 ? "" : "s", p->n);
	return 0;
}

/* The root's "text" beside .npy files: n strings, or a file of n lines. */
int scene_check_text_source(const struct loader *ld, struct plan *p)
{
	const struct field *f = &p->root[R_TEXT];

	if (f->node == NULL)
		return 0;
	const struct where w = scene_where_field(&p->w_root, f->index, "text");
	if (!cJSON_IsArray(f->node))
		return check_text_file(ld, f->node, &w, p);
	const int n = scene_count_children(f->node);
	if (n != p->n)
		return scene_fail_value(ld, &w, "expected %d strings (one per row of q), got %d",
		                        p->n, n);
	int i = 0;
	for (const cJSON *e = f->node->child; e != NULL; e = e->next, i++) {
		const struct where we = scene_where_elem(&w, i);
		const struct field fe = {e, i};
		const char *text;
		if (scene_check_text(ld, &fe, &we, &text) != 0)
			return -1;
	}
	return 0;
}
