"""The README's Python example runs as printed and prints what its comment says."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess

import pytest

from conftest import REPO_ROOT, cli_path


def _python_section_example() -> str:
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## Python package", 1)
    if len(section) < 2:
        pytest.fail("README.md has no '## Python package' section")
    match = re.search(r"```python\n(.*?)```", section[1], re.S)
    assert match, "no python example in the README's Python section"
    return match.group(1)


def test_readme_example(tmp_path, monkeypatch):
    pytest.importorskip("sklearn", reason="scikit-learn is not installed")
    code = _python_section_example()
    # the file the example reads, made as its first comment says (by the CLI)
    command = re.search(r"build/src/cli/wavewarp (generate .*)", code)
    assert command, "the example must say how its data file is made"
    subprocess.run([str(cli_path()), *command.group(1).split()], cwd=tmp_path, check=True, capture_output=True)
    monkeypatch.chdir(tmp_path)
    # the example prints one line, written in the README as the comment of its print call
    printed = [line for line in code.splitlines() if line.startswith("print(")]
    assert len(printed) == 1 and "#" in printed[0], "the example must have one print(...)  # output line"
    expected = printed[0].split("#", 1)[1].strip()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().strip() == expected
