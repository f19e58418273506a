"""gunicorn settings of the costdash web role: ``gunicorn -c gunicorn.conf.py app:server``.

Environment:

``PORT``             port to listen on (default 8050)
``HOST``             interface (default 0.0.0.0: in a container the published port must reach it)
``WEB_CONCURRENCY``  worker processes (default 2)
``WEB_THREADS``      threads per worker (default 4)
``WEB_TIMEOUT``      seconds a request may take before its worker is restarted (default 120)

Every worker builds its own app from the ``COSTDASH_*`` settings (see docs/deployment.md) and
keeps nothing between requests that another worker would need: storage is in the database, the
result cache in Redis (or the data dir), background jobs in Celery (or the data dir).
"""

import os

bind = [f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8050')}"]
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))

# Threads: each open page polls its running bootstrap job twice a second, and an upload keeps
# its thread for as long as the file takes to arrive; with one thread per process, a few of
# those would queue every other request behind them.
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "4"))

# A 200 MB upload on a slow link plus its analysis takes well over gunicorn's default 30 s;
# bootstrap bands never run in a web worker (they are background jobs), so this bounds only
# uploads and page callbacks.
timeout = int(os.environ.get("WEB_TIMEOUT", "120"))
graceful_timeout = 30
keepalive = 5
# gunicorn's largest: the address bar holds the whole view (models= lists every ticked
# classifier), and the app answers longer addresses itself with a 414 in the API's JSON
# (dashboard.responses.MAX_ADDRESS_BYTES); only request lines beyond this get gunicorn's own.
limit_request_line = 8190

# Each worker creates its own database engine and Redis clients after the fork; preloading
# would share the parent's sockets between workers.
preload_app = False
# The libraries are another matter: importing dash, plotly, pandas and the dashboard's modules
# opens no socket and starts no thread, and it is ~1.5 of the 1.6 CPU seconds a worker took to
# start. Imported here, once, in the master, every worker forks with them and starts in ~0.2 s
# (also the replacement of a worker gunicorn restarted), and their pages of memory are shared.
# plotly's one-time warm-up (figure classes, validators: ~0.5 CPU s) is done here for the same
# reason; finish_setup then finds it done in each worker.
import dashboard.factory  # noqa: E402,F401
from dashboard.report import warm_figures  # noqa: E402

warm_figures()

# Logs to stdout/stderr for the container runtime; the pid says which worker served a request.
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms pid=%(p)s'
if os.environ.get("COSTDASH_LOG_REQUEST_KIND") == "1":
    # For the load benchmark only (benchmarks/bench_load.py): the kind of request its client
    # names in a header, and the server's time for it in microseconds, so the time of each
    # callback (all POSTs to one address) can be told apart in this log.
    access_log_format += ' kind=%({x-load-kind}i)s us=%(D)s'
# The app's own warnings (e.g. "Redis cache ... failed") need a handler too, with the same
# timestamp and pid as gunicorn's lines; gunicorn merges this with its defaults (top-level keys
# replace its own, so both handlers are spelled out).
# Every handler takes the tokens of links out of what it writes (RedactTokens): the request
# line of "GET /s/<token>" or "POST /manage/<token>" would otherwise hand a reader of the log
# the read link or the right to delete.
from dashboard.config import RedactTokens  # noqa: E402 - a light module: no Flask, no Dash

logconfig_dict = {
    "root": {"level": "WARNING", "handlers": ["error_console"]},
    "loggers": {
        "gunicorn.error": {"level": loglevel.upper(), "handlers": ["error_console"],
                           "propagate": False, "qualname": "gunicorn.error"},
        "gunicorn.access": {"level": "INFO", "handlers": ["console"], "propagate": False,
                            "qualname": "gunicorn.access"},
        "dashboard": {"level": "INFO", "propagate": True},
        "costdash": {"level": "INFO", "propagate": True},
    },
    "filters": {"redact_tokens": {"()": RedactTokens}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "generic",
                    "stream": "ext://sys.stdout", "filters": ["redact_tokens"]},
        "error_console": {"class": "logging.StreamHandler", "formatter": "generic",
                          "stream": "ext://sys.stderr", "filters": ["redact_tokens"]},
    },
}

# Heartbeat files on tmpfs: a container's overlay filesystem can stall them and get healthy
# workers killed (gunicorn's own advice for Docker).
if os.path.isdir("/dev/shm"):
    worker_tmp_dir = "/dev/shm"

# gunicorn >= 25 opens a control socket at one fixed path per user ($HOME/.gunicorn/gunicorn.ctl):
# two instances on one host (tests, or a web role beside a staging copy) would take it from
# each other. Nothing here uses gunicornc.
control_socket_disable = True


def post_worker_init(worker):
    """Finish Dash's one-time setup before the worker takes its first request.

    See :func:`dashboard.factory.finish_setup`; seen here with two gthread workers
    (tests/deploy/test_web_role.py).
    """
    from dashboard.factory import finish_setup

    try:
        finish_setup(worker.wsgi)
    except Exception:  # noqa: BLE001 - a failed warm-up must not stop the worker; requests will
        worker.log.exception("costdash: warm-up request failed")
