#!/bin/bash
# Every word the screen uses as a label or a figure's name is defined in
# the help's pages of words (pages 3 to 7): the labels are collected from
# the frames of every shipped scene (its first and last step, each policy
# beside H2O, the cache map), from the header's figures, the cache panels'
# headings, the rules over the panels and the status line.
# Lesson 8, the model scene, adds its model panel's lines (perplexity, the
# next tokens, the ▼ count), and every mark its frames show must be on the
# help's pages.
# Usage: glossary_test.sh H2O_TUI SOURCE_ROOT
set -eu
bin=$1
cd "$2"
rows=36
frames() { "$bin" --headless --size "120x$rows" "$@"; }
# The words pages: what the frames after the third to the seventh page
# turns show (the caches, the figures, the marks, the policies), lower-cased, a
# word a line.
pages=$(frames --keys '?,space,space,space,space,space,space' scenes/cat_sat.json |
	awk -v r=$((rows + 1)) 'NR > 3 * r')
glossary=$(printf '%s\n' "$pages" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9+/\n-' '\n' | sort -u)
# Lesson 8's frames, read once: with the model panel (t) at the step its
# note is about, at the end and beside the other policies.
model=$(frames --keys 't,6,6,enter,right,end,c,c,c' models/stories260K/story_model.json)
# The labels: the header's right part (from "step"), the first two rows of
# the middle (the cache panels' headings), every rule's label and the
# status line, in every scene, at the start and the end, beside each policy
# (the policy strip, at 120 columns, in its tight form on lesson 8).
labels=$({ for s in scenes/*.json; do
	frames --keys 'right,end,c,c,c,M' "$s" | awk -v r=$((rows + 1)) '
		{ i = (NR - 1) % r }
		/^--- step/ { next }
		i == 1 { sub(/.*(  |… )(lesson|step) /, "step "); sub(/head [0-9]+\/[0-9]+ [^ ]*/, "head"); print }
		i == 4 || i == 5 || i == r - 2 { print }
		/^ *(─|-)(─|-)/ { print }'
done
# And lesson 8, the model scene: its frames with the model panel (t) at the
# step its note is about, at the end and beside the other policies, whose
# panel lines (the perplexity, the next tokens, the ▼ count) are labels too.
printf '%s\n' "$model" | awk -v r=$((rows + 1)) '
	{ i = (NR - 1) % r }
	/^--- step/ { next }
	i == 1 { sub(/.*(  |… )(lesson|step) /, "step "); sub(/head [0-9]+\/[0-9]+ [^ ]*/, "head"); print }
	i == 4 || i == 5 || i == r - 2 { print }
	/^ *(─|-)(─|-)/ { print }
	/^ (perplexity so far|next): / { print }'
} | sed 's/│/ /g; s/|/ /g; s/[^ ]*…//g; s/“[^”]*”//g' | tr 'A-Z' 'a-z' |
	# The strip's tight form: a short name and a percent ("wi90"), the
	# name the label.
	sed -E 's/(^| |\[)(h2o|[a-z][a-z])[0-9]+/\1\2 /g' | tr -c 'a-z0-9+\n-' '\n' |
	grep '[a-z]' | grep -v '^-' | sort -u)
# Words of the sentences around the labels, not labels themselves.
plain=" a of the to its and with per for is at all one what s e hides sliding map lists cell "
plain+=" position positions memory these itself prediction under yet "
missing=0
for w in $labels; do
	case "$plain" in *" $w "*) continue ;; esac
	if ! grep -qx -- "$w" <<<"$glossary"; then
		echo "not in the help's words: $w"
		missing=1
	fi
done
# The marks: every mark the model scene's frames show (▼ on the model's
# text, the heat rows' ◂ and ▸ sums, ✗, ↑, », …) is on the help's pages.
shown=$model
for m in ▼ ◂ ▸ ✗ ↑ » …; do
	if grep -qF -- "$m" <<<"$shown" && ! grep -qF -- "$m" <<<"$pages"; then
		echo "not in the help's marks: $m"
		missing=1
	fi
done
grep -qF ▼ <<<"$shown" || { echo "the model scene's frames show no ▼: this check checks nothing"; missing=1; }
grep -qx perplexity <<<"$labels" || { echo "no label perplexity: the model panel was not read"; missing=1; }
[ "$missing" -eq 0 ] && echo "ok: $(wc -w <<<"$labels") labels defined"
