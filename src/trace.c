/*
 * trace: spec §5, one JSON object per step.
 */
#include "h2o/trace.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/engine.h"
#include "h2o/scene.h"

/* The shortest %.Ng (N = 15..17) that reads back as X. */
static void put_number(FILE *out, double x)
{
	char buf[32];
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof buf, "%.*g", digits, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fputs(buf, out);
}

/* A JSON string: UTF-8 passes through, invalid bytes become U+FFFD, control
 * characters are escaped. */
static void put_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	fputc('"', out);
	while (*p) {
		const unsigned char c = *p;
		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc(c, out);
			p++;
		} else if (c < 0x20 || c == 0x7F) {
			fprintf(out, "\\u%04x", c);
			p++;
		} else if (c < 0x80) {
			fputc(c, out);
			p++;
		} else {
			/* Copy a well-formed sequence whole, else one U+FFFD per
			 * bad byte. */
			int len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
			bool ok = len > 0 && c < 0xF5;
			for (int i = 1; ok && i < len; i++)
				ok = (p[i] & 0xC0) == 0x80;
			if (ok && len == 3) {
				/* No overlongs, no surrogates. */
				ok = !(c == 0xE0 && p[1] < 0xA0) && !(c == 0xED && p[1] >= 0xA0);
			} else if (ok && len == 4) {
				ok = !(c == 0xF0 && p[1] < 0x90) && !(c == 0xF4 && p[1] >= 0x90);
			}
			if (ok) {
				fwrite(p, 1, (size_t)len, out);
				p += len;
			} else {
				fputs("\\ufffd", out);
				p++;
			}
		}
	}
	fputc('"', out);
}

static void put_ints(FILE *out, const char *key, const int *v, int n)
{
	fprintf(out, "\"%s\": [", key);
	for (int i = 0; i < n; i++)
		fprintf(out, i ? ",%d" : "%d", v[i]);
	fputc(']', out);
}

static void put_numbers(FILE *out, const char *key, const double *v, int n)
{
	fprintf(out, "\"%s\": [", key);
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		put_number(out, v[i]);
	}
	fputc(']', out);
}

static void put_metric(FILE *out, const char *key, double v)
{
	fprintf(out, ", \"%s\": ", key);
	put_number(out, v);
}

static void put_step(FILE *out, const struct scene *sc, const struct engine *e,
                     const struct step_record *rec)
{
	const int len = engine_h2o_len(e), rlen = engine_h2o_recent_len(e);
	const int *kept = engine_h2o_positions(e);

	fprintf(out, "{\"step\": %d, \"pos\": %d, \"token\": ", rec->step, rec->pos);
	put_string(out, sc->text[rec->pos]);
	fputs(", \"h2o\": {", out);
	put_ints(out, "attended", rec->attended, rec->n_attended);
	fputs(", ", out);
	put_numbers(out, "attn", rec->attn, rec->n_attended);
	fputs(", ", out);
	put_numbers(out, "scores", rec->scores, rec->n_attended);
	fputs(", ", out);
	/* The engine reports evictions in ascending position order. */
	put_ints(out, "evicted", rec->evicted, rec->n_evicted);
	fputs(", ", out);
	put_ints(out, "kept", kept, len);
	fputs(", ", out);
	put_ints(out, "heavy", kept, len - rlen);
	fputs(", ", out);
	put_ints(out, "recent", kept + len - rlen, rlen);
	if (rec->out_h) {
		fputs(", ", out);
		put_numbers(out, "out", rec->out_h, sc->dim);
	}
	fputs("}, \"full\": {", out);
	put_numbers(out, "attn", rec->full_attn, rec->pos + 1);
	fputs(", ", out);
	put_numbers(out, "scores", rec->full_scores, rec->pos + 1);
	if (rec->out_f) {
		fputs(", ", out);
		put_numbers(out, "out", rec->out_f, sc->dim);
	}
	const struct step_metrics *m = &rec->m;
	fprintf(out,
	        "}, \"metrics\": {\"tokens_h2o\": %d, \"tokens_full\": %d, \"kv_h2o\": %ld, "
	        "\"kv_full\": %ld",
	        m->tokens_h, m->tokens_f, m->kv_h, m->kv_f);
	if (m->has_out) {
		put_metric(out, "out_err", m->out_err);
		put_metric(out, "out_cos", m->out_cos);
	}
	put_metric(out, "attn_recall", m->attn_recall);
	fputs("}}\n", out);
}

int trace_write(const struct scene *sc, int heavy, int recent, FILE *out)
{
	struct engine *e = engine_new(sc, heavy, recent);
	if (!e)
		return -1;
	struct step_record rec;
	while (engine_step(e, &rec))
		put_step(out, sc, e, &rec);
	engine_free(e);
	return ferror(out) ? -1 : 0;
}
