import { describe, expect, it } from "vitest";

import {
  DEFAULT_SETTINGS,
  findExecutable,
  initializationOptions,
  readSettings,
  restartNeeded,
  serverCommand,
  serverEnvironment,
  sessionArguments,
} from "../src/config";
import { configuration } from "./configuration";

const config = (values: Record<string, unknown>) => configuration(values);

describe("readSettings", () => {
  it("gives the defaults for an empty configuration", () => {
    expect(readSettings(config({}))).toEqual(DEFAULT_SETTINGS);
  });

  it("reads and trims every setting", () => {
    const settings = readSettings(
      config({
        model: " openai/gpt-4.1 ",
        baseUrl: "http://127.0.0.1:8080/v1",
        workflow: "plan-implement-review",
        maxSteps: 30,
        temperature: 0.2,
        reviewMode: true,
        saveEdits: "onSessionEnd",
        "permissions.default": "reject",
        "server.command": ["/usr/bin/python3", "-m", "cadenza"],
        "server.env": { OPENAI_API_KEY: "k", BAD: 3 },
        "server.logLevel": "INFO",
        "panel.revealOnRun": false,
      }),
    );
    expect(settings).toMatchObject({
      model: "openai/gpt-4.1",
      workflow: "plan-implement-review",
      maxSteps: 30,
      temperature: 0.2,
      reviewMode: true,
      saveEdits: "onSessionEnd",
      permissionsDefault: "reject",
      serverCommand: ["/usr/bin/python3", "-m", "cadenza"],
      serverEnv: { OPENAI_API_KEY: "k" },
      logLevel: "INFO",
      revealOnRun: false,
    });
  });

  it("falls back to defaults for malformed values", () => {
    const settings = readSettings(
      config({ saveEdits: "sometimes", "permissions.default": 1, maxSteps: "ten", "server.env": ["x"], "server.logLevel": "LOUD" }),
    );
    expect(settings.saveEdits).toBe("never");
    expect(settings.permissionsDefault).toBe("ask");
    expect(settings.maxSteps).toBeNull();
    expect(settings.serverEnv).toEqual({});
    expect(settings.logLevel).toBe("WARNING");
  });
});

describe("restartNeeded", () => {
  it("offers a restart when a setting the server starts with changes, not for the others", () => {
    expect(restartNeeded(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, serverEnv: { OPENAI_API_KEY: "k" } })).toBe(true);
    expect(restartNeeded(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, model: "openai/gpt-4.1" })).toBe(true);
    expect(restartNeeded(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, workflow: "plan-implement-review", saveEdits: "onSessionEnd" })).toBe(false);
  });

  it("offers none for a workspace value Cadenza ignores", () => {
    const before = readSettings(configuration({ "server.command": "/opt/venv/bin/cadenza" }));
    const after = readSettings(configuration({ "server.command": "/opt/venv/bin/cadenza" }, { "server.command": ["/bin/sh"] }));
    expect(restartNeeded(before, after)).toBe(false);
  });
});

describe("initializationOptions", () => {
  it("is empty with nothing set: the server's own configuration applies", () => {
    expect(initializationOptions(DEFAULT_SETTINGS)).toEqual({});
  });

  it("sends only the keys the server knows, camelCase", () => {
    const options = initializationOptions({
      ...DEFAULT_SETTINGS,
      model: "openai/test",
      maxSteps: 12,
      maxTokens: 256,
      temperature: 0,
      contextSize: 4096,
      workflow: "plan-implement-review",
      reviewMode: true,
      baseUrl: "http://x",
    });
    expect(options).toEqual({ model: "openai/test", maxSteps: 12, maxTokens: 256, temperature: 0, contextSize: 4096 });
  });
});

describe("serverCommand", () => {
  const exists = (files: string[]) => (file: string) => files.includes(file);

  it("uses the setting, as a string or an array, then serve and the log level", () => {
    expect(serverCommand({ serverCommand: "/opt/venv/bin/cadenza", logLevel: "INFO" }, "", exists([]))).toEqual({
      command: "/opt/venv/bin/cadenza",
      args: ["serve", "--log-level", "INFO"],
      source: "setting",
    });
    expect(
      serverCommand({ serverCommand: ["/usr/bin/python3", "-m", "cadenza"], logLevel: "WARNING" }, "", exists([])),
    ).toEqual({
      command: "/usr/bin/python3",
      args: ["-m", "cadenza", "serve", "--log-level", "WARNING"],
      source: "setting",
    });
  });

  it("finds cadenza on the PATH", () => {
    const found = serverCommand(
      { serverCommand: "", logLevel: "WARNING" },
      "/a:/b",
      exists(["/b/cadenza", "/a/python3"]),
      "linux",
    );
    expect(found).toEqual({ command: "/b/cadenza", args: ["serve", "--log-level", "WARNING"], source: "PATH" });
  });

  it("falls back to python3 -P -m cadenza, then python", () => {
    expect(serverCommand({ serverCommand: [], logLevel: "WARNING" }, "/a", exists(["/a/python3"]), "linux")).toEqual({
      command: "/a/python3",
      args: ["-P", "-m", "cadenza", "serve", "--log-level", "WARNING"],
      source: "python",
    });
    expect(serverCommand({ serverCommand: "", logLevel: "WARNING" }, "/a", exists(["/a/python"]), "linux").command).toBe(
      "/a/python",
    );
    expect(serverCommand({ serverCommand: "", logLevel: "WARNING" }, "", exists([]), "linux").command).toBe("python3");
  });

  it("findExecutable takes a path with a slash as it is", () => {
    expect(findExecutable("./bin/cadenza", "/x", exists(["./bin/cadenza"]), "linux")).toBe("./bin/cadenza");
    expect(findExecutable("./bin/missing", "/x", exists([]), "linux")).toBeUndefined();
  });

  it("findExecutable tries Windows extensions", () => {
    expect(findExecutable("cadenza", "C:\\py\\Scripts", exists(["C:\\py\\Scripts/cadenza.exe"]), "win32")).toBe(
      "C:\\py\\Scripts/cadenza.exe",
    );
  });
});

describe("serverEnvironment", () => {
  it("adds the env setting and CADENZA_BASE_URL over VS Code's environment", () => {
    const env = serverEnvironment(
      {
        serverEnv: { OPENAI_API_KEY: "k", HOME: "/h2" },
        baseUrl: "http://127.0.0.1:9/v1",
        model: "openai/gpt-4.1",
      },
      { HOME: "/h", PATH: "/bin" },
    );
    expect(env).toMatchObject({
      HOME: "/h2",
      PATH: "/bin",
      OPENAI_API_KEY: "k",
      CADENZA_BASE_URL: "http://127.0.0.1:9/v1",
      CADENZA_MODEL: "openai/gpt-4.1",
      PYTHONUNBUFFERED: "1",
    });
  });

  it("sets no base URL when the setting is empty", () => {
    const unset = serverEnvironment({ serverEnv: {}, baseUrl: "", model: "" }, {});
    expect(unset.CADENZA_BASE_URL).toBeUndefined();
    expect(unset.CADENZA_MODEL).toBeUndefined();
  });
});

describe("sessionArguments", () => {
  it("adds the root, the workflow and review mode when set", () => {
    expect(sessionArguments({ workflow: "", reviewMode: false }, "t", undefined)).toEqual({ task: "t" });
    expect(sessionArguments({ workflow: "plan-implement-review", reviewMode: true }, "t", "file:///w")).toEqual({
      task: "t",
      rootUri: "file:///w",
      workflow: "plan-implement-review",
      review: "confirm",
    });
  });

  it("sends the focused file document, not other schemes", () => {
    const settings = { workflow: "", reviewMode: false };
    expect(sessionArguments(settings, "t", "file:///w", "file:///w/a.py").textDocument).toEqual({
      uri: "file:///w/a.py",
    });
    expect(sessionArguments(settings, "t", "file:///w", "untitled:Untitled-1").textDocument).toBeUndefined();
  });
});
