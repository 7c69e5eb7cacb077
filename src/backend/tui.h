/*
 * tui: the interactive backend, the only code that talks to a terminal.
 *
 * It puts the screen up at once (tui_start), shows the loading frame
 * while the scene loads on a thread (tui_load), runs the Elm-style loop
 * around the app (tui_run: draw the app into a frame with view_draw, flush
 * the frame to the terminal through ncursesw, wait for a key or a tick
 * while playing and hand it to app_key) and gives the terminal back
 * (tui_end). It owns the terminal from tui_start to tui_end and gives it
 * back in every way out: q, Ctrl-C, SIGTERM, SIGHUP, exit(), and every
 * other signal whose default action ends the process (a crash, an abort,
 * Ctrl-\, SIGPIPE, SIGUSR1, SIGALRM, the real-time signals...), after
 * which the process still dies of the signal, and after a stop and fg it
 * takes the terminal back. What the program writes on stderr meanwhile is
 * held and written once the terminal is back. It must never draw anything
 * a frame does not hold, so the headless text stays the screen; its files
 * (tui.c, tui_load.c, tui_draw.c, tui_signals.c) are the only ones in the
 * project that include <curses.h>.
 */
#ifndef H2O_TUI_H
#define H2O_TUI_H

#include <stdbool.h>

struct app;

/*
 * Put the screen up. The caller has called setlocale(LC_ALL, "") and
 * checked that stdout is a terminal. ASCII asks for ASCII glyphs (also
 * chosen when the locale is not UTF-8); MOUSE asks the terminal to report
 * the mouse (clicks and the wheel, app_mouse) while the screen is up: off
 * at every way out and while stopped; without it no mouse mode is ever
 * asked for. Returns -1, or 2 when the terminal cannot be used (TERM
 * unknown or unable to address the cursor), after one line on stderr.
 */
int tui_start(bool ascii, bool mouse);

/* A load, told of its progress through TOLD(TOLD_CTX, done, total) and
 * stopped when TOLD returns nonzero (scene_options.told). Returns -1 when
 * it loaded, or the program's exit status. */
typedef int (*tui_load_fn)(void *ctx, int (*told)(void *, double, double), void *told_ctx);

/*
 * Run LOAD(CTX) on a thread while the screen shows the loading frame of
 * FILE (view_loading.h): its phase, how far it has come and since when,
 * redrawn as it goes, after a resize and after a stop and fg. The keys
 * typed meanwhile are the screen's: q stops the load between two
 * positions of the model, the others are dropped, none is left for the
 * shell. Returns LOAD's status (-1: loaded), 0 when q stopped it, 128 + n
 * when signal n did (Ctrl-C, SIGTERM, SIGHUP), 129 when the terminal went
 * away.
 */
int tui_load(tui_load_fn load, void *ctx, const char *file);

/*
 * Run the screen for APP until the user quits or a signal arrives.
 * Returns the process exit status: 0 after q, 130 after Ctrl-C, 128 +
 * signal number after SIGTERM or SIGHUP, and 4 when out of memory (after
 * one line on stderr). Any other signal whose default action ends the
 * process still ends it, after the terminal is restored. A stop and fg
 * (SIGSTOP or Ctrl-Z, then SIGCONT) re-apply the terminal modes and
 * repaint.
 */
int tui_run(struct app *app);

/* Give the terminal back (the keys typed and not read are dropped), then
 * write what stderr was given meanwhile. Returns STATUS. Nothing when the
 * screen is not up. */
int tui_end(int status);

#endif
