// The model picker's lines: the server's short label (model, where it runs, "default"), never the
// id repeated after it.

import { describe, expect, it } from "vitest";

import { modelLabel } from "../src/chat";

describe("modelLabel", () => {
  it("shows the server's label alone", () => {
    expect(modelLabel({ id: "local/qwen2.5-coder-1.5b", label: "qwen2.5-coder-1.5b (local, default)", local: true, pulled: true })).toBe(
      "qwen2.5-coder-1.5b (local, default)",
    );
    expect(modelLabel({ id: "ollama/llama3.2:3b", label: "llama3.2:3b (Ollama)", local: false, pulled: null })).toBe("llama3.2:3b (Ollama)");
  });

  it("says when a local model must be downloaded first, and falls back to the id", () => {
    expect(modelLabel({ id: "local/x", label: "x (local)", local: true, pulled: false })).toBe("x (local) — not downloaded");
    expect(modelLabel({ id: "openai/gpt-4.1" })).toBe("openai/gpt-4.1");
  });
});
