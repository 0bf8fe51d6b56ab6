/**
 * The task sent to the agent: what the person typed, plus the editor's context (the selected
 * lines, or the active file). Pure: the caller reads the editor.
 *
 * The selection is quoted with its file and 1-based line numbers, as the Neovim plugin does, so
 * the agent can find it; the active file is only named: the server reads the open buffer itself
 * (unsaved changes included) when the agent asks for it.
 */

export interface EditorContext {
  /** The file's path relative to the workspace root (absolute when outside it). */
  path: string;
  /** VS Code's language id, used as the fence's info string. */
  languageId?: string;
  /** The selected text, when the selection is not empty. */
  selection?: {
    text: string;
    /** 1-based, inclusive. */
    startLine: number;
    endLine: number;
  };
  /** 1-based cursor line, used when there is no selection. */
  cursorLine?: number;
}

/** A fence longer than any run of backticks in `text`. */
export function fenceFor(text: string): string {
  let longest = 0;
  for (const match of text.matchAll(/`+/g)) longest = Math.max(longest, match[0].length);
  return "`".repeat(Math.max(3, longest + 1));
}

/** The task with its context appended. */
export function taskWithContext(task: string, context: EditorContext | undefined): string {
  const trimmed = task.trim();
  if (!context) return trimmed;
  const { selection } = context;
  if (selection && selection.text.trim() !== "") {
    const body = selection.text.replace(/\r\n/g, "\n").replace(/\n$/, "");
    const fence = fenceFor(body);
    const lines =
      selection.startLine === selection.endLine
        ? `line ${selection.startLine}`
        : `lines ${selection.startLine}-${selection.endLine}`;
    return [
      trimmed,
      "",
      `Selected ${lines} of ${context.path}:`,
      `${fence}${context.languageId ?? ""}`,
      body,
      fence,
    ].join("\n");
  }
  const where = context.cursorLine ? ` (cursor on line ${context.cursorLine})` : "";
  return `${trimmed}\n\nActive file: ${context.path}${where}`;
}

/** A short description of the context for the input box's prompt. */
export function describeContext(context: EditorContext | undefined): string {
  if (!context) return "No file is active: the agent starts from the workspace.";
  const { selection } = context;
  if (selection && selection.text.trim() !== "") {
    const lines =
      selection.startLine === selection.endLine
        ? `line ${selection.startLine}`
        : `lines ${selection.startLine}-${selection.endLine}`;
    return `Context: the selected ${lines} of ${context.path}.`;
  }
  return `Context: the active file ${context.path}.`;
}

/** `path` relative to `root` with forward slashes, or unchanged when outside it. */
export function relativePath(root: string | undefined, file: string): string {
  if (!root) return file;
  const normalizedRoot = root.replace(/\\/g, "/").replace(/\/$/, "");
  const normalizedFile = file.replace(/\\/g, "/");
  return normalizedFile.startsWith(normalizedRoot + "/")
    ? normalizedFile.slice(normalizedRoot.length + 1)
    : normalizedFile;
}
