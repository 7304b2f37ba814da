"""Headless Chromium driven over the DevTools protocol, for the HTML report's tests.

Chromium is started with ``--remote-debugging-pipe``: the protocol's JSON messages, each ended by
a NUL byte, go in on file descriptor 3 and come out on 4, so no websocket client and no port are
needed. A :class:`Page` records what a person would notice going wrong: console errors, uncaught
exceptions, log entries of level error (Content-Security-Policy violations among them) and every
network request other than the page's own file.

Chromium is Debian's package (``make chromium`` installs it); :func:`find_chromium` names the binary.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["find_chromium", "Browser", "Page", "ChromiumError"]

# Keep Chromium off the network whatever the page asks: no proxy can be reached and no name resolves.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--mute-audio",
    "--hide-scrollbars",
    "--proxy-server=http://127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND",
)


class ChromiumError(RuntimeError):
    pass


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One Chromium process; :meth:`open` loads a page in a new tab."""

    def __init__(self, binary: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="podfit-chromium-")
        # Chromium reads the protocol on fd 3 and writes on fd 4. The child's ends are moved above
        # fd 10 first (so that placing one cannot overwrite the other) and put on 3 and 4 between
        # fork and exec; close_fds stays off because it would close 3 and 4 again after that.
        # Every other descriptor of this process is close-on-exec (os.pipe's default).
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        child_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_chrome_r)
        os.close(from_chrome_w)

        def child_fds() -> None:
            os.dup2(child_r, 3)  # dup2 leaves the copy inheritable: it survives the exec
            os.dup2(child_w, 4)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=child_fds,
        )
        os.close(child_r)
        os.close(child_w)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    # -- the protocol ------------------------------------------------------------------------
    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        msg: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == ident:
                if "error" in reply:
                    raise ChromiumError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChromiumError("no answer from Chromium in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise ChromiumError(f"Chromium closed the pipe (exit {self.proc.poll()})")
                self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)

    def wait_event(self, method: str, session: str, timeout: float | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + (timeout or self.timeout)
        seen = 0
        while True:
            for e in self.events[seen:]:
                if e.get("method") == method and e.get("sessionId") == session:
                    return e
            seen = len(self.events)
            self.events.append(self._read(deadline))

    def open(self, url: str, width: int = 1280, height: int = 900, dark: bool = False) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        scheme = "dark" if dark else "light"
        self.send(
            "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]}, session
        )
        page = Page(self, session, url, len(self.events))
        self.send("Page.navigate", {"url": url}, session)
        self.wait_event("Page.loadEventFired", session)
        return page

    def close(self) -> None:
        try:
            os.write(self._w, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, session: str, url: str, first_event: int) -> None:
        self.browser = browser
        self.session = session
        self.url = url
        self._first = first_event

    def eval(self, expression: str) -> Any:
        res = self.browser.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}, self.session
        )
        if "exceptionDetails" in res:
            raise ChromiumError(f"{expression}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def _events(self) -> list[dict[str, Any]]:
        return [e for e in self.browser.events[self._first :] if e.get("sessionId") == self.session]

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries (CSP violations among them)."""
        out = []
        for e in self._events():
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:500])
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}".strip())
        return out

    def requests(self) -> list[str]:
        """URLs the page requested, its own file excepted."""
        return [
            e["params"]["request"]["url"]
            for e in self._events()
            if e.get("method") == "Network.requestWillBeSent" and e["params"]["request"]["url"] != self.url
        ]

    def screenshot(self, path: Path) -> None:
        data = self.browser.send(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, self.session
        )["data"]
        path.write_bytes(base64.b64decode(data))

    def pdf(self) -> bytes:
        return base64.b64decode(self.browser.send("Page.printToPDF", {}, self.session)["data"])
