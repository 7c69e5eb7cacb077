#!/bin/bash
# Every list of policy and key names the command line shows comes from its
# table: the policies of --help's Policies section are the ones --compare
# takes and names in its error, the help overlay cycles through, the report
# has rows for and the trace has keys for; the key names of --help are the
# ones the --keys error lists.
#
#   names_test.sh BIN NAME...   and each NAME is one of BIN's policies
#
# Runs from the source root (Meson's workdir) with a pinned environment.
set -u
export LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1
bin=$1
shift
# A scene with keys, so that every policy runs (knorm and keydiff read
# them; an attention scene leaves them out).
scene=scenes/cat_sat_qkv.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# One line of text with single spaces, for phrases --help wraps.
flat() {
	tr '\n' ' ' | tr -s ' '
}

"$bin" --help >"$tmp/help" || fail "--help failed"
policies=$(sed -n '/^Policies/,/^$/s/^  \([a-z0-9_][a-z0-9_-]*\)  .*/\1/p' "$tmp/help")
[ -n "$policies" ] || fail "no Policies section in --help"
for want in "$@"; do
	echo "$policies" | grep -qx "$want" || fail "--help does not list policy $want"
done
# Every policy but h2o, which is always on the left.
comparable=$(echo "$policies" | grep -vx h2o | paste -sd, - | sed 's/,/, /g')
help=$(flat <"$tmp/help")
case $help in
*"--compare NAME policy beside H2O at start, one of $comparable ("*) ;;
*) fail "--help's --compare does not list $comparable" ;;
esac

"$bin" --headless --compare lru "$scene" >/dev/null 2>"$tmp/err"
[ $? = 2 ] || fail "--compare lru: exit status not 2"
grep -qF "unknown policy 'lru': expected one of $comparable" "$tmp/err" ||
	fail "--compare lru: $(cat "$tmp/err")"

# (On a scene with keys: knorm and keydiff read them, and an attention
# scene refuses them.)
for p in $(echo "$comparable" | tr -d ,); do
	"$bin" --headless --compare "$p" --keys end scenes/cat_sat_qkv.json >/dev/null ||
		fail "--compare $p failed"
done
# The help names the policies c cycles through on the scene shown: on one
# with keys, every comparable policy.
"$bin" --headless --size 120x40 --keys '?' scenes/cat_sat_qkv.json >"$tmp/frames" ||
	fail "the help overlay failed"
# The overlay's text inside its borders, its wrapped lines joined.
overlay=$(sed -n 's/.*│ \(.*[^ ]\) *│.*/\1/p' "$tmp/frames" | flat)
case $overlay in
*"c compares H2O with each in turn: $comparable"*) ;;
*) fail "the help overlay does not list $comparable" ;;
esac

"$bin" --report "$scene" >"$tmp/report" || fail "--report failed"
"$bin" --report --json "$scene" >"$tmp/json" || fail "--report --json failed"
"$bin" --trace "$scene" >"$tmp/trace" || fail "--trace failed"
for p in $policies; do
	grep -q "^$p " "$tmp/report" || fail "--report has no row for $p"
	grep -qF "{\"name\": \"$p\"" "$tmp/json" || fail "--report --json has no $p"
	[ "$(grep -cF "\"$p\": {" "$tmp/trace")" = "$(wc -l <"$tmp/trace")" ] ||
		fail "a step of --trace has no key $p"
done

# The key names of --help are the ones the --keys error lists, Shift-Tab
# among them.
keys=$(echo "$help" | sed -n 's/.*the others by name: \([^)]*\)).*/\1/p')
[ -n "$keys" ] || fail "--help names no keys"
case " $keys " in
*" btab "*) ;;
*) fail "--help does not name btab: $keys" ;;
esac
"$bin" --headless --keys right,warp "$scene" >/dev/null 2>"$tmp/err"
[ $? = 2 ] || fail "--keys warp: exit status not 2"
grep -qF "or one of $keys)" "$tmp/err" || fail "--keys warp: $(cat "$tmp/err")"
"$bin" --headless --keys "$(echo "$keys" | tr ' ' ,)" "$scene" >/dev/null ||
	fail "--keys does not take every name --help gives"

echo "policies: $(echo $policies); keys: $keys"
