"""The report page in a real headless browser (`make report-check`; needs Debian's chromium,
which the make target installs). Not part of `make test`: it takes a browser and a minute.

It runs a small three-level sweep, writes its report, and opens report.html in headless
Chromium from the file alone (no network, no side files: the page must be self-contained):

1. the DOM after the page's scripts ran has one drawn plotly figure (an ``svg.main-svg``) per
   figure of the page, and no figure left empty;
2. a full-page screenshot shows the figures: the policies' trace colours cover enough pixels
   (a page whose scripts failed shows tables and empty boxes only), and the CSV/JSON download
   links are in the page;
3. in a 1366x768 window (a laptop's first screen), the answer fits: the headline and the whole
   figure of the paired difference against load end above 768 px; no figure's toolbar (the
   modebar) covers one of its titles; the log load axis labels its ticks with whole numbers of
   rule 2's steps (1, 1.5, 2, 3, 5, 7 per decade), not plotly's lone minor digits. A copy of the
   page with a measuring script appended is what is opened for this.

Exit status 0 when all hold, 1 otherwise (with what was missing); the screenshot is kept at
the path printed.
"""

from __future__ import annotations

import json
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
sweep = [2, 4, 8]
[session]
think_time = { kind = "fixed", ms = 200 }
[model.script]
kind = "generated"
end_probability = 0.3
tool_calls = { kind = "uniform", low = 1, high = 3 }
[model.endpoint]
capacity = 3
latency_growth = 0.5
"""
# plotly's default colours of the first three policies (toolturn.report.interactive.COLOURS).
TRACE_COLOURS = ((0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E), (0x2C, 0xA0, 0x2C))
MIN_PIXELS_PER_COLOUR = 2_000
WIDTH, HEIGHT = 1280, 9000
FIRST_SCREEN = 1366, 768
TICK_STEPS = (1, 1.5, 2, 3, 5, 7)
# Appended to a copy of the page: once plotly has drawn, the boxes that check 3 needs, as JSON
# in a <pre id="layout"> that --dump-dom prints.
MEASURE = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const box = (e) => {
    const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  };
  const meet = (a, b) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
  const answer = document.querySelector(".answer, .headline");
  const first = document.getElementById("paired-by-load");
  const found = {answer: answer && box(answer), figure: first && box(first), covered: [], bars: 0,
                 ticks: [...document.querySelectorAll("#paired-by-load .xtick text")]
                   .map((t) => t.textContent)};
  for (const div of document.querySelectorAll(".plotly-graph-div")) {
    const bar = div.querySelector(".modebar");
    if (!bar) continue;
    found.bars += 1;
    for (const title of div.querySelectorAll(".annotation-text, .gtitle")) {
      if (meet(box(bar), box(title))) found.covered.push(div.id + ": " + title.textContent);
    }
  }
  const out = document.createElement("pre");
  out.id = "layout";
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
}, 1000));
</script>"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    sys.exit("report-check: no chromium on PATH (make report-check installs Debian's)")


def browse(
    browser: str, page: Path, *flags: str, size: tuple[int, int] = (WIDTH, HEIGHT)
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--virtual-time-budget=20000", f"--window-size={size[0]},{size[1]}", *flags,
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
    failures += first_screen_failures(browser, page)
    print(f"figures in page: {figures}, plotly svg layers drawn: {drawn}; screenshot: {shot}")
    for failure in failures:
        print(f"report-check: FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


def first_screen_failures(browser: str, page: Path) -> list[str]:
    """Check 3, on a copy of `page` with `MEASURE` appended, in a 1366x768 window."""
    measured = page.with_name("measured.html")
    html = page.read_text(encoding="utf-8")
    measured.write_text(html.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = browse(browser, measured, "--dump-dom", size=FIRST_SCREEN).stdout
    found = re.search(r'<pre id="layout">(.*?)</pre>', dom, re.S)
    if found is None:
        return ["the measuring script left no layout (did the page's scripts run?)"]
    layout = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    print(f"first screen {FIRST_SCREEN}: headline ends at {layout['answer'][3]:.0f} px, "
          f"paired-by-load figure at {layout['figure'][3]:.0f} px; {layout['bars']} toolbars; "
          f"load ticks {layout['ticks']}")
    failures = []
    height = FIRST_SCREEN[1]
    for name in ("answer", "figure"):
        if layout[name] is None or layout[name][3] > height:
            failures.append(f"the {name} does not fit the first screen ({layout[name]})")
    if layout["bars"] == 0:
        failures.append("no figure has a toolbar to check")
    failures += [f"the toolbar covers the title {title!r}" for title in layout["covered"]]
    ticks = [float(text.replace("\u2212", "-")) for text in layout["ticks"]]
    readable = all(
        any(abs(tick - step * 10.0**decade) < 1e-9 * tick
            for step in TICK_STEPS for decade in range(-3, 7))
        for tick in ticks
    )
    if len(ticks) < 3 or not readable:
        failures.append(f"the load axis's ticks are not rule 2's: {layout['ticks']}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
