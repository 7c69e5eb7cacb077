/*
 * loading: a scene loaded while the user waits at the terminal.
 *
 * A model scene runs its model as it loads (scene_model.c): seconds, or
 * minutes for a large model, before the screen can open. The load then
 * runs on a thread of its own while this one keeps the terminal: the keys
 * typed are read and never echoed (they would be left for the shell after
 * the program ends), q stops the load between two positions of the model,
 * so do Ctrl-C, SIGTERM and SIGHUP (whose exit status stays 128 + n), and
 * the progress line on stderr says how far the load has come and in which
 * phase it is: tokenizing the text, then running the model. Only the
 * interactive screen loads so; the other modes load as they always did.
 */
#ifndef H2O_LOADING_H
#define H2O_LOADING_H

/* The load, told of its progress through TOLD(TOLD_CTX, done, total),
 * stopped when TOLD returns nonzero (scene_options.told). Returns -1 when
 * it loaded, or the program's exit status. */
typedef int (*loading_fn)(void *ctx, int (*told)(void *, double, double), void *told_ctx);

/* Run LOAD(CTX) as above; WHAT names it on the progress line. Returns its
 * status, or 0 when q stopped it. A signal that stopped it is raised again
 * once the terminal is as it was, so the process ends of it. */
int loading_run(loading_fn load, void *ctx, const char *what);

#endif
