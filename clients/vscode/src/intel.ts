/**
 * Code intelligence for the agent, from VS Code's own language features (docs/protocol.md,
 * "Code intelligence from the editor"). The extension declares
 * `experimental.cadenza.codeIntelligence` (protocol.ts), so the server asks:
 *
 * - `cadenza/diagnostics {uris?}` → `vscode.languages.getDiagnostics` (a requested file that is in
 *   no tab is shown in a preview tab until its diagnostics settle, then closed again; one whose
 *   text changed after its latest diagnostics, e.g. an edit just applied, waits for new ones);
 * - `cadenza/references {textDocument, position}` → `vscode.executeReferenceProvider`;
 * - `cadenza/definition` → `vscode.executeDefinitionProvider`;
 * - `cadenza/rename {…, newName}` → `vscode.executeDocumentRenameProvider`, whose edit goes back
 *   to the server unapplied: the server applies it through its own edit path (review, undo).
 *
 * A file of a language VS Code has no language server for (no extension provides one, e.g. Python
 * without the Python extension; `languages.ts`) is answered "not available": the error
 * `MethodNotFound` for the three symbol requests, its URI in `unavailable` for diagnostics (when
 * no diagnostics are held for it either). The server then asks a language server it starts
 * itself (docs/protocol.md).
 *
 * VS Code positions are UTF-16, as is the only `positionEncoding` vscode-languageclient offers,
 * so the languageclient's converters map both ways unchanged. Each answer waits at most
 * `TIMEOUT_MS` (a language feature that never returns must not hold the session).
 */

import * as vscode from "vscode";
import { type LanguageClient, ResponseError, ErrorCodes } from "vscode-languageclient/node";
import { servesLanguage } from "./languages";

export const DIAGNOSTICS = "cadenza/diagnostics";
export const REFERENCES = "cadenza/references";
export const DEFINITION = "cadenza/definition";
export const RENAME = "cadenza/rename";

/** Longest wait for a language feature (ms), below the server's own bound. */
export const TIMEOUT_MS = 15_000;
/** How long a file opened only to be asked about gets for its diagnostics (ms). */
const SETTLE_MS = 10_000;
/** Diagnostics count as settled this long after their latest change (ms): a language server
 * often reports a file in steps (TypeScript: syntax first, then semantics). */
const QUIET_MS = 1_500;

interface SymbolParams {
  textDocument: { uri: string };
  position: { line: number; character: number };
}

interface RenameParams extends SymbolParams {
  newName: string;
}

function failed(message: string): ResponseError<void> {
  return new ResponseError(ErrorCodes.InternalError, message);
}

/** Thrown for a file no language server in VS Code serves; answered with `MethodNotFound`. */
class NotAvailable extends Error {}

/** Whether an extension provides language features for `document`'s language. */
function served(document: vscode.TextDocument): boolean {
  return servesLanguage(document.languageId, vscode.extensions.all);
}

/** `work`, or a rejection naming `what` after `ms`. */
async function bounded<T>(work: Thenable<T>, what: string, ms = TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([Promise.resolve(work), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `uri`'s diagnostics changed and then stayed unchanged for `QUIET_MS` (or after `ms`). */
function diagnosticsSettled(uri: vscode.Uri, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let quiet: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(limit);
      clearTimeout(quiet);
      listener.dispose();
      resolve();
    };
    const limit = setTimeout(done, ms);
    const listener = vscode.languages.onDidChangeDiagnostics((event) => {
      if (!event.uris.some((u) => u.toString() === uri.toString())) return;
      clearTimeout(quiet);
      quiet = setTimeout(done, QUIET_MS);
    });
  });
}

function tabOf(uri: vscode.Uri): vscode.Tab | undefined {
  return vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .find((tab) => tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === uri.toString());
}

/**
 * Show `uri` in a preview tab (focus stays where it is) until its diagnostics settle, then close
 * that tab: language servers report on files open in tabs only (TypeScript checks no other).
 */
async function inTemporaryTab(uri: vscode.Uri): Promise<void> {
  const settled = diagnosticsSettled(uri, SETTLE_MS);
  const document = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true });
  await settled;
  const tab = tabOf(uri);
  if (tab && !tab.isDirty) await vscode.window.tabGroups.close(tab, true);
}

/** The handlers of the four requests, registered on `client`. */
export function installIntel(client: LanguageClient): vscode.Disposable[] {
  const c2p = client.code2ProtocolConverter;
  const p2c = client.protocol2CodeConverter;

  /** The document and position a request names; the document is loaded for the providers.
   * @throws NotAvailable when no language server serves the document's language. */
  async function target(params: SymbolParams): Promise<[vscode.Uri, vscode.Position]> {
    const uri = p2c.asUri(params.textDocument.uri);
    const document = await vscode.workspace.openTextDocument(uri);
    if (!served(document)) {
      throw new NotAvailable(`no language server in VS Code serves ${document.languageId} files`);
    }
    return [uri, new vscode.Position(params.position.line, params.position.character)];
  }

  // When each document last changed and when its diagnostics last did: diagnostics older than
  // the text (an edit just applied) are waited for, bounded, so an edit's check sees its errors.
  const changed = new Map<string, number>();
  const reported = new Map<string, number>();
  const tracking = [
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.contentChanges.length > 0) changed.set(e.document.uri.toString(), Date.now());
    }),
    vscode.languages.onDidChangeDiagnostics((e) => {
      for (const uri of e.uris) reported.set(uri.toString(), Date.now());
    }),
  ];
  const stale = (uri: vscode.Uri) => (changed.get(uri.toString()) ?? 0) > (reported.get(uri.toString()) ?? 0);

  async function diagnostics(params: { uris?: string[] } | null) {
    const uris = params?.uris;
    let pairs: [vscode.Uri, vscode.Diagnostic[]][];
    const unavailable: string[] = [];
    if (!Array.isArray(uris)) {
      pairs = vscode.languages.getDiagnostics();
    } else {
      pairs = [];
      for (const raw of uris) {
        const uri = p2c.asUri(raw);
        const held = vscode.languages.getDiagnostics(uri);
        // No language server and nothing held (a linter's count too): the server asks its own.
        if (held.length === 0 && !served(await vscode.workspace.openTextDocument(uri))) {
          unavailable.push(raw);
          continue;
        }
        if (!tabOf(uri)) await inTemporaryTab(uri);
        else if (stale(uri)) await diagnosticsSettled(uri, SETTLE_MS);
        pairs.push([uri, vscode.languages.getDiagnostics(uri)]);
      }
    }
    const items = [];
    for (const [uri, list] of pairs) {
      items.push({ uri: c2p.asUri(uri), diagnostics: await c2p.asDiagnostics(list) });
    }
    return { items, unavailable };
  }

  function asLocations(found: (vscode.Location | vscode.LocationLink)[] | undefined) {
    return (found ?? []).map((item) =>
      item instanceof vscode.Location
        ? c2p.asLocation(item)
        : { uri: c2p.asUri(item.targetUri), range: c2p.asRange(item.targetSelectionRange ?? item.targetRange) },
    );
  }

  async function locations(command: string, params: SymbolParams) {
    const [uri, position] = await target(params);
    const found = await bounded(
      vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>(command, uri, position),
      "the language feature",
    );
    return asLocations(found);
  }

  async function rename(params: RenameParams) {
    const [uri, position] = await target(params);
    const edit = await bounded(
      vscode.commands.executeCommand<vscode.WorkspaceEdit | undefined>(
        "vscode.executeDocumentRenameProvider",
        uri,
        position,
        params.newName,
      ),
      "the rename provider",
    );
    if (!edit) return null;
    // Versioned, so the server refuses an edit computed on a buffer that changed since.
    const documentChanges = edit.entries().map(([file, edits]) => {
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === file.toString());
      return {
        textDocument: { uri: c2p.asUri(file), version: open ? open.version : null },
        edits: edits.map((e) => c2p.asTextEdit(e)),
      };
    });
    return { documentChanges };
  }

  /** Run a handler; a thrown error (a provider's refusal, a timeout) is an error answer, and a
   * file no language server serves is `MethodNotFound` ("not available", docs/protocol.md). */
  function answer<P>(run: (params: P) => Promise<unknown>) {
    return async (params: P) => {
      try {
        return await run(params);
      } catch (error) {
        if (error instanceof NotAvailable) return new ResponseError(ErrorCodes.MethodNotFound, error.message);
        return failed(error instanceof Error ? error.message : String(error));
      }
    };
  }

  return [
    ...tracking,
    client.onRequest(DIAGNOSTICS, answer(diagnostics)),
    client.onRequest(REFERENCES, answer((p: SymbolParams) => locations("vscode.executeReferenceProvider", p))),
    client.onRequest(DEFINITION, answer((p: SymbolParams) => locations("vscode.executeDefinitionProvider", p))),
    client.onRequest(RENAME, answer(rename)),
  ];
}
