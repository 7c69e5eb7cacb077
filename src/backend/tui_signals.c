/*
 * tui_signals: every way out of the process gives the terminal back.
 *
 * SIGINT, SIGTERM and SIGHUP set a flag the loop reads, so it closes curses
 * as q does; SIGCONT sets one for a repaint. Every other signal whose
 * default action ends the process gets a handler that cannot run curses
 * (nothing in curses is async-signal-safe): it writes bytes prepared while
 * the screen was set up, puts the shell's terminal modes back, and dies of
 * the same signal. Part of the ncurses backend (tui_impl.h).
 */
#include "tui_impl.h"

#include <stddef.h>
#include <string.h>
#include <unistd.h>

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>
#include <term.h>

volatile sig_atomic_t tui_signal;

/* Set by the SIGCONT handler: the terminal needs the program's modes and a
 * full repaint again. */
volatile sig_atomic_t tui_continued;

/* True between newterm and endwin, for the atexit restore. */
bool tui_active;
bool tui_atexit_registered;

/*
 * A fatal signal (a crash, an abort, SIGQUIT) cannot run endwin: nothing in
 * curses is async-signal-safe. So the restore is prepared while the screen
 * is set up, as bytes and a termios that the handler hands to write(2) and
 * tcsetattr(3), both async-signal-safe: the terminal modes the shell had,
 * and the terminfo strings endwin would send (attributes off, cursor
 * visible, keypad off, alternate screen left). The handler reads these only
 * while tui_fatal_armed is set.
 */
volatile sig_atomic_t tui_fatal_armed;
static struct termios tui_fatal_termios;
static char tui_fatal_reset[256];
static size_t tui_fatal_reset_len;

static void tui_on_signal(int signo)
{
	tui_signal = signo;
}

/* SIGCONT: the process was stopped and goes on. The loop re-applies the
 * terminal modes and repaints (tui_resume); nothing in curses may run here. */
static void tui_on_cont(int signo)
{
	(void)signo;
	tui_continued = 1;
}

/*
 * Every signal whose default action ends the process (signal(7): the Term
 * and Core actions), apart from SIGKILL, which cannot be caught, and
 * SIGINT, SIGTERM and SIGHUP, which end the loop and close curses as q
 * does. Each gets the restoring handler: restore, then die of the same
 * signal, so the shell reports it (128 + signo) and a core is still dumped
 * where the user allows one. The real-time signals (SIGRTMIN to SIGRTMAX)
 * terminate too and are added when installing.
 *
 * SIGPIPE is one of them, not ignored: stdout is a terminal, where a write
 * never raises SIGPIPE (a terminal that hangs up gives SIGHUP or EIO, and
 * the loop treats both as the user leaving), so a SIGPIPE is only ever sent
 * on purpose and ends the process as its default action would, with the
 * terminal given back first.
 */
static const int tui_fatal_fixed[] = {
        SIGSEGV,   SIGBUS,  SIGFPE,  SIGILL,  SIGABRT, SIGQUIT, SIGSYS,  SIGTRAP,
        SIGXCPU,   SIGXFSZ, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGPROF, SIGVTALRM,
#ifdef SIGPOLL
        SIGPOLL,
#endif
#ifdef SIGPWR
        SIGPWR,
#endif
#ifdef SIGSTKFLT
        SIGSTKFLT,
#endif
#ifdef SIGEMT
        SIGEMT,
#endif
#ifdef SIGLOST
        SIGLOST,
#endif
};
#define TUI_FATAL_FIXED (sizeof tui_fatal_fixed / sizeof tui_fatal_fixed[0])
_Static_assert(TUI_FATAL_FIXED + 64 <= TUI_FATAL_MAX, "room for the real-time signals");

static const int tui_graceful_signos[3] = {SIGINT, SIGTERM, SIGHUP};

static void tui_on_fatal(int signo)
{
	if (tui_fatal_armed) {
		ssize_t wrote;

		tui_fatal_armed = 0;
		wrote = write(STDOUT_FILENO, tui_fatal_reset, tui_fatal_reset_len);
		(void)wrote; /* best effort: a dying process cannot retry */
		tcsetattr(STDOUT_FILENO, TCSANOW, &tui_fatal_termios);
	}
	/* SA_RESETHAND put the default action back on entry and SA_NODEFER
	 * left the signal unblocked, so this kills the process now. A real
	 * fault would also recur on return; a signal sent with kill would
	 * not. */
	raise(signo);
}

/* Append terminfo capability CAP to the fatal reset, without its padding
 * specifications ("$<5>", which tputs would turn into a delay): the bytes
 * go out with write(2), not tputs. */
static void tui_fatal_add(const char *cap)
{
	const char *s = tigetstr(cap);

	if (!s || s == (char *)-1)
		return;
	while (*s) {
		if (s[0] == '$' && s[1] == '<' && strchr(s, '>')) {
			s = strchr(s, '>') + 1;
			continue;
		}
		if (tui_fatal_reset_len + 1 >= sizeof tui_fatal_reset)
			return;
		tui_fatal_reset[tui_fatal_reset_len++] = *s++;
	}
}

/* Prepare and arm the fatal restore; SHELL_MODES are the terminal modes
 * from before curses changed them. Called once the terminal is set up. */
void tui_fatal_arm(const struct termios *shell_modes, bool mouse)
{
	tui_fatal_reset_len = 0;
	/* The mouse first, as endwin does: xterm's reports, SGR's and
	 * X10's, both off (ncurses asks for 1000, with 1006 where the
	 * terminal's kmous is SGR's). */
	if (mouse) {
		static const char off[] = "\033[?1006;1000l";
		memcpy(tui_fatal_reset, off, sizeof off - 1);
		tui_fatal_reset_len = sizeof off - 1;
	}
	/* The order endwin uses: attributes off, cursor shown, keypad off,
	 * then back from the alternate screen to the shell's. */
	tui_fatal_add("sgr0");
	tui_fatal_add("cnorm");
	tui_fatal_add("rmkx");
	tui_fatal_add("rmcup");
	tui_fatal_termios = *shell_modes;
	tui_fatal_armed = 1;
}

/* Any exit() while the screen is up (a library calling exit, an assert in
 * a debug build) still gives the terminal back, then what stderr held. */
void tui_restore_at_exit(void)
{
	if (tui_active && !isendwin())
		endwin();
	tui_active = false;
	tui_hold_release();
}

/* Give SIGNO the restoring handler SA, and note what it had. A signal the
 * user's environment ignores (nohup, trap '') does not end the process,
 * so it stays ignored, except a fault or abort(), which kill even then;
 * one already noted (two names for one number) is skipped. */
static void tui_fatal_install(struct tui_signals *old, int signo, const struct sigaction *sa)
{
	const bool kills_anyway = signo == SIGSEGV || signo == SIGBUS || signo == SIGFPE ||
	                          signo == SIGILL || signo == SIGABRT;
	struct sigaction *slot;

	if (old->fatal_count >= (int)TUI_FATAL_MAX)
		return;
	for (int i = 0; i < old->fatal_count; i++)
		if (old->fatal_signo[i] == signo)
			return;
	slot = &old->fatal[old->fatal_count];
	if (sigaction(signo, NULL, slot) != 0 || (slot->sa_handler == SIG_IGN && !kills_anyway))
		return;
	if (sigaction(signo, sa, NULL) != 0)
		return;
	old->fatal_signo[old->fatal_count++] = signo;
}

/* No SA_RESTART: a blocked read returns so the loop sees the flag soon.
 * SIGTSTP and SIGWINCH are left to ncurses, which suspends, repaints and
 * reports KEY_RESIZE by itself; SIGCONT only sets a flag, for a stop that
 * ncurses did not see (SIGSTOP, or a job stopped from outside). The fatal
 * signals get the restoring handler, once (SA_RESETHAND) and unblocked in
 * it (SA_NODEFER) so that re-raising kills. */
void tui_signals_install(struct tui_signals *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = tui_on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	for (int i = 0; i < 3; i++)
		sigaction(tui_graceful_signos[i], &sa, &old->graceful[i]);
	sa.sa_handler = tui_on_cont;
	sigaction(SIGCONT, &sa, &old->cont);
	sa.sa_handler = tui_on_fatal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	old->fatal_count = 0;
	for (size_t i = 0; i < TUI_FATAL_FIXED; i++)
		tui_fatal_install(old, tui_fatal_fixed[i], &sa);
#if defined(SIGRTMIN) && defined(SIGRTMAX)
	for (int signo = SIGRTMIN; signo <= SIGRTMAX; signo++)
		tui_fatal_install(old, signo, &sa);
#endif
}

void tui_signals_restore(const struct tui_signals *old)
{
	for (int i = 0; i < 3; i++)
		sigaction(tui_graceful_signos[i], &old->graceful[i], NULL);
	sigaction(SIGCONT, &old->cont, NULL);
	for (int i = 0; i < old->fatal_count; i++)
		sigaction(old->fatal_signo[i], &old->fatal[i], NULL);
}
