// Bundle the extension into dist/extension.js (vscode is provided by the host), and the panel's
// webview script into dist/webview.js (a browser script with markdown-it and DOMPurify inside:
// the webview loads nothing else).
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");
const watch = process.argv.includes("--watch");

const common = { bundle: true, sourcemap: !production, minify: production, logLevel: "info" };
const contexts = await Promise.all([
  esbuild.context({
    ...common,
    entryPoints: ["src/extension.ts"],
    format: "cjs",
    platform: "node",
    target: "node18",
    outfile: "dist/extension.js",
    external: ["vscode"],
    // jsonc-parser's main build is UMD, whose inner require() calls esbuild cannot follow.
    alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  }),
  esbuild.context({
    ...common,
    entryPoints: ["src/webview/panel.ts"],
    format: "iife",
    platform: "browser",
    target: "chrome114",
    outfile: "dist/webview.js",
  }),
]);
if (watch) {
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(contexts.map((c) => c.rebuild()));
  await Promise.all(contexts.map((c) => c.dispose()));
}
