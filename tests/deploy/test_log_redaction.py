"""Issue 22, finding 9: no capability in any log line of gunicorn or nginx.

gunicorn and nginx logged ``/api/v1/datasets/<handle>...`` and ``/explore?data=<handle>``, and
nginx ``/api/v1/analyses/<share token>`` and ``//s/<token>``, as they came. A scripted tour of
every route a capability travels in (upload handles, read-only handles, share and manage tokens,
``data=``), through nginx in front of gunicorn as deployed, with doubled slashes, escaped paths,
repeated parameters, mistyped and dead links; then no line of either log holds any of them,
while each request still has its line in both.
"""

from __future__ import annotations

import http.client
import re
import secrets
import shutil
import time

import pytest
import requests

from tests.support.processes import deploy_env, running, start_proxy, start_web

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def breast_cancer_bytes() -> bytes:
    from costdash.demo import DEMOS

    return DEMOS["breast-cancer"].path.read_bytes()


class Tour:
    """Requests through the proxy, remembering every capability they hand out or carry."""

    def __init__(self, url: str):
        self.url, self.session = url, requests.Session()
        self.capabilities: set[str] = set()
        self.requests = 0

    def send(self, method: str, path: str, expect: int | tuple[int, ...] = 200, **kwargs):
        reply = self.session.request(method, self.url + path, timeout=60,
                                     allow_redirects=False, **kwargs)
        self.requests += 1
        expected = (expect,) if isinstance(expect, int) else expect
        assert reply.status_code in expected, (method, path, reply.status_code, reply.text[:300])
        return reply

    def raw(self, path: str, expect: int = 200) -> None:
        """A GET of ``path`` exactly as written (requests would normalise its escapes)."""
        host, port = self.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        try:
            conn.request("GET", path)
            reply = conn.getresponse()
            reply.read()
        finally:
            conn.close()
        self.requests += 1
        assert reply.status == expect, (path, reply.status)

    def keep(self, *values: str) -> None:
        assert all(re.fullmatch(r"[A-Za-z0-9_-]{32}", v) for v in values), values
        self.capabilities.update(values)


def tour_of_every_route(t: Tour, csv: bytes) -> None:
    # An upload's handle: its record, exports, every page's address.
    h = t.send("POST", "/api/v1/datasets", files={"file": ("bc.csv", csv)}).json()["id"]
    t.keep(h)
    for path in (f"/api/v1/datasets/{h}", f"/api/v1/datasets/{h}/report.html",
                 f"/api/v1/datasets/{h}/hull.csv", f"/api/v1/datasets/{h}/envelope.csv",
                 f"/api/v1/datasets/{h}/operating_ranges.csv",
                 f"/api/v1/datasets/{h}/decision.json", f"/api/v1/datasets/{h}/choice.json",
                 f"//api/v1/datasets/{h}", f"/api/v1/datasets/{h}/report.html?p_pos=0.2"):
        t.send("GET", path)
    for page in ("explore", "compare", "confidence", "folds", "curves", "choice"):
        t.send("GET", f"/{page}?data={h}&p_pos=0.1&cost_fn=5")
    t.send("GET", f"/explore?p_pos=0.1&data={h}")
    t.send("GET", f"/explore?data={h}&models=gbm&data={h}&x=1&data={h}")
    t.raw(f"/explore?d%61ta={h}")
    t.raw(f"/explore?data%3D{h}")
    t.raw(f"/api/v1/d%61tasets/{h}")
    t.send("GET", f"/api/v1/datasets/{h}/nope.csv", 404)

    # A saved analysis: share and manage tokens, its read-only handle.
    created = t.send("POST", "/api/v1/analyses", 201, files={"file": ("bc.csv", csv)},
                     data={"name": "tour"}).json()
    share, manage, ro = (created["url"].rsplit("/", 1)[1], created["manage_token"],
                         created["dataset_id"])
    t.keep(share, manage, ro)
    analysis = created["id"]
    for path in (f"/s/{share}", f"//s/{share}", f"/s/{share}/curves", f"/s/{share}/choice",
                 f"/s/{share}?p_pos=0.2", f"/api/v1/analyses/{share}",
                 f"//api/v1/analyses/{share}", f"/api/v1/datasets/{ro}",
                 f"/api/v1/datasets/{ro}/report.html", f"/explore?data={ro}",
                 f"/manage/{manage}", f"//manage/{manage}"):
        t.send("GET", path)
    t.raw(f"/%73/{share}")
    t.raw(f"/s%2F{share}")  # gunicorn decodes %2F: the app answers it as /s/<token>
    t.send("HEAD", f"/s/{share}")
    t.send("GET", f"/s/{share}/nonexistent", 404)
    t.send("GET", f"/s//{share}", 404)
    owner = {"Authorization": f"Bearer {manage}"}
    t.send("GET", f"/api/v1/analyses/{share}", headers=owner)
    t.send("GET", f"/api/v1/analyses/{share}", 403, headers={"Authorization": f"Bearer {share}"})
    for form in ({"action": "rename", "name": "renamed"},
                 {"action": "expiry", "expires_in_days": "3"},
                 {"action": "rotate"}, {"action": "revoke"}, {"action": "rotate"}):
        t.send("POST", f"/manage/{manage}", 303, data=form)
    t.send("POST", f"/manage/{manage}", 400, data={"action": "nonsense"})
    t.send("PATCH", f"/api/v1/analyses/{analysis}", json={"name": "x"}, headers=owner)
    relinked = t.send("POST", f"/api/v1/analyses/{analysis}/link", headers=owner).json()
    new_share = relinked["analysis"]["url"].rsplit("/", 1)[1]
    t.keep(new_share, relinked["analysis"]["dataset_id"])
    t.send("GET", f"/s/{new_share}")
    t.send("GET", f"/s/{share}", 404)
    t.send("DELETE", f"/api/v1/analyses/{analysis}/link", headers=owner)
    t.send("GET", f"/s/{new_share}", 404)

    # Deleting: the upload, then the analysis; their addresses answer 404 afterwards.
    t.send("DELETE", f"/api/v1/datasets/{h}", 204)
    t.send("GET", f"/api/v1/datasets/{h}", 404)
    t.send("POST", f"/manage/{manage}", 200, data={"action": "delete"})
    for path in (f"/s/{share}", f"/manage/{manage}", f"/api/v1/analyses/{share}",
                 f"/api/v1/datasets/{ro}"):
        t.send("GET", path, 404)


def test_no_capability_reaches_a_log_line_of_gunicorn_or_nginx(tmp_path, breast_cancer_bytes):
    if shutil.which("nginx") is None:
        pytest.fail("nginx is not installed: scripts/test.sh installs Debian's nginx")
    env = deploy_env(tmp_path / "data", secret_key=secrets.token_hex(32))
    with running(lambda: start_web(env, tmp_path / "web.log", workers=1)) as (web,):
        with running(lambda: start_proxy(web, tmp_path / "nginx")) as (proxy,):
            tour = Tour(proxy.url)
            tour_of_every_route(tour, breast_cancer_bytes)
            time.sleep(0.5)  # both write their access line after the response
            logs = {"gunicorn": web.log_text(), "nginx": proxy.log_text()}
    assert len(tour.capabilities) >= 6
    for name, text in logs.items():
        leaked = [line for line in text.splitlines()
                  if any(c in line for c in tour.capabilities)]
        assert leaked == [], f"{name}: {leaked[:5]}"
        assert "Traceback" not in text, text[-3000:]
    # Every request has its line in each log (the dashboard's own script requests too, so
    # at least as many), with the capability's place marked.
    gunicorn_lines = [ln for ln in logs["gunicorn"].splitlines() if '" 20' in ln or '" 30' in ln
                      or '" 40' in ln]
    nginx_lines = [ln for ln in logs["nginx"].splitlines() if "upstream=" in ln]
    assert len(gunicorn_lines) >= tour.requests and len(nginx_lines) >= tour.requests
    assert '"GET /s/<redacted>/curves' in logs["gunicorn"]
    assert '"GET /s/<token>/curves' in logs["nginx"]
    assert '"GET /explore?data=<redacted>&p_pos=0.1&cost_fn=5' in logs["gunicorn"]
    assert '"GET /explore?data=<token>&p_pos=0.1&cost_fn=5' in logs["nginx"]
    assert f'"PATCH /api/v1/analyses/{tour_analysis_id(logs["nginx"])}' in logs["nginx"]


def tour_analysis_id(nginx_log: str) -> str:
    """The analysis id the nginx log kept (16 hex digits: no secret, and worth keeping)."""
    found = re.search(r'"PATCH /api/v1/analyses/([0-9a-f]{16})"', nginx_log)
    assert found, nginx_log[-2000:]
    return found[1]
