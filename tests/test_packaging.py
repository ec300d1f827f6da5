"""The packaging pieces agree with each other: pyproject's metadata, the `dist` profile,
scripts/wheel.sh, the release workflow and the README's Install section.

Building and installing the wheel itself is a stage of scripts/test.sh (scripts/wheel.sh, then
scripts/wheel_check.sh in a fresh virtualenv): it needs a link of the extension, which a pytest
worker should not start.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

if sys.version_info < (3, 11):  # pragma: no cover - CI runs 3.11
    pytest.skip("tomllib", allow_module_level=True)
import tomllib

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _install_section() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]


def test_the_dist_profile_optimises_the_whole_program_and_ships_no_debug_info():
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())
    dist = cargo["profile"]["dist"]
    assert dist["inherits"] == "release"
    assert dist["lto"] == "fat" and dist["codegen-units"] == 1
    assert dist["debug"] is False and dist["strip"] in ("symbols", True)
    # CI and the demo must not compile the slow profile: only the wheel script names it.
    for script in ("scripts/env.sh", "scripts/test.sh", "scripts/demo.sh"):
        assert "dist" not in re.findall(r"--profile[ =](\S+)", (ROOT / script).read_text()), script


def test_wheel_script_defaults_to_the_dist_profile_and_manylinux_2_28():
    script = (ROOT / "scripts" / "wheel.sh").read_text()
    assert re.search(r"^PROFILE=dist$", script, re.MULTILINE)
    assert "--zig --compatibility manylinux_2_28" in script
    assert "auditwheel show" in script


def test_the_release_workflow_builds_every_platform_with_the_scripts():
    text = (WORKFLOWS / "release.yml").read_text()
    assert "bash scripts/wheel.sh" in text
    assert "bash scripts/wheel_check.sh dist/lancelet-*.whl" in text
    runners = re.findall(r"^\s+os: (\S+)$", text, re.MULTILINE)
    assert {"ubuntu-24.04", "ubuntu-24.04-arm"} <= set(runners), runners
    assert any(r.startswith("macos-") and int(r.split("-")[1]) >= 14 for r in runners), "macOS arm64"
    assert any(r == "macos-13" for r in runners), "macOS x86_64"
    # Exactly one job builds the sdist (the others pass --no-sdist).
    args = re.findall(r'^\s+args: "([^"]*)"$', text, re.MULTILINE)
    assert len(args) == len(runners) and sum("--no-sdist" not in a for a in args) == 1, args
    assert re.search(r"if: startsWith\(github.ref, 'refs/tags/v'\)", text), "publishes only on a tag"


def test_every_action_is_pinned_to_a_commit():
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for line in path.read_text().splitlines():
            m = re.search(r"uses: ([^\s#]+)", line)
            if m:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", m.group(1)), f"{path.name}: {line.strip()}"
                assert re.search(r"# v\d", line), f"{path.name}: name the release after the hash: {line.strip()}"


def test_extras_and_dependencies_are_the_ones_the_readme_names():
    project = _pyproject()["project"]
    section = _install_section()
    named = re.search(r'pip install "lancelet\[([^\]]+)\]"', section).group(1).split(",")
    extras = project["optional-dependencies"]
    for extra in named:
        assert extra in extras and extras[extra], extra
    deps = sorted(re.match(r"[A-Za-z0-9_-]+", d).group(0) for d in project["dependencies"])
    assert deps == ["numpy", "pyarrow"]
    assert "depends on pyarrow (14 or newer) and numpy only" in " ".join(section.split())
    # abi3: one wheel for every supported Python, from requires-python on.
    assert project["requires-python"] == ">=3.9"
    pyo3 = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["dependencies"]["pyo3"]
    assert "abi3-py39" in pyo3["features"], "pyo3's abi3 floor is requires-python's"


def test_the_install_section_has_the_quick_start_the_wheel_check_runs():
    section = _install_section()
    marker = "<!-- wheel quick start -->"
    assert marker in section
    block = section.split(marker, 1)[1].lstrip("\n")
    assert block.startswith("```python\n")
    # Only what a pip-installed wheel brings: no path into the source tree.
    assert "scripts/" not in block.split("```", 2)[1] and "tests/" not in block.split("```", 2)[1]
