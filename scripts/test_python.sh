#!/usr/bin/env bash
# Builds and installs the Python package exactly as a user does (`pip install .`, CUDA when nvcc is
# found) into a private virtual environment, then runs its tests (python/tests) with pytest.
#
#   scripts/test_python.sh [pytest arguments...]
#
# Needs python3 (with venv), pip, cmake and a C compiler; pip must reach PyPI the first time.
# Environment:
#   WW_PY_VENV   the virtual environment to create or reuse (default build-py/venv)
#   WW_PY_CUDA   AUTO (default: CUDA when nvcc is found), ON or OFF, passed to WAVEWARP_CUDA
#   WW_SHARED_DIR  where golden/ and data/ are (default ../shared beside the repository)
# GPU-array tests skip, with their reason in the summary, where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${WW_PY_VENV:-build-py/venv}
cuda=${WW_PY_CUDA:-AUTO}

if [ ! -x "$venv/bin/python" ]; then
  echo "== creating $venv"
  python3 -m venv "$venv"
fi
py="$(cd "$venv/bin" && pwd)/python"
pip_quiet=(--quiet --disable-pip-version-check)

# test dependencies: aeon, tslearn and dtaidistance for the parity tests (apted and zss for the
# tree edit distance), scikit-learn for the
# estimator and the README's example, hypothesis for the property tests. The rivals are installed one by one, so that one that cannot
# be installed here (no wheel for this Python...) leaves the others: its tests then skip with the
# reason in pytest's summary (-rs).
"$py" -m pip install "${pip_quiet[@]}" --upgrade pip >/dev/null
"$py" -m pip install "${pip_quiet[@]}" "numpy>=1.23" "pytest>=7" "aeon>=1.0,<2" "scikit-learn>=1.3" "hypothesis>=6.80"
# torch (PyPI, ~5 GB with its CUDA libraries; a fresh install took 96 s here, pip's cache helps
# later runs) for wavewarp.torch's CPU tests; without it they skip.
for rival in "tslearn>=0.6,<1" "dtaidistance>=2.3,<3" "apted>=1.0,<2" "zss>=1.2,<2" "torch>=2.0"; do
  "$py" -m pip install "${pip_quiet[@]}" "$rival" || echo "== could not install $rival: its parity tests will skip"
done

echo "== pip install . (WAVEWARP_CUDA=$cuda, warnings as errors)"
# Build isolation as for any user: the build backend (scikit-build-core) and NumPy's headers come
# from pyproject.toml's [build-system]. WAVEWARP_WERROR keeps the extension -Werror clean in CI.
"$py" -m pip install "${pip_quiet[@]}" --force-reinstall --no-deps . \
  --config-settings=cmake.define.WAVEWARP_CUDA="$cuda" \
  --config-settings=cmake.define.WAVEWARP_WERROR=ON
"$py" -c 'import wavewarp; print("wavewarp", wavewarp.__version__, "from", wavewarp.__file__); print("backend:", wavewarp.describe(), "| CUDA in build:", bool(wavewarp.built_with_cuda), "| GPU usable:", wavewarp.cuda_available())'

echo "== pytest python/tests"
# -rs lists why tests were skipped (GPU ones without a GPU); pytest exits 5 when no test ran,
# which set -e turns into a failure of this script.
cd python/tests
exec "$py" -m pytest -rs -p no:cacheprovider "$@" .
