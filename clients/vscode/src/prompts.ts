/**
 * Server → client prompts in VS Code's own UI.
 *
 * - `cadenza/askUser` → an input box (a quick pick when the server offers options); an empty
 *   or dismissed answer is a decline (`answer: null`). A `$/cancelRequest` from the server (the
 *   session was cancelled, or answered with `cadenza.replySession`) closes the prompt. For a
 *   session that waits after `needs_user_input`, a decline leaves it waiting: a notification
 *   with "Answer…" (and the panel's Reply…, and Cadenza: Reply to Session…) answers later.
 * - `cadenza/requestPermission` → a modal with the server's options (allow once, always allow,
 *   reject, always reject), or the `cadenza.permissions.default` policy.
 * - `cadenza/waitingHuman` → the page (opened by the server's `window/showDocument` already
 *   when `opened` is true, else here), then Continue / Cancel. A dismissed notification is not
 *   answered: the session keeps waiting until the panel's Continue or Cancel (or Reply…), and
 *   the server then withdraws this request.
 */

import * as vscode from "vscode";

import { readSettings } from "./config";
import { CANCELLED, describePermission, optionByName, optionForPolicy, selected } from "./permissions";
import type {
  AskUserParams,
  AskUserResult,
  RequestPermissionParams,
  RequestPermissionResult,
  WaitingHumanParams,
  WaitingHumanResult,
} from "./protocol";
import type { SessionStore } from "./sessions";

/** What the prompts need from the extension. */
export interface PromptHost {
  store: SessionStore;
  /** Re-render the panel and the status bar. */
  changed(): void;
  /** A waiting session's question was declined: offer to answer later. */
  answerLater(sessionId: string): void;
}

const OTHER = "$(edit) Type an answer…";

function shortTask(store: SessionStore, sessionId: string): string {
  const task = store.get(sessionId)?.task.split("\n")[0] ?? "";
  return task.length > 60 ? `${task.slice(0, 59)}…` : task;
}

/** The promise that resolves when the server withdraws the request ($/cancelRequest). */
function withdrawn(token: vscode.CancellationToken): Promise<undefined> {
  return new Promise((resolve) => {
    if (token.isCancellationRequested) resolve(undefined);
    token.onCancellationRequested(() => resolve(undefined));
  });
}

export async function askUser(
  params: AskUserParams,
  token: vscode.CancellationToken,
  host: PromptHost,
): Promise<AskUserResult> {
  const { store } = host;
  const question = typeof params?.question === "string" && params.question ? params.question : "Cadenza asks:";
  const task = shortTask(store, params?.sessionId);
  const title = task ? `Cadenza asks (${task})` : "Cadenza asks";
  // The question of a session that stopped with needs_user_input (its end entry shows it and
  // session_resume the answer), rather than the ask_user tool's question in the middle of a step.
  const session = store.get(params?.sessionId);
  const waiting = session?.state === "waiting" && session.stopReason === "needs_user_input";
  if (!waiting) {
    store.note(params.sessionId, `Asked: ${question}`);
    host.changed();
  }
  let answer: string | undefined;
  const options = Array.isArray(params.options) ? params.options : [];
  if (options.length > 0) {
    const items: (vscode.QuickPickItem & { value?: string })[] = options.map((o) =>
      typeof o === "string"
        ? { label: o, value: o }
        : { label: o.label ?? o.value ?? "", value: o.value ?? o.label, description: o.description },
    );
    items.push({ label: OTHER });
    const picked = await vscode.window.showQuickPick(
      items,
      { title, placeHolder: question, ignoreFocusOut: true },
      token,
    );
    if (picked?.label === OTHER) {
      answer = await vscode.window.showInputBox({ title, prompt: question, ignoreFocusOut: true }, token);
    } else {
      answer = picked?.value;
    }
  } else {
    answer = await vscode.window.showInputBox(
      {
        title,
        prompt: params.whyNoDefault ? `${question} (${params.whyNoDefault})` : question,
        placeHolder: "Your answer (Escape declines)",
        ignoreFocusOut: true,
      },
      token,
    );
  }
  const declined = token.isCancellationRequested || answer === undefined || answer.trim() === "";
  if (waiting) {
    if (declined && !token.isCancellationRequested) {
      store.note(params.sessionId, "Not answered yet: the session waits (Reply… answers later).", "warning");
      host.answerLater(params.sessionId);
    }
  } else {
    store.note(params.sessionId, declined ? "You declined to answer." : `You answered: ${answer}`);
  }
  host.changed();
  return { answer: declined ? null : (answer as string) };
}

export async function requestPermission(
  params: RequestPermissionParams,
  token: vscode.CancellationToken,
  host: PromptHost,
): Promise<RequestPermissionResult> {
  const { store } = host;
  const options = Array.isArray(params?.options) ? params.options : [];
  if (options.length === 0) return CANCELLED;
  const policy = readSettings(vscode.workspace.getConfiguration("cadenza")).permissionsDefault;
  const { message, detail } = describePermission(params);
  // A protected file is never written on a standing policy: the person answers each time.
  const isProtected = (params.protectedPaths ?? []).length > 0;
  const automatic = isProtected ? undefined : optionForPolicy(options, policy);
  if (automatic) {
    store.note(params.sessionId, `${message}: ${automatic.name} (cadenza.permissions.default is "${policy}")`);
    host.changed();
    return selected(automatic.optionId);
  }
  const choice = await Promise.race([
    vscode.window.showWarningMessage(message, { modal: true, detail }, ...options.map((o) => o.name)),
    withdrawn(token),
  ]);
  const option = token.isCancellationRequested ? undefined : optionByName(options, choice);
  store.note(params.sessionId, option ? `${message}: ${option.name}` : `${message}: dismissed`);
  host.changed();
  return option ? selected(option.optionId) : CANCELLED;
}

export async function waitingHuman(
  params: WaitingHumanParams,
  token: vscode.CancellationToken,
  host: PromptHost,
): Promise<WaitingHumanResult> {
  const { store } = host;
  const uri = params?.uri ?? params?.url;
  const reason = params?.waitReason || "The agent waits for you in the browser";
  if (uri && params?.opened !== true) {
    // The server could not open it (no window/showDocument, or it failed): open it here.
    const opened = await vscode.env.openExternal(vscode.Uri.parse(uri));
    if (!opened) void vscode.window.showWarningMessage(`Cadenza could not open ${uri}: open it yourself.`);
  }
  if (uri) store.note(params.sessionId, `The page is open in your browser: ${uri}`);
  host.changed();
  const cancelled = withdrawn(token);
  const choice = await Promise.race([
    vscode.window.showInformationMessage(`Cadenza waits for you: ${reason}`, "Continue", "Cancel"),
    cancelled,
  ]);
  if (choice === "Continue") return { action: "continue" };
  if (choice === "Cancel" || token.isCancellationRequested) return { action: "cancel" };
  // Dismissed: the session keeps waiting. The panel's Continue / Cancel (or Reply…) answer it
  // later, and the server then withdraws this request; the answer to a withdrawn request is
  // ignored.
  store.note(params.sessionId, "Still waiting for you: Continue in the panel when you are done.", "warning");
  host.changed();
  await cancelled;
  return { action: "cancel" };
}
