/**
 * Server → client prompts in VS Code's own UI.
 *
 * - `cadenza/askUser` → an input box (a quick pick when the server offers options); an empty
 *   or dismissed answer is a decline (`answer: null`). A `$/cancelRequest` from the server (the
 *   session was cancelled) closes the prompt.
 * - `cadenza/requestPermission` → a modal with the server's options (allow once, always allow,
 *   reject, always reject), or the `cadenza.permissions.default` policy. Not sent by the
 *   server yet: wired, unit-tested logic, no end-to-end test.
 * - `cadenza/waitingHuman` → open the page, then Continue / Cancel. Not sent by the server yet.
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

const OTHER = "$(edit) Type an answer…";

function shortTask(store: SessionStore, sessionId: string): string {
  const task = store.get(sessionId)?.task.split("\n")[0] ?? "";
  return task.length > 60 ? `${task.slice(0, 59)}…` : task;
}

export async function askUser(
  params: AskUserParams,
  token: vscode.CancellationToken,
  store: SessionStore,
  changed: () => void,
): Promise<AskUserResult> {
  const question = typeof params?.question === "string" && params.question ? params.question : "Cadenza asks:";
  const task = shortTask(store, params?.sessionId);
  const title = task ? `Cadenza asks (${task})` : "Cadenza asks";
  store.note(params.sessionId, `Asked: ${question}`);
  changed();
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
  store.note(params.sessionId, declined ? "You declined to answer." : `You answered: ${answer}`);
  changed();
  return { answer: declined ? null : (answer as string) };
}

export async function requestPermission(
  params: RequestPermissionParams,
  token: vscode.CancellationToken,
  store: SessionStore,
  changed: () => void,
): Promise<RequestPermissionResult> {
  const options = Array.isArray(params?.options) ? params.options : [];
  if (options.length === 0) return CANCELLED;
  const policy = readSettings(vscode.workspace.getConfiguration("cadenza")).permissionsDefault;
  const { message, detail } = describePermission(params);
  const automatic = optionForPolicy(options, policy);
  if (automatic) {
    store.note(params.sessionId, `${message}: ${automatic.name} (cadenza.permissions.default is "${policy}")`);
    changed();
    return selected(automatic.optionId);
  }
  const cancelled = new Promise<undefined>((resolve) => token.onCancellationRequested(() => resolve(undefined)));
  const choice = await Promise.race([
    vscode.window.showWarningMessage(message, { modal: true, detail }, ...options.map((o) => o.name)),
    cancelled,
  ]);
  const option = token.isCancellationRequested ? undefined : optionByName(options, choice);
  store.note(params.sessionId, option ? `${message}: ${option.name}` : `${message}: dismissed`);
  changed();
  return option ? selected(option.optionId) : CANCELLED;
}

export async function waitingHuman(
  params: WaitingHumanParams,
  token: vscode.CancellationToken,
  store: SessionStore,
  changed: () => void,
): Promise<WaitingHumanResult> {
  const uri = params?.uri ?? params?.url;
  const reason = params?.waitReason || "The agent waits for you in the browser";
  if (uri) {
    const opened = await vscode.env.openExternal(vscode.Uri.parse(uri));
    if (!opened) void vscode.window.showWarningMessage(`Cadenza could not open ${uri}: open it yourself.`);
  }
  store.note(params.sessionId, uri ? `Waiting for you at ${uri}: ${reason}` : `Waiting for you: ${reason}`, "warning");
  changed();
  const cancelled = new Promise<undefined>((resolve) => token.onCancellationRequested(() => resolve(undefined)));
  const choice = await Promise.race([
    vscode.window.showInformationMessage(`Cadenza: ${reason}. Continue when you are done.`, "Continue", "Cancel"),
    cancelled,
  ]);
  return { action: choice === "Continue" ? "continue" : "cancel" };
}
