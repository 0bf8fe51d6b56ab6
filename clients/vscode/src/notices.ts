/**
 * The "session ended" notifications, one at a time. VS Code cannot close a notification it
 * showed, so ends that arrive while one is still open wait, and a newer end replaces a waiting
 * one: when the open notification goes (dismissed, a button) or after `holdMs` (VS Code hides a
 * toast into the notification center without closing it), only the latest waiting end is shown.
 * The panel keeps every end. Pure (no `vscode`).
 */

export type Show = () => PromiseLike<unknown>;

export class Notices {
  private open = false;
  private waiting: Show | undefined;

  constructor(private readonly holdMs = 8000) {}

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
    timer = setTimeout(done, this.holdMs);
    Promise.resolve()
      .then(show)
      .then(done, done);
  }

  /** Whether a notification is open (for tests). */
  get busy(): boolean {
    return this.open;
  }
}
