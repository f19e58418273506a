"""``costdash push``: a real ``python app.py`` server receives the upload; the printed links work.

What the server saved is read back through ``GET /api/v1/analyses/<token>`` and compared with
``costdash analyze --json`` run here on the same file and condition. Failures are checked for
their exit status and their one line on stderr: refusals by the server (2), server errors and
unreachable servers (1), and what is refused before connecting (2).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from werkzeug.formparser import parse_form_data
from werkzeug.test import EnvironBuilder

from costdash.cli import main
from costdash.cli.push import CHUNK_BYTES, MultipartBody
from costdash.demo import DEMOS
from costdash.errors import InputFileError
from costdash.io import load_predictions
from tests.support.services import free_port, wait_for_http

REPO = Path(__file__).resolve().parents[1]
BREAST_CANCER = DEMOS["breast-cancer"].path  # 22 kB: under the test server's limit
RARE_DIGIT = DEMOS["rare-digit"].path  # 36 kB: over it
UPLOAD_LIMIT_MB = 0.03


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``python app.py --port N`` on a temp data dir, refusing uploads over 30 kB."""
    tmp = tmp_path_factory.mktemp("push-server")
    port = free_port()
    env = {**os.environ, "COSTDASH_DATA_DIR": str(tmp / "data"), "PYTHONUNBUFFERED": "1",
           "COSTDASH_MAX_UPLOAD_MB": str(UPLOAD_LIMIT_MB)}
    env.pop("PORT", None)
    with open(tmp / "server.log", "wb") as log:
        process = subprocess.Popen([sys.executable, str(REPO / "app.py"), "--port", str(port)],
                                   cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(url + "/healthz", timeout=60, process=process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def push(capsys, *argv) -> tuple[int, str, str]:
    code = main(["push", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def analyze_json(capsys, *argv) -> dict:
    assert main(["analyze", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def saved(server: str, link: str) -> dict:
    return get_json(f"{server}/api/v1/analyses/{link.rsplit('/', 1)[-1]}")


def condition(view: dict) -> tuple[float, float, float]:
    return view["p_pos"], view["cost_fn"], view["cost_fp"]


# --- saving ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_push_prints_the_links_and_the_server_keeps_the_condition(server, capsys):
    code, out, err = push(capsys, BREAST_CANCER, "--server", server, "--p-pos", 0.2,
                          "--cost-fn", 5, "--name", "Screening")
    assert (code, err) == (0, "")
    link, manage = out.splitlines()
    assert re.fullmatch(re.escape(server) + r"/s/[A-Za-z0-9_-]{20,}", link)
    assert re.fullmatch(r"manage link, keep it private \(rename, expiry, delete\): "
                        + re.escape(server) + r"/manage/[A-Za-z0-9_-]{20,}", manage)
    with urllib.request.urlopen(link, timeout=30) as page:
        assert page.status == 200

    reply = saved(server, link)
    assert condition(reply["view"]) == (0.2, 5.0, 1.0)
    assert reply["analysis"]["name"] == "Screening" and reply["analysis"]["expires_at"] is None
    # The saved analysis is analyze --json without the threshold-choice extras (the
    # Threshold choice page and choice.json have those), its ROC arrays thinned to the
    # dashboard's resolution (a read link hands out curves, not predictions).
    local = analyze_json(capsys, BREAST_CANCER, "--p-pos", 0.2, "--cost-fn", 5,
                         "--no-threshold-choice", "--max-points", 400)
    assert {k: reply[k] for k in local} == local


@pytest.mark.slow
def test_json_reply_defaults_and_expiry(server, capsys):
    code, out, _ = push(capsys, BREAST_CANCER, "--server", server + "/", "--json",
                        "--expires-in-days", 7)
    assert code == 0
    reply = json.loads(out)
    assert set(reply) == {"id", "url", "manage_url", "manage_token", "name", "dataset_id",
                          "expires_at"}
    assert reply["name"] == "breast-cancer.csv"  # the file's name when --name is not given
    assert reply["manage_url"].endswith("/manage/" + reply["manage_token"])
    assert reply["expires_at"] is not None
    view = saved(server, reply["url"])["view"]
    dataset = load_predictions(BREAST_CANCER)
    # No --p-pos: the data's prevalence, as in `costdash analyze`; unit costs.
    assert condition(view) == pytest.approx((dataset.n_pos / dataset.n, 1.0, 1.0))


def test_loader_options_reach_the_server(server, capsys, tmp_path):
    table = BREAST_CANCER.read_text().splitlines()
    header = table[0].split(",")
    label = header.index("y_true")
    header[label] = "outcome"
    rows = [",".join(header)]
    for line in table[1:]:
        cells = line.split(",")
        cells[label] = {"1": "sick", "0": "well"}[cells[label]]
        rows.append(",".join(cells))
    relabelled = tmp_path / "relabelled.csv"
    relabelled.write_text("\n".join(rows) + "\n")

    code, out, err = push(capsys, relabelled, "--server", server, "--label-column", "outcome",
                          "--positive", "sick", "--models", "gbm", "logreg")
    assert (code, err) == (0, "")
    reply = saved(server, out.splitlines()[0])
    assert [c["name"] for c in reply["classifiers"]] == ["gbm", "logreg"]
    assert reply["dataset"]["positive_label"] == "sick"
    assert reply["dataset"]["n_pos"] == load_predictions(BREAST_CANCER).n_pos


# --- refusals and failures ---------------------------------------------------------------------

def test_a_file_the_server_rejects_exits_2_with_its_message(server, capsys, tmp_path):
    broken = tmp_path / "broken.csv"
    broken.write_text("y_true,alpha\n1,0.9\n0,oops\n1,0.7\n0,0.2\n")
    with pytest.raises(InputFileError) as local:
        load_predictions(broken)
    code, out, err = push(capsys, broken, "--server", server)
    assert (code, out) == (2, "")
    assert err == f"costdash: error: {local.value}\n"


def test_a_bad_condition_exits_2_with_the_servers_words_before_connecting(server, capsys):
    # The server's own parser runs here first: its message, and nothing is sent.
    expected = "costdash: error: p(+) must be a number strictly between 0 and 1; got '1.5'.\n"
    code, out, err = push(capsys, BREAST_CANCER, "--server", server, "--p-pos", 1.5)
    assert (code, out, err) == (2, "", expected)
    nowhere = f"http://127.0.0.1:{free_port()}"  # a connection attempt would exit 1
    assert push(capsys, BREAST_CANCER, "--server", nowhere, "--p-pos", 1.5) == (2, "", expected)
    code, _, err = push(capsys, BREAST_CANCER, "--server", nowhere, "--volume", -1)
    assert (code, err) == (2, "costdash: error: Volume must be a number at least 0; got '-1'.\n")


def test_the_server_refuses_a_bad_condition_in_the_same_words(server):
    """What ``push`` checks locally, the server checks too (a client other than ours)."""
    body = MultipartBody([("p_pos", "1.5")], "file", BREAST_CANCER)
    request = urllib.request.Request(server + "/api/v1/analyses", data=b"".join(body),
                                     method="POST",
                                     headers={"Content-Type": body.content_type})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 400
    assert json.load(refused.value) == {
        "error": "p(+) must be a number strictly between 0 and 1; got '1.5'."}


def test_view_options_reach_the_server(server, capsys):
    code, out, err = push(capsys, BREAST_CANCER, "--server", server, "--volume", 250,
                          "--unit", "$", "--view", "cost_fn=20&max_fpr=0.1&p_pos=0.3",
                          "--p-pos", 0.05)
    assert (code, err) == (0, "")
    view = saved(server, out.splitlines()[0])["view"]
    # --p-pos wins over the --view query; the rest of the query is kept.
    assert view == {"p_pos": 0.05, "cost_fn": 20.0, "cost_fp": 1.0, "volume": 250.0,
                    "unit": "$", "max_fpr": 0.1}


def test_over_the_upload_limit_exits_2(server, capsys):
    code, out, err = push(capsys, RARE_DIGIT, "--server", server)
    assert (code, out) == (2, "")
    assert re.fullmatch(r"costdash: error: The file is [\d.]+ kB, over the [\d.]+ kB upload "
                        r"limit\.\n", err)


def run_cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "costdash", *argv], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_unreachable_server_exits_1_without_a_traceback():
    address = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    done = run_cli("push", str(BREAST_CANCER), "--server", address)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"costdash: error: cannot reach the costdash server at {address}: "
                           "Connection refused\n")


class FailingServer(BaseHTTPRequestHandler):
    """Answers every POST with the status and body set on the server."""

    def do_POST(self):  # noqa: N802 - the name http.server calls
        self.rfile.read(int(self.headers["Content-Length"]))
        status, content_type, body = self.server.reply
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def failing_server():
    """A local HTTP server whose reply each test sets: ``server.reply = (status, type, body)``."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FailingServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize(("status", "content_type", "body", "expected"), [
    (503, "application/json", b'{"error": "The database is not reachable\\nright now."}',
     "costdash: error: The database is not reachable right now.\n"),
    (502, "text/html", b"<html>Bad Gateway</html>",
     "costdash: error: the server at {url} answered 502 Bad Gateway without a costdash error "
     "message; is --server the address of a costdash server?\n"),
    (200, "text/html", b"<html>a web site</html>",
     "costdash: error: the server at {url} did not answer like a costdash server (no links in "
     "its reply); is --server the right address?\n"),
])
def test_server_errors_exit_1_with_one_line(failing_server, capsys, status, content_type, body,
                                            expected):
    failing_server.reply = (status, content_type, body)
    url = f"http://127.0.0.1:{failing_server.server_address[1]}"
    code, out, err = push(capsys, BREAST_CANCER, "--server", url)
    assert (code, out, err) == (1, "", expected.format(url=url))


def test_another_servers_404_page_exits_2(failing_server, capsys):
    failing_server.reply = (404, "text/html", b"<html>Not Found</html>")
    url = f"http://127.0.0.1:{failing_server.server_address[1]}"
    code, _, err = push(capsys, BREAST_CANCER, "--server", url)
    assert code == 2 and "answered 404 Not Found without a costdash error message" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["missing.csv"], "missing.csv: no such file (missing.csv)"),
    ([str(BREAST_CANCER), "--max-mb", "0.01"], "breast-cancer.csv: is 0.0214 MB, over the 0.01 MB "
                                               "limit (--max-mb)"),
])
def test_refused_before_connecting(capsys, argv, message):
    # The address answers nothing: a connection attempt would exit 1, not 2.
    code, out, err = push(capsys, *argv, "--server", f"http://127.0.0.1:{free_port()}")
    assert (code, out, err) == (2, "", f"costdash: error: {message}\n")


def test_server_address_must_be_http(capsys):
    code, _, err = push(capsys, BREAST_CANCER, "--server", "127.0.0.1:8050")
    assert code == 2
    assert err == ("costdash: error: --server must be an http:// or https:// address such as "
                   "http://127.0.0.1:8050, not '127.0.0.1:8050'\n")


def test_expiry_must_be_positive(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["push", str(BREAST_CANCER), "--server", "http://x", "--expires-in-days", "0"])
    assert exit_.value.code == 2
    assert "must be a positive number" in capsys.readouterr().err


# --- the request body --------------------------------------------------------------------------

def test_multipart_body_streams_the_file_and_parses_back(tmp_path):
    path = tmp_path / 'prédictions "v2".csv'
    content = os.urandom(3 * CHUNK_BYTES + 17)
    path.write_bytes(content)
    fields = [("models", "gbm"), ("models", "logreg"), ("name", "Écran, 2"), ("p_pos", "0.2")]
    body = MultipartBody(fields, "file", path)
    chunks = list(body)
    data = b"".join(chunks)
    assert len(data) == body.length
    # The file goes in chunks, never whole.
    assert max(len(c) for c in chunks) <= max(CHUNK_BYTES, len(chunks[0]))

    environ = EnvironBuilder(method="POST", data=data, content_type=body.content_type).get_environ()
    _, form, files = parse_form_data(environ)
    assert form.getlist("models") == ["gbm", "logreg"]
    assert (form["name"], form["p_pos"]) == ("Écran, 2", "0.2")
    assert files["file"].filename == path.name
    assert files["file"].read() == content


def test_push_imports_neither_dash_nor_flask():
    code = ("import sys, costdash.cli, costdash.cli.push; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'dash', 'flask', 'werkzeug', 'plotly', 'dashboard', 'requests'}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.stdout == "[]\n", done.stderr
