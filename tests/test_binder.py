"""Binder environment: fully pinned requirements that satisfy pyproject.toml, and a postBuild."""

from __future__ import annotations

import os
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def pins() -> dict[str, Version]:
    out: dict[str, Version] = {}
    for raw in (BINDER / "requirements.txt").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        req = Requirement(line)
        spec = list(req.specifier)
        assert len(spec) == 1 and spec[0].operator == "==", f"not pinned exactly: {line!r}"
        assert not req.marker, f"pins must not depend on markers: {line!r}"
        name = canonicalize_name(req.name)
        assert name not in out, f"{name} pinned twice"
        out[name] = Version(spec[0].version)
    return out


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def notebook_requirements() -> list[Requirement]:
    data = project()
    reqs = [*data["dependencies"], *data["optional-dependencies"]["jupyter"], "ipykernel"]
    return [Requirement(r) for r in reqs]


def test_every_line_is_an_exact_pin() -> None:
    assert len(pins()) >= 6


@pytest.mark.parametrize("req", notebook_requirements(), ids=str)
def test_pins_satisfy_pyproject(req: Requirement) -> None:
    pinned = pins()
    name = canonicalize_name(req.name)
    assert name in pinned, f"{req} (from pyproject.toml) is not pinned in binder/requirements.txt"
    assert req.specifier.contains(pinned[name], prereleases=True), (
        f"{name}=={pinned[name]} does not satisfy {req}"
    )


def test_pins_cover_the_notebook_stack() -> None:
    assert {"numpy", "pygments", "ipywidgets", "ipython", "jupyterlab", "ipykernel"} <= set(pins())


def test_pins_are_closed_under_installed_requirements() -> None:
    """Every requirement of a pinned package that is installed here is pinned and satisfied."""
    pinned = pins()
    env = default_environment()
    problems = []
    for name in pinned:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        for text in dist.requires or ():
            sub = Requirement(text)
            if sub.marker is not None and not sub.marker.evaluate({**env, "extra": ""}):
                continue
            sub_name = canonicalize_name(sub.name)
            if sub_name not in pinned:
                problems.append(f"{name} needs {sub} which is not pinned")
            elif not sub.specifier.contains(pinned[sub_name], prereleases=True):
                problems.append(f"{name} needs {sub} but {sub_name}=={pinned[sub_name]}")
    assert not problems, "\n".join(problems)


def test_runtime_python_satisfies_requires_python() -> None:
    text = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+\.\d+)", text)
    assert match, text
    from packaging.specifiers import SpecifierSet

    assert Version(match.group(1)) in SpecifierSet(project()["requires-python"])


def test_postbuild_installs_the_project() -> None:
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    text = post.read_text()
    assert text.startswith("#!")
    assert re.search(r"pip install .*(-e|--editable)? \.", text)


def test_readme_has_binder_badge() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "https://mybinder.org/badge_logo.svg" in readme
    assert "mybinder.org/v2/gh/" in readme
    assert "make lab" in readme
