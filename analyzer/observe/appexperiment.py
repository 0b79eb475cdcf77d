"""App experiments: an experiment file whose requests are built by a real application instead of by the tool.

The file names an app profile and the turns (prompts sent in one continued session) and varies one thing the app
is given — an environment variable, the working directory, one command-line option, one file in its private
config, the idle time between turns — between a control session (values[0]) and one treatment session per further
value. `from_turn` changes the value inside a session (the treatment's turns before it run with the control's
value: a tool set changed mid-session). Anything that would change a second thing is refused before anything
runs, as for the raw experiments.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.observe.experiment import ROUTE_RULE, parse_experiment, read_experiment

APP_FACTORS = ("env", "cwd", "arg", "config-file", "interval", "none")
MID_SESSION_FACTORS = ("env", "arg")   # each turn is its own app process: these can change between turns
_TOP_KEYS = {"name", "question", "description", "endpoint", "app", "vary", "source", "run"}
_ENDPOINT_KEYS = {"base_url", "model", "api_key_env", "timeout_s"}
_APP_KEYS = {"profile", "turns", "api"}
_VARY_KEYS = {"factor", "name", "path", "values", "link_to", "from_turn", "side_prompt"}
_RUN_KEYS = {"max_tokens"}
DEFAULT_MODEL = "local"


@dataclass(frozen=True)
class AppVary:
    factor: str
    values: tuple[str, ...] = ()
    name: str | None = None      # env: the variable
    path: str | None = None      # config-file: the file, relative to the app's private home
    link_to: str | None = None   # env/cwd: make each missing path value a symlink to this (e.g. "{app_dir}")
    from_turn: int | None = None  # env/arg: the value applies from this turn on; earlier turns use values[0]
    side_prompt: str | None = None   # interval: another conversation sent to the endpoint in each pause

    def value_at(self, value: str | None, turn: int) -> str | None:
        """The value in force at `turn` (1-based) of a series whose value is `value`."""
        if self.from_turn is not None and turn < self.from_turn and self.values:
            return self.values[0]
        return value

    def pause_s(self, value: str | None, turn: int) -> float:
        """interval: the idle seconds before `turn` (none before the first)."""
        return float(value or 0) if self.factor == "interval" and turn > 1 else 0.0

    def series(self) -> list[tuple[str, str | None]]:
        """(series name, value) in run order: control at values[0], then one treatment per further value."""
        if self.factor == "none":
            return [("control", None), ("treatment", None)]
        names = ["control", "treatment"] + [f"treatment-{i}" for i in range(2, len(self.values))]
        return list(zip(names, self.values, strict=False))

    def describe(self) -> str:
        what = {"env": f"${self.name}", "config-file": f"file {self.path}", "cwd": "working directory",
                "arg": "command-line option", "interval": "idle seconds between turns", "none": "nothing"}[self.factor]
        when = f", from turn {self.from_turn} on" if self.from_turn is not None else ""
        return f"{self.factor} ({what}{when})"


@dataclass(frozen=True)
class AppExperiment:
    name: str
    question: str
    profile: str
    turns: tuple[str, ...]
    vary: AppVary
    path: str
    base_url: str | None = None   # None: the running local engine
    model: str = DEFAULT_MODEL
    api_key_env: str | None = None
    timeout_s: float = 600.0
    max_tokens: int = 16
    description: str = ""
    source: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, str] = field(default_factory=dict)
    api: str | None = None        # the wire API the app speaks (profile [run.api]); None: the profile's default

    def with_endpoint(self, *, base_url: str | None = None, model: str | None = None,
                      api_key_env: str | None = None) -> AppExperiment:
        overrides = dict(self.overrides)
        for key, value in (("base_url", base_url), ("model", model), ("api_key_env", api_key_env)):
            if value:
                overrides[key] = value
        return replace(self, base_url=base_url or self.base_url, model=model or self.model,
                       api_key_env=api_key_env or self.api_key_env, overrides=overrides)


def is_app_experiment(data: dict[str, Any]) -> bool:
    return "app" in data


def parse_app_experiment(data: dict[str, Any], path: Path) -> AppExperiment:
    label = str(path)
    for key in ("base", "messages", "system", "tools"):
        if key in data:
            raise AnalyzerError(f"experiment {label}: [app] and [{key}] both given; an app experiment's requests are "
                                "built by the app — drop the raw request")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise AnalyzerError(f"experiment {label}: unknown key {unknown[0]}; known here: {', '.join(sorted(_TOP_KEYS))}")
    vary_t = data.get("vary")
    if isinstance(vary_t, list):
        raise AnalyzerError(f"experiment {label}: changes two things ([[vary]] given {len(vary_t)} times); "
                            f"{ROUTE_RULE}")
    name = _need_str(data, "name", label)
    question = _need_str(data, "question", label)
    ep = data.get("endpoint", {})
    if not isinstance(ep, dict):
        raise AnalyzerError(f"experiment {label}: [endpoint] must be a table")
    _known(ep, _ENDPOINT_KEYS, "endpoint.", label)
    base_url = ep.get("base_url")
    if base_url is not None and (not isinstance(base_url, str) or not base_url.startswith(("http://", "https://"))):
        raise AnalyzerError(f"experiment {label}: endpoint.base_url must start with http:// or https://")
    api_key_env = ep.get("api_key_env")
    if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env.isidentifier()):
        raise AnalyzerError(f"experiment {label}: endpoint.api_key_env must be the NAME of an environment variable, "
                            "never the key itself")
    app = data.get("app")
    if not isinstance(app, dict):
        raise AnalyzerError(f"experiment {label}: [app] must be a table with profile and turns")
    _known(app, _APP_KEYS, "app.", label)
    profile = _need_str(app, "profile", label, "app.")
    turns = app.get("turns")
    if not isinstance(turns, list) or not turns or not all(isinstance(t, str) and t.strip() for t in turns):
        raise AnalyzerError(f"experiment {label}: app.turns must be a non-empty list of prompts")
    if not isinstance(vary_t, dict):
        raise AnalyzerError(f"experiment {label}: [vary] is missing; set factor = one of {', '.join(APP_FACTORS)}")
    vary = _parse_vary(vary_t, label)
    run_t = data.get("run", {})
    _known(run_t if isinstance(run_t, dict) else {}, _RUN_KEYS, "run.", label)
    max_tokens = run_t.get("max_tokens", 16) if isinstance(run_t, dict) else 16
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise AnalyzerError(f"experiment {label}: run.max_tokens must be an integer ≥ 1")
    source = data.get("source", {})
    if not isinstance(source, dict):
        raise AnalyzerError(f"experiment {label}: [source] must be a table (hazard id, rule, file:line)")
    from analyzer.apps.profile import load_profiles

    profiles = load_profiles()
    if profile not in profiles:
        raise AnalyzerError(f"experiment {label}: app.profile {profile!r} is not a known app; known: "
                            f"{', '.join(sorted(profiles))}")
    api = app.get("api")
    if api is not None:
        if not isinstance(api, str) or not api:
            raise AnalyzerError(f"experiment {label}: app.api must be the name of an API the app speaks")
        try:
            profiles[profile].api_base_url(api)
        except AnalyzerError as exc:
            raise AnalyzerError(f"experiment {label}: app.api: {exc}") from None
    return AppExperiment(name=name, question=question, profile=profile, turns=tuple(turns), vary=vary, path=label,
                         base_url=base_url, model=str(ep.get("model") or DEFAULT_MODEL), api_key_env=api_key_env,
                         timeout_s=float(ep.get("timeout_s", 600.0)), max_tokens=max_tokens,
                         description=str(data.get("description", "")), source=dict(source), api=api)


def _parse_vary(t: dict[str, Any], label: str) -> AppVary:
    factor = t.get("factor")
    if isinstance(factor, list):
        raise AnalyzerError(f"experiment {label}: changes two things: vary.factor is a list "
                            f"({', '.join(map(str, factor))}); {ROUTE_RULE}")
    if factor not in APP_FACTORS:
        raise AnalyzerError(f"experiment {label}: vary.factor must be one of {', '.join(APP_FACTORS)} (got {factor!r})")
    _known(t, _VARY_KEYS, "vary.", label)
    values = t.get("values", [])
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise AnalyzerError(f"experiment {label}: vary.values must be a list of strings")
    if factor == "none":
        if values:
            raise AnalyzerError(f"experiment {label}: factor \"none\" takes no vary.values (control and treatment are "
                                "two fresh sessions given the same)")
        return AppVary("none")
    if len(values) < 2:
        raise AnalyzerError(f"experiment {label}: factor {factor!r} needs at least two vary.values (control uses "
                            "values[0], the treatment values[1])")
    name = t.get("name")
    path = t.get("path")
    if factor == "env" and (not isinstance(name, str) or not name.isidentifier()):
        raise AnalyzerError(f"experiment {label}: factor \"env\" needs vary.name, the variable "
                            "(e.g. \"PI_PACKAGE_DIR\")")
    if factor == "config-file" and (not isinstance(path, str) or not path or Path(path).is_absolute()
                                    or ".." in Path(path).parts):
        raise AnalyzerError(f"experiment {label}: factor \"config-file\" needs vary.path, a file inside the app's "
                            "private home (e.g. \"settings.yaml\")")
    if factor not in ("env",) and name is not None:
        raise AnalyzerError(f"experiment {label}: vary.name is only for factor \"env\"")
    if factor != "config-file" and path is not None:
        raise AnalyzerError(f"experiment {label}: vary.path is only for factor \"config-file\"")
    link_to = t.get("link_to")
    if link_to is not None and (factor not in ("env", "cwd") or not isinstance(link_to, str)):
        raise AnalyzerError(f"experiment {label}: vary.link_to (a path) is only for factors \"env\" and \"cwd\"")
    from_turn = t.get("from_turn")
    if from_turn is not None and (factor not in MID_SESSION_FACTORS or not isinstance(from_turn, int)
                                  or isinstance(from_turn, bool) or from_turn < 2):
        raise AnalyzerError(f"experiment {label}: vary.from_turn (a turn number ≥ 2) is only for factors "
                            f"{', '.join(MID_SESSION_FACTORS)} (each turn is its own app process)")
    side_prompt = t.get("side_prompt")
    if side_prompt is not None and (factor != "interval" or not isinstance(side_prompt, str) or not side_prompt):
        raise AnalyzerError(f"experiment {label}: vary.side_prompt (a prompt) is only for factor \"interval\"")
    if factor == "interval":
        for v in values:
            try:
                ok = float(v) >= 0
            except ValueError:
                ok = False
            if not ok:
                raise AnalyzerError(f"experiment {label}: factor \"interval\" takes idle seconds as vary.values "
                                    f"(e.g. [\"0\", \"330\"]); got {v!r}")
    return AppVary(factor, tuple(values), name, path, link_to, from_turn, side_prompt)


def _need_str(t: dict[str, Any], key: str, label: str, prefix: str = "") -> str:
    value = t.get(key)
    if not isinstance(value, str) or not value:
        raise AnalyzerError(f"experiment {label}: {prefix}{key} is missing; add it")
    return value


def _known(t: dict[str, Any], keys: set[str], prefix: str, label: str) -> None:
    unknown = sorted(set(t) - keys)
    if unknown:
        raise AnalyzerError(f"experiment {label}: unknown key {prefix}{unknown[0]}; known here: "
                            f"{', '.join(sorted(keys))}")


def load_any_experiment(name_or_path: str) -> Any:
    """A raw experiment (`Experiment`) or, when the file names an `[app]`, an `AppExperiment`."""
    data, path = read_experiment(name_or_path)
    if is_app_experiment(data):
        return parse_app_experiment(data, path)
    return parse_experiment(data, path)
