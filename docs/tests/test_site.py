"""The site in a real browser (``make docs-check``).

Build it, check every page's links and images, open pages in headless Chromium and keep
screenshots:

1. The site is built with warnings as errors (``sphinx -W``; the demos' executed pages come
   from the cache that ``make docs`` filled, so an unchanged site builds in seconds).
2. Every HTML page is read: each link and image to a file of the site must exist, with its
   ``#anchor`` where it names one. Links to other sites are not followed (the build machine
   has no network); the test lists how many there are.
3. The start page and demo pages are served on 127.0.0.1 and opened in Chromium (Debian's
   ``chromium``, headless, driven by the DevTools protocol): no request of the page may fail,
   every image must have loaded (complete, with a width), a demo page must show figures in
   its executed output, and a screenshot of each page (and of a demo's first figure) is kept
   in ``docs/_build/browser/``.
"""

from __future__ import annotations

import base64
import functools
import html.parser
import http.server
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent
HTML = DOCS / "_build" / "html"
SHOTS = DOCS / "_build" / "browser"
#: the pages opened in the browser: the start page and demos with figures (a GIF among them,
#: a mechanism of computed frames)
PAGES = ["index.html", "demos/rotor_campbell.html", "demos/spin_up_beam.html",
         "demos/elastic_slider_crank.html"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def site():
    """The site, built now (warnings are errors)."""
    subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html",
                    str(DOCS), str(HTML)], check=True, cwd=DOCS,
                   env=dict(os.environ, TQDM_DISABLE="1", OMP_NUM_THREADS="1"))
    return HTML


class _Refs(html.parser.HTMLParser):
    """The links, image sources and element ids of one page."""

    def __init__(self):
        super().__init__()
        self.refs: list[tuple[str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key) and not (tag == "link" and a.get("rel") in ("preconnect",)):
                self.refs.append((tag, a[key]))


@functools.lru_cache(maxsize=None)
def _parse(path: pathlib.Path) -> _Refs:
    p = _Refs()
    p.feed(path.read_text(errors="replace"))
    return p


def test_every_link_and_image_of_the_site_resolves(site):
    """Every link and image to a file of the site exists, with the anchor it names."""
    # the pages (the theme's template snippets under _static/ are not)
    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)
    assert len(pages) > 40, "the site has too few pages"
    broken, external = [], set()
    for page in pages:
        for tag, ref in _parse(page).refs:
            url = urllib.parse.urlsplit(ref)
            if url.scheme in ("http", "https"):
                external.add(ref)
                continue
            if url.scheme in ("data", "mailto", "javascript") or \
                    (not url.path and not url.fragment):
                continue
            target = (page.parent / urllib.parse.unquote(url.path)).resolve() if url.path \
                else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: <{tag}> {ref} (no such file)")
            elif url.fragment and target.suffix == ".html" and \
                    url.fragment not in _parse(target).ids:
                broken.append(f"{page.relative_to(site)}: <{tag}> {ref} (no #{url.fragment})")
    assert not broken, f"{len(broken)} broken links or images:\n" + "\n".join(broken[:40])
    print(f"{len(pages)} pages; {len(external)} links to other sites (not followed)")


class _Browser:
    """Headless Chromium driven over the DevTools protocol (one websocket, one page)."""

    def __init__(self, tmp: pathlib.Path):
        websocket = pytest.importorskip("websocket")
        self.profile = tmp / "profile"
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={self.profile}", "--remote-debugging-port=0",
             "--window-size=1280,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        port_file = self.profile / "DevToolsActivePort"
        for _ in range(300):
            if port_file.is_file() and len(port_file.read_text().split()) == 2:
                break
            time.sleep(0.1)
        else:
            self.close()
            raise RuntimeError("Chromium did not start its DevTools endpoint in 30 s")
        port, path = port_file.read_text().split()
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=60,
                                              suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable", session=True)

    def call(self, method: str, session: bool = False, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 60.0) -> dict:
        end = time.time() + timeout
        while time.time() < end:
            for k, ev in enumerate(self.events):
                if ev.get("method") == method:
                    return self.events.pop(k)
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError(f"no {method} in {timeout} s")

    def evaluate(self, expression: str):
        r = self.call("Runtime.evaluate", session=True, expression=expression,
                      returnByValue=True, awaitPromise=True)
        return r["result"].get("value")

    def open(self, url: str) -> list[str]:
        """Load ``url``; the failed requests of the load (as text)."""
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_event("Page.loadEventFired")
        # images decoded, fonts and MathJax done: wait until the page is idle
        self.evaluate("new Promise(r => setTimeout(r, 1500))")
        failed = []
        for ev in self.events:
            p = ev.get("params", {})
            if ev.get("method") == "Network.loadingFailed" and not p.get("canceled"):
                failed.append(f"{p.get('errorText')}: request {p.get('requestId')}")
            if ev.get("method") == "Network.responseReceived" and \
                    p["response"]["status"] >= 400 and \
                    not p["response"]["url"].endswith("/favicon.ico"):  # the browser's own
                failed.append(f"HTTP {p['response']['status']}: {p['response']['url']}")
        return failed

    def screenshot(self, path: pathlib.Path) -> None:
        """The viewport as a PNG file."""
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self):
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        # the whole process group: Chromium's helpers (crashpad, zygotes) outlive the browser
        # and went on writing into the profile as the temporary directory was removed
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=20)
                time.sleep(0.5)   # the helpers' exit after the browser's
            except subprocess.TimeoutExpired:
                continue


@pytest.fixture(scope="module")
def served(site):
    """The built site on http://127.0.0.1:<port>/ for the browser."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


IMAGES = """Array.from(document.images).map(i => ({src: i.getAttribute('src').slice(0, 80),
    ok: i.complete && i.naturalWidth > 0, output: !!i.closest('.cell_output, .output')}))"""
FIRST_FIGURE = """(() => { const i = document.querySelector('.cell_output img, .output img');
    if (!i) return null; i.scrollIntoView({block: 'center'}); const r = i.getBoundingClientRect();
    return {width: r.width, height: r.height}; })()"""


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (make docs-check "
                    "installs Debian's chromium)")
def test_pages_in_chromium(served):
    """The start page and demo pages load in Chromium with every request and image."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        browser = _Browser(pathlib.Path(tmp))
        try:
            for page in PAGES:
                failed = browser.open(served + page)
                assert not failed, f"{page}: failed requests:\n" + "\n".join(failed)
                images = browser.evaluate(IMAGES)
                bad = [i["src"] for i in images if not i["ok"]]
                assert not bad, f"{page}: images that did not load: {bad}"
                name = page.replace("/", "_").replace(".html", "")
                title = browser.evaluate("document.title")
                assert "dolfinx_mbs" in title, (page, title)
                if page.startswith("demos/"):
                    browser.screenshot(SHOTS / f"{name}_top.png")
                    figures = [i for i in images if i["output"]]
                    assert figures, f"{page}: no figure in the executed output"
                    # the page scrolled to its first figure: the screenshot shows it
                    box = browser.evaluate(FIRST_FIGURE)
                    assert box and box["width"] > 100 and box["height"] > 100, (page, box)
                    browser.evaluate("new Promise(r => setTimeout(r, 500))")
                browser.screenshot(SHOTS / f"{name}.png")
                print(f"{page}: {len(images)} images loaded; screenshot "
                      f"{SHOTS.relative_to(DOCS.parent) / (name + '.png')}")
        finally:
            browser.close()


def _public(module) -> list[str]:
    """A module's public names: its ``__all__``, or what it defines without a leading _."""
    import inspect

    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_")
                 and getattr(v, "__module__", None) == module.__name__
                 and (inspect.isclass(v) or inspect.isfunction(v))]
    return list(names)


def test_api_reference_has_every_public_name_with_its_docstring(site):
    """Every public name has its entry and its docstring in the API reference.

    Each documented module's public names have an entry (an anchor) on the module's page,
    each public class and function a docstring of its own, each public constant a doc comment.
    """
    import importlib
    import inspect

    sys.path.insert(0, str(DOCS))
    try:
        import conf
    finally:
        sys.path.pop(0)
    missing, undocumented, count = [], [], 0
    for name in conf.api_modules():
        module = importlib.import_module(name)
        ids = _parse(site / "reference" / "api" / f"{name}.html").ids
        for short in _public(module):
            obj = getattr(module, short)
            if inspect.ismodule(obj):
                continue
            count += 1
            if f"{name}.{short}" not in ids:
                missing.append(f"{name}.{short}")
            if inspect.isclass(obj) or inspect.isroutine(obj):
                doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
            else:  # data: its doc comment (#:) where it is defined
                doc = conf._attr_doc(name, short)
            if not (doc or "").strip():
                undocumented.append(f"{name}.{short}")
    assert count > 200
    assert not missing, f"public names without an entry in the API reference: {missing}"
    assert not undocumented, f"public names without a docstring: {undocumented}"


def test_every_demo_page_shows_its_output_and_figures(site):
    """Each demo has a page with executed output; a demo that shows pictures has them in it."""
    demos = sorted((DOCS.parent / "demos").glob("*.py"))
    assert demos
    for demo in demos:
        text = (site / "demos" / f"{demo.stem}.html").read_text()
        assert text.count('class="cell_output') >= 1, f"{demo.stem}: no executed output"
        shows = demo.read_text().count("plot.show(")
        # the short versions (make docs-check) leave some pictures out
        if shows and os.environ.get("MBS_DEMO_QUICK") != "1":
            pictures = text.count('<img alt="_images/') + text.count('src="../_images/')
            assert pictures >= 1, f"{demo.stem}: shows pictures, the page has none"
