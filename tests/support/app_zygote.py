"""``python app.py`` servers for the browser tests, forked from one process that imported the
dashboard once.

A browser module starts its own ``python app.py`` (tests/web/conftest.py, ``running_app``).
Started from scratch, each spent ~2 CPU seconds before it served (importing dash, plotly, pandas
and the dashboard, plotly's warm-up) on two cores that the whole suite keeps busy. Here one
process per pytest worker pays that once; each server is a fork of it that runs ``app.py`` as
``__main__`` with its own environment, arguments, working directory and log, in a session of its
own. It is the same file, run the same way, after the same imports: what differs is only that the
imports were done before the fork, as gunicorn's master does for its workers (gunicorn.conf.py).

Run as ``python -u -m tests.support.app_zygote`` from the repository; it reads one JSON request
per line on stdin (``{"argv": [...], "env": {...}, "cwd": "...", "log": "..."}``) and answers
``{"pid": N}`` per line. It reaps its children itself; a caller sees a server gone when its pid
is (:class:`ForkedServer`).
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


# --- the caller's side ---------------------------------------------------------------------------

class ForkedServer:
    """What ``subprocess.Popen`` offered ``running_app``, for a server the zygote forked."""

    def __init__(self, pid: int):
        self.pid = pid

    def poll(self) -> int | None:
        """None while the server runs; -1 once it is gone (its exit code went to the zygote)."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return -1
        try:
            with open(f"/proc/{self.pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return -1  # exited, not reaped yet
        except (FileNotFoundError, ProcessLookupError):
            return -1  # reaped between the kill(0) and the read (a CI run found ESRCH here)
        return None

    def send_signal(self, sig: int) -> None:
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"forked app.py {self.pid}", timeout)
            time.sleep(0.05)
        return -1


class Zygote:
    """The caller's handle on one zygote process (started on first use)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The zygote's pid while it runs (its tree holds this worker's app.py servers)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def _started(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-u", "-m", "tests.support.app_zygote"], cwd=REPO,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        return self._process

    def start(self, argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> ForkedServer:
        """A fork running ``argv`` (``[path to app.py, args...]``) as ``python argv...`` would."""
        request = json.dumps({"argv": [str(a) for a in argv], "env": env, "cwd": str(cwd),
                              "log": str(log)})
        with self._lock:
            process = self._started()
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(request + "\n")
            process.stdin.flush()
            answer = process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the app.py zygote exited ({process.poll()})")
        return ForkedServer(json.loads(answer)["pid"])

    def stop(self) -> None:
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                self._process.stdin.close()  # type: ignore[union-attr]
                try:
                    self._process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait()
            self._process = None


# --- the zygote ------------------------------------------------------------------------------------

def _reap(_signum: int, _frame: object) -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _run_server(request: dict) -> None:
    """In the fork: become ``python app.py ...`` with the request's environment; never returns."""
    code = 1
    try:
        os.setsid()  # a signal to the server's group never reaches the zygote
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        runpy.run_path(sys.argv[0], run_name="__main__")
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # noqa: BLE001 - whatever app.py raised goes to its log, as python would
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def main() -> None:
    import dashboard.factory  # noqa: F401 - the imports every server would repeat
    from dashboard.report import warm_figures

    warm_figures()
    signal.signal(signal.SIGCHLD, _reap)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _run_server(request)
        sys.stdout.write(json.dumps({"pid": pid}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
