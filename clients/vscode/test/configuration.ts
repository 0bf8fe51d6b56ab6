// A `getConfiguration("cadenza")` for unit tests: the person's (user) values, the workspace's,
// and the defaults package.json declares. `get` resolves like VS Code without its scope filter
// (workspace over user over default), as an older VS Code or a nested key form would: the reads
// under test must not depend on that filter.

import * as fs from "node:fs";
import * as path from "node:path";

import type { ConfigurationLike, InspectedValue } from "../src/settingScopes";

interface Manifest {
  contributes: { configuration: { properties: Record<string, { default?: unknown; scope?: string }> } };
}

export const MANIFEST: Manifest = JSON.parse(
  fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8"),
);

export const PROPERTIES = MANIFEST.contributes.configuration.properties;

export function configuration(user: Record<string, unknown>, workspace: Record<string, unknown> = {}): ConfigurationLike {
  const inspect = <T>(key: string): InspectedValue<T> => ({
    defaultValue: PROPERTIES[`cadenza.${key}`]?.default as T | undefined,
    globalValue: user[key] as T | undefined,
    workspaceValue: workspace[key] as T | undefined,
  });
  return {
    get: <T>(key: string): T | undefined => {
      const values = inspect<T>(key);
      return values.workspaceValue ?? values.globalValue ?? values.defaultValue;
    },
    inspect,
  };
}
