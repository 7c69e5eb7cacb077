#!/bin/bash
# oom_test.sh: running out of memory is said, with its own exit status.
#
# The modes that compute over a whole scene (--trace, --report, --report
# --json, --budget-sweep and --budget-sweep --json) run under a virtual
# memory limit (ulimit -v, in a subshell) that lets the scene load but not
# the engine that the mode then sets up. Each must exit 4 with exactly one
# line on stderr, "h2o-tui: out of memory while ...", and nothing on stdout:
# no partial table, no partial JSON.
#
# The limit is measured, not guessed, so the test holds on any machine: the
# smallest limit at which the scene loads is found by bisection (to 256
# KiB) with a run that loads it and then stops at a usage error (--heavy 0
# --recent 0: exit 2, checked only after loading), and the modes get that
# limit plus 32 MiB, a tenth of what their engines need for the scene's
# 200,000 tokens. A build that cannot run under a limit at all (the
# sanitizers reserve terabytes of address space) skips (77).
#
# Usage: tests/oom_test.sh H2O_TUI   (from the source root, as Meson runs it)
set -u
export LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1
[ $# -eq 1 ] || { echo "usage: $0 H2O_TUI" >&2; exit 99; }
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

fail() {
	echo "FAIL: $*"
	failed=1
}

# A long scene in a few bytes: 200,000 generated tokens of dim 4.
scene=$tmp/long.json
printf '{"heavy": 2, "recent": 2, "dim": 4, "generate": {"count": 200000, "seed": 1}}\n' >"$scene"

# limited KIB ARGS...: the exit status of the program under a limit of KIB
# KiB of virtual memory, its output in $tmp/out and $tmp/err.
limited() {
	local kib=$1
	shift
	(ulimit -v "$kib" && exec "$bin" "$@") >"$tmp/out" 2>"$tmp/err"
}

hi=$((4 * 1024 * 1024)) # 4 GiB
limited "$hi" --version || { echo "1..0 # SKIP this build does not run under ulimit -v"; exit 77; }
limited "$hi" --trace --heavy 0 --recent 0 "$scene"
[ $? = 2 ] || { echo "FAIL: the scene does not load in 4 GiB: $(head -c 300 "$tmp/err")"; exit 1; }
lo=0
while [ $((hi - lo)) -gt 256 ]; do
	mid=$(((lo + hi) / 2))
	if limited "$mid" --trace --heavy 0 --recent 0 "$scene"; [ $? = 2 ]; then
		hi=$mid
	else
		lo=$mid
	fi
done
limit=$((hi + 32 * 1024))
echo "# the scene loads in $hi KiB; the modes run in $limit KiB"

# oom WHAT ARGS...: under the limit, exit 4, nothing on stdout and one line
# on stderr, "h2o-tui: out of memory while WHAT".
oom() {
	local what=$1 status
	shift
	limited "$limit" "$@" "$scene"
	status=$?
	[ "$status" = 4 ] || fail "$*: exit status $status, expected 4"
	[ ! -s "$tmp/out" ] || fail "$*: stdout is not empty: $(head -c 300 "$tmp/out")"
	printf 'h2o-tui: out of memory while %s\n' "$what" | diff -u - "$tmp/err" >/dev/null ||
		fail "$*: stderr is '$(head -c 300 "$tmp/err")', expected 'h2o-tui: out of memory while $what'"
}

oom "writing the trace" --trace
oom "computing the report" --report
oom "computing the report" --report --json
oom "computing the budget sweep" --budget-sweep
oom "computing the budget sweep" --budget-sweep=4,8 --json

[ "$failed" = 0 ] && echo "every mode says it ran out of memory"
[ "$failed" = 0 ]
