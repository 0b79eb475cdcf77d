"""A command streamed into a log: every line reaches the log and the watcher, and the exit code comes back."""

import sys
from pathlib import Path

from analyzer.procs import stream_to_log


def test_output_goes_to_the_log_and_the_watcher_and_the_exit_code_is_returned(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("earlier run\n")
    seen: list[str] = []
    code = stream_to_log([sys.executable, "-c", "print('one'); import sys; print('two', file=sys.stderr); sys.exit(3)"],
                         log, on_line=seen.append)
    assert code == 3
    assert sorted(seen) == ["one", "two"]  # stderr is merged into the same stream
    text = log.read_text()
    assert text.startswith("earlier run\n$ ") and text.rstrip().endswith(("one\ntwo", "two\none"))
