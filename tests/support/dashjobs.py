"""Dash callbacks over HTTP without a browser: the body the renderer posts, and a background
job followed as the renderer follows it (poll with the signed handles, Cancel with
``cancelJob``). Works with Flask's test client and with ``requests`` against a server."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JobRun", "callback_body", "cancel_job", "follow_job", "multiclass_run"]


def callback_body(app: Any, output_part: str, values: dict[str, Any],
                  changed: str) -> dict[str, Any]:
    """The body the browser posts to ``/_dash-update-component`` for the callback whose
    output names ``output_part``; ``values`` maps ``id.property`` to the inputs' and states'
    values (None for the rest)."""
    key = next(k for k in app.callback_map if output_part in k)
    spec = app.callback_map[key]
    outputs = [dict(zip(("id", "property"), part.split(".", 1)))
               for part in key.strip(".").split("...")]

    def items(deps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"id": d["id"], "property": d["property"],
                 "value": values.get(f"{d['id']}.{d['property']}")} for d in deps]

    return {"output": key, "outputs": outputs if key.startswith("..") else outputs[0],
            "inputs": items(spec["inputs"]),
            "state": items(spec["state"]), "changedPropIds": [changed]}


Post = Callable[[str, dict[str, Any]], tuple[int, Any]]
"""``post(path_and_query, json_body) -> (status, parsed JSON or None)``."""


@dataclass
class JobRun:
    """What following one background job saw."""

    handles: dict[str, Any]
    """The first reply: the signed ``cacheKey`` and ``job`` (no computed outputs)."""
    progress: list[dict[str, Any]] = field(default_factory=list)
    """Each poll's progress values, in order."""
    response: dict[str, Any] | None = None
    """The outputs of the finished job (None: cancelled, or no answer by the deadline)."""
    seconds: float = 0.0
    """From the first post to the job's answer."""


def follow_job(post: Post, body: dict[str, Any], *, deadline: float = 60.0,
               poll: float = 0.1,
               on_poll: Callable[[JobRun], bool] | None = None) -> JobRun:
    """Start a background callback and poll it until it answers, as the renderer does.

    ``on_poll(run)`` after each poll without an answer: True stops following (e.g. after a
    Cancel). Raises AssertionError when the job does not answer within ``deadline`` seconds.
    """
    started = time.monotonic()
    status, first = post("/_dash-update-component", body)
    assert status == 200 and first and "cacheKey" in first and "job" in first, (status, first)
    run = JobRun(handles=first)
    query = f"/_dash-update-component?cacheKey={first['cacheKey']}&job={first['job']}"
    while time.monotonic() - started < deadline:
        status, reply = post(query, body)
        assert status in (200, 204), (status, reply)
        if reply and "progress" in reply:
            run.progress.append(reply["progress"])
        if reply and "response" in reply:
            run.response = reply["response"]
            run.seconds = time.monotonic() - started
            return run
        if on_poll is not None and on_poll(run):
            return run
        time.sleep(poll)
    raise AssertionError(f"the job did not answer within {deadline} s: {run}")


def cancel_job(post: Post, app: Any, cancel_id: str, run: JobRun) -> int:
    """Press the job's Cancel (the callback Dash adds on ``cancel_id``'s ``n_clicks``);
    returns the HTTP status."""
    # Dash adds that callback when its app serves its first request: spelled out here, so an
    # app that never served one gives the body too.
    body = {"output": f"{cancel_id}.id", "outputs": {"id": cancel_id, "property": "id"},
            "inputs": [{"id": cancel_id, "property": "n_clicks", "value": 1}], "state": [],
            "changedPropIds": [f"{cancel_id}.n_clicks"]}
    status, _ = post(f"/_dash-update-component?cancelJob={run.handles['job']}", body)
    return status


def multiclass_run(post: Post, app: Any, ref: dict[str, Any], rows: list[dict[str, Any]], *,
                   replicates: int, seed: int = 3, deadline: float = 60.0, poll: float = 0.1,
                   on_poll: Callable[[JobRun], bool] | None = None
                   ) -> tuple[float, str, JobRun | None]:
    """Press the Multiclass page's Run as the renderer does: its request (the gate's slots
    for the job, or a refusal), then the job the ticket starts. Returns the seconds from the
    click to the answer, the alert's text and the job (None: refused in the request)."""
    started = time.monotonic()
    status, reply = post("/_dash-update-component", callback_body(
        app, "multiclass-ticket.data", {"multiclass-ref.data": ref,
                                        "multiclass-run.n_clicks": 1},
        "multiclass-run.n_clicks"))
    assert status == 200, (status, reply)
    out = reply["response"]
    if "multiclass-ticket" not in out:
        return time.monotonic() - started, out["multiclass-error"]["children"], None
    body = callback_body(app, "multiclass-bcost.children@", {
        "multiclass-ticket.data": out["multiclass-ticket"]["data"],
        "multiclass-ref.data": ref, "multiclass-costs.rowData": rows,
        "multiclass-level.value": 0.95, "multiclass-replicates.value": replicates,
        "multiclass-laplace.value": 0.1, "multiclass-laplace-delta.value": 0,
        "multiclass-seed.value": seed, "multiclass-a.value": "m0", "multiclass-b.value": "m1"},
        "multiclass-ticket.data")
    run = follow_job(post, body, deadline=deadline, poll=poll, on_poll=on_poll)
    text = (run.response or {}).get("multiclass-error", {}).get("children", "")
    return time.monotonic() - started, text, run
