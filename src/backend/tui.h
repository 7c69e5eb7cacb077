/*
 * tui: the interactive backend, the only code that talks to a terminal.
 *
 * It runs the Elm-style loop around an app: draw the app into a frame with
 * view_draw, flush the frame to the terminal through ncursesw, wait for a
 * key (or a tick while playing) and hand it to app_key. It owns the
 * terminal for the length of tui_run and gives it back in every way out:
 * q/Esc, Ctrl-C, SIGTERM, SIGHUP, exit(), and every other signal whose
 * default action ends the process (a crash, an abort, Ctrl-\, SIGPIPE,
 * SIGUSR1, SIGALRM, the real-time signals...), after which the process
 * still dies of the signal, and after a stop and fg it takes the terminal
 * back. It must never draw anything the frame does not hold, so the
 * headless text stays the screen; its files (tui.c, tui_draw.c,
 * tui_signals.c) are the only ones in the project that include
 * <curses.h>.
 */
#ifndef H2O_TUI_H
#define H2O_TUI_H

#include <stdbool.h>

struct app;

/*
 * Run the interactive screen for APP until the user quits or a signal
 * arrives. The caller has called setlocale(LC_ALL, "") and checked that
 * stdout is a terminal. ASCII asks for ASCII glyphs (also chosen when the
 * locale is not UTF-8). Returns the process exit status: 0 after q/Esc,
 * 130 after Ctrl-C, 128 + signal number after SIGTERM or SIGHUP, 2 when the
 * terminal cannot be used (TERM unknown or unable to address the cursor)
 * and 4 when out of memory (after one line on stderr); the terminal is
 * restored in every case. Any other signal whose default action ends the
 * process still ends it, after the terminal is restored. A stop and fg
 * (SIGSTOP or Ctrl-Z, then SIGCONT) re-apply the terminal modes and
 * repaint. MOUSE asks the terminal to report the mouse (clicks and the
 * wheel, app_mouse), for the length of the run only: off at every way
 * out and while stopped; without it no mouse mode is ever asked for.
 */
int tui_run(struct app *app, bool ascii, bool mouse);

#endif
