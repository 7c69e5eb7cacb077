# Sourced (bash) by the tests that take the program as their one argument
# (limits_test.sh, memory_test.sh, oom_test.sh, trace_steps_test.sh): the
# pinned environment, the argument checked and kept in bin, a temporary
# folder $tmp removed on exit, and fail MESSAGE, which prints a FAIL line
# and marks the test failed ($failed: 0, or 1 once anything failed).
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
