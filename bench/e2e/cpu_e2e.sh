#!/usr/bin/env bash
# cpu_e2e.sh BUILD_DIR [DIR] [RUNS] - the CPU backend end to end: the whole command's wall time
# on 1 GiB page-cache files against the in-process counting time of the same data
# (gpuhist-inprocess-cpu: the file read into memory first, not timed), the peak resident memory
# of each run, and the time to write 2^20 bins in each output format (one sample in).
# Cells: u8/256, f32/4096 -r 0:1, f32/2^20 -r 0:1 (written as npy, so the output is not timed),
# f32/4096 auto range (a first pass over the file). Files in DIR (default /dev/shm): 1 GiB of
# random bytes (seed 1) and 2^28 float32 uniform in [0, 1) (seed 2), made once by a small C
# generator. Medians of RUNS (default 5) runs after one warm-up; `uptime` first, since the
# machine's load moves every figure. BUILD_DIR must be configured with -DGPUHIST_BUILD_BENCH=ON.
set -euo pipefail
B=$(cd "$1" && pwd)
DIR=${2:-/dev/shm}
RUNS=${3:-5}
G=$B/cli/gpuhist
IP=$B/bench/e2e/gpuhist-inprocess-cpu
[ -x "$G" ] || { echo "cpu_e2e: no $G" >&2; exit 2; }
[ -x "$IP" ] || { echo "cpu_e2e: no $IP (configure with -DGPUHIST_BUILD_BENCH=ON)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
U8=$DIR/gpuhist-cpu-e2e-u8.bin
F32=$DIR/gpuhist-cpu-e2e-f32.bin
if [ ! -f "$U8" ] || [ ! -f "$F32" ]; then
  cat >"$TMP/gen.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* gen u8|f32 BYTES SEED OUT: xorshift64 bytes, or float32 (x >> 40) / 2^24 in [0, 1) */
int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    uint64_t n = strtoull(argv[2], 0, 10), s = strtoull(argv[3], 0, 10) * 0x9E3779B97F4A7C15ull + 1;
    FILE *f = fopen(argv[4], "wb");
    static unsigned char buf[1 << 20];
    int f32 = argv[1][0] == 'f';
    for (uint64_t done = 0; f && done < n;) {
        size_t k = n - done < sizeof buf ? (size_t)(n - done) : sizeof buf;
        for (size_t i = 0; i < k; i += f32 ? 4 : 8) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            if (f32) {
                float x = (float)((double)(s >> 40) / 16777216.0);
                memcpy(buf + i, &x, 4);
            } else {
                memcpy(buf + i, &s, k - i < 8 ? k - i : 8);
            }
        }
        if (fwrite(buf, 1, k, f) != k)
            return 1;
        done += k;
    }
    return f && fclose(f) == 0 ? 0 : 1;
}
EOF
  cc -O2 -o "$TMP/gen" "$TMP/gen.c"
  "$TMP/gen" u8 $((1 << 30)) 1 "$U8"
  "$TMP/gen" f32 $((1 << 30)) 2 "$F32"
fi
cat "$U8" "$F32" >/dev/null # into the page cache

# median wall seconds, the largest peak resident KiB and the median CPU seconds (user + system)
# of RUNS runs (after one warm-up); wall to the millisecond (Python's clock, not time's 2 decimals)
timed() {
  "$@" >/dev/null 2>&1 || { echo "cpu_e2e: failed: $*" >&2; exit 1; }
  python3 - "$RUNS" "$@" <<'PY'
import os, resource, statistics, subprocess, sys, tempfile, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
walls, cpus, peak = [], [], 0
fd, out = tempfile.mkstemp()
os.close(fd)
for _ in range(runs):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    # the peak through time(1): a child forked from Python would report Python's own pages
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out] + cmd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    walls.append(time.perf_counter() - t)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    peak = max(peak, int(open(out).read().split()[-1]))
os.unlink(out)
print("%.3f %d %.3f" % (statistics.median(walls), peak, statistics.median(cpus)))
PY
}

uptime
nproc
# The file read ceiling (bench/e2e/read_ceiling.c: pread by every core into reused buffers, best
# of 3) and each case's fixed cost (the same command on a one-sample file: start, plan, the
# output of its bins, exit): the whole command cannot beat the larger of its counting and its
# reading, plus that cost.
RC=$B/bench/e2e/gpuhist-read-ceiling
rc_s=""
if [ -x "$RC" ]; then
  rc_s=$("$RC" "$F32" "$(nproc)" | sed -n 's/.*(\([0-9.]*\) s for.*/\1/p')
  echo "file read ceiling: $("$RC" "$F32" "$(nproc)")"
fi
printf '\0\0\0\0' >"$TMP/one.f32"
printf '\0' >"$TMP/one.u8"
echo "| case | in-process counting (wall, CPU-s) | whole command (median of $RUNS; wall, CPU-s) | ratio (wall, CPU) | one-sample command | wall / (max(counting, read ceiling) + one-sample command) | peak resident |"
echo "|---|---|---|---|---|---|---|"
for cell in "u8/256|$U8|u8|0|0|1|" "f32/4096 -r 0:1|$F32|f32|4096|0|1|-r 0:1" \
  "f32/2^20 -r 0:1|$F32|f32|1048576|0|1|-r 0:1" "f32/4096 auto range|$F32|f32|4096|0|1|"; do
  IFS='|' read -r name file type bins lo hi range <<<"$cell"
  line=$("$IP" "$file" "$type" "$bins" "$lo" "$hi")
  ip=$(sed -n 's/^in-process counting: \([0-9.]*\) s.*/\1/p' <<<"$line")
  ipcpu=$(sed -n 's/.*, \([0-9.]*\) CPU-s$/\1/p' <<<"$line")
  args=(-B cpu -t "$type" -f npy -o "$TMP/out.npy")
  [ "$bins" != 0 ] && args+=(-b "$bins")
  # shellcheck disable=SC2206
  [ -n "$range" ] && args+=($range)
  read -r wall kib cpu < <(timed "$G" "${args[@]}" "$file")
  read -r fixed _ _ < <(timed "$G" "${args[@]}" "$TMP/one.$type")
  ratio=$(python3 -c "print('%.2fx, %.2fx' % ($wall / $ip, $cpu / $ipcpu))")
  floor=$(python3 -c "print('%.2fx' % ($wall / (max($ip, ${rc_s:-0}) + $fixed)))")
  echo "| $name | $ip s, $ipcpu | $wall s, $cpu | $ratio | $fixed s | $floor | $((kib / 1024)) MiB |"
done

echo
echo "2^20 bins written (one sample in; median of $RUNS whole runs, output to a file in $TMP):"
for fmt in table csv json npy; do
  read -r wall _ _ < <(timed "$G" -B cpu -t f32 -b 1048576 -r 0:1 -f "$fmt" -o "$TMP/o.$fmt" "$TMP/one.f32")
  echo "  $fmt: $wall s"
done
uptime
