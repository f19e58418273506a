"""A small threaded TCP proxy for fault tests: put it between the app and a real service
(Redis, PostgreSQL), then ``stop()`` it to make the service vanish for the app and ``restart()``
it to bring the service back, on the same port.

``stop()`` closes the listening socket and every open connection, so clients see what they
would see if the service's host went away: established connections reset, new ones refused.

Example::

    with TcpProxy("127.0.0.1", 6379) as proxy:
        url = f"redis://127.0.0.1:{proxy.port}/3"
        ...
        proxy.stop()      # Redis is "down"
        proxy.restart()   # and back
"""

from __future__ import annotations

import socket
import struct
import threading
from typing import Any

__all__ = ["TcpProxy"]


class TcpProxy:
    """Forward ``127.0.0.1:port`` to ``(target_host, target_port)``, one thread pair per client.

    Parameters
    ----------
    target_host, target_port : str, int
        The real service.
    port : int, optional
        Port to listen on; 0 (default) picks a free one at :meth:`start`, which
        :meth:`restart` then reuses.

    Attributes
    ----------
    port : int
        The port clients connect to (known after :meth:`start`).
    connections : int
        Client connections accepted since :meth:`start` (for tests that want to see the app
        really went through the proxy).
    """

    def __init__(self, target_host: str, target_port: int, port: int = 0):
        self.target = (target_host, target_port)
        self.port = port
        self.connections = 0
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._accept_thread: threading.Thread | None = None

    def __enter__(self) -> TcpProxy:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._listener is not None

    def start(self) -> TcpProxy:
        """Listen (on :attr:`port`, or a free port the first time) and forward; returns self."""
        if self._listener is not None:
            return self
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # The same port again right after stop(): its old connections may sit in TIME_WAIT.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._accept_thread = threading.Thread(target=self._accept, args=(listener,),
                                               name=f"tcp-proxy-{self.port}", daemon=True)
        self._accept_thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and cut every open connection (the service "goes down")."""
        listener, self._listener = self._listener, None
        if listener is not None:
            # shutdown() wakes the thread blocked in accept(); close() alone may not on Linux.
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=5)
            self._accept_thread = None
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for s in sockets:
            _close(s, reset=True)

    def restart(self) -> TcpProxy:
        """:meth:`stop`, then :meth:`start` on the same port (the service "comes back")."""
        self.stop()
        return self.start()

    # --- forwarding ----------------------------------------------------------------------------

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # the listener was closed by stop()
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _close(client, reset=True)
                continue
            with self._lock:
                if self._listener is not listener:  # stop() ran meanwhile
                    _close(client, reset=True)
                    _close(upstream, reset=True)
                    return
                self.connections += 1
                self._sockets.update((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True,
                                 name=f"tcp-proxy-{self.port}-pipe").start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            # One side ended: end both, so neither end waits on a half-open connection.
            with self._lock:
                self._sockets.discard(src)
                self._sockets.discard(dst)
            _close(src)
            _close(dst)


def _close(s: socket.socket, reset: bool = False) -> None:
    try:
        if reset:
            # Abortive close (RST), as when a host dies; linger 0 applies at close().
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # shutdown() wakes a pipe thread blocked in recv() on this socket; close() alone leaves
        # it blocked on Linux, and the peer would never notice.
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
