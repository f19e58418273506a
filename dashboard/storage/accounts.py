"""People, their API tokens, what they own and the audit trail (issue 27, "Accounts, optional"),
kept in the SQL store's database beside data sets and analyses.

Only used when the instance logs people in through OpenID Connect (:mod:`dashboard.accounts`);
without those settings these tables are never created. They are declared here, on their own
``MetaData``, and created on first use (``create_all``, as :mod:`dashboard.storage.production`
does); they point at handles and analyses by id without foreign keys, so deleting an analysis
through a manage link or the expiry purge needs nothing from here (a row whose analysis went is
skipped when listed, and removed then).

* ``account_people``: one row per person (the provider's ``sub``), name and e-mail as last seen.
* ``account_tokens``: per-person API tokens; only the SHA-256 of a token is kept, looked up by
  it and compared with :func:`hmac.compare_digest`; a revoked token keeps its row (the list
  shows when it was revoked) and never authenticates again.
* ``account_uploads`` / ``account_analyses``: which upload handles and analyses a person made;
  ``require_login`` is the per-link option: the read link then opens for people of the
  organisation only (logged in).
* ``account_audit``: each change -- who (the person, or "manage link"), what, when -- shown to
  the owner.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from dashboard.storage.sharedstate import ensure_tables, transaction, upsert
from dashboard.storage.sql import SqlStore

__all__ = ["AccountStore", "ApiToken", "AuditEntry", "Person", "TOKEN_PREFIX"]

TOKEN_PREFIX = "cdt_"
"""Every personal API token starts with this, so a leaked one is recognisable (and a manage
token, 32 characters without it, is never taken for one)."""

MAX_TOKENS = 50
"""Live tokens one person may hold."""

_metadata = sa.MetaData()

people_table = sa.Table(
    "account_people", _metadata,
    sa.Column("subject", sa.String(255), primary_key=True),
    sa.Column("name", sa.Text, nullable=False, server_default=""),
    sa.Column("email", sa.Text, nullable=False, server_default=""),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("last_login_at", sa.Float, nullable=True),
)

tokens_table = sa.Table(
    "account_tokens", _metadata,
    sa.Column("id", sa.String(16), primary_key=True),
    sa.Column("subject", sa.String(255), nullable=False, index=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("token_key", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("last_used_at", sa.Float, nullable=True),
    sa.Column("revoked_at", sa.Float, nullable=True),
)

uploads_table = sa.Table(
    "account_uploads", _metadata,
    sa.Column("handle", sa.String(32), primary_key=True),
    sa.Column("subject", sa.String(255), nullable=False, index=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

owned_analyses_table = sa.Table(
    "account_analyses", _metadata,
    sa.Column("analysis_id", sa.String(24), primary_key=True),
    sa.Column("subject", sa.String(255), nullable=False, index=True),
    sa.Column("require_login", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("created_at", sa.Float, nullable=False),
)

audit_table = sa.Table(
    "account_audit", _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("subject", sa.String(255), nullable=False, index=True),  # whose trail
    sa.Column("actor", sa.Text, nullable=False),                       # who did it
    sa.Column("action", sa.String(40), nullable=False),
    sa.Column("target", sa.Text, nullable=False),
    sa.Column("detail", sa.Text, nullable=False, server_default=""),
    sa.Column("at", sa.Float, nullable=False, index=True),
)

def _tables(store: SqlStore) -> None:
    ensure_tables(store, _metadata)


def token_key(token: str) -> str:
    """The stored form of an API token (its SHA-256, hex)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Person:
    """Who is logged in: the provider's subject and what it said of them."""

    subject: str
    name: str = ""
    email: str = ""

    @property
    def label(self) -> str:
        """How the person is shown (and named in the audit trail)."""
        return self.email or self.name or self.subject


@dataclass(frozen=True)
class ApiToken:
    """A personal API token as listed (never the token itself)."""

    id: str
    name: str
    created_at: float
    last_used_at: float | None
    revoked_at: float | None

    @property
    def live(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class AuditEntry:
    """One change: who made it, what it was, to what, when."""

    actor: str
    action: str
    target: str
    detail: str
    at: float


class AccountStore:
    """The accounts' tables in ``store``'s database (SQLite or PostgreSQL)."""

    def __init__(self, store: SqlStore):
        self.store = store

    def _begin(self) -> Any:
        _tables(self.store)
        return transaction(self.store)

    # people ------------------------------------------------------------------------------------

    def logged_in(self, person: Person, now: float | None = None) -> None:
        """Record a login: the person's row, created or refreshed."""
        now = time.time() if now is None else now
        row = {"subject": person.subject, "name": person.name, "email": person.email,
               "created_at": now, "last_login_at": now}
        insert = upsert(self.store, people_table).values(row)
        with self._begin() as conn:
            conn.execute(insert.on_conflict_do_update(
                index_elements=[people_table.c.subject],
                set_={"name": person.name, "email": person.email, "last_login_at": now}))

    def person(self, subject: str) -> Person | None:
        with self._begin() as conn:
            row = conn.execute(sa.select(people_table).where(
                people_table.c.subject == subject)).first()
        return None if row is None else Person(row.subject, row.name, row.email)

    # API tokens --------------------------------------------------------------------------------

    def create_token(self, person: Person, name: str,
                     now: float | None = None) -> tuple[ApiToken, str]:
        """A new token for ``person``: its record and the token (shown once, kept nowhere)."""
        now = time.time() if now is None else now
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        record = ApiToken(secrets.token_hex(8), name, now, None, None)
        with self._begin() as conn:
            live = conn.execute(sa.select(sa.func.count()).select_from(tokens_table).where(
                tokens_table.c.subject == person.subject,
                tokens_table.c.revoked_at.is_(None))).scalar()
            if int(live or 0) >= MAX_TOKENS:
                raise ValueError(f"at most {MAX_TOKENS} live tokens per person: revoke one "
                                 "first")
            conn.execute(tokens_table.insert(), {
                "id": record.id, "subject": person.subject, "name": name,
                "token_key": token_key(token), "created_at": now})
        return record, token

    def tokens(self, subject: str) -> list[ApiToken]:
        with self._begin() as conn:
            rows = conn.execute(sa.select(tokens_table).where(
                tokens_table.c.subject == subject).order_by(tokens_table.c.created_at.desc(),
                                                           tokens_table.c.id)).all()
        return [ApiToken(r.id, r.name, float(r.created_at),
                         None if r.last_used_at is None else float(r.last_used_at),
                         None if r.revoked_at is None else float(r.revoked_at)) for r in rows]

    def revoke_token(self, subject: str, token_id: str, now: float | None = None) -> bool:
        """Revoke one of ``subject``'s live tokens; whether there was one."""
        now = time.time() if now is None else now
        with self._begin() as conn:
            done = conn.execute(tokens_table.update().where(
                tokens_table.c.id == token_id, tokens_table.c.subject == subject,
                tokens_table.c.revoked_at.is_(None)).values(revoked_at=now)
                .returning(tokens_table.c.id)).first()
        return done is not None

    def token_owner(self, token: str, now: float | None = None) -> Person | None:
        """The person a live token belongs to (and its use noted), or None.

        Looked up by the token's SHA-256, then compared in constant time with
        :func:`hmac.compare_digest`, so neither the index nor the comparison tells how much of
        a guess was right."""
        if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            return None
        key = token_key(token)
        with self._begin() as conn:
            row = conn.execute(sa.select(tokens_table.c.id, tokens_table.c.token_key,
                                         tokens_table.c.subject, tokens_table.c.revoked_at)
                               .where(tokens_table.c.token_key == key)).first()
            if row is None or row.revoked_at is not None \
                    or not hmac.compare_digest(row.token_key, key):
                return None
            conn.execute(tokens_table.update().where(tokens_table.c.id == row.id)
                         .values(last_used_at=time.time() if now is None else now))
            person = conn.execute(sa.select(people_table).where(
                people_table.c.subject == row.subject)).first()
        if person is None:
            return Person(row.subject)
        return Person(person.subject, person.name, person.email)

    # what people own ---------------------------------------------------------------------------

    def own_upload(self, subject: str, handle: str, name: str,
                   now: float | None = None) -> None:
        row = {"handle": handle, "subject": subject, "name": name,
               "created_at": time.time() if now is None else now}
        with self._begin() as conn:
            conn.execute(upsert(self.store, uploads_table).values(row).on_conflict_do_nothing())

    def uploads(self, subject: str) -> list[dict[str, Any]]:
        """The person's upload handles (newest first), as stored."""
        with self._begin() as conn:
            rows = conn.execute(sa.select(uploads_table).where(
                uploads_table.c.subject == subject).order_by(
                    uploads_table.c.created_at.desc())).all()
        return [dict(r._mapping) for r in rows]

    def upload_owner(self, handle: str) -> str | None:
        with self._begin() as conn:
            return conn.execute(sa.select(uploads_table.c.subject).where(
                uploads_table.c.handle == handle)).scalar()

    def forget_uploads(self, handles: list[str]) -> None:
        if handles:
            with self._begin() as conn:
                conn.execute(uploads_table.delete().where(uploads_table.c.handle.in_(handles)))

    def own_analysis(self, subject: str, analysis_id: str, *, require_login: bool = False,
                     now: float | None = None) -> None:
        row = {"analysis_id": analysis_id, "subject": subject, "require_login": require_login,
               "created_at": time.time() if now is None else now}
        with self._begin() as conn:
            conn.execute(upsert(self.store, owned_analyses_table).values(row)
                         .on_conflict_do_nothing())

    def analysis_ids(self, subject: str) -> list[tuple[str, bool]]:
        """``(analysis id, require_login)`` of the person's analyses, newest first."""
        with self._begin() as conn:
            rows = conn.execute(sa.select(owned_analyses_table.c.analysis_id,
                                          owned_analyses_table.c.require_login)
                                .where(owned_analyses_table.c.subject == subject)
                                .order_by(owned_analyses_table.c.created_at.desc())).all()
        return [(r.analysis_id, bool(r.require_login)) for r in rows]

    def analysis_owner(self, analysis_id: str) -> tuple[str, bool] | None:
        """``(subject, require_login)`` of an owned analysis; None when nobody owns it."""
        with self._begin() as conn:
            row = conn.execute(sa.select(owned_analyses_table.c.subject,
                                         owned_analyses_table.c.require_login)
                               .where(owned_analyses_table.c.analysis_id == analysis_id)).first()
        return None if row is None else (row.subject, bool(row.require_login))

    def set_require_login(self, analysis_id: str, value: bool) -> None:
        with self._begin() as conn:
            conn.execute(owned_analyses_table.update().where(
                owned_analyses_table.c.analysis_id == analysis_id)
                .values(require_login=bool(value)))

    def forget_analyses(self, analysis_ids: list[str]) -> None:
        if analysis_ids:
            with self._begin() as conn:
                conn.execute(owned_analyses_table.delete().where(
                    owned_analyses_table.c.analysis_id.in_(analysis_ids)))

    # the audit trail ---------------------------------------------------------------------------

    def audit(self, subject: str, actor: str, action: str, target: str,
              detail: Mapping[str, Any] | str = "", now: float | None = None) -> None:
        """Record one change to ``subject``'s things."""
        text = detail if isinstance(detail, str) else json.dumps(dict(detail), sort_keys=True)
        with self._begin() as conn:
            conn.execute(audit_table.insert(), {
                "subject": subject, "actor": actor[:300], "action": action[:40],
                "target": target[:300], "detail": text[:2000],
                "at": time.time() if now is None else now})

    def trail(self, subject: str, limit: int = 200) -> list[AuditEntry]:
        """``subject``'s audit trail, newest first."""
        with self._begin() as conn:
            rows = conn.execute(sa.select(audit_table).where(audit_table.c.subject == subject)
                                .order_by(audit_table.c.at.desc(), audit_table.c.id.desc())
                                .limit(limit)).all()
        return [AuditEntry(r.actor, r.action, r.target, r.detail, float(r.at)) for r in rows]
