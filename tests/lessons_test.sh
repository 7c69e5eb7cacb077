#!/bin/sh
# The lesson path is kept in one place, scenes/lessons.txt: the table of
# lessons in scenes/README.md must list the same scenes in the same order,
# numbered 1, 2, ..., and every listed scene must exist. A line names a
# scene relative to scenes/ ("../models/stories260K/story_model.json"); the
# table opens it from the source root ("models/stories260K/story_model.json").
# Usage: lessons_test.sh SOURCE_ROOT
set -eu
root=$1
list=$(grep -v '^[[:space:]]*#' "$root/scenes/lessons.txt" | grep -v '^[[:space:]]*$')
table=$(sed -n '/^## Lessons$/,/^## /p' "$root/scenes/README.md" |
	sed -n 's/^| *\([0-9][0-9]*\) *| *`build\/h2o-tui \([^`]*\)`.*/\1 \2/p')
i=0
for name in $list; do
	i=$((i + 1))
	[ -f "$root/scenes/$name" ] || { echo "scenes/lessons.txt: $name: no such scene"; exit 1; }
done
# scenes/NAME, with a leading scenes/../ dropped.
expected=$(i=0; for name in $list; do
	i=$((i + 1))
	case $name in
	../*) echo "$i ${name#../}" ;;
	*) echo "$i scenes/$name" ;;
	esac
done)
if [ "$table" != "$expected" ]; then
	echo "scenes/README.md's table of lessons does not follow scenes/lessons.txt:"
	echo "README:"; echo "$table"
	echo "lessons.txt:"; echo "$expected"
	exit 1
fi
echo "ok: $i lessons"
