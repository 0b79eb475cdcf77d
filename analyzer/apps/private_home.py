"""One app session: a private home, a working directory, and turns run one after another.

Why private: the app's config (Pi's models.json, dsh's settings.yaml) is written into a directory made for this
run and named through the app's own variable (`PI_CODING_AGENT_DIR`, `DSH_HOME`), and HOME points into the run
too, so the user's own config is never read or written. The app gets a placeholder key only; a proxy in front
of the endpoint holds the real one.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.apps.install import InstalledApp
from analyzer.apps.profile import fill
from analyzer.apps.reported import read_reported
from analyzer.atomic import write_text_atomic
from analyzer.errors import AnalyzerError

PLACEHOLDER_KEY = "analyzer-placeholder-key"  # what the app sends; not a secret
TURN_TIMEOUT_S = 600.0


@dataclass
class TurnResult:
    index: int
    prompt: str
    args: list[str]
    exit_code: int
    seconds: float
    stdout: Path
    stderr_tail: str
    reported: list[dict[str, Any]]  # the app's own usage, one entry per model call it reports

    def as_dict(self) -> dict[str, Any]:
        return {"turn": self.index, "prompt": self.prompt, "args": self.args, "exit_code": self.exit_code,
                "seconds": round(self.seconds, 3), "stdout": str(self.stdout), "stderr_tail": self.stderr_tail,
                "reported": self.reported}


@dataclass
class AppSession:
    app: InstalledApp
    base_url: str              # OpenAI-compatible, ending in /v1
    model: str
    run_dir: Path              # everything this session writes
    cwd: Path | None = None    # default: run_dir/work
    env: dict[str, str] = field(default_factory=dict)    # one factor's environment change
    extra_args: list[str] = field(default_factory=list)  # one factor's command-line change
    files: dict[str, str] = field(default_factory=dict)  # one factor's config file (path in home → text)
    max_tokens: int = 16
    api: str | None = None              # the wire API (profile [run.api]); None: the profile's default
    context_window: int | None = None   # the server's context per slot, when it reports one
    turns: list[TurnResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.run_dir = Path(self.run_dir)
        self.home = self.run_dir / "home"
        self.session_dir = self.run_dir / "sessions"
        self.user_home = self.run_dir / "user-home"
        self.cwd = Path(self.cwd) if self.cwd else self.run_dir / "work"

    def placeholders(self) -> dict[str, str]:
        """Values for the profile's `{name}` placeholders; `api_base_url` is the base URL the chosen API needs
        and `context_window` the server's context per slot (else the profile's default)."""
        values = {"base_url": self.base_url.rstrip("/"), "base_root": self.base_url.rstrip("/").removesuffix("/v1"),
                  "model": self.model, "key": PLACEHOLDER_KEY, "max_tokens": str(self.max_tokens),
                  "session_dir": str(self.session_dir), "home": str(self.home), "app_dir": str(self.app.root),
                  "run_dir": str(self.run_dir)}
        api, base_template = self.app.profile.api_base_url(self.api)
        values["api"] = api
        values["api_base_url"] = fill(base_template, values)
        window = self.context_window or self.app.profile.context_window
        if window:
            values["context_window"] = str(window)
        return values

    def prepare(self) -> None:
        """Make the private directories and write the profile's config files, then the factor's."""
        values = self.placeholders()
        assert self.cwd is not None
        for d in (self.home, self.session_dir, self.user_home, self.cwd):
            d.mkdir(parents=True, exist_ok=True)
        for f in self.app.profile.files:
            write_text_atomic(self.home / f.path, fill(f.text, values).lstrip("\n"))
        for rel, text in self.files.items():
            write_text_atomic(self.home / rel, fill(text, values))

    def environment(self) -> dict[str, str]:
        values = self.placeholders()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PI_", "DSH_", "DEEPSEEK_"))}
        env.pop("NODE_OPTIONS", None)
        env["HOME"] = str(self.user_home)
        env["PATH"] = os.pathsep.join([str(self.app.node.parent), env.get("PATH", "")])
        env[self.app.profile.home_env] = str(self.home)
        env[self.app.profile.key_env] = PLACEHOLDER_KEY
        for k, v in self.app.profile.env.items():
            env[k] = fill(v, values)
        for k, v in self.env.items():
            env[k] = fill(v, values)
        return env

    def run_turn(self, prompt: str) -> TurnResult:
        """Run one turn; later turns continue the session when the app can (profile `continue`)."""
        if not self.turns:
            self.prepare()
        values = self.placeholders()
        profile = self.app.profile
        args = [fill(a, values) for a in profile.turn]
        if self.turns and profile.continues:
            args += list(profile.continue_args)
        args += [fill(a, values) for a in self.extra_args]
        args.append(prompt)
        n = len(self.turns) + 1
        out_path = self.run_dir / f"turn-{n}.stdout"
        err_path = self.run_dir / f"turn-{n}.stderr"
        started = time.monotonic()
        try:
            with out_path.open("wb") as out, err_path.open("wb") as err:
                proc = subprocess.run([*self.app.command(), *args], cwd=self.cwd, env=self.environment(),
                                      stdin=subprocess.DEVNULL, stdout=out, stderr=err, timeout=TURN_TIMEOUT_S)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = -1
        except OSError as exc:
            raise AnalyzerError(f"cannot start {profile.name} ({exc.strerror}); run `analyze app install "
                                f"{profile.name}` again") from None
        seconds = time.monotonic() - started
        stderr = err_path.read_text(encoding="utf-8", errors="replace")
        seen = {e["source"] for t in self.turns for e in t.reported}
        # a later run can touch an earlier session's log (dsh does): what an earlier turn reported is not repeated
        reported = [e for e in read_reported(profile.reported, out_path, self.home, since=started_wall(started))
                    if e["source"] not in seen]
        result = TurnResult(n, prompt, args, code, seconds, out_path, _tail(stderr), reported)
        self.turns.append(result)
        return result


def started_wall(monotonic_start: float) -> float:
    """The wall-clock time of a monotonic instant (to find the files a turn wrote)."""
    return time.time() - (time.monotonic() - monotonic_start)


def _tail(text: str, lines: int = 5) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
