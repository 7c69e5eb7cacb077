/*
 * tui_impl: what the ncurses backend's files share about signals and
 * stderr (private to src/backend/): tui.c reads keys and runs the loop
 * (tui_draw.c draws the frames, tui_load.c the loading frame while the
 * scene loads); tui_signals.c owns the signal handlers and the restore
 * that gives the terminal back on every way out of the process, including
 * those where curses cannot run; tui_hold.c holds stderr while the screen
 * is up.
 */
#ifndef H2O_TUI_IMPL_H
#define H2O_TUI_IMPL_H

#include <signal.h>
#include <stdbool.h>
#include <termios.h>

/* The signal that asked us to leave (SIGINT, SIGTERM, SIGHUP), or 0; set
 * by the handler only. */
extern volatile sig_atomic_t tui_signal;
/* Set by the SIGCONT handler: the terminal needs the program's modes and a
 * full repaint again. */
extern volatile sig_atomic_t tui_continued;
/* True between newterm and endwin, for the atexit restore; whether that
 * restore is registered. */
extern bool tui_active;
extern bool tui_atexit_registered;
/* Set while the fatal restore (tui_fatal_arm) may run. */
extern volatile sig_atomic_t tui_fatal_armed;

/* Room for the fixed list of fatal signals and the real-time ones (32 on
 * Linux). */
#define TUI_FATAL_MAX 96

/* The signal dispositions tui_run changed, to put back when it returns. */
struct tui_signals {
	struct sigaction graceful[3]; /* SIGINT, SIGTERM, SIGHUP */
	struct sigaction cont;
	int fatal_count;
	int fatal_signo[TUI_FATAL_MAX];
	struct sigaction fatal[TUI_FATAL_MAX];
};

/* Prepare and arm the restore a fatal signal runs; SHELL_MODES are the
 * terminal modes from before curses changed them (the terminfo strings are
 * read now: call once the terminal is set up); MOUSE: the terminal
 * reports the mouse, which the restore turns off too. */
void tui_fatal_arm(const struct termios *shell_modes, bool mouse);
/* For atexit: endwin if the screen is still up. */
void tui_restore_at_exit(void);
/* The handlers of tui_run, and putting back what they replaced. */
void tui_signals_install(struct tui_signals *old);
void tui_signals_restore(const struct tui_signals *old);

/* stderr held while the screen is up (tui_hold.c): from tui_hold_start
 * on, what is written there goes to a pipe that tui_hold_drain empties
 * into memory (call it often: a full pipe drops what is written);
 * tui_hold_release, once the terminal is back, puts stderr back and
 * writes there what was held. */
void tui_hold_start(void);
void tui_hold_drain(void);
void tui_hold_release(void);

#endif
