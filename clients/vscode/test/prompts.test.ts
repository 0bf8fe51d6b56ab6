import { beforeEach, describe, expect, it, vi } from "vitest";

import { askUser, requestPermission, waitingHuman, type PromptHost } from "../src/prompts";
import { SessionStore } from "../src/sessions";
import * as vscode from "./vscode-stub";

const never = () => new vscode.CancellationTokenSource();

function host(store = new SessionStore()) {
  const answerLater = vi.fn();
  const value: PromptHost = { store, changed: () => undefined, answerLater };
  return { host: value, store, answerLater };
}

function waitingFor(store: SessionStore, id: string, stopReason: string) {
  store.add(id, { task: "Rename greet" });
  store.apply(id, { sessionUpdate: "session_end", stopReason, message: "I need a name.", steps: 1, missingInfo: "the new name" });
}

beforeEach(() => {
  vscode.window.showInputBox = async () => undefined;
  vscode.window.showQuickPick = async () => undefined;
  vscode.window.showInformationMessage = async () => undefined;
  vscode.window.showWarningMessage = async () => undefined;
  vscode.env.openExternal = async () => true;
  vscode.workspace.settings = {};
  vscode.workspace.workspaceSettings = {};
});

describe("cadenza/waitingHuman", () => {
  const params = { sessionId: "s", waitReason: "Log in, please", uri: "http://127.0.0.1:1/login" };

  it("does not open the page again when the server opened it (opened: true)", async () => {
    const open = vi.fn(async (_uri: unknown) => true);
    vscode.env.openExternal = open;
    vscode.window.showInformationMessage = async () => "Continue";
    const { host: h } = host();
    expect(await waitingHuman({ ...params, opened: true }, never().token as never, h)).toEqual({ action: "continue" });
    expect(open).not.toHaveBeenCalled();
  });

  it("opens the page when the server could not (opened: false or absent)", async () => {
    const open = vi.fn(async (_uri: unknown) => true);
    vscode.env.openExternal = open;
    const shown: unknown[][] = [];
    vscode.window.showInformationMessage = async (...args: unknown[]) => {
      shown.push(args);
      return "Cancel";
    };
    const { host: h } = host();
    expect(await waitingHuman({ ...params, opened: false }, never().token as never, h)).toEqual({ action: "cancel" });
    expect(await waitingHuman({ sessionId: "s", waitReason: "x", url: "http://old/" }, never().token as never, h)).toEqual({
      action: "cancel",
    });
    expect(open.mock.calls.map((c) => String(c[0]))).toEqual(["http://127.0.0.1:1/login", "http://old/"]);
    expect(shown[0]).toEqual(["Cadenza waits for you: Log in, please", "Continue", "Cancel"]);
  });

  it("keeps waiting when the notification is dismissed, until the server withdraws the request", async () => {
    const { host: h, store } = host();
    waitingFor(store, "s", "waiting_human");
    const source = new vscode.CancellationTokenSource();
    let settled = false;
    const answer = waitingHuman({ ...params, opened: true }, source.token as never, h).then((a) => {
      settled = true;
      return a;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    expect(store.get("s")!.entries.at(-1)).toMatchObject({ kind: "note", level: "warning" });
    source.cancel(); // replySession (the panel's Continue) or a cancel withdrew it
    expect(await answer).toEqual({ action: "cancel" });
  });
});

describe("cadenza/askUser", () => {
  it("answers the question of a waiting session without notes (session_resume shows the answer)", async () => {
    const prompts: unknown[] = [];
    vscode.window.showInputBox = async (options: unknown) => {
      prompts.push(options);
      return "welcome";
    };
    const { host: h, store, answerLater } = host();
    waitingFor(store, "s", "needs_user_input");
    const params = { sessionId: "s", question: "the new name", whyNoDefault: "two names fit" };
    expect(await askUser(params, never().token as never, h)).toEqual({ answer: "welcome" });
    expect(prompts[0]).toMatchObject({ title: "Cadenza asks (Rename greet)", prompt: "the new name (two names fit)" });
    expect(store.get("s")!.entries.map((e) => e.kind)).toEqual(["end"]);
    expect(answerLater).not.toHaveBeenCalled();
  });

  it("offers to answer later when a waiting session's question is declined", async () => {
    const { host: h, store, answerLater } = host();
    waitingFor(store, "s", "needs_user_input");
    expect(await askUser({ sessionId: "s", question: "the new name" }, never().token as never, h)).toEqual({ answer: null });
    expect(answerLater).toHaveBeenCalledWith("s");
    expect(store.get("s")!.state).toBe("waiting");
  });

  it("notes the ask_user tool's question and answer, and picks among options", async () => {
    vscode.window.showQuickPick = async (items: unknown) => (items as { label: string }[])[1];
    const { host: h, store, answerLater } = host();
    store.add("s", { task: "Paint" });
    const params = { sessionId: "s", question: "Colour?", options: ["red", "blue"] };
    expect(await askUser(params, never().token as never, h)).toEqual({ answer: "blue" });
    expect(store.get("s")!.entries).toEqual([
      { kind: "note", text: "Asked: Colour?", level: "info" },
      { kind: "note", text: "You answered: blue", level: "info" },
    ]);
    expect(answerLater).not.toHaveBeenCalled();
  });

  it("does not offer a later answer when the server withdrew the question", async () => {
    const source = new vscode.CancellationTokenSource();
    vscode.window.showInputBox = async () => {
      source.cancel();
      return undefined;
    };
    const { host: h, store, answerLater } = host();
    waitingFor(store, "s", "needs_user_input");
    expect(await askUser({ sessionId: "s", question: "q" }, source.token as never, h)).toEqual({ answer: null });
    expect(answerLater).not.toHaveBeenCalled();
  });
});

describe("cadenza/requestPermission", () => {
  const params = {
    sessionId: "s",
    toolCall: { toolCallId: "c1", title: "running `touch marker.txt`", kind: "execute", rawInput: { command: "touch marker.txt" } },
    options: [
      { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
      { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
      { optionId: "reject_once", name: "Reject", kind: "reject_once" },
      { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
    ],
  };

  it("asks with a modal naming the command, and answers the chosen option", async () => {
    const shown: unknown[][] = [];
    vscode.window.showWarningMessage = async (...args: unknown[]) => {
      shown.push(args);
      return "Allow once";
    };
    const { host: h } = host();
    expect(await requestPermission(params, never().token as never, h)).toEqual({
      outcome: { outcome: "selected", optionId: "allow_once" },
    });
    expect(shown[0]).toEqual([
      "Cadenza wants to run `touch marker.txt`",
      { modal: true, detail: "" },
      "Allow once",
      "Always allow",
      "Reject",
      "Always reject",
    ]);
  });

  it("answers by policy without asking, and cancelled when dismissed", async () => {
    const { host: h } = host();
    vscode.workspace.settings = { "permissions.default": "reject" };
    expect(await requestPermission(params, never().token as never, h)).toEqual({
      outcome: { outcome: "selected", optionId: "reject_once" },
    });
    vscode.workspace.settings = {};
    expect(await requestPermission(params, never().token as never, h)).toEqual({ outcome: { outcome: "cancelled" } });
  });

  it("asks though the workspace's settings say allow: only the person's settings choose a policy", async () => {
    const shown: unknown[][] = [];
    vscode.window.showWarningMessage = async (...args: unknown[]) => {
      shown.push(args);
      return "Reject";
    };
    vscode.workspace.workspaceSettings = { "permissions.default": "allow" };
    const { host: h, store } = host();
    store.add("s", { task: "t" });
    expect(await requestPermission(params, never().token as never, h)).toEqual({
      outcome: { outcome: "selected", optionId: "reject_once" },
    });
    expect(shown).toHaveLength(1);
    expect(shown[0][0]).toBe("Cadenza wants to run `touch marker.txt`");
  });

  it("asks for a protected file even when the person's policy is allow", async () => {
    const shown: unknown[][] = [];
    vscode.window.showWarningMessage = async (...args: unknown[]) => {
      shown.push(args);
      return "Reject";
    };
    vscode.workspace.settings = { "permissions.default": "allow" };
    const protectedParams = {
      sessionId: "s",
      toolCall: { toolCallId: "c2", title: "creating the protected file .vscode/settings.json", kind: "edit" },
      options: [
        { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
        { optionId: "reject_once", name: "Reject", kind: "reject_once" },
      ],
      protectedPaths: [".vscode/settings.json"],
    };
    const { host: h } = host();
    expect(await requestPermission(protectedParams, never().token as never, h)).toEqual({
      outcome: { outcome: "selected", optionId: "reject_once" },
    });
    expect(shown).toHaveLength(1);
    vscode.workspace.settings = {};
  });
});
