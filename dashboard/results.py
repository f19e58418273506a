"""One door for derived results (issue 23): :class:`Results`, through which pages, API routes
and the report obtain what they show, cached under ONE key scheme that delete and expiry clear.

Keys
----
Every entry is stored under ::

    result:{kind}:{code_version}:{dataset_id}:{scope}:{digest}

* ``kind``: what it is (``choice-curves``, ``choice``, ``report``, ``decision``, ``csv``,
  ``curves-scores``, ``pin-point``, ``payload.<what>`` ...); no colon in it.
* ``code_version``: :func:`dashboard.services.code_version`, so web roles of two versions
  sharing one Redis never serve each other's results.
* ``dataset_id``: the handle asked through (an upload's or a read link's own handle).
* ``scope``: what the capability asking may see (:meth:`Results.scope`): ``full`` for an upload
  handle, ``thinned`` for a read-only handle: every classifier curve at most
  ``settings.max_roc_points`` points, and no exact score or count at a threshold the viewer
  chose (what-ifs answer from the thinned curves).
* ``digest``: of the JSON-able ``parts`` the result depends on and the settings that shape it.

Each key is noted in a per-kind, per-data-set index (``result-keys:{kind}:{dataset_id}``,
bounded: the oldest of more than :attr:`Results.entries_per_kind` go), and each kind in the data
set's index of kinds (``result-kinds:{dataset_id}``); :func:`forget_results` (called by
:meth:`dashboard.services.ViewModels.forget`, which delete, discard and expiry call) drops
every entry of every kind. A hit is also checked against the store (a deleted data set's
results are never sent, even when the cache could not be told).

The cache holds text (JSON, HTML, CSV), never pickled objects. Condition-free objects that are
costly to rebuild and too large to cache as text (the loaded ROC curves of a Threshold choice
base) are memoised in the process (:meth:`Results.memo`, at most :attr:`Results.memo_entries`
of each kind), and so are the decoded condition-free curves of a threshold choice (the newest
:attr:`Results.curves_entries`): a new condition then reads nothing from the cache.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

SCOPES = ("full", "thinned")
"""The scopes a capability gives (:meth:`Results.scope`)."""


def _index_key(kind: str, dataset_id: str) -> str:
    return f"result-keys:{kind}:{dataset_id}"


def _kinds_key(dataset_id: str) -> str:
    return f"result-kinds:{dataset_id}"


def forget_results(cache: Any, dataset_id: str) -> None:
    """Delete every result derived from ``dataset_id`` (every kind, every scope, every code
    version), and the indexes that named them."""
    kinds = json.loads(cache.get(_kinds_key(dataset_id)) or "[]")
    for kind in kinds:
        index = _index_key(kind, dataset_id)
        for key in json.loads(cache.get(index) or "[]"):
            cache.delete(key)
        cache.delete(index)
    cache.delete(_kinds_key(dataset_id))


class Results:
    """Derived results of stored data sets, computed once and shared through the cache.

    Parameters
    ----------
    store : Store
        Where the data sets live (:meth:`scope` reads a handle's record; hits are checked
        against it).
    cache : flask_caching.Cache
        The shared result cache (text values).
    settings : Settings
        ``max_roc_points`` is the thinned scope's bound and part of every key's digest.
    version : str
        The code version in every key (:func:`dashboard.services.code_version`).
    """

    entries_per_kind = 16
    """Entries of one kind kept per data set (the oldest go): a client asking for new
    conditions on every request would otherwise turn each into a new entry of up to a few MB."""

    memo_entries = 1
    """Condition-free objects of one kind (a memo key's first element) kept in this process
    (:meth:`memo`); 0 keeps none."""

    curves_entries = 4
    """Decoded condition-free curves of threshold choices kept in this process (kind
    ``choice-curves``: one per data set, classifiers, calibration, Beta and thinning; the
    page's, ``choice.json``'s and the report's differ in their thinning)."""

    def __init__(self, store: Any, cache: Any, settings: Any, version: str):
        self.store, self.cache, self.settings, self.version = store, cache, settings, version
        self._memo: OrderedDict[Hashable, Any] = OrderedDict()
        self._memo_lock = threading.Lock()

    # --- scope -------------------------------------------------------------------------------

    def scope(self, dataset_id: str) -> str:
        """``thinned`` for a read-only handle (:attr:`DatasetRecord.read_only`), else ``full``
        (an unknown id is ``full``: it finds nothing anyway)."""
        record = self.store.info(dataset_id)
        return "thinned" if record is not None and record.read_only else "full"

    def max_points(self, scope: str) -> int | None:
        """The bound on points per classifier curve of a scope (None: no bound)."""
        return self.settings.max_roc_points if scope == "thinned" else None

    # --- keys --------------------------------------------------------------------------------

    def key(self, kind: str, dataset_id: str, scope: str, parts: Any, *,
            version: str | None = None) -> str:
        """The cache key of one result (module docstring); ``version`` defaults to
        :attr:`version`."""
        if ":" in kind:
            raise ValueError(f"a result kind has no colon: {kind!r}")
        if scope not in SCOPES and scope != "page":
            raise ValueError(f"unknown scope {scope!r}")
        digest = hashlib.sha256(json.dumps(
            [parts, self.settings.max_roc_points, self.settings.max_cost_lines],
            sort_keys=True, default=str).encode()).hexdigest()[:32]
        return f"result:{kind}:{version or self.version}:{dataset_id}:{scope}:{digest}"

    def note(self, kind: str, dataset_id: str, key: str, *, bound: int | None = None) -> None:
        """Index ``key`` under its kind and data set, keeping the newest ``bound`` (default
        :attr:`entries_per_kind`); the kind goes into the data set's index of kinds."""
        bound = self.entries_per_kind if bound is None else bound
        kinds_key = _kinds_key(dataset_id)
        kinds = json.loads(self.cache.get(kinds_key) or "[]")
        if kind not in kinds:
            self.cache.set(kinds_key, json.dumps([*kinds, kind]))
        index = _index_key(kind, dataset_id)
        keys = [k for k in json.loads(self.cache.get(index) or "[]") if k != key] + [key]
        for old in keys[:-bound]:
            self.cache.delete(old)
        self.cache.set(index, json.dumps(keys[-bound:]))

    def keys_of(self, dataset_id: str) -> list[str]:
        """Every result key indexed for a data set (for tests and maintenance)."""
        out: list[str] = []
        for kind in json.loads(self.cache.get(_kinds_key(dataset_id)) or "[]"):
            out += json.loads(self.cache.get(_index_key(kind, dataset_id)) or "[]")
        return out

    def forget(self, dataset_id: str) -> None:
        """Drop every result of a data set (:func:`forget_results`) and its memoised objects."""
        forget_results(self.cache, dataset_id)
        with self._memo_lock:
            for k in [k for k in self._memo if isinstance(k, tuple) and dataset_id in k]:
                del self._memo[k]

    # --- get or compute ----------------------------------------------------------------------

    def text(self, kind: str, dataset_id: str, parts: Any, compute: Callable[[str], str], *,
             scope: str | None = None, checked: bool = True,
             keep: Callable[[str], bool] = lambda _text: True) -> str:
        """A result as text (JSON, HTML, CSV): cached, else ``compute(scope)`` and cached.

        Parameters
        ----------
        kind, dataset_id, parts
            What it is, of which data set, and what it depends on (JSON-able).
        compute : callable
            Called with the scope; returns the text.
        scope : str, optional
            Default :meth:`scope` of ``dataset_id``.
        checked : bool
            Check a hit against the store (pass False when the caller just checked it).
        keep : callable
            Whether to cache a computed text (an error answer is not).
        """
        scope = self.scope(dataset_id) if scope is None else scope
        text = self.peek(kind, dataset_id, parts, scope=scope, checked=checked)
        if text is not None:
            return text
        text = compute(scope)
        if keep(text):
            self.put(kind, dataset_id, parts, text, scope=scope)
        return text

    def peek(self, kind: str, dataset_id: str, parts: Any, *, scope: str,
             checked: bool = True) -> str | None:
        """The cached text of a result, or None (for callers that compute their misses
        together, e.g. one load of the data set for every pin missing; then :meth:`put`)."""
        text = self.cache.get(self.key(kind, dataset_id, scope, parts))
        if text is not None and (not checked or self.store.exists(dataset_id)):
            return text
        return None

    def put(self, kind: str, dataset_id: str, parts: Any, text: str, *, scope: str,
            bound: int | None = None) -> None:
        """Cache a result's text and index it (:meth:`note`, at most ``bound`` of its kind per
        data set, default :attr:`entries_per_kind`)."""
        key = self.key(kind, dataset_id, scope, parts)
        self.cache.set(key, text)
        self.note(kind, dataset_id, key, bound=bound)

    def json(self, kind: str, dataset_id: str, parts: Any, compute: Callable[[str], Any], *,
             scope: str | None = None, checked: bool = True) -> Any:
        """A JSON-able result, decoded: cached as its JSON text (see :meth:`text`)."""
        return json.loads(self.text(
            kind, dataset_id, parts,
            lambda s: json.dumps(compute(s), allow_nan=False, separators=(",", ":")),
            scope=scope, checked=checked))

    def memo(self, key: Hashable, compute: Callable[[], Any], *,
             entries: int | None = None) -> Any:
        """A condition-free object kept in this process (the newest ``entries``, default
        :attr:`memo_entries`, of its kind: the key's first element): what the per-condition
        part of a result is computed from. ``key`` must hold the data set id (as an element of
        a tuple) so that :meth:`forget` drops it."""
        found = self.memoised(key)
        if found is not None:
            return found
        value = compute()
        bound = self.memo_entries if entries is None else entries
        if bound > 0:
            kind = key[0] if isinstance(key, tuple) else None
            with self._memo_lock:
                self._memo[key] = value
                self._memo.move_to_end(key)
                same = [k for k in self._memo
                        if (k[0] if isinstance(k, tuple) else None) == kind]
                for old in same[:-bound]:
                    del self._memo[old]
        return value

    def memoised(self, key: Hashable) -> Any:
        """The object :meth:`memo` keeps under ``key`` (now the newest), or None."""
        with self._memo_lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return self._memo[key]
        return None

    # --- Threshold choice ----------------------------------------------------------------------

    def choice_base(self, dataset_id: str, scope: str, models: Any, calibration: str | None,
                    *, analysis: Any = None) -> Any:
        """The condition-free base of a threshold choice
        (:func:`costdash.choice_summary.choice_base`), memoised in this process per data set,
        scope, ticked classifiers and calibration; thinned for the thinned scope. ``analysis``:
        :meth:`choice_analysis` of the same arguments when already made (not made again)."""
        from costdash.choice_summary import choice_base

        models_key = None if not models else tuple(models)
        return self.memo(
            _base_key(dataset_id, scope, models, calibration),
            lambda: choice_base(None if analysis is not None else self.store.get(dataset_id),
                                models=models_key,
                                calibrate=calibration, max_roc_points=self.max_points(scope),
                                analysis=analysis))

    def choice_analysis(self, dataset_id: str, scope: str, models: Any, *,
                        dataset: Any = None) -> Any:
        """The analysis a threshold choice's base starts from
        (:func:`costdash.choice_summary.choice_analysis`: the ticked classifiers, thinned in the
        thinned scope), computed now, not kept: give it to :meth:`choice_base` (and, e.g., to a
        report built alongside, :func:`run_alongside`) so that it is made once. ``dataset``:
        the stored data set when already read (else read here)."""
        from costdash.choice_summary import choice_analysis

        return choice_analysis(self.store.get(dataset_id) if dataset is None else dataset,
                               models=None if not models else tuple(models),
                               max_roc_points=self.max_points(scope))

    def kept_choice_base(self, dataset_id: str, scope: str, models: Any,
                         calibration: str | None) -> Any:
        """The base :meth:`choice_base` keeps for these arguments, or None: read, never
        computed."""
        return self.memoised(_base_key(dataset_id, scope, models, calibration))

    def _choice_keys(self, dataset_id: str, view: Any, scope: str, max_points: int) -> tuple:
        """What :meth:`choice_text` keys its parts by: ``(points, models, beta, free_parts,
        curves_key, parts)``."""
        from costdash.choice_summary import view_beta

        cap = self.max_points(scope)
        points = max_points if cap is None else min(max_points, cap)
        models = list(view.models) if view.models else None
        beta = view_beta(view)
        free_parts = {"models": models, "calibration": view.calibration,
                      "beta": None if beta is None else list(beta), "max_points": points}
        curves_key = ("choice-curves", dataset_id, scope,
                      json.dumps(free_parts, sort_keys=True))
        relevant = {k: v for k, v in view.to_json().items() if k in CHOICE_FIELDS}
        return points, models, beta, free_parts, curves_key, {"view": relevant,
                                                              "max_points": points}

    def choice_ready(self, dataset_id: str, view: Any, scope: str, *, max_points: int) -> bool:
        """Whether :meth:`choice_text` of these arguments would compute no analysis: its base
        is kept in this process, or the view's summary and its curves are cached. Read, never
        computed (issue 23: a report asked first computes the choice alongside itself,
        :func:`run_alongside`)."""
        if self.kept_choice_base(dataset_id, scope, view.models, view.calibration) is not None:
            return True
        _, _, _, free_parts, curves_key, parts = self._choice_keys(dataset_id, view, scope,
                                                                   max_points)
        return (self.peek("choice", dataset_id, parts, scope=scope, checked=False) is not None
                and (self.memoised(curves_key) is not None
                     or self.peek("choice-curves", dataset_id, free_parts, scope=scope,
                                  checked=False) is not None))

    def choice_text(self, dataset_id: str, view: Any, *, max_points: int,
                    run: Callable[[], AbstractContextManager[Callable[[Callable[[], Any]], Any]]]
                    | None = None) -> str:
        """:func:`costdash.choice_summary.choice_summary_of_view` of a stored data set as JSON
        text, in the scope of the handle.

        Three results of one door: the base (:meth:`choice_base`, in the process), the
        condition-free curves (kind ``choice-curves``: per data set, classifiers, calibration,
        Beta and thinning; computed once and reused under every condition, pin and box) and
        the summary (kind ``choice``: per whole view), whose per-condition part is all a new
        condition computes (:func:`costdash.choice_summary.choice_at`). Each curve is thinned to
        ``max_points`` (at most ``max_roc_points`` in the thinned scope).

        Parameters
        ----------
        run : callable, optional
            How a miss is computed (issue 22, finding 7): ``run()`` is a context manager (e.g.
            a slot of the compute gate) that yields ``bounded``; ``bounded(fn)`` calls the
            zero-argument ``fn`` and returns its JSON-able value (e.g. in a child process with
            a deadline). A cached summary is answered before ``run`` is called, so it never
            takes a slot. Inside it the base is computed (or found) in this process and
            memoised; the condition-free curves, when not cached, and the condition's part
            through ``bounded``; only the condition's part (cached curves) here. ``fn`` writes
            nothing to the cache: what it computed is cached here. None: all in this process.

        Raises
        ------
        DatasetNotFound
            No such data set.
        ParameterError
            A bad calibration or a ticked classifier the data lacks.
        """
        from costdash.choice_summary import (choice_at, choice_curves, view_beta, view_options,
                                             view_pins)
        from dashboard.storage import DatasetNotFound

        record = self.store.info(dataset_id)
        if record is None:
            raise DatasetNotFound(f"no data set with id '{dataset_id}' is stored here")
        scope = "thinned" if record.read_only else "full"
        cap = self.max_points(scope)
        points, models, beta, free_parts, curves_key, parts = self._choice_keys(
            dataset_id, view, scope, max_points)

        def pack_of(text: str) -> dict:
            return self.memo(curves_key, lambda: json.loads(text), entries=self.curves_entries)

        def known_pack() -> dict | None:
            """The decoded curves: kept in this process, else from the cache (then kept)."""
            pack = self.memoised(curves_key)
            if pack is None:
                text = self.peek("choice-curves", dataset_id, free_parts, scope=scope,
                                 checked=False)
                pack = None if text is None else pack_of(text)
            return pack

        # The cache keeps a view's summary without its curves (``_marked``: a few 100 kB
        # at 50 classifiers, not the 16 MB of their points), spliced back from the curves.
        marked = self.peek("choice", dataset_id, parts, scope=scope, checked=False)
        pack = known_pack() if marked is not None else None
        if marked is not None and pack is not None:
            return _splice(marked, pack["texts"])

        def at(base: Any, pack: dict) -> str:
            ticked = {c.name for c in base.analysis.classifiers}
            pins = {k: v for k, v in view_pins(view).items() if k in ticked}
            out = choice_at(base, pack["light"], view.condition(record.prevalence), pins=pins,
                            max_points=points, **view_options(view))
            return _marked(out, pack["texts"])

        # The report's thinning of the same curves, when not kept yet: made with these (the
        # curves are the work, a thinning a few ms), so the first report after e.g.
        # choice.json computes none (issue 23).
        others = sorted({p if cap is None else min(p, cap) for p in SHARED_CHOICE_POINTS}
                        - {points})
        others = [p for p in others if p < points and self.peek(
            "choice-curves", dataset_id, {**free_parts, "max_points": p}, scope=scope,
            checked=False) is None]

        def compute(base: Any) -> dict[str, Any]:
            curves = choice_curves(base, beta=beta, max_points=points, also_points=others)
            texts = [json.dumps(_pack(c), allow_nan=False, separators=(",", ":"))
                     for c in (curves, *curves.pop("also", []))]
            return {"marked": at(base, json.loads(texts[0])), "curves": texts[0],
                    "also": texts[1:]}

        base = self.kept_choice_base(dataset_id, scope, models, view.calibration)
        pack = pack or known_pack()
        if base is not None and pack is not None:
            # Every condition-free part is in this process: only the condition's own part is
            # computed (tens of ms at 50 classifiers x 200,000 scores), without a slot.
            marked = at(base, pack)
        else:
            with (nullcontext(lambda fn: fn()) if run is None else run()) as bounded:
                # The base in this process (memoised: a new condition reuses it), then the
                # condition-free curves (when not cached) and the condition's part: in
                # ``bounded`` (a child process that inherits the base) when the curves are to
                # be computed, here when only the condition's part is.
                base = self.choice_base(dataset_id, scope, models, view.calibration)
                if pack is None:
                    done = bounded(lambda: compute(base))
                    self.put("choice-curves", dataset_id, free_parts, done["curves"],
                             scope=scope)
                    for p, text in zip(others, done.get("also", [])):
                        self.put("choice-curves", dataset_id, {**free_parts, "max_points": p},
                                 text, scope=scope)
                    pack, marked = pack_of(done["curves"]), done["marked"]
                else:
                    marked = at(base, pack)
        self.put("choice", dataset_id, parts, marked, scope=scope)
        return _splice(marked, pack["texts"])


def run_alongside(bounded: Callable[[Callable[[], Any]], Any],
                  child: Callable[[Callable[[], str]], Any], here: Callable[[], str]) -> Any:
    """``bounded(lambda: child(later))`` (a forked child process, e.g.
    :func:`dashboard.jobs.gate.run_bounded`) while ``here()`` runs in this process at the same
    time; in the child ``later()`` waits for ``here()``'s text and returns it (through a pipe).

    Issue 23: the first report of a data set whose threshold choice is not computed yet builds
    every other section while this process computes the choice (two cores), instead of one
    after the other. ``here`` may fork children of its own (it runs after the child started:
    no fork while another thread of this process computes). When ``here`` raises, the child
    is told (its ``later()`` raises), awaited, and ``here``'s exception raised.

    Returns
    -------
    Any
        ``bounded``'s value; its exception is raised here (after ``here`` ran).
    """
    import os
    import select
    import struct
    import threading

    started_r, started_w = os.pipe()
    value_r, value_w = os.pipe()
    box: dict[str, Any] = {}

    def in_child() -> Any:
        os.close(started_r)
        os.close(value_w)
        os.write(started_w, b"s")
        os.close(started_w)

        def read(n: int) -> bytes:
            out = bytearray()
            while len(out) < n:
                chunk = os.read(value_r, n - len(out))
                if not chunk:
                    raise RuntimeError("the value computed alongside never came")
                out += chunk
            return bytes(out)

        def later() -> str:
            head = read(9)
            body = read(struct.unpack("<Q", head[1:])[0]).decode()
            if head[:1] != b"v":
                raise RuntimeError("the value computed alongside failed")
            return body

        return child(later)

    def wait() -> None:
        try:
            box["value"] = bounded(in_child)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            box["error"] = exc

    def send(kind: bytes, body: bytes) -> None:
        data = kind + struct.pack("<Q", len(body)) + body
        while data:
            data = data[os.write(value_w, data):]

    thread = threading.Thread(target=wait, name="report-alongside", daemon=True)
    thread.start()
    try:
        # The fork has happened once the child writes (or the thread ended: it failed first).
        # poll, not select: a busy web process has descriptors past select()'s 1024 (a CI run
        # found "filedescriptor out of range in select()" as a 500 from report.html).
        started = select.poll()
        started.register(started_r, select.POLLIN)
        while thread.is_alive() and not started.poll(50):
            pass
        for fd in (started_r, started_w, value_r):
            os.close(fd)
        try:
            text = here()
        except BaseException:
            try:
                send(b"e", b"")
            except OSError:
                pass  # the child has ended
            raise
        try:
            send(b"v", text.encode())
        except BrokenPipeError:
            pass  # the child ended without reading it: its error is raised below
    finally:
        os.close(value_w)
        thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


SHARED_CHOICE_POINTS = (400,)
"""Thinnings of the condition-free choice curves (kind ``choice-curves``) made along with a
larger one when not kept yet: the report's (``dashboard.api.REPORT_CHOICE_POINTS``), so that
a report after the Threshold choice page or ``choice.json`` reuses their curves."""


CHOICE_FIELDS = ("models", "p_pos", "cost_fn", "cost_fp", "cost_tp", "cost_tn", "volume", "unit",
                 "sens_p", "sens_fn", "sens_fp", "pins", "calibration", "beta_a", "beta_b")
"""The view fields a threshold choice depends on (its key)."""


def _pack(curves: dict) -> dict:
    """The condition-free curves as the cache keeps them: ``light``, the curves with each
    threshold-choice curve cut to its expected loss (all :func:`choice_at` reads of them), and
    ``texts``, each classifier's curves as JSON text, spliced back by :func:`_splice`: a new
    condition then encodes only its own small part, not 100,000s of curve points again."""
    light = {**curves, "classifiers": []}
    texts = []
    for entry in curves["classifiers"]:
        tc = entry["threshold_choice"]
        texts.append({m: json.dumps(v, allow_nan=False, separators=(",", ":"))
                      for m, v in tc.items()})
        light["classifiers"].append({**entry, "threshold_choice": {
            m: None if v is None else {"expected_loss": v["expected_loss"]}
            for m, v in tc.items()}})
    return {"light": light, "texts": texts}


def _base_key(dataset_id: str, scope: str, models: Any, calibration: str | None) -> tuple:
    """The memo key of a threshold choice's base (:meth:`Results.choice_base`)."""
    return ("choice-base", dataset_id, scope, None if not models else tuple(models), calibration)


def _marked(summary: dict, texts: list[dict[str, str]]) -> str:
    """The JSON text of ``summary`` (made from :func:`_pack`'s ``light`` curves) with a marker
    where each classifier's curves go, after a first line with the markers' nonce (it marks
    nothing a user could have written): what the cache keeps of a view's summary."""
    import secrets

    nonce = secrets.token_hex(8)
    for i, entry in enumerate(summary["classifiers"]):
        entry["threshold_choice"] = {**entry["threshold_choice"],
                                     **{m: f"@@{nonce}-{i}-{m}@@" for m in texts[i]}}
    return nonce + "\n" + json.dumps(summary, allow_nan=False, separators=(",", ":"))


def _splice(marked: str, texts: list[dict[str, str]]) -> str:
    """The JSON text of a :func:`_marked` summary with each classifier's curves spliced back
    from ``texts``: the same text as encoding the whole summary."""
    import re

    nonce, light = marked.split("\n", 1)
    pieces = re.split(f'"@@{nonce}-([0-9]+)-([a-z_]+)@@"', light)
    out = []
    for k in range(0, len(pieces) - 1, 3):  # text, classifier, method, ..., text
        out += [pieces[k], texts[int(pieces[k + 1])][pieces[k + 2]]]
    out.append(pieces[-1])
    return "".join(out)


# --- Segments (issue 28) ---------------------------------------------------------------------------

SEGMENT_FIELDS = ("models", "p_pos", "cost_fn", "cost_fp", "cost_tp", "cost_tn")
"""The view fields a policy per segment depends on (its key)."""


def segments_result(results: Results, dataset_id: str, view: Any, *,
                    run: Callable[[], AbstractContextManager[Callable[[Callable[[], Any]], Any]]]
                    | None = None) -> dict[str, Any]:
    """The choice per segment of a stored data set at the view's conditions (kind
    ``segments``): :func:`costdash.segments.segment_policy` over the data set's segment column,
    each segment at its prevalence and the view's costs, beside the shared choice (the one the
    view's conditions make on every row).

    Returns ``{"segment_column": None}`` for a data set without segments, ``{"segment_column",
    "error"}`` when the policy cannot be made (a segment with one class), else
    ``{"segment_column", "shared": {"classifier", "threshold", "expected_cost"},
    "segments": [...] (:func:`costdash.segments.segment_policy_to_dict`), "saving_per_case"}``.
    The same in both scopes: a segment's choice is a hull vertex (what Explore shows a read
    link too), never a threshold the viewer typed.

    Parameters
    ----------
    run : callable, optional
        How a miss is computed, as for :meth:`Results.choice_text` (a slot of the compute gate
        and a child process with a deadline); a cached result never takes a slot.

    Raises
    ------
    DatasetNotFound
        No such data set.
    """
    from costdash.errors import CostdashError as _CostdashError

    relevant = {k: v for k, v in view.to_json().items() if k in SEGMENT_FIELDS}

    def compute() -> dict[str, Any]:
        from costdash.hull import ALL_POSITIVE
        from costdash.roc import roc_of
        from costdash.segments import segment_policy, segment_policy_to_dict

        dataset = results.store.get(dataset_id)
        if dataset.segments is None:
            return {"segment_column": None}
        column = dataset.segments.column
        condition = view.condition(dataset.prevalence)
        models = list(view.models) if view.models else None
        try:
            policy = segment_policy(dataset, dataset.segments.values, condition, models=models)
        except _CostdashError as exc:
            return {"segment_column": column, "error": str(exc)}
        # The shared choice's cost on every row: its one ROC point (not a second analysis).
        name, threshold = policy.shared_classifier, policy.shared_threshold
        scored = {c.name: c for c in dataset.scored}
        fpr = tpr = 1.0 if name == ALL_POSITIVE else 0.0
        if name in scored and threshold is not None:
            roc = roc_of(scored[name])
            i = roc.point_at_threshold(threshold)
            fpr, tpr = float(roc.fpr[i]), float(roc.tpr[i])
        shared_cost = condition.expected_cost(condition.normalized_cost(fpr, tpr))
        return {"segment_column": column,
                "shared": {"classifier": name, "threshold": threshold,
                           "expected_cost": shared_cost},
                "segments": segment_policy_to_dict(policy),
                "saving_per_case": policy.saving_per_case}

    def gated(_scope: str) -> dict[str, Any]:
        if run is None:
            return compute()
        with run() as bounded:
            return bounded(compute)

    return results.json("segments", dataset_id, {"view": relevant}, gated)


# --- issue 28: money against the threshold, top fractions, calibrate then choose ----------------

THRESHOLD_MONEY_VERSION = 1
THRESHOLD_MONEY_POINTS = 2000
"""Points of a money curve kept for drawing (evenly spread, the cheapest and each pin kept)."""


def _threshold_money_roc(results: Results, views: Any, dataset_id: str, scope: str,
                         model: str) -> Any:
    """The ROC curve a money curve is read off: exact in the full scope, the thinned one a read
    link shows in the thinned scope (no exact count at a threshold the viewer chose)."""
    from costdash.errors import ParameterError
    from costdash.roc import roc_of
    from dashboard.viewmodel import thinned_roc

    if scope == "thinned":
        entries = {c["name"]: c for c in views.full(dataset_id)["classifiers"]}
        if model not in entries:
            raise ParameterError(f"no classifier named {model!r} in this data set")
        return thinned_roc(entries[model])
    try:
        return roc_of(results.store.get(dataset_id).classifier(model))
    except KeyError:
        raise ParameterError(f"no classifier named {model!r} in this data set") from None


def _finite_list(values: Any) -> list[float | None]:
    import math

    import numpy as np

    return [v if math.isfinite(v) else None for v in np.asarray(values, dtype=float).tolist()]


def threshold_money_result(results: Results, views: Any, dataset_id: str, model: str,
                           condition: Any, share: float | None, pins: list[float]
                           ) -> dict[str, Any]:
    """Money against the threshold of ``model`` at ``condition``
    (:func:`costdash.threshold_money.cost_by_threshold`; at most
    :data:`THRESHOLD_MONEY_POINTS` points, the cheapest and the ``pins`` kept; ``cheapest`` and
    ``pins`` with their expected costs per case) and its
    top-fraction table (:func:`~costdash.threshold_money.top_fraction_table`: deciles and the
    capacity's ``share`` of cases, whose row is ``table["capacity"]``), kind
    ``threshold-money``; thinned in the thinned scope.

    Raises
    ------
    DatasetNotFound, ParameterError
        No such data set, or no such classifier.
    """
    def compute(scope: str) -> dict[str, Any]:
        import numpy as np

        from costdash.roc import thin_indices
        from costdash.threshold_money import DECILES, cost_by_threshold, top_fraction_table

        roc = _threshold_money_roc(results, views, dataset_id, scope, model)
        curve = cost_by_threshold(roc, condition)
        keep = {curve.best, *(curve.at(t) for t in pins)}
        idx = np.union1d(thin_indices(curve.threshold.size, THRESHOLD_MONEY_POINTS),
                         np.fromiter(keep, dtype=np.int64))
        inside = share is not None and 0 < share < 1
        fractions = sorted({*DECILES, *([share] if inside else [])})
        table = top_fraction_table(roc, fractions, condition=condition)
        return {"classifier": model, "best": int(np.searchsorted(idx, curve.best)),
                "cheapest": {"threshold": curve.best_threshold,
                             "expected_cost": curve.best_expected_cost},
                "pins": [{"threshold": t, "expected_cost": float(curve.expected_cost[curve.at(t)])}
                         for t in pins],
                "threshold": _finite_list(curve.threshold[idx]), "fpr": curve.fpr[idx].tolist(),
                "tpr": curve.tpr[idx].tolist(),
                "normalized_cost": curve.normalized_cost[idx].tolist(),
                "expected_cost": curve.expected_cost[idx].tolist(),
                "table": {"fraction": table.fraction.tolist(),
                          "threshold": _finite_list(table.threshold),
                          "flagged": table.flagged.tolist(),
                          "positives": table.positives.tolist(),
                          "precision": _finite_list(table.precision),
                          "lift": _finite_list(table.lift),
                          "recall": _finite_list(table.recall),
                          "expected_cost": _finite_list(table.expected_cost),
                          "n": table.n, "n_pos": table.n_pos,
                          "capacity": fractions.index(share) if inside else None}}

    c = condition
    return results.json(
        "threshold-money", dataset_id,
        {"version": THRESHOLD_MONEY_VERSION + 1, "model": model, "share": share,
         "pins": sorted(pins), "condition": [c.p_pos, c.cost_fn, c.cost_fp, c.cost_tp, c.cost_tn]},
        compute)


def calibrated_roc_result(results: Results, dataset_id: str, model: str, method: str
                          ) -> dict[str, Any]:
    """The ROC curve of ``model``'s scores calibrated by ``method`` cross-fitted on folds
    (:func:`costdash.calibration.calibrate_classifier`) as ``{"tp", "fp", "threshold", "n_pos",
    "n_neg"}``, or ``{"error"}`` (kind ``calibrated-roc``: computed once per data set,
    classifier and method, reused under every condition); thinned in the thinned scope."""
    def compute(scope: str) -> dict[str, Any]:
        from costdash.calibration import calibrate_classifier
        from costdash.dataset import CountedClassifier
        from costdash.errors import CostdashError

        try:
            c = results.store.get(dataset_id).classifier(model)
        except KeyError:
            return {"error": f"no classifier named {model!r} in this data set"}
        if isinstance(c, CountedClassifier):
            return {"error": f"{model} was given as confusion matrices: there are no scores "
                             "to calibrate."}
        # The maps a report kept (calibration_maps_texts) give the same curve without fitting.
        maps = results.peek("calibration-maps", dataset_id, _calibrated_parts(model, method),
                            scope=scope, checked=False)
        try:
            roc = calibrate_classifier(c, method,
                                       maps=None if maps is None else json.loads(maps)["maps"])
        except CostdashError as exc:
            return {"error": str(exc)}
        return _calibrated_entry(roc, results.max_points(scope))

    return results.json("calibrated-roc", dataset_id, _calibrated_parts(model, method), compute)


def _calibrated_entry(roc: Any, cap: int | None) -> dict[str, Any]:
    """A calibrated curve (kind ``calibrated-roc``) as cached: thinned to ``cap`` points."""
    from costdash.roc import thin_indices

    keep = thin_indices(roc.size, cap) if cap is not None else slice(None)
    return {"tp": roc.tp[keep].tolist(), "fp": roc.fp[keep].tolist(),
            "threshold": _finite_list(roc.threshold[keep]),
            "n_pos": int(roc.n_pos), "n_neg": int(roc.n_neg)}


def calibrated_entry_texts(fitted: dict, cap: int | None) -> list[list[str]]:
    """The cache texts of calibrations fitted elsewhere (:func:`dashboard.report.build_report`'s
    ``fitted``: ``{(model, method): {"maps": the fitted maps}, a RocCurve or refusal text}``)
    in a scope of ``cap`` points, as ``[[model, method, text, kind], ...]`` (JSON-able, so a
    report's child process hands them back: :func:`keep_calibrated`): a refusal or a curve as
    :func:`calibrated_roc_result` caches it (kind ``calibrated-roc``); the maps of a cross-fit
    (:func:`costdash.calibration.calibrate_classifier`'s ``maps_out``: a few hundred numbers
    where the whole curve of 200,000 scores took ~0.3 s to write) as kind
    ``calibration-maps``, from which the same curve is made again without fitting."""
    out = []
    for (model, method), found in fitted.items():
        if isinstance(found, dict):
            out.append([model, method, json.dumps(found, separators=(",", ":")),
                        "calibration-maps"])
            continue
        entry = {"error": found} if isinstance(found, str) else _calibrated_entry(found, cap)
        out.append([model, method, json.dumps(entry, allow_nan=False, separators=(",", ":")),
                    "calibrated-roc"])
    return out


def keep_calibrated(results: Results, dataset_id: str, texts: list[list[str]],
                    scope: str) -> None:
    """Cache :func:`calibrated_entry_texts` (made with ``results.max_points(scope)``) under
    their kinds (``calibrated-roc`` or ``calibration-maps``): they do not depend on the view,
    so the next report at other conditions (:func:`calibrated_roc_texts`) and the Curves page
    fit them no more (issue 23)."""
    for model, method, text, *kind in texts:
        results.put(kind[0] if kind else "calibrated-roc", dataset_id,
                    _calibrated_parts(model, method), text, scope=scope)


def _calibrated_parts(model: str, method: str) -> dict[str, Any]:
    """What a calibrated curve (kind ``calibrated-roc``) is keyed by."""
    return {"version": THRESHOLD_MONEY_VERSION, "model": model, "method": method}


def _roc_of_entry(model: str, r: dict[str, Any]) -> Any:
    """The :class:`~costdash.roc.RocCurve` of a :func:`calibrated_roc_result` without error."""
    import numpy as np

    from costdash.roc import RocCurve

    return RocCurve(name=model, tp=np.asarray(r["tp"], dtype=np.int64),
                    fp=np.asarray(r["fp"], dtype=np.int64),
                    threshold=np.array([np.nan if t is None else t for t in r["threshold"]],
                                       dtype=np.float64),
                    n_pos=int(r["n_pos"]), n_neg=int(r["n_neg"]))


def calibrated_roc_texts(results: Results, dataset_id: str, models: list[str],
                         scope: str) -> Callable[[str, str], Any]:
    """The calibrated curves of ``models`` already cached in ``scope``
    (:func:`calibrated_roc_result`: the whole curve in the full scope, thinned to
    ``max_roc_points`` in the thinned one), read now and decoded when asked:
    ``lookup(model, method)`` is the :class:`~costdash.roc.RocCurve`, the refusal's text,
    ``{"maps": ...}`` (the maps a report's cross-fit kept, kind ``calibration-maps``: the curve
    made from them without fitting) or None (not computed yet). Nothing is computed: the report
    (:func:`dashboard.api.report_inputs`) reuses what the Curves page computed, and
    computes the rest itself.
    """
    from costdash.calibration import CALIBRATIONS

    texts = {}
    for model in models:
        for method in CALIBRATIONS:
            for kind in ("calibrated-roc", "calibration-maps"):
                text = results.peek(kind, dataset_id, _calibrated_parts(model, method),
                                    scope=scope, checked=False)
                if text is not None:
                    texts[model, method] = text
                    break

    def lookup(model: str, method: str) -> Any:
        text = texts.get((model, method))
        if text is None:
            return None
        r = json.loads(text)
        if "maps" in r:
            return r  # the report makes the curve from them (dashboard.report.curves)
        return r["error"] if "error" in r else _roc_of_entry(model, r)

    return lookup


def calibrate_choose_result(results: Results, views: Any, dataset_id: str, model: str,
                            condition: Any) -> dict[str, Any]:
    """:func:`costdash.calibrated_choice.choose_after_calibration` of ``model`` at
    ``condition`` as ``{"tau", "prevalence", "rows": [{"method", "threshold", "flagged",
    "expected_cost", "regret", "refused"}]}`` (expected costs per case), or ``{"error"}``
    (kind ``calibrate-choose``): the scores' curve exact in the full scope, the thinned one a
    read link shows in the thinned scope; the calibrated curves of
    :func:`calibrated_roc_result`."""
    def compute(scope: str) -> dict[str, Any]:
        from costdash.calibrated_choice import choose_after_calibration
        from costdash.calibration import CALIBRATIONS
        from costdash.curves import flagged_share
        from costdash.errors import CostdashError

        try:
            scores = _threshold_money_roc(results, views, dataset_id, scope, model)
        except CostdashError as exc:
            return {"error": str(exc)}
        calibrated: dict[str, Any] = {}
        for method in CALIBRATIONS:
            r = calibrated_roc_result(results, dataset_id, model, method)
            calibrated[method] = r["error"] if "error" in r else _roc_of_entry(model, r)
        try:
            choice = choose_after_calibration(scores, calibrated, condition)
        except CostdashError as exc:
            return {"error": str(exc)}
        return {"tau": choice.tau, "prevalence": choice.prevalence,
                "rows": [{"method": r.method, "threshold": r.threshold,
                          "flagged": None if r.refused else
                          flagged_share(r.fpr, r.tpr, prior=choice.prevalence),
                          "expected_cost": None if r.refused else r.expected_cost,
                          "regret": None if r.refused else choice.regret(r.method),
                          "refused": r.refused} for r in choice.rows]}

    c = condition
    return results.json(
        "calibrate-choose", dataset_id,
        {"version": THRESHOLD_MONEY_VERSION, "model": model,
         "condition": [c.p_pos, c.cost_fn, c.cost_fp, c.cost_tp, c.cost_tn]}, compute)
