/**
 * What the panel's webview asks for (its buttons, the input's message, the completion lists,
 * the pickers), done with the extension's parts.
 */

import * as vscode from "vscode";

import { openDiff } from "./diff";
import type { ExtensionHost } from "./host";
import { openableLink, type PanelMessage } from "./panel";
import type { SessionCommands } from "./sessionCommands";
import type { SessionStarter } from "./starting";

export async function handlePanelMessage(message: PanelMessage, host: ExtensionHost, commands: SessionCommands, starter: SessionStarter): Promise<void> {
  switch (message?.type) {
    case "openDiff":
      await openDiff(host.store, message.diffId);
      break;
    case "openFile":
      await vscode.window.showTextDocument(vscode.Uri.file(message.path), { preview: true });
      break;
    case "cancel": {
      const progress = host.progress.get(message.sessionId);
      if (progress) progress.cancel();
      else await commands.cancel(message.sessionId);
      break;
    }
    case "reply":
      await commands.reply(message.sessionId);
      break;
    case "continue":
      // waiting_human: the person is done in the browser.
      await commands.reply({ sessionId: message.sessionId, text: "" });
      break;
    case "prompt":
      await host.chat.prompt(message.text, message.mentions);
      break;
    case "complete": {
      const root = vscode.workspace.workspaceFolders?.[0]?.uri.toString();
      const items = await host.chat.complete(message.trigger === "/" ? "/" : "@", String(message.query ?? ""), root);
      host.panel.post({ type: "completions", requestId: message.requestId, trigger: message.trigger, items });
      break;
    }
    case "choose":
      await host.chat.choose(message.what === "workflow" ? "workflow" : "model", message.value);
      break;
    case "newSession":
      host.chat.newSession();
      break;
    case "history":
      await commands.showSessions();
      break;
    case "restore":
      await host.chat.restore(message.sessionId, message.turn);
      break;
    case "focus":
      host.chat.focus(message.sessionId);
      break;
    case "review":
      await host.review.review(message.sessionId, message.action === "undo" ? "undo" : "keep", message.uris ? { uris: message.uris } : {});
      break;
    case "fix": {
      const end = [...(host.store.get(message.sessionId)?.entries ?? [])].reverse().find((e) => e.kind === "end");
      await host.chat.runFix(message.sessionId, end?.kind === "end" ? end.fix : undefined);
      break;
    }
    case "unqueue":
      host.chat.queue.remove(message.sessionId, Number(message.queueId));
      break;
    case "steer":
      await host.chat.queue.steer(message.sessionId, Number(message.queueId));
      break;
    case "openLink": {
      const href = openableLink(message.href);
      if (href) await vscode.env.openExternal(vscode.Uri.parse(href));
      break;
    }
    case "run":
      await starter.runTask();
      break;
  }
}
