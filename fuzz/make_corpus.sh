#!/usr/bin/env bash
# Regenerates the seed corpus fuzz/corpus/{text,csv,ts,npy} from the C tests' input files: the CLI
# tests (tests/test_cli.c) keep every file they write there when WW_FUZZ_SEEDS is set. Seeds the
# tests no longer write stay (delete fuzz/corpus/*/test-* first for a clean slate); hand-made
# seeds (the other names, and fuzz/corpus/calibration) and crash regressions are kept.
#   fuzz/make_corpus.sh [build-dir]     (a build with the C tests; default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
WW_FUZZ_SEEDS="$PWD/fuzz/corpus" "$build/tests/ww_tests" test_cli_ >/dev/null 2>&1 || echo "make_corpus: some CLI tests failed (seeds kept)" >&2
for d in fuzz/corpus/*/; do
  echo "$d: $(ls "$d" | wc -l) seeds"
done
