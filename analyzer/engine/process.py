"""Start, find and stop one llama-server process.

Why a pid *and* its start time: `stop` must end exactly the process `start` launched, never a later process
that happens to reuse the pid, so identity is checked against /proc before any signal is sent.
The API key goes to the server through its environment (`LLAMA_API_KEY`), so it is not on the command
line (`ps`), in the state file, in the log or in the handle's repr.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.engine.options import DEFAULT_OPTIONS, EngineOptions
from analyzer.errors import AnalyzerError

HOST = "127.0.0.1"
THREADS_ENV = "ANALYZER_ENGINE_THREADS"


def free_port() -> int:
    """A port nobody listens on right now (the server binds it a moment later; a clash is retried)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def process_start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot; None if it is gone.

    Without /proc (macOS) only liveness can be checked: 0 for a live pid, so identity is weaker there.
    """
    if not Path("/proc/self/stat").exists():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            return 0
        return 0
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    after_name = raw.rsplit(")", 1)[-1].split()
    try:
        if after_name[0] == "Z":  # a zombie has finished; only its exit status is left
            return None
        return int(after_name[19])
    except (IndexError, ValueError):
        return None


def server_command(binary: Path, model: Path, port: int, *, threads: int,
                   options: EngineOptions = DEFAULT_OPTIONS) -> list[str]:
    """The llama-server command line: the options' slots, context and caches, prompt caching on, /slots on."""
    return [str(binary), "--model", str(model), "--host", HOST, "--port", str(port), *options.server_args(),
            "--threads", str(threads), "--cache-prompt", "--slots", "--jinja", "--no-webui", "--metrics",
            "--alias", "local"]


def default_threads() -> int:
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return max(1, min(2, os.cpu_count() or 1))


@dataclass
class EngineHandle:
    """A running llama-server. `api_key` is kept out of repr so it never shows up in logs or test output."""

    base_url: str
    pid: int
    port: int
    binary: Path
    model: Path
    log: Path
    start_ticks: int | None
    version: str = ""
    llama_cpp_commit: str = ""  # from the sdist's CHANGELOG; the binary itself says "commit unknown"
    options: EngineOptions = field(default_factory=EngineOptions)
    model_facts: dict = field(default_factory=dict)  # the generated model's training context and fixed answer
    api_key: str | None = field(default=None, repr=False)
    _process: subprocess.Popen | None = field(default=None, repr=False, compare=False)

    @property
    def server_url(self) -> str:
        """Without the `/v1` suffix: where /health, /props and /metrics live."""
        return self.base_url.removesuffix("/v1")

    def stop(self, timeout: float = 15.0) -> bool:
        """End exactly this process (SIGTERM, then SIGKILL) and drop its launch record; True if it was running."""
        stopped = stop_process(self.pid, self.start_ticks, timeout=timeout, process=self._process)
        launch_record_path(self.log.parent, self.port).unlink(missing_ok=True)
        return stopped

    def state(self) -> dict:
        """What the state file keeps: never the key, only whether one is required."""
        return {"pid": self.pid, "port": self.port, "base_url": self.base_url, "binary": str(self.binary),
                "model": str(self.model), "log": str(self.log), "start_ticks": self.start_ticks,
                "version": self.version, "llama_cpp_commit": self.llama_cpp_commit,
                "options": self.options.as_dict(), "model_facts": dict(self.model_facts),
                "api_key_required": self.api_key is not None}


def stop_process(pid: int, start_ticks: int | None, *, timeout: float = 15.0,
                 process: subprocess.Popen | None = None) -> bool:
    """Signal `pid` only if it is still the process that started at `start_ticks`."""
    ticks = process_start_ticks(pid)
    if ticks is None or (start_ticks is not None and ticks != start_ticks):
        if process is not None:
            process.poll()
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return True
        if process_start_ticks(pid) != ticks:
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    if process is not None:
        process.wait(timeout=5)
    return True


def health(server_url: str, timeout: float = 2.0) -> tuple[int | None, str]:
    """GET /health: (HTTP status, body); (None, reason) when nothing answers."""
    try:
        with urllib.request.urlopen(f"{server_url}/health", timeout=timeout) as resp:  # noqa: S310 - loopback
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as exc:
        return None, str(exc)


def launch(binary: Path, model: Path, log_dir: Path, *, api_key: str | None = None, port: int | None = None,
           version: str = "", wait_s: float = 120.0, options: EngineOptions = DEFAULT_OPTIONS,
           model_facts: dict | None = None, progress: Callable[[str], None] | None = None) -> EngineHandle:
    """Start llama-server detached (its own session), wait until /health says ok, and leave a launch record
    beside its log (launch_record_path) so whoever reads the server's settings later knows its options."""
    log_dir.mkdir(parents=True, exist_ok=True)
    attempts = 1 if port else 3
    last_error = ""
    for _ in range(attempts):
        chosen = port or free_port()
        log = log_dir / f"llama-server-{chosen}.log"
        env = {k: v for k, v in os.environ.items() if k != "LLAMA_API_KEY" and not k.startswith("LLAMA_ARG_")}
        if api_key is not None:
            env["LLAMA_API_KEY"] = api_key
        with log.open("w", encoding="utf-8") as out:
            proc = subprocess.Popen(server_command(binary, model, chosen, threads=default_threads(), options=options),
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True)
        ticks = process_start_ticks(proc.pid)
        handle = EngineHandle(base_url=f"http://{HOST}:{chosen}/v1", pid=proc.pid, port=chosen, binary=binary,
                              model=model, log=log, start_ticks=ticks, version=version, options=options,
                              model_facts=dict(model_facts or {}), api_key=api_key, _process=proc)
        if progress:
            progress(f"engine: started llama-server pid {proc.pid} on port {chosen}; waiting for /health")
        try:
            ok, last_error = _wait_healthy(handle, proc, wait_s)
        except BaseException:  # Ctrl-C while loading: leave no orphan server behind
            handle.stop()
            raise
        if ok:
            write_launch_record(log_dir, handle)
            return handle
        handle.stop()
        if "bind" not in last_error and "address" not in last_error.lower():
            break
    raise AnalyzerError(f"llama-server did not become healthy ({last_error}); see its log {log}")


def launch_record_path(log_dir: Path, port: int) -> Path:
    return Path(log_dir) / f"llama-server-{port}.launch.json"


def write_launch_record(log_dir: Path, handle: EngineHandle) -> Path:
    """The options a running server was started with, keyed by its port (never the key): llama-server's own
    /props does not report --cache-ram, --cache-reuse or --n-predict, so this is where they are read back."""
    import json

    from analyzer.atomic import write_text_atomic

    path = launch_record_path(log_dir, handle.port)
    write_text_atomic(path, json.dumps(handle.state(), indent=2) + "\n")
    return path


def _wait_healthy(handle: EngineHandle, proc: subprocess.Popen, wait_s: float) -> tuple[bool, str]:
    deadline = time.monotonic() + wait_s
    last = "no answer yet"
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            tail = handle.log.read_text(errors="replace").strip().splitlines()[-3:]
            return False, f"exited with {code}: {' | '.join(tail)}"
        status, body = health(handle.server_url, timeout=1.0)
        if status == 200:
            return True, ""
        last = f"/health {status}: {body[:120]}" if status else body
        time.sleep(0.25)
    return False, f"timed out after {wait_s:.0f}s, last {last}"
