"""A real headless Chromium for tests, driven over the DevTools protocol on a pipe.

``--remote-debugging-pipe`` makes Chromium read NUL-terminated JSON commands on fd 3 and
write its answers and events on fd 4, so no port, no WebSocket client and no extra
package is needed. Every wait is bounded (``timeout`` seconds): a hung browser fails the
test with :class:`BrowserError`, it never hangs it.

The browser is the distribution's package (``chromium``), installed by ``.ci/run``; a
test using :func:`chromium_path` skips without it, unless ``SKILLRT_BROWSER_REQUIRED``
is set (CI), where it fails.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

#: The launch flags the project uses everywhere (CI containers have no sandbox or GPU).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserError(RuntimeError):
    """The browser did not answer in time, or answered with an error."""


def chromium_path() -> str | None:
    """The Chromium executable on PATH, or None."""
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageReport:
    """What a loaded page did: console errors, exceptions, requests, and a screenshot."""

    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    log_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    screenshot: bytes = b""
    evaluated: dict[str, Any] = field(default_factory=dict)


class Chromium:
    """One headless browser process with a fresh profile (closed by :meth:`close`)."""

    def __init__(self, executable: str, *, timeout: float = 60.0, width: int = 1280,
                 height: int = 2000) -> None:  # fmt: skip
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="skillrt-chromium-")
        cmd_read, self._cmd_write = os.pipe()
        self._out_read, out_write = os.pipe()

        def child_fds() -> None:  # runs in the child, before exec
            os.dup2(cmd_read, 3)
            os.dup2(out_write, 4)

        self._proc = subprocess.Popen(
            [
                executable,
                *FLAGS,
                f"--user-data-dir={self._profile}",
                "--remote-debugging-pipe",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=child_fds,  # the test process starts it before any thread
        )
        os.close(cmd_read)
        os.close(out_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    # -- the protocol ----------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("the browser did not answer in time")
            ready, _, _ = select.select([self._out_read], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._out_read, 1 << 20)
            if not chunk:
                raise BrowserError("the browser closed its DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:  # fmt: skip
        """Send one command and wait (bounded) for its result; events are kept."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._cmd_write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self.events.append(reply)

    def wait_for(self, method: str, session: str | None = None) -> dict[str, Any]:
        """The first event ``method`` (already received or coming), bounded."""
        deadline = time.monotonic() + self.timeout
        while True:
            for k, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    del self.events[k]
                    return event
            self.events.append(self._read_message(deadline))

    # -- a page ------------------------------------------------------------------------
    def load(
        self, url: str, expressions: dict[str, str] | None = None, *, width: int | None = None
    ) -> PageReport:
        """Open ``url`` in a new tab, wait for its load event, then collect what it did
        (console errors, exceptions, error log entries, requests), evaluate
        ``expressions`` in it, and take a full-page PNG screenshot. ``width``: lay the
        page out for a window this many CSS pixels wide."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        if width is not None:
            self.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
                session=session,
            )
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        report = PageReport()
        for name, expression in (expressions or {}).items():
            value = self.send(
                "Runtime.evaluate",
                {"expression": expression, "returnByValue": True, "awaitPromise": True},
                session=session,
            )
            report.evaluated[name] = value.get("result", {}).get("value")
        shot = self.send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True},
            session=session,
        )
        report.screenshot = base64.b64decode(shot["data"])
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                report.console_errors.append(json.dumps(params.get("args")))
            elif method == "Runtime.exceptionThrown":
                report.exceptions.append(json.dumps(params.get("exceptionDetails")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                report.log_errors.append(str(params["entry"].get("text")))
            elif method == "Network.requestWillBeSent":
                report.requests.append(str(params.get("request", {}).get("url")))
        return report

    def ink(self, png: bytes) -> float:
        """Share of the screenshot's pixels that differ from its most common colour (0 for
        a blank page), measured by the browser itself: the PNG decoded in a blank tab's
        canvas."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        data = base64.b64encode(png).decode()
        expression = f"""
            new Promise((resolve, reject) => {{
              const img = new Image();
              img.onload = () => {{
                const c = document.createElement('canvas');
                c.width = img.width; c.height = img.height;
                const g = c.getContext('2d'); g.drawImage(img, 0, 0);
                const px = g.getImageData(0, 0, c.width, c.height).data;
                const counts = new Map();
                for (let i = 0; i < px.length; i += 4) {{
                  const key = (px[i] << 16) | (px[i+1] << 8) | px[i+2];
                  counts.set(key, (counts.get(key) || 0) + 1);
                }}
                let mode = 0;
                for (const n of counts.values()) mode = Math.max(mode, n);
                resolve(1 - mode / (px.length / 4));
              }};
              img.onerror = () => reject('not a PNG');
              img.src = 'data:image/png;base64,{data}';
            }})"""
        value = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=session,
        )
        return float(value["result"]["value"])

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)
        for fd in (self._cmd_write, self._out_read):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
