#!/usr/bin/env bash
# chunk_sweep.sh BUILD_DIR [GIB] [DIR] - the command's streamed read + count time against the
# chunk size (GPUHIST_CHUNK_MIB) and the reader threads (GPUHIST_READERS) on one page-cache file
# of GIB GiB (default 8) of random bytes, u8/256 and f32/4096, 3 runs each (the best is
# printed), beside the parallel read ceiling of the same file. The file is 64 MiB of random bytes repeated, written to DIR (default /dev/shm).
set -euo pipefail
B=$1
GIB=${2:-8}
DIR=${3:-/dev/shm}
G=$B/cli/gpuhist
F=$DIR/gpuhist-chunks-$GIB.bin
if [ ! -f "$F" ] || [ "$(stat -c %s "$F")" != $((GIB << 30)) ]; then
  head -c $((64 << 20)) /dev/urandom >"$F.part"
  for _ in $(seq $((GIB * 16))); do cat "$F.part"; done >"$F"
  rm -f "$F.part"
fi
cat "$F" >/dev/null
[ -x "$B/bench/e2e/gpuhist-read-ceiling" ] && "$B/bench/e2e/gpuhist-read-ceiling" "$F" 1 8 16 | tail -3
for cr in 4:16 16:16 16:8 16:4 32:16 64:16 64:8 128:16; do
  c=${cr%:*} r=${cr#*:}
  for t in "u8/256:" "f32/4096:-t f32 -b 4096 -r 0:1"; do
    args=${t#*:}
    best=
    for _ in 1 2 3; do
      # shellcheck disable=SC2086
      s=$(GPUHIST_READERS=$r GPUHIST_CHUNK_MIB=$c "$G" -v $args -f csv -o /dev/null "$F" 2>&1 |
        sed -n 's/.*read and count \([0-9.]*\) s.*/\1/p')
      if [ -z "$best" ] || awk "BEGIN{exit !($s < $best)}"; then best=$s; fi
    done
    awk -v c="$c" -v r="$r" -v t="${t%%:*}" -v s="$best" -v g="$GIB" \
      'BEGIN{printf "chunk %4d MiB, %2d readers  %-9s read and count %.3f s = %.1f GB/s\n", c, r, t, s, g*1073741824/s/1e9}'
  done
done
