"""The Dockerfile, replayed without a Docker engine (none runs on this machine).

The "image" is a fresh directory: what the COPY lines copy from the repository, a fresh venv
standing in for the base image's Python, and the RUN line's pip command run in it. Then the
image's CMD (the web role) and the worker command run from it as an unprivileged user, and the
HEALTHCHECK command (and compose.yaml's worker health check) must pass against them.

Not replayed: the base image itself, and ``useradd``/``chown`` (they would change this
machine); the unprivileged user here is ``nobody`` instead of the image's ``costdash``.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
import yaml

from tests.deploy.dockerfile import Dockerfile, parse
from tests.support.processes import REPO, WORKER_COMMAND, running, start_web, start_worker

pytestmark = pytest.mark.slow

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]


def base_python() -> str:
    """A Python 3.11 (the base image's minor version) that the unprivileged user can run.

    Not necessarily this venv's: on this machine that one lives under /root (pyenv), and a
    venv made from it points there, which nobody may not read; the interpreter then falls back
    to another Python without a word (found by this test: redis-py's import failed).
    """
    for candidate in (os.environ.get("COSTDASH_IMAGE_PYTHON"), "/usr/bin/python3.11",
                      sys.executable):
        if not candidate or not Path(candidate).exists():
            continue
        probe = subprocess.run([*AS_NOBODY, candidate, "-c",
                                "import sys, venv; print(sys.version_info[:2])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == "(3, 11)":
            return candidate
    pytest.fail("no Python 3.11 that the unprivileged user can run: set COSTDASH_IMAGE_PYTHON")


@dataclass
class Image:
    dockerfile: Dockerfile
    root: Path
    workdir: Path
    env: dict[str, str]


def copy_into(sources: list[str], target: str, workdir: Path) -> None:
    """``COPY sources target`` relative to WORKDIR, as Docker does for a build context."""
    dest = workdir / target
    for name in sources:
        src = REPO / name
        if src.is_dir():
            # A directory source copies its contents to the target directory.
            shutil.copytree(src, dest, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / src.name)


@pytest.fixture(scope="module")
def image() -> Image:
    dockerfile = parse(REPO / "Dockerfile")
    # Not under pytest's tmp dir: that is private to root, and the roles run as nobody.
    root = Path(tempfile.mkdtemp(prefix="costdash-image-"))
    try:
        root.chmod(0o755)
        workdir = root / dockerfile.workdir.lstrip("/")
        workdir.mkdir(parents=True)
        for sources, target in dockerfile.copies:
            copy_into(sources, target, workdir)
        venv = root / "venv"
        subprocess.run([base_python(), "-m", "venv", str(venv)], check=True)
        env = {"PATH": f"{venv}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": str(root / "home"),
               "HOSTNAME": "localhost", **dockerfile.env}
        pip = dockerfile.runs[0].split("&&")[0].strip()
        assert pip.startswith("pip install "), dockerfile.runs[0]
        # The image's pip keeps no cache (PIP_NO_CACHE_DIR, a smaller layer); the replay may
        # read the wheels this machine's pip already fetched for the same pins, as a Docker
        # build reads its layer cache: the same versions resolve, without downloading ~300 MB
        # again (130 s of the CI run's longest module at load 6, 46 s of it CPU either way).
        pip_env = {k: v for k, v in env.items() if k != "PIP_NO_CACHE_DIR"}
        pip_env["PIP_CACHE_DIR"] = subprocess.run(
            [sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True,
            check=True).stdout.strip()
        done = subprocess.run(shlex.split(pip), cwd=workdir, env=pip_env, capture_output=True,
                              text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        # /data stands for the image's data dir, owned by its user (the RUN line's chown).
        data = root / "data"
        data.mkdir()
        os.chown(data, NOBODY, NOBODY)
        (root / "home").mkdir()
        os.chown(root / "home", NOBODY, NOBODY)
        env["COSTDASH_DATA_DIR"] = str(data)
        yield Image(dockerfile, root, workdir, env)
    finally:
        shutil.rmtree(root, ignore_errors=True)


NOT_COMPARED = {"urllib3", "pip", "setuptools", "wheel"}
"""urllib3: the test venv pins it for a test tool only (selenium 4.2 needs urllib3 1.x); pip,
setuptools, wheel: they come with the interpreter (the base image's differs anyway)."""


def versions(python: Path) -> dict[str, str]:
    out = subprocess.run([str(python), "-m", "pip", "list", "--format=json"],
                         capture_output=True, text=True, check=True).stdout
    return {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(out)}


def test_the_image_has_the_package_versions_the_tests_ran(image):
    """What the image resolves from its pip command is what every other test ran against."""
    mine = versions(Path(sys.executable))
    theirs = versions(image.root / "venv" / "bin" / "python")
    drift = {name: (theirs[name], mine[name]) for name in theirs.keys() & mine.keys()
             if theirs[name] != mine[name] and name not in NOT_COMPARED}
    assert drift == {}, f"image vs tests: {drift}"


def test_the_image_runs_as_a_user_it_creates():
    dockerfile = parse(REPO / "Dockerfile")
    assert dockerfile.user not in (None, "root", "0")
    steps = [s.strip() for s in dockerfile.runs[0].split("&&")]
    assert any(s.startswith("useradd") and s.split()[-1] == dockerfile.user for s in steps)
    assert f"chown {dockerfile.user} {dockerfile.env['COSTDASH_DATA_DIR']}" in steps


def test_the_image_serves_the_web_role_and_passes_its_health_check(image, tmp_path):
    env = {**image.env, "COSTDASH_SECRET_KEY": secrets.token_hex(32)}
    with running(lambda: start_web(env, tmp_path / "web.log", workers=2, cwd=image.workdir,
                                   argv=[*AS_NOBODY, *image.dockerfile.cmd])) as (web,):
        assert {p.uids().real for p in web.children()} == {NOBODY}
        assert requests.get(web.url + "/explore", timeout=10).status_code == 200
        check = subprocess.run([*AS_NOBODY, *image.dockerfile.healthcheck], cwd=image.workdir,
                               env=web.env, capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, check.stderr
        log = web.log_text()
    assert "Booting worker" in log and '"GET /healthz HTTP/1.1" 200' in log


def test_the_image_runs_the_worker_role_and_passes_composes_health_check(image, tmp_path,
                                                                         redis_url):
    env = {**image.env, "COSTDASH_SECRET_KEY": secrets.token_hex(32),
           "COSTDASH_JOBS_URL": redis_url, "COSTDASH_CACHE_URL": redis_url}
    compose = yaml.safe_load((REPO / "compose.yaml").read_text())
    worker = compose["services"]["worker"]
    command = [a for a in worker["command"] if not a.startswith("--concurrency")]
    assert command == WORKER_COMMAND
    with running(lambda: start_worker(env, tmp_path / "worker.log", cwd=image.workdir,
                                      argv=[*AS_NOBODY, *command])) as (role,):
        assert {p.uids().real for p in role.children()} == {NOBODY}
        kind, check = worker["healthcheck"]["test"]
        assert kind == "CMD-SHELL"
        # Compose turns $$ into $; the shell then expands HOSTNAME, here the test node's.
        node_host = role.nodename.split("@", 1)[1]
        check = check.replace("$$", "$").replace("celery@$HOSTNAME", role.nodename)
        done = subprocess.run([*AS_NOBODY, "sh", "-c", check], cwd=image.workdir,
                              env={**env, "HOSTNAME": node_host}, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0 and "pong" in done.stdout, done.stdout + done.stderr
