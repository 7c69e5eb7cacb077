#!/bin/bash
# Tests that drive the h2o-tui binary as a user would.
#
#   cli_test.sh BIN golden NAME ARGS...  stdout of `BIN ARGS...` equals
#                                        tests/golden/NAME (H2O_REGEN=1
#                                        rewrites the golden file instead)
#   cli_test.sh BIN bad NAME             `BIN --headless tests/bad/NAME.json`
#                                        exits 3, prints nothing on stdout and
#                                        exactly tests/bad/NAME.err on stderr
#   cli_test.sh BIN status CODE ARGS...  `BIN ARGS...` exits with CODE, with
#                                        nothing on stdout
#   cli_test.sh BIN back SCENE KEYS      after each key of KEYS, the frame
#                                        equals the frame of the same step
#                                        reached by stepping forward only
#   cli_test.sh BIN says CODE LINE ARGS...
#                                        `BIN ARGS...` exits with CODE, with
#                                        nothing on stdout and LINE as the
#                                        first line on stderr
#   cli_test.sh BIN write full|closed ARGS...
#                                        `BIN ARGS...` with stdout on
#                                        /dev/full, or closed, exits 1 and
#                                        says exactly why in one line
#   cli_test.sh BIN plot FILE REASON ARGS...
#                                        `BIN --plot FILE ARGS...` exits 1
#                                        with one line on stderr, "h2o-tui:
#                                        FILE: cannot write: REASON"; a FILE
#                                        without a '/' is made a link to
#                                        /dev/full in a fresh folder
#
# Runs from the source root (Meson's workdir) with a pinned environment.
set -u
export LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1
bin=$1 mode=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

case $mode in
golden)
	name=$1
	shift
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err" || fail "exit status $? for: $* ($(cat "$tmp/err"))"
	if [ "${H2O_REGEN:-}" = 1 ]; then
		cp "$tmp/out" "tests/golden/$name"
		echo "rewrote tests/golden/$name"
		exit 0
	fi
	diff -u "tests/golden/$name" "$tmp/out" || fail "output differs from tests/golden/$name"
	;;
bad)
	name=$1
	"$bin" --headless "tests/bad/$name.json" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" = 3 ] || fail "exit status $status, expected 3"
	[ ! -s "$tmp/out" ] || fail "stdout is not empty: $(head -c 200 "$tmp/out")"
	diff -u "tests/bad/$name.err" "$tmp/err" || fail "stderr differs from tests/bad/$name.err"
	;;
status)
	want=$1
	shift
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
	[ "$status" = "$want" ] || fail "exit status $status, expected $want: $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "stdout is not empty"
	[ "$want" = 0 ] || [ "$(wc -l <"$tmp/err")" -ge 1 ] || fail "no message on stderr"
	;;
says)
	want=$1 line=$2
	shift 2
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
	[ "$status" = "$want" ] || fail "exit status $status, expected $want: $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "stdout is not empty"
	[ "$(head -n 1 "$tmp/err")" = "$line" ] ||
		fail "stderr says '$(head -n 1 "$tmp/err")', expected '$line'"
	;;
write)
	where=$1
	shift
	case $where in
	full)
		"$bin" "$@" >/dev/full 2>"$tmp/err" </dev/null
		status=$?
		reason="No space left on device"
		;;
	closed)
		"$bin" "$@" >&- 2>"$tmp/err" </dev/null
		status=$?
		reason="Bad file descriptor"
		;;
	*) fail "write: unknown stdout $where" ;;
	esac
	[ "$status" = 1 ] || fail "stdout $where: exit status $status, expected 1: $(cat "$tmp/err")"
	printf 'h2o-tui: standard output: %s\n' "$reason" >"$tmp/want"
	diff -u "$tmp/want" "$tmp/err" || fail "stdout $where: stderr is not the one line expected"
	;;
plot)
	file=$1 reason=$2
	shift 2
	case $file in
	*/*) ;;
	*)
		ln -s /dev/full "$tmp/$file" || fail "cannot link $tmp/$file to /dev/full"
		file=$tmp/$file
		;;
	esac
	"$bin" --plot "$file" "$@" >/dev/null 2>"$tmp/err" </dev/null
	status=$?
	[ "$status" = 1 ] || fail "--plot $file: exit status $status, expected 1: $(cat "$tmp/err")"
	printf 'h2o-tui: %s: cannot write: %s\n' "$file" "$reason" >"$tmp/want"
	diff -u "$tmp/want" "$tmp/err" || fail "--plot $file: stderr is not the one line expected"
	;;
back)
	scene=$1 keys=$2
	# Frames for steps 0..n, stepping forward only, one file per step.
	"$bin" --headless "$scene" >"$tmp/forward" || fail "--headless failed"
	awk -v dir="$tmp" '/^--- step /{split($3, a, "/"); f = dir "/fwd." a[1]; next} {print > f}' \
		"$tmp/forward"
	"$bin" --headless --keys "$keys" "$scene" >"$tmp/keys" || fail "--keys failed"
	awk -v dir="$tmp" '/^--- step /{split($3, a, "/"); n++; f = dir "/key." n "." a[1]; next}
		{print > f}' "$tmp/keys"
	count=0
	for f in "$tmp"/key.*; do
		step=${f##*.}
		cmp -s "$f" "$tmp/fwd.$step" || {
			diff -u "$tmp/fwd.$step" "$f" | head -40
			fail "frame $(basename "$f") differs from the forward frame of step $step"
		}
		count=$((count + 1))
	done
	[ "$count" -gt 1 ] || fail "no frames compared"
	echo "$count frames equal their forward frames"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
