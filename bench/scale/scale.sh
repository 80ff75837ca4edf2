#!/usr/bin/env bash
# bench/scale/scale.sh BUILD [GIB_PER_GPU_FILE] - one GPU against every GPU, same run:
#   1. gpuhist-scale: device-resident data (1 GiB per GPU), host arrays (1 GiB per GPU) and a
#      stream of lent buffers; on more than 2 GPUs also with the first 2;
#   2. the command on a page-cache file (/dev/shm, GIB_PER_GPU_FILE GiB per GPU of u8, default
#      8): `gpuhist -B cuda` against `gpuhist -B cuda --devices all` and `--devices 0,0` (two
#      contexts on one GPU: the two-device stream path without a second GPU), alternating, 3 runs each,
#      beside the file read ceiling (parallel pread) of the same file; the counts must agree;
#   3. when mpirun and an MPI build of the command are there: `mpirun -n GPUS gpuhist` on it,
#      and gpuhist-scale-mpi (device-resident data, one GPU per rank, gpuhist_mpi_histogram).
# Prints figures; exit 1 only when a result differs or a step fails.
set -u
B=${1:?usage: scale.sh BUILD [GIB_PER_GPU_FILE]}
GIB=${2:-${GPUHIST_SCALE_GIB:-8}}
G=$B/cli/gpuhist
S=$B/bench/scale/gpuhist-scale
RC=$B/bench/e2e/gpuhist-read-ceiling
F=/dev/shm/gpuhist-scale-u8.bin
fail=0
nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv,noheader 2>/dev/null
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
"$S" --gib 1 --reps 5 || fail=1
if [ "$ngpu" -gt 2 ]; then "$S" --gib 1 --reps 5 --gpus 2 || fail=1; fi
"$S" --gib "$GIB" --file "$F" || exit 1
if [ -x "$RC" ]; then "$RC" "$F" 8 16 32 | sed 's/^/read ceiling: /'; fi
t() { # t LABEL CMD... : wall seconds of CMD, its -v phase lines kept in $W/LABEL.err
    local s e
    s=$(date +%s.%N)
    "${@:2}" >"$W/$1.out" 2>"$W/$1.err" || { echo "FAILED: ${*:2}: $(tail -2 "$W/$1.err")"; fail=1; }
    e=$(date +%s.%N)
    awk -v a="$s" -v b="$e" 'BEGIN { printf "%.4f", b - a }'
}
W=$(mktemp -d)
bytes=$(stat -c %s "$F")
for r in 1 2 3; do
    one=$(t one "$G" -B cuda -f csv -v "$F")
    all=$(t all "$G" -B cuda --devices all -f csv -v "$F")
    cmp -s "$W/one.out" "$W/all.out" || { echo "MISMATCH: --devices all counts differ"; fail=1; }
    same=$(t same "$G" -B cuda --devices 0,0 -f csv -v "$F")
    cmp -s "$W/one.out" "$W/same.out" || { echo "MISMATCH: --devices 0,0 counts differ"; fail=1; }
    awk -v n="$bytes" -v o="$one" -v a="$all" -v z="$same" 'BEGIN { printf "command %.1f GiB u8: one GPU %.3f s (%.1f GB/s), all GPUs %.3f s (%.1f GB/s), ratio %.2f; two contexts on GPU 0 %.3f s\n", n / 2^30, o, n / o / 1e9, a, n / a / 1e9, o / a, z }'
done
sed 's/^/one GPU -v: /' "$W/one.err" | head -16
sed 's/^/all GPUs -v: /' "$W/all.err" | head -16
sed 's/^/GPU 0 twice -v: /' "$W/same.err" | head -16
if command -v mpirun >/dev/null 2>&1 && ldd "$G" 2>/dev/null | grep -q libmpi; then
    # root in a container: Open MPI must be told it may run, without cross-memory attach
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    n=$(nvidia-smi -L 2>/dev/null | wc -l)
    for r in 1 2; do
        m=$(t mpi mpirun --oversubscribe -n "$n" "$G" -B cuda -f csv "$F")
        cmp -s "$W/one.out" "$W/mpi.out" || { echo "MISMATCH: mpirun -n $n counts differ"; fail=1; }
        awk -v k="$n" -v n="$bytes" -v o="$one" -v m="$m" 'BEGIN { printf "mpirun -n %d: %.3f s (%.1f GB/s), ratio to one GPU %.2f\n", k, m, n / m / 1e9, o / m }'
    done
    if [ -x "$B/bench/scale/gpuhist-scale-mpi" ]; then
        mpirun --oversubscribe -n "$n" "$B/bench/scale/gpuhist-scale-mpi" --gib 1 || fail=1
    fi
else
    echo "mpirun: not run (no mpirun, or the command was built without MPI)"
fi
rm -rf "$W" "$F"
exit "$fail"
