// Unit tests run in Node without VS Code: `vscode` resolves to a small stand-in
// (test/vscode-stub.ts) so modules that call VS Code's UI (prompts.ts) can be tested too.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: { vscode: fileURLToPath(new URL("./test/vscode-stub.ts", import.meta.url)) },
  },
});
