# shellcheck shell=bash
# tmux_model.sh: cases of tests/tmux_test.sh about model scenes in the
# terminal (the loading frame and every way out of it, a bad model, an
# unknown terminal type, the real drop behind the screen, a lesson held to
# --max-memory), which that file sources (its helpers, tm, start_shell,
# start_tui, headless, key_check, wait_screen, wait_line, check_shell_back,
# start_job, check_job_back, check_terminal_back, are its).

# A model scene whose model takes a while, made here: a llama2.c checkpoint
# of 110 MB of zeros (dim 512, hidden 1536, 8 layers of 8 heads, vocab 512,
# seq_len 1024: a sparse file, every weight finite), stories260K's
# tokenizer, and TEXT, the scene's text, in $TMP/m/slow.json.
slow_model() {
	mkdir -p "$TMP/m" && cp "$SRC/models/stories260K/tok512.bin" "$TMP/m/" || return 1
	local v
	for v in 512 1536 8 8 8 512 1024; do
		printf "\\$(printf '%03o' $((v % 256)))\\$(printf '%03o' $((v / 256)))\\000\\000"
	done >"$TMP/m/slow.bin"
	truncate -s $((28 + 4 * (512 * 512 + 8 * (2 * 512 + 4 * 512 * 512 + 3 * 1536 * 512) + 512 +
		1024 * 64))) "$TMP/m/slow.bin"
	printf '{"heavy": 8, "recent": 8, "model": "slow.bin", "tokenizer": "tok512.bin", "text": "%s"}\n' \
		"$1" >"$TMP/m/slow.json"
}

# The loading frame of a model scene (view_loading.c) on the pane, in one
# capture: the file, the phase, the bar with its percent, the time and the
# key; and no line matching $1 (by default the shell's prompt).
wait_loading() {
	local end=$((SECONDS + TIMEOUT))
	while :; do
		capture >"$TMP/pane"
		if grep -Eq '^ +loading .*slow\.json$' "$TMP/pane" &&
			grep -Eq '^ +running the model over the text$' "$TMP/pane" &&
			grep -Eq '^ +\[.+\] +[0-9]+%$' "$TMP/pane" &&
			grep -Eq '^ +[0-9]+ (s|min [0-9]+ s) elapsed' "$TMP/pane" &&
			grep -Eq '^ +q quits$' "$TMP/pane" &&
			! grep -Eq "${1:-^\\\$}" "$TMP/pane"; then
			return 0
		fi
		if [ "$SECONDS" -ge "$end" ]; then
			fail "no loading frame of slow.json after ${TIMEOUT}s"
			sed 's/^/# | /' "$TMP/pane"
			return 1
		fi
		sleep 0.05
	done
}

# A model scene runs its model as it loads: the screen is up at once with
# the loading frame (the file, the phase, a bar, the time; it was a blank
# terminal for 14 s with a 235 MB model), q stops the load at once, and
# the keys typed meanwhile are neither echoed nor left for the shell after
# the exit (they were, as a line the shell then ran).
case_model_load() {
	start_shell || return 1
	slow_model "$(printf 'Once upon a time there was a cat. %.0s' $(seq 80))" || return 1
	type_line 'sh "$H2O_TMP/run" --ascii "$H2O_TMP/m/slow.json"; echo "exit=$?"'
	wait_loading || return 1
	tm send-keys -t "$PANE" -l 'xyz'
	tm send-keys -t "$PANE" Enter
	tm send-keys -t "$PANE" -l q
	check_shell_back 0 || return 1
	if grep -q 'xyz' "$TMP/pane"; then
		fail "the keys typed while the model loaded reached the shell"
		sed 's/^/# | /' "$TMP/pane"
		return 1
	fi
}

# Ctrl-C during the load (the frame in Unicode here, in ASCII above): the
# load stops, the terminal is back, 130.
case_model_load_sigint() {
	start_shell || return 1
	slow_model "$(printf 'Once upon a time there was a cat. %.0s' $(seq 80))" || return 1
	type_line 'sh "$H2O_TMP/run" "$H2O_TMP/m/slow.json"; echo "exit=$?"'
	wait_loading || return 1
	tm send-keys -t "$PANE" C-c
	check_shell_back 130
}

# Ctrl-Z during the load, then fg: the loading frame is drawn again whole
# (none of the shell's lines left on it), q quits, and the terminal is
# back: the alternate screen left, the cursor shown.
case_model_load_tstp() {
	start_shell || return 1
	slow_model "$(printf 'Once upon a time there was a cat. %.0s' $(seq 80))" || return 1
	cat >"$TMP/job" <<'EOF'
echo $$ >"$H2O_TMP/pid"
exec "$H2O_BIN" "$@"
EOF
	type_line 'sh "$H2O_TMP/job" "$H2O_TMP/m/slow.json"'
	wait_loading || return 1
	tm send-keys -t "$PANE" C-z
	wait_line '^\[1\]\+ +Stopped' || return 1
	type_line fg
	wait_loading 'Stopped|^\$|fg' || return 1
	tm send-keys -t "$PANE" -l q
	check_job_back 0 && check_terminal_back
}

# A model scene that cannot load (the scene's dim is not the model's): the
# screen was up, the terminal is back, the one-line error is on the shell's
# screen (it was held while the screen was up), exit 3.
case_model_load_error() {
	start_shell || return 1
	type_line 'sh "$H2O_TMP/run" tests/bad/model_dim.json; echo "exit=$?"'
	check_shell_back 3 || return 1
	grep -qxF "$(cat "$SRC/tests/bad/model_dim.err")" "$TMP/pane" || {
		fail "the scene's error is not on the shell's screen"
		sed 's/^/# | /' "$TMP/pane"
		return 1
	}
}

# A terminal type curses does not know: exit 2 and the line that says so,
# before any scene is loaded.
case_unknown_term() {
	start_shell || return 1
	type_line 'TERM=no-such-term sh "$H2O_TMP/run" scenes/cat_sat.json; echo "exit=$?"'
	check_shell_back 2 || return 1
	grep -qxF "h2o-tui: cannot use terminal type 'no-such-term'; try --headless" "$TMP/pane" ||
		{ fail "no line about the terminal type"; sed 's/^/# | /' "$TMP/pane"; return 1; }
}

# The model panel's real drop (the model once per policy over the text) is
# a build in the background, as the timelines are: the screen opens at
# once with the header's progress, and q quits at once (the runs once took
# the UI thread before the first frame).
case_model_drop() {
	start_shell || return 1
	slow_model "$(printf 'Once upon a time there was a cat. %.0s' $(seq 8))" || return 1
	type_line 'sh "$H2O_TMP/run" "$H2O_TMP/m/slow.json"; echo "exit=$?"'
	wait_line 'step 0/[0-9]+ .*model [0-9]+%' || return 1
	tm send-keys -t "$PANE" -l q
	check_shell_back 0
}

# A lesson opened with . in the terminal (a background job there) is held
# to --max-memory less what the scene shown holds: beside lesson 7 (1.3 MB)
# lesson 8 needs about 403 MB, more than 402M, and the status line says so.
case_lesson_memory() {
	start_shell || return 1
	OPTS=--max-memory=402M start_tui scenes/lesson_07_full_vs_h2o.json || return 1
	tm send-keys -t "$PANE" -l .
	wait_line 'lesson 8 not opened: it needs about [0-9.]+ MB of memory, more than --max-memory' ||
		return 1
	tm send-keys -t "$PANE" -l q
	check_shell_back 0
}
