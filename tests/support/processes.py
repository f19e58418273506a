"""The deployment's processes, started by tests exactly as docs/deployment.md, the Dockerfile
and compose.yaml start them: the web role (gunicorn with gunicorn.conf.py) and the job role
(a Celery worker), each in its own process group with its log in a file.

:data:`WEB_COMMAND` and :data:`WORKER_COMMAND` are the single definition of those commands;
tests/deploy/test_deploy_files.py checks that the Dockerfile and compose.yaml use the same ones.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from tests.support.services import free_port, wait_for_http

REPO = Path(__file__).resolve().parents[2]

WEB_COMMAND = ["gunicorn", "-c", "gunicorn.conf.py", "app:server"]
"""The web role (port from ``PORT``, workers from ``WEB_CONCURRENCY``)."""

WORKER_COMMAND = ["celery", "-A", "dashboard.worker:celery_app", "worker", "--loglevel=INFO"]
"""The job role; deployments add ``--concurrency=N`` (default: one process per CPU)."""

PROXY_CONFIG = REPO / "deploy" / "nginx" / "nginx.conf"
"""The reverse proxy's configuration (compose.yaml's ``proxy`` service copies this file)."""

PROXY_COMMAND = ["nginx", "-p", "/var/lib/nginx", "-c", "/etc/nginx/costdash.conf", "-g",
                 "daemon off; user www-data;"]
"""The proxy's command in its image (deploy/nginx/Dockerfile); tests swap prefix, file and user."""


@dataclass
class Role:
    """A started process (and its process group) with its combined stdout/stderr log."""

    name: str
    process: subprocess.Popen
    log: Path
    url: str | None = None
    env: dict[str, str] = field(default_factory=dict, repr=False)
    nodename: str | None = None

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    @property
    def pid(self) -> int:
        return self.process.pid

    def children(self) -> list[psutil.Process]:
        """Live direct children (gunicorn's workers, Celery's pool processes)."""
        try:
            kids = psutil.Process(self.pid).children()
        except psutil.NoSuchProcess:
            return []
        return [k for k in kids if _alive(k)]

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM to the group (a graceful stop), then SIGKILL to what is left of it."""
        if self.process.poll() is None:
            _signal_group(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        # Pool processes may outlive their parent by a moment; the group holds only our own.
        _signal_group(self.pid, signal.SIGKILL)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def _alive(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def deploy_env(data_dir: Path, *, secret_key: str, cache_url: str | None = None,
               jobs_url: str | None = None, database_url: str | None = None,
               **extra: str) -> dict[str, str]:
    """The environment every role of one deployment shares (docs/deployment.md)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("COSTDASH_") and k not in ("PORT", "WEB_CONCURRENCY", "HOST")}
    env.update(PYTHONUNBUFFERED="1", COSTDASH_DATA_DIR=str(data_dir),
               COSTDASH_SECRET_KEY=secret_key)
    for name, value in (("COSTDASH_CACHE_URL", cache_url), ("COSTDASH_JOBS_URL", jobs_url),
                        ("COSTDASH_DATABASE_URL", database_url)):
        if value:
            env[name] = value
    env.update(extra)
    return env


def _spawn(name: str, argv: list[str], env: dict[str, str], log: Path, cwd: Path) -> Role:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        # Own session: stop() signals the whole group (gunicorn's workers, Celery's pool).
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    return Role(name, process, log, env=env)


def start_web(env: dict[str, str], log: Path, *, workers: int = 2, timeout: float = 60.0,
              name: str = "web", argv: list[str] | None = None, cwd: Path = REPO) -> Role:
    """The web role on a free port of 127.0.0.1; returns once ``/healthz`` answers.

    ``argv`` replaces ``python -m`` + :data:`WEB_COMMAND` (e.g. to run it as another user);
    ``cwd`` is where ``gunicorn.conf.py`` and ``app.py`` are.
    """
    port = free_port()
    env = {**env, "HOST": "127.0.0.1", "PORT": str(port), "WEB_CONCURRENCY": str(workers)}
    role = _spawn(name, argv or [sys.executable, "-m", *WEB_COMMAND], env, log, cwd)
    role.url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(role.url + "/healthz", timeout=timeout, process=role.process)
        deadline = time.monotonic() + timeout
        while len(role.children()) < workers:  # every worker booted, not only the first
            if time.monotonic() > deadline or role.process.poll() is not None:
                raise TimeoutError(f"gunicorn did not boot {workers} workers")
            time.sleep(0.1)
    except (OSError, RuntimeError) as exc:
        role.stop()
        raise RuntimeError(f"the web role did not start ({exc}):\n{role.log_text()}") from None
    return role


def start_proxy(web: Role, workdir: Path, *, timeout: float = 30.0) -> Role:
    """Debian's nginx with :data:`PROXY_CONFIG` in front of ``web``, on a free port.

    Only the two addresses the file marks change (the web role's and the listening one); the
    prefix and the user are the test's own (``PROXY_COMMAND`` otherwise).
    """
    port = free_port()
    web_address = web.url.removeprefix("http://")
    text = PROXY_CONFIG.read_text()
    for marked, actual in (("server web:8050;", f"server {web_address};"),
                           ("listen 8080;", f"listen 127.0.0.1:{port};")):
        if text.count(marked) != 1:
            raise RuntimeError(f"{PROXY_CONFIG} no longer has exactly one {marked!r}")
        text = text.replace(marked, actual)
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "nginx.conf"
    config.write_text(text)
    # As root, nginx's workers would switch to "nobody", who cannot write the test's temp dirs.
    as_root = " user root;" if os.geteuid() == 0 else ""
    argv = ["nginx", "-p", str(workdir), "-c", str(config), "-g", "daemon off;" + as_root]
    role = _spawn("proxy", argv, os.environ.copy(), workdir / "proxy.log", workdir)
    role.url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(role.url + "/healthz", timeout=timeout, process=role.process)
    except (OSError, RuntimeError) as exc:
        role.stop()
        raise RuntimeError(f"nginx did not start ({exc}):\n{role.log_text()}") from None
    return role


def worker_nodename() -> str:
    """A Celery node name no other worker on this machine uses."""
    return f"costdash-test-{os.getpid()}-{free_port()}@localhost"


def start_worker(env: dict[str, str], log: Path, *, concurrency: int = 1,
                 timeout: float = 60.0, argv: list[str] | None = None,
                 cwd: Path = REPO) -> Role:
    """A Celery worker; returns once it logged that it is ready to take jobs.

    ``argv`` replaces ``python -m`` + :data:`WORKER_COMMAND`; the concurrency and a unique
    ``--hostname`` are appended either way (``Role.nodename``).
    """
    nodename = worker_nodename()
    command = argv or [sys.executable, "-m", *WORKER_COMMAND]
    role = _spawn("worker", [*command, f"--concurrency={concurrency}", "--hostname", nodename],
                  env, log, cwd)
    role.nodename = nodename
    deadline = time.monotonic() + timeout
    while f"{nodename} ready." not in role.log_text():
        if time.monotonic() > deadline or role.process.poll() is not None:
            role.stop()
            raise RuntimeError("the Celery worker did not start:\n" + role.log_text())
        time.sleep(0.2)
    return role


@contextmanager
def running(*starters) -> Iterator[list[Role]]:
    """Start roles in order (zero-argument callables), stop them all in reverse at the end."""
    roles: list[Role] = []
    try:
        for start in starters:
            roles.append(start())
        yield roles
    finally:
        for role in reversed(roles):
            role.stop()
