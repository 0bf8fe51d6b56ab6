// A browser page with a CodeMirror editor whose LSP client (@codemirror/lsp-client 6.3) talks
// to `cadenza serve --ws` over a WebSocket. Bundled with esbuild by tests/thirdparty/test_browser.py.
// The query string names the socket (ws=...), the file (uri=...) and its text (text=...).
//
// @codemirror/lsp-client answers every server request with MethodNotFound and declares no
// workspace.applyEdit, so the page declares it (an extension's clientCapabilities) and answers
// workspace/applyEdit itself in the transport, applying the edit to the editor's document.
import { EditorView } from "@codemirror/view";
import { LSPClient, LSPPlugin, languageServerExtensions } from "@codemirror/lsp-client";

const query = new URLSearchParams(location.search);
const uri = query.get("uri");
const state = (window.cadenza = { updates: [], edits: [], error: null, sessionId: null });

function applyEdit(view, edit) {
  const plugin = LSPPlugin.get(view);
  const changes = [];
  for (const change of edit.documentChanges || []) {
    if (change.kind || change.textDocument.uri !== uri) return false;
    for (const e of change.edits) {
      changes.push({
        from: plugin.fromPosition(e.range.start, view.state.doc),
        to: plugin.fromPosition(e.range.end, view.state.doc),
        insert: e.newText,
      });
    }
  }
  view.dispatch({ changes });
  return true;
}

function transport(socket, view) {
  const handlers = [];
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.method === "workspace/applyEdit" && "id" in message) {
      state.edits.push(message.params);
      const applied = applyEdit(view(), message.params.edit);
      socket.send(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { applied } }));
      return;
    }
    for (const handler of handlers) handler(event.data);
  };
  return {
    send: (text) => socket.send(text),
    subscribe: (handler) => handlers.push(handler),
    unsubscribe: (handler) => handlers.splice(handlers.indexOf(handler), 1),
  };
}

async function main() {
  const socket = new WebSocket(query.get("ws"));
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error("the WebSocket did not open"));
  });
  let view = null;
  const client = new LSPClient({
    rootUri: query.get("root"),
    timeout: 20000,
    extensions: [
      ...languageServerExtensions(),
      {
        clientCapabilities: {
          workspace: { applyEdit: true, workspaceEdit: { documentChanges: true } },
        },
      },
    ],
    notificationHandlers: {
      "cadenza/sessionUpdate": (_client, params) => {
        state.updates.push(params.update);
        return true;
      },
    },
  }).connect(transport(socket, () => view));
  view = new EditorView({
    doc: query.get("text"),
    extensions: [client.plugin(uri, "python")],
    parent: document.body,
  });
  await client.initializing;
  const started = await client.request("workspace/executeCommand", {
    command: "cadenza.startSession",
    arguments: [{ task: query.get("task"), model: "openai/test" }],
  });
  state.sessionId = started.sessionId;
  state.view = view;
}

main().catch((error) => {
  state.error = String(error && (error.message || JSON.stringify(error)));
});
