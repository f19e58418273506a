# costdash dashboard: the embedded default (SQLite + files under /data), served by gunicorn.
# The steps mirror the README's run command (pip install -r requirements.txt -e .); no Docker
# engine runs on the development machines, so this file is kept to those same steps.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    COSTDASH_DATA_DIR=/data

WORKDIR /app
COPY requirements.txt pyproject.toml README.md ./
COPY costdash ./costdash
COPY dashboard ./dashboard
COPY assets ./assets
COPY app.py ./
RUN pip install --no-cache-dir -r requirements.txt gunicorn -e . \
    && useradd --create-home --uid 10001 costdash \
    && mkdir -p /data && chown costdash /data

USER costdash
EXPOSE 8050
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8050/healthz', timeout=4)"
CMD ["gunicorn", "--workers", "2", "--bind", "0.0.0.0:8050", "--timeout", "120", "app:server"]
