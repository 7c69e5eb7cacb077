#!/bin/sh
# Install what h2o-tui needs to build and test (Debian 12 packages), then
# configure and build it in ./build. Safe to run again: it installs only
# what is missing and reuses an existing build directory.
set -eu
cd "$(dirname "$0")/.."

packages="meson ninja-build gcc pkg-config libcjson-dev libncurses-dev libcmocka-dev libcairo2-dev libfontconfig-dev tmux libpcre2-dev"
# CI also runs the suite under valgrind, fuzzes the scene loader with
# clang's libFuzzer (its runtime is libclang-rt-14-dev, which clang only
# recommends), checks with strace that nothing writes a file, and checks
# the formatting with clang-format (Debian 12's is version 14, the one the
# root .clang-format is written for), and checks the model's test fixture
# against the NumPy forward pass of tools/llama2c.py.
[ -z "${CI:-}" ] || packages="$packages valgrind clang libclang-rt-14-dev strace clang-format python3-numpy"

missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup: installing$missing"
	if [ "$(id -u)" = 0 ]; then
		sudo=""
	elif command -v sudo >/dev/null 2>&1; then
		sudo="sudo"
	else
		echo "setup: need root (or sudo) to install:$missing" >&2
		exit 1
	fi
	$sudo apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi

# In CI, warnings are errors.
werror=false
[ -z "${CI:-}" ] || werror=true
if [ -f build/build.ninja ]; then
	meson setup --reconfigure -Dwerror=$werror build >/dev/null
else
	meson setup -Dwerror=$werror build >/dev/null
fi
meson compile -C build
