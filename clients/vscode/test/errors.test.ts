import { describe, expect, it } from "vitest";

import { providerErrorText, startFailure } from "../src/errors";

const OPENAI_401 =
  'openai: HTTP 401: {"error": {"message": "Incorrect API key provided: sk-***. You can find your API key at https://platform.openai.com/account/api-keys.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}';

describe("providerErrorText", () => {
  it("turns a 401 with a JSON body into one sentence with the fix", () => {
    const text = providerErrorText(OPENAI_401)!;
    expect(text).toMatch(/^The openai provider refused the API key \(HTTP 401\) \(the provider said: Incorrect API key provided/);
    expect(text).toContain("set OPENAI_API_KEY");
    expect(text).not.toContain("{");
    expect(text).not.toContain("invalid_request_error");
  });

  it("names the fix for a 404 model, a 429 and a refused connection", () => {
    expect(providerErrorText('ollama: HTTP 404: {"error":"model \\"qwen2.5-coder:7b\\" not found, try pulling it first"}', "ollama/qwen2.5-coder:7b")).toBe(
      'The ollama provider does not know the model ollama/qwen2.5-coder:7b (HTTP 404) (the provider said: model "qwen2.5-coder:7b" not found, try pulling it first): run `ollama pull qwen2.5-coder:7b` or pick another model in cadenza.model.',
    );
    expect(providerErrorText("anthropic failed after 3 attempts: HTTP 429: {}")).toMatch(
      /^The anthropic provider is rate-limiting requests \(HTTP 429\): wait a moment/,
    );
    expect(
      providerErrorText(
        "openai failed after 3 attempts: ConnectError: [Errno 111] Connection refused (POST http://127.0.0.1:9/v1/chat/completions)",
      ),
    ).toBe("Cadenza could not reach the model server at http://127.0.0.1:9: start it, or fix cadenza.baseUrl (or cadenza.model).");
  });

  it("leaves other errors alone", () => {
    expect(providerErrorText("internal error: KeyError: 'x'")).toBeUndefined();
    expect(providerErrorText("")).toBeUndefined();
  });
});

describe("startFailure", () => {
  it("says how to install a missing server, in one message", () => {
    const python = { command: "/usr/bin/python3", args: ["-m", "cadenza", "serve"], source: "python" as const };
    expect(startFailure(python, new Error("Connection to server got closed"), "/usr/bin/python3: No module named cadenza")).toBe(
      "Cadenza's server is not installed for `/usr/bin/python3`: run `/usr/bin/python3 -m pip install /path/to/cadenza` (a checkout of the Cadenza repository), or set cadenza.server.command to the cadenza program of an environment that has it (e.g. `/path/to/.venv/bin/cadenza`).",
    );
    expect(startFailure(python, new Error("closed"))).toMatch(/^Cadenza's server is not installed: install it from a checkout of the Cadenza repository \(`python3 -m pip install \/path\/to\/cadenza`, in the Python environment/);
    const setting = { command: "/nope/cadenza", args: ["serve"], source: "setting" as const };
    expect(startFailure(setting, new Error("spawn /nope/cadenza ENOENT"))).toMatch(
      /^Cadenza could not start its server: `\/nope\/cadenza` \(the cadenza.server.command setting\) was not found/,
    );
    const path = { command: "/usr/bin/cadenza", args: ["serve"], source: "PATH" as const };
    expect(startFailure(path, new Error("boom"))).toBe(
      "Cadenza could not start its server `/usr/bin/cadenza serve` (cadenza on the PATH); see the log (Cadenza: Show Log) for why.",
    );
  });
});
