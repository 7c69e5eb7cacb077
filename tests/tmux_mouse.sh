# shellcheck shell=bash disable=SC2034 # PREFIX and OPTS are read by tmux_test.sh
# tmux_mouse.sh: the mouse's cases of tests/tmux_test.sh, which sources it
# (its helpers, tm, start_shell, start_tui, start_job, send_bytes,
# wait_screen, check_shell_back, are that file's; restart_tui is
# tests/tmux_screen.sh's).

# Poll until tmux's record of the pane's mouse modes, "standard sgr" (1 on,
# 0 off: what the program asked the terminal for), is $1; $2 says when.
wait_mouse() {
	local want=$1 what=$2 end=$((SECONDS + TIMEOUT)) state
	while :; do
		state=$(tm display-message -p -t "$PANE" '#{mouse_standard_flag} #{mouse_sgr_flag}')
		[ "$state" = "$want" ] && return 0
		if [ "$SECONDS" -ge "$end" ]; then
			fail "$what: mouse_standard_flag mouse_sgr_flag = $state, not $want"
			return 1
		fi
		sleep 0.05
	done
}

# A real click, as an xterm reports it in SGR form (ESC [ < button ; column ;
# row M, then m on release; the wheel is buttons 64 and 65): the pane must
# show the headless frame of --keys' click:ROW:COL. TERM=xterm-256color,
# whose kmous is ESC [ <, so that ncurses asks for SGR reports. The mouse
# mode is on while the screen is and off once it has quit.
case_mouse() {
	PREFIX='TERM=xterm-256color '
	local keys=right,right,right,right,right,right,click:7:8,click:27:18,wheel-up,wheel-down
	start_shell && start_tui "" "$keys" || return 1
	wait_mouse "1 1" "the screen up" || return 1
	local n
	for n in 1 2 3 4 5 6; do
		key_check $n Right || return 1
	done
	# The token on the seventh line, "1 cat": the inspector opens on it.
	send_bytes '\e[<0;8;7M\e[<0;8;7m' && wait_screen "$TMP/exp.7" "a click on a token" ||
		return 1
	grep -q 'INSPECT 1 cat' "$TMP/exp.7" || { fail "the click opened no inspector"; return 1; }
	# A heat cell: the row of step 3, the column of position 1.
	send_bytes '\e[<0;18;27M\e[<0;18;27m' && wait_screen "$TMP/exp.8" "a click on a heat cell" ||
		return 1
	send_bytes '\e[<64;60;30M' && wait_screen "$TMP/exp.9" "the wheel up" || return 1
	send_bytes '\e[<65;60;30M' && wait_screen "$TMP/exp.10" "the wheel down" || return 1
	tm send-keys -t "$PANE" -l q
	check_shell_back 0 && wait_mouse "0 0" "after q"
}

# Ctrl-Z gives the shell a terminal that reports no mouse; fg asks again.
case_mouse_tstp() {
	PREFIX='TERM=xterm-256color '
	start_shell && start_job || return 1
	wait_mouse "1 1" "the screen up" || return 1
	tm send-keys -t "$PANE" C-z
	wait_line '^\[1\]\+ +Stopped' || return 1
	wait_mouse "0 0" "while stopped" || return 1
	type_line fg
	wait_screen "$TMP/exp.0" "after Ctrl-Z and fg" && wait_mouse "1 1" "after fg" || return 1
	send_bytes '\e[<0;8;7M\e[<0;8;7m' && wait_screen "$TMP/exp.0" "a click on a header" ||
		return 1
	tm send-keys -t "$PANE" -l q
	check_job_back 0 && check_terminal_back && wait_mouse "0 0" "after q"
}

# A fatal signal cannot run endwin: the restore it prepared turns the
# mouse off too.
case_mouse_segv() {
	PREFIX='TERM=xterm-256color '
	start_shell && start_tui && tui_pid || return 1
	wait_mouse "1 1" "the screen up" || return 1
	kill -SEGV "$PID"
	check_shell_back 139 && wait_mouse "0 0" "after SIGSEGV"
}

# --no-mouse: the terminal is never asked for the mouse, and a mouse report
# (SGR and X10) is no key, as without a mouse.
case_no_mouse() {
	PREFIX='TERM=xterm-256color '
	OPTS='--no-mouse'
	start_shell && start_tui "" right,right,right,right,right,right,right || return 1
	local n
	for n in 1 2 3 4 5 6; do
		key_check $n Right || return 1
	done
	wait_mouse "0 0" "with --no-mouse" || return 1
	send_bytes '\e[<0;8;7M\e[<0;8;7m' && key_check 7 Right || return 1
	tm send-keys -t "$PANE" -l q
	check_shell_back 0
}

# Clicks beyond the main panels, each the frame of --keys' click:ROW:COL: a
# cell of the cache map (M) selects its position, a word of the model
# panel's text (t) its token, a head of the heads overview (o) moves the
# cursor there and a column of a head's row by position selects that
# position too (a ▼ over the column, the token on the cursor's line).
case_mouse_panels() {
	PREFIX='TERM=xterm-256color '
	start_shell && start_tui "" right,right,right,right,right,M,click:27:13,click:29:15 || return 1
	wait_mouse "1 1" "the screen up" || return 1
	local n
	for n in 1 2 3 4 5; do
		key_check $n Right || return 1
	done
	key_check 6 -l M || return 1
	send_bytes '\e[<0;13;27M\e[<0;13;27m' && wait_screen "$TMP/exp.7" "a click on the map" ||
		return 1
	grep -q '» 1 cat' "$TMP/exp.7" || { fail "the map's click selected no cat"; return 1; }
	send_bytes '\e[<0;15;29M\e[<0;15;29m' && wait_screen "$TMP/exp.8" "a click on full's row" ||
		return 1
	# (The last step typed: this terminal's End is not the one tmux sends.)
	restart_tui scenes/heads_8.json 4,0,0,enter,o,click:6:22,click:15:40 || return 1
	key_check 1 -l 4 && key_check 2 -l 0 && key_check 3 -l 0 && key_check 4 Enter &&
		key_check 5 -l o || return 1
	send_bytes '\e[<0;22;6M\e[<0;22;6m' && wait_screen "$TMP/exp.6" "a click on a head" ||
		return 1
	grep -q '» head 3/8 topic' "$TMP/exp.6" || { fail "the click moved no cursor"; return 1; }
	send_bytes '\e[<0;40;15M\e[<0;40;15m' && wait_screen "$TMP/exp.7" "a click by position" ||
		return 1
	grep -q '; token [0-9]*: ' "$TMP/exp.7" || { fail "the click selected no token"; return 1; }
	restart_tui models/stories260K/story_model.json 3,9,1,enter,t,click:22:10 || return 1
	key_check 1 -l 3 && key_check 2 -l 9 && key_check 3 -l 1 && key_check 4 Enter &&
		key_check 5 -l t || return 1
	send_bytes '\e[<0;10;22M\e[<0;10;22m' && wait_screen "$TMP/exp.6" "a click on the text" ||
		return 1
	grep -q '» 224  the ' "$TMP/exp.6" || { fail "the click selected no 'the'"; return 1; }
	tm send-keys -t "$PANE" -l q
	check_shell_back 0
}
