"""Production batches of the Production page and API (issue 25), kept in the SQL store's
database, and the alert webhook.

A **batch** is one production file as read by :func:`costdash.production_io.load_production`
(score counts ``score, n, period``), kept under a **scope**: ``data:<upload handle>`` for a data
set opened on the page, ``analysis:<analysis id>`` for a saved analysis (pushed through
``POST /api/v1/analyses/<manage token>/production``, or shown read-only through its link). The
scope is what the caller already holds, so a batch is seen by exactly those who may see the data.

Bounds: a batch is at most the upload limits (``max_upload_bytes`` as a file, ``max_rows`` rows
read); equal (period, score) rows are merged into counts before they are kept, so a batch of
10⁶ rows of a thresholded score takes a few kB. A scope keeps its newest
:data:`MAX_BATCHES` batches: the oldest goes when one more arrives (a rolling window, so a feed
pushed every day never stops being watched; the reply's notes say when one went).

Deletion: :func:`forget` runs wherever a data set's cached results are dropped
(``ViewModels.forget``, wired in :func:`dashboard.factory.create_app`): deleting an upload
handle deletes its ``data:`` batches; an analysis deleted or expired leaves ``analysis:``
batches whose analysis no longer exists, and those go in the same call.

Nothing here computes: :func:`watch_batches` hands the batches to :func:`costdash.watch`.
"""

from __future__ import annotations

import io
import json
import logging
import secrets
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import pandas as pd
import sqlalchemy as sa

from costdash.io.reading import _read_source, _read_table, _sniff_format
from costdash.dataset import Dataset
from costdash.errors import InputFileError
from costdash.monitor import Watch, watch
from costdash.production_io import ProductionScores, load_production
from costdash.view import View
from dashboard.storage.sharedstate import ensure_tables, transaction
from dashboard.storage.sql import SqlStore

__all__ = ["MAX_BATCHES", "Batch", "ProductionStore", "alert_payloads", "deployed_of",
           "forget", "period_guess", "post_alerts", "production_columns", "production_forgetting",
           "read_batch", "watch_batches"]

log = logging.getLogger(__name__)

MAX_BATCHES = 200
"""Batches kept per scope (data set or analysis); the oldest goes when one more arrives."""

WEBHOOK_TIMEOUT = 3.0
"""Seconds the webhook may take to answer; after that the alert is logged as not delivered."""

PERIOD_NAMES = ("period", "date", "day", "week", "month", "batch")
"""Column names taken as the period column when the user has not chosen one."""

_metadata = sa.MetaData()

production_batches_table = sa.Table(
    "production_batches", _metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    # "data:<upload handle>" or "analysis:<analysis id>"
    sa.Column("scope", sa.String(120), nullable=False, index=True),
    sa.Column("seq", sa.Float, nullable=False),   # creation time: the batches' order
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("periods", sa.Text, nullable=False),  # JSON list of the batch's period labels
    sa.Column("n", sa.BigInteger, nullable=False),
    sa.Column("content", sa.LargeBinary, nullable=False),  # Parquet: score, n, period
)

def _tables(store: SqlStore) -> None:
    ensure_tables(store, _metadata)


@dataclass(frozen=True)
class Batch:
    """A stored batch (without its scores)."""

    id: str
    source: str
    periods: tuple[str, ...]
    n: int
    created_at: float


def production_columns(raw: bytes, name: str, max_bytes: int) -> list[str]:
    """The column names of a production file (InputFileError naming the file otherwise)."""
    source, data = _read_source(io.BytesIO(raw), name, max_bytes)
    frame = _read_table(data, source, _sniff_format(data, source), None)
    return [str(c) for c in frame.columns]


def period_guess(columns: Iterable[str], chosen: str | None = None) -> str | None:
    """The period column: ``chosen`` when the file has it, else one named like a period."""
    by_lower = {c.casefold(): c for c in columns}
    if chosen and chosen.casefold() in by_lower:
        return by_lower[chosen.casefold()]
    return next((by_lower[n] for n in PERIOD_NAMES if n in by_lower), None)


def read_batch(raw: bytes, name: str, *, classifier: str | None, period_column: str | None,
               period: str | None, max_bytes: int, max_rows: int) -> ProductionScores:
    """Read a production file as a batch: its table has ``score, n, period`` (the file's period
    column, else ``period``, else the file name's stem), merged into counts.

    Raises
    ------
    InputFileError
        What :func:`~costdash.production_io.load_production` refuses (its message names the
        file, column and row), or more rows than ``max_rows``.
    """
    read = load_production(io.BytesIO(raw), name=name, classifier=classifier,
                           period_column=period_column, max_bytes=max_bytes)
    if len(read.table) > max_rows:
        raise InputFileError(f"{read.source}: {len(read.table):,} rows, over the limit of "
                             f"{max_rows:,} rows per upload; aggregate it first (costdash "
                             "aggregate --no-label writes score counts)", source=read.source)
    table = read.table
    if read.period is None:
        label = (period or "").strip() or PurePath(read.source).name.split(".")[0] or "batch"
        table = table.assign(period=label)
    # Merged in order of first appearance, so the periods keep the file's order.
    merged = (table.groupby(["period", "score"], sort=False, as_index=False)["n"].sum())
    return ProductionScores(source=read.source, table=merged[["score", "n", "period"]],
                            period="period", score_column=read.score_column, notes=read.notes)


class ProductionStore:
    """The batches of every scope, in the store's database."""

    def __init__(self, store: SqlStore, max_batches: int = MAX_BATCHES):
        self.store = store
        self.max_batches = int(max_batches)

    def add(self, scope: str, batch: ProductionScores) -> tuple[str, list[str]]:
        """Keep ``batch`` under ``scope``; returns its id and notes (an old batch dropped)."""
        _tables(self.store)
        buffer = io.BytesIO()
        batch.table.to_parquet(buffer, index=False)
        periods = list(dict.fromkeys(str(p) for p in batch.table["period"]))
        batch_id = secrets.token_hex(16)
        t = production_batches_table
        notes = []
        with transaction(self.store) as conn:
            last = conn.execute(sa.select(sa.func.max(t.c.seq)).where(t.c.scope == scope)
                                ).scalar()
            # Strictly after the last one even when the clock is coarse or went back.
            seq = max(time.time(), (last or 0.0) + 1e-6)
            conn.execute(t.insert().values(id=batch_id, scope=scope, seq=seq,
                                           source=batch.source[:500], periods=json.dumps(periods),
                                           n=int(batch.table["n"].sum()),
                                           content=buffer.getvalue()))
            kept = conn.execute(sa.select(t.c.id, t.c.source).where(t.c.scope == scope)
                                .order_by(t.c.seq.desc())).all()
            old = kept[self.max_batches:]
            if old:
                conn.execute(t.delete().where(t.c.id.in_([r.id for r in old])))
                notes.append(f"{len(old)} oldest batch(es) dropped ({old[0].source}…): at most "
                             f"{self.max_batches} are kept per data set")
        return batch_id, notes

    def batches(self, scope: str) -> list[Batch]:
        """The scope's batches, oldest first."""
        _tables(self.store)
        t = production_batches_table
        with transaction(self.store) as conn:
            rows = conn.execute(sa.select(t.c.id, t.c.source, t.c.periods, t.c.n, t.c.seq)
                                .where(t.c.scope == scope).order_by(t.c.seq)).all()
        return [Batch(r.id, r.source, tuple(json.loads(r.periods)), int(r.n), float(r.seq))
                for r in rows]

    def table(self, scope: str) -> pd.DataFrame | None:
        """Every batch of the scope as one table ``score, n, period`` (oldest first); None
        without batches."""
        _tables(self.store)
        t = production_batches_table
        with transaction(self.store) as conn:
            blobs = conn.execute(sa.select(t.c.content).where(t.c.scope == scope)
                                 .order_by(t.c.seq)).scalars().all()
        if not blobs:
            return None
        frames = [pd.read_parquet(io.BytesIO(b)) for b in blobs]
        table = pd.concat(frames, ignore_index=True)
        table["period"] = table["period"].astype(str)
        return table

    def remove(self, scope: str, batch_id: str | None = None) -> int:
        """Delete one batch of the scope (``batch_id``) or all of them; how many went."""
        _tables(self.store)
        t = production_batches_table
        where = t.c.scope == scope
        if batch_id is not None:
            where = sa.and_(where, t.c.id == batch_id)
        with transaction(self.store) as conn:
            return conn.execute(t.delete().where(where)).rowcount

    def count(self) -> int:
        _tables(self.store)
        with transaction(self.store) as conn:
            return int(conn.execute(sa.select(sa.func.count())
                                    .select_from(production_batches_table)).scalar_one())


def forget(store: SqlStore, dataset_id: str) -> None:
    """Delete the batches of a data set handle that was deleted, and of analyses that are no
    more (the delete path calls this with each handle that went, an analysis's read-only
    handle among them)."""
    from dashboard.storage.sql import analyses_table  # the store's own table of analyses

    _tables(store)
    t = production_batches_table
    live = sa.select(sa.literal("analysis:") + analyses_table.c.id)
    with transaction(store) as conn:
        conn.execute(t.delete().where(t.c.scope == f"data:{dataset_id}"))
        conn.execute(t.delete().where(sa.and_(t.c.scope.like("analysis:%"),
                                              t.c.scope.not_in(live))))


def production_forgetting(forget_results: Callable[[str], None], store: SqlStore
                          ) -> Callable[[str], None]:
    """``forget_results`` (``ViewModels.forget``, called with each data set handle deleted)
    followed by :func:`forget`: the one hook the delete paths already share."""
    def forget_all(dataset_id: str) -> None:
        forget_results(dataset_id)
        try:
            forget(store, dataset_id)
        except Exception:  # noqa: BLE001 - the delete itself succeeded; the next one retries
            log.exception("could not delete the production batches of %s", dataset_id)
    return forget_all


# --- the watch and its alerts ------------------------------------------------------------------

def deployed_of(view: View) -> tuple[str, float | None] | None:
    """The deployed choice the view names (its ``model`` and ``threshold`` together); None:
    the policy's choice at the view's conditions."""
    if view.model and view.threshold is not None:
        return view.model, float(view.threshold)
    return None


def watch_batches(reference: Dataset, table: pd.DataFrame, view: View, *,
                  method: str = "em", level: float = 0.9) -> Watch:
    """:func:`costdash.watch` of the batches at the view's conditions (p(+) absent: the
    reference's prevalence) and deployed choice (:func:`deployed_of`)."""
    condition = view.condition(reference.prevalence)
    return watch(reference, table, period="period", p_pos=condition.p_pos,
                 cost_fn=condition.cost_fn, cost_fp=condition.cost_fp,
                 cost_tp=condition.cost_tp, cost_tn=condition.cost_tn,
                 deployed=deployed_of(view), method=method,  # type: ignore[arg-type]
                 level=level)


def alert_payloads(result: Watch, periods: Iterable[str], analysis: str | None
                   ) -> list[dict[str, Any]]:
    """The webhook's JSON for each of ``periods`` (those a new batch touched) that alerts:
    ``{analysis, period, p_pos, pc, interval, deployed, choice, regret}``."""
    wanted = {str(p) for p in periods}
    dep = result.deployed
    return [{
        "analysis": analysis, "period": str(p.period), "p_pos": p.p_pos, "pc": p.pc,
        "interval": {"level": result.level, "p_pos": [p.p_pos_low, p.p_pos_high],
                     "pc": [p.pc_low, p.pc_high]},
        "deployed": {"classifier": dep.classifier, "threshold": dep.threshold,
                     "valid_pc": list(dep.valid_pc) if dep.valid_pc else None},
        "choice": {"classifier": p.choice_classifier, "threshold": p.choice_threshold},
        "regret": p.regret_per_period,
    } for p in result.periods if p.alert and str(p.period) in wanted]


def post_alerts(url: str | None, payloads: list[Mapping[str, Any]],
                timeout: float = WEBHOOK_TIMEOUT) -> threading.Thread | None:
    """POST each payload as JSON to the webhook ``url`` from a daemon thread (the page and the
    API never wait for it); a failure is logged, never raised. Returns the thread (None when
    there is nothing to send)."""
    if not url or not payloads:
        return None

    def send() -> None:
        for payload in payloads:
            body = json.dumps(payload, allow_nan=False).encode()
            request = urllib.request.Request(url, data=body, method="POST", headers={
                "Content-Type": "application/json", "User-Agent": "costdash-alert"})
            try:
                with urllib.request.urlopen(request, timeout=timeout) as reply:
                    reply.read(1024)
            except Exception as exc:  # noqa: BLE001 - an alert lost is logged, not raised
                log.warning("costdash alert webhook: period %s not delivered (%s: %s)",
                            payload.get("period"), type(exc).__name__, exc)

    thread = threading.Thread(target=send, daemon=True, name="costdash-alert-webhook")
    thread.start()
    return thread
