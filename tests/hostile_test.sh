#!/bin/bash
# hostile_test.sh: scene text never reaches the terminal raw, and never
# breaks the columns.
#
# Runs every output of h2o-tui that scene text can reach (headless frames
# at several sizes, ASCII and Unicode, with keys that open the help, the
# inspector, the heat scrolling and the other policies; the trace; the
# report) over scenes full of hostile token text, and pipes each through
# tests/check_text.c: no byte below 0x20 but the newline, no DEL, no C1
# control, valid UTF-8, and for frames exactly ROWS lines per frame, none
# wider than COLS by wcswidth. Each run must also exit 0 with nothing on
# stderr. tests/golden/hostile_* pin the exact frames; this test pins the
# properties at sizes and keys the goldens do not cover.
#
# Usage: tests/hostile_test.sh H2O_TUI CHECK_TEXT MODE SCENE...
#   MODE frames: the headless frames and the report; MODE trace: the trace;
#   MODE replay: a few of each for inputs the fuzzer found
#   (tests/fuzz/regressions/), which may also be refused with exit 3;
#   MODE model: each SCENE is a model scene, copied with its model and
#   tokenizer under file names full of escape sequences, and every output
#   that names the model (report, CSV, JSON, sweep, trace) is checked
# (run from the source root, as Meson does).
set -u
export LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1
usage() {
	echo "usage: $0 H2O_TUI CHECK_TEXT frames|trace|replay|model SCENE..." >&2
	exit 99
}
[ $# -ge 4 ] || usage
bin=$1 check=$2 mode=$3
shift 3
case $mode in frames | trace | replay | model) ;; *) usage ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=0 failed=0

# run COLS ROWS ARGS...: run h2o-tui with ARGS and check its output as
# frames of COLSxROWS (0 0: as plain text).
run() {
	local cols=$1 rows=$2
	shift 2
	local status
	runs=$((runs + 1))
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
	# A replayed finding may be a bad scene: one line, exit 3, no output.
	if [ "$mode" = replay ] && [ "$status" = 3 ]; then
		if [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" != 1 ]; then
			echo "FAIL: refused, but not with one line on stderr only: $*"
			failed=$((failed + 1))
		fi
		return
	fi
	if [ "$status" != 0 ]; then
		echo "FAIL: exit status $status for: $* ($(head -c 300 "$tmp/err"))"
		failed=$((failed + 1))
		return
	fi
	if [ -s "$tmp/err" ]; then
		echo "FAIL: stderr not empty for: $*: $(head -c 300 "$tmp/err")"
		failed=$((failed + 1))
		return
	fi
	if ! "$check" "$cols" "$rows" <"$tmp/out" 2>"$tmp/why"; then
		echo "FAIL: $*: $(cat "$tmp/why")"
		failed=$((failed + 1))
	fi
}

# Keys that reach every panel that shows token text: the help, the
# inspector (select up and down), the heat rows scrolled, the other
# policies, the overview of heads, the plot, the ends, and the walked
# lists (both panels, by score, searched, a position gone to), with a
# search's text echoed on the hint line.
keys='end,?,esc,j,j,k,<,<,>,f,c,c,m,tab,o,o,left,pgup,home,right,right,right'
keys="$keys,end,w,s,pgdn,/,a,enter,n,N,#,1,enter,w,c,pgdn,w,/,é,enter,esc"

for scene in "$@"; do
	if [ "$mode" = replay ]; then
		run 120 36 --headless --keys "$keys" "$scene"
		run 80 24 --headless --size 80x24 --ascii "$scene"
		run 0 0 --trace "$scene"
		run 0 0 --report "$scene"
		continue
	fi
	if [ "$mode" = model ]; then
		# The scene beside its model and tokenizer, both renamed: an
		# OSC title, a colour, a bell and a C1 control in each name.
		dir=$(dirname "$scene")
		hostile=$(printf '\033]0;pwned\007\033[31mred\302\233m')
		sed -n 's/^ *"model": *"\(.*\)",*$/\1/p' "$scene" >"$tmp/model"
		sed -n 's/^ *"tokenizer": *"\(.*\)",*$/\1/p' "$scene" >"$tmp/tok"
		mkdir -p "$tmp/m"
		cp "$dir/$(cat "$tmp/model")" "$tmp/m/$hostile.bin"
		cp "$dir/$(cat "$tmp/tok")" "$tmp/m/${hostile}tok.bin"
		# The same names as JSON escapes, kept raw by single quotes.
		json='\u001b]0;pwned\u0007\u001b[31mred\u009bm'
		while IFS= read -r line; do
			case $line in
			*'"model":'*) printf ' "model": "%s.bin"%s\n' "$json" "${line##*\"}" ;;
			*'"tokenizer":'*) printf ' "tokenizer": "%stok.bin"%s\n' "$json" "${line##*\"}" ;;
			*) printf '%s\n' "$line" ;;
			esac
		done <"$scene" >"$tmp/m/scene.json"
		for args in --report "--report --csv" "--report --json" "--budget-sweep=2,4" \
			"--budget-sweep=2,4 --json" --trace; do
			# shellcheck disable=SC2086 # several words
			run 0 0 $args "$tmp/m/scene.json"
		done
		run 120 36 --headless --keys "end,t" "$tmp/m/scene.json"
		continue
	fi
	if [ "$mode" = trace ]; then
		run 0 0 --trace "$scene"
		run 0 0 --trace --heavy 1 --recent 1 "$scene"
		continue
	fi
	for size in 120x36 80x24 79x23 40x10 200x50 1x1; do
		cols=${size%x*} rows=${size#*x}
		for ascii in "" --ascii; do
			run "$cols" "$rows" --headless --size "$size" ${ascii:+"$ascii"} "$scene"
			run "$cols" "$rows" --headless --size "$size" ${ascii:+"$ascii"} \
				--keys "$keys" "$scene"
		done
		# Small budgets evict, so the evicted section and the story
		# line quote the evicted token and its cut-off.
		run "$cols" "$rows" --headless --size "$size" --heavy 1 --recent 1 \
			--keys "$keys" "$scene"
	done
	# A locale that cannot show UTF-8: headless keeps UTF-8 out.
	LC_ALL=C run 120 36 --headless --keys "$keys" "$scene"
	run 0 0 --report "$scene"
	run 0 0 --report --json "$scene"
	run 0 0 --budget-sweep "$scene"
done

echo "$runs runs, $failed failed"
[ "$failed" -eq 0 ]
