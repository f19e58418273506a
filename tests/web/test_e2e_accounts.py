"""Accounts in headless Chromium (issue 27): ``python app.py`` with ``COSTDASH_OIDC_*`` pointing
at a real OpenID Connect provider started by the test (``oidc-provider-mock``). The page sends
the visitor to the provider, who logs in there; back on Explore they upload and share, then "My
analyses" lists the analysis and the upload, a new read link replaces the old one (which then
answers 404), the trail shows it, and an "organisation only" link sends an anonymous viewer to
the provider. Screenshots of My analyses at 1440 and 390 px wide."""

from __future__ import annotations

import warnings

import pytest
import requests
from playwright.sync_api import Page, expect

from .conftest import running_app
from .test_e2e_explore import choose_file, open_page, screenshot

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from oidc_provider_mock import run_server_in_thread

pytestmark = pytest.mark.browser


@pytest.fixture
def accounts_server(tmp_path):
    """``(app URL, issuer URL)``: a provider in a thread and ``python app.py`` using it."""
    with run_server_in_thread() as provider:
        issuer = f"http://localhost:{provider.server_port}"
        env = {"COSTDASH_OIDC_ISSUER": issuer, "COSTDASH_OIDC_CLIENT_ID": "costdash-e2e",
               "COSTDASH_OIDC_CLIENT_SECRET": "e2e-secret"}
        with running_app(tmp_path, ready_path="/healthz", env=env) as url:
            yield url, issuer


class _Server:
    def __init__(self, url: str):
        self.url = url


def log_in_at_provider(page: Page, issuer: str, sub: str) -> None:
    """On the provider's authorisation form: name the person and authorise."""
    page.wait_for_url(f"{issuer}/oauth2/authorize**")
    page.fill("input[name=sub]", sub)
    page.click("button[type=submit]:has-text('Authorize')")


def test_login_upload_share_my_analyses_and_rotate(accounts_server, page: Page, browser,
                                                  predictions_csv, screenshot_dir):
    url, issuer = accounts_server
    errors = open_page(_Server(url), page)
    log_in_at_provider(page, issuer, "alice@example.org")
    page.wait_for_url(f"{url}/explore")
    # What the provider's own page logged (its style sheet from a CDN, unreachable here) is
    # not this app's: from here on, the console must stay clean.
    errors.clear()
    expect(page.locator("#account-link")).to_have_text("My analyses")

    choose_file(page, predictions_csv)
    expect(page.locator("#dataset-info")).to_contain_text("predictions.csv: 3,000 cases")
    page.fill("#share-name", "Churn review")
    page.click("#share-button")
    expect(page.locator("#share-url")).to_contain_text("/s/")
    old_link = page.locator("#share-url").inner_text()

    # A stakeholder opens the read link without any account.
    viewer = browser.new_context().new_page()
    assert viewer.goto(old_link).status == 200
    expect(viewer.locator("#shared-banner")).to_contain_text("Churn review")
    expect(viewer.locator("#account-link")).to_be_hidden()

    page.click("#account-link")
    page.wait_for_url(f"{url}/account")
    expect(page.locator("#person")).to_have_text("alice@example.org")
    card = page.locator("#analyses li.item").first
    expect(card).to_contain_text("Churn review")
    expect(card.locator(".opens")).to_contain_text("Opened once; last 20")
    expect(card.locator(".share-link")).to_have_text(old_link)
    expect(page.locator("#uploads")).to_contain_text("predictions.csv")
    page.fill("#token-name", "CI pipeline")
    page.click("#create-token")
    expect(page.locator("#new-token")).to_contain_text("cdt_")
    token = page.locator("#new-token").inner_text()

    # Its own page: a new read link; the old one answers 404 from then on.
    card.locator("a.button").click()
    page.click("#rotate-button")
    expect(page.locator("p.ok")).to_contain_text("New read-only link made")
    new_link = page.locator("#share-url").inner_text()
    assert new_link != old_link and "/s/" in new_link
    assert requests.get(old_link, timeout=10).status_code == 404
    assert requests.get(new_link, timeout=10).status_code == 200
    page.click("#back-to-account")
    expect(page.locator("#analyses .share-link").first).to_have_text(new_link)
    expect(page.locator("#audit")).to_contain_text("new link")
    expect(page.locator("#audit")).to_contain_text("token created")
    expect(page.locator("#tokens")).to_contain_text("CI pipeline")
    page.set_viewport_size({"width": 1440, "height": 1000})
    screenshot(page, screenshot_dir / "my-analyses-1440.png")
    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, screenshot_dir / "my-analyses-390.png")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    page.set_viewport_size({"width": 1440, "height": 1000})

    # The token works for the API without the browser's session.
    me = requests.get(f"{url}/api/v1/account/tokens", timeout=10,
                      headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["tokens"][0]["name"] == "CI pipeline"
    assert requests.post(f"{url}/api/v1/datasets", timeout=10,
                         files={"file": ("p.csv", predictions_csv.read_bytes())}
                         ).status_code == 401

    # Organisation only: an anonymous viewer is sent to the provider first.
    page.locator("#analyses li.item").first.locator(
        "button:has-text('Organisation only')").click()
    expect(page.locator("#analyses .badge").first).to_have_text("Organisation only")
    anonymous = browser.new_context().new_page()
    anonymous.goto(new_link)
    anonymous.wait_for_url(f"{issuer}/oauth2/authorize**")
    log_in_at_provider(anonymous, issuer, "carol@example.org")
    anonymous.wait_for_url(new_link)
    expect(anonymous.locator("#shared-banner")).to_contain_text("Churn review")
    assert errors == []
