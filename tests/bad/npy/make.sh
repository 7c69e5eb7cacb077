#!/bin/sh
# Write the .npy test files of tests/bad/npy/ byte by byte, without numpy.
#
#   tests/bad/npy/make.sh [DIR]    write them into DIR (default: beside
#                                  this script)
#   tests/bad/npy/make.sh --check  write them into a temporary directory and
#                                  compare with the committed files (a test)
#
# Each file is the .npy format written out by hand (numpy's NEP 1): the magic
# \x93NUMPY, the version, the header length (2 bytes little-endian for 1.0,
# 4 for 2.0 and 3.0), the header dict padded with spaces to a multiple of 64
# bytes and ended by a newline, then the numbers little-endian. The good
# files are small matrices of exact values (0, 0.5, 1, 2, -1); every bad
# file breaks one rule that src/scene/npy.c or src/scene/scene_npy.c must
# catch (tests/bad/npy_*.json name them, as npy/NAME: a scene names files in
# its own folder or below). POSIX sh and printf only, so any machine can
# rebuild them and get the same bytes. tests/npy is a link here, for the
# callers that knew the old place.
set -eu
here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" = --check ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	sh "$here/make.sh" "$tmp"
	status=0
	for f in "$tmp"/*.npy; do
		name=$(basename "$f")
		cmp -s "$f" "$here/$name" || {
			echo "tests/bad/npy/$name differs from what make.sh writes" >&2
			status=1
		}
	done
	for f in "$here"/*.npy; do
		[ -e "$tmp/$(basename "$f")" ] || {
			echo "tests/bad/npy/$(basename "$f") is not written by make.sh" >&2
			status=1
		}
	done
	[ "$status" = 0 ] && echo "tests/bad/npy: every .npy file is what make.sh writes"
	exit "$status"
fi
out=${1:-$here}

# Numbers, little-endian, as printf escapes.
f4_0='\000\000\000\000'
f4_half='\000\000\000\077'
f4_1='\000\000\200\077'
f4_2='\000\000\000\100'
f4_m1='\000\000\200\277'
f4_nan='\000\000\300\177'
f8_0='\000\000\000\000\000\000\000\000'
f8_half='\000\000\000\000\000\000\340\077'
f8_1='\000\000\000\000\000\000\360\077'
f8_2='\000\000\000\000\000\000\000\100'
f8_minf='\000\000\000\000\000\000\360\377'

# byte N: the byte of value N
byte() {
	# shellcheck disable=SC2059
	printf "$(printf '\\%03o' "$1")"
}

# npy FILE MAJOR DICT DATA [HLEN]: a .npy file of version MAJOR.0 with the
# header DICT and the data DATA (printf escapes). HLEN overrides the header
# length written in the file (for the bad files that lie about it).
npy() {
	file=$1 major=$2 dict=$3 data=$4
	if [ "$major" = 1 ]; then prefix=10; else prefix=12; fi
	len=$((prefix + ${#dict} + 1))
	pad=$(((64 - len % 64) % 64))
	header=$(printf '%s%*s' "$dict" "$pad" '')
	hlen=${5:-$((${#header} + 1))}
	{
		printf '\223NUMPY'
		byte "$major"
		byte 0
		byte $((hlen % 256))
		byte $((hlen / 256 % 256))
		if [ "$major" != 1 ]; then
			byte $((hlen / 65536 % 256))
			byte $((hlen / 16777216 % 256))
		fi
		printf '%s\n' "$header"
		# shellcheck disable=SC2059
		printf "$data"
	} >"$out/$file"
}

d() { # a dict of DESCR, FORTRAN and SHAPE, as numpy writes it
	printf "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" "$1" "$2" "$3"
}

# The good files: 3 x 2 matrices, one per version and type.
npy good_q_f4.npy 1 "$(d '<f4' False '(3, 2)')" "$f4_1$f4_0$f4_0$f4_1$f4_half$f4_half"
npy good_k_f8.npy 1 "$(d '<f8' False '(3, 2)')" "$f8_1$f8_0$f8_half$f8_half$f8_0$f8_2"
npy good_v_v2.npy 2 "$(d '<f4' False '(3, 2)')" "$f4_2$f4_0$f4_0$f4_m1$f4_1$f4_1"
npy good_v_v3.npy 3 "$(d '<f8' False '(3, 2)')" "$f8_2$f8_0$f8_0$f8_1$f8_1$f8_1"
# Keys in another order, double quotes, no trailing comma: still a dict.
npy good_k_plain.npy 1 "{\"shape\": (3,2), \"descr\": \"<f4\", \"fortran_order\": False}" \
	"$f4_1$f4_0$f4_half$f4_half$f4_0$f4_2"
# float16: 1, 0.5, 2, -1, the smallest subnormal 2^-24 and the largest 65504.
npy float16.npy 1 "$(d '<f2' False '(3, 2)')" '\000\074\000\070\000\100\000\274\001\000\377\173'

six4="$f4_1$f4_0$f4_0$f4_1$f4_half$f4_half"
# The bad files.
npy bigendian.npy 1 "$(d '>f4' False '(3, 2)')" "$six4"
npy fortran.npy 1 "$(d '<f4' True '(3, 2)')" "$six4"
npy int32.npy 1 "$(d '<i4' False '(3, 2)')" "$six4"
# float16 with an infinity where the 2 was.
npy float16_inf.npy 1 "$(d '<f2' False '(3, 2)')" '\000\074\000\070\000\174\000\274\001\000\377\173'
npy rank1.npy 1 "$(d '<f4' False '(6,)')" "$six4"
npy rank3.npy 1 "$(d '<f4' False '(3, 2, 1)')" "$six4"
npy wrong_dim.npy 1 "$(d '<f4' False '(3, 3)')" "$six4$f4_0$f4_0$f4_0"
npy two_rows.npy 1 "$(d '<f4' False '(2, 2)')" "$f4_1$f4_0$f4_0$f4_1"
npy zero_rows.npy 1 "$(d '<f4' False '(0, 2)')" ""
npy nan.npy 1 "$(d '<f4' False '(3, 2)')" "$f4_1$f4_0$f4_0$f4_nan$f4_half$f4_half"
npy minus_inf.npy 1 "$(d '<f8' False '(3, 2)')" "$f8_1$f8_0$f8_0$f8_1$f8_minf$f8_half"
npy truncated.npy 1 "$(d '<f4' False '(3, 2)')" "$f4_1$f4_0$f4_0$f4_1$f4_half"
npy extra.npy 1 "$(d '<f4' False '(3, 2)')" "$six4$f4_0"
npy version4.npy 4 "$(d '<f4' False '(3, 2)')" "$six4"
npy header_too_long.npy 2 "$(d '<f4' False '(3, 2)')" "$six4" 20000
npy truncated_header.npy 1 "$(d '<f4' False '(3, 2)')" "" 200
npy unknown_key.npy 1 "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), 'x': 1}" "$six4"
npy missing_shape.npy 1 "{'descr': '<f4', 'fortran_order': False}" "$six4"
npy duplicate_key.npy 1 "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 2)}" "$six4"
npy shape_not_tuple.npy 1 "$(d '<f4' False '(6)')" "$six4"
npy not_a_dict.npy 1 "[('descr', '<f4')]" "$six4"
# rep N DATA: DATA N times.
rep() {
	r='' i=0
	while [ "$i" -lt "$1" ]; do
		r="$r$2" i=$((i + 1))
	done
	printf '%s' "$r"
}
# Layered files, shapes (layers, heads, n, dim), for the scenes whose
# shapes disagree (tests/bad/npy_layout_*.json): q has 2 layers of 4
# query heads, 3 tokens of dim 2; the rest each break one agreement.
npy layers_q.npy 1 "$(d '<f4' False '(2, 4, 3, 2)')" "$(rep 48 "$f4_half")"
npy layers_k.npy 1 "$(d '<f4' False '(2, 2, 3, 2)')" "$(rep 24 "$f4_1")"
npy layers_kv3.npy 1 "$(d '<f4' False '(2, 3, 3, 2)')" "$(rep 36 "$f4_1")"
npy layers_kv1.npy 1 "$(d '<f4' False '(2, 1, 3, 2)')" "$(rep 12 "$f4_1")"
npy layers_one.npy 1 "$(d '<f4' False '(2, 3, 2)')" "$(rep 12 "$f4_1")"
npy layers_rows.npy 1 "$(d '<f4' False '(2, 2, 2, 2)')" "$(rep 16 "$f4_1")"
npy layers_no_heads.npy 1 "$(d '<f4' False '(2, 0, 3, 2)')" ""
npy layers_257.npy 1 "$(d '<f2' False '(257, 1, 1, 2)')" "$(rep 514 '\000\000')"
npy heads_65.npy 1 "$(d '<f2' False '(65, 1, 2)')" "$(rep 130 '\000\000')"
printf 'hello, numpy\n' >"$out/not_npy.npy"
: >"$out/empty.npy"
