"""Run the costdash dashboard.

    python app.py                      # http://127.0.0.1:8050
    python app.py --port 9000 --host 0.0.0.0
    PORT=9000 COSTDASH_DATA_DIR=/srv/costdash python app.py
    gunicorn -c gunicorn.conf.py app:server       # production (WSGI), see docs/deployment.md

Environment: ``COSTDASH_DATA_DIR`` (default ./.costdash-data: the SQLite database, cache, jobs,
secret key), ``COSTDASH_DATABASE_URL`` (postgresql://... to share data between hosts),
``COSTDASH_CACHE_URL`` and ``COSTDASH_JOBS_URL`` (redis://...), ``COSTDASH_SECRET_KEY``,
``COSTDASH_MAX_UPLOAD_MB`` (default 200), ``PORT``. See docs/dashboard.md and
docs/deployment.md.
"""

from __future__ import annotations

import argparse
import os
import sys

from dashboard import create_app
from dashboard.factory import finish_setup

app = create_app()
server = app.server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the costdash dashboard.")
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"),
                        help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8050")),
                        help="port (default 8050, or $PORT)")
    parser.add_argument("--debug", action="store_true", help="Dash dev tools and reloader")
    args = parser.parse_args(argv)
    print(f"costdash dashboard on http://{args.host}:{args.port}/explore "
          f"(data in {app.server.extensions['costdash'].settings.data_dir.resolve()})",
          file=sys.stderr)
    finish_setup(server)  # the development server is threaded too
    app.run(host=args.host, port=args.port, debug=args.debug)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
