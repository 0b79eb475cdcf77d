"""One external command with its output streamed into a log file, for the long builds and installs.

Shared by the engine build and the app installs: the output goes to the log line by line (a caller may also
watch each line), and an interrupt or error in the caller stops the child — terminated, killed after 10 s —
so no build outlives the `analyze` that started it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path


def stream_to_log(cmd: list[str], log: Path, *, on_line: Callable[[str], None] | None = None,
                  cwd: Path | None = None, env: dict[str, str] | None = None) -> int:
    """Run `cmd` with stdout and stderr appended to `log` (after a `$ cmd` line); its exit code."""
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", bufsize=1, stdin=subprocess.DEVNULL)
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                out.write(line)
                if on_line is not None:
                    on_line(line.rstrip("\n"))
            return proc.wait()
        except BaseException:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
