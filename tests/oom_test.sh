#!/bin/bash
# oom_test.sh: running out of memory is said, with its own exit status.
#
# The modes that compute over a whole scene (--trace, --report, --report
# --json, --budget-sweep and --budget-sweep --json, and the headless
# frames' timeline) run under a memory limit that lets the scene load but
# not the engine that the mode then sets up. Each must exit 4 with exactly one
# line on stderr, "h2o-tui: out of memory while ...", and nothing on stdout:
# no partial table, no partial JSON.
#
# The limit is measured, not guessed, so the test holds on any machine: the
# smallest limit at which the scene loads is found by doubling, then
# bisection (to 256 KiB), with a run that loads it and then stops at a
# usage error (--heavy 0 --recent 0: exit 2, checked only after loading),
# and the modes get that limit plus 32 MiB, a tenth of what their engines
# need for the scene's 200,000 tokens. Under AddressSanitizer, which
# reserves terabytes of address space, the limit is on each allocation
# instead (below); a build that can be limited neither way
# (ThreadSanitizer) skips (77).
#
# Usage: tests/oom_test.sh H2O_TUI   (from the source root, as Meson runs it)
. "$(dirname "$0")/lib.sh"

# A long scene in a few bytes: 200,000 generated tokens of dim 4.
scene=$tmp/long.json
printf '{"heavy": 2, "recent": 2, "dim": 4, "generate": {"count": 200000, "seed": 1}}\n' >"$scene"

# How memory is limited. A plain build runs under a virtual memory limit
# (ulimit -v, in a subshell), in KiB. AddressSanitizer reserves terabytes
# of address space, so under it the limit is on each allocation instead
# (ASAN_OPTIONS max_allocation_size_mb, in MiB, with malloc returning NULL
# past it): the engines' arrays for 200,000 tokens are each over 100 MiB,
# the scene's own under 8 MiB, so the same runs fail at the same places.
# ASan's warning line for each refused allocation is not the program's
# and is left out of what is compared.
if { (ulimit -v $((4 * 1024 * 1024)) && exec "$bin" --version) >/dev/null 2>&1; } 2>/dev/null; then
	unit=KiB step=256 top=$((4 * 1024 * 1024)) extra=$((32 * 1024))
	limited() {
		local kib=$1
		shift
		(ulimit -v "$kib" && exec "$bin" "$@") >"$tmp/out" 2>"$tmp/err"
	}
elif ASAN_OPTIONS=help=1 "$bin" --version 2>&1 | grep -q 'max_allocation_size_mb'; then
	unit=MiB step=1 top=4096 extra=0
	limited() {
		local mib=$1 status
		shift
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=$mib \
			"$bin" "$@" >"$tmp/out" 2>"$tmp/err.asan"
		status=$?
		grep -v -E '^==[0-9]+==WARNING: AddressSanitizer failed to allocate 0x[0-9a-f]+ bytes$' \
			"$tmp/err.asan" >"$tmp/err"
		return "$status"
	}
else
	echo "1..0 # SKIP this build runs neither under ulimit -v nor with ASan's allocation limit"
	exit 77
fi

# least LO STATUS PRECISION ARGS...: the smallest limit, from LO up to the
# top, at which ARGS exit STATUS, to PRECISION $unit. The limit is doubled
# from LO (or from PRECISION) until ARGS exit STATUS, then the last two
# limits are bisected: the runs far below the answer fail early and cost
# little, and only a few land near it, where a run costs the most.
least() {
	local lo=$1 want=$2 precision=$3 hi mid
	shift 3
	hi=$((lo > precision ? 2 * lo : 2 * precision))
	while [ "$hi" -lt "$top" ]; do
		if limited "$hi" "$@"; [ $? = "$want" ]; then
			break
		fi
		lo=$hi hi=$((2 * hi))
	done
	[ "$hi" -le "$top" ] || hi=$top
	while [ $((hi - lo)) -gt "$precision" ]; do
		mid=$(((lo + hi) / 2))
		if limited "$mid" "$@"; [ $? = "$want" ]; then
			hi=$mid
		else
			lo=$mid
		fi
	done
	echo "$hi"
}

limited "$top" --trace --heavy 0 --recent 0 "$scene"
[ $? = 2 ] || { echo "FAIL: the scene does not load in $top $unit: $(head -c 300 "$tmp/err")"; exit 1; }
loads=$(least 0 2 "$step" --trace --heavy 0 --recent 0 "$scene")
limit=$((loads + extra))
echo "# the scene loads in $loads $unit; the modes run in $limit $unit"

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
oom "building the timeline" --headless --keys q

# The screen's timelines, one per head, built before the first headless
# frame: out of memory after some heads are built and before the others
# frees each built one once (it was freed twice: the C library aborted
# after the promised line). A shipped scene of eight heads, at limits
# spread from the one it loads in to the one its frames are drawn in:
# each run draws its frames (exit 0) or says it ran out (exit 4, one
# line, nothing on stdout), whichever heads the limit lets it build.
# Only under a virtual memory limit: every head allocates arrays of the
# same sizes, so a limit on each allocation cannot part built heads from
# unbuilt ones.
heads=scenes/heads_8.json
if [ "$unit" = KiB ]; then
	load=$(least 0 2 "$step" --headless --heavy 0 --recent 0 "$heads")
	# To 4 MiB: the limits below are eighths of a span of some 100 MiB,
	# and each run near the answer builds the eight heads' timelines.
	draw=$(least "$load" 0 4096 --headless --keys q "$heads")
	echo "# $heads loads in $load KiB and draws its frames in $draw KiB"
	saw_oom=0
	for i in 0 1 2 3 4 5 6 7; do
		kib=$((load + (draw - load) * i / 8))
		limited "$kib" --headless --keys q "$heads"
		status=$?
		case $status in
		0) [ -s "$tmp/out" ] || fail "--headless $heads in $kib KiB: exit 0 and no frame" ;;
		4)
			saw_oom=1
			[ ! -s "$tmp/out" ] || fail "--headless $heads in $kib KiB: stdout is not empty"
			printf 'h2o-tui: out of memory while building the timeline\n' |
				diff -u - "$tmp/err" >/dev/null ||
				fail "--headless $heads in $kib KiB: stderr is '$(head -c 300 "$tmp/err")'"
			;;
		*) fail "--headless $heads in $kib KiB: exit status $status, expected 0 or 4: $(head -c 300 "$tmp/err")" ;;
		esac
	done
	[ "$saw_oom" = 1 ] || fail "--headless $heads: no limit from $load to $draw KiB ran out of memory"
fi

[ "$failed" = 0 ] && echo "every mode says it ran out of memory"
[ "$failed" = 0 ]
