// What the notifications of a session say and when: the progress notification reads the
// person's task (not the context added for the model) and is off the screen before the end
// notification shows; the end notification is a one-line summary of the final message.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { CLOSE_MARGIN_MS, Closings, Notices, PROGRESS_MIN_MS, progressGoneIn } from "../src/notices";
import { SessionProgress, progressText } from "../src/progress";
import { ERROR_CHARS, SUMMARY_CHARS, clipLine, endNotice, summaryLine, taskLabel } from "../src/sessionText";
import * as vscode from "./vscode-stub";

vi.mock("vscode-languageclient/node", () => ({
  WorkDoneProgress: { type: "$/progress" },
  WorkDoneProgressCancelNotification: { type: "window/workDoneProgress/cancel" },
}));

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A model's final message as the panel renders it: heading, Markdown, a list, code, HTML. */
const REPLY = [
  "## Summary",
  "",
  "Renamed **calc_total** and added `typing` hints:",
  "",
  "- inventory.py",
  "- report.py",
  "",
  "```python",
  "def calc_total(items: list[Item]) -> float:",
  "```",
  "",
  '<script>document.body.dataset.pwned = "script"</script>',
  "[a link](javascript:alert(1))",
].join("\n");

describe("summaryLine", () => {
  it("is the first paragraph's first sentence as plain text: no heading, Markdown, list, code or HTML", () => {
    expect(summaryLine(REPLY)).toBe("Renamed calc_total and added typing hints…");
    expect(summaryLine("Added type hints to calc_total. Then I ran the tests: 3 passed.")).toBe("Added type hints to calc_total.");
    expect(summaryLine("Fixed it in inventory.py, e.g. the total. Next, the report.")).toBe("Fixed it in inventory.py, e.g. the total.");
    expect(summaryLine("<b>Bold</b> claims and <script>alert(1)</script>no script.")).toBe("Bold claims and no script.");
    expect(summaryLine("- first item\n- second item")).toBe("first item");
    expect(summaryLine("> Quoted **answer**.")).toBe("Quoted answer.");
  });

  it("falls back to a heading, and is empty for a message without text", () => {
    expect(summaryLine("# Done")).toBe("Done");
    expect(summaryLine("```\ncode only\n```")).toBe("");
    expect(summaryLine("")).toBe("");
  });

  it("is bounded, cut at a word", () => {
    const long = `${"word ".repeat(60)}end.`;
    const line = summaryLine(long);
    expect(line.length).toBeLessThanOrEqual(SUMMARY_CHARS);
    expect(line).toMatch(/^word( word)*…$/);
    expect(clipLine("a\n b   c", 10)).toBe("a b c");
    expect(clipLine("x".repeat(30), 10)).toBe(`${"x".repeat(9)}…`);
  });
});

describe("endNotice", () => {
  it("words the end of a session in one line", () => {
    expect(endNotice("end_turn", "Renamed.")).toBe("Cadenza finished: Renamed.");
    expect(endNotice("end_turn", REPLY)).toBe("Cadenza finished: Renamed calc_total and added typing hints…");
    expect(endNotice("end_turn", "")).toBe("Cadenza finished the task.");
    expect(endNotice("cancelled", "")).toBe("Cadenza: the task was cancelled.");
    expect(endNotice("max_steps", "stopped after 25 steps")).toBe("Cadenza stopped at the step limit: stopped after 25 steps");
    expect(endNotice("error", undefined)).toBe("Cadenza failed with an error.");
    expect(endNotice("end_turn", "x ".repeat(400)).length).toBeLessThanOrEqual("Cadenza finished: ".length + SUMMARY_CHARS);
    for (const text of [endNotice("end_turn", REPLY), endNotice("error", REPLY)]) {
      expect(text).not.toMatch(/[\n*#`<>]/);
    }
  });

  it("keeps an error's sentence with its fix (a longer bound)", () => {
    const error =
      "The openai provider refused the API key (HTTP 401): set OPENAI_API_KEY in the environment VS Code starts in, " +
      "or in cadenza.server.env, then restart the server.";
    expect(endNotice("error", error)).toBe(`Cadenza failed with an error: ${error}`);
    expect(endNotice("error", `Failed: ${"detail ".repeat(80)}`).length).toBeLessThanOrEqual("Cadenza failed with an error: ".length + ERROR_CHARS);
  });
});

describe("the progress notification's text", () => {
  it("is the person's task, shortened, then the server's report", () => {
    expect(taskLabel("Fail with a 401")).toBe("Fail with a 401");
    expect(taskLabel("\n  Rename greet\nto welcome everywhere")).toBe("Rename greet");
    expect(taskLabel(`Rewrite ${"the report ".repeat(10)}`).length).toBeLessThanOrEqual(60);
    expect(progressText("Rename greet", undefined)).toBe("Rename greet");
    expect(progressText("Rename greet", "work · step 2/25")).toBe("Rename greet — work · step 2/25");
  });
});

describe("Notices and Closings", () => {
  it("shows an end only once the closing progress notifications are gone", async () => {
    const closings = new Closings();
    const notices = new Notices(8000, () => closings.settled());
    let gone!: () => void;
    closings.add(new Promise<void>((resolve) => (gone = resolve)));
    const shown: string[] = [];
    notices.show(async () => {
      shown.push("finished");
    });
    await tick();
    await tick();
    expect(shown).toEqual([]);
    gone();
    await tick();
    await tick();
    expect(shown).toEqual(["finished"]);
    // Nothing closing: at once.
    notices.show(async () => {
      shown.push("next");
    });
    await tick();
    await tick();
    expect(shown).toEqual(["finished", "next"]);
  });

  it("counts VS Code's minimum time on screen from when the progress notification appeared", () => {
    expect(progressGoneIn(undefined, 5000)).toBe(0);
    expect(progressGoneIn(1000, 1100)).toBe(PROGRESS_MIN_MS + CLOSE_MARGIN_MS - 100);
    expect(progressGoneIn(1000, 1000 + PROGRESS_MIN_MS + CLOSE_MARGIN_MS + 1)).toBe(0);
  });
});

describe("SessionProgress", () => {
  type Handler = (value: unknown) => void;
  let handlers: Map<string, Handler>;
  let shown: { options: Record<string, unknown>; messages: string[]; done: boolean }[];
  const original = vscode.window.withProgress;

  function client() {
    handlers = new Map();
    return {
      onProgress: (_type: unknown, token: string, handler: Handler) => {
        handlers.set(token, handler);
        return { dispose: () => handlers.delete(token) };
      },
      sendNotification: vi.fn(async () => undefined),
    };
  }

  beforeEach(() => {
    vi.useFakeTimers();
    shown = [];
    vscode.window.withProgress = async (...args: unknown[]) => {
      const [options, task] = args as [Record<string, unknown>, (p: unknown, c: unknown) => Promise<void>];
      const entry = { options, messages: [] as string[], done: false };
      shown.push(entry);
      const progress = { report: (step: { message?: string }) => entry.messages.push(step.message ?? "") };
      const cancellation = { onCancellationRequested: () => ({ dispose: () => undefined }) };
      await task(progress, cancellation);
      entry.done = true;
    };
  });

  afterEach(() => {
    vscode.window.withProgress = original;
    vi.useRealTimers();
  });

  it("shows the person's task, not the begin message with the editor context", () => {
    const c = client();
    const messages: (string | undefined)[] = [];
    const progress = new SessionProgress(c as never, "Fail with a 401", new Closings(), (_id, m) => messages.push(m), () => undefined);
    const send = handlers.get(progress.token)!;
    send({ kind: "begin", title: "Cadenza", message: "Fail with a 401\n\nActive file: report.py (cursor on line 1)", cancellable: true });
    send({ kind: "report", message: "work · step 1/25" });
    expect(shown).toHaveLength(1);
    expect(shown[0].options).toMatchObject({ title: "Cadenza", cancellable: true, location: vscode.ProgressLocation.Notification });
    expect(shown[0].messages).toEqual(["Fail with a 401", "Fail with a 401 — work · step 1/25"]);
    expect(shown[0].messages.join("\n")).not.toContain("Active file");
    // The panel gets the server's report itself (it shows the task in its own header).
    expect(messages).toEqual(["work · step 1/25"]);
  });

  it("is gone at the end, and says when it is off the screen", async () => {
    const closings = new Closings();
    const progress = new SessionProgress(client() as never, "Say hello", closings, () => undefined, () => undefined);
    handlers.get(progress.token)!({ kind: "begin", title: "Cadenza", message: "Say hello", cancellable: true });
    vi.advanceTimersByTime(100);
    handlers.get(progress.token)!({ kind: "end", message: "error: 401" });
    await vi.advanceTimersByTimeAsync(0);
    expect(shown[0].done).toBe(true);
    let settled = false;
    void closings.settled().then(() => (settled = true));
    let closed = false;
    void progress.closed.then(() => (closed = true));
    await vi.advanceTimersByTimeAsync(PROGRESS_MIN_MS - 150);
    expect([closed, settled]).toEqual([false, false]);
    await vi.advanceTimersByTimeAsync(CLOSE_MARGIN_MS + 100);
    expect([closed, settled]).toEqual([true, true]);
    expect(handlers.has(progress.token)).toBe(false);
  });

  it("never shows when the session ended before its begin arrived", async () => {
    const closings = new Closings();
    const progress = new SessionProgress(client() as never, "t", closings, () => undefined, () => undefined);
    const send = handlers.get(progress.token)!;
    progress.dispose();
    send({ kind: "begin", title: "Cadenza", message: "t", cancellable: true });
    expect(shown).toEqual([]);
    let settled = false;
    void closings.settled().then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(true);
  });
});
