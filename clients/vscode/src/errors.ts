/** JSON-RPC errors as the person should read them. */

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
