/**
 * The "session ended" notifications, one at a time. VS Code cannot close a notification it
 * showed, so ends that arrive while one is still open wait, and a newer end replaces a waiting
 * one: when the open notification goes (dismissed, a button) or after `holdMs` (VS Code hides a
 * toast into the notification center without closing it), only the latest waiting end is shown.
 * Each waits first for `before` (the session's progress notification to leave the screen), so
 * an end never shows beside the progress it ends. The panel keeps every end. Pure (no `vscode`).
 */

export type Show = () => PromiseLike<unknown>;

export class Notices {
  private open = false;
  private waiting: Show | undefined;

  /**
   * @param holdMs how long an open notification holds back the next one at most.
   * @param before resolves when a notification may show (`Closings.settled`).
   */
  constructor(
    private readonly holdMs = 8000,
    private readonly before: () => PromiseLike<unknown> = () => Promise.resolve(),
  ) {}

  /** Show now, or after the open notification (replacing any end already waiting). */
  show(show: Show): void {
    if (this.open) {
      this.waiting = show;
      return;
    }
    this.open = true;
    let finished = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = () => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      this.open = false;
      const next = this.waiting;
      this.waiting = undefined;
      if (next) this.show(next);
    };
    Promise.resolve()
      .then(this.before)
      .then(() => {
        timer = setTimeout(done, this.holdMs);
        return show();
      })
      .then(done, done);
  }

  /** Whether a notification is open (for tests). */
  get busy(): boolean {
    return this.open;
  }
}

/**
 * Notifications on their way off the screen: a progress notification whose session ended stays
 * until VS Code closes it (it keeps one at least `PROGRESS_MIN_MS` after it appeared).
 */
export class Closings {
  private readonly pending = new Set<Promise<void>>();

  /** Track a notification that is gone once `gone` resolves. */
  add(gone: Promise<void>): void {
    this.pending.add(gone);
    void gone.finally(() => this.pending.delete(gone));
  }

  /** Resolves once every tracked notification is gone (at once when none is closing). */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }
}

/** VS Code shows a progress notification at least this long, even when its task ends sooner. */
export const PROGRESS_MIN_MS = 800;
/** The close's way from the extension host to the window, and the toast leaving. */
export const CLOSE_MARGIN_MS = 200;

/** Milliseconds until a progress notification that appeared at `shownAt` is off the screen, if it ends at `now`. */
export function progressGoneIn(shownAt: number | undefined, now: number): number {
  return shownAt === undefined ? 0 : Math.max(0, shownAt + PROGRESS_MIN_MS + CLOSE_MARGIN_MS - now);
}
