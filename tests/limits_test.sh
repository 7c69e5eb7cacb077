#!/bin/bash
# limits_test.sh: the scene limits too large to keep as files in tests/bad.
#
# docs/scene-format.md documents a maximum for the file size and the token
# count; a scene past them is megabytes, so this test writes it into a
# temporary directory and checks the exact error line and exit status 3,
# as tests/bad/*.err do for the small cases. It also checks that scenes
# exactly at the limits load (dim 4096, budgets of 1,000,000, 4096-byte
# text), and that a budget covering every token says on screen that H2O
# never evicts.
#
# Usage: tests/limits_test.sh H2O_TUI   (from the source root, as Meson runs it)
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

# refused FILE EXPECTED_STDERR_LINE: exit 3, nothing on stdout, that line.
refused() {
	local file=$1 want=$2 status
	"$bin" --headless "$file" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" = 3 ] || { fail "$file: exit status $status, expected 3"; return; }
	[ ! -s "$tmp/out" ] || { fail "$file: stdout is not empty"; return; }
	printf '%s\n' "$want" | diff -u - "$tmp/err" >/dev/null ||
		fail "$file: stderr is '$(head -c 300 "$tmp/err")', expected '$want'"
}

# accepted FILE ARGS...: exit 0, nothing on stderr.
accepted() {
	local file=$1 status
	shift
	"$bin" "$@" "$file" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" = 0 ] || fail "$file $*: exit status $status ($(head -c 300 "$tmp/err"))"
	[ ! -s "$tmp/err" ] || fail "$file $*: stderr: $(head -c 300 "$tmp/err")"
}

# File size: one byte past 256 MiB, as a sparse file (no disk used). It is
# refused from its size, before a byte is read.
truncate -s $((256 * 1024 * 1024 + 1)) "$tmp/huge.json"
refused "$tmp/huge.json" "$tmp/huge.json: cannot load: file is larger than 256 MiB"

# Tokens: 1,000,001 empty tokens, refused from the count before any
# token is looked at (the first empty token would be an error too).
{
	printf '{"heavy": 1, "recent": 1, "dim": 1, "tokens": ['
	yes '{},' | head -n 1000000 | tr -d '\n'
	printf '{}]}\n'
} >"$tmp/tokens.json"
refused "$tmp/tokens.json" \
	"$tmp/tokens.json:1:47: tokens: expected at most 1000000 tokens, got 1000001"

# Exactly at the limits: dim 4096, both budgets 1,000,000 (far past the
# scene's one token), and text of 4096 bytes after escapes are decoded.
x4095=$(head -c 4095 /dev/zero | tr '\0' x)
printf '{"heavy": 1000000, "recent": 1000000, "dim": 4096, "tokens": [%s, %s]}\n' \
	"{\"text\": \"$x4095\\u0021\", \"attn\": [1]}" \
	'{"text": "end", "attn": [0.5, 0.5]}' >"$tmp/at_limits.json"
accepted "$tmp/at_limits.json" --headless --keys end
grep -q 'covers all 2 tokens: H2O never evicts' "$tmp/out" ||
	fail "at_limits.json: the story line does not say that H2O never evicts"
accepted "$tmp/at_limits.json" --trace
accepted scenes/cat_sat.json --headless --heavy 1000000 --recent 1000000 --keys end
grep -q 'budget (2,000,000) covers all 7 tokens: H2O never evicts' "$tmp/out" ||
	fail "cat_sat.json with budgets 1000000: no 'never evicts' on screen"

[ "$failed" = 0 ] && echo "all limits hold"
[ "$failed" = 0 ]
