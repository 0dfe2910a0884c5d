"""Fixtures of the real-browser tests: a JupyterLab of its own and Debian's Chromium.

The server runs on a free port with its own config, data, runtime, settings and workspace
folders, over a copy of the notebooks and example kernels (so Run All never writes into the
repository, and nothing is trusted: the trust database starts empty). Playwright drives
``/usr/bin/chromium`` (its own browser downloads cannot work here). Screenshots go to a temporary
folder whose path is printed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
INSTALL_HINT = "run `apt-get update && apt-get install -y chromium` (CI's .ci/run does this)"
TOKEN = "loom-browser-tests"


def chromium_path() -> str:
    """Debian's Chromium, or a failure saying how to install it (never a silent skip)."""
    for candidate in (os.environ.get("LOOM_CHROMIUM"), "/usr/bin/chromium", "chromium"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)  # type: ignore[return-value]
    pytest.fail(f"the browser tests need Chromium, which is not installed: {INSTALL_HINT}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(settings: Path) -> None:
    """No news prompt, no update check: nothing but the notebook on screen."""
    path = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))


def _lay_out_root(root: Path) -> None:
    """The folder the server opens: notebooks and example kernels, as `make lab` shows them."""
    shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".*"))
    for folder in ("examples", "tests/interp/kernels"):
        if (ROOT / folder).is_dir():
            shutil.copytree(ROOT / folder, root / folder)


@pytest.fixture(scope="session")
def shots() -> Path:
    """Screenshot folder (printed so a person can look)."""
    path = Path(tempfile.mkdtemp(prefix="loom-browser-shots-"))
    print(f"\nbrowser screenshots: {path}", file=sys.__stdout__, flush=True)
    return path


@pytest.fixture(scope="session")
def lab() -> Iterator[dict[str, Any]]:
    """A running JupyterLab: ``{"url", "root", "token"}``."""
    base = Path(tempfile.mkdtemp(prefix="loom-browser-lab-"))
    root = base / "root"
    root.mkdir()
    _lay_out_root(root)
    jpath = base / "jupyter-path"
    (jpath / "labextensions").mkdir(parents=True)
    # the bundle in this checkout, even when the venv holds an older copy
    (jpath / "labextensions" / "loom-jupyterlab").symlink_to(ROOT / "loom_jupyter" / "labextension")
    settings = base / "settings"
    _write_settings(settings)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_DATA_DIR": str(base / "data"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTER_PATH": str(jpath),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "IPYTHONDIR": str(base / "ipython"),
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        "--ServerApp.allow_root=True",
    ]
    log = (base / "server.log").open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("JupyterLab did not start:\n" + (base / "server.log").read_text())
            time.sleep(0.3)
    try:
        yield {"url": url, "root": root, "token": TOKEN, "log": base / "server.log"}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Chromium driven by Playwright."""
    exe = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright: pip install -e '.[test]'")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def app_page(browser: Any, lab: dict[str, Any]) -> Iterator[Any]:
    """One JupyterLab page for the whole session (loading the app is the slow part)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.js_errors = errors  # type: ignore[attr-defined]
    pg.goto(f"{lab['url']}/lab?token={lab['token']}")
    pg.wait_for_function("window.jupyterapp && window.jupyterapp.shell", timeout=60000)
    pg.wait_for_selector(".jp-DirListing-content", timeout=60000)
    try:
        yield pg
    finally:
        context.close()


@pytest.fixture
def page(app_page: Any) -> Iterator[Any]:
    """The session's page, with every document closed afterwards; fails on JS errors."""
    seen = len(app_page.js_errors)
    app_page.set_viewport_size({"width": 1280, "height": 900})
    yield app_page
    app_page.evaluate("window.jupyterapp.commands.execute('application:close-all')")
    new = app_page.js_errors[seen:]
    assert not new, f"JavaScript errors: {new}"
