#!/usr/bin/env python3
"""Loads a page in headless Chromium with its image requests held, then lets them go: what the
gallery's placeholder test (Tests/WebImageCommandTests/GalleryBrowserTests.swift) looks at.

    gallery-browser.py CHROMIUM URL OUTDIR COUNT

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe: it reads
commands on its file descriptor 3 and writes answers and events on 4, each message JSON ended
by a NUL byte). Requests whose URL has "/image?" in it (the proxy's thumbnails) are held by
the protocol's Fetch domain until this script continues them, so the first screenshot is the
page as it is before any thumbnail has arrived, whatever the timing.

  1. loads URL in a 1280x1600 viewport (device scale 1: a CSS pixel is a screenshot pixel),
     and waits until COUNT image requests are held, the document is parsed, and two frames
     have been painted;
  2. writes OUTDIR/held.png and OUTDIR/cells.json: each <img>'s rectangle, alt text,
     data-thumbhash and inline background, as the page has them then;
  3. lets every held request go (and every later one), waits until every image has loaded or
     failed and two more frames have been painted;
  4. writes OUTDIR/loaded.png and prints the page's count, "loaded N/M".

Nothing here waits on a clock except a deadline (DEADLINE seconds, default 120) after which it
gives up with a message and exit status 1.
"""
import base64
import json
import os
import select
import subprocess
import sys
import time

IMAGE_PATTERN = "*/image?*"
TWO_FRAMES = "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"
CELLS = """JSON.stringify([...document.images].map(image => {
  const box = image.getBoundingClientRect();
  return { alt: image.alt, x: box.x, y: box.y, width: box.width, height: box.height,
           thumbHash: image.dataset.thumbhash || null, background: image.style.backgroundImage };
}))"""
ALL_SETTLED = """Promise.all([...document.images].map(image => image.complete ? null : new Promise(done => {
  image.addEventListener("load", done, { once: true });
  image.addEventListener("error", done, { once: true });
}))).then(() => """ + TWO_FRAMES + """).then(() => document.body.dataset.imagesLoaded || "")"""


class Failure(Exception):
    pass


class Browser:
    """One headless Chromium and its protocol pipe."""

    def __init__(self, chromium, profile, deadline):
        self.deadline = deadline
        child_reads, self.commands = os.pipe()
        self.answers, child_writes = os.pipe()
        arguments = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                     "--mute-audio", "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank"]
        # The protocol's descriptors must be 3 and 4 in Chromium: bash puts them there, then execs it.
        self.process = subprocess.Popen(
            ["bash", "-c", 'exec "$@" 3<&"$R" 4>&"$W"', "bash"] + arguments,
            env=dict(os.environ, R=str(child_reads), W=str(child_writes)),
            pass_fds=(child_reads, child_writes), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(child_reads)
        os.close(child_writes)
        self.buffer = b""
        self.events = []
        self.last_id = 0

    def receive(self):
        while b"\0" not in self.buffer:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise Failure("Chromium did not answer before the deadline")
            ready, _, _ = select.select([self.answers], [], [], remaining)
            if ready:
                chunk = os.read(self.answers, 1 << 20)
                if not chunk:
                    raise Failure("Chromium closed its protocol pipe (exit status %s)" % self.process.poll())
                self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method, params=None, session=None):
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.commands, data):]
        while True:
            answer = self.receive()
            if answer.get("id") == self.last_id:
                if "error" in answer:
                    raise Failure("%s: %s" % (method, answer["error"]))
                return answer.get("result", {})
            self.events.append(answer)

    def event(self, method):
        """The next event `method`, queued or to come."""
        for index, queued in enumerate(self.events):
            if queued.get("method") == method:
                return self.events.pop(index)
        while True:
            message = self.receive()
            if message.get("method") == method:
                return message
            self.events.append(message)

    def evaluate(self, session, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session)
        if "exceptionDetails" in result:
            raise Failure("the page's script failed: %s" % result["exceptionDetails"])
        return result["result"].get("value")

    def screenshot(self, session, path):
        shot = self.call("Page.captureScreenshot", {"format": "png"}, session)
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))

    def close(self):
        try:
            self.call("Browser.close")
        except Failure:
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def run(chromium, url, outdir, count, deadline):
    browser = Browser(chromium, os.path.join(outdir, "profile"), deadline)
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 1600, "deviceScaleFactor": 1, "mobile": False}, session)
        browser.call("Fetch.enable", {"patterns": [{"urlPattern": IMAGE_PATTERN, "requestStage": "Request"}]}, session)
        browser.call("Page.enable", {}, session)
        browser.call("Page.navigate", {"url": url}, session)
        held = [browser.event("Fetch.requestPaused")["params"]["requestId"] for _ in range(count)]
        browser.event("Page.domContentEventFired")
        browser.evaluate(session, TWO_FRAMES)
        browser.screenshot(session, os.path.join(outdir, "held.png"))
        with open(os.path.join(outdir, "cells.json"), "w") as file:
            file.write(browser.evaluate(session, CELLS))
        # Every request held so far goes on, then the domain is off: later ones are not held.
        held += [event["params"]["requestId"] for event in browser.events if event.get("method") == "Fetch.requestPaused"]
        browser.events = [event for event in browser.events if event.get("method") != "Fetch.requestPaused"]
        for request in held:
            browser.call("Fetch.continueRequest", {"requestId": request}, session)
        browser.call("Fetch.disable", {}, session)
        loaded = browser.evaluate(session, ALL_SETTLED)
        browser.screenshot(session, os.path.join(outdir, "loaded.png"))
        print("loaded %s" % loaded)
    finally:
        browser.close()


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    chromium, url, outdir, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    deadline = time.monotonic() + float(os.environ.get("DEADLINE", "120"))
    try:
        run(chromium, url, outdir, count, deadline)
    except Failure as failure:
        sys.exit("gallery-browser: %s" % failure)


if __name__ == "__main__":
    main()
