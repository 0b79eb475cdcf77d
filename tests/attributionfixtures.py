"""A small application repository whose request text is held by several literals, built and analysed for real.

The shape of the real case: the same words (`Present folder: `) are in the template the system prompt is built
from (twice: a default and a custom branch of the same writer), in an error message (thrown through an
`Error` subclass's `super(…)`) and a logged warning, and in an example extension. The system prompt is built
by `buildSystemPrompt` (a [[returns]] sink of the hazard rules) and sent by `send`, which posts the request
(`client.chat.completions.create`, a send of `analyzer/rules/prefix/attribution.toml`); `runTurn` reaches the
send, `helpText` does not. A YAML preset holds a prompt template with `{{cwd}}` placeholders whose shorter
words (`folder is `) are in the writer's template as well.
"""

from __future__ import annotations

from pathlib import Path

import git

ACTOR = git.Actor("Fixture", "fixture@example.invalid")
WORDS = "Present folder: "

FILES = {
    "package.json": '{ "name": "mini-app", "private": true, "type": "module" }\n',
    "src/prompt.ts": """\
export function buildSystemPrompt(folder: string, custom?: string): string {
  if (custom) {
    let prompt = custom;
    prompt += `\\nPresent folder: ${folder}`;
    return prompt;
  }
  let prompt = "You assist with small code changes.";
  prompt += `\\nPresent folder: ${folder}`;
  prompt += "\\nThe folder is yours to change.";
  return prompt;
}
export const CLOSING_WORDS = "Finish with a short list of what changed.";
""",
    "src/client.ts": """\
const client: any = {};
export async function send(system: string, task: string): Promise<unknown> {
  const messages = [{ role: "system", content: system }, { role: "user", content: task }];
  return client.chat.completions.create({ messages });
}
""",
    "src/session.ts": """\
import { buildSystemPrompt } from "./prompt.ts";
import { send } from "./client.ts";
import { assertFolder } from "./errors.ts";
export async function runTurn(folder: string, task: string): Promise<unknown> {
  assertFolder(folder);
  const reminder = `Answer in few words, please. ${task}`;
  return send(buildSystemPrompt(folder), reminder);
}
export function helpText(): string {
  return `Answer in few words, please. Type a task and press enter.`;
}
""",
    "src/errors.ts": """\
export function formatFolderGone(folder: string): string {
  return `Stored folder is gone: ${folder}\\nPresent folder: ${folder}`;
}
export class FolderGoneError extends Error {
  constructor(folder: string) {
    super(formatFolderGone(folder));
  }
}
export function assertFolder(folder: string): void {
  if (!folder) {
    console.warn(`Present folder: ${folder} looks empty`);
    throw new FolderGoneError(folder);
  }
}
""",
    "examples/extensions/remote.ts": """\
export default function remote(folder: string): string {
  return `Present folder: ${folder} (on the remote host)`;
}
""",
    "presets/agent.yml": """\
agent:
  system: |
    You help with code on the {{model}} model. Your folder is {{cwd}}.
""",
}


def make_app_repo(where: Path) -> str:
    """Write the fixture application into a new git repo at `where`; returns the commit."""
    repo = git.Repo.init(where, initial_branch="main")
    for name, text in FILES.items():
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        (where / name).write_text(text)
    repo.git.add("-A")
    return repo.index.commit("app", author=ACTOR, committer=ACTOR).hexsha


def system_body(system: str, task: str = "rename the helper") -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "system", "content": system}, {"role": "user", "content": task}]}
