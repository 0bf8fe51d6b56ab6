import { describe, expect, it } from "vitest";
import { servesLanguage, type ExtensionInfo } from "../src/languages";

// Shapes as VS Code's own package.json files have them (code-server 4.100).
const grammarOnly: ExtensionInfo = {
  id: "vscode.python",
  packageJSON: { contributes: { languages: [{ id: "python" }] } },
};
const typescript: ExtensionInfo = {
  id: "vscode.typescript-language-features",
  packageJSON: { main: "./dist/extension", activationEvents: ["onLanguage:typescript", "onLanguage:javascript"] },
};
const git: ExtensionInfo = {
  id: "vscode.git",
  packageJSON: { main: "./out/main", activationEvents: ["*"], contributes: { languages: [{ id: "git-commit" }] } },
};
const cadenza: ExtensionInfo = {
  id: "cadenza.cadenza",
  packageJSON: { main: "./dist/extension.js", activationEvents: ["onStartupFinished"] },
};
const pythonServer: ExtensionInfo = {
  id: "ms-python.python",
  packageJSON: { main: "./out/client/extension", activationEvents: ["onLanguage:python"] },
};

describe("servesLanguage", () => {
  const bare = [grammarOnly, typescript, git, cadenza];

  it("a language only coloured by a grammar extension has no language server", () => {
    expect(servesLanguage("python", bare)).toBe(false);
    expect(servesLanguage("ruby", bare)).toBe(false);
  });

  it("an extension with code that activates on the language serves it", () => {
    expect(servesLanguage("typescript", bare)).toBe(true);
    expect(servesLanguage("python", [...bare, pythonServer])).toBe(true);
  });

  it("a language contributed by an extension with code counts (implicit activation)", () => {
    expect(servesLanguage("git-commit", bare)).toBe(true);
  });

  it("the extension itself is left out, and malformed manifests are ignored", () => {
    const own: ExtensionInfo = { id: "me", packageJSON: { main: "x", activationEvents: ["onLanguage:go"] } };
    expect(servesLanguage("go", [own], "me")).toBe(false);
    const odd: ExtensionInfo = { id: "odd", packageJSON: { main: "x", activationEvents: "onLanguage:go", contributes: { languages: [null, 3] } } };
    expect(servesLanguage("go", [odd])).toBe(false);
  });
});
