/**
 * Which `cadenza.*` settings a workspace may set. A workspace's settings (`.vscode/settings.json`,
 * a `.code-workspace` file) are files of the repository: a stranger can ship them and the model
 * can write them. So the settings that decide which program runs, where the code and the keys go,
 * and what the agent may do without asking come from the person only:
 *
 * - **User-only** (package.json gives them `"scope": "machine"` or `"application"`): `model`,
 *   `baseUrl`, `server.command`, `server.env` (the program started, its environment, the model
 *   and the address the code is sent to) and `permissions.default` (whether gated tools run
 *   unasked). Read from the user's (and a remote machine's) settings and the defaults only:
 *   VS Code filters scoped settings out of a workspace, but not every form of a key, and the read
 *   must not depend on it.
 * - **Tighten-only**: `reviewMode` and `saveEdits`, guards on the agent's edits. A workspace may
 *   make them stricter (review every change, save nothing for you), never looser than the
 *   person's own value.
 *
 * The others are per-project preferences a workspace may set: `workflow` (a workflow is
 * instructions and a tool list, no program or model), the limits (`maxSteps` is capped at 1000 by
 * the schema; every gated tool call is still asked), the log level, tracing and the panel.
 *
 * Pure functions (no `vscode` import) so they are unit-tested in plain Node.
 */

import { parse } from "jsonc-parser";

/** One setting's values by source (the shape of VS Code's `WorkspaceConfiguration.inspect`). */
export interface InspectedValue<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** The part of `getConfiguration("cadenza")` the settings are read through (tests pass a map). */
export interface ConfigurationLike {
  get<T>(key: string): T | undefined;
  inspect<T>(key: string): InspectedValue<T> | undefined;
}

/** Settings only the person sets (keys under `cadenza.`). */
export const USER_ONLY_KEYS: readonly string[] = [
  "model",
  "baseUrl",
  "server.command",
  "server.env",
  "permissions.default",
];

/** Settings a workspace may only tighten, each with its values from the strictest. */
export const TIGHTEN_ONLY: Readonly<Record<string, readonly unknown[]>> = {
  reviewMode: [true, false],
  saveEdits: ["never", "onSessionEnd", "afterEachEdit"],
};

/** The person's value: user settings, else the default. */
function personValue<T>(inspected: InspectedValue<T> | undefined): T | undefined {
  return inspected?.globalValue !== undefined ? inspected.globalValue : inspected?.defaultValue;
}

/** The values a workspace sets for a setting (its folder's and the workspace's own). */
function workspaceValues<T>(inspected: InspectedValue<T> | undefined): T[] {
  return [inspected?.workspaceFolderValue, inspected?.workspaceValue].filter((v): v is T => v !== undefined);
}

/**
 * A setting's value as Cadenza uses it: user-only settings without any workspace value,
 * tighten-only ones the stricter of the person's and the workspace's, the others as VS Code
 * resolves them.
 */
export function settingValue(config: ConfigurationLike, key: string): unknown {
  if (USER_ONLY_KEYS.includes(key)) return personValue(config.inspect(key));
  const order = TIGHTEN_ONLY[key];
  if (!order) return config.get(key);
  const inspected = config.inspect(key);
  const defaultValue = inspected?.defaultValue;
  const person = order.includes(personValue(inspected)) ? personValue(inspected) : defaultValue;
  let strictest = person;
  for (const value of workspaceValues(inspected)) {
    const rank = order.indexOf(value);
    if (rank >= 0 && rank < order.indexOf(strictest)) strictest = value;
  }
  return strictest;
}

/** A tighten-only setting whose workspace value would loosen the person's. */
export interface Loosened {
  key: string;
  workspace: unknown;
  yours: unknown;
}

/** The tighten-only settings a workspace tries to loosen (its value is then ignored). */
export function loosenedSettings(config: ConfigurationLike): Loosened[] {
  const found: Loosened[] = [];
  for (const [key, order] of Object.entries(TIGHTEN_ONLY)) {
    const yours = settingValue(config, key);
    for (const value of workspaceValues(config.inspect(key))) {
      if (order.indexOf(value) > order.indexOf(yours)) found.push({ key, workspace: value, yours });
    }
  }
  return found;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The user-only settings a settings file's text sets (full names, `cadenza.…`), in every form
 * VS Code reads: flat dotted keys, nested objects (`"cadenza": {"server": {...}}`) and
 * language blocks (`"[python]": {...}`). Comments and trailing commas are allowed, as in
 * VS Code; text that is not an object sets nothing.
 */
export function userOnlyKeysIn(text: string): string[] {
  const parsed: unknown = parse(text, [], { allowTrailingComma: true });
  const wanted = USER_ONLY_KEYS.map((key) => `cadenza.${key}`);
  const found = new Set<string>();
  const walk = (value: Record<string, unknown>, prefix: string): void => {
    for (const [name, inner] of Object.entries(value)) {
      if (/^\[.*\]$/.test(name)) {
        if (isObject(inner)) walk(inner, prefix);
        continue;
      }
      const key = prefix ? `${prefix}.${name}` : name;
      if (wanted.includes(key)) found.add(key);
      else if (isObject(inner) && wanted.some((w) => w.startsWith(`${key}.`))) walk(inner, key);
    }
  };
  if (isObject(parsed)) walk(parsed, "");
  return wanted.filter((key) => found.has(key));
}

function listed(names: string[]): string {
  return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** The warning for user-only settings set by a workspace file (`source`, e.g. ".vscode/settings.json"). */
export function userOnlyWarning(source: string, keys: string[]): string {
  const them = keys.length === 1 ? "it" : "them";
  return (
    `This workspace's ${source} sets ${listed(keys)}; Cadenza ignores a workspace's value of ${them} ` +
    `and uses your user settings only.`
  );
}

/** The warning for a tighten-only setting a workspace tries to loosen. */
export function loosenedWarning(loosened: Loosened): string {
  return (
    `This workspace's settings set cadenza.${loosened.key} to ${JSON.stringify(loosened.workspace)}; ` +
    `Cadenza takes a workspace's value of it only when it is stricter than yours, so it stays ` +
    `${JSON.stringify(loosened.yours)}.`
  );
}
