"""Re-check (through `analyzer.api`) and notes on the real snapshots (synced into a tmp cache): Pi v0.58.3 →
v0.82.1 with dsh rc.2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DSH_RC2, PI_V0_58_3, PI_V0_82_1, ROOT, snapshot

from analyzer.api import RecheckOptions, open_session, recheck
from analyzer.cli import main

pytestmark = pytest.mark.upstream

FROM = "dsh:packages/core/system-prompt/src/index.ts:renderPrompt"  # rc.2 has two functions named renderPrompt
TO = "parseChunkUsage"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A lock whose urls are the snapshots (dsh rc.2, Pi v0.82.1) and a cache shared by the tests here."""
    dsh = snapshot("deepseek-ai+deepseek-harness", DSH_RC2)
    pi = snapshot("at-inc+pi", PI_V0_58_3)
    snapshot("at-inc+pi", PI_V0_82_1)
    where = tmp_path_factory.mktemp("upstream")
    lock = where / "repos.lock"
    lock.write_text(f'[repos.dsh]\nurl = "{dsh}"\ncommit = "{DSH_RC2}"\n\n'
                    f'[repos.pi]\nurl = "{pi}"\ncommit = "{PI_V0_82_1}"\naliases = ["@mariozechner/pi-ai"]\n')
    return lock, where / "cache"


def test_parse_chunk_usage_moved_and_changed(setup: tuple[Path, Path], tmp_path: Path) -> None:
    lock, cache = setup
    done = recheck(open_session(lock, cache_dir=cache, environ={}),
                   RecheckOptions(FROM, TO, old_commits=[f"pi={PI_V0_58_3}"], out=tmp_path / "reports"))
    result = done.document
    assert done.exit_code == result["exit_code"] and done.exit_code in (1, 2)
    to = result["endpoints"]["to"]
    assert to["old"]["path"] == "packages/ai/src/providers/openai-completions.ts"
    assert to["new"]["path"] == "packages/ai/src/api/openai-completions.ts"
    assert to["changes"] == ["moved-file", "body-changed"] and to["diff"]
    assert result["endpoints"]["from"]["new"] is not None
    if not result["old_path"]["found"]:
        assert result["old_break"]  # where the path was broken at v0.58.3 is said
    report = done.report_path
    assert report is not None
    text = report.read_text()
    assert report.name == f"recheck_{DSH_RC2[:8]}-{PI_V0_58_3[:8]}_{DSH_RC2[:8]}-{PI_V0_82_1[:8]}.md"
    assert "moved from packages/ai/src/providers/openai-completions.ts" in text


def test_shipped_notes_are_current_at_their_pins(setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    lock, cache = setup
    shipped = ROOT / "reports" / "annotations.toml"
    assert main(["--lock", str(lock), "--cache-dir", str(cache), "--json", "annotate", "--annotations",
                 str(shipped)]) == 0
    notes = json.loads(capsys.readouterr().out)
    assert len(notes) >= 9
    assert {n["status"] for n in notes} == {"ok"}, [n["symbol"] for n in notes if n["status"] != "ok"]
