#!/usr/bin/env bash
# usage: install_test.sh CMAKE BUILD_DIR DOWNSTREAM_SRC WORK_DIR CC [CONFIG]
# Installs BUILD_DIR into WORK_DIR/prefix with `cmake --install`, then builds and runs the
# downstream program (1) with CMake's find_package(gpuhist) and (2) with pkg-config.
# pkg-config missing: that half is skipped with a note (the CMake half still has to pass).
set -euo pipefail
CMAKE=$1 BUILD=$2 SRC=$3 WORK=$4 CC=$5 CONFIG=${6:-}
rm -rf "$WORK"
mkdir -p "$WORK"
PREFIX=$WORK/prefix

echo "== cmake --install $BUILD --prefix $PREFIX"
if [ -n "$CONFIG" ]; then
    "$CMAKE" --install "$BUILD" --prefix "$PREFIX" --config "$CONFIG" >"$WORK/install.log"
else
    "$CMAKE" --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log"
fi
for f in include/gpuhist.h; do
    [ -f "$PREFIX/$f" ] || { echo "missing $PREFIX/$f"; exit 1; }
done
LIBDIR=$(dirname "$(find "$PREFIX" -name 'gpuhistConfig.cmake' | head -1)")
LIBDIR=$(cd "$LIBDIR/../.." && pwd)
[ -d "$LIBDIR" ] || { echo "no gpuhistConfig.cmake installed"; exit 1; }
ls "$LIBDIR"/libgpuhist.* >/dev/null || { echo "no libgpuhist in $LIBDIR"; exit 1; }
[ -x "$PREFIX/bin/gpuhist" ] || { echo "gpuhist command not installed"; exit 1; }
"$PREFIX/bin/gpuhist" --version

echo "== find_package(gpuhist) downstream"
"$CMAKE" -S "$SRC" -B "$WORK/cmake-build" -DCMAKE_PREFIX_PATH="$PREFIX" \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Release >"$WORK/configure.log" ||
    { cat "$WORK/configure.log"; exit 1; }
"$CMAKE" --build "$WORK/cmake-build" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
# The shared library must be found through the install tree (RPATH or LD_LIBRARY_PATH).
LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$WORK/cmake-build/downstream"
if [ -x "$WORK/cmake-build/downstream_static" ]; then
    "$WORK/cmake-build/downstream_static"
fi
# The MPI layer (installed when built): its program under mpirun, 2 ranks. In a sanitizer build
# LeakSanitizer is off for it: Open MPI itself leaks at exit (the library's leaks are checked by
# every other test).
MPI_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if [ -x "$WORK/cmake-build/downstream_mpi" ] && command -v mpirun >/dev/null; then
    ASAN_OPTIONS=$MPI_ASAN OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none \
        LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        timeout 120 mpirun -n 2 "$WORK/cmake-build/downstream_mpi"
fi

echo "== pkg-config downstream"
if command -v pkg-config >/dev/null; then
    export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
    pkg-config --exists gpuhist || { echo "pkg-config does not find gpuhist.pc"; exit 1; }
    # The project was configured for another prefix than this temporary one: gpuhist.pc finds
    # its prefix from its own location (${pcfiledir}), so a relocated install works as is.
    PC="pkg-config"
    case "$($PC --variable=includedir gpuhist)" in
        "$PREFIX"/*|"$LIBDIR"/*) ;;
        *) echo "gpuhist.pc points outside the install tree: $($PC --variable=includedir gpuhist)"; exit 1 ;;
    esac
    echo "gpuhist.pc: version $($PC --modversion gpuhist): $($PC --cflags --libs gpuhist)"
    # shellcheck disable=SC2046
    "$CC" -std=c11 -Wall -Wextra -Werror -o "$WORK/downstream_pc" "$SRC/main.c" \
        $($PC --cflags --libs gpuhist)
    LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$WORK/downstream_pc"
    if $PC --exists gpuhist_mpi; then
        echo "gpuhist_mpi.pc: $($PC --cflags --libs gpuhist_mpi)"
        # shellcheck disable=SC2046
        "$CC" -std=c11 -Wall -Wextra -Werror -o "$WORK/downstream_mpi_pc" "$SRC/mpi_main.c" \
            $($PC --cflags --libs gpuhist_mpi)
        if command -v mpirun >/dev/null; then
            ASAN_OPTIONS=$MPI_ASAN OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none \
                LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
                timeout 120 mpirun -n 2 "$WORK/downstream_mpi_pc"
        fi
    fi
else
    echo "pkg-config not installed: pkg-config half skipped"
fi
echo "install test passed"
