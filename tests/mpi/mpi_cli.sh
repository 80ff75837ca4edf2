#!/usr/bin/env bash
# The gpuhist command under mpirun against the plain command (CPU backend).
#
# usage: mpi_cli.sh GPUHIST GEN_DATA MPIEXEC WORKDIR SECTION
#   equal:  for 1, 2 and 3 ranks, the output of `mpirun -n N gpuhist ARGS` equals that of
#           `gpuhist ARGS` bit for bit (JSON, CSV, .npy files; only "seconds" and "strategy",
#           which depend on the run, are left out) over raw files whose pixel counts do not
#           divide by 2 or 3 (and fewer pixels than ranks, and none), .npy (little- and
#           big-endian), every bin kind, channels, the clamp policy and weights with squares.
#   errors: a rank that fails (a missing file, on every rank or on one; a read error on one
#           rank's share; inputs that cannot be shared out; options; an unwritable output):
#           every rank exits with the same non-zero status, exactly one "gpuhist:" line on
#           stderr in all, within a time limit (no hang).
# Exit 0 when every check passes, 1 otherwise (each failure printed with the command).
set -u
G=$1
GEN=$2
MPIEXEC=$3
W=$4
SECTION=$5
rm -rf "$W/$SECTION"
mkdir -p "$W/$SECTION"
cd "$W/$SECTION" || exit 1

# Open MPI: run as root (CI does) and more ranks than cores; in a container, shared memory
# without cross-memory attach.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
MPIFLAGS=()
if "$MPIEXEC" --version 2>&1 | grep -Eq 'Open MPI|OpenRTE'; then
    MPIFLAGS=(--oversubscribe)
fi
LIMIT=60 # seconds any one launch may take: a hang fails the test instead of blocking it

fails=0
checks=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# The output without the fields that depend on the run.
stable() {
    grep -v -E '"(seconds|strategy)":' "$1"
}

# mrun N ARGS...: `mpirun -n N gpuhist ARGS` with stdout -> m.out, stderr -> m.err, mpirun's
# status (Open MPI: the first non-zero status of a rank) -> $rc.
mrun() {
    local n=$1
    shift
    timeout "$LIMIT" "$MPIEXEC" "${MPIFLAGS[@]}" -n "$n" "$G" "$@" >m.out 2>m.err </dev/null
    rc=$?
    checks=$((checks + 1))
}

# EACH: the command line of one rank that appends its exit status to m.status and then exits 0
# (so the launcher, which aborts the job when a rank exits non-zero, lets every rank finish).
EACH=(sh -c '"$@"; echo $? >>m.status' sh "$G")

# mrun_each N ARGS...: as mrun, every rank's exit status in m.status (one line each).
mrun_each() {
    local n=$1
    shift
    rm -f m.status
    timeout "$LIMIT" "$MPIEXEC" "${MPIFLAGS[@]}" -n "$n" "${EACH[@]}" "$@" >m.out 2>m.err </dev/null
    rc=$?
    checks=$((checks + 1))
}

# same ARGS...: the plain command, then 1, 2, 3 ranks, outputs equal.
same() {
    "$G" "$@" >one.out 2>one.err </dev/null
    local r=$?
    checks=$((checks + 1))
    if [ "$r" != 0 ]; then
        fail "plain run exit $r: gpuhist $* -- $(head -c 300 one.err)"
        return 0
    fi
    stable one.out >one.txt
    for n in 1 2 3; do
        mrun "$n" "$@"
        [ "$rc" = 0 ] || { fail "exit $rc with $n ranks: gpuhist $* -- $(head -c 400 m.err)"; continue; }
        [ -s m.err ] && fail "stderr not empty with $n ranks: gpuhist $* -- $(head -c 300 m.err)"
        stable m.out >m.txt
        cmp -s one.txt m.txt || fail "$n ranks differ: gpuhist $* -- $(diff one.txt m.txt | head -c 600)"
    done
    return 0
}

# same_bytes ARGS...: as same, the outputs compared byte for byte (-f npy on standard output).
same_bytes() {
    "$G" "$@" >one.out 2>one.err </dev/null || { fail "plain run: gpuhist $* -- $(head -c 300 one.err)"; return 0; }
    checks=$((checks + 1))
    for n in 2 3; do
        mrun "$n" "$@"
        [ "$rc" = 0 ] || { fail "exit $rc with $n ranks: gpuhist $* -- $(head -c 400 m.err)"; continue; }
        cmp -s one.out m.out || fail "$n ranks differ (bytes): gpuhist $*"
    done
    return 0
}

# same_files FILES -- ARGS...: as same, comparing the files the command writes (-o ...).
same_files() {
    local files=()
    while [ "$1" != "--" ]; do
        files+=("$1")
        shift
    done
    shift
    rm -f "${files[@]}"
    "$G" "$@" >/dev/null 2>one.err </dev/null || { fail "plain run: gpuhist $* -- $(head -c 300 one.err)"; return 0; }
    checks=$((checks + 1))
    local f
    for f in "${files[@]}"; do mv "$f" "$f.one"; done
    for n in 2 3; do
        mrun "$n" "$@"
        [ "$rc" = 0 ] || { fail "exit $rc with $n ranks: gpuhist $* -- $(head -c 400 m.err)"; continue; }
        [ -s m.out ] && fail "stdout not empty with -o and $n ranks: gpuhist $*"
        for f in "${files[@]}"; do
            if [ "${f%.json}" != "$f" ]; then
                stable "$f" >a.txt
                stable "$f.one" >b.txt
                cmp -s a.txt b.txt || fail "$f differs with $n ranks: gpuhist $*"
            else
                cmp -s "$f" "$f.one" || fail "$f differs with $n ranks: gpuhist $*"
            fi
        done
        # no rank but 0 wrote anything (temporary files included)
        local extra
        extra=$(find . -maxdepth 1 -name 'out*' ! -name '*.one' | sort | tr '\n' ' ')
        local want
        want=$(printf '%s\n' "${files[@]/#/./}" | sort | tr '\n' ' ')
        [ "$extra" = "$want" ] || fail "files after $n ranks: '$extra', wanted '$want'"
        rm -f "${files[@]}"
    done
    return 0
}

# refuse N STATUS PATTERN ARGS...: every rank exits STATUS, one "gpuhist:" line on stderr in
# all, matching PATTERN, nothing on stdout, within the time limit.
refuse() {
    local n=$1 want=$2 pat=$3
    shift 3
    mrun_each "$n" "$@"
    check_refusal "$n" "$want" "$pat" "gpuhist $*"
}

check_refusal() {
    local n=$1 want=$2 pat=$3 what=$4
    [ "$rc" = 124 ] && fail "timed out (a hang?) with $n ranks: $what"
    local got
    got=$(sort -u m.status 2>/dev/null | tr '\n' ' ')
    [ "$(wc -l <m.status 2>/dev/null)" = "$n" ] && [ "$got" = "$want " ] ||
        fail "rank exits '$(tr '\n' ' ' <m.status 2>/dev/null)' (wanted $n times $want): $what"
    local lines
    lines=$(grep -c '^gpuhist: ' m.err)
    [ "$lines" = 1 ] || fail "$lines 'gpuhist:' lines on stderr (wanted 1) with $n ranks: $what -- $(grep gpuhist: m.err | head -c 500)"
    grep -Eq -- "$pat" m.err || fail "stderr lacks /$pat/ with $n ranks: $what -- $(grep gpuhist: m.err | head -c 300)"
    [ -s m.out ] && fail "stdout not empty on error with $n ranks: $what"
    return 0
}

# ---- inputs: pixel counts that do not divide by 2 or 3, fewer pixels than ranks, none ----
"$GEN" u8 1001 1 u8.raw
"$GEN" u8 2 2 u8_2.raw
: >empty.raw
"$GEN" f32 1003 3 f32.raw
"$GEN" f64 1009 4 f64.raw
"$GEN" f64 2 5 f64_2.raw
"$GEN" f64 1013 6 f64.npy npy
"$GEN" f32 1019 7 f32be.npy npy-be
"$GEN" i32 1021 8 i32.raw
"$GEN" u8 2999 9 rgb.raw         # 999 pixels of 3 channels + 2 bytes: cut to 2997 below
head -c 2997 rgb.raw >rgb3.raw
"$GEN" f32 3003 10 f32x3.raw     # 1001 pixels of 3 channels
"$GEN" w64 1009 11 w64.raw       # weights of f64.raw
"$GEN" w32 1001 12 w32.npy npy   # weights of u8.raw
"$GEN" w64 1001 13 w64_3.raw     # weights of f32x3.raw (one per pixel)
"$GEN" w64 2 14 w64_2.raw
"$GEN" f32 2500003 15 big.raw     # 10 MB: several 4 MiB windows (GPUHIST_CHUNK_MIB=1)
"$GEN" f32 600003 16 mid.raw      # 2.4 MB, and its weights: 5 pieces of 1 MiB of weights
"$GEN" w64 600003 17 wmid.raw
printf '%s\n' -2.5 -1 0 0.25 1 4 >edges.txt

if [ "$SECTION" = equal ]; then
    same -B cpu -f json u8.raw                                   # u8: one bin per value
    same -B cpu -f json u8_2.raw                                 # 2 pixels, 3 ranks
    same -B cpu -f json empty.raw                                # no pixels
    same -B cpu -f json -t f64 -b 4 empty.raw                    # auto range of nothing: [0, 1]
    same -B cpu -f json -t f32 -r -1:2 -b 10 f32.raw             # f32, -r
    same -B cpu -f json -t f64 -b 17 f64.raw                     # auto range: the allreduce
    same -B cpu -f json -t f64 -b 5 f64_2.raw                    # auto range, ranks with nothing
    same -B cpu -f json -b 9 f64.npy                             # .npy header, auto range
    same -B cpu -f json -r -2:5 -b 7 f32be.npy                   # big-endian .npy, swapped
    same -B cpu -f json -t f64 -e @edges.txt --outliers clamp f64.raw   # edges, clamp
    same -B cpu -f json -t i32 --integer -5 -b 20 i32.raw        # integer bins
    same -B cpu -f json --integer 10 u8.raw                      # bincount, 8-bit
    same -B cpu -f json --channels 3:2 rgb3.raw                  # channels, u8
    same -B cpu -f json -t f32 --channels 3:2 -b 6 f32x3.raw     # channels, auto range
    same -B cpu -f json -t f64 -b 8 --weights w64.raw --squares f64.raw         # weights
    same -B cpu -f json -t f64 -b 3 --weights w64_2.raw --squares f64_2.raw     # 2 pixels
    same -B cpu -f json --weights w32.npy -r 0:256 -b 16 --density u8.raw       # f32 weights
    same -B cpu -f json -t f32 --channels 3 -r -1:1 -b 5 --outliers clamp \
        --weights w64_3.raw --squares f32x3.raw                  # weights, channels, clamp
    same -B cpu -f csv -t f64 -b 6 --cumulative f64.raw          # CSV
    same -B cpu -t f64 -b 6 --weights w64.raw f64.raw            # table
    same_bytes -B cpu -f npy -t f64 -b 300 f64.raw               # .npy counts on stdout
    GPUHIST_CHUNK_MIB=1 same -B cpu -f json -t f32 -b 50 big.raw # windows and chunks, auto range
    GPUHIST_CHUNK_MIB=1 same -B cpu -f json -t f32 -r -3:6 -b 40 --weights wmid.raw --squares \
        mid.raw                                                  # weights read chunk by chunk
    same_files out.npy out.edges.npy out.sums.npy out.sums_squared.npy -- \
        -B cpu -f npy -o out.npy -t f64 -b 8 --weights w64.raw --squares f64.raw
    same_files out.json -- -B cpu -f json -o out.json -t f32 -r -1:2 -b 10 f32.raw
    # -v: the notes come from rank 0 alone
    mrun 3 -B cpu -v -f json -t f64 -b 4 f64.raw
    [ "$(grep -c 'mpi: 3 ranks' m.err)" = 1 ] || fail "-v: 'mpi: 3 ranks' not once: $(head -c 400 m.err)"
    [ "$(grep -c 'backend: ' m.err)" = 1 ] || fail "-v: notes from more than one rank"
fi

if [ "$SECTION" = errors ]; then
    # a missing file: every rank fails; rank 0 speaks; mpirun exits 1 too
    mrun 3 -B cpu nope.bin
    [ "$rc" = 1 ] || fail "mpirun exit $rc (wanted 1): gpuhist -B cpu nope.bin"
    [ "$(grep -c '^gpuhist: ' m.err)" = 1 ] || fail "not one message: $(grep gpuhist: m.err)"
    for n in 2 3; do
        refuse "$n" 1 '^gpuhist: nope\.bin: cannot open' -B cpu nope.bin
    done
    # one rank's file is missing (MPMD: rank 1 runs with another file)
    rm -f m.status
    timeout "$LIMIT" "$MPIEXEC" "${MPIFLAGS[@]}" \
        -n 1 "${EACH[@]}" -B cpu -t f64 -b 3 f64.raw : \
        -n 1 "${EACH[@]}" -B cpu -t f64 -b 3 nope.bin : \
        -n 1 "${EACH[@]}" -B cpu -t f64 -b 3 f64.raw >m.out 2>m.err </dev/null
    rc=$?
    checks=$((checks + 1))
    check_refusal 3 1 '^gpuhist: rank 1: nope\.bin: cannot open' "rank 1 without its file"
    # the ranks read inputs of different sizes
    rm -f m.status
    timeout "$LIMIT" "$MPIEXEC" "${MPIFLAGS[@]}" \
        -n 1 "${EACH[@]}" -B cpu -t f64 -b 3 f64.raw : \
        -n 1 "${EACH[@]}" -B cpu -t f64 -b 3 f64_2.raw >m.out 2>m.err </dev/null
    rc=$?
    checks=$((checks + 1))
    check_refusal 2 1 'do not see the same input' "ranks with different inputs"
    # a read error in the share of the last rank alone (byte 7000 of 8072)
    GPUHIST_FAULT_READ_AT=7000 refuse 3 1 '^gpuhist: rank 2: f64\.raw: read error' \
        -B cpu -t f64 -b 4 f64.raw
    GPUHIST_FAULT_READ_AT=7000 refuse 3 1 '^gpuhist: rank 2: f64\.raw: read error' \
        -B cpu -t f64 -r 0:1 -b 4 f64.raw
    # inputs that cannot be shared out: usage errors, from rank 0
    rm -f m.status
    cat f64.raw | timeout "$LIMIT" "$MPIEXEC" "${MPIFLAGS[@]}" -n 2 "${EACH[@]}" \
        -B cpu -t f64 -r 0:1 - >m.out 2>m.err
    rc=$?
    checks=$((checks + 1))
    check_refusal 2 2 '^gpuhist: standard input: a pipe .* 2 MPI ranks cannot share' "a pipe"
    cat f64.raw | timeout "$LIMIT" "$MPIEXEC" "${MPIFLAGS[@]}" -n 2 "$G" -B cpu -t f64 -r 0:1 \
        >m.out 2>m.err
    rc=$?
    [ "$rc" = 2 ] || fail "mpirun exit $rc (wanted 2) for a pipe"
    printf '1 2 3\n' >t.txt
    refuse 2 2 'text.*cannot be shared' -B cpu --text -b 3 t.txt
    refuse 3 2 'byte-swapped' -B cpu -b 4 f32be.npy
    refuse 2 2 'integer without -b' -B cpu -t i32 --integer 0 i32.raw
    # bad options: every rank sees them, one message
    refuse 3 2 '^gpuhist: .*unknown' -B cpu --no-such-option f64.raw
    refuse 3 2 '^gpuhist: -b: expected' -B cpu -b 0 f64.raw
    # the output of rank 0 cannot be written: every rank fails
    mkdir -p adir
    refuse 3 1 '^gpuhist: .*adir' -B cpu -f json -o adir f64.raw
    # weights that do not match: every rank knows the counts
    refuse 2 1 'w64_2\.raw: 2 weights for 1009 pixels' -B cpu -t f64 -b 4 --weights w64_2.raw f64.raw
    # one rank alone (N = 1) reads a pipe as a single process does
    rm -f m.status
    timeout "$LIMIT" "$MPIEXEC" "${MPIFLAGS[@]}" -n 1 "$G" -B cpu -f json -t f64 -r 0:1 -b 4 - \
        <f64.raw >m.out 2>m.err
    rc=$?
    checks=$((checks + 1))
    "$G" -B cpu -f json -t f64 -r 0:1 -b 4 f64.raw >one.out
    stable one.out >a.txt
    stable m.out >b.txt
    [ "$rc" = 0 ] && cmp -s a.txt b.txt || fail "one rank on a pipe: exit $rc -- $(head -c 300 m.err)"
fi

echo "mpi_cli $SECTION: $checks checks, $fails failures"
[ "$fails" = 0 ]
