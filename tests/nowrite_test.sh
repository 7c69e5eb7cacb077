#!/bin/bash
# nowrite_test.sh: h2o-tui writes nothing but stdout and stderr.
#
# A scene may sit in a shared or read-only folder, and a viewer has no
# business leaving files behind. This runs every non-interactive mode (the
# headless frames with keys, the trace, the report, the sweep, a bad scene,
# a missing one, usage errors, help and version) with the scenes in a
# read-only folder and the working directory, HOME and TMPDIR in empty
# folders of their own, and checks that no file in any of them appeared,
# vanished or changed. Permissions alone prove nothing when the tests run
# as root, so the check compares listings and checksums; with strace
# installed it also checks that no system call opened a file for writing
# or created, renamed or removed one.
#
# The one exception is --plot FILE, which writes FILE and nothing else:
# its runs write outside the box, and the system-call check allows that
# one path and no other.
#
# Usage: tests/nowrite_test.sh H2O_TUI   (from the source root, as Meson runs it)
set -u
export LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1
[ $# -eq 1 ] || { echo "usage: $0 H2O_TUI" >&2; exit 99; }
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(pwd)
box=$(mktemp -d)   # what the program may not touch
notes=$(mktemp -d) # our own outputs and listings
trap 'chmod -R u+w "$box"; rm -rf "$box" "$notes"' EXIT
failed=0

mkdir "$box/scenes" "$box/cwd" "$box/home" "$box/tmp"
cp scenes/cat_sat.json scenes/cat_sat_qkv.json tests/scenes/hostile_text.json \
	tests/bad/k_length.json "$box/scenes/"
chmod -R a-w "$box/scenes"

# Every file and folder under the box: name, type, size, mode, mtime and
# the checksum of its content.
listing() {
	(cd "$box" && find . -printf '%p %y %s %m %T@\n' | sort &&
		find . -type f -exec cksum {} + | sort)
}

# strace may be missing, or not allowed to trace (a container without
# ptrace): then the folders are the whole check.
if command -v strace >/dev/null 2>&1 && strace -qq -o /dev/null true 2>/dev/null; then
	have_strace=1
else
	have_strace=0
	echo "strace not installed or not permitted: checking the folders only"
fi

runs=0
# run EXPECTED_STATUS ARGS...: run h2o-tui in the box, stdout and stderr
# outside it.
run() {
	local want=$1 status
	shift
	runs=$((runs + 1))
	if [ "$have_strace" = 1 ]; then
		# LeakSanitizer cannot work under ptrace; leaks are the ASan
		# run's business, not this test's.
		(cd "$box/cwd" && HOME="$box/home" TMPDIR="$box/tmp" \
			ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
			strace -f -qq -o "$notes/strace" \
			-e trace=open,openat,creat,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat,rmdir,link,linkat,symlink,symlinkat,truncate,chmod,fchmodat \
			"$bin" "$@" >"$notes/out" 2>"$notes/err" </dev/null)
		status=$?
		# Opening for reading only is fine; anything that writes,
		# creates, renames or removes a file is not.
		if grep -E 'O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|^[0-9]+ +(creat|rename|unlink|mkdir|rmdir|link|symlink|truncate|chmod|fchmodat)' \
			"$notes/strace" | grep -vF "\"${allow:-/nothing allowed/}\"" >"$notes/writes"; then
			echo "FAIL: $*: writes a file:"
			sed 's/^/  /' "$notes/writes"
			failed=1
		fi
	else
		(cd "$box/cwd" && HOME="$box/home" TMPDIR="$box/tmp" \
			"$bin" "$@" >"$notes/out" 2>"$notes/err" </dev/null)
		status=$?
	fi
	if [ "$status" != "$want" ]; then
		echo "FAIL: $*: exit status $status, expected $want: $(head -c 300 "$notes/err")"
		failed=1
	fi
}

listing >"$notes/before"
s=$box/scenes
run 0 --headless "$s/cat_sat.json"
run 0 --headless --size 80x24 --keys 'end,?,esc,j,c,m,tab,o,o,],[,},{,left,home,q' "$s/cat_sat.json"
run 0 --headless --ascii "$s/hostile_text.json"
run 0 --trace "$s/cat_sat_qkv.json"
run 0 --report "$s/cat_sat.json"
run 0 --report --json "$s/cat_sat.json"
run 0 --report --csv "$s/cat_sat.json"
for plot in plot.svg plot.png plot.pdf; do
	allow=$notes/$plot run 0 --report --plot "$notes/$plot" "$s/cat_sat_qkv.json"
	allow=$notes/$plot run 0 --budget-sweep=1,2,4 --plot "$notes/$plot" "$s/cat_sat.json"
	[ -s "$notes/$plot" ] || { echo "FAIL: --plot wrote no $plot"; failed=1; }
done
run 0 --budget-sweep "$s/cat_sat.json"
run 0 --budget-sweep 2,0.5 --target err=0.1 --per-head "$s/cat_sat_qkv.json"
run 3 --headless "$s/k_length.json"
run 3 --trace "$s/no-such-scene.json"
run 2 "$s/cat_sat.json" # interactive, but stdout is no terminal
run 2 --frobnicate "$s/cat_sat.json"
run 0 --help
run 0 --version
listing >"$notes/after"

if ! diff -u "$notes/before" "$notes/after" >"$notes/diff"; then
	echo "FAIL: files changed in the scene folder, the working directory, HOME or TMPDIR:"
	sed 's/^/  /' "$notes/diff"
	failed=1
fi
cd "$src" || exit 1
echo "$runs runs, $([ "$failed" = 0 ] && echo "no writes" || echo "writes found")"
[ "$failed" = 0 ]
