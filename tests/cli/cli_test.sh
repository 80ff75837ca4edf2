#!/usr/bin/env bash
# CLI tests of the gpuhist command: formats, inputs, exit codes and messages, --output safety,
# standard input, listings, demo, streamed input, weights, images, plots.
#
# usage: cli_test.sh GPUHIST WORKDIR SECTION
#   SECTION: formats | inputs | npy | errors | output | stdin | tty | listing | strategies | demo
#            | npyout | stream | weights | devices | images | plot | nd | hybrid | writers
#            | detach
# Exit 0 when every check passes, 1 otherwise (each failure printed with the command).
set -u
G=$1
W=$2
SECTION=$3
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) # before the cd below: relative paths work
rm -rf "$W/$SECTION"
mkdir -p "$W/$SECTION"
cd "$W/$SECTION" || exit 1

fails=0
checks=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
# run CMD...: stdout -> out.txt, stderr -> err.txt, status -> $rc. Standard input is empty.
run() {
    "$@" >out.txt 2>err.txt </dev/null
    rc=$?
    checks=$((checks + 1))
}
# ok CMD...: must exit 0 with nothing on stderr.
ok() {
    run "$@"
    [ "$rc" = 0 ] || fail "exit $rc (wanted 0): $* -- $(head -c 300 err.txt)"
    [ -s err.txt ] && fail "stderr not empty: $* -- $(head -c 300 err.txt)"
    return 0
}
# err STATUS PATTERN CMD...: must exit STATUS with exactly one line on stderr matching PATTERN
# (grep -E) and nothing on stdout.
err() {
    local want=$1 pat=$2
    shift 2
    run "$@"
    [ "$rc" = "$want" ] || fail "exit $rc (wanted $want): $* -- $(head -c 300 err.txt)"
    local n
    n=$(wc -l <err.txt)
    [ "$n" = 1 ] || fail "stderr has $n lines (wanted 1): $* -- $(head -c 300 err.txt)"
    grep -Eq -- "$pat" err.txt || fail "stderr lacks /$pat/: $* -- $(cat err.txt)"
    grep -q '^gpuhist: ' err.txt || fail "stderr does not start with 'gpuhist: ': $*"
    [ -s out.txt ] && fail "stdout not empty on error: $*"
    return 0
}
# has PATTERN FILE: fixed-string match.
has() {
    grep -Fq -- "$1" "$2" || fail "$2 lacks '$1': $(head -c 400 "$2")"
}
hasnt() {
    grep -Fq -- "$1" "$2" && fail "$2 has '$1'"
    return 0
}
# line N TEXT FILE: line N of FILE is exactly TEXT.
line() {
    local got
    got=$(sed -n "$1p" "$3")
    [ "$got" = "$2" ] || fail "line $1 of $3 is '$got', wanted '$2'"
}

# Minimal .npy writer: mknpy OUT DESCR SHAPE FORTRAN DATAFILE [VERSION]
mknpy() {
    mknpy_dict "$1" "{'descr': '$2', 'fortran_order': $4, 'shape': $3, }" "$5" "${6:-1}"
}
# mknpy_dict OUT DICT DATAFILE VERSION
mknpy_dict() {
    local out=$1 dict=$2 data=$3 ver=$4
    local pre=10
    [ "$ver" = 1 ] || pre=12
    # Pad with spaces so magic + header is a multiple of 64, ending in a newline (NumPy's layout).
    local len=$((${#dict} + 1))
    local pad=$(((64 - (pre + len) % 64) % 64))
    local hlen=$((len + pad))
    {
        printf '\x93NUMPY'
        printf "\\x$(printf %02x "$ver")\\x00"
        printf "\\x$(printf %02x $((hlen & 255)))\\x$(printf %02x $((hlen >> 8)))"
        [ "$ver" = 1 ] || printf '\x00\x00'
        printf '%s' "$dict"
        printf "%${pad}s" ""
        printf '\n'
        cat "$data"
    } >"$out"
}

cli_formats() {
    printf '\x00\x01\x01\xff' >u8.bin
    # A table of many bins measures its columns on several threads: every row of the 300001
    # as wide as the header (the widest edge of each column was found)
    printf '\x00\x00\x00\x3f\x00\x00\x80\x3f' >two.f32
    ok "$G" -B cpu -t f32 -b 300001 -r -3.3:7.1 -f table two.f32
    awk 'NR == 1 { w = length($0) } NR > 1 && NF == 4 { rows++; if (length($0) != w) bad++ }
         END { exit bad > 0 || rows != 300001 }' out.txt ||
        fail "table of 300001 bins: rows of another width than the header, or missing"
    ok "$G" -B cpu -f csv u8.bin
    line 1 "bin,lower,upper,count" out.txt
    line 2 "0,0,1,1" out.txt
    line 3 "1,1,2,2" out.txt
    line 257 "255,255,256,1" out.txt
    [ "$(wc -l <out.txt)" = 257 ] || fail "u8 default: $(wc -l <out.txt) lines, wanted 257"

    ok "$G" -B cpu -f json u8.bin
    has '"edges": [0, 1, 2, 3,' out.txt
    has '"counts": [1, 2, 0,' out.txt
    has '"underflow": 0' out.txt
    has '"overflow": 0' out.txt
    has '"nan": 0' out.txt
    has '"total": 4' out.txt
    has '"backend": "cpu"' out.txt
    has '"strategy": "' out.txt

    # Table when stdout is not a terminal: no bars, the tallies in a footer.
    ok "$G" -B cpu u8.bin
    has "bin" out.txt
    has "lower" out.txt
    has "count" out.txt
    has "underflow 0, overflow 0, nan 0, total 4" out.txt
    hasnt "#" out.txt
    ok "$G" -B cpu -f table u8.bin
    has "total 4" out.txt

    # Explicit even range, text input; edges and counts.
    printf '1.5, 2.5\n3.5 # a comment, 9\n' >t.txt
    ok "$G" -B cpu --text -b 3 -r 0:6 -f csv t.txt
    line 2 "0,0,2,1" out.txt
    line 3 "1,2,4,2" out.txt
    line 4 "2,4,6,0" out.txt

    # Auto range (default for wide types): min:max, last edge inclusive.
    printf '1 2 3 4\n' >a.txt
    ok "$G" -B cpu --text -b 3 -f json a.txt
    has '"edges": [1, 2, 3, 4]' out.txt
    has '"counts": [1, 1, 2]' out.txt
    has '"last_edge_inclusive": true' out.txt

    # -r is half-open unless --last-inclusive.
    ok "$G" -B cpu --text -b 3 -r 1:4 -f json a.txt
    has '"counts": [1, 1, 1]' out.txt
    has '"overflow": 1' out.txt
    ok "$G" -B cpu --text -b 3 -r 1:4 --last-inclusive -f json a.txt
    has '"counts": [1, 1, 2]' out.txt
    has '"overflow": 0' out.txt

    # Explicit edges, inline and from a file.
    printf '0.5 1 7 -3 nan\n' >e.txt
    ok "$G" -B cpu --text -e 0,1,5,10 -f json e.txt
    has '"edges": [0, 1, 5, 10]' out.txt
    has '"counts": [1, 1, 1]' out.txt
    has '"underflow": 1' out.txt
    has '"nan": 1' out.txt
    has '"total": 5' out.txt
    printf '0\n1\n5\n10\n' >edges.txt
    ok "$G" -B cpu --text -e @edges.txt -f json e.txt
    has '"counts": [1, 1, 1]' out.txt

    # bincount: --integer without -b reaches the data's maximum.
    printf -- '-1 0 2 2\n' >i.txt
    ok "$G" -B cpu --text -t i32 --integer 0 -f json i.txt
    has '"edges": [0, 1, 2, 3]' out.txt
    has '"counts": [1, 0, 2]' out.txt
    has '"underflow": 1' out.txt
    ok "$G" -B cpu --text -t i32 --integer -1 -b 2 -f json i.txt
    has '"counts": [1, 1]' out.txt
    has '"overflow": 2' out.txt

    # Clamp: outliers go into the end bins and are still reported.
    printf -- '-1 1 5\n' >c.txt
    ok "$G" -B cpu --text -b 2 -r 0:2 --outliers clamp -f json c.txt
    has '"counts": [1, 2]' out.txt
    has '"underflow": 1' out.txt
    has '"overflow": 1' out.txt
    ok "$G" -B cpu --text -b 2 -r 0:2 --outliers drop -f json c.txt
    has '"counts": [0, 1]' out.txt

    # Channels: arrays per channel, count_N columns.
    printf '\x00\x01\x02\x00\x01\x05' >rgb.bin
    ok "$G" -B cpu --channels 3:2 -f json rgb.bin
    has '"counts": [[2, 0,' out.txt
    has '], [0, 2, 0' out.txt
    has '"channel_index": [0, 1]' out.txt
    has '"total": 4' out.txt
    ok "$G" -B cpu --channels 3 -f csv -r 0:8 -b 8 rgb.bin
    line 1 "bin,lower,upper,count_0,count_1,count_2" out.txt
    line 2 "0,0,1,2,0,0" out.txt
    line 4 "2,2,3,0,0,1" out.txt
    line 7 "5,5,6,0,0,1" out.txt

    # Edges print as the shortest text that reads back exactly (float32 edges for f32 data).
    printf '0.1 0.2\n' >f.txt
    ok "$G" -B cpu --text -t f32 -r 0:1 -b 10 -f json f.txt
    has '"edges": [0, 0.10000000149011612, 0.20000000298023224,' out.txt
    ok "$G" -B cpu --text -t f64 -r 0:1 -b 10 -f json f.txt
    has '"edges": [0, 0.1, 0.2, 0.30000000000000004,' out.txt

    # Defaults for 8/16-bit types: one bin per value over the whole type.
    printf '\x80\x7f' >i8.bin
    ok "$G" -B cpu -t i8 -f csv i8.bin
    line 2 "0,-128,-127,1" out.txt
    line 257 "255,127,128,1" out.txt
    printf '\x00\x00\xff\xff' >u16.bin
    ok "$G" -B cpu -t u16 -f csv u16.bin
    [ "$(wc -l <out.txt)" = 65537 ] || fail "u16 default: $(wc -l <out.txt) lines"
    line 65537 "65535,65535,65536,1" out.txt
    # ... and with an integer range, one bin per value of the range.
    ok "$G" -B cpu -r 0:4 -f csv u8.bin
    [ "$(wc -l <out.txt)" = 5 ] || fail "u8 -r 0:4: $(wc -l <out.txt) lines, wanted 5"

    # --verbose: backend, device, strategy, time, throughput on stderr; stdout unchanged.
    run "$G" -B cpu -v -f csv u8.bin
    [ "$rc" = 0 ] || fail "verbose exit $rc"
    has "backend: cpu" err.txt
    has "device:" err.txt
    has "strategy:" err.txt
    has "throughput:" err.txt
    line 3 "1,1,2,2" out.txt
}

cli_inputs() {
    # Raw types: little-endian f32 and i64.
    printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\xc0\x7f' >f32.bin # 1.0 2.0 NaN
    ok "$G" -B cpu -t f32 -r 0:4 -b 4 -f json f32.bin
    has '"counts": [0, 1, 1, 0]' out.txt
    has '"nan": 1' out.txt
    has '"total": 3' out.txt
    printf '\xff\xff\xff\xff\xff\xff\xff\xff\x05\x00\x00\x00\x00\x00\x00\x00' >i64.bin # -1 5
    ok "$G" -B cpu -t i64 --integer -1 -f json i64.bin
    has '"counts": [1, 0, 0, 0, 0, 0, 1]' out.txt
    ok "$G" -B cpu -t int64 -r -2:6 -b 4 -f json i64.bin
    has '"counts": [1, 0, 0, 1]' out.txt

    # Text: commas, tabs, CRLF, comments, signs, exponents, inf.
    printf '1,2\t3\r\n# whole-line comment\n+4 5e0 -inf inf\n' >mix.txt
    ok "$G" -B cpu --text -r 0:10 -b 10 -f json mix.txt
    has '"counts": [0, 1, 1, 1, 1, 1, 0, 0, 0, 0]' out.txt
    has '"underflow": 1' out.txt
    has '"overflow": 1' out.txt
    # Empty text input: all counts zero.
    printf '\n# nothing\n' >empty.txt
    ok "$G" -B cpu --text -r 0:1 -b 2 -f json empty.txt
    has '"counts": [0, 0]' out.txt
    has '"total": 0' out.txt
    # Text parsed as an integer type.
    printf '0 255 255\n' >u8.txt
    ok "$G" -B cpu --text -t u8 -f csv u8.txt
    line 257 "255,255,256,2" out.txt
    # A subnormal range whose edges would go down: refused, as NumPy refuses it.
    printf '0\n' >zero.txt
    err 1 'too many bins for the range' "$G" -B cpu --text -t f64 -b 9 \
        -r -4.9406564584124654e-324:1.9762625833649862e-323 -f csv zero.txt
    err 1 'too many bins for the range' "$G" -B cpu --text -t f32 -b 100 -r 1:1.0000001 zero.txt
}

cli_npy() {
    printf '\x05\x00\x00\x00\x06\x00\x00\x00\x07\x00\x00\x00' >le.dat
    printf '\x00\x00\x00\x05\x00\x00\x00\x06\x00\x00\x00\x07' >be.dat
    mknpy le.npy '<i4' '(3,)' False le.dat
    mknpy be.npy '>i4' '(3,)' False be.dat
    mknpy v2.npy '<i4' '(3,)' False le.dat 2
    mknpy v3.npy '<i4' '(3,)' False le.dat 3
    for f in le.npy be.npy v2.npy v3.npy; do
        ok "$G" -B cpu -r 0:8 -b 8 -f json $f
        has '"counts": [0, 0, 0, 0, 0, 1, 1, 1]' out.txt
        has '"dtype": "i32"' out.txt
    done
    # Name does not matter: the magic decides.
    cp le.npy le.data
    ok "$G" -B cpu -r 0:8 -b 8 -f json le.data
    has '"counts": [0, 0, 0, 0, 0, 1, 1, 1]' out.txt
    # ... and --raw reads the same bytes as raw u8.
    ok "$G" -B cpu --raw -f json le.data
    has '"dtype": "u8"' out.txt
    # 2-D shape; Fortran order is fine without channels.
    printf '\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\x40\x00\x00\x00\x00\x00\x00\x08\x40\x00\x00\x00\x00\x00\x00\x10\x40' >f8.dat
    mknpy f8.npy '<f8' '(2, 2)' True f8.dat
    ok "$G" -B cpu -b 3 -f json f8.npy
    has '"edges": [1, 2, 3, 4]' out.txt
    has '"counts": [1, 1, 2]' out.txt
    # bool is read as the values 0 and 1.
    printf '\x01\x00\x01' >b.dat
    mknpy b.npy '|b1' '(3,)' False b.dat
    ok "$G" -B cpu -r 0:2 -f json b.npy
    has '"counts": [1, 2]' out.txt
    # 3 channels as the last axis of a C-order array.
    printf '\x00\x01\x02\x00\x01\x05' >rgb.dat
    mknpy rgb.npy '|u1' '(2, 3)' False rgb.dat
    ok "$G" -B cpu --channels 3:1 -r 0:2 -f json rgb.npy
    has '"counts": [[2, 0]]' out.txt

    # Rejected: clear one-line messages, exit 1.
    printf '\x00\x00\x00\x00\x00\x00\x00\x00' >c8.dat
    mknpy c8.npy '<c8' '(1,)' False c8.dat
    err 1 "c8.npy: dtype '<c8': complex" "$G" c8.npy
    mknpy o.npy '|O' '(1,)' False c8.dat
    err 1 "o.npy: dtype '\|O'.*object" "$G" o.npy
    # float16 in either byte order (four zeros; 1.0, 2.0, NaN, -inf big-endian); bfloat16 has no
    # .npy code of its own ('<V2' from ml_dtypes): refused, naming the way round
    mknpy f2.npy '<f2' '(4,)' False c8.dat
    ok "$G" -B cpu -b 2 -r 0:1 -f json f2.npy
    has '"counts": [4, 0]' out.txt
    printf '\x3c\x00\x40\x00\x7e\x00\xfc\x00' >f2be.dat
    mknpy f2be.npy '>f2' '(4,)' False f2be.dat
    ok "$G" -B cpu -b 2 -r 0:4 -f json f2be.npy
    has '"counts": [1, 1]' out.txt
    has '"underflow": 1' out.txt
    has '"nan": 1' out.txt
    mknpy v2.npy '<V2' '(4,)' False c8.dat
    err 1 "v2.npy: dtype '<V2': void; a bfloat16 array saved by ml_dtypes" "$G" v2.npy
    mknpy_dict s.npy "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }" c8.dat 1
    err 1 "s.npy: structured" "$G" s.npy
    mknpy fo.npy '|u1' '(2, 3)' True rgb.dat
    err 1 "fo.npy: a Fortran-order .npy cannot be read with --channels" "$G" --channels 3 fo.npy
    mknpy short.npy '<i4' '(4,)' False le.dat
    err 1 "short.npy: truncated .npy" "$G" short.npy
    printf 'hello' >bad.npy
    err 1 "bad.npy: not a .npy file" "$G" bad.npy
    printf '\x93NUMPY\x01\x00\x10\x00{"descr": 1}   \n' >junk.npy
    err 1 "junk.npy: malformed .npy header" "$G" junk.npy
    printf '\x93NUMPY\x09\x00\x10\x00' >ver.npy
    err 1 "ver.npy: .npy format version 9" "$G" ver.npy
    # A type that contradicts the header is an option conflict: exit 2.
    err 2 "--type f32 conflicts with the dtype '<i4'" "$G" -t f32 le.npy
}

cli_errors() {
    printf '\x00\x01\x02' >three.bin
    err 1 "no-such-file: cannot open" "$G" no-such-file
    err 1 "\\.: is a directory" "$G" .
    err 1 "three.bin: size 3 bytes is not a multiple of the sample size 2" "$G" -t u16 three.bin
    err 1 "three.bin: size 3 bytes is not a multiple of the pixel size 2" "$G" --channels 2 three.bin
    printf '1 2\n3\nabc 4\n' >bad.txt
    err 1 "bad.txt:3: 'abc' is not a number" "$G" --text bad.txt
    printf '1\n1.5\n' >frac.txt
    err 1 "frac.txt:2: '1.5' is not an integer" "$G" --text -t i32 frac.txt
    printf '300\n' >big.txt
    err 1 "big.txt:1: '300' is out of range" "$G" --text -t u8 big.txt
    printf -- '-1\n' >neg.txt
    err 1 "neg.txt:1: '-1' is negative" "$G" --text -t u32 neg.txt
    printf '1e999\n' >huge.txt
    err 1 "huge.txt:1: '1e999' is out of range for f64" "$G" --text huge.txt
    printf '1 2 3\n' >odd.txt
    err 1 "odd.txt: 3 samples is not a multiple of 2 channels" "$G" --text --channels 2 odd.txt

    printf '\x00' >one.bin
    err 2 "unknown option '--frobnicate'" "$G" --frobnicate one.bin
    err 2 "unknown option '-Q'" "$G" -Q one.bin
    err 2 "-b: expected a number of bins" "$G" -b 0 one.bin
    err 2 "--bins: expected a number of bins" "$G" --bins x one.bin
    err 2 "option -b needs a value" "$G" one.bin -b
    err 2 "-r 5:1: LO must be below HI" "$G" -r 5:1 one.bin
    err 2 "--range: expected LO:HI" "$G" --range abc one.bin
    err 2 "--range 0:inf: 'inf' is not finite" "$G" --range 0:inf one.bin
    err 2 "-r 0:x: 'x' is not a number" "$G" -r 0:x one.bin
    err 2 "-r: expected LO:HI" "$G" -r :1 one.bin
    # A number too large for a double says so (not "out of range for f64 for type f64").
    err 2 "-r 0:1e400: '1e400' is beyond the range of a double" "$G" -r 0:1e400 one.bin
    err 2 "-r -1e400:0: '-1e400' is beyond the range of a double" "$G" -r -1e400:0 one.bin
    err 2 "--edges: '1e400' is beyond the range of a double" "$G" -e 0,1e400 one.bin
    hasnt "for type" err.txt
    err 2 "--range, --edges and --integer conflict" "$G" -r 0:1 -e 0,1 one.bin
    err 2 "--range, --edges and --integer conflict" "$G" -r 0:1 --integer 0 one.bin
    err 2 "--bins conflicts with --edges" "$G" -b 3 -e 0,1 one.bin
    err 2 "--edges: edges must be strictly increasing \(edge 2 = 1 after 2\)" "$G" -e 0,2,1 one.bin
    err 2 "--edges: 'x' is not a number" "$G" -e 0,x one.bin
    err 2 "--edges: need at least 2 edges" "$G" -e 5 one.bin
    err 2 "--edges: 'inf' is not finite" "$G" -e 0,inf one.bin
    printf '0\ninf\n' >inf.txt
    err 2 "inf.txt: edge 1 is not finite" "$G" -e @inf.txt one.bin
    # An empty item (a stray comma) is refused, not skipped; white space around items is fine.
    err 2 "--edges: edge 2 is empty" "$G" -e 0,1, one.bin
    err 2 "--edges: edge 1 is empty" "$G" -e 0,,1 one.bin
    err 2 "--edges: edge 0 is empty" "$G" -e ,0,1 one.bin
    err 2 "--edges: edge 0 is empty" "$G" -e '' one.bin
    ok "$G" -B cpu -e ' 0, 1 ,2' -f json one.bin
    has '"edges": [0, 1, 2]' out.txt
    err 2 "nofile.txt: cannot open" "$G" -e @nofile.txt one.bin
    err 2 "-t: unknown type 'f128'" "$G" -t f128 one.bin
    err 1 "one.bin: size 1 bytes is not a multiple of the sample size 2 \\(f16" "$G" -t f16 one.bin
    err 2 "-B: unknown backend 'gpu'" "$G" -B gpu one.bin
    err 2 "--strategy nope: no such strategy" "$G" -B cpu -s nope one.bin
    err 2 "--channels 5: need 1 <= A <= C <= 4" "$G" --channels 5 one.bin
    err 2 "--channels 3:4" "$G" --channels 3:4 one.bin
    err 2 "--channels: expected C or C:A" "$G" --channels a one.bin
    err 2 "--outliers: expected drop or clamp" "$G" --outliers keep one.bin
    err 2 "--format: expected table, csv or json" "$G" --format xml one.bin
    err 2 "more than one input" "$G" one.bin one.bin
    err 2 "option --text takes no value" "$G" --text=1 one.bin
    err 2 "--text, --raw and --npy conflict" "$G" --text --raw one.bin
    err 2 "--integer 300: above the largest u8 value 255" "$G" --integer 300 one.bin
    err 2 "--integer: expected an integer" "$G" --integer 1.5 one.bin
    printf '1.5\n' >float.txt
    err 2 "--integer needs integer samples, float.txt holds f64" "$G" --text --integer 0 float.txt
    err 2 "-j: expected a number of threads" "$G" -j -1 one.bin
    # A device that does not exist is an error, also with the auto backend (which falls back to
    # the CPU, device 0, when CUDA cannot open it).
    err 1 "--device 99: no such device \(.*which has only device 0" "$G" --device 99 one.bin
    err 1 "backend cpu: no device 1" "$G" -B cpu --device 1 one.bin
    ok "$G" --device 0 -f json one.bin
    # A backend that is not compiled in (or has no device) is not a usage error.
    if ! "$G" --version | grep -q cuda; then
        err 1 "backend cuda is not compiled into this build" "$G" -B cuda one.bin
    fi
    if ! "$G" --version | grep -q opencl; then
        err 1 "backend opencl is not compiled into this build" "$G" -B opencl one.bin
    fi

    # -b RULE (NumPy's bin-count rules; their counts and edges: numpy_crosscheck): what they do
    # not take is refused before anything is read, one line, exit 2
    err 2 "^gpuhist: -b fd \\(a bin-count rule\\) conflicts with --weights$" \
        "$G" -t f64 -b fd --weights w.bin d.f64
    err 2 "^gpuhist: -b auto \\(a bin-count rule\\) conflicts with --integer$" \
        "$G" -b auto --integer 0 one.bin
    err 2 "^gpuhist: -b scott \\(a bin-count rule\\) conflicts with --dims$" \
        "$G" --dims 2 -b scott one.bin
    err 2 "conflicts with --channels with more than one histogrammed channel$" \
        "$G" --channels 2 -b sqrt one.bin
    err 2 "^gpuhist: --numpy-rules: expected 1 or 2 \\(NumPy's major version\\), got '3'$" \
        "$G" -b fd --numpy-rules 3 one.bin
    # f32 data without -r (0.1, 0.7 and the float just below 0.2): NumPy 2's float32 edges by
    # default (--numpy-rules 2), whose edge 1 is that float; NumPy 1.x's (edges in double, then
    # rounded: edge 1 is 0.2) with --numpy-rules 1. NumPy 2.5.2 and 1.24.2 count 1 1 0 0 0 1 and
    # 2 0 0 0 0 1 (numpy_crosscheck compares many more with the installed NumPy)
    printf '\xcd\xcc\xcc\x3d\x33\x33\x33\x3f\xcc\xcc\x4c\x3e' >f32lin.bin
    for v in "" "--numpy-rules 2" "--numpy-rules 1"; do
        ok "$G" -t f32 -b 6 $v -f csv f32lin.bin
        case "$v" in
        *1) want='0,0.10000000149011612,0.20000000298023224,2' ;;
        *) want='0,0.10000000149011612,0.19999998807907104,1' ;;
        esac
        [ "$(sed -n 2p out.txt)" = "$want" ] || fail "-b 6 $v on f32: $(cat out.txt)"
        # read whole (a pipe) as streamed (a file): the same bytes
        "$G" -t f32 -b 6 $v -f csv - <f32lin.bin >pipe.txt 2>err.txt
        cmp -s out.txt pipe.txt || fail "-b 6 $v on f32 from a pipe differs: $(cat pipe.txt)"
    done
    err 2 "^gpuhist: -b: expected a number of bins from 1 to 2147483648 or a rule \\(auto, " \
        "$G" -b fdx one.bin
    # a rule reads a pipe whole: sturges on 10 values is ceil(log2(10) + 1) = 5 bins over [1, 4]
    printf '1 2 2 3 3 3 4 4 4 4\n' >rule.txt
    checks=$((checks + 1))
    "$G" --text -b sturges -f csv - <rule.txt >out.txt 2>err.txt
    [ "$(cat out.txt)" = "$(printf 'bin,lower,upper,count\n0,1,1.6,1\n1,1.6,2.2,2\n2,2.2,2.8,0\n3,2.8,3.4,3\n4,3.4,4,4')" ] ||
        fail "-b sturges from a pipe: $(cat out.txt err.txt)"
    # the same rule under NumPy 1.x's rules (the same here: f64 data)
    "$G" --text -b sturges --numpy-rules 1 -f csv rule.txt >out1.txt 2>err.txt
    cmp -s out.txt out1.txt || fail "-b sturges --numpy-rules 1 differs: $(cat out1.txt err.txt)"
}

cli_output() {
    printf '\x00\x01\x01\xff' >u8.bin
    ok "$G" -B cpu -f csv u8.bin
    cp out.txt expected.csv
    ok "$G" -B cpu -f csv -o result.csv u8.bin
    [ -s out.txt ] && fail "-o: stdout not empty"
    cmp -s result.csv expected.csv || fail "-o result.csv differs from stdout output"
    # The file gets the ordinary permissions, not mkstemp's 0600.
    [ -r result.csv ] || fail "result.csv not readable"
    perms=$(stat -c %a result.csv)
    [ "$perms" = "$(printf '%o' $((0666 & ~0$(umask))))" ] || fail "result.csv mode $perms"
    # A failed run leaves neither a new file nor a changed old one, nor a temporary.
    err 1 "missing.bin: cannot open" "$G" -f csv -o new.csv missing.bin
    [ -e new.csv ] && fail "failed run created new.csv"
    err 1 "missing.bin: cannot open" "$G" -f csv -o result.csv missing.bin
    cmp -s result.csv expected.csv || fail "failed run changed result.csv"
    printf 'x\n' >bad.txt
    err 1 "bad.txt:1: 'x' is not a number" "$G" --text -o result.csv bad.txt
    cmp -s result.csv expected.csv || fail "failed run changed result.csv"
    ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary files left: $(ls ./*.tmp.*)"
    err 1 "no/such/dir/x.csv: cannot create the output file" "$G" -o no/such/dir/x.csv u8.bin
    # -o - is standard output.
    ok "$G" -B cpu -f csv -o - u8.bin
    cmp -s out.txt expected.csv || fail "-o - differs"
    # Writing JSON to a file and overwriting an existing one, whose permissions are kept.
    chmod 640 result.csv
    ok "$G" -B cpu -f json -o result.csv u8.bin
    has '"total": 4' result.csv
    [ "$(stat -c %a result.csv)" = 640 ] || fail "replaced result.csv has mode $(stat -c %a result.csv)"
    # A name of standard output is standard output.
    checks=$((checks + 1))
    "$G" -B cpu -f csv -o /dev/stdout u8.bin 2>err.txt | cat >piped.csv
    cmp -s piped.csv expected.csv || fail "-o /dev/stdout into a pipe: $(cat err.txt)"

    # A symbolic link stays a link: its final target gets the output (relative links are read
    # from the link's directory; a dangling link creates its target, as a shell's > does).
    printf 'old\n' >target.csv
    ln -s target.csv link.csv
    ln -s link.csv link2.csv
    ok "$G" -B cpu -f csv -o link2.csv u8.bin
    [ -L link.csv ] && [ -L link2.csv ] || fail "-o through links replaced a link: $(ls -l)"
    cmp -s target.csv expected.csv || fail "the link's target did not get the output"
    mkdir -p a b
    ln -s ../b/t.csv a/dangling.csv
    ok "$G" -B cpu -f csv -o a/dangling.csv u8.bin
    [ -L a/dangling.csv ] || fail "a/dangling.csv is no longer a link"
    cmp -s b/t.csv expected.csv || fail "the dangling link's target did not get the output"
    ls ./*.tmp.* a/*.tmp.* b/*.tmp.* >/dev/null 2>&1 && fail "temporary files left: $(ls -R)"

    # A FIFO is written straight to: its reader gets the bytes, and it stays a FIFO.
    mkfifo out.fifo
    timeout 20 cat out.fifo >got.csv &
    catpid=$!
    ok "$G" -B cpu -f csv -o out.fifo u8.bin
    wait $catpid || fail "the FIFO's reader did not finish"
    [ -p out.fifo ] || fail "out.fifo is no longer a FIFO"
    cmp -s got.csv expected.csv || fail "the FIFO's reader got other bytes: $(head -c 200 got.csv)"
    # So is a device. A write error is one message and exit 1; the device stays a device.
    ok "$G" -B cpu -o /dev/null u8.bin
    [ -c /dev/null ] || fail "/dev/null is no longer a character device"
    if [ -c /dev/full ]; then
        err 1 "^gpuhist: /dev/full: write error: No space left on device$" \
            "$G" -B cpu -f csv -o /dev/full u8.bin
        [ -c /dev/full ] || fail "/dev/full is no longer a character device"
        # Standard output checks its writes too.
        checks=$((checks + 1))
        "$G" -B cpu -f csv u8.bin >/dev/full 2>err.txt
        src=$?
        [ $src = 1 ] || fail "histogram >/dev/full: exit $src"
        has "gpuhist: standard output: write error: No space left on device" err.txt
    fi

    # The input is never overwritten: not by name, nor through a link, nor as standard input.
    mknpy in.npy '|u1' '(4,)' False u8.bin
    sum=$(cksum <in.npy)
    err 2 "in.npy: the output would overwrite the input in.npy \(the same file\)" \
        "$G" -B cpu -o in.npy in.npy
    ln -s in.npy in-link.npy
    ln in.npy in-hard.npy
    err 2 "in-link.npy: the output would overwrite the input in.npy" "$G" -o in-link.npy in.npy
    err 2 "in-hard.npy: the output would overwrite the input in-link.npy" \
        "$G" -o in-hard.npy in-link.npy
    checks=$((checks + 1))
    "$G" -B cpu -o in.npy - <in.npy >out.txt 2>err.txt
    src=$?
    [ $src = 2 ] || fail "-o in.npy - <in.npy: exit $src"
    has "in.npy: the output would overwrite standard input" err.txt
    [ "$(cksum <in.npy)" = "$sum" ] || fail "the input in.npy changed"
    [ -L in-link.npy ] || fail "in-link.npy is no longer a link"
    # A directory is refused.
    mkdir -p adir
    err 1 "adir: is a directory" "$G" -B cpu -o adir u8.bin

    # A signal while the output is being produced removes the temporary file, and the exit
    # status still says which signal ended gpuhist. The input is a FIFO that stays open and
    # empty, so gpuhist waits in read() with its temporary file created.
    mkfifo in.fifo
    for sig in TERM INT HUP PIPE; do
        checks=$((checks + 1))
        # Job control: a background job of a script otherwise starts with SIGINT ignored.
        set -m
        "$G" -B cpu -f csv -o sig.csv in.fifo 2>err.txt &
        pid=$!
        set +m
        exec 3<>in.fifo # read-write: does not wait for gpuhist to open it
        for _ in $(seq 100); do
            ls sig.csv.tmp.* >/dev/null 2>&1 && break
            sleep 0.1
        done
        ls sig.csv.tmp.* >/dev/null 2>&1 || fail "SIG$sig: no temporary file while reading"
        kill -s "$sig" "$pid"
        { wait "$pid"; } 2>/dev/null # no "Hangup" notice from bash
        src=$?
        exec 3>&-
        [ "$src" = $((128 + $(kill -l "$sig"))) ] || fail "SIG$sig: exit status $src"
        ls sig.csv* >/dev/null 2>&1 && fail "SIG$sig left $(ls sig.csv*)"
    done
    return 0
}

cli_stdin() {
    printf '\x00\x01\x01\xff' >u8.bin
    ok "$G" -B cpu -f csv u8.bin
    cp out.txt expected.csv
    checks=$((checks + 1))
    "$G" -B cpu -f csv - <u8.bin >s1.csv 2>err.txt || fail "stdin with - failed: $(cat err.txt)"
    cmp -s s1.csv expected.csv || fail "stdin with - differs"
    # No file and a non-terminal standard input: read it.
    checks=$((checks + 1))
    cat u8.bin | "$G" -B cpu -f csv >s2.csv 2>err.txt || fail "piped stdin failed: $(cat err.txt)"
    cmp -s s2.csv expected.csv || fail "piped stdin differs"
    checks=$((checks + 1))
    printf '1 2 3\n' | "$G" -B cpu --text -b 2 -f json >s3.json 2>err.txt || fail "text stdin failed"
    grep -Fq '"counts": [1, 2]' s3.json || fail "text stdin counts: $(cat s3.json)"
    # Errors name standard input.
    checks=$((checks + 1))
    printf 'x\n' | "$G" --text >s4.txt 2>err.txt
    [ $? = 1 ] || fail "bad text on stdin: wanted exit 1"
    grep -Fq "standard input:1: 'x' is not a number" err.txt || fail "stdin message: $(cat err.txt)"
    checks=$((checks + 1))
    printf '\x00\x01\x02' | "$G" -t u16 >s5.txt 2>err.txt
    [ $? = 1 ] || fail "odd stdin: wanted exit 1"
    grep -Fq "standard input: size 3 bytes is not a multiple" err.txt || fail "stdin message: $(cat err.txt)"
    # A larger piped input (several MiB: the buffer grows).
    checks=$((checks + 1))
    head -c 40000000 /dev/zero | "$G" -B cpu -f json >s6.json 2>err.txt || fail "big stdin failed"
    grep -Fq '"total": 40000000' s6.json || fail "big stdin total: $(grep total s6.json)"
}

# On a terminal (script(1) provides one): bars in the table, a progress bar for slow input.
cli_tty() {
    if ! command -v script >/dev/null 2>&1; then
        echo "script(1) not installed: terminal checks skipped"
        return 0
    fi
    printf '\x00\x01\x01\xff' >u8.bin
    checks=$((checks + 1))
    env -u LC_ALL -u LC_CTYPE LANG=C script -qec "$G -B cpu -b 4 u8.bin" /dev/null >tty.txt 2>&1 || fail "tty table failed: $(cat tty.txt)"
    grep -q '###' tty.txt || fail "no bars on a terminal: $(cat tty.txt)"
    checks=$((checks + 1))
    env -u LC_ALL -u LC_CTYPE LANG=C.UTF-8 script -qec "$G -B cpu -b 4 u8.bin" /dev/null >tty.txt 2>&1 || fail "tty table failed"
    grep -q '█' tty.txt || fail "no UTF-8 bars on a UTF-8 terminal: $(cat tty.txt)"
    # ... but -f csv stays plain.
    checks=$((checks + 1))
    script -qec "$G -B cpu -b 4 -f csv u8.bin" /dev/null >tty.txt 2>&1
    grep -q '#' tty.txt && fail "bars in CSV on a terminal"
    # Input that takes more than a second shows progress on stderr; --no-progress hides it.
    slow="(head -c 1000000 /dev/zero; sleep 1.6; head -c 1000000 /dev/zero)"
    checks=$((checks + 1))
    script -qec "bash -c '$slow | $G -B cpu -f json - >/dev/null'" /dev/null >tty.txt 2>&1
    grep -q 'reading standard input' tty.txt || fail "no progress bar for slow input: $(cat tty.txt)"
    checks=$((checks + 1))
    script -qec "bash -c '$slow | $G -B cpu --no-progress -f json - >/dev/null'" /dev/null >tty.txt 2>&1
    grep -q 'reading' tty.txt && fail "progress bar despite --no-progress"
    return 0
}

cli_listing() {
    ok "$G" --version
    grep -Eq '^gpuhist [0-9]+\.[0-9]+\.[0-9]+ \(library [0-9.]+; backends: cpu' out.txt ||
        fail "--version: $(cat out.txt)"
    ok "$G" --help
    has "--bins" out.txt
    has "--list-strategies" out.txt
    has "Exit status" out.txt
    ok "$G" demo --help
    has "--size" out.txt
    ok "$G" --list-strategies
    cp out.txt table.txt
    has "cpu-reference" out.txt
    has "cpu-serial" out.txt
    has "cpu-threads" out.txt
    grep -Eq '^strategy +backend +mechanism, supports, seed$' out.txt || fail "header: $(sed -n 1p out.txt)"
    grep -Eq '^cpu-reference +cpu +plain loop' out.txt || fail "cpu-reference line: $(grep cpu-reference out.txt)"
    # The table fits 80 columns when not on a terminal (UTF-8 continuation bytes take none).
    width=$(LC_ALL=C tr -d '\200-\277' <out.txt | awk '{ if (length > m) m = length } END { print m }')
    [ "$width" -le 80 ] || fail "--list-strategies is $width columns wide"
    has "supports: all dtypes" out.txt
    has "seed: 001" out.txt
    ok "$G" --list-strategies -f json
    line 1 "[" out.txt
    has '"name": "cpu-reference", "backend": "cpu"' out.txt
    # JSON keeps every field whole, and every strategy has a table row starting with its name
    # and backend (the lines of a row that wrap start with white space).
    has '"supports": "all dtypes, all bin kinds, any bins, channels, ROI", "summary": "plain loop' out.txt
    sed -n 's/^  {"name": "\([^"]*\)", "backend": "\([^"]*\)".*/\1 \2/p' out.txt >names.txt
    [ -s names.txt ] || fail "no names in the JSON listing"
    awk 'NR > 1 && /^[^ ]/ { print $1, $2 }' table.txt | cmp -s - names.txt ||
        fail "table rows differ from the JSON listing: $(awk 'NR > 1 && /^[^ ]/' table.txt)"
    # On a terminal, the table fits its width.
    if command -v script >/dev/null 2>&1; then
        checks=$((checks + 1))
        script -qec "stty cols 60; $G --list-strategies" /dev/null >tty.txt 2>&1
        width=$(tr -d '\r' <tty.txt | LC_ALL=C tr -d '\200-\277' | awk '{ if (length > m) m = length } END { print m }')
        [ "$width" -le 60 ] || fail "--list-strategies on a 60-column terminal is $width wide"
        grep -q '^cpu-reference' tty.txt || fail "--list-strategies on a terminal: $(head -3 tty.txt)"
    fi
    ok "$G" --list-devices -B cpu
    line 1 "cpu:" out.txt
    ok "$G" --list-devices
    has "cpu:" out.txt
    has "cuda:" out.txt
    has "opencl:" out.txt
    # Every listing checks its writes: a full disk is an error, not a silent success.
    if [ -c /dev/full ]; then
        for args in --help --version --list-strategies "--list-strategies -f json" \
            "--list-devices" "demo --help"; do
            checks=$((checks + 1))
            # shellcheck disable=SC2086
            "$G" $args >/dev/full 2>err.txt
            src=$?
            [ $src = 1 ] || fail "$args >/dev/full: exit $src"
            [ "$(cat err.txt)" = "gpuhist: standard output: write error: No space left on device" ] ||
                fail "$args >/dev/full: $(cat err.txt)"
        done
    fi
}

# Every registered CPU strategy, forced with -s, prints exactly what cpu-reference prints.
cli_strategies() {
    printf '1.5 2.5 -7 3e10 nan 0 0 0 0.25 0.75 1 2 3 4 5 6 7 8 9 10\n' >d.txt
    printf '\x00\x01\x01\xff\x10\x10\x10\x80\x7f' >u8.bin
    strategies=$("$G" --list-strategies | awk 'NR > 1 && $2 == "cpu" { print $1 }')
    [ -n "$strategies" ] || fail "no cpu strategies listed"
    for args in "--text -b 7 -r 0:10 d.txt" "--text -b 5 d.txt" "--text -e 0,1,2.5,100 d.txt" \
        "--text -t i64 --integer -8 -b 20 d.txt.int" "u8.bin" "-b 10 -r 0:200 --outliers clamp u8.bin"; do
        printf -- '-7 0 0 1 2 3 4 5 100\n' >d.txt.int
        # shellcheck disable=SC2086
        "$G" -B cpu -s cpu-reference -f csv $args >ref.csv 2>err.txt || {
            fail "cpu-reference failed on $args: $(cat err.txt)"
            continue
        }
        for s in $strategies; do
            checks=$((checks + 1))
            # shellcheck disable=SC2086
            "$G" -B cpu -s "$s" -j 3 -f csv $args >got.csv 2>err.txt
            src=$?
            # A forced strategy may decline a request (exit 2: unsupported); anything else fails.
            [ $src = 2 ] && continue
            [ $src = 0 ] || {
                fail "$s failed on $args: $(cat err.txt)"
                continue
            }
            cmp -s ref.csv got.csv || fail "$s differs from cpu-reference on: $args"
        done
    done
}

# -f npy: the counts as a uint64 .npy, the edges beside it in X.edges.npy (-o X.npy); read back
# with NumPy when GPUHIST_PYTHON (or python3) has it, else the header bytes are checked.
# npy_header FILE: the header dict of a .npy v1.0 file, after checking magic and version.
npy_header() {
    local magic
    magic=$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')
    [ "$magic" = 934e554d50590100 ] || fail "$1: magic and version are '$magic'"
    local lo hi
    lo=$(head -c 9 "$1" | tail -c 1 | od -An -tu1 | tr -d ' ')
    hi=$(head -c 10 "$1" | tail -c 1 | od -An -tu1 | tr -d ' ')
    local hlen=$((lo + 256 * hi))
    [ $(((10 + hlen) % 64)) = 0 ] || fail "$1: data does not start at a multiple of 64"
    head -c $((10 + hlen)) "$1" | tail -c "$hlen"
}
cli_npyout() {
    printf '1.5 2.5 -7 3e10 nan 0 0 0 0.25 0.75 1 2 3 4 5 6 7 8 9 10\n' >d.txt
    ok "$G" -B cpu --text -b 7 -r 0:10 -f npy -o h.npy d.txt
    [ -f h.npy ] && [ -f h.edges.npy ] || fail "-f npy -o h.npy: $(ls)"
    npy_header h.npy >hdr.txt
    has "{'descr': '<u8', 'fortran_order': False, 'shape': (7,), }" hdr.txt
    npy_header h.edges.npy >hdr.txt
    has "{'descr': '<f8', 'fortran_order': False, 'shape': (8,), }" hdr.txt
    [ "$(wc -c <h.npy)" = $((128 + 7 * 8)) ] || fail "h.npy is $(wc -c <h.npy) bytes"
    [ "$(wc -c <h.edges.npy)" = $((128 + 8 * 8)) ] || fail "h.edges.npy is $(wc -c <h.edges.npy) bytes"
    # The counts as little-endian u64, after the 128-byte header.
    counts=$(tail -c 56 h.npy | od -An -tu8 -w56 | tr -s ' ' | sed 's/^ //')
    [ "$counts" = "6 3 2 1 2 1 1" ] || fail "h.npy counts: '$counts'"
    ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary file left: $(ls)"

    # Standard output (a file or a pipe): the counts only, the same bytes.
    checks=$((checks + 1))
    "$G" -B cpu --text -b 7 -r 0:10 -f npy d.txt >s.npy 2>err.txt || fail "-f npy to stdout failed"
    cmp -s s.npy h.npy || fail "-f npy on stdout differs from -o h.npy"
    [ -s err.txt ] && fail "-f npy to stdout: stderr $(cat err.txt)"
    # The tallies are not in the file: -v prints them on stderr.
    run "$G" -B cpu --text -b 7 -r 0:10 -f npy -o v.npy -v d.txt
    [ "$rc" = 0 ] || fail "-f npy -v: exit $rc"
    has "underflow 1, overflow 2, nan 1, total 20" err.txt
    has "strategy:" err.txt
    # Any other name gets .edges.npy appended; --channels gives shape (channels, bins).
    printf '\x00\x01\x02\x00\x01\x05' >rgb.bin
    ok "$G" -B cpu --channels 3:2 -f npy -o chan rgb.bin
    [ -f chan ] && [ -f chan.edges.npy ] || fail "-o chan: $(ls)"
    npy_header chan >hdr.txt
    has "'shape': (2, 256)" hdr.txt
    npy_header chan.edges.npy >hdr.txt
    has "'shape': (257,)" hdr.txt
    # Neither file is written unless both can be.
    mkdir -p blocked.edges.npy
    err 1 "blocked.edges.npy" "$G" -B cpu --text -b 7 -r 0:10 -f npy -o blocked.npy d.txt
    [ -e blocked.npy ] && fail "counts written although the edges file could not be"
    ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary file left: $(ls)"
    err 2 "expected table, csv or json, or npy" "$G" -f xml d.txt
    # Binary data to a terminal is refused.
    if command -v script >/dev/null 2>&1; then
        checks=$((checks + 1))
        script -qec "$G -B cpu --text -b 7 -r 0:10 -f npy d.txt" /dev/null >tty.txt 2>&1
        src=$?
        [ "$src" = 2 ] || fail "-f npy to a terminal: exit $src: $(cat tty.txt)"
        grep -q "binary data" tty.txt || fail "-f npy to a terminal: $(cat tty.txt)"
    fi

    # NumPy: np.load of both files equals a -f csv run of the same input, exactly.
    local py=${GPUHIST_PYTHON:-python3}
    if ! "$py" -c 'import numpy' >/dev/null 2>&1; then
        echo "no python3 with NumPy: npy contents checked through the header and bytes only"
        return 0
    fi
    awk 'BEGIN { srand(7); for (i = 0; i < 5000; ++i) printf "%.9g\n", rand() * 20 - 5 }' >r.txt
    for args in "--text -t f32 -b 1000 -r -3.7:12.9 r.txt" "--text -b 333 r.txt" \
        "--text -e -4,0,1e-3,0.1,2,15 r.txt" "--channels 3:2 rgb.bin" "--channels 3 -b 10 -r 0:8 rgb.bin"; do
        # shellcheck disable=SC2086
        "$G" -B cpu $args -f csv >ref.csv 2>err.txt || {
            fail "csv run failed: $args: $(cat err.txt)"
            continue
        }
        # shellcheck disable=SC2086
        "$G" -B cpu $args -f npy -o got.npy 2>err.txt || {
            fail "npy run failed: $args: $(cat err.txt)"
            continue
        }
        checks=$((checks + 1))
        "$py" - ref.csv got.npy got.edges.npy "$args" <<'PY' || fail "npy differs from csv: $args"
import csv, sys
import numpy as np
ref, counts_path, edges_path, args = sys.argv[1:5]
rows = list(csv.reader(open(ref)))
head, body = rows[0], rows[1:]
lower = [float(r[1]) for r in body]
upper = [float(r[2]) for r in body]
want_edges = np.array(lower + upper[-1:], dtype=np.float64)
want = np.array([[int(v) for v in r[3:]] for r in body], dtype=np.uint64).T
counts = np.load(counts_path)
edges = np.load(edges_path)
assert counts.dtype == np.dtype('<u8') and edges.dtype == np.dtype('<f8'), (counts.dtype, edges.dtype)
if "--channels" in args:
    assert counts.shape == want.shape, (counts.shape, want.shape)
else:
    assert counts.shape == (len(body),), counts.shape
    want = want[0]
assert np.array_equal(counts, want), (counts, want)
assert np.array_equal(edges, want_edges), (edges, want_edges)
PY
    done
}

cli_demo() {
    ok "$G" demo --size 1 -B cpu
    has "check: all 256 bins" out.txt
    has "equal cpu-reference" out.txt
    has "ran on cpu" out.txt
    has "float32 signal" out.txt
    has "total 1048576" out.txt
    # Bars only on a terminal, like the command's tables; none in a redirected file.
    grep -Eq '(#|█)' out.txt && fail "demo draws bars into a file: $(grep -E '(#|█)' out.txt | head -2)"
    if command -v script >/dev/null 2>&1; then
        checks=$((checks + 1))
        script -qec "$G demo --size 1 -B cpu" /dev/null >tty.txt 2>&1
        grep -Eq '(#|█)' tty.txt || fail "demo draws no bars on a terminal: $(head -c 400 tty.txt)"
    fi
    ok "$G" demo --size 1
    err 2 "demo takes no file" "$G" demo x.bin
    err 2 "--size: expected MiB" "$G" demo --size 0
    # A device that does not exist is an error, also with the auto backend.
    err 1 "demo: --device 99: no such device" "$G" demo --size 1 --device 99
    err 1 "demo: backend cpu: no device 3" "$G" demo --size 1 -B cpu --device 3
    if [ -c /dev/full ]; then
        checks=$((checks + 1))
        "$G" demo --size 1 -B cpu >/dev/full 2>err.txt
        src=$?
        [ $src = 1 ] || fail "demo >/dev/full: exit $src"
        has "gpuhist: standard output: write error: No space left on device" err.txt
    fi
}

# Streamed files (raw and .npy regular files go through the library in chunks) must give what
# the whole-input path gives (a pipe is read whole): 1 MiB chunks, sizes that are not multiples
# of a chunk, channels, auto range (a first pass over the file), big-endian .npy, .npy headers
# of several lengths.
cli_stream() {
    local py=${GPUHIST_PYTHON:-python3}
    "$py" - <<'PY' || { fail "cannot generate the stream test files"; return; }
import random, struct
r = random.Random(20261124)
open("u8.bin", "wb").write(r.randbytes(3 * 1024 * 1024 + 7))
vals = [r.random() * 2 - 0.5 for _ in range(700001)] + [float("nan"), float("inf"), -0.0]
open("f32.bin", "wb").write(struct.pack("<%df" % len(vals), *vals))
open("f64.bin", "wb").write(struct.pack("<%dd" % len(vals), *vals))
rgb = r.randbytes(3 * 400003)
open("rgb.bin", "wb").write(rgb)
def npy(name, descr, fmt, items, pad):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(items))
    header += " " * pad
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    with open(name, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(fmt % len(items), *items))
ints = [r.randrange(-2**40, 2**40) for _ in range(300001)]
npy("i64.npy", "<i8", "<%dq", ints, 0)
npy("i64pad.npy", "<i8", "<%dq", ints, 3000)
npy("f64be.npy", ">f8", ">%dd", vals, 100)
PY
    local f args
    for spec in "u8.bin:" "u8.bin:-b 17 -r 3:200" "f32.bin:-t f32" "f32.bin:-t f32 -b 1000 -r 0:1" \
        "f64.bin:-t f64 -e 0,0.25,0.5,1 --outliers clamp" "rgb.bin:--channels 3:2" \
        "i64.npy:" "i64pad.npy:-b 33" "f64be.npy:" "f64be.npy:-b 10 -r 0:1"; do
        f=${spec%%:*}
        args=${spec#*:}
        # shellcheck disable=SC2086
        GPUHIST_CHUNK_MIB=1 ok "$G" -B cpu $args -f csv "$f"
        cp out.txt streamed.txt
        # shellcheck disable=SC2086
        cat "$f" | "$G" -B cpu $args -f csv - >whole.txt 2>err.txt
        cmp -s streamed.txt whole.txt || fail "streamed $f ($args) differs from the whole read"
        cmp -s i64.npy i64pad.npy && fail "the padded header is not longer"
    done
    # The auto-range first pass on a device backend (the reader pool into the context's staging
    # memory, the device's min/max) finds what the CPU finds.
    if "$G" -B opencl --list-devices >/dev/null 2>&1; then
        for spec in "f32.bin:-t f32" "i64.npy:" "f64.bin:-t f64 -b 7"; do
            f=${spec%%:*}
            args=${spec#*:}
            # shellcheck disable=SC2086
            GPUHIST_CHUNK_MIB=1 "$G" -B opencl $args -f csv "$f" >got.txt 2>err.txt
            # shellcheck disable=SC2086
            cat "$f" | "$G" -B cpu $args -f csv - >want.txt 2>>err.txt
            cmp -s want.txt got.txt || fail "opencl auto range of $f differs: $(head -c 200 err.txt)"
            checks=$((checks + 1))
        done
    fi
    # A pipe declared raw streams too (bytes of a sample split across reads are carried over).
    for spec in "u8.bin:" "f32.bin:-t f32 -b 1000 -r 0:1" "rgb.bin:--channels 3:2"; do
        f=${spec%%:*}
        args=${spec#*:}
        # shellcheck disable=SC2086
        "$G" -B cpu $args -f csv "$f" >want.txt 2>err.txt
        # shellcheck disable=SC2086
        cat "$f" | GPUHIST_CHUNK_MIB=1 "$G" -B cpu --raw $args -f csv - >got.txt 2>err.txt
        cmp -s want.txt got.txt || fail "raw pipe of $f ($args) differs: $(head -c 200 err.txt)"
        checks=$((checks + 1))
    done
    head -c 1000001 f32.bin | "$G" -B cpu --raw -t f32 -r 0:1 - >got.txt 2>err.txt
    grep -q 'not a multiple of the sample size' err.txt || fail "odd raw pipe: $(cat err.txt)"
    # A read that fails in the middle of the file (injected): a clear error, exit 1, and no
    # output file, whichever reader (pread into staging buffers, or the CPU's mapping).
    for B in cpu opencl; do
        "$G" -B "$B" --list-devices >/dev/null 2>&1 || continue # no such backend here
        rm -f got.csv
        GPUHIST_FAULT_READ_AT=2500000 GPUHIST_CHUNK_MIB=1 err 1 'read error: Input/output error' \
            "$G" -B $B -t f32 -r 0:1 -f csv -o got.csv f32.bin
        [ -e got.csv ] && fail "a failed read left got.csv behind ($B)"
        ls got.csv.tmp.* >/dev/null 2>&1 && fail "a failed read left a temporary file ($B)"
    done
    # A file that shrinks while it is read (GPUHIST_FAULT_SHRINK_AT=N cuts it to N bytes just
    # before the part holding byte N is read or, mapped, counted): a clear error, exit 1, no
    # output file, nothing counted from past the new end, and no SIGBUS, whichever reader:
    # the counting threads' pread (u8, f32/4096, f32/2^20), the mapped windows of 2^24 bins and
    # of weighted input (the cut falls inside the mapped window being counted), the auto
    # range's first pass, a device's pread into staging buffers.
    for B in cpu opencl; do
        "$G" -B "$B" --list-devices >/dev/null 2>&1 || continue # no such backend here
        for spec in "u8.bin:" "f32.bin:-t f32 -b 4096 -r 0:1" "f32.bin:-t f32 -b 1048576 -r 0:1" \
            "f32.bin:-t f32 -b 16777216 -r 0:1" "f32.bin:-t f32 -b 100" \
            "f32.bin:-t f32 -b 1048576 -r 0:1 --weights w.f32 --weights-type f32"; do
            f=${spec%%:*}
            args=${spec#*:}
            cp "$f" shrink.bin
            head -c 2800016 /dev/zero >w.f32
            rm -f got.csv
            # shellcheck disable=SC2086
            GPUHIST_FAULT_SHRINK_AT=1500000 GPUHIST_CHUNK_MIB=1 \
                err 1 '^gpuhist: shrink.bin: the file became shorter while being read \(at byte [0-9]+\)$' \
                "$G" -B $B $args -f csv -o got.csv shrink.bin
            [ -e got.csv ] && fail "a file that shrank left got.csv behind ($B, $args)"
            ls got.csv.tmp.* >/dev/null 2>&1 && fail "a file that shrank left a temporary ($B, $args)"
            [ "$(wc -c <shrink.bin)" = 1500000 ] || fail "the test knob did not cut shrink.bin ($B, $args)"
        done
    done
    rm -f shrink.bin w.f32
    # The CPU backend counts a file on threads that each read 1 MiB pieces (GPUHIST_CHUNK_MIB=1;
    # the last one partial, pixels of 3 channels whole) into streams of their own (2^19 bins
    # too: cpu-serial's sub-counters carried unflushed from piece to piece): any -j, and
    # a forced strategy, give the whole read's counts and tallies (JSON; the time and the
    # strategy, which -j 1 changes, left out).
    for spec in "u8.bin:" "u8.bin:-b 17 -r 3:200" "f32.bin:-t f32 -b 1000 -r 0:1" \
        "f32.bin:-t f32 -b 524288 -r 0.25:0.75" \
        "f64.bin:-t f64 -e 0,0.25,0.5,1 --outliers clamp" "rgb.bin:--channels 3:2" \
        "i64pad.npy:-b 33 -r -1e12:1e12" "u8.bin:-s cpu-serial -b 7 -r 0:256"; do
        f=${spec%%:*}
        args=${spec#*:}
        # shellcheck disable=SC2086
        cat "$f" | "$G" -B cpu $args -f json - | grep -Ev '"(seconds|strategy)"' >whole.txt 2>err.txt
        for j in 1 2 3; do
            # shellcheck disable=SC2086
            GPUHIST_CHUNK_MIB=1 ok "$G" -B cpu -j $j $args -f json "$f"
            grep -Ev '"(seconds|strategy)"' out.txt >got.txt
            cmp -s got.txt whole.txt || fail "threads' counts of $f ($args, -j $j) differ from the whole read"
        done
    done
    # The CPU backend's auto-range first pass (threads pread 512 KiB pieces and find their min
    # and max): any thread count finds the range the whole read finds, with the extremes in the
    # last, partial piece; a -0 and a +0 as the minimum in different pieces, in either order
    # (zeros.f32: +0 first, zerosr.f32: -0 first): the same bins from 0; a read that fails in
    # the pass: one error, no output file.
    "$py" - <<'PY' || { fail "cannot generate the first-pass test files"; return; }
import random, struct
r = random.Random(20261127)
vals = [0.25 + 0.5 * r.random() for _ in range(400001)]  # 1.6 MB: 3 pieces and a part
vals[10], vals[300000], vals[-1], vals[-2] = 0.0, -0.0, 1.5, -0.0
open("zeros.f32", "wb").write(struct.pack("<%df" % len(vals), *vals))
vals[10], vals[300000] = -0.0, 0.0
open("zerosr.f32", "wb").write(struct.pack("<%df" % len(vals), *vals))
# the counts of 3 even bins over [0, 1.5] (last edge inclusive) of the float32 values
v32 = struct.unpack("<%df" % len(vals), open("zeros.f32", "rb").read())
c = [sum(1 for v in v32 if lo <= v < hi) for lo, hi in ((0, 0.5), (0.5, 1.0))]
c.append(sum(1 for v in v32 if 1.0 <= v <= 1.5))
open("zeros.want", "w").write("%d %d %d\n" % tuple(c))
PY
    read -r z0 z1 z2 <zeros.want
    for spec in "f32.bin:-t f32" "zeros.f32:-t f32 -b 3" "zerosr.f32:-t f32 -b 3" \
        "f64.bin:-t f64 --channels 2 -b 7" "i64.npy:-b 9"; do
        f=${spec%%:*}
        args=${spec#*:}
        # shellcheck disable=SC2086
        cat "$f" | "$G" -B cpu $args -f csv - >whole.txt 2>err.txt
        for j in 1 2 3; do
            # shellcheck disable=SC2086
            ok "$G" -B cpu -j $j $args -f csv "$f"
            cmp -s out.txt whole.txt || fail "first pass of $f ($args, -j $j) differs from the whole read"
        done
    done
    ok "$G" -B cpu -t f32 -b 3 -f csv zeros.f32
    line 2 "0,0,0.5,$z0" out.txt
    line 3 "1,0.5,1,$z1" out.txt
    line 4 "2,1,1.5,$z2" out.txt
    ok "$G" -B cpu -t f32 -b 3 -f csv zerosr.f32
    line 2 "0,0,0.5,$z0" out.txt
    # Interleaved channels: the range is the histogrammed channels' (R, G of RGB f32 pixels),
    # never the third's (+-3e38, inf, NaN there); a NaN and a -inf among R and G are skipped too.
    "$py" - <<'PY' || { fail "cannot generate the channel first-pass file"; return; }
import random, struct
r = random.Random(181818)
n = 200001  # 2.4 MB: several pieces
px = [[-1 + 3 * r.random(), -1 + 3 * r.random(), r.choice([3e38, -3e38, float("inf"), float("nan"), -1e30])]
      for _ in range(n)]
px[150000][0], px[199999][1], px[5][0], px[7][1] = 2.625, -1.75, float("nan"), float("-inf")
open("chan.f32", "wb").write(struct.pack("<%df" % (3 * n), *[v for p in px for v in p]))
PY
    for j in 1 2; do
        ok "$G" -B cpu -j $j -t f32 --channels 3:2 -b 1 -f csv chan.f32
        line 2 "0,-1.75,2.625,200000,200000" out.txt
    done
    rm -f got.csv
    GPUHIST_FAULT_READ_AT=1500000 err 1 'zeros.f32: read error: Input/output error' \
        "$G" -B cpu -t f32 -f csv -o got.csv zeros.f32
    [ -e got.csv ] && fail "a read failed in the first pass left got.csv behind"
    # Text above 4 MiB is parsed in pieces on all cores: the same values as the raw file, and a
    # bad token deep inside is reported with its own line number.
    "$py" - <<'PY' || { fail "cannot generate the text test files"; return; }
import random, struct
r = random.Random(7)
vals = [r.uniform(-1, 2) for _ in range(600000)]
with open("big.txt", "w") as f:
    for i in range(0, len(vals), 3):
        f.write(" ".join(repr(v) for v in vals[i:i + 3]) + ("  # a comment\n" if i % 9 == 0 else "\n"))
open("big.f64", "wb").write(struct.pack("<%dd" % len(vals), *vals))
lines = open("big.txt").read().split("\n")
lines[150001] = lines[150001] + " 1.5x"  # not a comment line (every 3rd line has one)
open("bad.txt", "w").write("\n".join(lines))
PY
    ok "$G" -B cpu --text -b 50 -r -1:2 -f csv big.txt
    cp out.txt text.txt
    ok "$G" -B cpu -t f64 -b 50 -r -1:2 -f csv big.f64
    cmp -s out.txt text.txt || fail "big text parsed in pieces differs from the raw file"
    err 1 "bad.txt:150002: '1.5x' is not a number" "$G" -B cpu --text -b 5 -r 0:1 bad.txt
    # Text with known bins is parsed block by block as it is read (a block is 4 chunks: 4 MiB
    # here), from a file or a pipe: the values of the raw file, line numbers across blocks, and
    # lines longer than a block (with a comment that spans blocks) cut between tokens.
    "$py" - <<'PY' || { fail "cannot generate the long-line text"; return; }
import random, struct
r = random.Random(11)
vals = [r.uniform(-1, 2) for _ in range(900000)]
with open("long.txt", "w") as f:
    f.write(" ".join(repr(v) for v in vals[:500000]))
    f.write(" # " + "a comment 1.5 " * 700000 + "\n")
    f.write(",".join(repr(v) for v in vals[500000:]) + "\n")
open("long.f64", "wb").write(struct.pack("<%dd" % len(vals), *vals))
PY
    for t in big long; do
        "$G" -B cpu -t f64 -b 50 -r -1:2 -f csv $t.f64 >want.txt 2>err.txt
        GPUHIST_CHUNK_MIB=1 "$G" -B cpu -v --text -b 50 -r -1:2 -f csv $t.txt >got.txt 2>err.txt
        cmp -s want.txt got.txt || fail "$t.txt streamed differs from the raw file: $(head -c 300 err.txt)"
        grep -q 'streamed:' err.txt || fail "$t.txt was not streamed: $(cat err.txt)"
        grep -q 'peak memory: [0-9] MiB\|peak memory: [0-4][0-9] MiB' err.txt ||
            fail "$t.txt: memory not bounded: $(grep peak err.txt)"
        cat $t.txt | GPUHIST_CHUNK_MIB=1 "$G" -B cpu --text -b 50 -r -1:2 -f csv - >got.txt 2>err.txt
        cmp -s want.txt got.txt || fail "$t.txt through a pipe differs: $(head -c 300 err.txt)"
        checks=$((checks + 3))
    done
    GPUHIST_CHUNK_MIB=1 err 1 "bad.txt:150002: '1.5x' is not a number" "$G" -B cpu --text -b 5 -r 0:1 bad.txt
    # three values a pixel, pixels split across blocks
    "$G" -B cpu -t f64 --channels 3 -b 20 -r -1:2 -f csv big.f64 >want.txt 2>err.txt
    GPUHIST_CHUNK_MIB=1 "$G" -B cpu --text --channels 3 -b 20 -r -1:2 -f csv big.txt >got.txt 2>err.txt
    cmp -s want.txt got.txt || fail "text with 3 channels differs: $(head -c 300 err.txt)"
    printf '1 2 3 4\n' | "$G" -B cpu --text --channels 3 -r 0:5 - >got.txt 2>err.txt
    grep -q '4 samples is not a multiple of 3 channels' err.txt || fail "text channels: $(cat err.txt)"
    checks=$((checks + 2))
    # .npy through a pipe with known bins: the header is read from the pipe, the data streamed;
    # bytes after the data are ignored, as in a file; a pipe that ends early is a truncated .npy.
    for spec in "i64.npy:-b 33 -r -1e12:1e12" "f64be.npy:-b 10 -r 0:1" "i64pad.npy:-e -1e12,0,5e11,1e12"; do
        f=${spec%%:*}
        args=${spec#*:}
        # shellcheck disable=SC2086
        "$G" -B cpu $args -f csv "$f" >want.txt 2>err.txt
        # shellcheck disable=SC2086
        (cat "$f"; printf 'trailing') | GPUHIST_CHUNK_MIB=1 "$G" -B cpu -v $args -f csv - >got.txt 2>err.txt
        cmp -s want.txt got.txt || fail ".npy pipe of $f ($args) differs: $(head -c 300 err.txt)"
        grep -q 'streamed:' err.txt || fail ".npy pipe of $f was not streamed: $(cat err.txt)"
        checks=$((checks + 1))
    done
    head -c 200000 i64.npy | "$G" -B cpu -b 4 -r 0:1 -o got.csv - >out.txt 2>err.txt
    grep -q 'truncated .npy: the header.s shape needs 2400008 bytes of data, the input has 199872' err.txt ||
        fail "truncated .npy pipe: $(cat err.txt)"
    [ -e got.csv ] && fail "a truncated .npy pipe left got.csv"
    head -c 50 i64.npy | "$G" -B cpu -b 4 -r 0:1 - >out.txt 2>err.txt
    grep -q 'malformed .npy: header longer than the file' err.txt || fail "cut .npy header: $(cat err.txt)"
    "$G" -B cpu -b 4 -r 0:1 - <i64.npy >out.txt 2>err.txt || fail "a .npy on standard input (a file)"
    printf 'ab' | "$G" -B cpu -t u8 -r 0:256 -f csv - >out.txt 2>err.txt
    has "97,97,98,1" out.txt
    checks=$((checks + 4))
    # Inputs that do not fit: a raw size not a multiple of the sample, a truncated .npy.
    head -c 1000001 f32.bin >odd.bin
    err 1 'not a multiple of the sample size' "$G" -B cpu -t f32 -r 0:1 odd.bin
    head -c 200000 i64.npy >trunc.npy
    err 1 'truncated .npy' "$G" -B cpu -b 4 -r 0:1 trunc.npy
}

# --weights: sums of weights per bin, exact (compared as text with sums computed exactly by
# Python's fractions, rounded once), raw f32/f64 and .npy weights, every input path streaming
# its weights in step (1 MiB chunks) equal to the whole read, channels, clamp, the errors, and
# -f npy.
cli_weights() {
    local py=${GPUHIST_PYTHON:-python3}
    "$py" - <<'PY' || { fail "cannot generate the weights test files"; return; }
import random, struct
from fractions import Fraction as F
r = random.Random(20261125)
N = 3000
data = [r.uniform(-1.5, 2.5) for _ in range(N)]
for i in range(0, N, 97):
    data[i] = float("nan")
data[5], data[6] = float("inf"), -float("inf")
# magnitudes 2^-40 .. 2^40, and a cancellation a sum in array order would lose the 1 in
w = [r.uniform(-1, 1) * 2.0 ** r.randrange(-40, 40) for _ in range(N)]
data[10] = data[11] = data[12] = 0.1
w[10], w[11], w[12] = 2.0 ** 60, 1.0, -2.0 ** 60
w32 = [struct.unpack("<f", struct.pack("<f", x))[0] for x in w]
E = [-1, -0.5, 0, 0.25, 0.5, 1, 2]
open("edges.arg", "w").write(",".join(str(e) for e in E))
open("d.f64", "wb").write(struct.pack("<%dd" % N, *data))
with open("d.txt", "w") as f:
    for i in range(0, N, 5):
        f.write(" ".join(repr(v) for v in data[i:i + 5]) + "\n")
open("w64.bin", "wb").write(struct.pack("<%dd" % N, *w))
open("w32.bin", "wb").write(struct.pack("<%df" % N, *w32))
open("w999.bin", "wb").write(struct.pack("<%dd" % (N - 1), *w[:N - 1]))
open("w1001.bin", "wb").write(struct.pack("<%dd" % (N + 1), *(w + [1.0])))
open("wp.bin", "wb").write(struct.pack("<%dd" % (N // 2), *w[:N // 2]))

def npy(name, descr, shape, payload, fortran=False):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(name, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(payload)
npy("w64.npy", "<f8", "(%d,)" % N, struct.pack("<%dd" % N, *w))
npy("w32be.npy", ">f4", "(%d, 10)" % (N // 10), struct.pack(">%df" % N, *w32))
npy("wi4.npy", "<i4", "(%d,)" % N, struct.pack("<%di" % N, *range(N)))
npy("wf2.npy", "<f2", "(%d,)" % N, b"\0\0" * N)
npy("wfort.npy", "<f8", "(%d, 10)" % (N // 10), struct.pack("<%dd" % N, *w), True)
npy("dfort.npy", "<f8", "(%d, 10)" % (N // 10), struct.pack("<%dd" % N, *data), True)

def text(v):  # the command's shortest round-trip text: Python's repr without a trailing ".0"
    s = repr(float(v))
    return s[:-2] if s.endswith(".0") else s

def bin_of(x, clamp):
    if x != x:
        return None
    if x < E[0]:
        return 0 if clamp else None
    if x >= E[-1]:
        return len(E) - 2 if clamp else None
    return max(i for i in range(len(E) - 1) if E[i] <= x)

def expect(name, pixels, weights, channels, clamp, squares):
    nb = len(E) - 1
    cnt = [[0] * nb for _ in range(channels)]
    sm = [[F(0)] * nb for _ in range(channels)]
    sq = [[F(0)] * nb for _ in range(channels)]
    for p in range(pixels):
        for c in range(channels):
            b = bin_of(data[p * channels + c], clamp)
            if b is not None:
                cnt[c][b] += 1
                sm[c][b] += F(weights[p])
                sq[c][b] += F(weights[p]) ** 2
    cols = ["count", "sum"] + (["sum_sq"] if squares else [])
    head = ["bin", "lower", "upper"] + [
        k if channels == 1 else "%s_%d" % (k, c) for k in cols for c in range(channels)]
    with open(name, "w") as f:
        f.write(",".join(head) + "\n")
        for i in range(nb):
            row = [str(i), text(E[i]), text(E[i + 1])]
            row += [str(cnt[c][i]) for c in range(channels)]
            row += [text(float(sm[c][i])) for c in range(channels)]
            if squares:
                row += [text(float(sq[c][i])) for c in range(channels)]
            f.write(",".join(row) + "\n")
expect("exp64.csv", N, w, 1, False, True)
expect("exp64nosq.csv", N, w, 1, False, False)
expect("exp32.csv", N, w32, 1, False, True)
expect("expclamp.csv", N, w, 1, True, True)
expect("expch.csv", N // 2, w, 2, False, True)
PY
    local E
    E=$(cat edges.arg)
    # Exact sums, whatever the weights' file format.
    for spec in "w64.bin::exp64.csv" "w32.bin:--weights-type f32:exp32.csv" \
        "w64.npy::exp64.csv" "w32be.npy::exp32.csv" "w64.bin:--weights-type f64:exp64.csv"; do
        local wf=${spec%%:*} rest=${spec#*:}
        local extra=${rest%%:*} exp=${rest#*:}
        # shellcheck disable=SC2086
        ok "$G" -B cpu -t f64 -e "$E" --weights "$wf" $extra --squares -f csv d.f64
        cmp -s out.txt "$exp" || fail "sums with $wf $extra differ: $(diff out.txt "$exp" | head -5)"
    done
    ok "$G" -t f64 -e "$E" --weights w64.bin -f csv d.f64 # auto: the CPU backend
    cmp -s out.txt exp64nosq.csv || fail "sums without --squares differ: $(diff out.txt exp64nosq.csv | head -5)"
    ok "$G" -B cpu -t f64 -e "$E" --outliers clamp --weights w64.bin --squares -f csv d.f64
    cmp -s out.txt expclamp.csv || fail "clamped sums differ: $(diff out.txt expclamp.csv | head -5)"
    ok "$G" -B cpu -t f64 --channels 2 -e "$E" --weights wp.bin --squares -f csv d.f64
    cmp -s out.txt expch.csv || fail "sums per channel differ: $(diff out.txt expch.csv | head -5)"
    ok "$G" -B cpu --text -e "$E" --weights w64.bin --squares -f csv d.txt
    cmp -s out.txt exp64.csv || fail "sums of text data differ: $(diff out.txt exp64.csv | head -5)"
    # Pipes: the data, the weights (a pipe of their own), the weights on standard input.
    checks=$((checks + 4))
    cat d.f64 | "$G" -B cpu -t f64 -e "$E" --weights <(cat w64.bin) --squares -f csv - >got.csv 2>err.txt
    cmp -s got.csv exp64.csv || fail "data and weights through pipes: $(head -c 300 err.txt)"
    cat w64.npy | "$G" -B cpu -t f64 -e "$E" --weights - --squares -f csv d.f64 >got.csv 2>err.txt
    cmp -s got.csv exp64.csv || fail ".npy weights on standard input: $(head -c 300 err.txt)"
    cat w32.bin | "$G" -B cpu -t f64 -e "$E" --weights - --weights-type f32 --squares -f csv d.f64 >got.csv 2>err.txt
    cmp -s got.csv exp32.csv || fail "raw f32 weights on standard input: $(head -c 300 err.txt)"
    "$G" -B cpu -t f64 -e "$E" --weights - --squares -f csv d.f64 <w64.bin >got.csv 2>err.txt
    cmp -s got.csv exp64.csv || fail "weights on standard input (a file): $(head -c 300 err.txt)"
    # Read whole (a pipe whose auto range needs the data first) equals streamed (a first pass).
    checks=$((checks + 2))
    "$G" -B cpu -v -t f64 -b 7 --weights w64.bin --squares -f csv d.f64 >want.csv 2>err.txt
    grep -q 'weights: w64.bin, raw, 3000 of f64, streamed with the data' err.txt ||
        fail "weights of a file not streamed: $(cat err.txt)"
    cat d.f64 | "$G" -B cpu -v -t f64 -b 7 --weights w64.bin --squares -f csv - >got.csv 2>err.txt
    cmp -s got.csv want.csv || fail "weights read whole differ from streamed: $(head -c 300 err.txt)"
    grep -q 'weights: w64.bin, raw, 3000 of f64, read whole' err.txt || fail "not read whole: $(cat err.txt)"
    ok "$G" -B cpu --text -b 7 --weights w64.npy --squares -f csv d.txt
    cmp -s out.txt want.csv || fail "text read whole with weights differs from raw streamed"

    # Special sums: NaN, infinities, overflow, underflow of squares (CSV, JSON, table).
    "$py" - <<'PY' || fail "cannot write the special weights"
import math, struct
from fractions import Fraction as F
pix = [0, 1, 2, 3, 4, 4, 5, 6, 6, 1, 2, 7, 7]
w = [1.5, float("nan"), float("inf"), -float("inf"), 2.0 ** 1023, 2.0 ** 1023, 1e-300, 0.1, 0.2,
     2.0, float("inf"), float("inf"), -float("inf")]
open("sp.u8", "wb").write(bytes(pix))
open("sp.w", "wb").write(struct.pack("<%dd" % len(w), *w))
def text(v):
    s = repr(v)
    return s[:-2] if s.endswith(".0") else s
def total(vals):  # floats and Fractions: NaN, or an infinity, else the exact sum rounded once
    fl = [v for v in vals if isinstance(v, float)]
    if any(math.isnan(v) for v in fl) or (float("inf") in fl and -float("inf") in fl):
        return float("nan")
    for v in fl:
        if math.isinf(v):
            return v
    s = sum((F(v) for v in vals), F(0))
    try:
        return float(s)
    except OverflowError:
        return float("inf") if s > 0 else -float("inf")
with open("sp.csv", "w") as f:
    f.write("bin,lower,upper,count,sum,sum_sq\n")
    for b in range(8):
        vals = [w[i] for i in range(len(pix)) if pix[i] == b]
        sq = [v * v if math.isinf(v) or math.isnan(v) else F(v) ** 2 for v in vals]
        f.write("%d,%d,%d,%d,%s,%s\n" % (b, b, b + 1, len(vals), text(total(vals)), text(total(sq))))
PY
    ok "$G" -r 0:8 --weights sp.w --squares -f csv sp.u8
    cmp -s out.txt sp.csv || fail "special sums differ: $(diff out.txt sp.csv)"
    has "1,1,2,2,nan,nan" out.txt
    has "3,3,4,1,-inf,inf" out.txt
    has "4,4,5,2,inf,inf" out.txt
    has "7,7,8,2,nan,inf" out.txt
    ok "$G" -r 0:8 --weights sp.w --squares -f json sp.u8
    has '"NaN"' out.txt
    has '"-Infinity"' out.txt
    checks=$((checks + 1))
    "$py" - out.txt sp.csv <<'PY' || fail "JSON sums differ from the CSV: $(grep sums out.txt)"
import csv, json, math, struct, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.reader(open(sys.argv[2])))[1:]
def same(a, b):
    return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
for key, col in (("sums", 4), ("sums_squared", 5)):
    for v, r in zip(j[key], rows):
        assert not isinstance(v, str) or v in ("NaN", "Infinity", "-Infinity"), v
        assert same(float(v), float(r[col])), (key, v, r)
PY
    ok "$G" -r 0:8 --weights sp.w --squares sp.u8
    line 1 "bin  lower  upper  count                  sum  sum_sq" out.txt
    line 7 "  5      5      6      1               1e-300       0" out.txt
    head -c 9 sp.u8 >sp3.u8
    ok "$G" -r 0:8 --channels 3 --weights <(head -c 24 sp.w) --squares -f json sp3.u8
    has '"sums": [[1.5, 0, 0, "NaN", 0, "Infinity", 0, 0], [0, 1.5, 0, 0, "NaN", 0, "Infinity", 0], [0, 0, 1.5, 0, "NaN", 0, "Infinity", 0]],' out.txt
    has '"sums_squared": [[2.25, 0, 0, "NaN", 0, "Infinity", 0, 0], [0, 2.25,' out.txt
    ok "$G" -r 0:8 --channels 3:2 --weights <(head -c 24 sp.w) -f csv sp3.u8
    line 1 "bin,lower,upper,count_0,count_1,sum_0,sum_1" out.txt
    line 2 "0,0,1,1,0,1.5,0" out.txt
    ok "$G" -r 0:8 --channels 3:2 --weights <(head -c 24 sp.w) --squares sp3.u8
    line 1 "bin  lower  upper  count_0  count_1  sum_0  sum_1  sum_sq_0  sum_sq_1" out.txt
    line 2 "  0      0      1        1        0    1.5      0      2.25         0" out.txt

    # Streamed in 1 MiB chunks (several chunks of data and of weights) through every path equals
    # the whole read: mapped file, staging buffers (big-endian .npy), pipes, text, channels.
    "$py" - <<'PY' || { fail "cannot generate the streamed weights files"; return; }
import array, random, struct, sys
r = random.Random(11)
def le(a):  # the bytes of an array, little-endian
    if sys.byteorder != "little":
        a = array.array(a.typecode, a)
        a.byteswap()
    return a.tobytes()
n = 3 * 1024 * 1024 + 7
open("u8.bin", "wb").write(r.randbytes(n))
w = array.array("d", (r.uniform(-1, 1) * 2.0 ** r.randrange(-30, 30) for _ in range(n)))
open("w8.bin", "wb").write(le(w))
open("w4.bin", "wb").write(le(array.array("f", w)))
rgb = 400003
open("rgb.bin", "wb").write(r.randbytes(3 * rgb))
open("wrgb.bin", "wb").write(le(w[:rgb]))
m = 700001
vals = [r.uniform(-0.5, 1.5) for _ in range(m)]
open("v.f64", "wb").write(struct.pack("<%dd" % m, *vals))
header = "{'descr': '>f8', 'fortran_order': False, 'shape': (%d,), }" % m
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open("vbe.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack(">%dd" % m, *vals))
with open("v.txt", "w") as f:
    for i in range(0, m, 3):
        f.write(" ".join(repr(v) for v in vals[i:i + 3]) + "\n")
open("wv.bin", "wb").write(le(w[:m]))
open("wv3.bin", "wb").write(le(w[:m // 3]))
PY
    # u8: the mapped file; the same data through a pipe is read whole, weights too (24 MiB of
    # them: the streamed run's peak memory is well below the whole read's, also under ASan).
    checks=$((checks + 2))
    GPUHIST_CHUNK_MIB=1 "$G" -B cpu -v --weights w8.bin --squares -f csv u8.bin >got.csv 2>err.txt
    grep -q 'streamed with the data' err.txt || fail "u8.bin: weights not streamed: $(cat err.txt)"
    local peak_streamed peak_whole
    peak_streamed=$(sed -n 's/.*peak memory: \([0-9]*\) MiB.*/\1/p' err.txt)
    cat u8.bin | "$G" -B cpu -v --weights w8.bin --squares -f csv - >want.csv 2>err.txt
    grep -q 'read whole' err.txt || fail "a u8 pipe with weights: $(cat err.txt)"
    peak_whole=$(sed -n 's/.*peak memory: \([0-9]*\) MiB.*/\1/p' err.txt)
    if [ -n "$peak_streamed" ] && [ -n "$peak_whole" ]; then
        [ $((peak_streamed + 4)) -le "$peak_whole" ] ||
            fail "streamed weights: peak $peak_streamed MiB, read whole $peak_whole MiB"
    fi
    cmp -s got.csv want.csv || fail "u8 streamed sums differ from the whole read"
    checks=$((checks + 3))
    # a raw pipe streamed with its weights from a pipe; f32 weights
    cat u8.bin | GPUHIST_CHUNK_MIB=1 "$G" -B cpu --raw -r 0:256 --weights <(cat w8.bin) --squares -f csv - >got.csv 2>err.txt
    cmp -s got.csv want.csv || fail "u8 raw pipe with a weights pipe differs: $(head -c 300 err.txt)"
    GPUHIST_CHUNK_MIB=1 "$G" -B cpu --weights w4.bin --weights-type f32 -f csv u8.bin >got.csv 2>err.txt
    "$G" -B cpu --weights <(cat w4.bin) --weights-type f32 -f csv - <u8.bin >want.csv 2>>err.txt
    cmp -s got.csv want.csv || fail "f32 weights streamed differ: $(head -c 300 err.txt)"
    # channels: one weight per pixel of 3 samples
    GPUHIST_CHUNK_MIB=1 "$G" -B cpu --channels 3:2 --weights wrgb.bin -f csv rgb.bin >got.csv 2>err.txt
    cat rgb.bin | "$G" -B cpu --channels 3:2 --weights wrgb.bin -f csv - >want.csv 2>>err.txt
    cmp -s got.csv want.csv || fail "channels with weights streamed differ: $(head -c 300 err.txt)"
    # f64: the mapped file, big-endian .npy (staging buffers, swapped), its pipe, text, and the
    # auto range's first pass; all equal to the whole read of a pipe.
    "$G" -B cpu -t f64 -b 50 -r -0.5:1.5 --weights wv.bin --squares -f csv - <v.f64 >want.csv 2>err.txt
    for cmd in "-t f64 v.f64" "vbe.npy" "--text v.txt"; do
        checks=$((checks + 1))
        # shellcheck disable=SC2086
        GPUHIST_CHUNK_MIB=1 "$G" -B cpu -b 50 -r -0.5:1.5 --weights wv.bin --squares -f csv $cmd >got.csv 2>err.txt
        cmp -s got.csv want.csv || fail "streamed weights of $cmd differ: $(head -c 300 err.txt)"
    done
    checks=$((checks + 3))
    cat vbe.npy | GPUHIST_CHUNK_MIB=1 "$G" -B cpu -b 50 -r -0.5:1.5 --weights <(cat wv.bin) --squares -f csv - >got.csv 2>err.txt
    cmp -s got.csv want.csv || fail "a .npy pipe with a weights pipe differs: $(head -c 300 err.txt)"
    GPUHIST_CHUNK_MIB=1 "$G" -B cpu -t f64 -b 9 --weights wv.bin -f csv v.f64 >got.csv 2>err.txt
    cat v.f64 | "$G" -B cpu -t f64 -b 9 --weights wv.bin -f csv - >want.csv 2>>err.txt
    cmp -s got.csv want.csv || fail "auto range streamed with weights differs: $(head -c 300 err.txt)"
    # text, three values a pixel, pixels split across blocks
    GPUHIST_CHUNK_MIB=1 "$G" -B cpu --text --channels 3 -b 20 -r -0.5:1.5 --weights wv3.bin -f csv v.txt >got.csv 2>err.txt
    "$G" -B cpu -t f64 --channels 3 -b 20 -r -0.5:1.5 --weights wv3.bin -f csv - <v.f64 >want.csv 2>>err.txt
    cmp -s got.csv want.csv || fail "text with 3 channels and weights differs: $(head -c 300 err.txt)"

    # Errors: one line, the exit status, and no output file left behind.
    err 1 "^gpuhist: w999.bin: 2999 weights for 3000 pixels$" "$G" -t f64 -r 0:1 --weights w999.bin -o o.csv d.f64
    err 1 "^gpuhist: w1001.bin: 3001 weights for 3000 pixels$" "$G" -t f64 -r 0:1 --weights w1001.bin -o o.csv d.f64
    err 1 "^gpuhist: w999.bin: 2999 weights for 3000 pixels$" "$G" -t f64 -b 5 --weights w999.bin -o o.csv d.f64
    err 1 "^gpuhist: w999.bin: 2999 weights for 3000 pixels$" "$G" --text -r 0:1 --weights w999.bin -o o.csv d.txt
    err 1 "^gpuhist: w1001.bin: 3001 weights for 3000 pixels$" "$G" --text -b 5 --weights w1001.bin -o o.csv d.txt
    err 1 "w32.bin: 1500 weights for 3000 pixels" "$G" -t f64 -r 0:1 --weights w32.bin -o o.csv d.f64
    [ -e o.csv ] && fail "a weights error left o.csv"
    ls ./*.tmp.* >/dev/null 2>&1 && fail "a weights error left a temporary file: $(ls)"
    checks=$((checks + 4))
    cat d.f64 | "$G" -t f64 -r 0:1 --weights w999.bin -o o.csv - >out.txt 2>err.txt
    has "w999.bin: 2999 weights for 3000 pixels" err.txt
    cat d.f64 | "$G" -t f64 -r 0:1 --weights <(cat w1001.bin) -o o.csv - >out.txt 2>err.txt
    has "3001 weights for 3000 pixels" err.txt
    "$G" -t f64 -r 0:1 --weights <(head -c 23999 w64.bin) -o o.csv d.f64 >out.txt 2>err.txt
    has "size 23999 bytes is not a multiple of the weight size 8 (f64; choose the type with --weights-type)" err.txt
    "$G" -t f64 -r 0:1 --weights <(cat w1001.bin w1001.bin) -o o.csv d.f64 >out.txt 2>err.txt
    has "6002 weights for 3000 pixels" err.txt
    [ -e o.csv ] && fail "a weights error on a pipe left o.csv"
    head -c 13 w64.bin >w13.bin
    err 1 "w13.bin: size 13 bytes is not a multiple of the weight size 8 \(f64; choose the type with --weights-type\)" \
        "$G" -t f64 -r 0:1 --weights w13.bin d.f64
    err 1 "wi4.npy: weights must be float32 or float64 \('<f4', '<f8', '>f4', '>f8'\), not dtype '<i4'" \
        "$G" -t f64 -r 0:1 --weights wi4.npy d.f64
    err 1 "wf2.npy: weights must be float32 or float64 .*not dtype '<f2'" "$G" -t f64 -r 0:1 --weights wf2.npy d.f64
    err 1 "wfort.npy: a Fortran-order .npy of weights" "$G" -t f64 -r 0:1 --weights wfort.npy d.f64
    err 1 "dfort.npy: a Fortran-order .npy cannot be read with --weights" "$G" -r 0:1 --weights w64.bin dfort.npy
    err 1 "nothere: cannot open" "$G" -t f64 -r 0:1 --weights nothere d.f64
    err 2 "--weights-type f32 conflicts with the dtype '<f8' \(f64\) in the header of w64.npy" \
        "$G" -t f64 -r 0:1 --weights w64.npy --weights-type f32 d.f64
    err 2 "--weights-type: expected f32 or f64, got 'i32'" "$G" --weights w64.bin --weights-type i32 d.f64
    err 2 "--squares needs --weights" "$G" --squares d.f64
    err 2 "--weights-type needs --weights" "$G" --weights-type f32 d.f64
    err 2 "--weights: empty file name" "$G" --weights '' d.f64
    err 2 "--weights -: the data comes from standard input" "$G" -t f64 --weights - -
    err 2 "--weights /dev/stdin: the data comes from the same pipe" "$G" -t f64 -r 0:1 --weights /dev/stdin < <(cat d.f64)
    err 2 "w64.bin: the output would overwrite the weights w64.bin" "$G" -t f64 -r 0:1 --weights w64.bin -o w64.bin d.f64
    err 2 "-f npy with --weights writes the sums to a file beside the counts" \
        "$G" -t f64 -r 0:1 --weights w64.bin -f npy -o /dev/null d.f64
    err 1 "--device 3: no such device \(--weights runs on the CPU backend" "$G" --device 3 -t f64 -r 0:1 --weights w64.bin d.f64
    # Auto sums weights on the CPU backend (and says so); CUDA and OpenCL sum them too
    # (cuda-weighted-*, opencl-weighted-*: the same bits).
    run "$G" -v -t f64 -r 0:1 --weights w64.bin d.f64
    has "note: --weights: auto uses the CPU backend" err.txt
    has "strategy: cpu-weighted" err.txt
    if "$G" -B cuda --list-devices >/dev/null 2>&1; then
        ok "$G" -B cpu -t f64 -b 5 --weights w64.bin --squares -f csv -o wcpu.csv d.f64
        ok "$G" -B cuda -t f64 -b 5 --weights w64.bin --squares -f csv -o wcuda.csv d.f64
        cmp -s wcpu.csv wcuda.csv || fail "--weights: -B cuda differs from -B cpu: $(diff wcpu.csv wcuda.csv | head -5)"
        run "$G" -B cuda -v -t f64 -r 0:1 --weights w64.bin -o /dev/null d.f64
        [ "$rc" = 0 ] || fail "-B cuda --weights: exit $rc -- $(head -c 300 err.txt)"
        has "strategy: cuda-weighted-smem" err.txt
    fi
    if "$G" -B opencl --list-devices >/dev/null 2>&1; then
        # raw and text input, f64 and f32 weights, squares, clamped outliers, channels, edges
        for args in "-t f64 -b 5 --weights w64.bin --squares d.f64" \
            "-t f64 -r 0:1 --outliers clamp --weights w32.bin --weights-type f32 --squares d.f64" \
            "--text -b 5 --weights w64.bin d.txt" \
            "-t f64 --channels 2 -e $E --weights wp.bin --squares d.f64"; do
            # shellcheck disable=SC2086
            ok "$G" -B cpu $args -f csv -o wcpu.csv
            # shellcheck disable=SC2086
            ok "$G" -B opencl $args -f csv -o wocl.csv
            cmp -s wcpu.csv wocl.csv ||
                fail "--weights: -B opencl $args differs from -B cpu: $(diff wcpu.csv wocl.csv | head -5)"
        done
        # auto takes the local variant when the sums fit in local memory: 16 bins of f64 sums
        # are 10.5 KiB (256 would need 164 KiB, more than a GPU's 48 KiB: the global one's)
        run "$G" -B opencl -v -t f64 -b 16 -r 0:1 --weights w64.bin -o /dev/null d.f64
        [ "$rc" = 0 ] || fail "-B opencl --weights: exit $rc -- $(head -c 300 err.txt)"
        has "strategy: opencl-weighted-local" err.txt
        run "$G" -B opencl -s opencl-weighted-global -v -t f64 -r 0:1 --weights w64.bin -o wg.csv \
            -f csv d.f64
        has "strategy: opencl-weighted-global" err.txt
        ok "$G" -B cpu -t f64 -r 0:1 --weights w64.bin -f csv -o wcpu.csv d.f64
        cmp -s wcpu.csv wg.csv || fail "--weights: opencl-weighted-global differs from -B cpu"
    fi
    [ -e o.csv ] && fail "a refused backend left o.csv"

    # -f npy: the sums (and squares) as '<f8' arrays beside the counts and edges, shaped as the
    # counts, their bits those the CSV prints; all four written or none.
    ok "$G" -t f64 -e "$E" --weights w64.bin --squares -f npy -o h.npy d.f64
    ok "$G" -t f64 -e "$E" --weights w64.bin -f npy -o nosq.npy d.f64
    ok "$G" -t f64 --channels 2 -e "$E" --weights wp.bin --squares -f npy -o ch.npy d.f64
    for f in h.npy h.edges.npy h.sums.npy h.sums_squared.npy nosq.npy nosq.edges.npy nosq.sums.npy \
        ch.sums.npy ch.sums_squared.npy; do
        [ -f $f ] || fail "-f npy: $f missing: $(ls ./*.npy)"
    done
    [ -e nosq.sums_squared.npy ] && fail "-f npy without --squares wrote nosq.sums_squared.npy"
    npy_header h.sums.npy >hdr.txt
    has "{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }" hdr.txt
    npy_header ch.sums_squared.npy >hdr.txt
    has "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 6), }" hdr.txt
    checks=$((checks + 1))
    "$py" - <<'PY' || fail "-f npy sums differ from the CSV"
import ast, csv, math, struct
def load(path):
    b = open(path, "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + n].decode())
    count = 1
    for d in h["shape"]:
        count *= d
    return h, struct.unpack("<%d%s" % (count, "Q" if h["descr"] == "<u8" else "d"), b[10 + n:])
def same(a, b):
    return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
for prefix, csvname, channels in (("h", "exp64.csv", 1), ("nosq", "exp64nosq.csv", 1), ("ch", "expch.csv", 2)):
    rows = list(csv.reader(open(csvname)))[1:]
    _, counts = load(prefix + ".npy")
    _, sums = load(prefix + ".sums.npy")
    bins = len(rows)
    for c in range(channels):
        for i, r in enumerate(rows):
            assert counts[c * bins + i] == int(r[3 + c]), (prefix, i)
            assert same(sums[c * bins + i], float(r[3 + channels + c])), (prefix, i)
    if prefix != "nosq":
        _, sq = load(prefix + ".sums_squared.npy")
        for c in range(channels):
            for i, r in enumerate(rows):
                assert same(sq[c * bins + i], float(r[3 + 2 * channels + c])), (prefix, i)
PY
    mkdir -p blocked.sums_squared.npy
    err 1 "blocked.sums_squared.npy" "$G" -t f64 -e "$E" --weights w64.bin --squares -f npy -o blocked.npy d.f64
    for f in blocked.npy blocked.edges.npy blocked.sums.npy; do
        [ -e $f ] && fail "$f written although blocked.sums_squared.npy could not be"
    done
    ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary file left: $(ls)"

    # --density: NumPy's np.histogram(..., density=True) bit for bit (counts, and weights whose
    # sums NumPy also gets exactly), up to 20000 bins (NumPy's pairwise total); -f npy refuses it.
    if "$py" -c "import numpy" 2>/dev/null; then
        checks=$((checks + 1))
        "$py" - "$G" <<'PY' || fail "--density differs from NumPy's"
import subprocess, sys
import numpy as np
G = sys.argv[1]
r = np.random.default_rng(20261125)
a = r.random(50000)
a.astype("<f8").tofile("dens.f64")
w = r.integers(-5, 20, len(a)).astype(float)
w.astype("<f8").tofile("dens.w64")
for bins in (1, 7, 200, 1000, 20000):
    for weighted in (False, True):
        cmd = [G, "-t", "f64", "-b", str(bins), "-r", "0:1", "--density", "-f", "csv", "dens.f64"]
        if weighted:
            cmd[1:1] = ["--weights", "dens.w64"]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
        got = np.array([float(l.split(",")[-1]) for l in out[1:]])
        want = np.histogram(a, bins=bins, range=(0, 1), density=True,
                            weights=w if weighted else None)[0]
        assert np.array_equal(got.view("u8"), want.view("u8")), (bins, weighted)
PY
        ok "$G" -t f64 -b 3 -r 0:1 --density -f json dens.f64
        has '"density": [' out.txt
    fi
    err 2 "--density is written by the table, CSV and JSON formats" "$G" -t f64 -r 0:1 --density -f npy -o x.npy d.f64

    # --cumulative: the running totals of the counts (np.cumsum), per channel, in every text format
    printf '0.1 0.2 0.2 0.7 0.9 1.5\n' >cum.txt
    ok "$G" --text -b 4 -r 0:1 --cumulative -f csv cum.txt
    line 1 "bin,lower,upper,count,cumulative" out.txt
    line 2 "0,0,0.25,3,3" out.txt
    line 3 "1,0.25,0.5,0,3" out.txt
    line 5 "3,0.75,1,1,5" out.txt
    ok "$G" --text -b 4 -r 0:1 --cumulative -f json cum.txt
    has '"cumulative": [3, 3, 4, 5]' out.txt
    ok "$G" --text -b 4 -r 0:1 --cumulative cum.txt
    has "cumulative" out.txt
    printf '1 2 3 4 5 6\n' >cum2.txt
    ok "$G" --text --channels 2 -b 2 -r 0:8 --cumulative -f csv cum2.txt
    line 1 "bin,lower,upper,count_0,count_1,cumulative_0,cumulative_1" out.txt
    line 3 "1,4,8,1,2,3,3" out.txt
    err 2 "--cumulative is written by the table, CSV and JSON formats" "$G" --text -r 0:1 --cumulative -f npy -o x.npy cum.txt
}

# Several devices at once (--devices): the same output as one device, bit for bit. On the CPU
# backend a number given twice runs two contexts on the one device, which exercises the sharing
# out and the exact merge anywhere.
cli_devices() {
    LC_ALL=C awk 'BEGIN { x = 12345; for (i = 0; i < 1000002; ++i) { x = (x * 1103515245 + 12345) % 2147483648; printf "%c", int(x / 65536) % 256 } }' >u8.bin
    awk 'BEGIN { x = 777; for (i = 0; i < 30001; ++i) { x = (x * 1103515245 + 12345) % 2147483648; printf "%.6f\n", x / 2147483648 * 200 - 50 } }' >f.txt
    for args in "" "-r 10:200 --outliers clamp" "--channels 3:2 -b 16" "-e 0,3,70,71,255"; do
        # shellcheck disable=SC2086
        ok "$G" -B cpu -f csv $args u8.bin
        mv out.txt one.csv
        for devs in 0,0 0,0,0 all; do
            # shellcheck disable=SC2086
            ok "$G" -B cpu -f csv --devices "$devs" $args u8.bin
            cmp -s out.txt one.csv || fail "--devices $devs $args: output differs from one device"
        done
    done
    # auto range over the shares (text is read whole, then shared out)
    ok "$G" -B cpu --text -t f32 -b 33 -f csv f.txt
    mv out.txt one.csv
    ok "$G" -B cpu --text -t f32 -b 33 -f csv --devices 0,0,0 f.txt
    cmp -s out.txt one.csv || fail "--devices 0,0,0 on auto-range text: output differs"
    run "$G" -B cpu --devices 0,0 -v u8.bin
    has "2 x CPU" err.txt
    err 2 "--devices: expected 'all' or device numbers" "$G" --devices 0, u8.bin
    err 2 "'x' is not a device number" "$G" --devices 0,x u8.bin
    err 2 "--device and --devices conflict" "$G" --device 0 --devices all u8.bin
    err 1 "device 1 does not exist" "$G" -B cpu --devices 0,1 u8.bin
}

# Images written by Pillow and OpenCV (tests/cli/images.py, fixed seed) with the counts NumPy
# expects: every format, bit depth and channel layout, --roi, several files, a directory,
# --each, --cumulative; --equalize against cv2.equalizeHist; damaged and refused images. A
# format not built in must say so instead. Skipped (exit 77) without NumPy, Pillow and OpenCV.
cli_images() {
    local IMG PY=""
    IMG=$HERE/images.py
    for py in "${GPUHIST_PYTHON:-}" /usr/bin/python3 python3; do
        if [ -n "$py" ] && "$py" "$IMG" check >/dev/null 2>&1; then
            PY=$py
            break
        fi
    done
    if [ -z "$PY" ]; then
        echo "images: skipped (no python3 with NumPy, Pillow and OpenCV: scripts/setup installs them)"
        exit 77
    fi
    "$PY" "$IMG" gen . || { fail "images.py gen failed"; return; }
    local formats
    formats=$("$G" --version)
    built() { case "$formats" in *"images: "*"$1"*) return 0 ;; esac; return 1; }
    for f in png jpeg tiff pnm; do
        built $f || echo "images: $f not built in: its checks are skipped, its files must be refused"
    done
    # icase FORMAT EXPECT ARGS...: the count columns of -f csv equal EXPECT.expect, or, with
    # FORMAT not built in, the message that says so.
    icase() {
        local fmt=$1 exp=$2
        shift 2
        if ! built "$fmt"; then
            run "$G" -B cpu -f csv "$@"
            [ "$rc" = 1 ] || fail "exit $rc (wanted 1, $fmt not built in): $*"
            grep -q "support was not built in" err.txt || fail "no 'not built in' message: $*"
            return 0
        fi
        ok "$G" -B cpu -f csv "$@"
        tail -n +2 out.txt | cut -d, -f4- >got.txt
        cmp -s got.txt "$exp.expect" ||
            fail "counts of '$*' differ from $exp.expect: $(diff got.txt "$exp.expect" | head -4)"
    }
    icase png g8 g8.png
    icase png ga8 ga8.png
    icase png rgb8 rgb8.png
    icase png rgba8 rgba8.png
    icase png rgba8_3 --channels 4:3 rgba8.png
    icase png g16 g16.png
    icase png rgb16 rgb16.png
    icase png rgba16 rgba16.png
    icase png pal pal.png
    icase png g1 g1.png
    icase jpeg g8jpg g8.jpg
    icase jpeg rgb8jpg rgb8.jpg
    icase tiff g8 g8.tif
    icase tiff g16 g16.tif
    icase tiff rgb8 rgb8.tif
    icase tiff rgba8 rgba8.tif
    icase tiff rgb16 rgb16.tif
    icase tiff f32 -r 0:1 -b 10 f32.tif
    icase tiff f32auto -b 8 f32.tif
    icase tiff pages pages.tif
    icase pnm g8 g8.pgm
    icase pnm g8 plain.pgm
    icase pnm g16 g16.pgm
    icase pnm m1000 m1000.pgm
    icase pnm rgb8 rgb8.ppm
    icase pnm rgba8 rgba8.pam
    icase pnm rgb16 rgb16.ppm
    icase png rgb8_roi --roi 3,2,5,4 rgb8.png
    icase png two g8.png g8.png
    icase png dir dir
    icase png g8 -j 1 g8.png
    if built png; then
        # the same counts on every thread count, and from standard input with --image
        checks=$((checks + 1))
        "$G" -B cpu -f csv --image - <g8.png >out.txt 2>err.txt || fail "--image - failed: $(cat err.txt)"
        tail -n +2 out.txt | cut -d, -f4- | cmp -s - g8.expect || fail "--image - counts differ"
        # a 1 x 1 image
        ok "$G" -B cpu -f csv one.png
        line 202 "200,200,201,1" out.txt
        # --cumulative: the running totals beside the counts
        ok "$G" -B cpu -f csv --cumulative g8.png
        tail -n +2 out.txt | cut -d, -f4,5 | cmp -s - g8_cum.expect || fail "--cumulative differs"
        # --each: one histogram per image, in name order, labelled
        ok "$G" -B cpu -f csv --each dir
        line 1 "image,bin,lower,upper,count" out.txt
        tail -n +2 out.txt | cut -d, -f1,5 | cmp -s - dir_each.expect || fail "--each CSV differs"
        ok "$G" -B cpu -f json --each dir
        "$PY" -c 'import json,sys; d=json.load(open("out.txt")); assert [x["image"] for x in d] == ["dir/a.png","dir/b.png","dir/c.png"], d; assert [x["total"] for x in d] == [15,18,12], [x["total"] for x in d]' ||
            fail "--each JSON"
        ok "$G" -B cpu --each dir g8.png
        has "image: dir/a.png" out.txt
        has "image: g8.png" out.txt
        # -v names the files, the pages and the decoding threads
        run "$G" -B cpu -v -o /dev/null dir
        has "input: 3 image file(s), 3 page(s)" err.txt
    fi
    if built tiff; then
        ok "$G" -B cpu -f csv --each pages.tif
        tail -n +2 out.txt | cut -d, -f1,5 | cmp -s - pages_each.expect || fail "--each pages differ"
    fi

    # Equalization: cv2.equalizeHist byte for byte (8-bit grey, also on a region and on one
    # value), per colour channel (alpha copied), OpenCV's rule over 65536 levels for 16 bits.
    if built png; then
        eq() { # eq REF ARGS...: the image written by --equalize equals REF.npy
            local ref=$1 outimg
            shift
            outimg=${*: -2:1}
            ok "$G" -B cpu -o h.csv -f csv "$@"
            "$PY" "$IMG" same "$outimg" "$ref.npy" || fail "--equalize: $* differs from $ref"
        }
        eq eq_g8 --equalize e.png g8.png
        tail -n +2 h.csv | cut -d, -f4- | cmp -s - g8.expect || fail "--equalize: histogram differs"
        eq eq_big --equalize e.png big.png
        eq eq_const --equalize e.png const.png
        eq eq_g8_roi --roi 4,5,30,20 --equalize e.png g8.png
        eq eq_rgb8 --equalize e.png rgb8.png
        eq eq_rgba8 --equalize e.png rgba8.png
        eq eq_g16 --equalize e.png g16.png
        if built tiff; then eq eq_g8 --equalize e.tif g8.png; fi
        if built pnm; then
            eq eq_g8 --equalize e.pgm g8.png
            eq eq_rgba8 --equalize e.pam rgba8.png
        fi
        rm -f e.png
        err 2 "--equalize counts one bin per value" "$G" -b 4 --equalize e.png g8.png
        err 2 "--equalize e.jpg: unknown image extension" "$G" --equalize e.jpg g8.png
        if built pnm; then
            err 2 "--equalize e.pgm: .pgm cannot hold the 3 channel" "$G" --equalize e.pgm rgb8.png
        else # the missing codec is named before the image's channels are looked at
            err 1 "--equalize e.pgm: PNM support was not built in" "$G" --equalize e.pgm rgb8.png
        fi
        err 2 "--equalize takes one image" "$G" --equalize e.png g8.png g8.png
        [ -e e.png ] && fail "--equalize left e.png behind after an error"
    fi
    if built tiff; then
        err 2 "f32.tif holds f32 samples; equalization needs 8- or 16-bit" \
            "$G" --equalize e.png f32.tif
        err 2 "--equalize takes one image; pages.tif has several pages" \
            "$G" -B cpu -o h.csv --equalize e.png pages.tif
        [ -e e.png ] && fail "--equalize left e.png behind after an error"
    fi

    # Damaged and refused images: one message naming the file, exit 1, no output file.
    rm -f x.csv e.png
    for f in trunc.png corrupt.png trunc.jpg corrupt.jpg trunc.tif corrupt.tif; do
        case $f in *.png) fmt=png ;; *.jpg) fmt=jpeg ;; *) fmt=tiff ;; esac
        built $fmt || continue
        err 1 "^gpuhist: $f: (PNG|JPEG|TIFF): " "$G" -B cpu -o x.csv --equalize e.png "$f"
        [ -e x.csv ] && fail "$f: x.csv written"
        [ -e e.png ] && fail "$f: e.png written"
    done
    if built tiff; then
        err 1 "bilevel.tif: TIFF: 1-bit samples .* are not supported" "$G" bilevel.tif
    fi
    if built png; then
        err 1 "empty.png: PNG: " "$G" empty.png
        err 1 "huge.png: the image declares 100000 x 100000 pixels, above the limit" "$G" huge.png
        err 1 "g8.png: --roi 40,0,8,5 does not lie inside the image \(47 x 61 pixels\)" \
            "$G" -o x.csv --roi 40,0,8,5 g8.png
        [ -e x.csv ] && fail "--roi outside: x.csv written"
        err 2 "--roi: expected x,y,w,h" "$G" --roi 1,2,3 g8.png
        err 2 "--roi 0,0,0,4: the width and height must be at least 1" "$G" --roi 0,0,0,4 g8.png
        err 1 "mixed/b.png: 3 channel\(s\) of u8, but mixed/a.png has 1 channel\(s\) of u8" \
            "$G" -o x.csv mixed
        [ -e x.csv ] && fail "mixed: x.csv written"
        err 1 "g16.png: 1 channel\(s\) of u16, but g8.png has 1 channel\(s\) of u8" \
            "$G" g8.png g16.png
        err 2 "--channels 4:3: g8.png has 1 channel" "$G" --channels 4:3 g8.png
        err 2 "--type: images carry their own sample type" "$G" -t u16 g8.png
        err 2 "--each is written by the table, CSV and JSON formats" "$G" --each -f npy dir
        printf 'not an image\n' >notes.txt
        err 1 "notes.txt: not an image" "$G" g8.png notes.txt
    fi
    if built pnm; then
        err 1 "empty.pgm: " "$G" empty.pgm
    fi
    printf '\x00\x01' >u8.bin
    err 2 "--roi is for image input, and u8.bin is not an image" "$G" --roi 0,0,1,1 u8.bin
    # --raw reads an image file as raw samples, as before
    ok "$G" -B cpu --raw -f csv one.png
}

# --plot: the rendering checks of plot_check.py (each file's format and size, the bars against
# counts computed in Python, 2^20 bins), then the file's rules: the extension, places that
# cannot be written, never the input or -o's file, an existing file replaced whole as -o
# replaces one, nothing left behind by a failed run. Built without cairo: the refusal only.
cli_plot() {
    printf '\x00\x01\x01\xff' >u8.bin
    if ! "$G" --version | grep -q "plots: png, svg, pdf"; then
        err 1 "^gpuhist: --plot x.png: plots were not built in \(install libcairo2-dev and rebuild\)$" \
            "$G" --plot x.png u8.bin
        [ -e x.png ] && fail "--plot without cairo wrote x.png"
        echo "plot: cairo not built in: only the refusal is checked"
        return
    fi
    local PY=""
    for py in "${GPUHIST_PYTHON:-}" /usr/bin/python3 python3; do
        if [ -n "$py" ] && command -v "$py" >/dev/null 2>&1; then
            PY=$py
            break
        fi
    done
    if [ -n "$PY" ]; then
        checks=$((checks + 1))
        mkdir -p render
        "$PY" "$HERE/plot_check.py" "$G" render || fail "plot_check.py (its messages above)"
    else
        echo "plot: no python3: the rendering checks are left out"
    fi

    # Beside the normal output, which does not change; the file gets the ordinary mode.
    ok "$G" -B cpu -f csv u8.bin
    cp out.txt expected.csv
    ok "$G" -B cpu -f csv --plot p.png u8.bin
    cmp -s out.txt expected.csv || fail "--plot changed the CSV output"
    [ "$(head -c 8 p.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "p.png is no PNG"
    [ "$(stat -c %a p.png)" = "$(printf '%o' $((0666 & ~0$(umask))))" ] ||
        fail "p.png mode $(stat -c %a p.png)"
    # The extension picks the format, in any case; --log-scale is --plot-log.
    ok "$G" -B cpu -o /dev/null --log-scale --plot P.SVG u8.bin
    grep -q "<svg" P.SVG || fail "P.SVG is no SVG"
    ok "$G" -B cpu -o /dev/null --plot p.Pdf u8.bin
    [ "$(head -c 5 p.Pdf)" = "%PDF-" ] || fail "p.Pdf is no PDF"
    ok "$G" --help
    has "--plot FILE" out.txt
    has "--plot-log" out.txt

    # Options: one message, exit 2, nothing written.
    err 2 "^gpuhist: --plot x.jpg: unknown plot extension '.jpg' \(.png, .svg or .pdf\)$" \
        "$G" --plot x.jpg u8.bin
    err 2 "^gpuhist: --plot noext: the file name has no extension \(.png, .svg or .pdf\)$" \
        "$G" --plot noext u8.bin
    err 2 "^gpuhist: --plot: empty file name$" "$G" --plot "" u8.bin
    err 2 "^gpuhist: --plot-log needs --plot FILE$" "$G" --plot-log u8.bin
    err 2 "^gpuhist: --plot draws one histogram; it conflicts with --each$" \
        "$G" --each --plot x.png u8.bin
    # Places that cannot be written: exit 1 before anything is read.
    err 1 "^gpuhist: no/such/dir/x.png: cannot create the output file: No such file or directory$" \
        "$G" --plot no/such/dir/x.png u8.bin
    err 1 "^gpuhist: u8.bin/x.png: cannot create the output file: Not a directory$" \
        "$G" --plot u8.bin/x.png u8.bin
    mkdir d.png
    err 1 "^gpuhist: d.png: is a directory$" "$G" --plot d.png u8.bin
    if [ "$(id -u)" != 0 ]; then # root writes anywhere
        mkdir ro
        chmod 555 ro
        err 1 "^gpuhist: ro/x.png: cannot create the output file: Permission denied$" \
            "$G" --plot ro/x.png u8.bin
        chmod 755 ro
        printf 'old' >ro.png
        chmod 444 ro.png
        err 1 "^gpuhist: ro.png: cannot write: Permission denied$" "$G" --plot ro.png u8.bin
        [ "$(cat ro.png)" = old ] || fail "a read-only plot file was replaced"
    fi
    # Never the input, nor the file of -o (by any name).
    cp u8.bin in.png
    err 2 "^gpuhist: in.png: the output would overwrite the input in.png \(the same file\)$" \
        "$G" --raw --plot in.png in.png
    cmp -s in.png u8.bin || fail "--plot changed its input"
    err 2 "^gpuhist: --plot same.png: the same file as --output same.png$" \
        "$G" -o same.png --plot same.png u8.bin
    err 2 "^gpuhist: --plot ./same.png: the same file as --output same.png$" \
        "$G" -o same.png --plot ./same.png u8.bin
    [ -e same.png ] && fail "same.png written"
    # An existing file is replaced whole, as -o replaces one, keeping its mode; a failed run
    # leaves it as it was and creates nothing.
    printf 'old' >old.png
    chmod 640 old.png
    ok "$G" -B cpu -o /dev/null --plot old.png u8.bin
    [ "$(head -c 4 old.png | od -An -tx1 | tr -d ' \n')" = 89504e47 ] || fail "old.png not replaced"
    [ "$(stat -c %a old.png)" = 640 ] || fail "replaced old.png has mode $(stat -c %a old.png)"
    cp old.png keep.png
    err 1 "^gpuhist: missing.bin: cannot open" "$G" --plot old.png missing.bin
    cmp -s old.png keep.png || fail "a failed run changed old.png"
    err 1 "^gpuhist: missing.bin: cannot open" "$G" -o new.csv --plot new.png missing.bin
    [ -e new.png ] || [ -e new.csv ] && fail "a failed run created new.png or new.csv"
    # A write error: one message, exit 1, nothing on standard output, no -o file.
    if [ -c /dev/full ]; then
        ln -s /dev/full full.png
        err 1 "^gpuhist: --plot full.png: write error: No space left on device$" \
            "$G" --plot full.png u8.bin
        err 1 "^gpuhist: --plot full.png: write error: No space left on device$" \
            "$G" -o h.csv --plot full.png u8.bin
        [ -e h.csv ] && fail "h.csv written although the plot failed"
    fi
    ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary files left: $(ls ./*.tmp.*)"
}

# N-D histograms (--dims, cli/run_nd.c): text, raw, 2-D .npy (C and Fortran order), every output
# format, weights and density on hand-computed points, and the refusals.
cli_nd() {
    local py=${GPUHIST_PYTHON:-python3}
    # 7 points: 4 counted in 2 x 2 bins over [0,1) x [0,1), (1,1) and (2,0.5) out, one NaN
    printf '0.1 0.1\n0.6 0.1\n0.6 0.6\n0.6 0.7\n1.0 1.0\nnan 0.5\n2 0.5\n' >p.txt
    ok "$G" --dims 2 -b 2 -r 0:1 --text p.txt
    has "# 2-D histogram of f64 points: 7 points, 4 counted, 2 out of range, 1 NaN" out.txt
    has "0 [0, 0.5)  0 [0, 0.5)  1" out.txt
    has "1 [0.5, 1)  1 [0.5, 1)  2" out.txt
    hasnt "0 [0, 0.5)  1 [0.5, 1)" out.txt # empty bins are left out of the table
    ok "$G" --dims 2 -b 2,2 -r 0:1,0:1 --text -f csv p.txt
    line 1 "bin0,lower0,upper0,bin1,lower1,upper1,count" out.txt
    line 2 "0,0,0.5,0,0,0.5,1" out.txt
    line 3 "0,0,0.5,1,0.5,1,0" out.txt
    line 4 "1,0.5,1,0,0,0.5,1" out.txt
    line 5 "1,0.5,1,1,0.5,1,2" out.txt
    [ "$(wc -l <out.txt)" = 5 ] || fail "nd csv: $(wc -l <out.txt) lines, wanted 5"
    # the last edge inclusive on every axis: (1,1) joins the last bin
    ok "$G" --dims 2 -b 2 -r 0:1 --last-inclusive --text -f csv p.txt
    line 5 "1,0.5,1,1,0.5,1,3" out.txt
    # density: count / bin area (0.25) / 4 counted
    ok "$G" --dims 2 -b 2 -r 0:1 --text -f csv --density p.txt
    line 1 "bin0,lower0,upper0,bin1,lower1,upper1,count,density" out.txt
    line 2 "0,0,0.5,0,0,0.5,1,1" out.txt
    line 5 "1,0.5,1,1,0.5,1,2,2" out.txt
    ok "$G" --dims 2 -b 3,2 -r 0:1.5,0:1 --text -f json p.txt
    "$py" - <<'PY' || fail "nd json: $(cat out.txt)"
import json
j = json.load(open("out.txt"))
assert j["dims"] == 2 and j["shape"] == [3, 2], j
assert j["counts"] == [[1, 0], [1, 2], [0, 0]], j["counts"]
assert j["edges"] == [[0, 0.5, 1, 1.5], [0, 0.5, 1]], j["edges"]
assert (j["out"], j["nan"], j["total"]) == (2, 1, 7), j
assert j["last_edge_inclusive"] == [False, False]
PY
    # the same points as raw f64 / f32, as a 2-D .npy in C and Fortran order
    "$py" - <<'PY' || { fail "cannot generate the nd test files"; return; }
import struct
P = [(0.1, 0.1), (0.6, 0.1), (0.6, 0.6), (0.6, 0.7), (1.0, 1.0), (float("nan"), 0.5), (2, 0.5)]
flat = [v for p in P for v in p]
open("p.f64", "wb").write(struct.pack("<14d", *flat))
open("p.f32", "wb").write(struct.pack("<14f", *flat))
open("col.f64", "wb").write(struct.pack("<14d", *([p[0] for p in P] + [p[1] for p in P])))
open("w.f64", "wb").write(struct.pack("<7d", 0.5, 1, 2, 4, 8, 16, 32))
open("w6.f64", "wb").write(struct.pack("<6d", 0.5, 1, 2, 4, 8, 16))
PY
    mknpy p2.npy '<f8' '(7, 2)' False p.f64
    mknpy pf.npy '<f8' '(7, 2)' True col.f64
    mknpy p3.npy '<f8' '(7, 2, 1)' False p.f64
    ok "$G" --dims 2 -b 2 -r 0:1 --text -f csv p.txt
    cp out.txt want.csv
    local f
    for f in "--dims 2 p2.npy" "--dims auto p2.npy" "--dims auto pf.npy" "--dims 2 -t f64 p.f64" \
        "--dims 2 -t f32 p.f32" "--dims 2 -t f64 --raw p.f64"; do
        # shellcheck disable=SC2086
        ok "$G" -b 2 -r 0:1 -f csv $f
        cmp -s out.txt want.csv || fail "nd: $f differs from the text input: $(head -c 300 out.txt)"
    done
    # weights: sums per bin (only the counted points' weights)
    ok "$G" --dims 2 -b 2 -r 0:1 -f csv --weights w.f64 --squares p2.npy
    line 1 "bin0,lower0,upper0,bin1,lower1,upper1,count,sum,sum_sq" out.txt
    line 2 "0,0,0.5,0,0,0.5,1,0.5,0.25" out.txt
    line 4 "1,0.5,1,0,0,0.5,1,1,1" out.txt
    line 5 "1,0.5,1,1,0.5,1,2,6,20" out.txt
    # -f npy: the counts shaped as the histogram, the edges of each axis and the sums beside
    ok "$G" --dims 2 -b 3,2 -r 0:1.5,0:1 -f npy -o h.npy --weights w.f64 p2.npy
    for f in h.npy h.edges0.npy h.edges1.npy h.sums.npy; do
        [ -s "$f" ] || fail "nd npy: $f not written"
    done
    head -c 128 h.npy | grep -aFq "'shape': (3, 2)" || fail "nd npy: counts not shaped (3, 2)"
    head -c 128 h.edges0.npy | grep -aFq "'shape': (4,)" || fail "nd npy: edges0 not of 4"
    head -c 128 h.edges1.npy | grep -aFq "'shape': (3,)" || fail "nd npy: edges1 not of 3"
    if "$py" -c "import numpy" 2>/dev/null; then
        "$py" - <<'PY' || fail "nd npy contents"
import numpy as np
c = np.load("h.npy")
assert c.dtype == np.uint64 and c.tolist() == [[1, 0], [1, 2], [0, 0]], c
assert np.load("h.edges0.npy").tolist() == [0, 0.5, 1, 1.5]
assert np.load("h.sums.npy").tolist() == [[0.5, 0], [1, 6], [0, 0]]
PY
    fi
    # integer bins on integer coordinates, explicit edges per axis
    printf '0 0 1 2 2 2 3 1\n' >i.txt
    ok "$G" --dims 2 -t i32 --text --integer 0,1 -b 3,2 -f csv i.txt
    line 2 "0,0,1,0,1,2,0" out.txt
    line 3 "0,0,1,1,2,3,0" out.txt
    line 4 "1,1,2,0,1,2,0" out.txt
    line 5 "1,1,2,1,2,3,1" out.txt
    line 6 "2,2,3,0,1,2,0" out.txt
    line 7 "2,2,3,1,2,3,1" out.txt
    ok "$G" --dims 2 -e '0,0.5,1;0,0.25,1' --text -f csv p.txt
    line 2 "0,0,0.5,0,0,0.25,1" out.txt
    line 4 "1,0.5,1,0,0,0.25,1" out.txt
    line 5 "1,0.5,1,1,0.25,1,2" out.txt
    # default: 10 bins per axis over each axis's finite min:max, last edge inclusive
    ok "$G" --dims 2 --text -f json p.txt
    "$py" -c "
import json; j = json.load(open('out.txt'))
assert j['shape'] == [10, 10] and j['edges'][0][0] == 0.1 and j['edges'][0][-1] == 2
assert j['edges'][1][-1] == 1.0 and j['last_edge_inclusive'] == [True, True]
assert (j['out'], j['nan']) == (0, 1)" || fail "nd auto range: $(head -c 300 out.txt)"
    # a 1-D histogramdd is the 1-D histogram
    printf '0.1 0.5 0.9 1 1.5\n' >one.txt
    ok "$G" --dims 1 -b 2 -r 0:1 --text -f csv one.txt
    line 2 "0,0,0.5,1" out.txt
    line 3 "1,0.5,1,2" out.txt
    # a regular file with every axis's range given streams in chunks (1 MiB here: 5 chunks of
    # 300000 f64 points): the same output as the same points read whole (Fortran order), also
    # from a big-endian .npy and raw
    "$py" - <<'PY' || { fail "cannot generate the streamed nd files"; return; }
import random, struct
r = random.Random(20261126)
N = 300000
pts = [(r.uniform(-1, 2), r.gauss(0, 1)) for _ in range(N)]
pts[7] = (float("nan"), 0.5)
flat = [v for p in pts for v in p]
def npy(name, descr, fortran, payload):
    h = "{'descr': '%s', 'fortran_order': %s, 'shape': (%d, 2), }" % (descr, fortran, N)
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    open(name, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + payload)
npy("big.npy", "<f8", False, struct.pack("<%dd" % (2 * N), *flat))
npy("bigbe.npy", ">f8", False, struct.pack(">%dd" % (2 * N), *flat))
npy("bigf.npy", "<f8", True, struct.pack("<%dd" % (2 * N), *([p[0] for p in pts] + [p[1] for p in pts])))
open("big.f64", "wb").write(struct.pack("<%dd" % (2 * N), *flat))
PY
    ok "$G" --dims 2 -b 30,20 -r 0:1,-2:2 --last-inclusive -f csv bigf.npy
    cp out.txt whole.csv
    for f in big.npy bigbe.npy "-t f64 big.f64"; do
        # shellcheck disable=SC2086
        GPUHIST_CHUNK_MIB=1 run "$G" -v --dims 2 -b 30,20 -r 0:1,-2:2 --last-inclusive -f csv $f
        [ "$rc" = 0 ] || fail "nd streamed $f: exit $rc: $(head -c 300 err.txt)"
        grep -q "streamed in chunks" err.txt || fail "nd $f not streamed: $(head -c 300 err.txt)"
        cmp -s out.txt whole.csv || fail "nd streamed $f differs from the whole read"
    done
    # auto ranges (a first pass over the file), --dims auto and weights read in step with the
    # points stream too: the same output as the same points and weights read whole from a pipe
    "$py" -c "
import random, struct
r = random.Random(20261127)
open('bigw.f64', 'wb').write(struct.pack('<300000d', *[r.uniform(-1, 3) for _ in range(300000)]))" ||
        { fail "cannot generate the nd weights"; return; }
    local a
    for a in "--dims 2 -b 30,20" "--dims auto -b 30,20 --last-inclusive" \
        "--dims auto -b 7 --weights bigw.f64 --squares" "--dims 2 -b 7 -r 0:1,-2:2 --weights bigw.f64" \
        "--dims 2 -b 9,4 -r 0:1 --weights bigw.f64"; do
        # shellcheck disable=SC2086
        run sh -c "cat big.npy | '$G' $a -f csv -"
        [ "$rc" = 0 ] || fail "nd whole $a: exit $rc: $(head -c 300 err.txt)"
        cp out.txt whole.csv
        # shellcheck disable=SC2086
        GPUHIST_CHUNK_MIB=1 run "$G" -v $a -f csv big.npy
        [ "$rc" = 0 ] || fail "nd streamed $a: exit $rc: $(head -c 300 err.txt)"
        grep -q "streamed in chunks" err.txt || fail "nd $a not streamed: $(head -c 300 err.txt)"
        cmp -s out.txt whole.csv || fail "nd streamed $a differs from the whole read"
    done
    # weights that end early or go on in a pipe beside a streamed file: both counts named
    head -c 800000 bigw.f64 >bigw_short.f64
    err 1 "standard input: 100000 weights for 300000" sh -c \
        "cat bigw_short.f64 | GPUHIST_CHUNK_MIB=1 '$G' --dims 2 -r 0:1,0:1 --weights - --weights-type f64 big.npy"
    cat bigw.f64 bigw.f64 >bigw_long.f64
    err 1 "standard input: 600000 weights for 300000" sh -c \
        "cat bigw_long.f64 | GPUHIST_CHUNK_MIB=1 '$G' --dims 2 -r 0:1,0:1 --weights - --weights-type f64 big.npy"
    # a .npy whose header promises more than the file holds: read whole, refused there
    head -c 100000 big.npy >short.npy
    err 1 "short.npy" "$G" --dims 2 -r 0:1 short.npy
    # a .npy without its magic (by its name, or --npy) is refused by the parser, bins given or not
    printf 'not a header' >nomagic.npy
    cp nomagic.npy nomagic.dat
    err 1 "nomagic.npy: not a .npy file" "$G" --dims 2 -r 0:1 nomagic.npy
    err 1 "nomagic.npy: not a .npy file" "$G" --dims 2 nomagic.npy
    err 1 "nomagic.dat: not a .npy file" "$G" --dims 2 -r 0:1 --npy nomagic.dat

    # refusals: one line, the right status, nothing written
    err 1 "shape \(7, 2\) holds 2 coordinates per point, not --dims 3" "$G" --dims 3 p2.npy
    err 1 "a .npy of 3 dimensions" "$G" --dims 2 p3.npy
    err 1 "14 values is not a whole number of points of 3 coordinates" \
        "$G" --dims 3 -t f64 p.f64
    err 2 "-b 10,10: 2 values for --dims 3" "$G" --dims 3 -b 10,10 -t f64 p.f64
    err 2 "-b: a list of values per axis needs --dims" "$G" -b 10,10 p2.npy
    err 2 "-r: a list of values per axis needs --dims" "$G" -r 0:1,0:1 p2.npy
    err 2 "-b 0,10: axis 0: expected a number of bins" "$G" --dims 2 -b 0,10 p2.npy
    err 2 "65536 x 65536 = 4294967296 joint bins is too many" "$G" --dims 2 -b 65536 p2.npy
    err 2 "-r 0:1,1:0: axis 1: '1:0' has LO not below HI" "$G" --dims 2 -r 0:1,1:0 p2.npy
    err 2 "-e: axis 1: edges must be strictly increasing" "$G" --dims 2 -e '0,1;0,2,2' p2.npy
    err 2 "--dims: expected 1 to 8 dimensions" "$G" --dims 9 p2.npy
    err 2 "--cumulative does not apply to N-D" "$G" --dims 2 --cumulative p2.npy
    err 2 "--outliers clamp does not apply to N-D" "$G" --dims 2 --outliers clamp p2.npy
    err 2 "--channels does not apply to N-D" "$G" --dims 2 --channels 2 p2.npy
    err 2 "--dims auto takes the dimensions from a 2-D .npy" "$G" --dims auto --text p.txt
    err 2 "--integer with --dims needs -b" "$G" --dims 2 -t i32 --integer 0 i.txt
    err 1 "axes\[0\].kind: integer bins need an integer coordinate type" \
        "$G" --dims 2 --integer 0 -b 2 p2.npy
    err 1 "w6.f64: 6 weights for 7 points" "$G" --dims 2 --weights w6.f64 p2.npy
    err 2 "--density is written by the table, CSV and JSON formats" \
        "$G" --dims 2 --density -f npy -o d.npy p2.npy
    [ -e d.npy ] && fail "d.npy written although refused"
    err 1 "a .npy of shape \(7, 2\) holds 2" "$G" --dims 3 -f npy -o e.npy p2.npy
    [ -e e.npy ] && fail "e.npy written although the run failed"
    ls ./*.tmp.* >/dev/null 2>&1 && fail "temporary files left: $(ls ./*.tmp.*)"

    # 300 x 300 joint bins (past 2^16 rows: the table's and the CSV's rows formatted on the
    # writers' threads): the same bytes on 1 and 3 threads, with sums, squares and density
    "$py" - <<'PY' || fail "writing pw.f64 / ww.f64"
import random, struct
r = random.Random(7)
pts = [r.random() for _ in range(10000)]
open("pw.f64", "wb").write(struct.pack("<%dd" % len(pts), *pts))
w = [r.uniform(-2, 3) for _ in range(5000)]
open("ww.f64", "wb").write(struct.pack("<%dd" % len(w), *w))
PY
    for f in csv table; do
        GPUHIST_WRITER_THREADS=1 "$G" --dims 2 -t f64 -b 300,300 -r 0:1,0:1 --weights ww.f64 \
            --squares --density -f $f -o w1.$f pw.f64 2>err.txt ||
            fail "-f $f on one thread: $(cat err.txt)"
        checks=$((checks + 1))
        GPUHIST_WRITER_THREADS=3 "$G" --dims 2 -t f64 -b 300,300 -r 0:1,0:1 --weights ww.f64 \
            --squares --density -f $f -o w3.$f pw.f64 2>err.txt ||
            fail "-f $f on three threads: $(cat err.txt)"
        checks=$((checks + 1))
        cmp -s w1.$f w3.$f || fail "N-D -f $f differs between 1 and 3 writer threads"
        [ "$(wc -l <w1.$f)" -gt 4000 ] || fail "N-D -f $f: $(wc -l <w1.$f) lines"
    done
    # JSON: the items of the nested arrays (counts, sums, sums of squares, density) are
    # formatted on the writers' threads in rows of 8 from 2^19 items on: 800 x 700 bins, the
    # same bytes on 1 and 3 threads but for "seconds"; npy (written whole): the same files
    local t
    for t in 1 3; do
        GPUHIST_WRITER_THREADS=$t "$G" --dims 2 -t f64 -b 800,700 -r 0:1,0:1 --weights ww.f64 \
            --squares --density -f json -o j$t.json pw.f64 2>err.txt ||
            fail "-f json on $t threads: $(cat err.txt)"
        checks=$((checks + 1))
        sed -E 's/"seconds": [0-9.]+/"seconds": S/' j$t.json >j$t.cut.json
        GPUHIST_WRITER_THREADS=$t "$G" --dims 2 -t f64 -b 800,700 -r 0:1,0:1 --weights ww.f64 \
            --squares -f npy -o n$t.npy pw.f64 2>err.txt || fail "-f npy on $t threads: $(cat err.txt)"
        checks=$((checks + 1))
    done
    cmp -s j1.cut.json j3.cut.json || fail "N-D -f json differs between 1 and 3 writer threads"
    for f in npy edges0.npy edges1.npy sums.npy sums_squared.npy; do
        cmp -s n1.$f n3.$f || fail "N-D -f npy: n.$f differs between 1 and 3 writer threads"
    done
    # the JSON read back: its nesting puts every value where the .npy files have it (C order,
    # bit for bit); with NumPy, the counts and edges are histogramdd's, the sums the correctly
    # rounded sums of each bin's weights (math.fsum), the squares and density NumPy's to 1e-12
    "$py" - <<'PY' || fail "N-D JSON of 800 x 700 bins read back"
import json, math, struct
j = json.load(open("j3.json"))
assert j["shape"] == [800, 700] and j["dims"] == 2, j["shape"]
def npy(name, code):
    b = open(name, "rb").read()
    start = 10 + struct.unpack("<H", b[8:10])[0]
    return list(struct.unpack("<%d%s" % ((len(b) - start) // 8, code), b[start:]))
def flat(key):
    v = j[key]
    assert len(v) == 800 and all(len(row) == 700 for row in v), key
    return [x for row in v for x in row]
assert flat("counts") == npy("n1.npy", "Q")
assert flat("sums") == npy("n1.sums.npy", "d")
assert flat("sums_squared") == npy("n1.sums_squared.npy", "d")
assert j["edges"] == [npy("n1.edges0.npy", "d"), npy("n1.edges1.npy", "d")]
assert len(flat("density")) == 560000
try:
    import numpy as np
except ImportError:
    raise SystemExit(0)
pts = np.fromfile("pw.f64").reshape(-1, 2)
w = np.fromfile("ww.f64")
rng = [(0, 1), (0, 1)]
counts, edges = np.histogramdd(pts, bins=(800, 700), range=rng)
assert np.array_equal(np.array(j["counts"], dtype=np.float64), counts)
assert all(np.array_equal(np.array(j["edges"][a]), edges[a]) for a in range(2))
bins = [np.searchsorted(edges[a], pts[:, a], side="right") - 1 for a in range(2)]
per_bin = {}
for a, b, x in zip(bins[0], bins[1], w):
    per_bin.setdefault((int(a), int(b)), []).append(float(x))
sums = np.array(j["sums"])
for (a, b), xs in per_bin.items():
    assert sums[a, b] == math.fsum(xs), (a, b, sums[a, b], math.fsum(xs))
assert np.count_nonzero(sums) == sum(1 for xs in per_bin.values() if math.fsum(xs) != 0)
sq = np.histogramdd(pts, bins=(800, 700), range=rng, weights=w * w)[0]
assert np.allclose(np.array(j["sums_squared"]), sq, rtol=1e-12, atol=0)
dens = np.histogramdd(pts, bins=(800, 700), range=rng, weights=w, density=True)[0]
assert np.allclose(np.array(j["density"]), dens, rtol=1e-12, atol=0)
PY
    checks=$((checks + 1))
}

# A run that starts on the CPU while the device starts (cli/hybrid.c), with OpenCL (PoCL in CI)
# as the device (-B opencl --start-on-cpu; GPUHIST_HYBRID_BACKEND=cuda, the test
# cli_hybrid_cuda: CUDA): whatever the split between the CPU threads and the
# device (GPUHIST_HYBRID_SPLIT=N: the device takes over at 1 MiB piece N; after:N: the threads
# wait at piece N until the device has taken their cursor; never: the device is never ready;
# unset: whenever it is), the counts and tallies are those of the CPU reference
# reading the whole input, on raw and .npy files of u8, i16, f32 and f64 whose sizes are not
# multiples of a piece; the auto range; a read that fails in either part; -o and standard
# output when the run ends without waiting for the device; -B auto without a GPU.
cli_hybrid() {
    local py=${GPUHIST_PYTHON:-python3}
    local D=${GPUHIST_HYBRID_BACKEND:-opencl} # the device side: opencl, or cuda (label gpu)
    # PoCL's compiler (LLVM) gives the thread that builds the kernels (here the device thread,
    # which ends before the process does) an alternate signal stack of its own; AddressSanitizer
    # then fails to unmap its own one when that thread ends ("unable to unmap"). Its own stacks
    # off: nothing else of the sanitizer changes (a no-op without AddressSanitizer).
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}use_sigaltstack=0
    "$py" - <<'PY' || { fail "cannot generate the hybrid test files"; return; }
import random, struct
r = random.Random(20261127)
MiB = 1 << 20
def npy(name, descr, fmt, items):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(items))
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    with open(name, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack(fmt % len(items), *items))
    return 10 + len(header)
u8 = r.randbytes(3 * MiB + 7)
i16 = [r.randrange(-32768, 32768) for _ in range(3 * MiB // 2 + 3)]
fl = [r.random() * 2 - 0.5 for _ in range(700001)] + [float("nan"), float("inf"), -0.0]
f64 = fl[:400001] + [float("nan"), -float("inf")]
data = {
    "u8.bin": u8, "i16.bin": struct.pack("<%dh" % len(i16), *i16),
    "f32.bin": struct.pack("<%df" % len(fl), *fl), "f64.bin": struct.pack("<%dd" % len(f64), *f64),
}
pieces = {}
for name, b in data.items():
    open(name, "wb").write(b)
    pieces[name] = (len(b) + MiB - 1) // MiB
for name, descr, fmt, items in (("u8.npy", "|u1", "<%dB", list(u8)), ("i16.npy", "<i2", "<%dh", i16),
                                ("f32.npy", "<f4", "<%df", fl), ("f64.npy", "<f8", "<%dd", f64)):
    size = struct.calcsize(fmt % len(items))
    npy(name, descr, fmt, items)
    pieces[name] = (size + MiB - 1) // MiB
with open("pieces.txt", "w") as f:
    for name, n in pieces.items():
        f.write("%s %d\n" % (name, n))
PY
    ok "$G" --help
    has "--start-on-cpu" out.txt
    # -B auto where no GPU is usable (this machine, CI): the CPU's output, as before
    for spec in "u8.bin:" "f32.bin:-t f32 -b 100"; do
        local f=${spec%%:*} args=${spec#*:}
        # shellcheck disable=SC2086
        "$G" -B cpu $args -f json "$f" | grep -v '"seconds"' >want.txt 2>err.txt
        # shellcheck disable=SC2086
        GPUHIST_CHUNK_MIB=1 ok "$G" $args -f json "$f"
        grep -v '"seconds"' out.txt >got.txt
        if "$G" -B cuda --list-devices >/dev/null 2>&1; then
            echo "note: a CUDA device is usable here: -B auto may count on it ($f)"
            grep -Ev '"(strategy|backend)"' want.txt >want2.txt
            grep -Ev '"(strategy|backend)"' got.txt >got2.txt
            cmp -s want2.txt got2.txt || fail "-B auto on $f ($args) differs from -B cpu"
        else
            cmp -s want.txt got.txt || fail "-B auto on $f ($args) differs from -B cpu"
        fi
    done
    if ! "$G" -B "$D" --list-devices >/dev/null 2>&1; then
        if [ "$D" = cuda ]; then
            echo "skipped: no CUDA device here"
            exit 77
        fi
        echo "note: no $D device: the device side of the hybrid runs is not tested here"
        return
    fi
    local n f args k
    while read -r f n; do
        for args in "" "-b 17 -r 3:200" "-t f32" "-t f32 -b 4096 -r 0:1" "-t f64 -b 10" \
            "-t f64 -b 7 -r -0.25:1.25 --outliers clamp" "-t i16" "-b 33"; do
            # the types and bins that fit the file (the .npy header gives the type)
            case "$f:$args" in
            u8.bin:|u8.bin:-b\ 17*|i16.bin:-t\ i16|f32.bin:-t\ f32*|f64.bin:-t\ f64*) ;;
            *.npy:|u8.npy:-b\ 17*|f32.npy:-b\ 33|f64.npy:-b\ 33) ;;
            *) continue ;;
            esac
            # the CPU reference, reading the whole input from a pipe
            # shellcheck disable=SC2086
            cat "$f" | "$G" -B cpu -s cpu-reference $args -f json - |
                grep -Ev '"(seconds|strategy|backend)"' >want.txt
            local splits="0 1 $((n / 2)) $((n - 1)) after:1 never natural"
            case $f in *.npy) splits="1 $((n - 1)) after:2 natural" ;; esac
            for k in $splits; do
                local knob=$k
                [ "$k" = natural ] && knob=
                # shellcheck disable=SC2086
                GPUHIST_HYBRID_SPLIT=$knob GPUHIST_CHUNK_MIB=1 run "$G" -B "$D" --start-on-cpu \
                    -v $args -f json "$f"
                [ "$rc" = 0 ] || fail "hybrid $f ($args, split $k): exit $rc: $(head -c 300 err.txt)"
                grep -Ev '"(seconds|strategy|backend)"' out.txt >got.txt
                cmp -s want.txt got.txt ||
                    fail "hybrid $f ($args, split $k) differs from the CPU reference: $(diff want.txt got.txt | head -c 300)"
                case $k in
                never)
                    has "before the $D device had started" err.txt
                    has '"backend": "cpu"' out.txt
                    has '"strategy": "cpu-threads"' out.txt
                    ;;
                natural) ;;
                after:*) # the device takes the cursor while the threads count (a piece or two later)
                    has "of the data, the $D device" err.txt
                    has "\"strategy\": \"cpu-threads + $D-" out.txt
                    ;;
                *)
                    has "the CPU threads counted bytes [0, $((k * 1048576))) of the data, the $D device" err.txt
                    has "its stream prepared in" err.txt
                    has "\"backend\": \"$D\"" out.txt
                    has "\"strategy\": \"cpu-threads + $D-" out.txt
                    has "backend: cpu + $D" err.txt
                    ;;
                esac
            done
        done
    done <pieces.txt
    # The device alone (-B $D, no start on the CPU): its stream is prepared before it begins
    # (staging buffers allocated, kernels loaded by one chunk of zeros, -v says so) and the
    # counts are still the CPU reference's, from a file and from a pipe.
    for spec in "u8.bin:" "f32.bin:-t f32 -b 4096 -r 0:1" "f64.npy:-b 33 -r -0.5:1.5"; do
        f=${spec%%:*} args=${spec#*:}
        # shellcheck disable=SC2086
        cat "$f" | "$G" -B cpu -s cpu-reference $args -f json - |
            grep -Ev '"(seconds|strategy|backend)"' >want.txt
        # shellcheck disable=SC2086
        GPUHIST_CHUNK_MIB=1 run "$G" -B "$D" -v $args -f json "$f"
        [ "$rc" = 0 ] || fail "-B $D $f ($args): exit $rc: $(head -c 300 err.txt)"
        has "device stream prepared in" err.txt
        grep -Ev '"(seconds|strategy|backend)"' out.txt >got.txt
        cmp -s want.txt got.txt || fail "-B $D $f ($args) differs from the CPU reference"
        checks=$((checks + 1))
        # shellcheck disable=SC2086
        cat "$f" | GPUHIST_CHUNK_MIB=1 "$G" -B "$D" -v $args -f json - >out.txt 2>err.txt ||
            fail "-B $D $f ($args) from a pipe: $(head -c 300 err.txt)"
        # a pipe whose bins need the data (no -r) is read whole: no stream to prepare
        case "$args" in
            *-r*) has "device stream prepared in" err.txt ;;
            *) has "samples of u8, read in" err.txt && hasnt "device stream prepared in" err.txt ;;
        esac
        grep -Ev '"(seconds|strategy|backend)"' out.txt >got.txt
        cmp -s want.txt got.txt || fail "-B $D $f ($args) from a pipe differs from the CPU reference"
    done
    # A read that fails in the CPU threads' part (byte 500000, piece 0) or in the device's
    # (byte 3000000, piece 2, the device taking over at piece 2 or at once): one message, exit 1,
    # no output file, no temporary.
    local at
    for at in 500000 3000000; do
        for k in 2 0 never natural; do
            local knob=$k
            [ "$k" = natural ] && knob=
            rm -f got.json
            GPUHIST_FAULT_READ_AT=$at GPUHIST_HYBRID_SPLIT=$knob GPUHIST_CHUNK_MIB=1 \
                err 1 '^gpuhist: u8.bin: read error: Input/output error$' \
                "$G" -B "$D" --start-on-cpu -f json -o got.json u8.bin
            [ -e got.json ] && fail "a failed read (byte $at, split $k) left got.json behind"
            ls got.json.tmp.* >/dev/null 2>&1 && fail "a failed read (byte $at, split $k) left a temporary"
        done
    done
    # The run that does not wait for the device (never ready): -o renamed into place, standard
    # output flushed (and its write error reported), the exit status kept.
    "$G" -B cpu -f csv u8.bin >want.txt 2>err.txt
    rm -f got.csv
    GPUHIST_HYBRID_SPLIT=never GPUHIST_CHUNK_MIB=1 ok "$G" -B "$D" --start-on-cpu -f csv -o got.csv u8.bin
    cmp -s want.txt got.csv || fail "-o of a run that did not wait for the device differs"
    ls got.csv.tmp.* >/dev/null 2>&1 && fail "a temporary left beside got.csv"
    GPUHIST_HYBRID_SPLIT=never GPUHIST_CHUNK_MIB=1 ok "$G" -B "$D" --start-on-cpu -f csv u8.bin
    cmp -s want.txt out.txt || fail "standard output of a run that did not wait for the device differs"
    if [ -c /dev/full ]; then
        checks=$((checks + 1))
        GPUHIST_HYBRID_SPLIT=never "$G" -B "$D" --start-on-cpu -f csv u8.bin >/dev/full 2>err.txt
        local frc=$?
        [ $frc = 1 ] || fail "a run that did not wait for the device, >/dev/full: exit $frc"
        has "standard output: write error" err.txt
    fi
    # a bad option of such a run is still a usage error before anything is read, and options
    # it cannot honour are refused rather than ignored
    err 2 "unknown backend" "$G" -B gpu --start-on-cpu u8.bin
    err 2 "^gpuhist: --start-on-cpu conflicts with -B cpu " "$G" -B cpu --start-on-cpu u8.bin
    err 2 "^gpuhist: --start-on-cpu conflicts with --devices " "$G" --devices all --start-on-cpu u8.bin
    err 2 "^gpuhist: --start-on-cpu conflicts with --weights " \
        "$G" -B "$D" --start-on-cpu --weights u8.bin u8.bin
    err 2 "^gpuhist: --start-on-cpu conflicts with --strategy " \
        "$G" -B "$D" --start-on-cpu -s cpu-serial u8.bin
    err 2 "^gpuhist: --start-on-cpu conflicts with --dims " "$G" --dims 2 --start-on-cpu u8.bin
}

# Many rows are formatted on several threads (cli/writers.c, write_rows): the bytes must be
# those of one thread (GPUHIST_WRITER_THREADS=1 formats every row on the calling thread), for
# every format and option that changes a row, and the output must be right: JSON parses and
# holds NumPy's counts, edges and density; CSV and table have one line per bin.
cli_writers() {
    local py=""
    for p in "${GPUHIST_PYTHON:-}" /usr/bin/python3 python3; do
        if [ -n "$p" ] && "$p" -c "import numpy" 2>/dev/null; then
            py=$p
            break
        fi
    done
    if [ -z "$py" ]; then
        echo "writers: skipped (no python3 with NumPy to make the data)"
        return 0
    fi
    # seed 18: 150001 f32 in [-1, 2), one f64 weight each; 70001 RGBA u16 pixels
    "$py" - <<'PY' || fail "writers: data not made"
import numpy as np
print("writers: seed 18")
r = np.random.default_rng(18)
x = r.uniform(-1.0, 2.0, 150001).astype(np.float32)
x[::997] = np.nan
x.tofile("x.f32")
r.standard_normal(150001).tofile("w.f64")
r.integers(0, 65536, size=(70001, 4), dtype=np.uint16).tofile("rgba.u16")
PY
    local specs=(
        "x.f32|-t f32 -b 131072 -r 0:1 --cumulative --density"
        "x.f32|-t f32 -b 65537 -r -1:2 --weights w.f64 --weights-type f64 --squares --density"
        "rgba.u16|-t u16 --channels 4:3 -b 100000 -r 0:65536 --cumulative --density"
        "rgba.u16|-t u16 --channels 4 --cumulative"
    )
    local s in args fmt t
    for s in "${specs[@]}"; do
        in=${s%%|*}
        args=${s#*|}
        for fmt in table csv json; do
            # shellcheck disable=SC2086
            GPUHIST_WRITER_THREADS=1 ok "$G" -B cpu $args -f "$fmt" -o one.$fmt "$in"
            for t in "" 3 16; do
                # shellcheck disable=SC2086
                GPUHIST_WRITER_THREADS=$t ok "$G" -B cpu $args -f "$fmt" -o many.$fmt "$in"
                # JSON's "seconds" is the run's time
                cmp -s <(grep -v '"seconds"' one.$fmt) <(grep -v '"seconds"' many.$fmt) ||
                    fail "writers: $fmt on ${t:-all cores} threads differs from one thread: $args"
            done
            [ "$fmt" = json ] && cp one.json "$in.$(echo "$args" | cksum | cut -d' ' -f1).json"
        done
        # one line a bin: CSV (+ the header), table (+ the header and the tally and footer lines)
        local bins
        bins=$(awk -F, 'NR > 1 { n++ } END { print n }' one.csv)
        checks=$((checks + 1))
        [ "$(wc -l <one.table)" -gt "$bins" ] && [ "$bins" -ge 65536 ] ||
            fail "writers: $bins CSV rows, $(wc -l <one.table) table lines: $args"
    done
    # the JSON outputs hold NumPy's results (sums: rounded once, as math.fsum over each bin)
    checks=$((checks + 1))
    "$py" - "${specs[@]}" <<'PY' || fail "writers: JSON output differs from NumPy"
import glob, json, math, sys, zlib, subprocess
import numpy as np
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("writers:", what)
        ok = False
x = np.fromfile("x.f32", dtype=np.float32)
w = np.fromfile("w.f64")
px = np.fromfile("rgba.u16", dtype=np.uint16).reshape(-1, 4)
def load(spec):
    args = spec.split("|", 1)[1]
    ck = subprocess.run(["cksum"], input=(args + "\n").encode(), capture_output=True).stdout.split()[0].decode()
    return json.load(open(spec.split("|")[0] + "." + ck + ".json"))
s = sys.argv[1:]
j = load(s[0])
c, e = np.histogram(x, bins=131072, range=(0, 1))
check(j["counts"] == c.tolist(), "counts of spec 1")
check([float(v) for v in j["edges"]] == e.tolist(), "edges of spec 1")
check(j["cumulative"] == np.cumsum(c).tolist(), "cumulative of spec 1")
d, _ = np.histogram(x, bins=131072, range=(0, 1), density=True)
check([float(v) for v in j["density"]] == d.tolist(), "density of spec 1")
j = load(s[1])
c, e = np.histogram(x, bins=65537, range=(-1, 2))
check(j["counts"] == c.tolist(), "counts of spec 2")
check([float(v) for v in j["edges"]] == e.tolist(), "edges of spec 2")
k = np.searchsorted(e, x, side="right") - 1
k[x == e[-1]] = len(c) - 1
good = ~np.isnan(x) & (k >= 0) & (k < len(c))
order = np.argsort(k[good], kind="stable")
ks, ws = k[good][order], w[good][order]
cuts = np.searchsorted(ks, np.arange(len(c) + 1))
sums = [math.fsum(ws[cuts[i]:cuts[i + 1]]) for i in range(len(c))]
# each square exactly, as hi + lo (Dekker's product: no overflow or underflow here)
hi = ws * ws
ah = 134217729.0 * ws
ah = ah - (ah - ws)
al = ws - ah
lo = ((ah * ah - hi) + 2 * ah * al) + al * al
sq = [math.fsum(np.concatenate((hi[cuts[i]:cuts[i + 1]], lo[cuts[i]:cuts[i + 1]])))
      for i in range(len(c))]
check([float(v) for v in j["sums"]] == sums, "sums of spec 2")
check([float(v) for v in j["sums_squared"]] == sq, "sums_squared of spec 2")
j = load(s[2])
for ch in range(3):
    c, _ = np.histogram(px[:, ch], bins=100000, range=(0, 65536))
    check(j["counts"][ch] == c.tolist(), "counts of spec 3, channel %d" % ch)
    check(j["cumulative"][ch] == np.cumsum(c).tolist(), "cumulative of spec 3")
j = load(s[3])
for ch in range(4):
    check(j["counts"][ch] == np.bincount(px[:, ch], minlength=65536).tolist(),
          "counts of spec 4, channel %d" % ch)
sys.exit(0 if ok else 1)
PY
    # a file of a few samples with many bins (the command's stream counts it, the sub-counters
    # flushed sparsely): 0.25, 0.5, 0.75 and 2^20 bins over [0, 1)
    printf '\x00\x00\x80\x3e\x00\x00\x00\x3f\x00\x00\x40\x3f' >three.f32
    ok "$G" -B cpu -t f32 -b 1048576 -r 0:1 -f csv three.f32
    checks=$((checks + 1))
    [ "$(awk -F, 'NR > 1 { n++ } NR > 1 && $4 != 0 { s = s $1 "=" $4 " " } END { print n, s }' \
        out.txt)" = "1048576 262144=1 524288=1 786432=1 " ] ||
        fail "writers: 3 samples in 2^20 bins: $(awk -F, 'NR > 1 && $4 != 0' out.txt | head -5)"
    # bars on a terminal (UTF-8 eighths, 4 channels of bars) over 65536 rows
    if command -v script >/dev/null 2>&1; then
        local t
        for t in 1 3; do
            checks=$((checks + 1))
            env -u LC_ALL -u LC_CTYPE LANG=C.UTF-8 GPUHIST_WRITER_THREADS=$t script -qec \
                "$G -B cpu -t u16 --channels 4 rgba.u16" /dev/null >bars.$t 2>&1 ||
                fail "writers: table with bars failed: $(head -c 300 bars.$t)"
        done
        checks=$((checks + 1))
        grep -q '█' bars.1 && cmp -s bars.1 bars.3 || fail "writers: bars on 3 threads differ"
    fi
    return 0
}

# A run that may use a GPU forks and returns when its output is complete (cli/detach.c);
# GPUHIST_DETACH=1 detaches every run, also here without a GPU. Detached and not, the same bytes
# on standard output and error, the same status, the same files; a child that dies is reported
# as such; a parent that dies takes its child along.
# child_of PID: the pid of PID's child once it exists (up to ~1 s), else nothing.
child_of() {
    local i c
    for i in $(seq 1 100); do
        c=$(pgrep -P "$1" 2>/dev/null | head -1)
        [ -n "$c" ] && break
        sleep 0.01
    done
    echo "$c"
}
cli_detach() {
    head -c 4000000 /dev/urandom >d.u8
    printf '%s\n' 3 1 4 1 5 9 2 6 >d.txt
    local d k
    for d in 0 1; do
        export GPUHIST_DETACH=$d
        run "$G" -B cpu -f csv d.u8
        cp out.txt plain.$d
        echo "$rc" >>rcs.$d
        cat err.txt >>errs.$d
        run "$G" -B cpu -b 3 -r 0:256 -f csv -o o.$d.csv d.u8
        echo "$rc" >>rcs.$d
        cat err.txt out.txt >>errs.$d
        run "$G" -B cpu missing.bin
        echo "$rc" >>rcs.$d
        cat err.txt out.txt >>errs.$d
        "$G" -B cpu --text -b 4 -f csv <d.txt >stdin.$d 2>>errs.$d
        echo "$?" >>rcs.$d
        "$G" -B cpu -f csv d.u8 >/dev/full 2>>errs.$d
        echo "$?" >>rcs.$d
        # standard error closed: the status pipe must not take its number
        "$G" -B cpu missing.bin 2>&-
        echo "$?" >>rcs.$d
        checks=$((checks + 6))
    done
    unset GPUHIST_DETACH
    for k in plain rcs errs stdin; do
        cmp -s "$k.0" "$k.1" || fail "detach: $k differs: $(diff "$k.0" "$k.1" | head -c 300)"
    done
    cmp -s o.0.csv o.1.csv || fail "detach: -o files differ"
    [ -s plain.1 ] && grep -q '^0,0,1,' plain.1 || fail "detach: no table: $(head -c 200 plain.1)"
    [ "$(sed -n 3p rcs.1)" = 1 ] || fail "detach: a missing file did not exit 1: $(cat rcs.1)"
    [ "$(sed -n 5p rcs.1)" = 1 ] || fail "detach: /dev/full did not exit 1: $(cat rcs.1)"
    [ "$(sed -n 6p rcs.1)" = 1 ] || fail "detach: stderr closed: no exit 1: $(cat rcs.1)"
    # the run's process killed: the command ends by the same signal
    head -c 400000000 /dev/zero >big.u8
    GPUHIST_DETACH=1 "$G" -B cpu -j 1 -b 7 -r 1:2 big.u8 >/dev/null 2>&1 &
    local p=$! c i
    c=$(child_of "$p")
    checks=$((checks + 1))
    if [ -n "$c" ]; then
        kill -KILL "$c"
        wait "$p"
        rc=$?
        [ "$rc" = 137 ] || fail "detach: the killed run's command exited $rc (wanted 137)"
    else
        wait "$p"
        echo "detach: the run ended before its process was seen (not checked)"
    fi
    # the command killed: its run ends too
    GPUHIST_DETACH=1 "$G" -B cpu -j 1 -b 7 -r 1:2 big.u8 >/dev/null 2>&1 &
    p=$!
    c=$(child_of "$p")
    checks=$((checks + 1))
    if [ -n "$c" ]; then
        kill -TERM "$p"
        wait "$p"
        for i in $(seq 1 100); do
            case "$(ps -o stat= -p "$c" 2>/dev/null)" in "" | Z*) break ;; esac
            sleep 0.01
        done
        case "$(ps -o stat= -p "$c" 2>/dev/null)" in
        "" | Z*) ;;
        *) fail "detach: the run outlived its command"; kill -KILL "$c" ;;
        esac
    else
        wait "$p"
    fi
    rm -f big.u8
    return 0
}

case "$SECTION" in
formats) cli_formats ;;
devices) cli_devices ;;
inputs) cli_inputs ;;
npy) cli_npy ;;
errors) cli_errors ;;
output) cli_output ;;
stdin) cli_stdin ;;
listing) cli_listing ;;
tty) cli_tty ;;
strategies) cli_strategies ;;
demo) cli_demo ;;
stream) cli_stream ;;
npyout) cli_npyout ;;
weights) cli_weights ;;
images) cli_images ;;
plot) cli_plot ;;
nd) cli_nd ;;
hybrid) cli_hybrid ;;
writers) cli_writers ;;
detach) cli_detach ;;
*)
    echo "unknown section $SECTION"
    exit 2
    ;;
esac
echo "$SECTION: $checks commands, $fails failures"
[ "$fails" = 0 ]
