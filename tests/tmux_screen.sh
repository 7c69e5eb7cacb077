# shellcheck shell=bash disable=SC2034 # COLS and ROWS are read by tmux_test.sh
# tmux_screen.sh: cases of tests/tmux_test.sh about what the screen shows
# (the search's whole match, lesson 2's table, the help's cycle line, the
# policy strip), which that file sources (its helpers, tm, start_shell,
# start_tui, headless, key_check, wait_screen, check_shell_back, are its).

# Quit the TUI (q), check the shell got its terminal back, clear the pane
# (so that the next run's "exit=" is not the last one's) and start the TUI
# again on scene $1, with the headless frames of keys $2 (start_tui).
restart_tui() {
	tm send-keys -t "$PANE" -l q && check_shell_back 0 || return 1
	type_line clear
	local end=$((SECONDS + TIMEOUT))
	while capture >"$TMP/pane" && grep -q '^exit=' "$TMP/pane"; do
		[ "$SECONDS" -lt "$end" ] || { fail "the pane was not cleared"; return 1; }
		sleep 0.05
	done
	start_tui "$1" "${2:-}"
}

# A word the model split into pieces (" b" "o" "at"): / finds it across
# them and selects the whole match, every one of its rows marked, and the
# status says how many tokens it spans; n goes to the next match.
case_search_span() {
	start_shell && start_tui models/stories260K/story_model.json end,/,b,o,a,t,enter,n || return 1
	key_check 1 End && key_check 2 -l / && key_check 3 -l b && key_check 4 -l o &&
		key_check 5 -l a && key_check 6 -l t && key_check 7 Enter && key_check 8 -l n || return 1
	grep -q '"boat": match 1 of 8, 3 tokens 250-252 ' "$TMP/exp.7" ||
		{ fail "no whole match 250-252 said"; return 1; }
	[ "$(grep -c '^ » 2\(5[012]\) ' "$TMP/exp.7")" -eq 3 ] ||
		{ fail "the match's three rows are not all marked"; return 1; }
}

# Lesson 2's step 5 is the explainer's table: at 80x24 its three rows
# (The, cat, sat: old score + attention = new score) are all on screen.
case_lesson_table() {
	COLS=80 ROWS=24
	start_shell && start_tui scenes/lesson_02_scores.json 5,enter || return 1
	key_check 1 -l 5 && key_check 2 Enter || return 1
	local row
	for row in '1 The .* 1\.00+0\.20=1\.20' '2 cat .* 0\.70+0\.50=1\.20' '3 sat .* 0\.20+0\.30=0\.50'; do
		grep -q "$row" "$TMP/exp.2" || { fail "no row /$row/ at 80x24"; return 1; }
	done
}

# The help names the policies c cycles through on this scene: an attention
# scene's cycle has none of those that read keys.
case_help_cycle() {
	start_shell && start_tui "" '?,c,c' || return 1
	key_check 1 -l '?' || return 1
	grep -q 'c compares H2O with each in turn: full, window, streaming, tova, snapkv, snapkv-win,' \
		"$TMP/exp.1" || { fail "no cycle line of the scene's policies"; return 1; }
	grep -q 'knorm\|keydiff' "$TMP/exp.1" && { fail "the cycle names a policy c skips"; return 1; }
	key_check 2 -l c && key_check 3 -l c
}

# The policy strip on the rule under the header: every policy's recall at
# the step, the compared one in brackets, a hiding and showing it; at
# 120 and 80 columns the tight form holds every policy ("rec% h2o88 [wi90] st82 …"), and
# on lesson 8, whose perplexities it adds, counts those that do not fit.
case_strip() {
	start_shell && start_tui "" right,right,right,right,right,right,c,a,a || return 1
	local n
	for n in 1 2 3 4 5 6; do
		key_check $n Right || return 1
	done
	key_check 7 -l c && key_check 8 -l a && key_check 9 -l a || return 1
	grep -q '── rec% h2o88 \[wi90\] st82 ' "$TMP/exp.9" ||
		{ fail "no strip with window marked at step 6"; return 1; }
	grep -q 'rec% h2o' "$TMP/exp.8" && { fail "a did not hide the strip"; return 1; }
	headless 80x24 right,right,right,right,right,right,c || return 1
	tm resize-window -t h2o -x 80 -y 24 && wait_screen "$TMP/exp.7" "resized to 80x24" || return 1
	grep -q '─ rec% h2o88 \[wi90\] st82 tv90 sn100 sw90 py100 pw90 ad100 aw90 ob100 ow80 rn82 ─' "$TMP/exp.7" ||
		{ fail "the tight strip does not hold every policy at 80x24"; return 1; }
	# Lesson 8 adds each policy's perplexity: what does not fit is counted.
	COLS=80 ROWS=24
	restart_tui models/stories260K/story_model.json end || return 1
	key_check 1 End || return 1
	grep -q '── rec%/ppl \[fu/2\.8\] h2o10/3\.1 .* +[0-9][0-9]* ─*$' "$TMP/exp.1" ||
		{ fail "no count of the policies left out on lesson 8"; return 1; }
}

# A list that hides rows says how many (issue: "RECENT 2 of 2" with one
# row shown), and the newest eviction's reason is whole at 80x24.
case_lists_80x24() {
	COLS=80 ROWS=24
	start_shell && start_tui scenes/lesson_01_heavy_recent.json 5,enter || return 1
	key_check 1 -l 5 && key_check 2 Enter || return 1
	grep -q 'RECENT  2 of 2  … 1 older' "$TMP/exp.2" ||
		{ fail "RECENT does not say what it hides at 80x24"; return 1; }
	grep -q '✗ 2 sat    < 1\.71 cat now' "$TMP/exp.2" ||
		{ fail "the newest eviction's reason is cut at 80x24"; return 1; }
}

# On grouped heads the inspector and the panel tell one number: the kv
# group's mean, named so in both.
case_inspect_kv() {
	COLS=80 ROWS=24
	start_shell && start_tui models/stories260K/story_model.json 6,3,enter,#,6,2,enter || return 1
	local n=1 k
	for k in 6 3; do
		key_check $n -l $k || return 1
		n=$((n + 1))
	done
	key_check 3 Enter && key_check 4 -l '#' && key_check 5 -l 6 && key_check 6 -l 2 &&
		key_check 7 Enter || return 1
	grep -q 'attn 0\.14 (kv mean 0\.57) in H2O' "$TMP/exp.7" &&
		grep -q 'old+mean=score' "$TMP/exp.7" ||
		{ fail "the inspector and the panel do not both name the kv mean"; return 1; }
}
