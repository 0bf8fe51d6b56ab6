// "Cadenza: Manage Permissions" (src/managePermissions.ts): the rules in a quick pick; choosing
// a remembered one revokes it, a rule of the person's own file says where to change it.
import { beforeEach, describe, expect, it } from "vitest";

import { describeRule, managePermissions, ruleItems, type RuleItem } from "../src/managePermissions";
import type { PermissionsResult } from "../src/protocol";
import * as vscode from "./vscode-stub";

const RESULT: PermissionsResult = {
  userConfig: "/home/ann/.config/cadenza/cadenza.toml",
  rules: [
    { rule: "run_command:rm *", decision: "deny", source: "user", revocable: false },
    { rule: "run_command:pytest *", decision: "allow", source: "workspace", revocable: true },
    { rule: "delete_file", decision: "allow", source: "workspace", revocable: true },
  ],
};

let messages: string[] = [];

beforeEach(() => {
  messages = [];
  vscode.window.showQuickPick = async () => undefined;
  vscode.window.showInformationMessage = async (...args: unknown[]) => {
    messages.push(String(args[0]));
    return undefined;
  };
  vscode.window.showErrorMessage = async (...args: unknown[]) => {
    messages.push(`error: ${String(args[0])}`);
    return undefined;
  };
});

describe("Manage Permissions", () => {
  it("words each rule by what it does and where it lives", () => {
    expect(describeRule({ rule: "run_command:npm run *", decision: "allow", source: "workspace", revocable: true })).toBe(
      "commands `npm run *`",
    );
    expect(describeRule({ rule: "delete_file", decision: "allow", source: "workspace", revocable: true })).toBe("every delete_file call");
    const items = ruleItems(RESULT);
    expect(items.map((i) => [i.label, i.description])).toEqual([
      ["$(circle-slash) Deny commands `rm *`", "your settings"],
      ["$(check) Allow commands `pytest *`", "this workspace"],
      ["$(check) Allow every delete_file call", "this workspace"],
    ]);
    expect(items[0].detail).toBe("Set in /home/ann/.config/cadenza/cadenza.toml");
    expect(ruleItems({})).toEqual([]);
  });

  it("revokes the remembered rule chosen", async () => {
    const calls: [string, object][] = [];
    vscode.window.showQuickPick = async (items: unknown) => (items as RuleItem[])[1];
    await managePermissions(async (command, argument) => {
      calls.push([command, argument]);
      return command === "cadenza.listPermissions" ? RESULT : { revoked: "run_command:pytest *" };
    }, "file:///ws");
    expect(calls).toEqual([
      ["cadenza.listPermissions", { rootUri: "file:///ws" }],
      ["cadenza.revokePermission", { rule: "run_command:pytest *", decision: "allow", rootUri: "file:///ws" }],
    ]);
    expect(messages).toEqual(["Cadenza: revoked commands `pytest *`; Cadenza asks again."]);
  });

  it("says where a rule of the person's own settings is changed, and revokes nothing", async () => {
    const calls: string[] = [];
    vscode.window.showQuickPick = async (items: unknown) => (items as RuleItem[])[0];
    await managePermissions(async (command) => {
      calls.push(command);
      return RESULT;
    }, undefined);
    expect(calls).toEqual(["cadenza.listPermissions"]);
    expect(messages[0]).toMatch(/remove it from \[permissions\] deny in \/home\/ann\/\.config\/cadenza\/cadenza\.toml/);
  });

  it("says so when there is no rule, and shows a failure", async () => {
    await managePermissions(async () => ({ rules: [], userConfig: "x" }), undefined);
    expect(messages[0]).toMatch(/no permission rules/);
    await managePermissions(async () => {
      throw new Error("server gone");
    }, undefined);
    expect(messages[1]).toBe("error: Cadenza could not list the permissions: server gone");
  });
});
