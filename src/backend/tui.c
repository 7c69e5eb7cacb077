/*
 * tui: the ncurses backend.
 *
 * This module is for putting a frame on a real terminal and turning the
 * terminal's keys into key codes; everything the user sees is decided by
 * view_draw and everything that changes is decided by app_key and app_tick.
 * It must never draw a glyph, escape sequence or message that is not a
 * cell of the frame (so the headless text is the screen, colours aside),
 * never send a control character to the terminal whatever the frame holds,
 * never leave the terminal in curses mode (or reporting the mouse) on any
 * way out of the process, never ask for the mouse under --no-mouse, and
 * never take an input sequence it does not know (an Alt-key, a paste,
 * a mouse or terminal report) for Esc or for the keys its bytes spell. With
 * tui_draw.c (the frame drawn) and tui_signals.c it is the only code that
 * includes <curses.h>.
 */
#include "tui.h"

#include "tui_impl.h"

#include "h2o/keys.h"
#include "h2o/app.h"
#include "h2o/frame.h"
#include "h2o/text.h"
#include "h2o/view.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "tui_draw.h"

/* Longest wait for a key before the loop looks at the signal flags again.
 * A signal (SIGCONT too) usually ends the wait at once, but ncurses may
 * restart its read, and a signal may go to the timeline's thread, so the
 * flags are polled as well. */
#define TUI_POLL_MS 250

/* How long curses waits after an ESC for the rest of a sequence, and how
 * long a sequence being swallowed may pause between two of its bytes: long
 * enough for a sequence split over two writes, short enough that a lone Esc
 * quits without a noticeable delay. */
#define TUI_ESC_MS 25

/* The key code for what wget_wch returned, or KEYC_NONE to ignore it. */
static uint32_t tui_key_code(int rc, wint_t wch)
{
	if (rc == KEY_CODE_YES) {
		switch (wch) {
		case KEY_RIGHT:
			return KEYC_RIGHT;
		case KEY_LEFT:
			return KEYC_LEFT;
		case KEY_UP:
			return KEYC_UP;
		case KEY_DOWN:
			return KEYC_DOWN;
		case KEY_HOME:
			return KEYC_HOME;
		case KEY_END:
			return KEYC_END;
		case KEY_PPAGE:
			return KEYC_PGUP;
		case KEY_NPAGE:
			return KEYC_PGDN;
		case KEY_BACKSPACE:
			return KEYC_BACKSPACE;
		case KEY_ENTER:
			return KEYC_ENTER;
		case KEY_BTAB:
			return KEYC_BTAB;
		case KEY_RESIZE:
			return KEYC_RESIZE;
		default:
			return KEYC_NONE;
		}
	}
	switch (wch) {
	case 27:
		return KEYC_ESC;
	case '\t':
		return KEYC_TAB;
	case '\n':
	case '\r':
		return KEYC_ENTER;
	case 8:
	case 127:
		return KEYC_BACKSPACE;
	default:
		break;
	}
	/* Other control characters are no keys; printable characters are
	 * their code point. */
	if (wch < 0x20 || (wch >= 0x7f && wch < 0xa0) || wch > 0x10ffff)
		return KEYC_NONE;
	return (uint32_t)wch;
}

static long long tui_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void tui_close(struct tui *t)
{
	tui_fatal_armed = 0;
	/* The keys typed and not read were the screen's: none is left for
	 * the shell, neither those curses holds nor those the terminal does. */
	if (tui_active && !isendwin()) {
		flushinp();
		endwin();
	}
	if (tui_active && t->in)
		tcflush(fileno(t->in), TCIFLUSH);
	tui_active = false;
	if (t->screen)
		delscreen(t->screen);
	t->screen = NULL;
	if (t->in && t->in != stdin)
		fclose(t->in);
	t->in = NULL;
	frame_free(t->frame);
	t->frame = NULL;
}

/* Set up curses on the controlling terminal. Returns false (and says why
 * on stderr, before any curses output) when the terminal cannot be used. */
static bool tui_open(struct tui *t)
{
	const char *term = getenv("TERM");
	struct termios shell_modes;
	bool have_modes;
	char *cup;

	/* Keys come from the terminal even when stdin is redirected: reading
	 * a file or a pipe would give EOF at once and spin the loop. */
	t->in = stdin;
	if (!isatty(fileno(stdin))) {
		t->in = fopen("/dev/tty", "r");
		if (!t->in) {
			fprintf(stderr, "h2o-tui: no terminal to read keys from; try --headless\n");
			return false;
		}
	}
	/* The modes to restore after a crash, before curses changes them. */
	have_modes = tcgetattr(STDOUT_FILENO, &shell_modes) == 0;
	t->screen = newterm(NULL, stdout, t->in);
	if (!t->screen) {
		fprintf(stderr, "h2o-tui: cannot use terminal type '%s'; try --headless\n",
		        term ? term : "");
		if (t->in != stdin)
			fclose(t->in);
		t->in = NULL;
		return false;
	}
	set_term(t->screen);
	tui_active = true;
	/* A terminal that cannot move its cursor (dumb, hardcopy) would get
	 * the frame as a scrolling mess: refuse it before drawing anything. */
	cup = tigetstr("cup");
	if (!cup || cup == (char *)-1) {
		tui_close(t);
		fprintf(stderr,
		        "h2o-tui: terminal type '%s' cannot move the cursor; try --headless\n",
		        term ? term : "");
		return false;
	}
	if (!tui_atexit_registered && atexit(tui_restore_at_exit) == 0)
		tui_atexit_registered = true;
	/* cbreak, not raw: ISIG stays on, so Ctrl-C raises SIGINT and the
	 * handler's flag ends the loop like any other signal. */
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	leaveok(stdscr, TRUE);
	scrollok(stdscr, FALSE);
	/* Esc closes things; waiting the default second for a sequence feels broken. */
	set_escdelay(TUI_ESC_MS);
	curs_set(0);
	/* The first button and the wheel, each reported as it happens: no
	 * wait to tell a click from a press. endwin turns the reports off,
	 * on every way out and on Ctrl-Z, and the next refresh back on. */
	if (t->mouse) {
		mouseinterval(0);
		mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	}
	tui_colors_init(t);
	if (have_modes)
		tui_fatal_arm(&shell_modes, t->mouse);
	return true;
}

/*
 * After a stop (SIGSTOP, which cannot be caught, or Ctrl-Z, which ncurses
 * handles itself), then fg, the shell has had the terminal: its modes are
 * the shell's (canonical and echoing, so keys would wait for Enter), its
 * screen holds the shell's lines and its cursor may show. Leave curses
 * properly and let the next doupdate come back the way ncurses resumes
 * after endwin: the program's modes, the keypad, the alternate screen,
 * the cursor as the program set it and every cell repainted. Sending those
 * terminfo strings behind ncurses's back once left its record of them
 * wrong, so that quitting after Ctrl-Z and fg kept the alternate screen
 * and the hidden cursor.
 */
void tui_resume(void)
{
	if (!isendwin())
		endwin();
	clearok(curscr, TRUE);
}

/* The next input within an escape sequence, waiting at most WAIT_MS; SPECIAL
 * says it is a key code (KEY_*). False when nothing came. A resize is put
 * back for the loop, and also ends the sequence. */
static bool tui_seq_next(int wait_ms, wint_t *wch, bool *special)
{
	int rc;

	wtimeout(stdscr, wait_ms);
	rc = wget_wch(stdscr, wch);
	if (rc == ERR)
		return false;
	if (rc == KEY_CODE_YES && *wch == KEY_RESIZE) {
		ungetch(KEY_RESIZE);
		return false;
	}
	*special = rc == KEY_CODE_YES;
	return true;
}

/* Where tui_skip_sequence is in a sequence. */
enum tui_seq {
	SEQ_ESC,        /* after ESC */
	SEQ_CSI,        /* after ESC [ or ESC O: parameters, then a final byte */
	SEQ_X10,        /* after ESC [ M: the three bytes of an X10 mouse report */
	SEQ_STRING,     /* after ESC ] P _ ^ or X: up to BEL or ESC \ */
	SEQ_STRING_ESC, /* ESC in a string: ESC \ ends it */
	SEQ_PASTE,      /* after ESC [ 200 ~: pasted text up to ESC [ 201 ~ */
	SEQ_PASTE_ESC,
	SEQ_PASTE_CSI,
};

/*
 * Swallow the rest of an input sequence that curses did not decode, from
 * STATE on; FIRST, when not NULL, is its next input already read. The forms
 * are ECMA-48's: a CSI or SS3 sequence (ESC [ or ESC O, parameter bytes 0x30
 * to 0x3F, intermediate bytes 0x20 to 0x2F, one final byte 0x40 to 0x7E:
 * mouse reports, cursor position reports, keys with modifiers), a string
 * (OSC, DCS, APC, PM, SOS: up to BEL or ST), or ESC and one key (Alt-x, Alt
 * and a special key); and an X10 mouse report, ESC [ M and three bytes. A
 * bracketed paste is swallowed whole, text and all: pasted text is not
 * keys. A sequence ends early when its bytes stop coming for TUI_ESC_MS or
 * a byte breaks its form (that byte goes with it); an ESC in the middle
 * starts the next sequence.
 */
static void tui_skip_sequence(enum tui_seq state, const wint_t *first)
{
	char param[8];
	size_t np = 0;
	int x10_left = 3;
	bool csi = state == SEQ_CSI; /* ESC [, not ESC O */
	bool special = false;
	wint_t c = first ? *first : 0;

	for (bool have = first != NULL;; have = false) {
		if (!have && !tui_seq_next(TUI_ESC_MS, &c, &special))
			return;
		if (special) {
			/* Alt and a special key, or a key code amid a
			 * sequence; pasted text may hold keys too. */
			if (state < SEQ_PASTE)
				return;
			state = SEQ_PASTE;
			continue;
		}
		switch (state) {
		case SEQ_STRING_ESC:
			if (c == '\\')
				return;
			/* Any other ESC cancels the string and starts a
			 * sequence, of which C is the first byte. */
			/* fall through */
		case SEQ_ESC:
			if (c == '[' || c == 'O') {
				state = SEQ_CSI;
				csi = c == '[';
				np = 0;
			} else if (c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X') {
				state = SEQ_STRING;
			} else if (c == 27) {
				state = SEQ_ESC; /* ESC ESC: Alt and what follows */
			} else {
				return; /* Alt and a key */
			}
			continue;
		case SEQ_CSI:
		case SEQ_PASTE_CSI:
			if (c >= 0x20 && c <= 0x3f) {
				/* Only short parameters matter (200, 201). */
				if (np < sizeof param - 1)
					param[np++] = (char)c;
				else
					param[0] = '?';
				continue;
			}
			param[np] = '\0';
			if (state == SEQ_PASTE_CSI) {
				if (c == '~' && strcmp(param, "201") == 0)
					return; /* the end of the paste */
				state = c == 27 ? SEQ_PASTE_ESC : SEQ_PASTE;
			} else if (c == '~' && strcmp(param, "200") == 0) {
				state = SEQ_PASTE;
			} else if (c == 'M' && np == 0 && csi) {
				/* ESC [ M: a terminal sends no delete-line,
				 * but X10 mouse reports start so. */
				state = SEQ_X10;
			} else if (c == 27) {
				state = SEQ_ESC;
			} else {
				return; /* the final byte, or one out of place */
			}
			continue;
		case SEQ_X10:
			if (--x10_left == 0)
				return;
			continue;
		case SEQ_STRING:
			if (c == 7)
				return;
			if (c == 27)
				state = SEQ_STRING_ESC;
			continue;
		case SEQ_PASTE:
			if (c == 27)
				state = SEQ_PASTE_ESC;
			continue;
		case SEQ_PASTE_ESC:
			if (c == '[') {
				state = SEQ_PASTE_CSI;
				np = 0;
			} else if (c != 27) {
				state = SEQ_PASTE;
			}
			continue;
		}
	}
}

/* KEY_MOUSE: curses knew the start of a mouse report (terminfo's kmous)
 * but, the mouse being off, leaves the rest of it unread: the parameters
 * and final byte of an SGR report when kmous is ESC [ <, else the three
 * bytes of an X10 one. */
static void tui_skip_mouse(void)
{
	const char *kmous = tigetstr("kmous");
	size_t len = kmous && kmous != (char *)-1 ? strlen(kmous) : 0;

	tui_skip_sequence(len && kmous[len - 1] == '<' ? SEQ_CSI : SEQ_X10, NULL);
}

/* A mouse report curses decoded, into *M (the place 0-based). False for
 * one of no event the app takes (a release, a button it did not ask for). */
static bool tui_mouse_event(struct key_mouse *m)
{
	MEVENT ev;

	if (getmouse(&ev) != OK)
		return false;
	m->row = ev.y;
	m->col = ev.x;
	if (ev.bstate & BUTTON1_PRESSED)
		m->what = APP_MOUSE_CLICK;
	else if (ev.bstate & BUTTON4_PRESSED)
		m->what = APP_MOUSE_WHEEL_UP;
	else if (ev.bstate & BUTTON5_PRESSED)
		m->what = APP_MOUSE_WHEEL_DOWN;
	else
		return false;
	return true;
}

/*
 * Wait up to TIMEOUT_MS for a key. A terminal that hung up without a
 * SIGHUP (the process outside its session) makes every read fail at once:
 * many failures in a row that did not wait are taken as the terminal gone,
 * rather than spinning the processor for ever.
 */
enum tui_wait tui_wait_key(struct tui *t, int timeout_ms, uint32_t *key, struct key_mouse *mouse)
{
	long long start = tui_now_ms();
	wint_t wch = 0;
	int rc;

	wtimeout(stdscr, timeout_ms);
	rc = wget_wch(stdscr, &wch);
	if (rc == ERR) {
		if (timeout_ms > 0 && tui_now_ms() - start < timeout_ms / 2) {
			if (++t->quick_errors >= 100)
				return TUI_GONE;
		} else {
			t->quick_errors = 0;
		}
		return TUI_TIMEOUT;
	}
	t->quick_errors = 0;
	/* An ESC with more input right behind it is a sequence curses did not
	 * know (curses waited TUI_ESC_MS for it already): no key at all. Only
	 * an ESC that came alone is the Esc key. */
	if (rc == OK && wch == 27) {
		wint_t next;
		bool special;

		if (tui_seq_next(0, &next, &special)) {
			if (!special)
				tui_skip_sequence(SEQ_ESC, &next);
			return TUI_TIMEOUT;
		}
	}
	if (rc == KEY_CODE_YES && wch == KEY_MOUSE) {
		if (t->mouse)
			return tui_mouse_event(mouse) ? TUI_MOUSE : TUI_TIMEOUT;
		tui_skip_mouse();
		return TUI_TIMEOUT;
	}
	/* Ctrl-C as a byte means someone turned ISIG off: it still quits. */
	if (rc == OK && wch == 3) {
		tui_signal = SIGINT;
		return TUI_TIMEOUT;
	}
	*key = tui_key_code(rc, wch);
	return *key == KEYC_NONE ? TUI_TIMEOUT : TUI_KEY;
}

struct tui tui_screen;

/* The signal dispositions tui_start changed, for tui_end. */
static struct tui_signals tui_old;
static bool tui_up;

int tui_start(bool ascii, bool mouse)
{
	struct tui *t = &tui_screen;

	memset(t, 0, sizeof *t);
	t->utf8 = text_locale_is_utf8();
	t->ascii = ascii || !t->utf8;
	t->mouse = mouse;
	/* Our handlers go in before newterm, so ncurses keeps its hands off
	 * SIGINT and SIGTERM (it only installs its own on default ones). */
	tui_signal = 0;
	tui_continued = 0;
	tui_signals_install(&tui_old);
	if (!tui_open(t)) {
		tui_signals_restore(&tui_old);
		return 2;
	}
	tui_up = true;
	/* From here until the terminal is back, stderr would scribble on the
	 * screen: what is written there is held (tui_hold.c). */
	tui_hold_start();
	return -1;
}

int tui_end(int status)
{
	if (!tui_up)
		return status;
	tui_up = false;
	tui_close(&tui_screen);
	tui_signals_restore(&tui_old);
	/* Only now, with the terminal given back, may anything else be said. */
	tui_hold_release();
	return status;
}

int tui_run(struct app *app)
{
	struct tui *t = &tui_screen;
	bool dirty = true;
	long long next_tick = 0;
	bool was_playing = false;
	int status = 0;

	for (;;) {
		int timeout_ms = TUI_POLL_MS;
		uint32_t key = KEYC_NONE;
		struct key_mouse m;
		unsigned flags;
		enum tui_wait w;

		tui_hold_drain();
		if (tui_signal)
			break;
		if (tui_continued) {
			tui_continued = 0;
			tui_resume();
			dirty = true;
		}
		if (dirty) {
			if (tui_draw(t, app) < 0) {
				/* Said once the terminal is back (tui_end). */
				fputs("h2o-tui: out of memory while drawing the screen\n", stderr);
				status = 4;
				break;
			}
			dirty = false;
		}
		/* Ticks keep their own clock, so keys pressed while playing
		 * do not push the next step back. */
		if (app_ticking(app)) {
			long long now = tui_now_ms();

			if (!was_playing)
				next_tick = now + app_tick_ms(app);
			was_playing = true;
			if (next_tick <= now) {
				flags = app_tick(app);
				next_tick += app_tick_ms(app);
				if (next_tick < now)
					next_tick = now + app_tick_ms(app);
				if (flags & APP_QUIT)
					break;
				if (flags & APP_REDRAW)
					dirty = true;
				continue;
			}
			if (next_tick - now < timeout_ms)
				timeout_ms = (int)(next_tick - now);
		} else {
			was_playing = false;
		}

		w = tui_wait_key(t, timeout_ms, &key, &m);
		if (w == TUI_GONE) {
			status = 128 + SIGHUP; /* as if it had hung up */
			break;
		}
		if (w == TUI_TIMEOUT)
			continue; /* the loop head sees a signal */
		if (w == TUI_MOUSE && t->frame) {
			/* What the frame on the screen shows there. */
			const struct app_spot at = view_pick(app, t->frame, m.row, m.col);
			flags = app_mouse(app, m.what, &at);
			if (flags & APP_QUIT)
				break;
			if (flags & APP_REDRAW)
				dirty = true;
			continue;
		}
		if (w == TUI_MOUSE)
			continue;
		/* A resize always redraws: the frame follows the screen's new
		 * size whatever the app makes of the key. */
		if (key == KEYC_RESIZE)
			dirty = true;
		flags = app_key(app, key);
		if (flags & APP_QUIT)
			break;
		if (flags & APP_REDRAW)
			dirty = true;
	}

	/* 128 + the signal, as a shell reports a process the signal killed. */
	if (tui_signal)
		status = 128 + tui_signal;
	return status;
}
