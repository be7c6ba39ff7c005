"""The README's Python example runs as printed and prints what its comment says."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from conftest import REPO_ROOT, shared_dir


def _python_section_example() -> str:
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## Python package", 1)
    if len(section) < 2:
        pytest.fail("README.md has no '## Python package' section")
    match = re.search(r"```python\n(.*?)```", section[1], re.S)
    assert match, "no python example in the README's Python section"
    return match.group(1)


def test_readme_example():
    pytest.importorskip("sklearn", reason="scikit-learn is not installed")
    data = shared_dir()
    if data is None or not (data / "data" / "synthetic_control.data").is_file():
        pytest.skip("synthetic_control.data not found: set WW_SHARED_DIR")
    code = _python_section_example().replace('"../shared/', f'"{data}/')
    # the example prints one line, written in the README as the comment of its print call
    printed = [line for line in code.splitlines() if line.startswith("print(")]
    assert len(printed) == 1 and "#" in printed[0], "the example must have one print(...)  # output line"
    expected = printed[0].split("#", 1)[1].strip()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().strip() == expected
