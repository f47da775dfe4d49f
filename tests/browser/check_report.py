"""The report page in a real headless browser (`make report-check`; needs Debian's chromium,
which the make target installs). Not part of `make test`: it takes a browser and a minute.

It runs a small two-level sweep, writes its report, and opens report.html in headless Chromium
from the file alone (no network, no side files: the page must be self-contained):

1. the DOM after the page's scripts ran has one drawn plotly figure (an ``svg.main-svg``) per
   figure of the page, and no figure left empty;
2. a full-page screenshot shows the figures: the policies' trace colours cover enough pixels
   (a page whose scripts failed shows tables and empty boxes only), and the CSV/JSON download
   links are in the page.

Exit status 0 when both hold, 1 otherwise (with what was missing); the screenshot is kept at
the path printed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

from toolturn.cli import main as sim_main

SCENARIO = """
name = "browser_check"
seed = 11
[load]
mode = "closed"
sessions = 12
sweep = [2, 6]
[session]
think_time = { kind = "fixed", ms = 200 }
[model.script]
kind = "generated"
end_probability = 0.3
tool_calls = { kind = "uniform", low = 1, high = 3 }
"""
# plotly's default colours of the first three policies (toolturn.report.interactive.COLOURS).
TRACE_COLOURS = ((0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E), (0x2C, 0xA0, 0x2C))
MIN_PIXELS_PER_COLOUR = 2_000
WIDTH, HEIGHT = 1280, 9000


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    sys.exit("report-check: no chromium on PATH (make report-check installs Debian's)")


def browse(browser: str, page: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--virtual-time-budget=20000", f"--window-size={WIDTH},{HEIGHT}", *flags,
         page.as_uri()],
        capture_output=True, text=True, timeout=180, check=False,
    )


def near(pixel: tuple[int, ...], colour: tuple[int, int, int], tolerance: int = 24) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel[:3], colour, strict=True))


def main() -> int:
    browser = chromium()
    work = Path(tempfile.mkdtemp(prefix="report-check-"))
    (work / "scenario.toml").write_text(SCENARIO, encoding="utf-8")
    run = work / "run"
    if sim_main(["run", str(work / "scenario.toml"), "--out", str(run)]) != 0:
        return 1
    # The page alone, in a folder of its own: it must not need the PNGs beside it.
    alone = work / "alone"
    alone.mkdir()
    page = alone / "report.html"
    shutil.copy(run / "report" / "report.html", page)
    html = page.read_text(encoding="utf-8")
    figures = len(re.findall(r'class="plotly-graph-div"', html))
    failures = []
    dom = browse(browser, page, "--dump-dom").stdout
    drawn = len(re.findall(r'<svg[^>]*class="main-svg"', dom))
    # plotly draws two main-svg layers per figure (plot and hover layer).
    if figures == 0 or drawn < figures:
        failures.append(f"{drawn} plotly svg layers drawn for {figures} figures")
    for link in ("download-csv", "download-json"):
        if f'id="{link}"' not in dom:
            failures.append(f"no {link} link")
    shot = work / "report.png"
    browse(browser, page, f"--screenshot={shot}")
    if not shot.is_file():
        failures.append("no screenshot")
    else:
        image = Image.open(shot).convert("RGB")
        pixels = list(image.get_flattened_data())
        for colour in TRACE_COLOURS:
            count = sum(1 for pixel in pixels if near(pixel, colour))
            print(f"pixels of trace colour #{bytes(colour).hex()}: {count:,}")
            if count < MIN_PIXELS_PER_COLOUR:
                failures.append(f"trace colour #{bytes(colour).hex()} on {count} pixels only")
    print(f"figures in page: {figures}, plotly svg layers drawn: {drawn}; screenshot: {shot}")
    for failure in failures:
        print(f"report-check: FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
