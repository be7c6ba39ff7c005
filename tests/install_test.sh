#!/usr/bin/env bash
# Installs a build into a temporary prefix, as a user would (cmake --install BUILD --prefix P), then
# builds and runs the README's C example (the ```c block under "## The C API in one example",
# extracted from README.md, not copied) against the installed package four ways:
#   CMake find_package(wavewarp): wavewarp::wavewarp (shared) and wavewarp::wavewarp_static
#   pkg-config: --cflags --libs (shared), and --static --cflags --libs in a fully static program
# Each program must print the example's line, the shared ones must load libwavewarp.so.* from the
# prefix, the static ones none.
#
#   tests/install_test.sh [build-dir]      (default: build; configured and built if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=${1:-build}
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j "$(nproc)" --target wavewarp wavewarp_static >/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ww_install_test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/wavewarp.h lib/libwavewarp.a lib/libwavewarp.so lib/cmake/wavewarp/wavewarpConfig.cmake \
         lib/pkgconfig/wavewarp.pc; do
  [ -e "$prefix/$f" ] || { echo "install_test: $prefix/$f was not installed" >&2; exit 1; }
done
soname=$(readelf -d "$prefix/lib/libwavewarp.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
case $soname in
  libwavewarp.so.[0-9]*) [ -e "$prefix/lib/$soname" ] || { echo "install_test: $soname missing" >&2; exit 1; } ;;
  *) echo "install_test: libwavewarp.so has no SONAME" >&2; exit 1 ;;
esac

# the example, from the README
mkdir "$tmp/app"
awk '/^## The C API in one example/ {in_section = 1; next}
     in_section && /^```c$/ {in_code = 1; next}
     in_code && /^```$/ {exit}
     in_code {print}' README.md > "$tmp/app/example.c"
grep -q 'int main' "$tmp/app/example.c" || { echo "install_test: no C example found in README.md" >&2; exit 1; }

failed=0
check_run() { # name program static|shared
  local out
  if ! out=$("$2" 2>&1); then
    echo "install_test: $1: the example failed: $out" >&2; failed=1; return
  fi
  case $out in
    "twed = "*", dtw = "*" on "*) ;;
    *) echo "install_test: $1: unexpected output: $out" >&2; failed=1; return ;;
  esac
  local libs
  libs=$(ldd "$2" 2>&1 || true)
  if [ "$3" = shared ] && ! grep -q "$soname => $prefix/lib/" <<<"$libs"; then
    echo "install_test: $1: does not load $soname from the prefix:" >&2; echo "$libs" >&2; failed=1; return
  fi
  if [ "$3" = static ] && grep -q libwavewarp <<<"$libs"; then
    echo "install_test: $1: loads a shared libwavewarp:" >&2; echo "$libs" >&2; failed=1; return
  fi
  echo "install_test: $1: $out"
  echo "$out" > "$tmp/out.$1"
}

# 1. CMake: find_package(wavewarp), shared and static targets
cat > "$tmp/app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.24)
project(wavewarp_example LANGUAGES C)
find_package(wavewarp 0.2 REQUIRED COMPONENTS static)
add_executable(example_shared example.c)
target_link_libraries(example_shared PRIVATE wavewarp::wavewarp)
add_executable(example_static example.c)
target_link_libraries(example_static PRIVATE wavewarp::wavewarp_static)
CMAKE
cmake -S "$tmp/app" -B "$tmp/app/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1 \
  && cmake --build "$tmp/app/build" >>"$tmp/cmake.log" 2>&1 \
  || { cat "$tmp/cmake.log" >&2; echo "install_test: the CMake consumer did not build" >&2; exit 1; }
check_run cmake-shared "$tmp/app/build/example_shared" shared
check_run cmake-static "$tmp/app/build/example_static" static

# 2. pkg-config, shared (an rpath to the prefix, as it is not in the loader's path) and fully static
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc=${CC:-cc}
libdir=$(pkg-config --variable=libdir wavewarp)
# shellcheck disable=SC2046  # pkg-config output is meant to be split into words
$cc "$tmp/app/example.c" -o "$tmp/pc_shared" $(pkg-config --cflags --libs wavewarp) -Wl,-rpath,"$libdir"
check_run pkgconfig-shared "$tmp/pc_shared" shared
# shellcheck disable=SC2046
# (a static libgomp warns that it may dlopen at run time: kept in the log, shown on failure)
$cc -static "$tmp/app/example.c" -o "$tmp/pc_static" $(pkg-config --static --cflags --libs wavewarp) 2>"$tmp/static.log" \
  || { cat "$tmp/static.log" >&2; echo "install_test: the static pkg-config link failed" >&2; exit 1; }
check_run pkgconfig-static "$tmp/pc_static" static

if [ $failed -ne 0 ]; then
  exit 1
fi
# the four programs compute the same numbers
first=$(cut -d' ' -f1-6 "$tmp/out.cmake-shared")
for f in "$tmp"/out.*; do
  [ "$(cut -d' ' -f1-6 "$f")" = "$first" ] || { echo "install_test: results differ: $f" >&2; exit 1; }
done
echo "install_test: ok (prefix layout, SONAME $soname, CMake shared/static, pkg-config shared/static)"
