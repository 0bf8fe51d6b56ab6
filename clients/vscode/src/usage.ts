/**
 * Token usage as the panel shows it, per turn (one run of a session, up to its `session_end`).
 *
 * The server reports usage in two ways (docs/protocol.md): `model_reply` after each model request
 * with the provider's `promptTokens`/`completionTokens` (absent when the provider reported none)
 * and the `contextSize` the request was made against, and ACP's `usage_update {used, size}` (the
 * context filled and the window's size) where it is sent. The prompt of the latest request is
 * what the context holds now; completion tokens add up. The context meter beside the panel's
 * input (`contextMeter`) shows that prompt against the window, across turns.
 * A `model_reply` may carry `cost: {amount, currency}`, what that request cost when the provider
 * reported it or a price table is configured; the turn's cost is their sum (per currency).
 * Pure (no `vscode`, no DOM).
 */

export interface TurnUsage {
  /** Model requests made in the turn (`model_reply` updates). */
  requests: number;
  /** Prompt tokens of the latest request: the context the model read last. */
  promptTokens?: number;
  /** Completion tokens of all the turn's requests. */
  completionTokens?: number;
  /** From `usage_update`: the context in use. */
  contextUsed?: number;
  /** The model's context window: `usage_update`'s size, or `model_reply`'s `contextSize`. */
  contextSize?: number;
  /** Sum of the requests' reported costs, by currency code ("USD": 0.02); absent when none. */
  cost?: Record<string, number>;
}

export function emptyUsage(): TurnUsage {
  return { requests: 0 };
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

/** Add one `model_reply` update (`{promptTokens?, completionTokens?, cost?, contextSize?}`). */
export function addModelReply(
  usage: TurnUsage,
  update: { promptTokens?: unknown; completionTokens?: unknown; cost?: unknown; contextSize?: unknown },
): void {
  usage.requests += 1;
  addCost(usage, update.cost);
  const prompt = count(update.promptTokens);
  const completion = count(update.completionTokens);
  const size = count(update.contextSize);
  if (prompt !== undefined) usage.promptTokens = prompt;
  if (completion !== undefined) usage.completionTokens = (usage.completionTokens ?? 0) + completion;
  if (size) usage.contextSize = size;
}

function addCost(usage: TurnUsage, cost: unknown): void {
  if (typeof cost !== "object" || cost === null) return;
  const { amount, currency } = cost as { amount?: unknown; currency?: unknown };
  if (typeof amount !== "number" || !Number.isFinite(amount) || amount < 0) return;
  if (typeof currency !== "string" || !currency.trim()) return;
  const code = currency.trim().toUpperCase();
  usage.cost = { ...usage.cost, [code]: (usage.cost?.[code] ?? 0) + amount };
}

/** 0.02 USD → "$0.0200"; 1.5 EUR → "€1.50"; a code Intl does not know → "0.0200 XYZ". */
export function formatCost(amount: number, currency: string): string {
  const digits = amount < 1 ? 4 : 2;
  try {
    return new Intl.NumberFormat("en-US", {
      style: "currency",
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(amount);
  } catch {
    return `${amount.toFixed(digits)} ${currency}`;
  }
}

/** Add one `usage_update` (`{used, size}`). */
export function addUsageUpdate(usage: TurnUsage, update: { used?: unknown; size?: unknown }): void {
  const used = count(update.used);
  const size = count(update.size);
  if (used !== undefined) usage.contextUsed = used;
  if (size !== undefined && size > 0) usage.contextSize = size;
}

/** 1234 → "1,234"; 12345 → "12.3k"; 1234567 → "1.23M". */
export function formatTokens(n: number): string {
  if (n < 10000) return n.toLocaleString("en-US");
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 100_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(2)}M`;
}

/** The share of the window in use: "22%", "<1%" for a little (never "0%" for some), at most "100%". */
function share(used: number, size: number): { percent: number; text: string } {
  const percent = Math.min(100, Math.round((100 * used) / size));
  return { percent, text: used > 0 && percent === 0 ? "<1%" : `${percent}%` };
}

/**
 * One line for a turn: "context 1,843 / 8k tokens (22%) · 41 tokens out · 3 requests · $0.0200"
 * (the cost only when the server reported one).
 *
 * @param contextSize the model's context window when known from elsewhere (the
 *   `cadenza.contextSize` setting); a `usage_update`'s size wins.
 * @returns "" when the turn made no model request.
 */
export function formatUsage(usage: TurnUsage | undefined, contextSize?: number): string {
  if (!usage || (usage.requests === 0 && usage.contextUsed === undefined)) return "";
  const parts: string[] = [];
  const used = usage.contextUsed ?? usage.promptTokens;
  const size = usage.contextSize ?? contextSize;
  if (used !== undefined) {
    if (size) {
      parts.push(`context ${formatTokens(used)} / ${formatWindow(size)} tokens (${share(used, size).text})`);
    } else {
      parts.push(`context ${formatTokens(used)} tokens`);
    }
  }
  if (usage.completionTokens !== undefined) parts.push(`${formatTokens(usage.completionTokens)} tokens out`);
  if (usage.requests > 0) {
    parts.push(`${usage.requests} request${usage.requests === 1 ? "" : "s"}`);
    if (used === undefined && usage.completionTokens === undefined) parts.push("no token counts reported");
  }
  for (const [currency, amount] of Object.entries(usage.cost ?? {})) parts.push(formatCost(amount, currency));
  return parts.join(" · ");
}

/** What the context meter shows: the context the model read last, and its window when known. */
export interface ContextUse {
  /** Tokens in use: the prompt of the latest model request (or `usage_update`'s `used`). */
  used: number;
  /** The model's context window (tokens), when known. */
  size?: number;
}

/**
 * The context in use after a turn's latest update: undefined when no request reported tokens yet.
 *
 * @param contextSize the window when known from elsewhere (the `cadenza.contextSize` setting); the
 *   server's size wins.
 */
export function contextUse(usage: TurnUsage | undefined, contextSize?: number): ContextUse | undefined {
  const used = usage?.contextUsed ?? usage?.promptTokens;
  if (used === undefined) return undefined;
  const size = usage?.contextSize ?? contextSize;
  return size ? { used, size } : { used };
}

/** A context window in short: 8192 → "8k", 131072 → "128k", 200000 → "200k", 1048576 → "1M". */
export function formatWindow(n: number): string {
  const MIB = 1024 * 1024;
  const [unit, suffix] =
    n >= MIB && n % MIB === 0 ? [MIB, "M"]
      : n >= 1_000_000 ? [1_000_000, "M"]
        : n >= 1024 && n % 1024 === 0 ? [1024, "k"]
          : n >= 1000 ? [1000, "k"]
            : [1, ""];
  const value = n / unit;
  return `${Number.isInteger(value) ? value : value.toFixed(value < 10 ? 1 : 0)}${suffix}`;
}

/** Where the share in use starts to matter: the server compacts older turns from about 70 %. */
const HIGH_PERCENT = 70;
const FULL_PERCENT = 90;

export interface Meter {
  /** "12% of 32k", or "1,843 tokens" when the window is not known. */
  text: string;
  /** The tooltip: the numbers in full and what they are. */
  title: string;
  /** 0–100 when the window is known. */
  percent?: number;
  level: "normal" | "high" | "full";
}

/**
 * The context meter beside the input: undefined without a session; "context —" while a session
 * exists but no request reported its tokens yet.
 */
export function contextMeter(use: ContextUse | undefined, session = false): Meter | undefined {
  if (!use) {
    if (!session) return undefined;
    return {
      text: "context \u2014",
      title: "Context in use: known after the model's first reply in this conversation.",
      level: "normal",
    };
  }
  const used = use.used.toLocaleString("en-US");
  if (!use.size) {
    return {
      text: `${formatTokens(use.used)} tokens`,
      title: `Context in use: ${used} tokens, the prompt of the latest model request (the model's context size is not known).`,
      level: "normal",
    };
  }
  const { percent, text: shown } = share(use.used, use.size);
  return {
    text: `${shown} of ${formatWindow(use.size)}`,
    title:
      `Context in use: ${used} of ${use.size.toLocaleString("en-US")} tokens (${shown}), the prompt of the latest model ` +
      "request in this conversation. Near 70% Cadenza summarizes older turns.",
    percent,
    level: percent >= FULL_PERCENT ? "full" : percent >= HIGH_PERCENT ? "high" : "normal",
  };
}
