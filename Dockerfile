# costdash: one image for every role.
#
#   web (default command):  gunicorn -c gunicorn.conf.py app:server
#   job worker:             celery -A dashboard.worker:celery_app worker --loglevel=INFO
#
# Alone, the web role is the embedded default (SQLite, cache and jobs under /data). Scaled, all
# roles get the same COSTDASH_DATABASE_URL, COSTDASH_CACHE_URL, COSTDASH_JOBS_URL and
# COSTDASH_SECRET_KEY: see compose.yaml and docs/deployment.md.
#
# No Docker engine runs on the development machines, so this image has not been built there.
# Instead tests/deploy/test_dockerfile.py replays this file: it copies what the COPY lines copy,
# runs the RUN line's pip command in a fresh venv, starts CMD and the worker command as an
# unprivileged user, and runs the HEALTHCHECK command against them. Keep every step in a form
# that test can replay (COPY of repository paths, one pip command first in RUN, exec-form CMD).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    COSTDASH_DATA_DIR=/data \
    PORT=8050

WORKDIR /app
COPY requirements.txt pyproject.toml README.md ./
COPY costdash ./costdash
COPY dashboard ./dashboard
COPY assets ./assets
COPY app.py gunicorn.conf.py ./
RUN pip install -r requirements.txt -e . \
    && useradd --create-home --uid 10001 costdash \
    && mkdir -p /data && chown costdash /data

USER costdash
EXPOSE 8050
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8050'), timeout=4)"]
CMD ["gunicorn", "-c", "gunicorn.conf.py", "app:server"]
