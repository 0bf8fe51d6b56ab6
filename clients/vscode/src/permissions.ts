/**
 * `cadenza/requestPermission` (ACP's `session/request_permission` shape) without the UI: which
 * option a policy picks, and how a tool call is described in the modal (prompts.ts shows it).
 * The server asks before each gated tool call (`run_command`, `delete_file`, ...).
 */

import type { PermissionPolicy } from "./config";
import type { PermissionOption, RequestPermissionParams, RequestPermissionResult } from "./protocol";

/** The option a non-asking policy answers with: a one-time choice first, else the permanent one. */
export function optionForPolicy(
  options: PermissionOption[],
  policy: PermissionPolicy,
): PermissionOption | undefined {
  if (policy === "ask") return undefined;
  const order = policy === "allow" ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
  for (const kind of order) {
    const found = options.find((o) => o.kind === kind);
    if (found) return found;
  }
  return undefined;
}

export function selected(optionId: string): RequestPermissionResult {
  return { outcome: { outcome: "selected", optionId } };
}

export const CANCELLED: RequestPermissionResult = { outcome: { outcome: "cancelled" } };

/**
 * The modal's message and detail. A shell command is named in the message ("Cadenza wants to run
 * `pytest -q`"; a long or multi-line one goes to the detail); another tool by the call's title,
 * which the server words as a gerund ("deleting old.py": "Cadenza asks before deleting old.py"),
 * with its arguments as the detail.
 */
export function describePermission(params: RequestPermissionParams): { message: string; detail: string } {
  const call = params.toolCall ?? {};
  const raw = call.rawInput as Record<string, unknown> | string | undefined;
  if (raw && typeof raw === "object" && typeof raw.command === "string") {
    const command = raw.command.trim();
    if (command.length <= 120 && !command.includes("\n")) return { message: `Cadenza wants to run \`${command}\``, detail: "" };
    return { message: "Cadenza wants to run a command", detail: clip(command) };
  }
  const title = (call.title || "").trim();
  let message: string;
  if (/^[a-z]+ing\b/.test(title)) message = `Cadenza asks before ${title}`;
  else message = `Cadenza asks before calling ${title || call.kind || "a tool"}`;
  let detail = "";
  if (typeof raw === "string") detail = raw;
  else if (raw !== undefined) detail = JSON.stringify(raw, null, 2);
  return { message, detail: clip(detail) };
}

function clip(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

/** The option chosen by its button label (the option's name), or undefined (dismissed). */
export function optionByName(options: PermissionOption[], name: string | undefined): PermissionOption | undefined {
  return name === undefined ? undefined : options.find((o) => o.name === name);
}
