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

/** The modal's message and detail: the call's title, then its command or arguments. */
export function describePermission(params: RequestPermissionParams): { message: string; detail: string } {
  const call = params.toolCall ?? {};
  const title = call.title || call.kind || "a tool";
  const raw = call.rawInput as Record<string, unknown> | string | undefined;
  let detail = "";
  if (raw && typeof raw === "object" && typeof raw.command === "string") detail = raw.command;
  else if (typeof raw === "string") detail = raw;
  else if (raw !== undefined) detail = JSON.stringify(raw, null, 2);
  if (detail.length > 2000) detail = `${detail.slice(0, 2000)}…`;
  return { message: `Cadenza wants to run ${title}`, detail };
}

/** The option chosen by its button label (the option's name), or undefined (dismissed). */
export function optionByName(options: PermissionOption[], name: string | undefined): PermissionOption | undefined {
  return name === undefined ? undefined : options.find((o) => o.name === name);
}
