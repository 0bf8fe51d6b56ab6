/**
 * The panel input's history: Up at the start of the input recalls older prompts, Down newer
 * ones, back to what was being typed. Pure (no DOM).
 */
export class PromptHistory {
  private readonly entries: string[] = [];
  /** entries.length: not browsing; else the index shown. */
  private index = 0;
  private draft = "";

  constructor(private readonly limit = 50, initial: string[] = []) {
    for (const entry of initial) this.push(entry);
  }

  /** Remember a sent prompt (not twice in a row); browsing starts again from the newest. */
  push(text: string): void {
    const trimmed = text.trim();
    if (trimmed && this.entries[this.entries.length - 1] !== trimmed) this.entries.push(trimmed);
    if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
    this.index = this.entries.length;
    this.draft = "";
  }

  /** The older prompt to show, or undefined at the oldest. `current` is kept as the draft. */
  previous(current: string): string | undefined {
    if (this.index === 0) return undefined;
    if (this.index === this.entries.length) this.draft = current;
    this.index -= 1;
    return this.entries[this.index];
  }

  /** The newer prompt to show (the draft after the newest), or undefined when not browsing. */
  next(): string | undefined {
    if (this.index >= this.entries.length) return undefined;
    this.index += 1;
    return this.index === this.entries.length ? this.draft : this.entries[this.index];
  }

  list(): string[] {
    return [...this.entries];
  }
}
