#!/usr/bin/env python3
"""Loads HTML pages in one headless Chromium (used by browser_html*.sh).

usage: cdp_shots.py BROWSER WIDTHxHEIGHT OUTDIR PAGE.html...

For each PAGE it writes OUTDIR/NAME.png (a screenshot of the window), OUTDIR/NAME.dom (the DOM
after the load event, as --dump-dom prints it) and OUTDIR/NAME.chromium.log (one line per console
message, uncaught exception and browser warning or error, in the words Chromium's own log uses:
"CONSOLE(...)", "Uncaught ...", "Failed to load resource ...", "Refused to ..."). One browser serves
every page through the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages ended by
NUL on fds 3 and 4), instead of a browser start per page. Exit 1 when the browser cannot be driven;
a page that does not load gets no .png.
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

PAGE_TIMEOUT = 120
# What --dump-dom prints: the doctype, then the document element.
DOM_EXPR = ('(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + "\\n" : "")'
            ' + document.documentElement.outerHTML')


class Browser:
    def __init__(self, exe, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        # The child reads commands on fd 3 and writes replies and events on fd 4.
        # Copies above 4 first, so that placing one on fd 3 or 4 cannot overwrite the other.
        hi_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        hi_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)

        def fds():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
                "--hide-scrollbars", "--user-data-dir=" + profile, "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=fds, close_fds=False)
        for fd in {to_child_r, from_child_w, hi_r, hi_w}:
            os.close(fd)
        self.next_id = 0
        self.buf = b""
        self.events = []

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_child], [], [], left)[0]:
                raise TimeoutError("no reply from the browser")
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise EOFError("the browser closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=PAGE_TIMEOUT):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"].get("message")))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method, session, timeout=PAGE_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev.get("method") == method and ev.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def log_lines(events, session):
    lines = []
    for ev in events:
        if ev.get("sessionId") != session:
            continue
        p = ev.get("params", {})
        if ev.get("method") == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            lines.append("CONSOLE(%s): %s" % (p.get("type"), text))
        elif ev.get("method") == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            lines.append("%s %s" % (d.get("text", "Uncaught"), d.get("exception", {}).get("description", "")))
        elif ev.get("method") == "Log.entryAdded":
            e = p.get("entry", {})
            if e.get("level") in ("warning", "error"):
                lines.append("CONSOLE(%s %s): %s %s" % (e.get("source"), e.get("level"), e.get("text"), e.get("url", "")))
    return lines


def shoot(b, page, out, width, height):
    name = os.path.basename(page)
    name = name[:-5] if name.endswith(".html") else name
    target = b.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = b.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    try:
        for domain in ("Page", "Runtime", "Log"):
            b.call(domain + ".enable", session=session)
        b.call("Emulation.setDeviceMetricsOverride",
               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        b.call("Page.navigate", {"url": "file://" + os.path.abspath(page)}, session=session)
        b.wait_event("Page.loadEventFired", session)
        dom = b.call("Runtime.evaluate", {"expression": DOM_EXPR,
                                          "returnByValue": True}, session=session)["result"].get("value", "")
        png = b.call("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
        with open(os.path.join(out, name + ".dom"), "w", encoding="utf-8") as f:
            f.write(dom + "\n")
        with open(os.path.join(out, name + ".png"), "wb") as f:
            f.write(base64.b64decode(png))
    finally:
        # Messages that arrive with the last replies are kept: read what is pending first.
        with open(os.path.join(out, name + ".chromium.log"), "w", encoding="utf-8") as f:
            f.write("\n".join(log_lines(b.events, session)) + "\n")
        b.events = [e for e in b.events if e.get("sessionId") != session]
        b.call("Target.closeTarget", {"targetId": target})


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    exe, size, out, pages = argv[0], argv[1], argv[2], argv[3:]
    width, height = (int(x) for x in size.split("x"))
    profile = tempfile.mkdtemp(prefix="oomdx_cdp_")
    b = Browser(exe, profile)
    try:
        b.call("Target.getTargets", timeout=60)
        for page in pages:
            try:
                shoot(b, page, out, width, height)
            except (TimeoutError, RuntimeError) as e:
                print("cdp_shots: %s: %s" % (page, e), file=sys.stderr)
    except (EOFError, TimeoutError, OSError) as e:
        print("cdp_shots: cannot drive %s: %s" % (exe, e), file=sys.stderr)
        return 1
    finally:
        b.close()
        shutil.rmtree(profile, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
