"""Saved analyses behind unguessable links: tokens, the saved view, and the rules of sharing.

An analysis is a stored data set plus the view its uploader settled on (the Explore page's URL
state). Saving one hands out two secrets:

* the **share token**, in the read-only link ``/s/<token>``: whoever has it sees the view and may
  move the sliders (a what-if that saves nothing);
* the **manage token**, in ``/manage/<token>`` and as ``Authorization: Bearer <token>`` for the
  API: rename, set an expiry, replace or revoke the read-only link, delete. Only its SHA-256
  is stored, and it is shown once, to the uploader; the read-only page never carries it.

Replacing the read-only link (a new share token) or revoking it (none) keeps the analysis; the
old link, and the read-only handle its pages read the data through, answer as gone at once.
Each opening of the link (a page of it, or its JSON) counts: a counter and the time of the
last one, nothing about who opened it; the manage page shows them.

Tokens are 192 random bits from :mod:`secrets` (URL-safe base64, 32 characters). They are looked
up by their SHA-256, and a bearer token is checked with :func:`hmac.compare_digest`, so neither
the database index nor the comparison leaks how much of a guess was right.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import math
import re
import secrets
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from costdash.errors import CostdashError, ParameterError
from costdash.view import VIEW_FIELDS, View
from dashboard.storage import AnalysisRecord, DatasetNotFound, DatasetRecord, Store

__all__ = [
    "VIEW_KEYS",
    "AnalysisNotFound",
    "DataScope",
    "NewAnalysis",
    "NotAuthorized",
    "ShareService",
    "normalise_view",
    "saved_view",
    "share_reference",
    "token_key",
    "view_to_query",
]

TOKEN_BYTES = 24
"""192 bits: far beyond the issue's 128-bit floor, and 32 URL-safe characters."""

_TOKEN_PATTERN = re.compile(r"^[A-Za-z0-9_-]{32}$")
_ID_PATTERN = re.compile(r"^[0-9a-f]{16}$")
MAX_NAME = 200
MAX_EXPIRY_DAYS = 3650
MIN_EXPIRY_DAYS = 0.01
"""About a quarter of an hour: a shorter expiry would hand out a link that is dead on arrival."""
DAY = 86400.0


class AnalysisNotFound(CostdashError, KeyError):
    """No live analysis answers to this token or id (unknown, deleted or expired)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "analysis not found"


class NotAuthorized(CostdashError):
    """A manage action without the analysis's manage token (``missing``: none was given)."""

    def __init__(self, message: str, *, missing: bool = False):
        super().__init__(message)
        self.missing = missing


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_key(token: str) -> str:
    """The stored form of a token (its SHA-256, hex)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def looks_like_token(value: object) -> bool:
    return isinstance(value, str) and bool(_TOKEN_PATTERN.match(value))


_LOOKUPS = "costdash.lookups"


def request_lookups() -> dict[Any, Any] | None:
    """What the request being served has already looked up in the store (a link's analysis,
    a handle found live), or None outside a request.

    A viewer's page makes each of its requests look the same link up two or three times (the
    guard of ``/s/<token>`` and the page's preview; a callback's scope and then the liveness of
    its handle): one answer per request is enough, and each lookup is a database round trip.
    Kept in the request's WSGI environment, so it never outlives the request (an app context a
    test keeps open spans several requests; the environment does not), and dropped by every
    change :class:`ShareService` makes.
    """
    import flask

    if not flask.has_request_context():
        return None
    return flask.request.environ.setdefault(_LOOKUPS, {})


def _forget_lookups() -> None:
    lookups = request_lookups()
    if lookups is not None:
        lookups.clear()


# --- the saved view ----------------------------------------------------------------------------
#
# One view schema (costdash.view): a saved view is View.to_json() without the data set (the
# analysis has its own), so it keeps whatever the page had set (other pages' fields too).

VIEW_KEYS = tuple(f.name for f in VIEW_FIELDS if f.name != "data")
"""The view fields a saved view keeps: every field but the data set."""


def normalise_view(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A saved view from form fields, query parameters or JSON: checked, typed, nothing extra.

    :meth:`costdash.view.View.parse` (strict) of every field but ``data``, written back with
    :meth:`~costdash.view.View.to_json`: numbers may come as text, ``models`` as a list or
    comma-separated text; unknown keys are dropped (a URL carries others).

    Raises
    ------
    ParameterError
        A value out of its bounds or not a number, naming the field and its bounds.
    """
    return View.parse(raw, only=VIEW_KEYS).to_json()


def saved_view(saved: Mapping[str, Any]) -> View:
    """The :class:`~costdash.view.View` of a stored view.

    Lenient on purpose: it was checked when it was saved, and a link saved before a bound was
    tightened must still open (a value now out of bounds is left at its default).
    """
    view, _problems = View.parse_lenient(saved, only=VIEW_KEYS)
    return view


def view_to_query(view: Mapping[str, Any]) -> dict[str, list[str]]:
    """The saved view as Explore's URL query (the shape ``parse_qs`` gives)."""
    return {key: [text] for key, text in saved_view(view).to_query().items()}


# --- what a page's data reference grants ------------------------------------------------------
#
# A page keeps its data set in the browser as a *reference*: the owner's upload handle, or,
# inside a read link (/s/<token>), ``share:<token>``: the capability the viewer already holds.
# The read-only handle behind a link never reaches the viewer's browser; ShareService.scope is
# the one place that turns a reference into the handle the server reads through.

SHARE_PREFIX = "share:"


READ_LINK_PAGES_ONLY = ("This data was opened through a read-only link: it shows on the link's "
                        "own pages only (Explore, Curves, Threshold choice, Production, "
                        "Segments).")
"""What the pages a read link does not grant (Compare, Confidence, Folds) say to its handle."""


def share_reference(token: str) -> str:
    """The data reference the pages of the read link ``/s/<token>`` keep in the browser."""
    return SHARE_PREFIX + token


@dataclass(frozen=True)
class DataScope:
    """What a page's data reference grants, resolved on the server.

    Attributes
    ----------
    reference : str
        What the browser holds (an upload handle, or ``share:<token>``).
    data_id : str
        The handle the server reads the data through; for a read link its read-only handle,
        which is never sent back to the browser.
    read_only : bool
        Reached through a read link (or a read-only handle): what-ifs answer from the thinned
        curves the link shows, never from the data's exact scores.
    classifiers : tuple of str or None
        The classifiers the reference may show (those the owner's saved view ticks); None: all.
    saved_pins : tuple of (str, float)
        The owner's saved pins (the owner shared them exactly as saved).
    """

    reference: str
    data_id: str
    read_only: bool = False
    classifiers: tuple[str, ...] | None = None
    saved_pins: tuple[tuple[str, float], ...] = ()

    def allowed(self, names: list[str]) -> list[str]:
        """``names`` (a data set's classifiers, in order) that this scope may show."""
        if self.classifiers is None:
            return list(names)
        granted = set(self.classifiers)
        return [n for n in names if n in granted]

    @property
    def revision(self) -> str:
        """A stable name of the data on screen for the figures' ``uirevision`` (no handle:
        a read link's figures name it by a digest of its reference)."""
        if not self.read_only:
            return self.data_id
        return "shared-" + hashlib.sha256(self.reference.encode()).hexdigest()[:16]


def _scope_of_view(reference: str, data_id: str, view: View | None) -> DataScope:
    if view is None:        # the analysis went meanwhile: nothing of it is granted
        return DataScope(reference, data_id, True, ())
    return DataScope(reference, data_id, True, tuple(view.models) if view.models else None,
                     tuple(view.pins or ()))


def _snapped_pins(pins: Any, scope: DataScope, view_model: Mapping[str, Any]) -> list:
    """``pins`` (``[[name, threshold], ...]``) of a read-only scope on the thinned curves of
    ``view_model`` (see :meth:`ShareService.page_ref`); the owner's saved pins stay."""
    grids = {c["name"]: sorted(t for t in c["roc"]["threshold"] if t is not None)
             for c in view_model.get("classifiers", [])}
    out = []
    for name, threshold in pins:
        grid = grids.get(name)
        if grid is None or (name, threshold) in scope.saved_pins:
            out.append([name, threshold])
            continue
        k = bisect.bisect_left(grid, threshold)
        out.append([name, grid[k] if k < len(grid) else sys.float_info.max])
    return out


# --- the service -------------------------------------------------------------------------------

@dataclass(frozen=True)
class NewAnalysis:
    """What saving returns: the record and the manage token (which exists nowhere else)."""

    record: AnalysisRecord
    manage_token: str


def _number(key: str, value: Any) -> float:
    """A finite number from text or JSON (the expiry: not a view field, so not the view's)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ParameterError(f"{key} must be a number, not {type(value).__name__}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{key} must be a number, not '{str(value)[:40]}'") from None
    if not math.isfinite(x):
        raise ParameterError(f"{key} must be finite, not {value}")
    return x


def expiry_from_days(days: Any, now: float) -> float | None:
    if days is None or (isinstance(days, str) and not days.strip()):
        return None
    d = _number("expires_in_days", days)
    if not MIN_EXPIRY_DAYS <= d <= MAX_EXPIRY_DAYS:
        raise ParameterError(f"expires_in_days must be between {MIN_EXPIRY_DAYS} and "
                             f"{MAX_EXPIRY_DAYS}, not {d:g}")
    return now + d * DAY


def clean_name(name: Any) -> str:
    if not isinstance(name, str):
        raise ParameterError(f"the name must be text, not {type(name).__name__}")
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in name).split())
    if not text:
        raise ParameterError("the name must not be empty")
    return text[:MAX_NAME]


class ShareService:
    """Saving, opening, renaming, expiring and deleting analyses (the rules; storage is below).

    Parameters
    ----------
    store : Store
        Where data sets and analyses live.
    forget_dataset : callable, optional
        Called with the id of each data set deleted, so cached results of it go too.
    """

    def __init__(self, store: Store, forget_dataset: Any = None):
        self.store = store
        self.forget_dataset = forget_dataset or (lambda _id: None)

    def create(self, dataset_id: str, *, name: str, view: Mapping[str, Any],
               expires_in_days: Any = None, now: float | None = None) -> NewAnalysis:
        """Save an analysis of the upload handle ``dataset_id``.

        The analysis gets a read-only handle of its own (its record's ``dataset_id``); a
        read-only handle cannot be shared again: only an upload's handle can.
        """
        _forget_lookups()
        now = time.time() if now is None else now
        upload = self.store.info(dataset_id)
        if upload is None:
            raise ParameterError(f"no data set with id '{dataset_id}' is stored here")
        if upload.read_only:
            raise ParameterError("this data was opened through a read-only link: only its "
                                 "uploader can share it")
        share, manage = new_token(), new_token()
        record = AnalysisRecord(
            id=secrets.token_hex(8), name=clean_name(name), dataset_id=dataset_id,
            view=normalise_view(view), share_token=share, manage_key=token_key(manage),
            created_at=now, expires_at=expiry_from_days(expires_in_days, now))
        try:
            stored = self.store.add_analysis(record, token_key(share))
        except DatasetNotFound as exc:  # deleted meanwhile
            raise ParameterError(str(exc)) from None
        self.purge_expired(now)
        return NewAnalysis(stored, manage)

    def open(self, share_token: str, now: float | None = None) -> AnalysisRecord:
        """The live analysis behind a read-only link; :class:`AnalysisNotFound` otherwise
        (:meth:`lookup`)."""
        record = self.lookup(share_token, now)
        if record is None:
            raise AnalysisNotFound("This link does not lead to a saved analysis: it was "
                                   "deleted, it expired, or it was mistyped.")
        return record

    def lookup(self, share_token: str, now: float | None = None) -> AnalysisRecord | None:
        """The live analysis behind a read-only link, or None (unknown, deleted, expired,
        replaced, revoked, mistyped).

        Looked up once per request (:func:`request_lookups`); its read-only handle is then
        known to be live for the rest of the request (``("live", handle)``).
        """
        lookups = request_lookups() if now is None else None
        record = lookups.get(("open", share_token)) if lookups is not None else None
        if record is None:
            record = (self.store.find_analysis(share_key=token_key(share_token))
                      if looks_like_token(share_token) else None)
        if record is None or record.expired(now):
            return None
        if lookups is not None:
            # A live, unexpired analysis's read-only handle is live (the store's read-time
            # rule, dashboard.storage.sql._live): its data set need not be looked up again.
            lookups[("open", share_token)] = record
            lookups[("live", record.dataset_id)] = True
        return record

    def scope(self, reference: object) -> DataScope:
        """What a page's data reference grants: the one resolver every page's callbacks use.

        ``share:<token>`` (a read link's pages) resolves to the analysis's read-only handle,
        read-only, limited to the classifiers its saved view shows; an upload handle to itself
        with everything; a read-only handle (the API's) to its analysis's scope.

        Raises
        ------
        AnalysisNotFound
            A share reference whose link is gone (deleted, expired, replaced, revoked).
        DatasetNotFound
            Anything else that names no live data set.
        """
        if isinstance(reference, str) and reference.startswith(SHARE_PREFIX):
            record = self.open(reference[len(SHARE_PREFIX):])
            return _scope_of_view(reference, record.dataset_id, saved_view(record.view))
        if not isinstance(reference, str) or not reference:
            raise DatasetNotFound("no data set is open")
        info = self.store.info(reference)
        if info is None:
            raise DatasetNotFound(f"no data set with id '{reference}' is stored here; "
                                  "upload the file again")
        if info.read_only:
            return _scope_of_view(reference, reference, self.saved_view_of(info))
        return DataScope(reference, reference)

    def read_only(self, reference: object) -> bool:
        """Whether ``reference`` reaches its data only through a read link (the pages the link
        does not grant refuse it, :data:`READ_LINK_PAGES_ONLY`); False when it names nothing
        (the page then says so its own way)."""
        try:
            return self.scope(reference).read_only
        except CostdashError:
            return False

    def page_ref(self, ref: Mapping[str, Any] | None,
                 view_model: Callable[[str], Mapping[str, Any]] | None = None
                 ) -> dict[str, Any] | None:
        """A page's reference store (``{"id": <reference>, "models": [...], ...}``) with
        ``id`` resolved to the handle to read (:meth:`scope`), ``models`` (and a ``view``'s)
        limited to what the scope grants, ``shared`` set for a read-only scope and
        ``revision`` (:attr:`DataScope.revision`) for the figures and ``home``, the address of
        Explore for its links (a read link's own page: its pages never link out of it); None
        when it resolves to nothing. For callbacks only: its ``id`` never goes back to the
        browser.

        With ``view_model`` (the cached view model of a handle, ``services.views.full``) a
        read-only scope's ``pins`` other than the owner's saved ones are moved to the thinned
        curve the link shows: each to the lowest threshold of that curve at or above it, so an
        exact computation at it gives a point of that curve and nothing between its points (a
        pin above them all flags nothing)."""
        if not ref or not ref.get("id"):
            return None
        try:
            scope = self.scope(ref["id"])
        except CostdashError:       # gone, never there, or the database is down
            return None
        reference = str(ref["id"])
        home = ("/s/" + reference[len(SHARE_PREFIX):] if reference.startswith(SHARE_PREFIX)
                else "/explore")
        out = {**ref, "id": scope.data_id, "shared": bool(ref.get("shared")) or scope.read_only,
               "revision": scope.revision, "home": home}
        if scope.classifiers is not None:
            granted = list(scope.classifiers)
            out["models"] = [m for m in ref.get("models") or () if m in granted] or granted
            if isinstance(ref.get("view"), Mapping):
                view = dict(ref["view"])
                view["models"] = [m for m in view.get("models") or () if m in granted] or granted
                out["view"] = view
        if scope.read_only and view_model is not None and ref.get("pins"):
            out["pins"] = _snapped_pins(ref["pins"], scope, view_model(scope.data_id))
        return out

    def saved_view_of(self, record: DatasetRecord) -> View | None:
        """The saved view a read-only handle belongs to (None for an upload's handle, or when
        its analysis went meanwhile)."""
        if not record.read_only:
            return None
        analysis = self.store.find_analysis(id=record.analysis_id)
        if analysis is None or analysis.expired():
            return None
        return View.parse_lenient(analysis.view)[0]

    def managed(self, manage_token: str, now: float | None = None) -> AnalysisRecord:
        """The analysis a manage link controls (expired ones too: they may be renewed)."""
        record = (self.store.find_analysis(manage_key=token_key(manage_token))
                  if looks_like_token(manage_token) else None)
        if record is None:
            raise AnalysisNotFound("This manage link does not lead to a saved analysis: it was "
                                   "deleted, or it was mistyped.")
        return record

    def authorize(self, analysis_id: str, authorization: str | None) -> AnalysisRecord:
        """The analysis ``analysis_id`` if ``authorization`` is ``Bearer <its manage token>``.

        Raises
        ------
        NotAuthorized
            No or malformed header (``missing``), or a token that is not this analysis's.
        AnalysisNotFound
            No analysis has this id.
        """
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise NotAuthorized("send the manage token as 'Authorization: Bearer <token>'",
                                missing=True)
        record = (self.store.find_analysis(id=analysis_id)
                  if _ID_PATTERN.match(analysis_id or "") else None)
        if record is None:
            raise AnalysisNotFound(f"no analysis with id '{analysis_id}'")
        if not hmac.compare_digest(token_key(token.strip()), record.manage_key):
            raise NotAuthorized("this token does not manage that analysis")
        return record

    def record_open(self, record: AnalysisRecord, now: float | None = None) -> None:
        """Count one opening of ``record``'s read-only link (a record :meth:`open` returned)."""
        self.store.record_open(token_key(record.share_token),
                               time.time() if now is None else now)

    def replace_link(self, record: AnalysisRecord) -> AnalysisRecord:
        """A new read-only link for the analysis; the old one, and the read-only handle its
        pages used, answer as gone from now on."""
        return self._relinked(record, new_token())

    def revoke_link(self, record: AnalysisRecord) -> AnalysisRecord:
        """Close the read-only link, keeping the analysis (:meth:`replace_link` opens a new
        one). The token is gone; the stored key is the hash of a random token nobody was
        given, so no token finds the analysis."""
        return self._relinked(record, "")

    def _relinked(self, record: AnalysisRecord, token: str) -> AnalysisRecord:
        _forget_lookups()
        done = self.store.replace_link(record.id, token, token_key(token or new_token()))
        if done is None:
            raise AnalysisNotFound(f"the analysis '{record.id}' was deleted meanwhile")
        new, old_handle = done
        self.forget_dataset(old_handle)
        return new

    def rename(self, record: AnalysisRecord, name: Any) -> AnalysisRecord:
        _forget_lookups()
        return self._updated(self.store.update_analysis(record.id, name=clean_name(name)), record)

    def set_expiry(self, record: AnalysisRecord, expires_in_days: Any,
                   now: float | None = None) -> AnalysisRecord:
        """Expire ``expires_in_days`` from now; None or empty clears the expiry."""
        _forget_lookups()
        now = time.time() if now is None else now
        return self._updated(self.store.update_analysis(
            record.id, expires_at=expiry_from_days(expires_in_days, now)), record)

    def delete(self, record: AnalysisRecord) -> None:
        """Delete the analysis and its read-only handle (and the data, unless an upload
        handle or another analysis still needs it)."""
        _forget_lookups()
        for handle in self.store.delete_analysis(record.id) or ():
            self.forget_dataset(handle)

    def purge_expired(self, now: float | None = None) -> int:
        """Delete expired analyses and the data sets only they used; returns how many data
        sets went. (Their links answer 404 from the moment they expire, purged or not: every
        read checks the expiry.)"""
        _forget_lookups()
        gone = self.store.purge_expired(now)
        for dataset_id in gone:
            self.forget_dataset(dataset_id)
        return len(gone)

    def sweep_unshared(self, retention_days: float, now: float | None = None) -> int:
        """Delete data sets no analysis uses, (last) uploaded more than ``retention_days``
        ago; 0 keeps them for ever. Returns how many went."""
        if not retention_days or retention_days <= 0:
            return 0
        _forget_lookups()
        now = time.time() if now is None else now
        gone = self.store.sweep_unshared(now - retention_days * DAY)
        for dataset_id in gone:
            self.forget_dataset(dataset_id)
        return len(gone)

    @staticmethod
    def _updated(record: AnalysisRecord | None, old: AnalysisRecord) -> AnalysisRecord:
        if record is None:
            raise AnalysisNotFound(f"the analysis '{old.id}' was deleted meanwhile")
        return record


def analysis_summary(record: AnalysisRecord, *, managed: bool = False) -> dict[str, Any]:
    """The API's description of an analysis (no secrets); ``managed`` (a reply to the manage
    token) adds how often its link was opened and when last."""
    out: dict[str, Any] = {"id": record.id, "name": record.name,
                           "dataset_id": record.dataset_id, "created_at": iso(record.created_at),
                           "expires_at": iso(record.expires_at)}
    if managed:
        out.update(opens=record.opens, last_opened_at=iso(record.last_opened_at))
    return out


def iso(t: float | None) -> str | None:
    if t is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
