#!/bin/bash
# plot_test.sh: --plot draws a real figure in the format its name asks for.
#
# For the report and the sweep, in PNG, SVG and PDF: the exit status is 0,
# stdout is exactly what the same command prints without --plot, the file
# starts with its format's signature, an SVG parses as XML (Python's
# xml.etree; that part skips without python3) and holds as many distinct
# curve styles (colour and dash pattern: the palette has seven colours) as
# the scene has policies (axes, grid and target are grey),
# and the line on stderr says so. A model scene's sweep adds the model's
# panel, perplexity against the budget, with a curve per policy the model
# runs, and its report a panel of the log-probability lost over the steps;
# the README's figure is the size its command draws; --policies draws
# the curves of the policies chosen only. A file that
# cannot be written is one line on stderr and exit status 1.
#
# Usage: tests/plot_test.sh H2O_TUI   (from the source root, as Meson runs it)
set -u
export LC_ALL=C.UTF-8 TZ=UTC NO_COLOR=1
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The policies a scene runs by default: every one on a scene with keys,
# all but those that read keys on an attention scene. POLICIES, when set,
# is the count of a --policies list instead.
runs() { "$bin" --report --csv "$1" | awk -F, 'NR > 1 && $1 == 1' | wc -l; }
policies=''
failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}

# check FILE MODE ARGS...: --plot FILE with MODE (--report or --budget-sweep...).
check() {
	local file=$tmp/$1
	shift
	local policies=${policies:-$(runs "${@: -1}")}
	"$bin" "$@" >"$tmp/plain" 2>/dev/null || fail "$*: without --plot"
	if ! "$bin" --plot "$file" "$@" >"$tmp/out" 2>"$tmp/err"; then
		fail "--plot $file $*: exit status $?: $(cat "$tmp/err")"
		return
	fi
	cmp -s "$tmp/plain" "$tmp/out" || fail "--plot $file $*: stdout differs"
	grep -q "of $policies curves, one per policy" "$tmp/err" ||
		fail "--plot $file $*: stderr does not count $policies curves: $(cat "$tmp/err")"
	case $file in
	*.png) [ "$(head -c 8 "$file" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "$file: no PNG signature" ;;
	*.pdf) [ "$(head -c 5 "$file")" = "%PDF-" ] || fail "$file: no PDF signature" ;;
	*.svg)
		command -v python3 >/dev/null 2>&1 || return
		python3 - "$file" "$policies" <<'PY' || fail "$file: $*"
import re, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
if not root.tag.endswith("svg"):
    sys.exit(f"root element {root.tag}")
styles = set()
for el in root.iter():
    style = el.get("style", "")
    m = re.search(r"stroke:rgb\(([^)]*)\)", style)
    if m:
        rgb = tuple(round(float(v.rstrip("%")), 1) for v in m.group(1).split(","))
        dash = re.search(r"stroke-dasharray:([^;]*)", style)
        if len(set(rgb)) > 1:  # not a grey
            styles.add((rgb, dash.group(1) if dash else ""))
if len(styles) != int(sys.argv[2]):
    sys.exit(f"{len(styles)} curve styles (colour and dashes), expected {sys.argv[2]}")
PY
		;;
	esac
}

check report.png --report scenes/cat_sat_qkv.json
check report.svg --report --target err=0.05 scenes/cat_sat_qkv.json
check report.pdf --report scenes/lesson_01_heavy_recent.json
check heads.svg --report --per-head tests/scenes/two_heads.json
check hostile.svg --report tests/scenes/hostile_text.json
check sweep.svg --budget-sweep 1,2,4,0.5 --json scenes/cat_sat.json
check sweep.PNG --budget-sweep --csv scenes/cat_sat_qkv.json
check sweep.pdf --budget-sweep=2,4 --target cos=0.99 scenes/cat_sat_qkv.json
# --smooth: the same curves, each the mean of the steps around it; stdout
# is the report's.
"$bin" --quiet --report scenes/story.json >"$tmp/plain"
if "$bin" --quiet --report --smooth 5 --plot "$tmp/smooth.svg" scenes/story.json >"$tmp/out"; then
	cmp -s "$tmp/plain" "$tmp/out" || fail "--smooth: stdout differs"
	"$bin" --quiet --report --plot "$tmp/raw.svg" scenes/story.json >/dev/null
	cmp -s "$tmp/raw.svg" "$tmp/smooth.svg" && fail "--smooth 5 draws what --smooth 1 does"
else
	fail "--smooth 5: exit status $?"
fi
# The settings used, when not the defaults, are drawn under the title: a
# kernel that changes no kept set (cat_sat_qkv's budget is within the
# window) still changes the figure, and the report's stdout says it too.
"$bin" --quiet --report --plot "$tmp/plain_set.svg" scenes/cat_sat_qkv.json >/dev/null
"$bin" --quiet --report --policy-opt snapkv.kernel=7 --plot "$tmp/kernel_set.svg" \
	scenes/cat_sat_qkv.json >"$tmp/kernel_out"
cmp -s "$tmp/plain_set.svg" "$tmp/kernel_set.svg" && fail "--policy-opt: the figure does not show it"
grep -q '^settings: snapkv.kernel=7' "$tmp/kernel_out" || fail "--policy-opt: the report does not say it"
# --policies: a curve per policy chosen, and no other.
policies=2
check chosen.svg --report --policies h2o,window scenes/cat_sat_qkv.json
check chosen_sweep.svg --budget-sweep=2,4 --policies tova,full scenes/cat_sat_qkv.json
policies=

# A model scene's sweep: a second panel, the model's perplexity against
# the budget, with a curve per policy the model runs (the names of the
# sweep JSON's "smallest", the full cache apart); its report: a panel of
# the log-probability lost so far, a curve per policy the model runs.
# Three policies (--policies), so that the model runs 3 times per budget
# rather than 11; the README's figure below runs them all.
model=models/stories260K/story_model.json
policies=3
chosen="--policies h2o,tova,full"
ran=$("$bin" --quiet --budget-sweep=8,64 --json $chosen "$model" |
	sed -n 's/.*"smallest": {\([^}]*\)}.*/\1/p' | tr ',' '\n' | grep -c '"')
[ "$ran" -gt 1 ] || fail "the model's sweep names $ran policies"
# model_curves NAME WHAT: the line on stderr counts the model's curves.
model_curves() {
	grep -qF "of $policies curves, one per policy, and the model's $2, $ran curves, one per policy run on the model" "$tmp/err" ||
		fail "$1: stderr does not count $ran model curves: $(cat "$tmp/err")"
}
check model.svg --budget-sweep=8,64 $chosen "$model"
model_curves model.svg "perplexity against the budget"
check model.png --budget-sweep=8,64 --target ppl=1.05 $chosen "$model"
model_curves model.png "perplexity against the budget"
# And its report: a panel more, the log-probability lost over the steps.
check model_report.pdf --report $chosen "$model"
model_curves model_report.pdf "log-probability lost over the steps"
grep -qF "wrote $tmp/model_report.pdf: 3 panels of" "$tmp/err" ||
	fail "the model's report: not 3 panels of attention figures: $(cat "$tmp/err")"
policies=

# The README's figure is what the command beside it draws: the same
# command draws a PNG of the same size.
figure=docs/figures/ppl_vs_budget.png
if [ -f "$figure" ]; then
	"$bin" --quiet --budget-sweep=8,16,32,64,128,256 --plot "$tmp/readme.png" "$model" >/dev/null ||
		fail "the README's figure: exit status $?"
	size() { head -c 24 "$1" | tail -c 8 | od -An -tx1 | tr -d ' \n'; }
	[ "$(size "$tmp/readme.png")" = "$(size "$figure")" ] ||
		fail "the README's figure is $(size "$figure"), the command draws $(size "$tmp/readme.png")"
else
	fail "no $figure"
fi

# A file that cannot be written: one line, exit 1.
"$bin" --report --plot "$tmp/no/such/folder/x.svg" scenes/cat_sat.json >/dev/null 2>"$tmp/err"
status=$?
[ "$status" = 1 ] || fail "unwritable plot: exit status $status, expected 1"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "unwritable plot: not one line: $(cat "$tmp/err")"
[ "$failed" = 0 ] && echo "plots drawn, a curve per policy each"
exit "$failed"
