/**
 * @-mentions of the panel's input: what the completion offers (`@selection`, `@problems`, the
 * workspace's files, symbols) and the prompt `context` they become (`cadenza.promptSession`'s
 * `{selection, files, symbols, problems}`, docs/protocol.md). The webview keeps the chosen
 * mentions as chips and sends them with the text; this module reads the editor when it is sent.
 */

import * as vscode from "vscode";

import type { PromptContext, WireRange } from "./protocol";

export type Mention =
  | { kind: "file"; uri: string; label: string }
  | { kind: "selection"; label: string }
  | { kind: "problems"; label: string }
  | { kind: "symbol"; label: string; name: string; uri: string; range: WireRange };

/** One row of the completion list; `mention` is what choosing it adds. */
export interface Suggestion {
  label: string;
  detail: string;
  mention: Mention;
}

const MAX_FILES = 20;
const MAX_PROBLEMS = 50;

/** Keep the mentions the webview sent that have the right shape. */
export function parseMentions(value: unknown): Mention[] {
  if (!Array.isArray(value)) return [];
  const out: Mention[] = [];
  for (const m of value as Record<string, unknown>[]) {
    if (!m || typeof m.label !== "string") continue;
    if (m.kind === "file" && typeof m.uri === "string") out.push({ kind: "file", uri: m.uri, label: m.label });
    else if (m.kind === "selection" || m.kind === "problems") out.push({ kind: m.kind, label: m.label });
    else if (m.kind === "symbol" && typeof m.uri === "string" && typeof m.name === "string" && m.range) {
      out.push({ kind: "symbol", label: m.label, name: m.name, uri: m.uri, range: m.range as WireRange });
    }
  }
  return out;
}

/** Paths that match `query` (every character in order, case-insensitive), best first. */
export function rankPaths(paths: string[], query: string, limit = 20): string[] {
  const q = query.toLowerCase();
  const scored: { path: string; score: number }[] = [];
  for (const p of paths) {
    const lower = p.toLowerCase();
    const name = lower.split("/").pop() ?? lower;
    let score: number;
    if (!q) score = 3;
    else if (name.startsWith(q)) score = 0;
    else if (name.includes(q)) score = 1;
    else if (lower.includes(q)) score = 2;
    else {
      let i = 0;
      for (const ch of lower) if (ch === q[i]) i++;
      if (i < q.length) continue;
      score = 3;
    }
    scored.push({ path: p, score });
  }
  scored.sort((a, b) => a.score - b.score || a.path.length - b.path.length || a.path.localeCompare(b.path));
  return scored.slice(0, limit).map((s) => s.path);
}

function wireRange(range: vscode.Range): WireRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

export class Mentions {
  private files: { at: number; paths: Map<string, string> } | undefined;

  /** The workspace's files, relative path → URI (cached for 10 s: typing asks often). */
  private async workspaceFiles(): Promise<Map<string, string>> {
    if (this.files && Date.now() - this.files.at < 10000) return this.files.paths;
    const uris = await vscode.workspace.findFiles("**/*", "**/{node_modules,.git,.venv,__pycache__,dist}/**", 5000);
    const paths = new Map<string, string>();
    for (const uri of uris) paths.set(vscode.workspace.asRelativePath(uri, false), uri.toString());
    this.files = { at: Date.now(), paths };
    return paths;
  }

  /** What `@query` may mean: the selection, the problems, files, then symbols. */
  async suggest(query: string): Promise<Suggestion[]> {
    const q = query.toLowerCase();
    const out: Suggestion[] = [];
    if ("selection".startsWith(q)) out.push({ label: "selection", detail: "the text selected in the editor", mention: { kind: "selection", label: "selection" } });
    if ("problems".startsWith(q)) out.push({ label: "problems", detail: "the Problems list (errors and warnings)", mention: { kind: "problems", label: "problems" } });
    const files = await this.workspaceFiles();
    for (const p of rankPaths([...files.keys()], query, 15)) {
      const name = p.split("/").pop() ?? p;
      out.push({ label: name, detail: p, mention: { kind: "file", uri: files.get(p) as string, label: name } });
    }
    if (query.length >= 2) {
      const symbols =
        (await vscode.commands.executeCommand<vscode.SymbolInformation[]>("vscode.executeWorkspaceSymbolProvider", query)) ?? [];
      for (const s of symbols.slice(0, 8)) {
        out.push({
          label: s.name,
          detail: `symbol in ${vscode.workspace.asRelativePath(s.location.uri, false)}`,
          mention: { kind: "symbol", label: s.name, name: s.name, uri: s.location.uri.toString(), range: wireRange(s.location.range) },
        });
      }
    }
    return out;
  }

  /** The prompt context of the mentions, read from the editor now (empty parts left out). */
  context(mentions: Mention[]): { context?: PromptContext; missing: string[] } {
    const context: PromptContext = {};
    const missing: string[] = [];
    for (const m of mentions) {
      if (m.kind === "file") {
        context.files = [...new Set([...(context.files ?? []), m.uri])].slice(0, MAX_FILES);
      } else if (m.kind === "symbol") {
        (context.symbols ??= []).push({ name: m.name, uri: m.uri, range: m.range });
      } else if (m.kind === "selection") {
        const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
        if (!editor || editor.selection.isEmpty) missing.push("no text is selected in the editor");
        else {
          const { document, selection } = editor;
          context.selection = { uri: document.uri.toString(), range: wireRange(selection), text: document.getText(selection) };
        }
      } else if (m.kind === "problems") {
        const problems: NonNullable<PromptContext["problems"]> = [];
        for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
          if (uri.scheme !== "file") continue;
          for (const d of diagnostics) {
            if (d.severity > vscode.DiagnosticSeverity.Warning) continue;
            problems.push({ uri: uri.toString(), message: d.message, range: wireRange(d.range), severity: d.severity + 1 });
          }
        }
        if (problems.length === 0) missing.push("the Problems list is empty");
        else context.problems = problems.slice(0, MAX_PROBLEMS);
      }
    }
    return { context: Object.keys(context).length ? context : undefined, missing };
  }
}
