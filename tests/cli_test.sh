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
