"""The README's Python quick-start runs as written (in an empty directory, as a new user would)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _quick_start() -> str:
    text = README.read_text()
    section = text.split("## Python quick-start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the quick-start has one Python block"
    return blocks[0]


def test_python_quick_start_runs(tmp_path):
    script = tmp_path / "quick_start.py"
    script.write_text(_quick_start())
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    epsilon = float(re.search(r"epsilon = ([0-9.]+)", lines[0]).group(1))
    assert 0 < epsilon < 100
    assert done.stdout.count(" pass ") == 3, done.stdout  # the three zo_o2nc.lemma3_1 claims hold
    assert lines[-1].endswith("consistent"), done.stdout


def test_readme_setup_commands_are_the_makefile_targets():
    text = README.read_text()
    assert "make demo" in text and "make test" in text
