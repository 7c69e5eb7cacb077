/*
 * gguf_logits: a model's logits over a file of token ids, for
 * tests/model/gguf_ref_test.sh to compare with tools/gguf_ref.py.
 *
 *   gguf_logits MODEL TOKENS.txt
 *
 * prints, for each position of TOKENS.txt's ids (whitespace-separated),
 * the logits after that position's step, one line each, %.9g: the layout
 * of llama.cpp's recorded logits in tests/model/gguf/expected/. A model
 * that does not load prints its error, exit 3; a bad token file, exit 2.
 */
#include <stdio.h>
#include <stdlib.h>

#include "h2o/llama.h"

enum { MAX_TOK = 4096 };

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: gguf_logits MODEL TOKENS.txt\n");
		return 2;
	}
	static int ids[MAX_TOK];
	int n = 0;
	FILE *f = fopen(argv[2], "r");
	if (f == NULL) {
		fprintf(stderr, "%s: cannot open\n", argv[2]);
		return 2;
	}
	while (n < MAX_TOK && fscanf(f, "%d", &ids[n]) == 1)
		n++;
	const int rest = fscanf(f, " %*s");
	fclose(f);
	if (n == 0 || rest != EOF) {
		fprintf(stderr, "%s: not a list of at most %d token ids\n", argv[2], MAX_TOK);
		return 2;
	}
	char err[LLAMA_ERR_MAX] = "";
	struct llama_model *m = NULL;
	if (llama_load(argv[1], &m, err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 3;
	}
	const int V = llama_model_config(m)->vocab_size;
	struct llama_run *r = llama_run_new_len(m, n);
	int rc = r == NULL ? 4 : 0;
	for (int p = 0; rc == 0 && p < n; p++) {
		if (llama_step(m, r, ids[p], p) != 0) {
			fprintf(stderr, "%s: token %d at position %d refused\n", argv[2], ids[p],
			        p);
			rc = 2;
			break;
		}
		const float *lg = llama_logits(r);
		for (int v = 0; v < V; v++)
			printf(v ? " %.9g" : "%.9g", (double)lg[v]);
		putchar('\n');
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = rc ? rc : 1;
	llama_run_free(r);
	llama_free(m);
	return rc;
}
