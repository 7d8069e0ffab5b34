"""The HTML report in a real browser: headless Chromium (Debian's package, installed by scripts/services in CI)
loads the page from a file with the network unreachable, dumps the DOM it built and takes a screenshot; the
screenshot must show the page's text, its coloured headline and the plots' bars. Skipped, saying so, when no
Chromium is installed."""

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import portcast

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WIDTH, HEIGHT = 1200, 4800


def _browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(f"no headless browser found (looked for {', '.join(BROWSERS)}): install Debian's chromium to run "
                "the report's rendering test (scripts/services does in CI)")


def _run(browser, tmp_path, *args):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           f"--user-data-dir={tmp_path / 'profile'}", "--proxy-server=127.0.0.1:9",  # no network
           f"--window-size={WIDTH},{HEIGHT}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import saxpy
    finally:
        sys.path.remove(str(ROOT / "examples"))
    tmp = tmp_path_factory.mktemp("report")
    report = portcast.profile(saxpy.saxpy, saxpy.portcast_inputs(3000), gpu="p100")
    return report.write_html(tmp / "saxpy report.html"), report


def _rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[k:k + 2], 16) for k in (1, 3, 5)], np.float64) / 255.0


def test_browser_builds_the_dom(page, tmp_path):
    browser = _browser()
    path, report = page
    res = _run(browser, tmp_path, "--dump-dom", path.as_uri())
    assert res.returncode == 0, res.stderr[-2000:]
    dom = res.stdout
    assert "<h1>Portcast profile of <code>saxpy</code></h1>" in dom
    assert dom.count("<svg") >= 5 and dom.count("<table>") >= 6
    kernel = report.regions[0].prediction["kernel_s"]
    from portcast.formatting import format_seconds

    assert f"<b>{format_seconds(kernel)}</b>" in dom  # the headline's predicted time


def test_screenshot_shows_text_headline_and_plots(page, tmp_path):
    browser = _browser()
    path, _ = page
    shot = tmp_path / "shot.png"
    res = _run(browser, tmp_path, f"--screenshot={shot}", path.as_uri())
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    from matplotlib.image import imread

    img = imread(shot)[..., :3].astype(np.float64)
    assert img.shape[:2] == (HEIGHT, WIDTH)

    def near(colour, tol=0.06):
        return np.all(np.abs(img - _rgb(colour)) < tol, axis=-1)

    ink = np.all(img < 0.35, axis=-1)  # dark text
    assert ink[:120].mean() > 0.005, "no title text at the top of the page"
    assert ink.mean() > 0.01
    # the plots' bars (matplotlib's first colour) and the headline's green border both rendered
    assert near("#1f77b4").sum() > 2000, "no plot bars visible"
    assert near("#2ca02c").sum() > 200, "no headline border visible"
    # the page is not one colour anywhere it should have content: rows of the upper half all differ from white
    blank_rows = np.all(img[: HEIGHT // 2] > 0.98, axis=(1, 2))
    assert blank_rows.mean() < 0.6
