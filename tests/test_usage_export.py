"""`podfit usage export` against servers that misbehave: real HTTP servers on 127.0.0.1 (an
ephemeral port, a thread each, stopped at the end of the test) that check credentials, redirect,
drip their answer a byte at a time, answer too much or answer what is not a Prometheus result.
Every failure is exit 2 with one line that names the URL and never the password or the token."""

from __future__ import annotations

import base64
import http.server
import json
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from click.testing import CliRunner

from podfit.cli import main
from podfit.usage import UsageError, parse_usage
from podfit.usage_export import check_answer, follow, parse_target, promql_string, queries, redact

SERIES = [{"metric": {"namespace": "shop", "pod": "api-7d9f8c6b5-x2x7k", "container": "app"}}]


def answer(path: str, result: list | None = None) -> dict:
    """A well-formed answer: one series, a matrix for a range query, a vector for an instant one."""
    if path.endswith("query_range"):
        rows = [dict(r, values=[[1763856000, "0.25"], [1763856060, "0.5"]]) for r in (result or SERIES)]
        return {"status": "success", "data": {"resultType": "matrix", "result": rows}}
    rows = [dict(r, value=[1763856060, "1"]) for r in (result or SERIES)]
    return {"status": "success", "data": {"resultType": "vector", "result": rows}}


class Request:
    def __init__(self, handler: http.server.BaseHTTPRequestHandler, body: bytes) -> None:
        self.method = handler.command
        self.path = handler.path
        self.headers = dict(handler.headers)
        self.body = body


Responder = Callable[[http.server.BaseHTTPRequestHandler, Request], None]


def send(h: http.server.BaseHTTPRequestHandler, status: int, body: bytes | dict | list, **headers: str) -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    h.send_response(status)
    h.send_header("Content-Length", str(len(data)))
    for k, v in headers.items():
        h.send_header(k.replace("_", "-"), v)
    h.end_headers()
    h.wfile.write(data)


def ok(h: http.server.BaseHTTPRequestHandler, req: Request) -> None:
    send(h, 200, answer(req.path.split("?")[0]))


class Server:
    """One HTTP/1.1 server on 127.0.0.1 answering every request with ``respond``; ``requests``
    lists what it was asked, ``sent`` counts the bytes a dripping responder wrote."""

    def __init__(self, respond: Responder, tls: ssl.SSLContext | None = None) -> None:
        self.requests: list[Request] = []
        self.sent = 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 20  # a client that stops reading cannot keep the thread past this

            def handle_one(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                req = Request(self, self.rfile.read(length))
                server.requests.append(req)
                respond(self, req)

            do_GET = do_POST = handle_one

            def log_message(self, *args: object) -> None:
                pass

        class Quiet(http.server.ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                pass  # a client that hangs up early is what several tests expect

        self.httpd = Quiet(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(respond: Responder, tls: ssl.SSLContext | None = None) -> Server:
        servers.append(Server(respond, tls))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


def serve_late(serve, make: Callable[[Server], Responder], tls: ssl.SSLContext | None = None) -> Server:
    """A server whose responder needs the server itself (its port, its byte count)."""
    box: list[Server] = []
    server = serve(lambda h, req: make(box[0])(h, req), tls)
    box.append(server)
    return server


def export(url: str, *args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(
        main, ["usage", "export", "--prometheus", url, "--end", "1763859600", "--window", "1h", *args], env=env
    )


def failed(res, *absent: str) -> str:
    """The error line of a failed export (a usage error's comes after click's usage lines, any
    other is the only line); none of ``absent`` is anywhere in the output."""
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "internal error" not in res.output
    for text in absent:
        assert text not in res.output, text
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    if lines[0].startswith("Usage: "):
        assert lines[-1].startswith("Error: ") and len(lines) == 3, res.stderr
    else:
        assert len(lines) == 1 and lines[0].startswith("podfit: error: "), res.stderr
    return lines[-1]


# -------------------------------------------------------------------------------- a good run ---


def test_export_writes_a_bundle_check_usage_reads(serve, tmp_path):
    server = serve(ok)
    out = tmp_path / "usage.json"
    res = export(server.url, "-o", str(out))
    assert res.exit_code == 0, res.output
    assert res.stderr == (
        "podfit: series: cpu 1, memory 1, periods 1, throttled 1, started 1, terminated 1, "
        "pod_owner 1, replicaset_owner 1, job_owner 1\n"
    )
    bundle = json.loads(out.read_text())
    assert bundle["kind"] == "PodfitUsage" and bundle["window"] == {"start": 1763856000, "end": 1763859600, "step": 300}
    assert list(bundle["queries"]) == [
        "cpu",
        "memory",
        "periods",
        "throttled",
        "started",
        "terminated",
        "pod_owner",
        "replicaset_owner",
        "job_owner",
    ]
    assert bundle["queries"]["cpu"]["response"] == answer("/api/v1/query_range")
    series = parse_usage(out.read_text(), str(out))
    assert {(s.kind, s.pod, s.container) for s in series} >= {("cpu", "api-7d9f8c6b5-x2x7k", "app")}
    assert [r.path for r in server.requests] == ["/api/v1/query_range"] * 5 + ["/api/v1/query"] * 4
    assert all(r.method == "POST" and "Authorization" not in r.headers for r in server.requests)


# ------------------------------------------------------------------------------- credentials ---


def needs(expected: str) -> Responder:
    """A server that answers only requests carrying ``Authorization: expected``; a refused request
    is told, in the error, the header it sent (as a careless server might)."""

    def respond(h: http.server.BaseHTTPRequestHandler, req: Request) -> None:
        got = req.headers.get("Authorization", "")
        if got == expected:
            ok(h, req)
        else:
            send(h, 401, {"status": "error", "error": f"refused Authorization: {got} ({req.path})"})

    return respond


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_the_urls_user_and_password_are_basic_auth_and_leave_the_url(serve):
    server = serve(needs(basic("reader", "s3cr@t pw")))
    res = export(server.url.replace("http://", "http://reader:s3cr%40t%20pw@") + "/")
    assert res.exit_code == 0, res.output
    assert all(r.path.startswith("/api/v1/") for r in server.requests)  # the userinfo is not in the request
    assert "s3cr" not in res.output


@pytest.mark.parametrize("password", ["wrong-Passw0rd", "p@ss:w0rd/?"])
def test_a_refused_password_is_in_no_message(serve, password):
    server = serve(needs(basic("reader", "right")))
    quoted = password.replace("@", "%40").replace("/", "%2F").replace("?", "%3F")
    res = export(server.url.replace("http://", f"http://reader:{quoted}@"))
    line = failed(res, password, quoted, base64.b64encode(f"reader:{password}".encode()).decode())
    assert line.startswith(f"podfit: error: {server.url}/api/v1/query_range: HTTP 401 Unauthorized: refused ")
    assert "Authorization: Basic ***" in line  # the server's echo of the header, redacted


def test_bearer_token_from_a_file_and_from_the_environment(serve, tmp_path):
    token = "eyJhbGciOiJSUzI1NiJ9.tok-en_1"
    server = serve(needs("Bearer " + token))
    path = tmp_path / "token"
    path.write_text(token + "\n")
    res = export(server.url, "--bearer-token-file", str(path))
    assert res.exit_code == 0, res.output
    res = export(server.url, "--bearer-token-env", "PROM_TOKEN", env={"PROM_TOKEN": token})
    assert res.exit_code == 0, res.output
    assert len(server.requests) == 18 and token not in res.output


def test_a_refused_token_is_in_no_message(serve, tmp_path):
    server = serve(needs("Bearer the-right-one"))
    res = export(server.url, "--bearer-token-env", "PROM_TOKEN", env={"PROM_TOKEN": "leaked-token-123"})
    line = failed(res, "leaked-token-123")
    assert "HTTP 401" in line and "Bearer ***" in line


def test_token_sources_are_usage_errors_when_unusable(tmp_path):
    url = "http://127.0.0.1:9"  # never contacted: every case fails before
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big"
    big.write_text("x" * (64 * 1024 + 1))
    spaced = tmp_path / "spaced"
    spaced.write_text("two words\n")
    cases = [
        (["--bearer-token-file", str(fifo)], "is not a regular file"),  # and does not wait for a writer
        (["--bearer-token-file", str(tmp_path)], "is not a regular file"),
        (["--bearer-token-file", str(big)], "is larger than 64 KiB"),
        (["--bearer-token-file", str(tmp_path / "absent")], "cannot open"),
        (["--bearer-token-file", str(tmp_path / "absent"), "-o", str(tmp_path / "out.json")], "cannot open"),
        (["--bearer-token-file", str(spaced)], "an HTTP header cannot carry"),
        (["--bearer-token-env", "PODFIT_TEST_UNSET_VARIABLE"], "is not set"),
        (["--bearer-token-env", "X", "--bearer-token-file", str(big)], "give one of"),
    ]
    for args, why in cases:
        res = export(url, *args)
        line = failed(res, "two words")
        assert why in line, (args, line)
        assert "--bearer-token" in line
    res = export(url.replace("http://", "http://u:pw-1@"), "--bearer-token-env", "T", env={"T": "tok-1"})
    assert "not both" in failed(res, "pw-1", "tok-1")
    res = export(url, "--bearer-token-file", str(spaced), "-o", str(spaced))
    assert "--output" in failed(res) and spaced.read_text() == "two words\n"


@pytest.mark.parametrize(
    "url, why",
    [
        ("ftp://u:hunter2@127.0.0.1/", "expected an http:// or https:// URL"),
        ("http://u:hunter2@127.0.0.1:99999", "port is not a number"),
        ("http://u:hunter2@127.0.0.1:http", "port is not a number"),
        ("http://u:hunter2@/", "names no host"),
        ("http://u:hunter2@127.0.0.1/?x=1", "no query"),
        ("http://a%3Ab:hunter2@127.0.0.1/", "holds a ':'"),
        ("http://u:hunter2@127.0.0.1/a b", "control character"),
    ],
)
def test_an_unusable_url_is_a_usage_error_without_its_password(url, why):
    line = failed(export(url), "hunter2")
    assert why in line and "--prometheus" in line


def test_parse_target_and_redact():
    t = parse_target("HTTPS://us%3Ber:p%40ss@[::1]:9443/prom/")
    assert (t.scheme, t.host, t.port, t.path, t.username, t.password) == (
        "https",
        "::1",
        9443,
        "/prom",
        "us;er",
        "p@ss",
    )
    assert t.display == "https://[::1]:9443/prom"
    assert parse_target("http://prom.example").display == "http://prom.example"
    assert parse_target("https://prom.example:443/").port == 443
    assert redact('no "p@ss", p%40ss or p@ss here', ["p@ss", ""]) == 'no "***", *** or *** here'
    assert redact('{"error": "a\\"b"}', ['a"b']) == '{"error": "***"}'  # as JSON escapes it


# ---------------------------------------------------------------------------------- deadline ---

DRIP_S = 0.02  # one byte every 20 ms: each read gets a byte well within any per-read timeout


def drip(server: Server, part: str) -> Responder:
    """Sends a valid start, then one byte at a time, for at most 4,000 bytes (80 s), in the
    headers or in the body; stops when the client goes away."""

    def respond(h: http.server.BaseHTTPRequestHandler, req: Request) -> None:
        if part == "headers":
            h.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        else:
            h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 4000\r\n\r\n")
        h.wfile.flush()
        try:
            for _ in range(4000):
                h.wfile.write(b"a")
                h.wfile.flush()
                server.sent += 1
                time.sleep(DRIP_S)
        except OSError:
            pass  # the client hung up, as it should

    return respond


@pytest.mark.parametrize("part", ["headers", "body"])
def test_a_dripping_server_is_cut_off_at_the_total_deadline(serve, part):
    server = serve_late(serve, lambda s: drip(s, part))
    res = export(server.url, "--timeout", "0.5")
    line = failed(res)
    assert line == (
        f"podfit: error: {server.url}/api/v1/query_range: no answer within --timeout 0.5s (the whole export)"
    )
    # cut off after about 0.5 s of dripping (25 bytes); 4,000 would be 80 s: a per-read timeout
    # of 0.5 s never fires, since every read gets its byte within 20 ms
    assert server.sent < 400


def test_a_silent_server_is_cut_off_at_the_deadline():
    with socket.socket() as listener:  # accepts connections (the backlog) and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        line = failed(export(url, "--timeout", "0.3"))
    assert "no answer within --timeout 0.3s" in line


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "abc", "86401"])
def test_timeout_must_be_a_positive_number_of_seconds(value):
    assert "--timeout" in failed(export("http://127.0.0.1:9", "--timeout", value))


# ---------------------------------------------------------------------------------- redirects ---


def redirecting(status: int, location: Callable[[Server, Request], str]) -> Callable[[Server], Responder]:
    """Requests under /old/ are redirected to ``location``; others are answered."""

    def make(server: Server) -> Responder:
        def respond(h: http.server.BaseHTTPRequestHandler, req: Request) -> None:
            if req.path.startswith("/old/"):
                send(h, status, b"", Location=location(server, req))
            else:
                ok(h, req)

        return respond

    return make


@pytest.mark.parametrize(
    "location, why",
    [
        (lambda s, r: "ftp://user:ftp-secret@127.0.0.1/data", "redirect to scheme ftp; only http and https"),
        (lambda s, r: f"http://localhost:{s.port}/api/v1/query_range", "redirect to another host"),
        (lambda s, r: f"http://x:pw-in-location@127.0.0.1:{s.port}/api/", "with a user or password"),
        (lambda s, r: "", "without a Location"),
        (lambda s, r: "file:///etc/passwd", "scheme file"),
    ],
)
def test_redirects_leave_neither_scheme_nor_host(serve, location, why):
    server = serve_late(serve, redirecting(302, location))
    line = failed(export(f"http://u:user-secret@127.0.0.1:{server.port}/old"), "secret", "pw-in", "passwd")
    assert line.startswith(f"podfit: error: {server.url}/old/api/v1/query_range: HTTP 302 ")
    assert why in line
    assert len(server.requests) == 1  # never followed


@pytest.mark.parametrize("status, method", [(302, "GET"), (301, "GET"), (303, "GET"), (307, "POST"), (308, "POST")])
def test_redirects_on_the_same_host_are_followed_with_the_credentials(serve, status, method):
    server = serve_late(serve, redirecting(status, lambda s, r: r.path.replace("/old", "", 1)))
    res = export(server.url.replace("http://", "http://u:pw@") + "/old")
    assert res.exit_code == 0, res.output
    followed = [r for r in server.requests if not r.path.startswith("/old/")]
    assert len(followed) == 9 and {r.method for r in followed} == {method}
    assert all(r.headers.get("Authorization") == basic("u", "pw") for r in server.requests)
    cpu = followed[0]
    query = cpu.path.partition("?")[2] if method == "GET" else cpu.body.decode()
    assert "container_cpu_usage_seconds_total" in query.replace("%5F", "_")


def test_a_redirect_loop_ends(serve):
    server = serve(lambda h, req: send(h, 307, b"", Location=req.path))
    line = failed(export(server.url))
    assert "more than 5 redirects" in line and len(server.requests) == 6


def test_follow_stays_on_the_host_and_never_drops_to_http():
    assert follow(301, "/prom/api", "http", "h", 80, "/x") == ("http", 80, "/prom/api")
    assert follow(301, "https://H:8443/a?b=1", "http", "h", 80, "/x") == ("https", 8443, "/a?b=1")
    with pytest.raises(ValueError, match="from https to http"):
        follow(302, "http://h/a", "https", "h", 443, "/x")
    with pytest.raises(ValueError, match="another host") as e:
        follow(302, "//evil.example/a", "https", "h", 443, "/x")
    assert "evil" not in str(e.value)


# ----------------------------------------------------------------------------------- limits ---


def test_an_answer_over_the_byte_cap_is_refused(serve):
    big = json.dumps(answer("/api/v1/query_range", SERIES * 2000)).encode()

    def close_delimited(h: http.server.BaseHTTPRequestHandler, req: Request) -> None:
        h.wfile.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + big)  # no Content-Length
        h.close_connection = True

    for respond in (lambda h, req: send(h, 200, big), close_delimited):
        server = serve(respond)
        line = failed(export(server.url, "--max-bytes", "64Ki"))
        assert "more than the cap of 65536 bytes (--max-bytes)" in line
    server = serve(lambda h, req: send(h, 200, json.dumps(answer(req.path, SERIES * 2000)).encode()))
    res = export(server.url, "--max-bytes", f"{len(big)}")  # the largest answer, exactly at the cap
    assert res.exit_code == 0, res.output


def test_an_answer_over_the_series_cap_is_refused(serve):
    rows = [{"metric": {"namespace": "n", "pod": f"p-{i}", "container": "c"}} for i in range(101)]
    server = serve(lambda h, req: send(h, 200, answer(req.path, rows)))
    line = failed(export(server.url, "--max-series", "100"))
    assert line.endswith("101 series, more than the cap of 100 (--max-series) (cpu query)")
    assert export(server.url, "--max-series", "101").exit_code == 0


@pytest.mark.parametrize(
    "option, value",
    [
        ("--max-series", "0"),
        ("--max-series", "x"),
        ("--max-bytes", "0"),
        ("--max-bytes", "lots"),
        ("--max-bytes", "1e400"),
    ],
)
def test_caps_must_be_positive(option, value):
    assert option in failed(export("http://127.0.0.1:9", option, value))


# ----------------------------------------------------------------------------- bad answers ---

BAD_ANSWERS = [
    (b"[1, 2, 3]", "the answer is a JSON list, not an object"),
    (b"{}", 'the answer has no status "success"'),
    (b'{"status": "success"}', "the answer has no data object"),
    (b'{"status": "success", "data": []}', "data is a JSON list"),
    (b'{"status": "success", "data": {"resultType": "matrix", "result": {}}}', "data.result is a JSON object"),
    (b'{"status": "success", "data": {"resultType": "matrix"}}', "data.result is missing"),
    (b'{"status": "success", "data": {"resultType": "scalar", "result": [1, "2"]}}', "resultType is scalar"),
    (
        b'{"status": "error", "errorType": "execution", "error": "query\\ntimed out"}',
        'status "error", not "success": query timed out',
    ),
    (b'{"status": "success", "data": {"resultType": "matrix", "result": [7]}}', "data.result[0] is a JSON number"),
    (
        b'{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {"a": 1}, "values": []}]}}',
        "metric is not an object of label values",
    ),
    (
        b'{"status": "success", "data": {"resultType": "matrix", "result": [{"values": [[1, "lots"]]}]}}',
        "a sample is not [time, numeric value]",
    ),
    (
        b'{"status": "success", "data": {"resultType": "matrix", "result": [{"values": [["x", "1"]]}]}}',
        "time is not a finite number",
    ),
    (b'{"status": "success", "data": {"resultType": "matrix", "result": [{"values": {}}]}}', "values is not a list"),
    (b"<html><body>Bad gateway</body></html>", "the answer is not JSON (line 1)"),
    (b"\xff\xfe", "the answer is not JSON"),
    (b"[" * 100_000, "the answer is not JSON"),
]


@pytest.mark.parametrize("body, why", BAD_ANSWERS)
def test_an_answer_that_is_no_query_result_is_one_line(serve, body, why):
    server = serve(lambda h, req: send(h, 200, body))
    line = failed(export(server.url.replace("http://", "http://u:secret-pw@")), "secret-pw")
    assert line.startswith(f"podfit: error: {server.url}/api/v1/query_range: "), line
    assert why in line and line.endswith("(cpu query)")


def test_http_errors_name_the_status_and_prometheus_error(serve):
    server = serve(
        lambda h, req: send(h, 400, {"status": "error", "errorType": "bad_data", "error": "parse error\x1b[31m"})
    )
    line = failed(export(server.url))
    assert line == f"podfit: error: {server.url}/api/v1/query_range: HTTP 400 Bad Request: parse error [31m (cpu query)"
    server = serve(lambda h, req: send(h, 502, b"<html>" + b"x" * 100_000 + b"</html>"))
    assert failed(export(server.url)).endswith("HTTP 502 Bad Gateway (cpu query)")


def test_a_refused_connection_is_one_line():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line = failed(export(f"http://u:pw-x@127.0.0.1:{port}"), "pw-x")
    assert line.startswith(f"podfit: error: http://127.0.0.1:{port}/api/v1/query_range: cannot ask the server: ")


def test_check_answer_accepts_what_prometheus_sends():
    assert check_answer(answer("/api/v1/query_range"), True, 1) is None
    assert check_answer(answer("/api/v1/query"), False, 1) is None
    nan = {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1.5, "NaN"]}]}}
    assert check_answer(nan, False, 1) is None
    assert check_answer(answer("/api/v1/query"), True, 1) == "data.resultType is vector, not matrix"
    histogram = {"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "histograms": []}]}}
    assert check_answer(histogram, True, 1) is None
    assert parse_usage(json.dumps(histogram), "cpu.json")[0].samples == ()


@pytest.mark.parametrize(
    "doc, why",
    [
        ({"status": "success", "data": {"resultType": "matrix", "result": "abc"}}, "data.result is not a list"),
        ({"status": "success", "data": {"resultType": "matrix", "result": [3]}}, "not an object"),
        ({"status": "success", "data": {"resultType": "matrix", "result": [{"values": 3}]}}, "not a list"),
        ({"status": "success", "data": {"resultType": "matrix", "result": [{"values": [["1.5e9", "1"]]}]}}, "time"),
        ({"status": "success", "data": {"resultType": "vector", "result": [{"value": [None, "1"]}]}}, "time"),
        ({"kind": "PodfitUsage", "queries": [1]}, "queries is not an object"),
        ({"kind": "PodfitUsage", "queries": {"cpu": [1]}}, "no response object"),
    ],
)
def test_check_usage_reads_malformed_results_as_errors(doc, why):
    with pytest.raises(UsageError, match=why):
        parse_usage(json.dumps(doc), "cpu.json")


# ------------------------------------------------------------------------------------ PromQL ---

HOSTILE = 'a"} or vector(1) #\\\nb'


def test_namespace_must_be_a_dns_label(serve):
    server = serve(ok)
    for ns in (HOSTILE, "Shop", "-a", "a" * 64, ""):
        assert "--namespace" in failed(export(server.url, "--namespace", ns))
    assert not server.requests
    res = export(server.url, "--namespace", "shop-1")
    assert res.exit_code == 0, res.output
    assert 'namespace="shop-1"' in server.requests[0].body.decode().replace("%3D", "=").replace("%22", '"')


def test_label_values_are_one_promql_string_literal():
    literal = promql_string(HOSTILE)
    assert literal == '"a\\"} or vector(1) #\\\\\\nb"'
    assert json.loads(literal) == HOSTILE  # the escapes are Go's (and JSON's): the value comes back
    for q, _ in queries(HOSTILE, 3600).values():
        assert literal in q and "vector(1)" not in q.replace(literal, "") and "\n" not in q


def test_https_to_a_plain_http_server_is_one_line(serve):
    server = serve(ok)
    line = failed(export(server.url.replace("http://", "https://u:tls-pw@")), "tls-pw")
    assert line.startswith(f"podfit: error: https://127.0.0.1:{server.port}/api/v1/query_range: ")


@pytest.mark.parametrize("option, value", [("--window", "9" * 5000 + "d"), ("--step", "0s"), ("--window", "7y")])
def test_durations_are_usage_errors(option, value):
    assert option in failed(export("http://127.0.0.1:9", option, value))


# ---------------------------------------------------------------------------------------- TLS ---


@pytest.fixture
def certificate(tmp_path, monkeypatch) -> ssl.SSLContext:
    """A self-signed certificate for 127.0.0.1 (made by the openssl command), which the export is
    made to trust; returns the server's TLS context."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        capture_output=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    real = ssl.create_default_context
    monkeypatch.setattr("podfit.usage_export.ssl.create_default_context", lambda: real(cafile=str(cert)))
    return server


def test_https_with_basic_auth(serve, certificate):
    server = serve(needs(basic("reader", "tls-pw")), certificate)
    res = export(server.url.replace("https://", "https://reader:tls-pw@"))
    assert res.exit_code == 0, res.output
    assert len(server.requests) == 9


def test_https_dripping_is_cut_off_at_the_deadline(serve, certificate):
    server = serve_late(serve, lambda s: drip(s, "body"), certificate)
    line = failed(export(server.url, "--timeout", "0.5"))
    assert line.endswith("no answer within --timeout 0.5s (the whole export)") and server.sent < 400


def test_an_untrusted_certificate_is_one_line(serve, certificate, monkeypatch):
    monkeypatch.undo()  # the system's CAs, which never signed the test's certificate
    server = serve(ok, certificate)
    line = failed(export(server.url.replace("https://", "https://u:tls-pw@")), "tls-pw")
    assert "TLS: " in line and "CERTIFICATE_VERIFY_FAILED" in line and not server.requests
