/**
 * From the `cadenza.*` settings to what the server is started with: the command line, its
 * environment and the `initializationOptions`. Pure functions (no `vscode` import) so they are
 * unit-tested in plain Node.
 *
 * The server validates `initializationOptions` strictly (unknown keys make it ignore the whole
 * set with a warning), so only the keys of docs/protocol.md are ever sent; the other settings
 * (workflow, review mode, saving, permissions) are the extension's own.
 */

import * as fs from "node:fs";
import * as path from "node:path";

import { type ConfigurationLike, settingValue } from "./settingScopes";

export type LogLevel = "DEBUG" | "INFO" | "WARNING" | "ERROR";
export type SaveEdits = "never" | "afterEachEdit" | "onSessionEnd";
export type PermissionPolicy = "ask" | "allow" | "reject";

/** The settings as read from `vscode.workspace.getConfiguration("cadenza")` (see readSettings). */
export interface Settings {
  model: string;
  baseUrl: string;
  workflow: string;
  maxSteps: number | null;
  maxTokens: number | null;
  temperature: number | null;
  contextSize: number | null;
  reviewMode: boolean;
  saveEdits: SaveEdits;
  permissionsDefault: PermissionPolicy;
  serverCommand: string | string[];
  serverEnv: Record<string, string>;
  logLevel: LogLevel;
  revealOnRun: boolean;
}

export const DEFAULT_SETTINGS: Settings = {
  model: "",
  baseUrl: "",
  workflow: "",
  maxSteps: null,
  maxTokens: null,
  temperature: null,
  contextSize: null,
  reviewMode: false,
  saveEdits: "never",
  permissionsDefault: "ask",
  serverCommand: "",
  serverEnv: {},
  logLevel: "WARNING",
  revealOnRun: true,
};

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return typeof value === "string" && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function text(value: unknown): string {
  return typeof value === "string" ? value.trim() : "";
}

/**
 * Read and normalize the settings; anything malformed falls back to its default. What a
 * workspace may set is settingScopes.ts's rule: the user-only settings never take a workspace's
 * value, the tighten-only ones take it only when it is stricter.
 */
export function readSettings(config: ConfigurationLike): Settings {
  const get = (key: string): unknown => settingValue(config, key);
  const command = get("server.command");
  const env = get("server.env");
  return {
    model: text(get("model")),
    baseUrl: text(get("baseUrl")),
    workflow: text(get("workflow")),
    maxSteps: numberOrNull(get("maxSteps")),
    maxTokens: numberOrNull(get("maxTokens")),
    temperature: numberOrNull(get("temperature")),
    contextSize: numberOrNull(get("contextSize")),
    reviewMode: get("reviewMode") === true,
    saveEdits: oneOf(get("saveEdits"), ["never", "afterEachEdit", "onSessionEnd"], "never"),
    permissionsDefault: oneOf(get("permissions.default"), ["ask", "allow", "reject"], "ask"),
    serverCommand: Array.isArray(command)
      ? command.filter((part): part is string => typeof part === "string")
      : text(command),
    serverEnv:
      env && typeof env === "object" && !Array.isArray(env)
        ? Object.fromEntries(
            Object.entries(env as Record<string, unknown>).filter(
              (entry): entry is [string, string] => typeof entry[1] === "string",
            ),
          )
        : {},
    logLevel: oneOf(get("server.logLevel"), ["DEBUG", "INFO", "WARNING", "ERROR"], "WARNING"),
    revealOnRun: get("panel.revealOnRun") !== false,
  };
}

/** `initializationOptions` (docs/protocol.md): only the keys set, camelCase as documented. */
export function initializationOptions(settings: Settings): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  if (settings.model) options.model = settings.model;
  if (settings.maxSteps !== null) options.maxSteps = Math.round(settings.maxSteps);
  if (settings.maxTokens !== null) options.maxTokens = Math.round(settings.maxTokens);
  if (settings.temperature !== null) options.temperature = settings.temperature;
  if (settings.contextSize !== null) options.contextSize = Math.round(settings.contextSize);
  return options;
}

/** The settings a running server was started with: a change of one needs a restart. */
const RESTART_FIELDS = [
  "model",
  "baseUrl",
  "maxSteps",
  "maxTokens",
  "temperature",
  "contextSize",
  "serverCommand",
  "serverEnv",
  "logLevel",
] as const satisfies readonly (keyof Settings)[];

/**
 * Whether going from `before` to `after` changes how the server starts. Compared on the values
 * in effect, so a workspace value Cadenza ignores offers no restart.
 */
export function restartNeeded(before: Settings, after: Settings): boolean {
  return RESTART_FIELDS.some((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where the command came from, for messages: "setting", "PATH" or "python". */
  source: "setting" | "PATH" | "python";
}

/** `which`: the first executable `name` on `pathVar` (or `name` itself when it has a slash). */
export function findExecutable(
  name: string,
  pathVar: string | undefined,
  isExecutable: (file: string) => boolean = defaultIsExecutable,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (name.includes("/") || (platform === "win32" && name.includes("\\"))) {
    return isExecutable(name) ? name : undefined;
  }
  const extensions = platform === "win32" ? ["", ".exe", ".cmd", ".bat"] : [""];
  const separator = platform === "win32" ? ";" : ":";
  for (const dir of (pathVar ?? "").split(separator)) {
    if (!dir) continue;
    for (const extension of extensions) {
      const candidate = path.join(dir, name + extension);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

function defaultIsExecutable(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return false;
    if (process.platform === "win32") return true;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The command line of `cadenza serve`: the setting, else `cadenza` on the PATH, else
 * `python3 -P -m cadenza` (`python` where there is no `python3`). `-P`: the server starts in the
 * workspace folder, which must not be on `sys.path` (a repository's `cadenza/` would run).
 */
export function serverCommand(
  settings: Pick<Settings, "serverCommand" | "logLevel">,
  pathVar: string | undefined,
  isExecutable?: (file: string) => boolean,
  platform?: NodeJS.Platform,
): ServerCommand {
  const serve = ["serve", "--log-level", settings.logLevel];
  const configured = Array.isArray(settings.serverCommand)
    ? settings.serverCommand.filter((part) => part.trim() !== "")
    : settings.serverCommand
      ? [settings.serverCommand]
      : [];
  if (configured.length > 0) {
    return { command: configured[0], args: [...configured.slice(1), ...serve], source: "setting" };
  }
  const cadenza = findExecutable("cadenza", pathVar, isExecutable, platform);
  if (cadenza) return { command: cadenza, args: serve, source: "PATH" };
  const python =
    findExecutable("python3", pathVar, isExecutable, platform) ??
    findExecutable("python", pathVar, isExecutable, platform) ??
    "python3";
  return { command: python, args: ["-P", "-m", "cadenza", ...serve], source: "python" };
}

/**
 * The server's environment: VS Code's, then `cadenza.server.env`, then `CADENZA_BASE_URL`
 * from `cadenza.baseUrl` (what `cadenza run --base-url` sets too) and `CADENZA_MODEL` from
 * `cadenza.model`. Both settings are the person's own (user-only), and the server takes a model
 * that switches the provider or names a file from `initializationOptions` only when it repeats
 * the person's configuration: `CADENZA_MODEL` is that configuration.
 */
export function serverEnvironment(
  settings: Pick<Settings, "serverEnv" | "baseUrl" | "model">,
  base: NodeJS.ProcessEnv,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, ...settings.serverEnv };
  if (settings.baseUrl) env.CADENZA_BASE_URL = settings.baseUrl;
  if (settings.model) env.CADENZA_MODEL = settings.model;
  // Python must not buffer its stderr: the log should reach the output channel as it happens.
  env.PYTHONUNBUFFERED = "1";
  return env;
}

/** The `cadenza.startSession` argument object. */
export interface SessionArguments {
  task: string;
  rootUri?: string;
  workflow?: string;
  review?: "confirm";
  textDocument?: { uri: string };
}

/**
 * The `cadenza.startSession` arguments: the task, the root, the workflow when one is set,
 * `review: "confirm"` in review mode (otherwise the server's configured `review` applies), and
 * the focused `file:` document as `textDocument` (the local model's loop primes it into the
 * first message).
 */
export function sessionArguments(
  settings: Pick<Settings, "workflow" | "reviewMode">,
  task: string,
  rootUri: string | undefined,
  documentUri?: string,
): SessionArguments {
  const args: SessionArguments = { task };
  if (rootUri) args.rootUri = rootUri;
  if (documentUri?.startsWith("file:")) args.textDocument = { uri: documentUri };
  if (settings.workflow) args.workflow = settings.workflow;
  if (settings.reviewMode) args.review = "confirm";
  return args;
}
