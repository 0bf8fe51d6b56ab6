/**
 * `workspace/applyEdit`: VS Code applies the server's edits itself (vscode-languageclient's
 * handler, so Ctrl+Z undoes them), with three additions around it:
 *
 * - a stale versioned edit is refused *with a reason* the agent can read;
 * - a change the server marked `needsConfirmation` (review mode) opens VS Code's refactor
 *   preview; a discarded preview answers `applied: false` with a reason;
 * - with `cadenza.saveEdits: afterEachEdit` the changed documents are saved at once.
 */

import * as vscode from "vscode";
import {
  type ApplyWorkspaceEditParams,
  type ApplyWorkspaceEditResult,
  type LanguageClient,
} from "vscode-languageclient/node";

import { readSettings } from "./config";
import { needsConfirmation, staleReason, touchedUris, type WorkspaceEdit } from "./workspaceEdit";

type DefaultHandler = (params: ApplyWorkspaceEditParams) => Promise<ApplyWorkspaceEditResult>;

/** vscode-languageclient's own handler (version check, conversion, `workspace.applyEdit`). */
function defaultHandler(client: LanguageClient): DefaultHandler {
  const internal = (client as unknown as { handleApplyWorkspaceEdit?: DefaultHandler }).handleApplyWorkspaceEdit;
  if (typeof internal === "function") return internal.bind(client);
  // A later vscode-languageclient without the method: the same conversion, done here.
  return async (params) => {
    const converted = await client.protocol2CodeConverter.asWorkspaceEdit(params.edit);
    return { applied: await vscode.workspace.applyEdit(converted) };
  };
}

function openVersion(uri: string): number | undefined {
  const wanted = vscode.Uri.parse(uri).toString();
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === wanted)?.version;
}

/** Save the documents at `uris` that have unsaved changes. */
export async function saveDocuments(uris: string[]): Promise<string[]> {
  const saved: string[] = [];
  for (const uri of uris) {
    const wanted = vscode.Uri.parse(uri).toString();
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === wanted);
    if (document?.isDirty && (await document.save())) saved.push(vscode.workspace.asRelativePath(document.uri));
  }
  return saved;
}

export function applyEditHandler(client: LanguageClient, log: (line: string) => void) {
  const apply = defaultHandler(client);
  return async (params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> => {
    const edit = params.edit as WorkspaceEdit;
    const stale = staleReason(edit, openVersion);
    if (stale) {
      log(`refused ${params.label ?? "an edit"}: ${stale}`);
      return { applied: false, failureReason: stale };
    }
    const settings = readSettings(vscode.workspace.getConfiguration("cadenza"));
    const reviewed = needsConfirmation(edit);
    let result: ApplyWorkspaceEditResult;
    try {
      result = await apply(params);
    } catch (error) {
      const reason = `VS Code could not apply the edit: ${error instanceof Error ? error.message : String(error)}`;
      log(`${params.label ?? "edit"}: ${reason}`);
      return { applied: false, failureReason: reason };
    }
    log(`${params.label ?? "edit"}: ${result.applied ? "applied" : "not applied"}${reviewed ? " (after review)" : ""}`);
    if (!result.applied) {
      const reason =
        result.failureReason ??
        (reviewed
          ? "the person discarded the change in the review preview"
          : "VS Code did not apply the edit (the document changed since the agent read it, or it is read-only)");
      log(`${params.label ?? "edit"} not applied: ${reason}`);
      return { ...result, failureReason: reason };
    }
    if (settings.saveEdits === "afterEachEdit") {
      const saved = await saveDocuments(touchedUris(edit));
      log(`${params.label ?? "edit"} applied; saved ${saved.length ? saved.join(", ") : "nothing"} (saveEdits: afterEachEdit)`);
    }
    return result;
  };
}
