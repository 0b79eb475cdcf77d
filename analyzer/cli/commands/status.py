"""`analyze status`: what is pinned and what the cache holds, without touching the network."""

from __future__ import annotations

import argparse

from analyzer.cli.context import CliContext

NAME = "status"
HELP = "show each pinned upstream: url, ref, commit, whether it is cached, its date and subject"
ORDER = 11


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME", help="upstreams to show (default: all)")


def run(args: argparse.Namespace, ctx: CliContext) -> int:
    from analyzer.api.sources import status

    lock = ctx.lock
    described = status(ctx.session(), args.names)
    if ctx.json:
        ctx.emit_json({"lock": str(lock.path), "cache_dir": str(ctx.cache_dir),
                       "repos": [repo.as_json() for repo in described]})
        return 0
    ctx.out.print(f"lock   {lock.path}\ncache  {ctx.cache_dir}", markup=False)
    mismatches = {repo.status.name: repo.ref_mismatch for repo in described}
    for s in (repo.status for repo in described):
        lines = [f"\n{s.name}", f"  url      {s.url}"]
        if s.source:
            lines.append(f"  source   {s.source} (override for this run)")
        lines += [f"  ref      {s.ref or '-'}", f"  commit   {s.commit}"]
        if mismatches[s.name]:
            lines.append(f"  warning  {mismatches[s.name]}")
        if s.present:
            where = "checked out" if s.checked_out else "present, not checked out (run 'analyze sync " + s.name + "')"
            lines += [f"  cache    {where} in {s.path}", f"  date     {s.date}", f"  subject  {s.subject}"]
        else:
            lines.append(f"  cache    not present (run 'analyze sync {s.name}')")
        ctx.out.print("\n".join(lines), markup=False)
    return 0
