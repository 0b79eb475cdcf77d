"""The HTML report in a real headless Chromium: it loads from a file with networking off and shows every hop."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from recheck_fixtures import make_upstreams
from test_report import make_report

from analyzer.report import write_report

pytestmark = pytest.mark.browser

CHROMIUM = next((p for p in (shutil.which("chromium"), "/usr/bin/chromium") if p and Path(p).exists()), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         # any attempt to reach the network fails: the page must not need it
         "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9"]


def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian package 'chromium'; .ci/run installs it)")
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    where = tmp_path_factory.mktemp("browser")
    up = make_upstreams(where / "up")
    report = make_report(up, up.l1, url="https://github.com/fx/lib")
    files = write_report(report, where / "out")
    return files[1], report


def test_loads_offline_and_shows_every_hop(page: tuple[Path, dict], tmp_path: Path) -> None:
    html, report = page
    done = chromium(tmp_path, "--dump-dom", html.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "<nav" in dom and "</main>" in dom  # the whole page was parsed
    nav = dom.split('id="hops"', 1)[1].split("</nav>", 1)[0]
    assert len(report["hops"]) == 7
    for hop in report["hops"]:
        assert f'href="#{hop["id"]}"' in nav and hop["symbol"] in nav
        section = dom.split(f'<section class="hop" id="{hop["id"]}">', 1)[1].split("</section>", 1)[0]
        assert hop["symbol"] in section and hop["path"] in section


def test_inline_css_is_applied(page: tuple[Path, dict], tmp_path: Path) -> None:
    import matplotlib.image as mpimg

    html, _ = page
    shot = tmp_path / "shot.png"
    done = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,900", "--hide-scrollbars", html.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    img = mpimg.imread(str(shot))
    nav_px = [round(float(c) * 255) for c in img[450, 100][:3]]  # inside the fixed hop list
    main_px = [round(float(c) * 255) for c in img[450, 1100][:3]]
    assert nav_px == [246, 248, 250]  # the nav's inline background colour (#f6f8fa)
    assert main_px != nav_px


def test_svg_path_is_in_the_rendered_dom(page: tuple[Path, dict], tmp_path: Path) -> None:
    html, report = page
    done = chromium(tmp_path, "--dump-dom", html.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    figure = done.stdout.split('<figure class="path">', 1)[1].split("</figure>", 1)[0]
    assert "<svg" in figure and figure.count('<g class="hop ') == len(report["hops"])
    for hop in report["hops"]:
        assert f'href="#{hop["id"]}"' in figure


def test_svg_is_drawn_with_boxes_and_a_dashed_possible_edge(tmp_path: Path) -> None:
    """Screenshot the drawing alone and read pixels at the computed box and arrow positions."""
    import matplotlib.image as mpimg
    from test_report import _trace_with_seam

    from analyzer.report.svg import FILL, layout, render_svg

    trace = _trace_with_seam()
    boxes, arrows, width, height = layout(trace)
    page = tmp_path / "svg.html"
    page.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0;background:#fff}'
                    f"</style></head><body>{render_svg(trace)}</body></html>", encoding="utf-8")
    shot = tmp_path / "svg.png"
    done = chromium(tmp_path, f"--screenshot={shot}", "--window-size=800,600", "--hide-scrollbars",
                    "--force-device-scale-factor=1", page.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    img = mpimg.imread(str(shot))

    def px(x: float, y: float) -> list[int]:
        return [round(float(c) * 255) for c in img[int(y), int(x)][:3]]

    def hex_rgb(color: str) -> list[int]:
        return [int(color[i:i + 2], 16) for i in (1, 3, 5)]

    for box in boxes:  # just inside the top-left corner, away from the text and the rounded edge
        assert px(box.x + 4, box.y + 5) == hex_rgb(FILL[box.branch]), box.title
    dark = [sum(px(a.x1, y)) < 3 * 200 for a in arrows if a.possible
            for y in range(int(a.y1) + 3, int(a.y2) - 8)]
    assert any(dark) and not all(dark)  # dashed: stroke and gaps along the line
    solid = next(a for a in arrows if not a.possible and a.x1 == a.x2)
    assert all(sum(px(solid.x1, y)) < 3 * 200 for y in range(int(solid.y1) + 3, int(solid.y2) - 8))
