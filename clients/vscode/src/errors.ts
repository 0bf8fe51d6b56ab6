/** Errors as the person should read them: JSON-RPC errors, a server that did not start, provider failures. */

import type { ServerCommand } from "./config";

export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

export interface RpcErrorLike {
  code?: unknown;
  message?: unknown;
}

/**
 * Whether `error` says the server lacks `command` (rather than rejecting its arguments): a
 * MethodNotFound, or an InvalidParams for a command the server did not advertise in
 * `executeCommandProvider` (pygls answers an unknown command with -32602 "Command name '…' is
 * not defined").
 */
export function isUnsupportedCommand(error: unknown, command: string, advertised: readonly string[] | undefined): boolean {
  if (!error || typeof error !== "object") return false;
  const { code, message } = error as RpcErrorLike;
  if (code === METHOD_NOT_FOUND) return true;
  if (code !== INVALID_PARAMS) return false;
  if (advertised && !advertised.includes(command)) return true;
  return typeof message === "string" && /command name .* is not defined/i.test(message);
}

/** `message (code)` of a JSON-RPC error, or the text of any other error. */
export function errorText(error: unknown): string {
  if (error && typeof error === "object") {
    const { code, message } = error as RpcErrorLike;
    if (typeof message === "string") return typeof code === "number" ? `${message} (${code})` : message;
  }
  return String(error);
}

/** The message shown when the server lacks a command. */
export function unsupportedMessage(what: string, command: string, error: unknown): string {
  return `This Cadenza server does not support ${what} yet (${command}: ${errorText(error)}).`;
}

/** The environment variable holding a provider's API key (the fix for a 401). */
const KEY_VARIABLES: Record<string, string> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  gemini: "GEMINI_API_KEY",
  google: "GEMINI_API_KEY",
  mistral: "MISTRAL_API_KEY",
  groq: "GROQ_API_KEY",
  deepseek: "DEEPSEEK_API_KEY",
};

/** The provider's own message inside a JSON error body (`{"error": {"message": …}}`, `{"message": …}`). */
function bodyMessage(body: string): string | undefined {
  const start = body.indexOf("{");
  if (start < 0) return undefined;
  try {
    const data = JSON.parse(body.slice(start)) as Record<string, unknown>;
    const error = data.error;
    if (error && typeof error === "object" && typeof (error as { message?: unknown }).message === "string") {
      return (error as { message: string }).message;
    }
    if (typeof error === "string") return error;
    if (typeof data.message === "string") return data.message;
    if (typeof data.detail === "string") return data.detail;
  } catch {
    // a cut or non-JSON body
  }
  return undefined;
}

/**
 * A provider failure from the server (a `session_end` with `error`: "openai: HTTP 401:
 * {…json…}", "openai failed after 3 attempts: ConnectError: … Connection refused (POST
 * http://…)") as one sentence a person can act on; undefined when `message` is
 * not such a failure (shown as it is then).
 *
 * @param model the session's model (`PROVIDER/MODEL`) when known, for the fix.
 */
export function providerErrorText(message: string, model?: string): string | undefined {
  // The server names the provider first ("openai: HTTP 401: …", "openai/gpt-4.1 …: …").
  const head = /^\s*([A-Za-z][\w.-]*)(?:\/([^\s:]+))?[: ]/.exec(message);
  const provider = (head?.[1] ?? model?.split("/")[0] ?? "").toLowerCase();
  const modelName = model || (head?.[2] ? `${head[1]}/${head[2]}` : undefined);
  const status = /\bHTTP (\d{3})\b/.exec(message);
  const said = status ? bodyMessage(message.slice(status.index + status[0].length)) : undefined;
  const because = said ? ` (the provider said: ${said.length > 160 ? `${said.slice(0, 159)}…` : said.replace(/\s*\.$/, "")})` : "";
  const who = provider ? `The ${provider} provider` : "The model provider";
  if (status) {
    const code = Number(status[1]);
    if (code === 401 || code === 403) {
      const variable = KEY_VARIABLES[provider];
      const fix = variable
        ? `set ${variable} in the environment VS Code starts in, or in cadenza.server.env, then restart the server`
        : "check the API key in the server's environment (cadenza.server.env), then restart the server";
      return `${who} refused the API key (HTTP ${code})${because}: ${fix}.`;
    }
    if (code === 404) {
      const pull = provider === "ollama" && modelName ? `run \`ollama pull ${modelName.split("/").slice(1).join("/")}\` or ` : "";
      const local = provider === "local" && modelName ? `run \`cadenza models pull ${modelName.split("/").slice(1).join("/")}\` or ` : "";
      return `${who} does not know the model${modelName ? ` ${modelName}` : ""} (HTTP 404)${because}: ${pull}${local}pick another model in cadenza.model.`;
    }
    if (code === 429) return `${who} is rate-limiting requests (HTTP 429)${because}: wait a moment and run the task again, or check your plan's limits.`;
    if (code >= 500) return `${who}'s server failed (HTTP ${code})${because}: try again later.`;
    if (code === 400 || code === 422) return `${who} rejected the request (HTTP ${code})${because}.`;
    return undefined;
  }
  if (/Connection refused|ConnectError|Name or service not known|getaddrinfo|ConnectTimeout/i.test(message)) {
    const url = /\((?:POST|GET) (https?:\/\/[^\s)]+)\)/.exec(message)?.[1];
    return `Cadenza could not reach the model server${url ? ` at ${new URL(url).origin}` : ""}: start it, or fix cadenza.baseUrl (or cadenza.model).`;
  }
  return undefined;
}

const SOURCES: Record<ServerCommand["source"], string> = {
  setting: "the cadenza.server.command setting",
  PATH: "cadenza on the PATH",
  python: "no cadenza on the PATH: python -m cadenza",
};

/** Why the server did not start, as one sentence with the fix . */
export function startFailure(command: ServerCommand, error: unknown, log = ""): string {
  const commandLine = [command.command, ...command.args].join(" ");
  const text = `${error instanceof Error ? error.message : String(error)}\n${log}`;
  // Cadenza is not on PyPI: it installs from a checkout of its repository.
  const install = "install it from a checkout of the Cadenza repository";
  const pip = "`python3 -m pip install /path/to/cadenza`";
  if (/No module named ['"]?cadenza/i.test(text)) {
    return (
      `Cadenza's server is not installed for \`${command.command}\`: run \`${command.command} -m pip install /path/to/cadenza\` ` +
      "(a checkout of the Cadenza repository), " +
      "or set cadenza.server.command to the cadenza program of an environment that has it (e.g. `/path/to/.venv/bin/cadenza`)."
    );
  }
  if (/ENOENT|not found/i.test(text) && command.source === "setting") {
    return `Cadenza could not start its server: \`${command.command}\` (the cadenza.server.command setting) was not found. Fix the setting, or ${install} (${pip}) and clear it.`;
  }
  if (command.source === "python" || /ENOENT/i.test(text)) {
    return (
      `Cadenza's server is not installed: ${install} (${pip}, in the Python environment VS Code starts with), ` +
      "or set cadenza.server.command to its program (e.g. `/path/to/.venv/bin/cadenza`)."
    );
  }
  return `Cadenza could not start its server \`${commandLine}\` (${SOURCES[command.source]}); see the log (Cadenza: Show Log) for why.`;
}
