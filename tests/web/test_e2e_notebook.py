"""``costdash.show`` end to end (issue 27): a real notebook's inline frame drawn in Chromium, and
``.decision()`` in the kernel following a change of p(+) made on the page ``.url`` opens."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Page, expect

from costdash.cli import main

from .helpers import make_predictions
from .notebook_kernel import IFRAME, html_outputs, notebook_kernel

pytestmark = [pytest.mark.browser, pytest.mark.slow]



@contextmanager
def notebook_front_end(html: str) -> Iterator[str]:
    """A page served from a loopback port, as a notebook front end serves its notebook: a page
    Playwright made up would be a public one to Chromium, whose local network checks then
    block the frame to 127.0.0.1 (a real front end on this machine is not blocked)."""
    body = html.encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/notebooks/explore.ipynb"
    finally:
        server.shutdown()
        server.server_close()



def _cli_decision(capsys, *argv: str) -> dict:
    capsys.readouterr()
    assert main(["decide", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_decision_in_the_kernel_follows_p_pos_changed_on_the_page(tmp_path, page: Page, capsys,
                                                                  screenshot_dir):
    path = tmp_path / "predictions.csv"
    make_predictions().to_csv(path, index=False)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    with notebook_kernel() as kernel:
        cell = kernel.run("import costdash\n"
                          f"view = costdash.show({str(path)!r}, p_pos=0.05, cost_fn=20)")
        frame_html = html_outputs(cell)
        assert IFRAME.search(frame_html) is not None, cell.outputs

        # The output cell's frame as a notebook front end on this machine shows it (a page
        # served from another loopback port, as Jupyter's): the page, drawn with the data set.
        with notebook_front_end(f"<!doctype html><body style='margin:0;width:1200px'>"
                                f"{frame_html}</body>") as front_end:
            page.goto(front_end)
            inline = page.frame_locator("iframe")
            expect(inline.locator("#chosen-classifier")).not_to_have_text("–")
            expect(inline.locator("#p-pos-input")).to_have_value("0.05")
            page.screenshot(path=str(screenshot_dir / "notebook-inline-frame.png"))

        # .url in a browser tab: p(+) changed there is what .decision() then decides for.
        page.goto(kernel.json("view.url"))
        expect(page.locator("#chosen-classifier")).not_to_have_text("–")
        before = kernel.json("costdash.decision_to_dict(view.decision())")
        assert before == _cli_decision(capsys, str(path), "--p-pos", "0.05", "--cost-fn", "20")
        page.fill("#p-pos-input", "0.6")
        page.keyboard.press("Tab")
        # The page records the view through a callback of its own, a request after the
        # change: wait for it in the kernel (polling, with a deadline), then decide.
        kernel.run("import time\n"
                   "deadline = time.monotonic() + 30\n"
                   "while view.view().p_pos != 0.6 and time.monotonic() < deadline:\n"
                   "    time.sleep(0.05)")
        assert kernel.json("view.view().p_pos") == 0.6
        after = kernel.json("costdash.decision_to_dict(view.decision())")
        assert after == _cli_decision(capsys, str(path), "--p-pos", "0.6", "--cost-fn", "20")
        assert after["decision"]["p_pos"] == 0.6
        assert (after["decision"]["classifier"], after["decision"]["threshold"]) != \
            (before["decision"]["classifier"], before["decision"]["threshold"])
        # The page shows the same choice.
        expect(page.locator("#chosen-classifier")).to_have_text(after["decision"]["classifier"])
        page.screenshot(path=str(screenshot_dir / "notebook-url-after-p-pos.png"))
    assert errors == []
