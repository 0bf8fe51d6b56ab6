/**
 * Whether VS Code has a language server for a file type. VS Code offers no API listing a
 * language's providers, and its `vscode.execute…Provider` commands answer "nothing found" the
 * same whether no provider exists or one found nothing; so the extensions are read instead.
 * A language is served when an enabled extension with code (`main` or `browser`) activates on it
 * (`onLanguage:<id>`) or contributes it (which activates it implicitly). The built-in grammar
 * extensions (e.g. `vscode.python`: colours and brackets only) have no code and do not count;
 * neither do extensions that activate on everything (`*`, `onStartupFinished`), since they
 * seldom provide language features.
 */

/** The part of a `vscode.Extension` this looks at. */
export interface ExtensionInfo {
  id: string;
  packageJSON: {
    main?: unknown;
    browser?: unknown;
    activationEvents?: unknown;
    contributes?: { languages?: unknown };
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function contributedIds(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry: unknown) =>
    entry && typeof entry === "object" && typeof (entry as { id?: unknown }).id === "string"
      ? [(entry as { id: string }).id]
      : [],
  );
}

/** Whether one of `extensions` (other than `own`) may answer language features for `languageId`. */
export function servesLanguage(languageId: string, extensions: readonly ExtensionInfo[], own?: string): boolean {
  return extensions.some((extension) => {
    const pkg = extension.packageJSON ?? {};
    if (extension.id === own || (!pkg.main && !pkg.browser)) return false;
    return (
      strings(pkg.activationEvents).includes(`onLanguage:${languageId}`) ||
      contributedIds(pkg.contributes?.languages).includes(languageId)
    );
  });
}
