/**
 * "Cadenza: Manage Permissions": the rules that answer permission prompts without asking, in a
 * quick pick; choosing one revokes it. `cadenza.listPermissions {rootUri?}` lists the person's
 * own rules (`[permissions] allow`/`deny` of their cadenza.toml: changed in that file) and the
 * "always" answers remembered for this workspace (revoked with `cadenza.revokePermission`).
 */

import * as vscode from "vscode";

import { errorText } from "./errors";
import { LIST_PERMISSIONS, REVOKE_PERMISSION, type PermissionRule, type PermissionsResult } from "./protocol";

/** A quick pick item for a rule. */
export interface RuleItem extends vscode.QuickPickItem {
  rule: PermissionRule;
}

/** "run_command:pytest *" → "commands `pytest *`"; a tool alone → "every run_command call". */
export function describeRule(rule: PermissionRule): string {
  const colon = rule.rule.indexOf(":");
  if (colon < 0) return `every ${rule.rule} call`;
  const [tool, pattern] = [rule.rule.slice(0, colon), rule.rule.slice(colon + 1)];
  return tool === "run_command" ? `commands \`${pattern}\`` : `${tool} \`${pattern}\``;
}

/** The quick pick's items: one per rule, what it does and where it lives. */
export function ruleItems(result: PermissionsResult): RuleItem[] {
  const rules = Array.isArray(result?.rules) ? result.rules : [];
  return rules
    .filter((r) => r && typeof r.rule === "string")
    .map((rule) => ({
      rule,
      label: `${rule.decision === "deny" ? "$(circle-slash) Deny" : "$(check) Allow"} ${describeRule(rule)}`,
      description: rule.source === "user" ? "your settings" : "this workspace",
      detail: rule.revocable ? "Choose to revoke: Cadenza asks again" : `Set in ${result.userConfig ?? "your cadenza.toml"}`,
    }));
}

export type Execute = (command: string, argument: object) => Promise<unknown>;

/** List the rules; revoke the one chosen (a rule of the person's file: say where it is). */
export async function managePermissions(execute: Execute, rootUri: string | undefined): Promise<void> {
  let result: PermissionsResult;
  try {
    result = (await execute(LIST_PERMISSIONS, rootUri ? { rootUri } : {})) as PermissionsResult;
  } catch (error) {
    void vscode.window.showErrorMessage(`Cadenza could not list the permissions: ${errorText(error)}`);
    return;
  }
  const items = ruleItems(result);
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      "Cadenza: no permission rules. Commands and deletions ask each time; \u201cAlways allow\u201d answers are listed here.",
    );
    return;
  }
  const chosen = await vscode.window.showQuickPick(items, {
    title: "Cadenza: Permissions",
    placeHolder: "Choose a rule to revoke",
    matchOnDescription: true,
  });
  if (!chosen) return;
  const rule = chosen.rule;
  if (!rule.revocable) {
    void vscode.window.showInformationMessage(
      `Cadenza: ${rule.rule} is in your own settings: remove it from [permissions] ${rule.decision} in ${result.userConfig}.`,
    );
    return;
  }
  try {
    await execute(REVOKE_PERMISSION, { rule: rule.rule, decision: rule.decision, ...(rootUri ? { rootUri } : {}) });
  } catch (error) {
    void vscode.window.showErrorMessage(`Cadenza could not revoke ${rule.rule}: ${errorText(error)}`);
    return;
  }
  void vscode.window.showInformationMessage(`Cadenza: revoked ${describeRule(rule)}; Cadenza asks again.`);
}
