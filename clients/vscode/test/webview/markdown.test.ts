// @vitest-environment jsdom
// The panel's Markdown rendering (src/webview/markdown.ts) in jsdom: rendered, and inert for
// whatever HTML the model writes.
import { describe, expect, it } from "vitest";

import { markdownElement, renderMarkdown } from "../../src/webview/markdown";

function render(text: string): HTMLElement {
  const node = markdownElement(text, "agent-text");
  document.body.replaceChildren(node);
  return node;
}

describe("renderMarkdown", () => {
  it("renders headings, emphasis, lists, code and fences", () => {
    const node = render("## Done\n\nRenamed **greet** to `welcome`:\n\n- app.py\n- main.py\n\n```python\ndef welcome():\n    pass\n```\n");
    expect(node.querySelector("h2")?.textContent).toBe("Done");
    expect(node.querySelector("strong")?.textContent).toBe("greet");
    expect(node.querySelector("p code")?.textContent).toBe("welcome");
    expect([...node.querySelectorAll("li")].map((li) => li.textContent)).toEqual(["app.py", "main.py"]);
    const fence = node.querySelector("pre code");
    expect(fence?.textContent).toBe("def welcome():\n    pass\n");
    expect(fence?.className).toBe("language-python");
    expect(node.textContent).not.toContain("##");
    expect(node.textContent).not.toContain("**");
  });

  it("shows raw HTML from the model as text: no script, no element, no handler", () => {
    const text = 'Look: <script>window.pwned = 1</script> and <img src=x onerror="window.pwned = 2"> <b onclick="x()">b</b>';
    const node = render(text);
    expect(node.querySelector("script, img, b, [onerror], [onclick]")).toBeNull();
    expect(node.textContent).toContain("<script>window.pwned = 1</script>");
    expect(node.textContent).toContain('<img src=x onerror="window.pwned = 2">');
    expect((window as unknown as { pwned?: number }).pwned).toBeUndefined();
  });

  it("drops script links and keeps http(s) links", () => {
    const node = render("[a](javascript:alert(1)) [b](https://example.com/x) [c](data:text/html,<script>1</script>) [d](vbscript:x)");
    const links = [...node.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["https://example.com/x"]);
    // markdown-it's validator leaves such links as text; no element carries them.
    for (const e of node.querySelectorAll("*")) {
      for (const attr of e.attributes) expect(attr.value).not.toMatch(/javascript:|vbscript:|data:/);
    }
  });

  it("keeps no image source (the CSP forbids images; the alt text stays)", () => {
    const node = render("![chart](https://example.com/c.png)");
    const img = node.querySelector("img");
    expect(img?.getAttribute("src")).toBeNull();
    expect(img?.getAttribute("alt")).toBe("chart");
  });

  it("removes what the sanitizer forbids even if it reached the HTML", () => {
    // markdown-it never emits these with html: false; the sanitizer is the second layer.
    expect(renderMarkdown("text")).toBe("<p>text</p>\n");
  });

  it("escapes HTML inside inline code and fences", () => {
    const node = render("`<iframe src=x>` and\n\n```html\n<svg onload=alert(1)>\n```");
    expect(node.querySelector("iframe, svg")).toBeNull();
    expect(node.querySelector("pre code")?.textContent).toBe("<svg onload=alert(1)>\n");
  });
});
