#!/usr/bin/env bash
# Runs every shell example of README.md (its ```sh blocks), in order, as a reader would, and fails
# when one fails. The README's Python example is run by python/tests/test_readme.py.
#
# A block runs in a fresh temporary directory (one for all blocks, so a file an example writes is
# there for the next), with HOME there too (so ~/.local is a temporary prefix), and with the
# repository's layout beside it: build -> this run's build directory, include/ and README.md ->
# the repository's. Each block runs in its own `bash -eo pipefail` shell.
#
# A block is marked by an HTML comment on the line before its fence (invisible on a rendered page):
#   <!-- example: gpu -->         needs an NVIDIA GPU: not run here (so are the blocks of a section
#                                 whose "## " heading names the GPU, e.g. "## GPU workflow")
#   <!-- example: network -->     needs the network (PyPI): not run here
#   <!-- example: self -->        the test command that runs this check: not run (it would recurse)
#   <!-- example: repository -->  builds in the repository itself (build/): run in the repository
#                                 root when this run's build directory is build, else not run
#
#   tests/readme_examples.sh [build-dir]     (default: build; it must be built)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
build=${1:-build}
[ -x "$build/src/cli/wavewarp" ] || { echo "readme_examples: build $build first (its CLI is missing)" >&2; exit 2; }
build_abs=$(cd "$build" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/ww_readme.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/run" "$work/home" "$work/blocks"
ln -s "$build_abs" "$work/run/build"
ln -s "$repo/include" "$work/run/include"
ln -s "$repo/README.md" "$work/run/README.md"

# split README.md into blocks: blocks/N.sh, and blocks/N.mark (the mark, or nothing)
awk -v dir="$work/blocks" '
  /^## / { gpu_section = ($0 ~ /GPU/) }
  /^```(sh|bash|shell)$/ { n++; file = dir "/" n ".sh"; if (mark == "" && gpu_section) mark = "gpu";
                           printf "%s", mark > (dir "/" n ".mark");
                           printf "%d\n", NR > (dir "/" n ".line"); inblock = 1; next }
  inblock && /^```$/ { inblock = 0; close(file); next }
  inblock { print > file; next }
  { mark = ""; if (match($0, /^<!-- example: [a-z]+ -->$/)) mark = substr($0, 15, RLENGTH - 18) }
' README.md

ran=0 failed=0
declare -A skipped=()
for block in $(ls "$work/blocks"/*.sh 2>/dev/null | sort -V); do
  n=$(basename "$block" .sh)
  mark=$(cat "$work/blocks/$n.mark")
  line=$(cat "$work/blocks/$n.line")
  where=$work/run
  case $mark in
    gpu | network | self) skipped[$mark]=$((${skipped[$mark]:-0} + 1)); continue ;;
    repository)
      if [ "$build" != build ]; then skipped[repository]=$((${skipped[repository]:-0} + 1)); continue; fi
      where=$repo ;;
    "") ;;
    *) echo "readme_examples: README.md:$line: unknown mark '$mark'" >&2; exit 2 ;;
  esac
  start=$(date +%s)
  if (cd "$where" && HOME=$work/home XDG_CACHE_HOME= PKG_CONFIG_PATH= timeout 600 bash -eo pipefail "$block") \
       >"$work/$n.log" 2>&1; then
    ran=$((ran + 1))
    echo "readme_examples: README.md:$line: ok ($(( $(date +%s) - start )) s)"
  else
    failed=$((failed + 1))
    echo "readme_examples: README.md:$line: the example failed; it was:" >&2
    sed 's/^/    /' "$block" >&2
    echo "  and it printed:" >&2
    tail -40 "$work/$n.log" | sed 's/^/    /' >&2
  fi
done
summary=""
for mark in "${!skipped[@]}"; do summary+=" ${skipped[$mark]} $mark"; done
echo "readme_examples: $ran ran, $failed failed; not run (marked):${summary:- none}"
[ "$failed" -eq 0 ]
