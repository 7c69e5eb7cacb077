#!/bin/sh
# quiet_stages_test.sh: the stages that load and measure write nothing.
#
# Every writer of the program lives in the output stage (src/output/), the
# plot stage and the backends (design §9): the libraries given here (the
# text, scene, model, engine and timeline stages) must not call any of
# libc's writers. nm lists the symbols each archive needs from elsewhere;
# none may be one of them (with _FORTIFY_SOURCE's __*_chk forms).
#
# Usage: tests/quiet_stages_test.sh LIBRARY.a...
set -u
[ $# -ge 1 ] || { echo "usage: $0 LIBRARY.a..." >&2; exit 99; }
command -v nm >/dev/null 2>&1 || { echo "nm is missing: skipped"; exit 77; }
writers='^(__)?(v?f?printf|v?dprintf|fwrite|fwrite_unlocked|f?puts|fputc|putc|putchar|putc_unlocked|perror|write|writev|pwrite)(_chk)?$'
failed=0
for lib in "$@"; do
	if ! found=$(nm -u "$lib" 2>/dev/null); then
		echo "FAIL: nm cannot read $lib"
		failed=1
		continue
	fi
	calls=$(printf '%s\n' "$found" | awk '{print $NF}' | grep -E "$writers" | sort -u | tr '\n' ' ')
	if [ -n "$calls" ]; then
		echo "FAIL: $(basename "$lib") writes: $calls"
		failed=1
	else
		echo "ok: $(basename "$lib") writes nothing"
	fi
done
exit "$failed"
