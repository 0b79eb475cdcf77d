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
