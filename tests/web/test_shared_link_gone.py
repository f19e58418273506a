"""An open page of a read-only link says so once the link is gone (issue 24): the shell puts a
hidden note and a store on every page of a link, and the check an interaction asks for answers
whether the link still leads to its analysis. The browser side is in test_e2e_sharing.py."""

from __future__ import annotations

import io
import json

import pytest

from dashboard import ids
from dashboard.shell import LINK_GONE, link_alive, route


@pytest.fixture
def link(client, breast_cancer_csv) -> dict:
    reply = client.post("/api/v1/analyses", content_type="multipart/form-data",
                        data={"file": (io.BytesIO(breast_cancer_csv.read_bytes()), "b.csv"),
                              "name": "Q3", "p_pos": "0.2"})
    assert reply.status_code == 201, reply.get_json()
    return reply.get_json()


def text_of(component) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda o: o.to_plotly_json())


@pytest.mark.parametrize("sub", ["", "/curves", "/choice"])
@pytest.mark.slow
def test_every_page_of_a_link_carries_the_hidden_note(services, link, sub):
    token = link["url"].rsplit("/s/", 1)[1]
    page, _ = route(f"/s/{token}{sub}", "", services)
    found = [c for c in _walk(page) if getattr(c, "id", None) == ids.SHARED_GONE]
    assert len(found) == 1 and found[0].hidden is True and found[0].children == LINK_GONE
    assert any(getattr(c, "id", None) == ids.SHARED_CHECK for c in _walk(page))
    # Not on the uploader's own pages.
    own, _ = route("/explore", "", services)
    assert ids.SHARED_GONE not in text_of(own)


def test_the_check_answers_whether_the_link_lives(client, services, link):
    token = link["url"].rsplit("/s/", 1)[1]
    for path in (f"/s/{token}", f"/s/{token}/curves", f"/s/{token}/choice"):
        assert link_alive(path, services) is True
    assert link_alive("/explore", services) is None       # not a link's page: nothing to say
    assert link_alive("/s/" + "x" * 32, services) is False
    gone = client.delete(f"/api/v1/analyses/{link['id']}",
                         headers={"Authorization": f"Bearer {link['manage_token']}"})
    assert gone.status_code == 204
    assert link_alive(f"/s/{token}", services) is False
    assert link_alive(f"/s/{token}/curves", services) is False


def _walk(component):
    yield component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if child is not None and not isinstance(child, (str, int, float)):
            yield from _walk(child)
