"""The README's Python example runs as printed and prints what it says."""

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
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().strip() == "1.0"
