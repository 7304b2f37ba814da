"""The Prometheus queries behind ``podfit usage export``, the bundle they make, and the HTTP client
that asks them.

Each kind of :data:`podfit.usage.KINDS` has one query. CPU is the 5-minute rate of
``container_cpu_usage_seconds_total`` summed per container; memory the working set; the CFS
periods and throttled periods the raw counters (their increase over the window is taken from the
samples, across restarts); the start time of each container instance
(``container_start_time_seconds``), by which a counter that begins late is told a new container
from a scrape gap and a restart between two samples is seen; the termination reasons kube-state-metrics' gauge, at its maximum over
the window (1 for every reason a container ended with); the owner references of pods, ReplicaSets
and Jobs (kube-state-metrics' ``kube_pod_owner``, ``kube_replicaset_owner``, ``kube_job_owner``),
every one that existed in the window, by which ``check --usage`` finds each pod's workload. Range
queries run over ``[start, end]`` at ``step``; the termination reasons and owners are instant
queries at ``end``. The bundle (``kind:
PodfitUsage``) keeps each query beside its response, so ``check --usage`` knows what it holds.

The client (:class:`PrometheusClient`) is written for a server podfit does not trust: the URL's
user and password become HTTP basic auth and never appear in a message (:func:`parse_target`,
:func:`redact`); the whole export has one deadline, which bounds every socket operation, connecting
and the TLS handshake included (:class:`_DeadlineSocket`); an answer is capped in bytes and series;
redirects are followed only to http(s) on the same host; and an answer that is not a Prometheus
query result is an :class:`ExportError` naming what is wrong, never an exception from deeper down.
"""

from __future__ import annotations

import base64
import http.client
import io
import json
import math
import re
import socket
import ssl
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "queries",
    "export_bundle",
    "promql_string",
    "NAMESPACE",
    "Target",
    "parse_target",
    "redact",
    "check_answer",
    "follow",
    "ExportError",
    "PrometheusClient",
]

_CONTAINER = 'container!="",container!="POD"'

# A Kubernetes namespace name: an RFC 1123 DNS label (at most 63 characters).
NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def promql_string(value: str) -> str:
    """``value`` as a PromQL double-quoted string literal. PromQL unquotes strings as Go does; the
    escapes JSON writes without ``ensure_ascii`` (``\\"``, ``\\\\``, ``\\n``, ``\\uXXXX`` for the
    other control characters) are all Go escapes, and no character ends the literal early."""
    return json.dumps(value, ensure_ascii=False)


def _selector(namespace: str | None) -> str:
    return _CONTAINER + (f",namespace={promql_string(namespace)}" if namespace else "")


def queries(namespace: str | None, window_s: int) -> dict[str, tuple[str, bool]]:
    """Kind → (PromQL, range query?)."""
    sel = _selector(namespace)
    ns = f"{{namespace={promql_string(namespace)}}}" if namespace else ""
    # a controller's references (and kube-state-metrics' "<none>" of an object without an owner)
    owner = 'owner_is_controller!="false"' + (f",namespace={promql_string(namespace)}" if namespace else "")
    return {
        "cpu": (f"sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{{{sel}}}[5m]))", True),
        "memory": (f"container_memory_working_set_bytes{{{sel}}}", True),
        "periods": (f"container_cpu_cfs_periods_total{{{sel}}}", True),
        "throttled": (f"container_cpu_cfs_throttled_periods_total{{{sel}}}", True),
        "started": (f"container_start_time_seconds{{{sel}}}", True),
        "terminated": (f"max_over_time(kube_pod_container_status_last_terminated_reason{ns}[{window_s}s])", False),
        **{
            kind: (f"max_over_time({metric}{{{owner}}}[{window_s}s])", False)
            for kind, metric in (
                ("pod_owner", "kube_pod_owner"),
                ("replicaset_owner", "kube_replicaset_owner"),
                ("job_owner", "kube_job_owner"),
            )
        },
    }


def export_bundle(
    get: Callable[[str, str, Mapping[str, str]], Any],
    start: int,
    end: int,
    step: int,
    namespace: str | None = None,
) -> tuple[str, dict[str, int]]:
    """Run every query through ``get(kind, api_path, params) -> checked answer`` and bundle the
    answers: the bundle's JSON text and the number of series of each kind. Each answer is written
    out compactly as soon as it arrives and its parsed form dropped, so the memory an export holds
    is one parsed answer and the text of the others, not every answer parsed at once."""
    header = {
        "apiVersion": "podfit.io/v1alpha1",
        "kind": "PodfitUsage",
        "window": {"start": start, "end": end, "step": step},
    }
    parts = [json.dumps(header)[:-1], ',\n "queries": {']
    counts: dict[str, int] = {}
    for kind, (q, ranged) in queries(namespace, end - start).items():
        if ranged:
            params = {"query": q, "start": str(start), "end": str(end), "step": str(step)}
            response = get(kind, "/api/v1/query_range", params)
        else:
            response = get(kind, "/api/v1/query", {"query": q, "time": str(end)})
        counts[kind] = len(response["data"]["result"])
        text = json.dumps(response, separators=(",", ":"))
        del response
        comma = "," if len(parts) > 2 else ""
        parts += [f'{comma}\n {json.dumps(kind)}: {{"query": {json.dumps(q)},\n  "response": ', text, "}"]
        del text
    parts.append("\n }\n}\n")
    return "".join(parts), counts


# ------------------------------------------------------------------------------ the server ---


class ExportError(Exception):
    """The export failed; the message is one line that names the URL without credentials."""


@dataclass(frozen=True)
class Target:
    """A Prometheus base URL split into what is connected to and the credentials it carried."""

    scheme: str  # http or https
    host: str  # as written (an IPv6 address without brackets)
    port: int
    path: str  # the base path, without a trailing slash ("" or "/prometheus")
    username: str | None = None
    password: str | None = None

    @property
    def display(self) -> str:
        """The URL as messages show it: never the user or the password."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        port = "" if self.port == default else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.path}"


def parse_target(url: str) -> Target:
    """The base URL given to ``--prometheus``; ValueError (a message that never holds the URL's
    userinfo) when it is not an http(s) URL podfit can use."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
    except ValueError:
        raise ValueError("not a URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError("expected an http:// or https:// URL")
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not parts.hostname:
        raise ValueError("the URL names no host")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raise ValueError("the URL's port is not a number from 1 to 65535")
    if parts.query or parts.fragment:
        raise ValueError("the base URL takes no query (?…) or fragment (#…)")
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in hostport + parts.path):
        raise ValueError("the URL's host or path holds a space or a control character")
    username = password = None
    if at:
        user, colon, pw = userinfo.partition(":")
        username = urllib.parse.unquote(user)
        password = urllib.parse.unquote(pw) if colon else ""
        if ":" in username:
            raise ValueError("the user name in the URL holds a ':', which basic auth cannot carry")
    return Target(
        scheme=scheme,
        host=parts.hostname,
        port=port or (443 if scheme == "https" else 80),
        path=parts.path.rstrip("/"),
        username=username,
        password=password,
    )


def redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret (and its percent-encoded and JSON-escaped forms) replaced by ***."""
    forms: set[str] = set()
    for s in secrets:
        if s:
            forms.update((s, urllib.parse.quote(s, safe=""), json.dumps(s)[1:-1]))
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    return text


def _one_line(text: str, limit: int = 200) -> str:
    """A server's text fit for one line of a terminal: control characters as spaces, shortened."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _is_number(value: Any) -> bool:
    """A Prometheus sample value or timestamp: a number, or a string of one (NaN and ±Inf included)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if not isinstance(value, str) or len(value) > 64:
        return False
    try:
        float(value)
    except ValueError:
        return False
    return True


def check_answer(doc: Any, ranged: bool, max_series: int) -> str | None:
    """What is wrong with ``doc`` as the answer to a range (``ranged``) or instant query, or None.
    The text may hold the server's own words (its ``error``), as they are: the caller redacts and
    shortens it."""
    if not isinstance(doc, Mapping):
        return f"the answer is a JSON {_json_type(doc)}, not an object"
    if doc.get("status") != "success":
        error = doc.get("error")
        status = doc.get("status")
        said = f": {error}" if isinstance(error, str) and error else ""
        if isinstance(status, str):
            return f'status "{status[:40]}", not "success"{said}'
        return f'the answer has no status "success"{said}'
    data = doc.get("data")
    if not isinstance(data, Mapping):
        return "the answer has no data object" if data is None else f"data is a JSON {_json_type(data)}"
    expected = "matrix" if ranged else "vector"
    if data.get("resultType") != expected:
        got = data.get("resultType")
        return f"data.resultType is {got[:40] if isinstance(got, str) else _json_type(got)}, not {expected}"
    result = data.get("result")
    if not isinstance(result, list):
        return "data.result is " + ("missing" if result is None else f"a JSON {_json_type(result)}, not a list")
    if len(result) > max_series:
        return f"{len(result)} series, more than the cap of {max_series} (--max-series)"
    for i, r in enumerate(result):
        if not isinstance(r, Mapping):
            return f"data.result[{i}] is a JSON {_json_type(r)}, not an object"
        metric = r.get("metric", {})
        if not isinstance(metric, Mapping) or not all(isinstance(v, str) for v in metric.values()):
            return f"data.result[{i}].metric is not an object of label values"
        field = "values" if ranged else "value"
        samples = r.get("values", []) if ranged else [r.get("value")]  # a native histogram has no values
        if not isinstance(samples, list):
            return f"data.result[{i}].{field} is not a list"
        for pair in samples:
            if not (isinstance(pair, list) and len(pair) == 2 and _is_number(pair[1])):
                return f"data.result[{i}].{field}: a sample is not [time, numeric value]"
            t = pair[0]
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
                return f"data.result[{i}].{field}: a sample's time is not a finite number"
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else type(value).__name__


class _Deadline(TimeoutError):
    """The export's deadline has passed."""


class _DeadlineSocket:
    """A connected socket whose every send and receive may take only the time left before the
    deadline: each operation first sets the socket's timeout to what remains, so a server that
    sends one byte a second cannot stretch a read (http.client reads headers line by line, and a
    socket's timeout alone bounds one receive, not a line)."""

    def __init__(self, sock: socket.socket, deadline: float, clock: Callable[[], float]) -> None:
        self._sock = sock
        self._deadline = deadline
        self._clock = clock
        self._readers = 0  # as with socket.makefile, the socket stays open while a reader is open
        self._closed = False

    def _arm(self) -> None:
        left = self._deadline - self._clock()
        if left <= 0:
            raise _Deadline
        self._sock.settimeout(left)

    def sendall(self, data: bytes) -> None:
        self._arm()
        self._sock.sendall(data)  # since Python 3.5 the timeout bounds the whole sendall

    def recv_into(self, buffer: Any, nbytes: int = 0) -> int:
        self._arm()
        return self._sock.recv_into(buffer, nbytes)

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        self._readers += 1
        return io.BufferedReader(_DeadlineReader(self))

    def close(self) -> None:
        self._closed = True
        if not self._readers:
            self._sock.close()

    def _reader_closed(self) -> None:
        self._readers -= 1
        if self._closed and not self._readers:
            self._sock.close()


class _DeadlineReader(io.RawIOBase):
    def __init__(self, sock: _DeadlineSocket) -> None:
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self._sock.recv_into(buffer)

    def close(self) -> None:
        if not self.closed:
            self._sock._reader_closed()
        super().close()


class _Connection(http.client.HTTPConnection):
    """An HTTP connection whose connect and every later socket operation end by the deadline."""

    def __init__(self, host: str, port: int, deadline: float, clock: Callable[[], float]) -> None:
        self._deadline, self._clock = deadline, clock
        super().__init__(host, port, timeout=max(deadline - clock(), 0.001))

    def _left(self) -> float:
        left = self._deadline - self._clock()
        if left <= 0:
            raise _Deadline
        return left

    def connect(self) -> None:
        self.timeout = self._left()
        super().connect()
        self.sock = _DeadlineSocket(self.sock, self._deadline, self._clock)  # type: ignore[assignment]


class _TLSConnection(_Connection):
    default_port = 443

    def __init__(self, host: str, port: int, deadline: float, clock: Callable[[], float]) -> None:
        super().__init__(host, port, deadline, clock)
        self._context = ssl.create_default_context()

    def connect(self) -> None:
        self.timeout = self._left()
        http.client.HTTPConnection.connect(self)
        raw = self.sock
        raw.settimeout(self._left())  # the TLS handshake's timeout is its total time (Python 3.5+)
        self.sock = _DeadlineSocket(  # type: ignore[assignment]
            self._context.wrap_socket(raw, server_hostname=self.host), self._deadline, self._clock
        )


_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_REDIRECTS = 5
_ERROR_BODY = 64 * 1024  # of an error answer, enough for Prometheus' {"error": ...}


class PrometheusClient:
    """Asks one Prometheus; every call shares the deadline ``timeout_s`` seconds after creation."""

    def __init__(
        self,
        target: Target,
        *,
        bearer_token: str | None = None,
        timeout_s: float,
        max_bytes: int,
        max_series: int,
        clock: Callable[[], float] = time.monotonic,
        user_agent: str = "podfit",
    ) -> None:
        self.target = target
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.max_series = max_series
        self._clock = clock
        self._deadline = clock() + timeout_s
        self._headers = {"Accept": "application/json", "User-Agent": user_agent}
        secrets = [target.password or "", bearer_token or ""]
        if target.username is not None:
            basic = base64.b64encode(f"{target.username}:{target.password}".encode()).decode("ascii")
            self._headers["Authorization"] = "Basic " + basic
            secrets.append(basic)
        elif bearer_token:
            self._headers["Authorization"] = "Bearer " + bearer_token
        self._secrets = tuple(s for s in secrets if s)

    def _fail(self, url: str, what: str) -> ExportError:
        return ExportError(f"{url}: {what}")

    def _foreign(self, text: str, limit: int = 200) -> str:
        """Text the server or the network chose, fit for a message: one line, short, and without
        the credentials (a server may echo the Authorization header it was sent)."""
        return _one_line(redact(text, self._secrets), limit)

    def get(self, kind: str, api_path: str, params: Mapping[str, str]) -> Any:
        """The parsed answer to one query, checked (:func:`check_answer`); ExportError otherwise."""
        t = self.target
        url = t.display + api_path
        body: bytes | None = urllib.parse.urlencode(params).encode()
        method, scheme, host, port, path = "POST", t.scheme, t.host, t.port, t.path + api_path
        try:
            for _ in range(_MAX_REDIRECTS + 1):
                status, reason, location, raw = self._request(url, method, scheme, host, port, path, body)
                if status not in _REDIRECTS:
                    break
                try:
                    scheme, port, path = follow(status, location, scheme, host, port, path)
                except ValueError as e:
                    raise self._fail(url, str(e)) from None
                if status != 307 and status != 308 and method == "POST":
                    # 301, 302 and 303 repeat a POST as a GET: the query goes into the URL
                    method, body = "GET", None
                    path += ("&" if "?" in path else "?") + urllib.parse.urlencode(params)
            else:
                raise self._fail(url, f"more than {_MAX_REDIRECTS} redirects")
        except TimeoutError:  # a socket's timeout, or _Deadline
            raise self._fail(url, f"no answer within --timeout {self.timeout_s:g}s (the whole export)") from None
        except ssl.SSLError as e:
            raise self._fail(url, f"TLS: {self._foreign(str(e))}") from None
        except (OSError, http.client.HTTPException, ValueError) as e:
            raise self._fail(url, f"cannot ask the server: {self._foreign(str(e) or type(e).__name__)}") from None
        if status != 200:
            detail = self._foreign(_error_of(raw))
            raise self._fail(
                url, f"HTTP {status} {self._foreign(reason, 60)}{': ' + detail if detail else ''} ({kind} query)"
            )
        try:
            doc = json.loads(raw)
            del raw  # the parsed answer is what is kept
        except ValueError as e:  # JSONDecodeError, or bytes that are not UTF-8
            where = f" (line {e.lineno})" if isinstance(e, json.JSONDecodeError) else ""
            raise self._fail(url, f"the answer is not JSON{where} ({kind} query)") from None
        except RecursionError:
            raise self._fail(url, f"the answer is not JSON: nested too deep ({kind} query)") from None
        wrong = check_answer(doc, api_path.endswith("_range"), self.max_series)
        if wrong:
            raise self._fail(url, f"{self._foreign(wrong, 300)} ({kind} query)")
        return doc

    def _request(
        self, url: str, method: str, scheme: str, host: str, port: int, path: str, body: bytes | None
    ) -> tuple[int, str, str | None, bytes | bytearray]:
        """(status, reason, Location, body) of one request; the body is read only when the status
        is not a redirect, at most ``max_bytes`` of it (an error's, 64 KiB)."""
        cls = _TLSConnection if scheme == "https" else _Connection
        conn = cls(host, port, self._deadline, self._clock)
        try:
            headers = dict(self._headers)
            if body is not None:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            if resp.status in _REDIRECTS:
                return resp.status, resp.reason, resp.getheader("Location"), b""
            cap = self.max_bytes if resp.status == 200 else _ERROR_BODY
            length = resp.getheader("Content-Length")
            if resp.status == 200 and length and length.strip().isdigit() and int(length) > cap:
                raise self._fail(
                    url, f"the answer is {int(length)} bytes, more than the cap of {cap} bytes (--max-bytes)"
                )
            data = bytearray()
            while len(data) <= cap:
                chunk = resp.read(min(1 << 16, cap + 1 - len(data)))
                if not chunk:
                    break
                data += chunk
            if len(data) > cap:
                if resp.status != 200:
                    return resp.status, resp.reason, None, b""  # too long to be Prometheus' error
                raise self._fail(url, f"the answer is more than the cap of {cap} bytes (--max-bytes)")
            return resp.status, resp.reason, None, data
        finally:
            conn.close()


def follow(status: int, location: str | None, scheme: str, host: str, port: int, path: str) -> tuple[str, int, str]:
    """(scheme, port, path and query) a redirect from ``scheme://host:port/path`` leads to; a
    ValueError, whose message names neither the Location nor anything in it, unless it stays on
    ``host`` over http or https and does not fall from https to http (the credentials go along)."""
    if not location:
        raise ValueError(f"HTTP {status} redirect without a Location")
    here = f"{scheme}://{_bracket(host)}:{port}{path}"
    try:
        there = urllib.parse.urlsplit(urllib.parse.urljoin(here, location.strip()))
        there_port = there.port
    except ValueError:
        raise ValueError(f"HTTP {status} redirect to a malformed Location") from None
    new_scheme = there.scheme.lower()
    if new_scheme not in ("http", "https"):
        shown = new_scheme if new_scheme.isascii() and new_scheme.isalnum() and len(new_scheme) <= 20 else "?"
        raise ValueError(f"HTTP {status} redirect to scheme {shown}; only http and https are followed")
    if "@" in there.netloc:
        raise ValueError(f"HTTP {status} redirect to a URL with a user or password; not followed")
    if (there.hostname or "").lower() != host.lower():
        raise ValueError(f"HTTP {status} redirect to another host; only redirects on {_bracket(host)} are followed")
    if scheme == "https" and new_scheme == "http":
        raise ValueError(f"HTTP {status} redirect from https to http; not followed")
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in there.path + there.query):
        raise ValueError(f"HTTP {status} redirect to a Location with spaces or control characters")
    new_port = there_port or (443 if new_scheme == "https" else 80)
    return new_scheme, new_port, (there.path or "/") + (f"?{there.query}" if there.query else "")


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _error_of(raw: bytes | bytearray) -> str:
    """Prometheus' ``error`` of an error answer, on one line; "" when it has none."""
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return ""
    error = doc.get("error") if isinstance(doc, Mapping) else None
    return error if isinstance(error, str) else ""
