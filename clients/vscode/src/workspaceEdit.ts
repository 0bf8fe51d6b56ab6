/**
 * Adjustments to a server's `workspace/applyEdit` before VS Code applies it, on the LSP JSON
 * (pure: no `vscode`):
 *
 * - `staleReason`: a versioned edit whose document moved on is refused with a reason
 *   (vscode-languageclient's own check answers `applied: false` without one);
 * - `needsConfirmation`: the server marked the edit for review (VS Code's refactor preview);
 * - `touchedUris`: the documents an edit changes (saved after it when the settings say so).
 */

export interface Position {
  line: number;
  character: number;
}

export interface TextEdit {
  range: { start: Position; end: Position };
  newText: string;
  annotationId?: string;
}

export interface TextDocumentEdit {
  textDocument: { uri: string; version: number | null };
  edits: TextEdit[];
}

export interface ResourceOperation {
  kind: "create" | "rename" | "delete";
  uri?: string;
  oldUri?: string;
  newUri?: string;
  options?: Record<string, unknown>;
  annotationId?: string;
}

export interface ChangeAnnotation {
  label: string;
  needsConfirmation?: boolean;
  description?: string;
}

export interface WorkspaceEdit {
  changes?: Record<string, TextEdit[]>;
  documentChanges?: (TextDocumentEdit | ResourceOperation)[];
  changeAnnotations?: Record<string, ChangeAnnotation>;
}

function isResourceOperation(change: TextDocumentEdit | ResourceOperation): change is ResourceOperation {
  return typeof (change as ResourceOperation).kind === "string";
}

/**
 * Why the edit must be refused: a versioned `TextDocumentEdit` for an open document whose
 * version is no longer the one the agent read.
 *
 * @param versions The version of each open document, by URI string as the server sent it.
 */
export function staleReason(edit: WorkspaceEdit, versions: (uri: string) => number | undefined): string | undefined {
  for (const change of edit.documentChanges ?? []) {
    if (isResourceOperation(change)) continue;
    const { uri, version } = change.textDocument;
    if (typeof version !== "number") continue;
    const current = versions(uri);
    if (current !== undefined && current !== version) {
      return `${uri} changed in the editor since the agent read it (version ${version}, the editor has ${current})`;
    }
  }
  return undefined;
}

/** Whether any change of the edit carries an annotation with `needsConfirmation` (review mode). */
export function needsConfirmation(edit: WorkspaceEdit): boolean {
  return Object.values(edit.changeAnnotations ?? {}).some((a) => a?.needsConfirmation === true);
}

/** The URIs whose text the edit changes or creates (not deleted ones), in order, once each. */
export function touchedUris(edit: WorkspaceEdit): string[] {
  const uris: string[] = [];
  const add = (uri: string | undefined) => {
    if (uri && !uris.includes(uri)) uris.push(uri);
  };
  for (const change of edit.documentChanges ?? []) {
    if (!isResourceOperation(change)) add(change.textDocument.uri);
    else if (change.kind === "create") add(change.uri);
    else if (change.kind === "rename") add(change.newUri);
  }
  for (const uri of Object.keys(edit.changes ?? {})) add(uri);
  return uris;
}
