"""Experiment files: one controlled comparison, validated before anything is sent or run.

One schema, two modes. A `[request]` experiment spells out the request (system, tools, messages) and the tool
sends it itself; an `[app]` experiment names an app profile and the turns, and the real app builds the requests.
Either way an experiment changes exactly one factor between a control and a treatment series (the research
route's rule: never change the model, the tools and the history summary in the same comparison). Anything that
would change a second thing is refused here, with one line naming both changes, so a run can never mix causes.
`[base]`, the table's name before the app mode existed, is still read as `[request]`.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from analyzer.errors import AnalyzerError

# the factors each mode can vary; request factors change the request the tool builds, app factors what the app
# is given (an environment variable, the working directory, one command-line option, one private config file, the
# idle time between turns)
REQUEST_FACTORS = ("none", "system-prefix", "system-suffix", "tools-order", "tool-added", "history-compacted",
                   "interval", "warmup")
APP_FACTORS = ("env", "cwd", "arg", "config-file", "interval", "none")
# each app turn is its own app process, so these app factors can change between turns (vary.from_turn)
MID_SESSION_FACTORS = ("env", "arg")
FACTORS = {"request": REQUEST_FACTORS, "app": APP_FACTORS}
# the request factors whose values are strings; the others take numbers, tool-name lists or no values
_STRING_FACTORS = ("system-prefix", "system-suffix", "history-compacted")
_COMMON_KEYS = {"name", "question", "description", "endpoint", "run", "vary", "source"}
_TOP_KEYS = {"request": _COMMON_KEYS | {"request", "base"}, "app": _COMMON_KEYS | {"app"}}
_ENDPOINT_KEYS = {"base_url", "model", "api_key_env", "timeout_s"}
_RUN_KEYS = {"request": {"requests", "interval_s", "max_tokens", "stream", "temperature", "retries_429",
                         "max_retry_wait_s"},
             "app": {"max_tokens"}}  # the app decides how many requests, when and how to stream
_REQUEST_KEYS = {"system", "system_file", "tools", "tools_file", "messages"}
_APP_KEYS = {"profile", "turns", "api"}
_VARY_KEYS = {"request": {"factor", "values", "tool"},
              "app": {"factor", "name", "path", "values", "link_to", "from_turn", "side_prompt"}}
# keys that, inside [vary] or a per-series table, would be a second change; what each one changes
_SECOND_CHANGES = {
    "model": "the model", "base_url": "the endpoint", "endpoint": "the endpoint", "api_key_env": "the endpoint",
    "system": "the system prompt", "system_file": "the system prompt", "tools": "the tools",
    "tools_file": "the tools", "messages": "the messages", "max_tokens": "max_tokens", "stream": "streaming",
    "temperature": "the temperature", "factors": "a second factor",
}
_SERIES_TABLES = ("control", "treatment", "series")
ROUTE_RULE = "keep one change per comparison (不要在同一组对照中同时换模型、改工具和摘要历史)"
LOCAL_MODEL = "local"  # what an app experiment calls the running local engine's model


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None        # None: an app experiment against the running local engine
    model: str
    api_key_env: str | None = None
    timeout_s: float = 120.0

    @property
    def url(self) -> str:
        """The chat-completions URL (OpenAI-compatible servers all take `/chat/completions` under the base)."""
        return (self.base_url or "").rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class RunConfig:
    requests: int = 3
    interval_s: float = 1.0
    max_tokens: int = 16
    stream: bool = True
    temperature: float | None = None
    retries_429: int = 3
    max_retry_wait_s: float = 60.0


@dataclass(frozen=True)
class RequestSpec:
    """A `[request]` experiment's request: what the tool sends, before the factor changes it."""

    system: str | None
    tools: tuple[dict[str, Any], ...]
    messages: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class AppSpec:
    """An `[app]` experiment's app: the profile to install and the prompts sent in one continued session."""

    profile: str
    turns: tuple[str, ...]
    api: str | None = None  # the wire API the app speaks (profile [run.api]); None: the profile's default


@dataclass(frozen=True)
class Vary:
    factor: str
    values: tuple[Any, ...] = ()
    tool: dict[str, Any] | None = None   # request factor tool-added: the tool added
    name: str | None = None              # app factor env: the variable
    path: str | None = None              # app factor config-file: the file, relative to the app's private home
    link_to: str | None = None           # app factors env/cwd: make each missing path value a symlink to this
    from_turn: int | None = None         # app factors env/arg: the value applies from this turn on (values[0] before)
    side_prompt: str | None = None       # app factor interval: another conversation sent in each pause

    def value_at(self, value: Any, turn: int) -> Any:
        """The value in force at `turn` (1-based) of a series whose value is `value`."""
        if self.from_turn is not None and turn < self.from_turn and self.values:
            return self.values[0]
        return value

    def pause_s(self, value: Any, turn: int) -> float:
        """App factor interval: the idle seconds before `turn` (none before the first)."""
        return float(value or 0) if self.factor == "interval" and turn > 1 else 0.0

    def series(self) -> list[tuple[str, Any]]:
        """(series name, value) of an app run: control at values[0], then one treatment per further value."""
        if self.factor == "none":
            return [("control", None), ("treatment", None)]
        names = ["control", "treatment"] + [f"treatment-{i}" for i in range(2, len(self.values))]
        return list(zip(names, self.values, strict=False))

    def describe(self) -> str:
        """The factor and what it changes, in a few words."""
        what = {"env": f"${self.name}", "config-file": f"file {self.path}", "cwd": "working directory",
                "arg": "command-line option", "interval": "idle seconds between turns",
                "none": "nothing"}.get(self.factor)
        when = f", from turn {self.from_turn} on" if self.from_turn is not None else ""
        return f"{self.factor} ({what}{when})" if what else self.factor


@dataclass(frozen=True)
class Experiment:
    name: str
    question: str
    endpoint: Endpoint
    run: RunConfig
    vary: Vary
    path: str
    spec: RequestSpec | AppSpec
    description: str = ""
    source: dict[str, Any] = field(default_factory=dict)     # where the factor comes from (hazard id, rule, line)
    overrides: dict[str, str] = field(default_factory=dict)  # endpoint values given on the command line

    @property
    def mode(self) -> str:
        """`request` (the tool builds and sends the requests) or `app` (a real app does, behind the proxy)."""
        return "app" if isinstance(self.spec, AppSpec) else "request"

    @property
    def request(self) -> RequestSpec:
        if not isinstance(self.spec, RequestSpec):
            raise AnalyzerError(f"experiment {self.path} names an [app]: its requests are built by the app")
        return self.spec

    @property
    def app(self) -> AppSpec:
        if not isinstance(self.spec, AppSpec):
            raise AnalyzerError(f"experiment {self.path} has no [app]: its requests are built by the tool")
        return self.spec

    def with_endpoint(self, *, base_url: str | None = None, model: str | None = None,
                      api_key_env: str | None = None) -> Experiment:
        """The same experiment against another server (command-line or env overrides, recorded in every row)."""
        overrides = dict(self.overrides)
        for key, value in (("base_url", base_url), ("model", model), ("api_key_env", api_key_env)):
            if value:
                overrides[key] = value
        ep = self.endpoint
        new = replace(ep, base_url=base_url or ep.base_url, model=model or ep.model,
                      api_key_env=api_key_env or ep.api_key_env)
        if new.base_url is not None:
            _check_url(new.base_url, self.path)
        return replace(self, endpoint=new, overrides=overrides)


def shipped_dir() -> Path:
    return Path(str(resources.files("analyzer.observe") / "experiments"))


def shipped_names() -> list[str]:
    """Names of the example experiments shipped with the package."""
    return sorted(p.name[:-5] for p in shipped_dir().iterdir() if p.name.endswith(".toml"))


def load_experiment(name_or_path: str) -> Experiment:
    """A shipped example by name, or a TOML file by path, in either mode; one `AnalyzerError` line for anything
    wrong."""
    data, path = read_experiment(name_or_path)
    return parse_experiment(data, path)


def read_experiment(name_or_path: str) -> tuple[dict[str, Any], Path]:
    """The parsed TOML of a shipped experiment or a file, and its path."""
    if name_or_path.endswith(".toml") or "/" in name_or_path:
        path = Path(name_or_path)
    else:
        path = shipped_dir() / f"{name_or_path}.toml"
        if not path.is_file():
            raise AnalyzerError(f"no experiment named {name_or_path!r}; shipped: {', '.join(shipped_names())} "
                                "(or pass a path to a TOML file)")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AnalyzerError(f"experiment {path}: cannot read ({exc.strerror}); pass an experiment TOML file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise AnalyzerError(f"experiment {path}: malformed TOML ({exc}); fix the syntax") from None
    return data, path


def experiment_mode(data: dict[str, Any], label: str) -> str:
    """`app` when the file has an `[app]` table, else `request`; an app file with a raw request is refused."""
    if "app" not in data:
        return "request"
    for key in ("request", "base", "messages", "system", "tools"):
        if key in data:
            raise AnalyzerError(f"experiment {label}: [app] and [{key}] both given; an app experiment's requests are "
                                "built by the app — drop the raw request")
    return "app"


def parse_experiment(data: dict[str, Any], path: Path) -> Experiment:
    """Validate the parsed TOML. Two-change files are refused before any other check, so the message is about that."""
    label = str(path)
    mode = experiment_mode(data, label)
    _refuse_second_change(data, label)
    _known(data, _TOP_KEYS[mode], "", label)
    name = _need(data, "name", str, "", label)
    question = _need(data, "question", str, "", label)
    endpoint = _parse_endpoint(data, mode, label)
    run = _parse_run(_opt(data, "run", dict, {}, "", label), mode, label)
    spec: RequestSpec | AppSpec
    if mode == "app":
        spec = _parse_app(_need(data, "app", dict, "", label), label)
    else:
        section = "base" if "base" in data and "request" not in data else "request"
        if "base" in data and "request" in data:
            raise AnalyzerError(f"experiment {label}: [request] and [base] both given; [base] is the old name of "
                                "[request], keep one")
        spec = _parse_request(_need(data, section, dict, "", label), section, path, label)
    if "vary" not in data:
        raise AnalyzerError(f"experiment {label}: [vary] is missing; set factor = one of "
                            f"{', '.join(FACTORS[mode])}")
    vary_t = _need(data, "vary", dict, "", label)
    _known(vary_t, _VARY_KEYS[mode], "vary.", label)
    factor = _factor(vary_t, mode, label)
    if isinstance(spec, AppSpec):
        vary = _parse_app_vary(vary_t, factor, label)
    else:
        vary = _parse_request_vary(vary_t, factor, spec, label)
    source = _opt(data, "source", dict, {}, "", label)
    return Experiment(name=name, question=question, endpoint=endpoint, run=run, vary=vary, path=label, spec=spec,
                      description=str(data.get("description", "")), source=dict(source))


# ---- sections ---------------------------------------------------------------------------------------------


def _parse_endpoint(data: dict[str, Any], mode: str, label: str) -> Endpoint:
    """A request experiment names its server; an app experiment may leave it out (the running local engine)."""
    ep_t = _need(data, "endpoint", dict, "", label) if mode == "request" else _opt(data, "endpoint", dict, {}, "",
                                                                                     label)
    _known(ep_t, _ENDPOINT_KEYS, "endpoint.", label)
    api_key_env = ep_t.get("api_key_env")
    if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env.isidentifier()):
        raise AnalyzerError(f"experiment {label}: endpoint.api_key_env must be the NAME of an environment variable "
                            "(e.g. \"DEEPSEEK_API_KEY\"), never the key itself")
    if mode == "request":
        base_url: str | None = _need(ep_t, "base_url", str, "endpoint.", label)
        model = _need(ep_t, "model", str, "endpoint.", label)
    else:
        base_url = _opt(ep_t, "base_url", str, None, "endpoint.", label)
        model = _opt(ep_t, "model", str, None, "endpoint.", label) or LOCAL_MODEL
    if base_url is not None:
        _check_url(base_url, label)
    # an app turn is the app's whole agent loop, so it gets longer than one request
    timeout_s = float(_opt(ep_t, "timeout_s", (int, float), 120.0 if mode == "request" else 600.0, "endpoint.",
                           label))
    return Endpoint(base_url=base_url, model=model, api_key_env=api_key_env, timeout_s=timeout_s)


def _parse_run(run_t: dict[str, Any], mode: str, label: str) -> RunConfig:
    _known(run_t, _RUN_KEYS[mode], "run.", label)
    run = RunConfig(
        requests=int(_opt(run_t, "requests", int, 3, "run.", label)),
        interval_s=float(_opt(run_t, "interval_s", (int, float), 1.0, "run.", label)),
        max_tokens=int(_opt(run_t, "max_tokens", int, 16, "run.", label)),
        stream=bool(_opt(run_t, "stream", bool, True, "run.", label)),
        temperature=_opt(run_t, "temperature", (int, float), None, "run.", label),
        retries_429=int(_opt(run_t, "retries_429", int, 3, "run.", label)),
        max_retry_wait_s=float(_opt(run_t, "max_retry_wait_s", (int, float), 60.0, "run.", label)),
    )
    if not 1 <= run.requests <= 1000:
        raise AnalyzerError(f"experiment {label}: run.requests must be between 1 and 1000 (got {run.requests})")
    if run.interval_s < 0 or run.max_tokens < 1 or run.retries_429 < 0 or run.max_retry_wait_s < 0:
        raise AnalyzerError(f"experiment {label}: run.interval_s, run.retries_429 and run.max_retry_wait_s must be "
                            "≥ 0 and run.max_tokens ≥ 1")
    return run


def _parse_request(t: dict[str, Any], section: str, path: Path, label: str) -> RequestSpec:
    where = f"{section}."
    _known(t, _REQUEST_KEYS, where, label)
    for a, b in (("system", "system_file"), ("tools", "tools_file")):
        if a in t and b in t:
            raise AnalyzerError(f"experiment {label}: {where}{a} and {where}{b} both given; keep one")
    system = _opt(t, "system", str, None, where, label)
    if "system_file" in t:
        system = _read_beside(path, _need(t, "system_file", str, where, label), label)
    tools: Any = _opt(t, "tools", list, [], where, label)
    if "tools_file" in t:
        raw = _read_beside(path, _need(t, "tools_file", str, where, label), label)
        try:
            tools = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise AnalyzerError(f"experiment {label}: {where}tools_file is not JSON ({exc}); give a list of OpenAI "
                                "tool objects") from None
    if not isinstance(tools, list):
        raise AnalyzerError(f"experiment {label}: {where}tools must be a list of OpenAI tool objects")
    for i, tool in enumerate(tools, 1):
        _tool_name(tool, f"{where}tools[{i}]", label)
    names = [_tool_name(tool, "", label) for tool in tools]
    if len(set(names)) != len(names):
        raise AnalyzerError(f"experiment {label}: {where}tools has two tools with the same name; names must be "
                            "unique")
    messages = _need(t, "messages", list, where, label)
    if not messages:
        raise AnalyzerError(f"experiment {label}: {where}messages is empty; add at least one user message")
    for i, m in enumerate(messages, 1):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise AnalyzerError(f"experiment {label}: {where}messages[{i}] needs a role and a string content")
        if m["role"] == "system":
            raise AnalyzerError(f"experiment {label}: {where}messages[{i}] is a system message; put it in "
                                f"{where}system")
    return RequestSpec(system=system, tools=tuple(tools), messages=tuple(messages))


def _parse_app(t: dict[str, Any], label: str) -> AppSpec:
    _known(t, _APP_KEYS, "app.", label)
    profile = _need(t, "profile", str, "app.", label)
    turns = t.get("turns")
    if not isinstance(turns, list) or not turns or not all(isinstance(x, str) and x.strip() for x in turns):
        raise AnalyzerError(f"experiment {label}: app.turns must be a non-empty list of prompts")
    from analyzer.apps.profile import load_profiles

    profiles = load_profiles()
    if profile not in profiles:
        raise AnalyzerError(f"experiment {label}: app.profile {profile!r} is not a known app; known: "
                            f"{', '.join(sorted(profiles))}")
    api = t.get("api")
    if api is not None:
        if not isinstance(api, str) or not api:
            raise AnalyzerError(f"experiment {label}: app.api must be the name of an API the app speaks")
        try:
            profiles[profile].api_base_url(api)
        except AnalyzerError as exc:
            raise AnalyzerError(f"experiment {label}: app.api: {exc}") from None
    return AppSpec(profile=profile, turns=tuple(turns), api=api)


def _factor(t: dict[str, Any], mode: str, label: str) -> str:
    factor = t.get("factor")
    if not isinstance(factor, str):
        raise AnalyzerError(f"experiment {label}: vary.factor is missing; set exactly one of: "
                            f"{', '.join(FACTORS[mode])}")
    if factor not in FACTORS[mode]:
        raise AnalyzerError(f"experiment {label}: unknown factor {factor!r} for a [{mode}] experiment; "
                            f"vary.factor must be one of: {', '.join(FACTORS[mode])}")
    return factor


def _parse_request_vary(t: dict[str, Any], factor: str, base: RequestSpec, label: str) -> Vary:
    values = t.get("values", [])
    if not isinstance(values, list):
        raise AnalyzerError(f"experiment {label}: vary.values must be a list")
    tool = t.get("tool")
    if tool is not None and factor != "tool-added":
        raise AnalyzerError(f"experiment {label}: vary.tool is only for factor \"tool-added\" (here: {factor!r})")
    if factor in _STRING_FACTORS:
        if not values or not all(isinstance(v, str) for v in values):
            raise AnalyzerError(f"experiment {label}: factor {factor!r} needs vary.values, a list of strings")
        if factor.startswith("system-") and base.system is None:
            raise AnalyzerError(f"experiment {label}: factor {factor!r} changes the system prompt; set the "
                                "request's system")
        if factor == "history-compacted" and len(base.messages) < 2:
            raise AnalyzerError(f"experiment {label}: factor \"history-compacted\" needs at least two request "
                                "messages (earlier ones are replaced by the summary)")
    elif factor == "interval":
        if not values or not all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in values):
            raise AnalyzerError(f"experiment {label}: factor \"interval\" needs vary.values, gaps in seconds (≥ 0)")
    elif factor == "tools-order":
        names = sorted(_tool_name(x, "", label) for x in base.tools)
        if len(names) < 2:
            raise AnalyzerError(f"experiment {label}: factor \"tools-order\" needs at least two request tools")
        if not values:
            raise AnalyzerError(f"experiment {label}: factor \"tools-order\" needs vary.values, lists of tool names")
        for i, order in enumerate(values, 1):
            if not isinstance(order, list) or sorted(order) != names:
                raise AnalyzerError(f"experiment {label}: vary.values[{i}] must list every request tool once, in "
                                    f"some order ({', '.join(names)})")
    elif factor == "tool-added":
        if not isinstance(tool, dict):
            raise AnalyzerError(f"experiment {label}: factor \"tool-added\" needs vary.tool, one OpenAI tool object")
        name = _tool_name(tool, "vary.tool", label)
        if name in {_tool_name(x, "", label) for x in base.tools}:
            raise AnalyzerError(f"experiment {label}: vary.tool {name!r} is already in the request's tools; add a "
                                "new tool")
        if values:
            raise AnalyzerError(f"experiment {label}: factor \"tool-added\" takes vary.tool, not vary.values")
    elif values:
        raise AnalyzerError(f"experiment {label}: factor {factor!r} takes no vary.values")
    return Vary(factor=factor, values=tuple(values), tool=tool)


def _parse_app_vary(t: dict[str, Any], factor: str, label: str) -> Vary:
    values = t.get("values", [])
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise AnalyzerError(f"experiment {label}: vary.values must be a list of strings")
    if factor == "none":
        if values:
            raise AnalyzerError(f"experiment {label}: factor \"none\" takes no vary.values (control and treatment "
                                "are two fresh sessions given the same)")
        return Vary("none")
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
    if factor != "env" and name is not None:
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
            if not _seconds(v):
                raise AnalyzerError(f"experiment {label}: factor \"interval\" takes idle seconds as vary.values "
                                    f"(e.g. [\"0\", \"330\"]); got {v!r}")
    return Vary(factor, tuple(values), name=name, path=path, link_to=link_to, from_turn=from_turn,
                side_prompt=side_prompt)


def _seconds(value: str) -> bool:
    """Whether an app interval value (a string, like every app value) is a number of seconds ≥ 0."""
    try:
        return float(value) >= 0
    except ValueError:
        return False


def _refuse_second_change(data: dict[str, Any], label: str) -> None:
    vary = data.get("vary")
    if isinstance(vary, list):  # [[vary]]: several comparisons in one
        names = [str(v.get("factor", "?")) for v in vary if isinstance(v, dict)]
        raise AnalyzerError(f"experiment {label}: changes two things: {' and '.join(names[:2]) or 'two [[vary]]'} "
                            f"([[vary]] given {len(vary)} times); {ROUTE_RULE}")
    if not isinstance(vary, dict):
        return
    factor = vary.get("factor")
    if isinstance(factor, list):
        names = [str(f) for f in factor]
        if len(names) > 1:
            raise AnalyzerError(f"experiment {label}: changes two things: factor {names[0]!r} and factor "
                                f"{names[1]!r} (vary.factor is a list); {ROUTE_RULE}")
        raise AnalyzerError(f"experiment {label}: vary.factor must be one name, not a list")
    first = f"factor {factor!r}" if isinstance(factor, str) else "the factor"
    for key in vary:
        if key in _SECOND_CHANGES:
            raise AnalyzerError(f"experiment {label}: changes two things: {first} and {_SECOND_CHANGES[key]} "
                                f"(vary.{key}); {ROUTE_RULE}")
    for table in _SERIES_TABLES:
        sub = data.get(table)
        if not isinstance(sub, dict):
            continue
        for where, t in ([(f"{table}.{k}", v) for k, v in sub.items() if isinstance(v, dict)]
                         if table == "series" else [(table, sub)]):
            for key in t:
                if key in _SECOND_CHANGES:
                    raise AnalyzerError(f"experiment {label}: changes two things: {first} and "
                                        f"{_SECOND_CHANGES[key]} per series ({where}.{key}); {ROUTE_RULE}")


# ---- small helpers ----------------------------------------------------------------------------------------


def _tool_name(tool: Any, where: str, label: str) -> str:
    fn = tool.get("function") if isinstance(tool, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str) or not name:
        raise AnalyzerError(f"experiment {label}: {where or 'a tool'} is not an OpenAI tool object "
                            "({type = \"function\", function = {name = …, parameters = {…}}})")
    return name


def _read_beside(path: Path, rel: str, label: str) -> str:
    target = (path.parent / rel) if not Path(rel).is_absolute() else Path(rel)
    try:
        return target.read_text(encoding="utf-8")
    except OSError as exc:
        raise AnalyzerError(f"experiment {label}: cannot read {rel} ({exc.strerror}); paths are relative to the "
                            "experiment file") from None


def _check_url(url: str, label: str) -> None:
    if not url.startswith(("http://", "https://")):
        raise AnalyzerError(f"experiment {label}: base_url {url!r} must start with http:// or https:// "
                            "(e.g. http://127.0.0.1:8080/v1)")


def _known(t: dict[str, Any], keys: set[str], prefix: str, label: str) -> None:
    unknown = sorted(set(t) - keys)
    if unknown:
        raise AnalyzerError(f"experiment {label}: unknown key {prefix}{unknown[0]}; known here: "
                            f"{', '.join(sorted(keys))}")


def _need(t: dict[str, Any], key: str, kind: type | tuple[type, ...], prefix: str, label: str) -> Any:
    if key not in t:
        raise AnalyzerError(f"experiment {label}: {prefix}{key} is missing; add it")
    return _opt(t, key, kind, None, prefix, label)


def _opt(t: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any, prefix: str, label: str) -> Any:
    if key not in t:
        return default
    value = t[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = {"dict": "table", "str": "string", "int": "integer", "float": "number", "list": "list",
                 "bool": "boolean"}
        raise AnalyzerError(f"experiment {label}: {prefix}{key} must be a "
                            f"{' or '.join(dict.fromkeys(names[k.__name__] for k in kinds))}")
    return value
