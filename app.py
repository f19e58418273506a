"""Run the costdash dashboard.

    python app.py                      # http://127.0.0.1:8050
    python app.py --port 9000 --host 0.0.0.0
    PORT=9000 COSTDASH_DATA_DIR=/srv/costdash python app.py
    gunicorn -w 4 -b 0.0.0.0:8050 app:server      # production (WSGI)

Environment: ``COSTDASH_DATA_DIR`` (default ./.costdash-data: SQLite index, data files, cache,
secret key), ``COSTDASH_CACHE_URL`` (redis://... to share the cache between hosts),
``COSTDASH_SECRET_KEY``, ``COSTDASH_MAX_UPLOAD_MB`` (default 200), ``PORT``. See docs/dashboard.md.
"""

from __future__ import annotations

import argparse
import os
import sys

from dashboard import create_app

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
    app.run(host=args.host, port=args.port, debug=args.debug)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
