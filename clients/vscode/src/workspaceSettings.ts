/**
 * Tells the person, once, when a workspace tries to set a setting that only they may set
 * (settingScopes.ts): its `.vscode/settings.json` or `.code-workspace` file sets a user-only
 * setting, or loosens a tighten-only one. Cadenza ignores those values either way; the warning
 * says so, because such a file in a repository (or written by the model) is worth a look.
 *
 * VS Code drops scoped settings from a workspace before the extension could see them, so the
 * files are read here themselves, when the window opens and whenever one of them changes on
 * disk (a value takes effect only once saved).
 */

import * as vscode from "vscode";

import { loosenedSettings, loosenedWarning, userOnlyKeysIn, userOnlyWarning } from "./settingScopes";

/** A workspace settings file and how a warning names it. */
interface SettingsFile {
  uri: vscode.Uri;
  label: string;
}

function settingsFiles(): SettingsFile[] {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const files: SettingsFile[] = folders.map((folder) => ({
    uri: vscode.Uri.joinPath(folder.uri, ".vscode", "settings.json"),
    label: folders.length > 1 ? `${folder.name}/.vscode/settings.json` : ".vscode/settings.json",
  }));
  const workspaceFile = vscode.workspace.workspaceFile;
  if (workspaceFile && workspaceFile.scheme !== "untitled") {
    files.push({ uri: workspaceFile, label: workspaceFile.path.split("/").pop() ?? "workspace file" });
  }
  return files;
}

/** A settings file is small; a larger one (or a FIFO, a device) is not read. */
const MAX_SETTINGS_BYTES = 1024 * 1024;

/** The file's text; undefined when there is none, or it is no regular file of a sane size. */
async function readText(uri: vscode.Uri): Promise<string | undefined> {
  try {
    const stat = await vscode.workspace.fs.stat(uri);
    if ((stat.type & vscode.FileType.File) === 0 || stat.size > MAX_SETTINGS_BYTES) return undefined;
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined; // no such file: it sets nothing
  }
}

export class WorkspaceSettingsGuard implements vscode.Disposable {
  /** What was warned about in this window (source and key, or key and value). */
  private readonly warned = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly log: (line: string) => void) {
    const watchers = [vscode.workspace.createFileSystemWatcher("**/.vscode/settings.json")];
    const workspaceFile = vscode.workspace.workspaceFile;
    if (workspaceFile?.scheme === "file") {
      const folder = vscode.Uri.joinPath(workspaceFile, "..");
      const name = workspaceFile.path.split("/").pop() ?? "";
      watchers.push(vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, name)));
    }
    for (const watcher of watchers) {
      this.disposables.push(
        watcher,
        watcher.onDidChange(() => void this.check()),
        watcher.onDidCreate(() => void this.check()),
      );
    }
    this.disposables.push(
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.check()),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("cadenza")) void this.check();
      }),
    );
    void this.check();
  }

  /** Warn about what the workspace sets now and was not warned about yet. */
  async check(): Promise<void> {
    for (const file of settingsFiles()) {
      const text = await readText(file.uri);
      if (text === undefined) continue;
      const keys = userOnlyKeysIn(text).filter((key) => !this.warned.has(`${file.uri.toString()} ${key}`));
      if (keys.length === 0) continue;
      for (const key of keys) this.warned.add(`${file.uri.toString()} ${key}`);
      this.warn(userOnlyWarning(file.label, keys));
    }
    for (const loosened of loosenedSettings(vscode.workspace.getConfiguration("cadenza"))) {
      const id = `${loosened.key}=${JSON.stringify(loosened.workspace)}`;
      if (this.warned.has(id)) continue;
      this.warned.add(id);
      this.warn(loosenedWarning(loosened));
    }
  }

  private warn(message: string): void {
    this.log(`workspace settings: ${message}`);
    void vscode.window.showWarningMessage(message);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
