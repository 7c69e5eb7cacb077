# Sourced by the tests that run the NumPy tools: sets py to a python3 that
# imports NumPy ($PYTHON first, then python3, then Debian's own), or skips
# the test (exit 77) when there is none.
py=
for p in ${PYTHON:-} python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' >/dev/null 2>&1; then
		py=$p
		break
	fi
done
if [ -z "$py" ]; then
	echo "skip: no python3 with NumPy (apt-get install python3-numpy)"
	exit 77
fi
