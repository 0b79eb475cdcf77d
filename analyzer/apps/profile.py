"""App profiles: what `analyze app` knows about one real application, read from `analyzer/rules/apps/*.toml`.

Why data: how an app is installed (npm at the pinned version, or built from the pinned commit), which Node it
needs, how it is pointed at a base URL without touching the user's own config and how one turn is run are facts
about that app's release, not about this tool; they change with a pin, so they live beside the other rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from analyzer.errors import AnalyzerError
from analyzer.rules.files import read_rule_files

RULES_PACKAGE = "analyzer.rules.apps"
KINDS = ("npm", "source")
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


@dataclass(frozen=True)
class NodeSpec:
    package: str
    version: str
    min: str


@dataclass(frozen=True)
class ConfigFile:
    path: str   # relative to the app's private home
    text: str


@dataclass(frozen=True)
class AppProfile:
    name: str
    title: str
    repo: str
    kind: str
    node: NodeSpec
    home_env: str
    key_env: str
    turn: tuple[str, ...]
    continue_args: tuple[str, ...]
    continues: bool
    reported: str
    env: dict[str, str] = field(default_factory=dict)
    files: tuple[ConfigFile, ...] = ()
    # npm
    package: str = ""
    entry: str = ""
    version_file: str = ""
    version_key: str = "version"
    # source builds
    tool_package: str = ""
    tool_version: str = ""
    tool_entry: str = ""
    steps: tuple[tuple[str, ...], ...] = ()
    source: str = ""  # the rule file, for messages
    # wire APIs the app can speak to the endpoint ([run.api]): name -> base URL template ({base_url}, {base_root})
    apis: dict[str, str] = field(default_factory=dict)
    default_api: str = ""
    context_window: int = 0  # what the app is told when the server does not report its context per slot

    @property
    def uses_context_window(self) -> bool:
        """Whether a config file names `{context_window}` (only then is the server asked for its context)."""
        return any("{context_window}" in f.text for f in self.files)

    def api_base_url(self, api: str | None) -> tuple[str, str]:
        """(api, base URL template) for a run; refuses an API the profile does not list."""
        if not self.apis:
            if api:
                raise AnalyzerError(f"app {self.name} has no choice of API (its profile {self.source} lists none); "
                                    "drop the api setting")
            return "", "{base_url}"
        chosen = api or self.default_api
        if chosen not in self.apis:
            raise AnalyzerError(f"app {self.name} cannot speak API {chosen!r}; choose one of "
                                f"{', '.join(self.apis)} ({self.source} [run.api])")
        return chosen, self.apis[chosen]


def fill(text: str, values: dict[str, str]) -> str:
    """Replace `{name}` placeholders the run knows; other braces (JSON) are left alone."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def load_profiles() -> dict[str, AppProfile]:
    """Every shipped profile by name."""
    files, _digest = read_rule_files(RULES_PACKAGE, what="app profile")
    profiles: dict[str, AppProfile] = {}
    for rf in files:
        profile = _parse(rf.data, rf.name)
        profiles[profile.name] = profile
    return profiles


def load_profile(name: str) -> AppProfile:
    profiles = load_profiles()
    if name not in profiles:
        raise AnalyzerError(f"no app profile named {name!r}; known: {', '.join(sorted(profiles))} "
                            f"(analyzer/rules/apps/*.toml)")
    return profiles[name]


def _parse_api(run_t: dict[str, Any], where: str) -> dict[str, Any]:
    """[run.api]: default and base_urls (API name -> base URL template); run.context_window."""
    window = run_t.get("context_window", 0)
    if not isinstance(window, int) or isinstance(window, bool) or window < 0:
        raise AnalyzerError(f"app profile {where}: run.context_window must be a whole number of tokens")
    api_t = run_t.get("api")
    if api_t is None:
        return {"context_window": window}
    bases = api_t.get("base_urls") if isinstance(api_t, dict) else None
    if not isinstance(bases, dict) or not bases or not all(isinstance(v, str) for v in bases.values()):
        raise AnalyzerError(f"app profile {where}: run.api.base_urls must map each API name to a base URL template")
    default = api_t.get("default")
    if default not in bases:
        raise AnalyzerError(f"app profile {where}: run.api.default must be one of {', '.join(bases)}")
    return {"apis": {str(k): str(v) for k, v in bases.items()}, "default_api": default, "context_window": window}


def _parse(d: dict[str, Any], where: str) -> AppProfile:
    def need(t: dict[str, Any], key: str, kind: type, prefix: str = "") -> Any:
        value = t.get(key)
        if not isinstance(value, kind):
            raise AnalyzerError(f"app profile {where}: {prefix}{key} is missing or not a {kind.__name__}")
        return value

    kind = need(d, "kind", str)
    if kind not in KINDS:
        raise AnalyzerError(f"app profile {where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    node_t = need(d, "node", dict)
    run_t = need(d, "run", dict)
    common: dict[str, Any] = {
        "name": need(d, "name", str), "title": str(d.get("title", d["name"])), "repo": need(d, "repo", str),
        "kind": kind,
        "node": NodeSpec(need(node_t, "package", str, "node."), need(node_t, "version", str, "node."),
                         need(node_t, "min", str, "node.")),
        "home_env": need(run_t, "home_env", str, "run."), "key_env": need(run_t, "key_env", str, "run."),
        "turn": tuple(str(a) for a in need(run_t, "turn", list, "run.")),
        "continue_args": tuple(str(a) for a in run_t.get("continue", [])),
        "continues": bool(run_t.get("continues", True)),
        "reported": need(run_t, "reported", str, "run."),
        "env": {str(k): str(v) for k, v in run_t.get("env", {}).items()},
        "files": tuple(ConfigFile(need(f, "path", str, "run.files."), need(f, "text", str, "run.files."))
                       for f in run_t.get("files", [])),
        "source": where,
        **_parse_api(run_t, where),
    }
    if kind == "npm":
        npm = need(d, "npm", dict)
        return AppProfile(**common, package=need(npm, "package", str, "npm."), entry=need(npm, "entry", str, "npm."),
                          version_file=need(npm, "version_file", str, "npm."),
                          version_key=str(npm.get("version_key", "version")))
    build = need(d, "build", dict)
    steps = need(build, "steps", list, "build.")
    return AppProfile(**common, tool_package=need(build, "tool_package", str, "build."),
                      tool_version=need(build, "tool_version", str, "build."),
                      tool_entry=need(build, "tool_entry", str, "build."),
                      steps=tuple(tuple(str(a) for a in s) for s in steps), entry=need(build, "entry", str, "build."),
                      version_file=need(build, "version_file", str, "build."),
                      version_key=str(build.get("version_key", "version")))
