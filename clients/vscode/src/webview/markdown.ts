/**
 * Model text as HTML for the panel's webview: Markdown rendered by markdown-it, then sanitized by
 * DOMPurify. Model output is untrusted (it may quote a web page, a file, or be steered by one), so
 * two layers keep it inert:
 *
 * - markdown-it runs with `html: false`: raw HTML in the text (`<script>`, `<img onerror=…>`)
 *   is escaped and shows as text; its link validator drops `javascript:`, `vbscript:`, `file:`
 *   and most `data:` URLs.
 * - DOMPurify then removes anything executable that could still appear (event handler
 *   attributes, `<script>`, `<iframe>`, `<form>`, `<style>`), and only http(s)/mailto links
 *   survive (hook below).
 *
 * A third layer is the webview's Content-Security-Policy (panel.ts): scripts run only with the
 * panel's nonce, and no image, frame or connection to elsewhere is allowed.
 */

import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";

const md = new MarkdownIt({ html: false, linkify: false, breaks: false, typographer: false });

/** Tags the rendered Markdown may contain (what markdown-it emits, nothing more). */
const ALLOWED_TAGS = [
  "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "img",
  "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
];
const ALLOWED_ATTR = ["href", "title", "alt", "src", "class", "start", "align", "style"];
const SAFE_URL = /^(https?:|mailto:)/i;

type Purifier = ReturnType<typeof DOMPurify>;
const purifiers = new WeakMap<object, Purifier>();

/** The DOMPurify instance for `win` (the webview's window, or a jsdom window in tests). */
function purifier(win: Window): Purifier {
  let purify = purifiers.get(win);
  if (!purify) {
    purify = DOMPurify(win as unknown as Parameters<typeof DOMPurify>[0]);
    purify.addHook("afterSanitizeAttributes", (node) => {
      const el = node as Element;
      if (el.tagName === "A") {
        const href = el.getAttribute("href") ?? "";
        if (!SAFE_URL.test(href)) el.removeAttribute("href");
        else el.setAttribute("title", el.getAttribute("title") || href);
      }
      if (el.tagName === "IMG") {
        // Images are not loaded (the CSP forbids them): keep the alternative text instead.
        const src = el.getAttribute("src") ?? "";
        el.removeAttribute("src");
        el.setAttribute("alt", el.getAttribute("alt") || src);
      }
      // Alignment in tables is markdown-it's only inline style; keep nothing else of it.
      const style = el.getAttribute("style");
      if (style !== null && !/^text-align:(left|right|center)$/.test(style)) el.removeAttribute("style");
    });
    purifiers.set(win, purify);
  }
  return purify;
}

/** Markdown source → sanitized HTML text (safe to assign to `innerHTML`). */
export function renderMarkdown(text: string, win: Window = window): string {
  const html = md.render(text);
  return purifier(win).sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
  }) as unknown as string;
}

/** An element holding `text` rendered as Markdown (class `markdown` plus `className`). */
export function markdownElement(text: string, className: string, doc: Document = document): HTMLElement {
  const node = doc.createElement("div");
  node.className = `markdown ${className}`.trim();
  node.innerHTML = renderMarkdown(text, doc.defaultView ?? window);
  return node;
}
