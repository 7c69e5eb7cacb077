/*
 * view_status: the status line, the figures of H2O, the compared policy
 * and the full cache at the shown step, in the longest form that fits.
 */
#include <stdio.h>

#include "view_panels.h"

static const char *plural(int n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "H2O 4 tokens, 16 KV, err 0.0671 cos 0.9985, recall 0.7500" for policy P,
 * long or short; BRIEF: short, without the cosine. */
static int status_part(char *buf, size_t size, const char *name, const struct step_metrics *m,
                       bool full_form, bool brief)
{
	char tokens[32], kv[32];
	view_format_count(m->tokens, tokens);
	view_format_count(m->kv, kv);
	int len;
	if (full_form)
		len = snprintf(buf, size, "%s %s %s, %s KV", name, tokens,
		               plural(m->tokens, "token", "tokens"), kv);
	else
		len = snprintf(buf, size, "%s %s/%s KV", name, tokens, kv);
	if (m->has_out && brief)
		len += snprintf(buf + len, size - (size_t)len, " err %.4f", m->out_err);
	else if (m->has_out)
		len += snprintf(buf + len, size - (size_t)len,
		                full_form ? "  out err %.4f  cos %.4f" : " err %.4f cos %.4f",
		                m->out_err, m->out_cos);
	len += snprintf(buf + len, size - (size_t)len, full_form ? "  recall %.4f" : " rec %.4f",
	                m->attn_recall);
	return len;
}

/* The phase of a scene with a prompt: "prompt 37/512" up to the prompt's
 * end, "decoding" after it; nothing without a prompt. Returns the columns
 * it took, its gap included. */
static int draw_phase(const struct view *v, struct frame *f, int x, int y, int w)
{
	const int prompt = v->app->b.prompt;
	if (prompt <= 0)
		return 0;
	char buf[64], a[32], b[32];
	if (v->t <= prompt)
		snprintf(buf, sizeof buf, "prompt %s/%s", view_format_count(v->t, a),
		         view_format_count(prompt, b));
	else
		snprintf(buf, sizeof buf, "decoding");
	return frame_text(f, x, y, w, buf, STYLE_LABEL) + 2;
}

void panel_status_draw(const struct view *v, struct frame *f, struct rect r)
{
	char buf[320];
	const int phase = draw_phase(v, f, r.x + 1, r.y, r.w - 2);
	r.x += phase;
	r.w -= phase;
	const int w = r.w - 2;
	if (v->t == 0) {
		frame_text(f, r.x + 1, r.y, w, "H2O 0 tokens, 0 KV   full 0 tokens, 0 KV",
		           STYLE_NORMAL);
		return;
	}
	const struct step_summary *s = timeline_summary(v->tl, v->t);
	const struct step_metrics *h = &s->c[POLICY_H2O].m, *full = &s->c[POLICY_FULL].m;
	const enum policy_id cmp = v->app->compare;
	const double share = 100.0 * (double)h->kv / (double)full->kv;
	char tokens[32], kv[32];
	view_format_count(full->tokens, tokens);
	view_format_count(full->kv, kv);
	/* From the longest to the shortest, the first that fits: the long
	 * figures, then the short ones, each with the share said in full,
	 * then briefly; then the short figures alone, and last (after a
	 * prompt's phase only) without the cosine. */
	static const struct {
		bool long_form, brief;
		const char *full; /* the full cache's part, with the share */
	} forms[] = {
	        {true, false, "   full %s %s, %s KV  H2O holds %.0f%% of the full cache's memory"},
	        {true, false, "   full %s %s, %s KV  H2O holds %.0f%% of full's memory"},
	        {false, false, "  full %s/%s KV  H2O holds %.0f%% of the full cache's memory"},
	        {false, false, "  full %s/%s KV  H2O holds %.0f%% of full's memory"},
	        {false, false, "  full %s/%s KV"},
	        {false, true, "  full %s/%s KV"},
	};
	/* The form without the cosine only where a phase takes room. */
	const size_t count = sizeof forms / sizeof forms[0] - (phase ? 0 : 1);
	for (size_t form = 0; form < count; form++) {
		const bool long_form = forms[form].long_form;
		const bool brief = forms[form].brief;
		int len = status_part(buf, sizeof buf, "H2O", h, long_form, brief);
		if (cmp != POLICY_FULL) {
			len += snprintf(buf + len, sizeof buf - (size_t)len, "   ");
			len += status_part(buf + len, sizeof buf - (size_t)len, policies[cmp]->name,
			                   &s->c[cmp].m, long_form, brief);
		}
		if (long_form)
			snprintf(buf + len, sizeof buf - (size_t)len, forms[form].full, tokens,
			         plural(full->tokens, "token", "tokens"), kv, share);
		else
			snprintf(buf + len, sizeof buf - (size_t)len, forms[form].full, tokens, kv,
			         share);
		if (frame_text_width(buf, f->ascii) <= w)
			break;
	}
	frame_text(f, r.x + 1, r.y, w, buf, STYLE_NORMAL);
}
