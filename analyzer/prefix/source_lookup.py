"""Source lookup on the index: which pinned file and line holds a piece of request text, in which function,
and whether it is a message for a person rather than a piece of a prompt.

Three kinds of places, in this order: the string facts resolution reads (string call arguments, string
object-property values, at their call's or property's line), the literal texts the index records (`Value`
facts of kind `literal`: every string and template literal of at least `LITERAL_MIN_CHARS` characters as
written, `${…}` included — template literals with substitutions and array elements, which is how prompts are
usually written), and, when the repos are given, the pinned repo's data files (`git grep` at the pin over the
kinds `[literals] data_files` names: prompt templates kept as YAML or text). A needle is a plain substring of a
literal's text; the line is the one the needle starts on (a template literal runs over many).

Each site carries the graph node of the function that holds it and, when the literal is an argument of a
message call (`throw new Error(…)`, `console.warn(…)`, the calls `[literal_context]` of
`analyzer/rules/prefix/attribution.toml` names), that call: the ranking in `analyzer.prefix.attribute` puts
such a literal after one that is not. The sends (`[request_path]`: the calls that post a model request) are
collected here too, from the same facts, for `analyzer.prefix.request_path`.
"""

from __future__ import annotations

import fnmatch
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analyzer.prefix.attribute import LiteralSite, RequestPath, rules_table

if TYPE_CHECKING:
    import git

    from analyzer.index.build import RepoIndex
    from analyzer.index.model import Call, FileFacts

SHOWN_CHARS = 80
MODULE = "<module>"  # the graph's node for a file's top level (analyzer.resolve.program.MODULE_QUALNAME)
_MESSAGE_PREFIX = 40  # characters of a literal compared with a message call's argument text


@dataclass
class _Repo:
    name: str
    commit: str
    facts: list[tuple[str, int, str, str]]      # (path, line, text, scope) of the string facts
    literals: list[tuple[str, int, str, str]]   # (path, first line, text as written, scope) of the literal facts
    messages: dict[str, list[tuple[int, str, list[str]]]]  # path → (line, callee, argument texts) of message calls
    sends: set[str] = field(default_factory=set)  # node ids of functions that send a model request
    git: Any = None                             # the repo (data files are read from it at `commit`)
    fact_texts: _Joined | None = None
    literal_texts: _Joined | None = None
    by_scope: dict[tuple[str, str], list[tuple[int, str]]] | None = None  # (path, scope) → its literals

    def __post_init__(self) -> None:
        self.fact_texts = _Joined([t for _p, _l, t, _s in self.facts])
        self.literal_texts = _Joined([t for _p, _l, t, _s in self.literals])


class _Joined:
    """Texts joined by NUL into one string, so a needle is searched once in C instead of once per text
    (150,000 literals on the two real repos: 0.3 s a needle the slow way)."""

    def __init__(self, texts: list[str]) -> None:
        self.text = "\0".join(texts)
        self.starts, at = [], 0
        for t in texts:
            self.starts.append(at)
            at += len(t) + 1

    def text_of(self, i: int) -> str:
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self.text)
        return self.text[self.starts[i]:end]


def _holding(joined: _Joined | None, needle: str) -> list[int]:
    """Indexes of the texts that hold `needle` (a needle never holds NUL, so no match spans two texts)."""
    if joined is None or not needle or "\0" in needle:
        return []
    out: list[int] = []
    at = joined.text.find(needle)
    while at >= 0:
        i = bisect_right(joined.starts, at) - 1
        if not out or out[-1] != i:
            out.append(i)
        at = joined.text.find(needle, at + 1)
    return out


class SourceLookup:
    """A `LiteralLookup` over one or more `RepoIndex` (callable: needle → sites, in the order the index holds
    them; `analyzer.prefix.attribute` ranks them). `repos` (name → git repo) adds the data files; `keep`
    filters the hits by path; `request_path` (set later by the caller that opened the graph) places the sites
    on the request path."""

    def __init__(self, indexes: list[RepoIndex], repos: dict[str, git.Repo] | None = None, *,
                 keep: Callable[[str], bool] | None = None) -> None:
        from analyzer.index.testcode import is_test_path

        ctx, path_rules = rules_table("literal_context"), rules_table("request_path")
        message = _globs(ctx.get("message_calls", []))
        classes = _globs(ctx.get("message_classes", []))
        send, fetch = _globs(path_rules.get("send_calls", [])), _globs(path_rules.get("send_fetch", []))
        urls = tuple(path_rules.get("send_urls", []))
        later = tuple(rules_table("literals").get("later_paths", []))
        self._repos: list[_Repo] = []
        self.request_path: RequestPath | None = None
        self._data: dict[str, tuple[list[str], _Joined]] = {}   # repo → its data files' paths and texts
        self._found: dict[str, list[LiteralSite]] = {}
        self._keep = keep  # a filter on the hits' paths (an app's own run leaves its tests out)
        kinds: dict[str, tuple[bool, bool, bool]] = {}  # callee chain → (message, send, fetch); chains repeat
        for idx in indexes:
            facts, literals = [], []
            messages: dict[str, list[tuple[int, str, list[str]]]] = {}
            sends: set[str] = set()
            for f in idx.files:
                aside = is_test_path(f.path) or any(m in f"/{f.path}" for m in later)  # tests, examples: no send
                for call in f.calls:
                    scope = call.scope or MODULE
                    facts += [(f.path, call.line, a.text, scope) for a in call.args if a.kind == "string"]
                    chain = ".".join(call.callee)
                    kind = kinds.get(chain)
                    if kind is None:
                        kind = kinds[chain] = (bool(message.match(chain)), bool(send.match(chain)),
                                               bool(fetch.match(chain)))
                    if kind[0] or (call.kind == "super" and _in_class(f, call, classes)):
                        messages.setdefault(f.path, []).append((call.line, call.text or chain,
                                                                [a.text for a in call.args]))
                    if not aside and (kind[1] or (
                            kind[2] and call.args and any(u in call.args[0].text for u in urls))):
                        sends.add(f"{idx.name}:{f.path}:{scope}")
                for obj in f.objects:
                    facts += [(f.path, p.line, p.value_text, obj.scope or MODULE) for p in obj.properties
                              if p.value_kind == "string"]
                literals += [(f.path, v.line, v.text, v.scope or MODULE) for v in f.values if v.kind == "literal"]
            self._repos.append(_Repo(idx.name, idx.commit, facts, literals, messages, sends,
                                     (repos or {}).get(idx.name)))

    def sends(self) -> set[str]:
        """Graph node ids of the functions that send a model request (the request's sinks)."""
        return {n for r in self._repos for n in r.sends}

    def written_before(self, site: LiteralSite, lines: int) -> list[str]:
        """The texts (unquoted, as written) of the other literals of the same function that start within
        `lines` lines before `site`: what the code writes just before it, which tells the branch it is in when
        a function writes the same line in two branches."""
        if not site.node:
            return []
        scope = site.node.split(":", 2)[2]
        for r in self._repos:
            if r.name == site.repo:
                if r.by_scope is None:
                    r.by_scope = {}
                    for path, first, text, sc in r.literals:
                        r.by_scope.setdefault((path, sc), []).append((first, text))
                start = site.first_line or site.line
                texts = [text[1:-1] for first, text in r.by_scope.get((site.path, scope), [])
                         if start - lines <= first < start]
                return [t for t in texts if t != site.full]  # the same line in another branch is no evidence
        return []

    def message_call_at(self, repo: str, path: str, line: int) -> str | None:
        """The message call made at `line` of `path` (a caller passing a function's result to it), if any."""
        for r in self._repos:
            if r.name == repo:
                return next((callee for at, callee, _args in r.messages.get(path, []) if at == line), None)
        return None

    def __call__(self, needle: str) -> list[LiteralSite]:
        """Every literal that holds `needle`: the string facts, then the literal texts, then the data files
        (remembered: the requests of one log ask for the same few needles again and again)."""
        if needle not in self._found:
            self._found[needle] = [h for h in self._find(needle) if self._keep is None or self._keep(h.path)]
        return list(self._found[needle])

    def _find(self, needle: str) -> list[LiteralSite]:
        hits = [self._site(r, path, line, text, needle, "index facts", scope, text)
                for r in self._repos for i in _holding(r.fact_texts, needle)
                for path, line, text, scope in [r.facts[i]]]
        seen = {(h.repo, h.path, h.line) for h in hits}
        for r in self._repos:
            # per line the innermost literal (a string inside a template's `${…}` is in the template's text too)
            found: dict[tuple[str, int], tuple[int, int, str, str]] = {}
            for i in _holding(r.literal_texts, needle):
                path, first, text, scope = r.literals[i]
                at = text.find(needle)
                while at >= 0:
                    key = (path, first + text.count("\n", 0, at))
                    if (r.name, *key) not in seen and (key not in found or len(text) < len(found[key][2])):
                        found[key] = (i, first, text, scope)
                    at = text.find(needle, at + 1)
            # the files in index order, a file's lines in line order
            for (path, line), (_i, first, text, scope) in sorted(found.items(), key=lambda kv: (kv[1][0], kv[0][1])):
                hits.append(self._site(r, path, line, text, needle, "index literals", scope, text[1:-1],
                                       first=first, last=first + text.count("\n")))
        for r in self._repos:
            hits += [LiteralSite(r.name, r.commit, path, line, _short(text), needle, "", "data file", full=text,
                                 first_line=line, last_line=line)
                     for path, line, text in self._data_files(r, needle)]
        return hits

    def _site(self, r: _Repo, path: str, line: int, text: str, needle: str, via: str, scope: str, full: str,
              first: int = 0, last: int = 0) -> LiteralSite:
        return LiteralSite(r.name, r.commit, path, line, _short(text), needle, "", via, full=full,
                           first_line=first or line, last_line=last or line, node=f"{r.name}:{path}:{scope}",
                           message=_message_call(r, path, first or line, text) or "")

    def _data_files(self, r: _Repo, needle: str) -> list[tuple[str, int, str]]:
        """(path, line, line text) of the data files holding `needle` at the pin. The files are read once per
        lookup (one `git cat-file --batch`; about 20 MB on dsh, mostly its notes) and searched joined."""
        if r.git is None or "\n" in needle or not needle.strip():
            return []
        if r.name not in self._data:
            cfg = rules_table("literals")
            files = _read_data_files(r.git, r.commit, list(cfg.get("data_files", [])),
                                     tuple(cfg.get("later_paths", [])))
            self._data[r.name] = ([p for p, _t in files], _Joined([t for _p, t in files]))
        paths, joined = self._data[r.name]
        hits = []
        for i in _holding(joined, needle):
            path, text = paths[i], joined.text_of(i)
            at = text.find(needle)
            while at >= 0:
                start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
                hits.append((path, text.count("\n", 0, at) + 1, text[start:end if end >= 0 else len(text)].strip()))
                at = text.find(needle, at + 1)
        return hits


def _read_data_files(repo: git.Repo, commit: str, globs: list[str], aside: tuple[str, ...]) -> list[tuple[str, str]]:
    """(path, text) of the repo's files at `commit` whose name matches one of `globs`; binary files and the
    paths `aside` names (docs, notes, examples: never the writer, and most of the bytes) are left out."""
    import subprocess

    import git as gitlib

    names = _globs(globs)
    try:
        listed = repo.git.ls_tree("-r", "-z", "--name-only", commit).split("\0")
    except gitlib.GitCommandError:  # the pin is not in this checkout: no data files to offer
        return []
    paths = [p for p in listed if p and names.match(p.rsplit("/", 1)[-1]) and not any(m in f"/{p}" for m in aside)]
    if not paths:
        return []
    spec = "".join(f"{commit}:{p}\n" for p in paths).encode()
    out = subprocess.run(["git", "--git-dir", str(repo.git_dir), "cat-file", "--batch"], input=spec,
                         capture_output=True, check=False).stdout
    files, pos = [], 0
    for path in paths:
        header_end = out.find(b"\n", pos)
        header = out[pos:header_end].split()
        if len(header) < 3 or header[1] != b"blob":  # "<spec> missing": nothing follows
            pos = header_end + 1
            continue
        size = int(header[2])
        body = out[header_end + 1:header_end + 1 + size]
        pos = header_end + 1 + size + 1
        if b"\0" not in body[:8000]:
            files.append((path, body.decode("utf-8", "replace")))
    return files


IndexLiterals = SourceLookup  # the name callers used before the lookup knew functions and data files


def _message_call(r: _Repo, path: str, first: int, text: str) -> str | None:
    """The message call this literal is an argument of (same file, the literal starts on or after the call's
    line and its text opens the argument's text), if any."""
    calls = r.messages.get(path)
    if not calls:
        return None
    inner = " ".join(text.split())
    quoted = inner[:_MESSAGE_PREFIX]
    bare = (inner[1:-1] if len(inner) >= 2 and inner[0] in "'\"`" else inner)[:_MESSAGE_PREFIX]
    for line, callee, args in calls:
        if line <= first <= line + 20 and any(a.startswith(quoted) or a.startswith(bare) for a in args):
            return callee
    return None


def _in_class(f: FileFacts, call: Call, classes: re.Pattern[str]) -> bool:
    """`super(…)` in a constructor of a class that extends one of `classes` (an error's message)."""
    owner = (call.scope or "").rsplit(".", 1)[0]
    return any(d.qualname == owner and any(classes.match(e.split("<", 1)[0].strip()) for e in d.extends)
               for d in f.definitions)


def _globs(patterns: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns) or "(?!)")


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
