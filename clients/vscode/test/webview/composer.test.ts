// @vitest-environment jsdom
// The input's context meter (src/webview/composer.ts) in jsdom: shown beside the line that says
// where the next message goes, for the conversation the input continues.
import { beforeEach, describe, expect, it } from "vitest";

import { Composer } from "../../src/webview/composer";
import { PromptHistory } from "../../src/webview/history";

const CHAT = { current: "s1", models: [], workflows: [], model: "", workflow: "" };

function composer(): Composer {
  return new Composer(() => undefined, new PromptHistory(), () => undefined);
}

beforeEach(() => {
  document.body.innerHTML = `
    <div id="composer" class="composer">
      <div class="composer-head">
        <div id="target" class="target"></div>
        <span id="meter" class="meter" role="meter" hidden><span class="meter-bar"><span class="meter-fill"></span></span><span class="meter-text"></span></span>
      </div>
      <div id="chips"></div><div id="completion" hidden></div>
      <textarea id="prompt"></textarea>
      <select id="model"></select><select id="workflow"></select>
      <button id="new-session"></button><button id="history"></button><button id="send"></button>
    </div>`;
});

const meter = () => document.getElementById("meter") as HTMLElement;

describe("the context meter beside the input", () => {
  it("shows the share of the context in use, with the numbers in its tooltip", () => {
    composer().update(CHAT, { task: "Reword the docstrings", state: "ended", context: { used: 3932, size: 32768 } });
    expect(meter().hidden).toBe(false);
    expect(meter().querySelector(".meter-text")?.textContent).toBe("12% of 32k");
    expect(meter().title).toMatch(/^Context in use: 3,932 of 32,768 tokens \(12%\)/);
    expect(meter().getAttribute("aria-valuenow")).toBe("12");
    expect((meter().querySelector(".meter-fill") as HTMLElement).style.width).toBe("12%");
    expect(document.getElementById("target")?.textContent).toBe("Continues: Reword the docstrings");
  });

  it("changes with each request, warns when the context fills up, and goes for a new session", () => {
    const c = composer();
    c.update(CHAT, { task: "t", state: "running", context: { used: 1000, size: 8192 } });
    expect(meter().querySelector(".meter-text")?.textContent).toBe("12% of 8k");
    c.update(CHAT, { task: "t", state: "running", context: { used: 7500, size: 8192 } });
    expect(meter().querySelector(".meter-text")?.textContent).toBe("92% of 8k");
    expect(meter().classList.contains("full")).toBe(true);
    c.update({ ...CHAT, current: undefined }, {});
    expect(meter().hidden).toBe(true);
  });

  it("shows tokens only, without a bar, when the model's window is not known", () => {
    composer().update(CHAT, { task: "t", state: "ended", context: { used: 1843 } });
    expect(meter().querySelector(".meter-text")?.textContent).toBe("1,843 tokens");
    expect((meter().querySelector(".meter-bar") as HTMLElement).hidden).toBe(true);
    expect(meter().hasAttribute("aria-valuenow")).toBe(false);
  });

  it("shows \"context —\" while a session exists and no reply reported its tokens yet", () => {
    const c = composer();
    c.update(CHAT, { task: "t", state: "running" });
    expect(meter().hidden).toBe(false);
    expect(meter().querySelector(".meter-text")?.textContent).toBe("context \u2014");
    expect((meter().querySelector(".meter-bar") as HTMLElement).hidden).toBe(true);
    expect(meter().title).toMatch(/first reply/);
    c.update(CHAT, {});
    expect(meter().hidden).toBe(true);
  });
});
