import { describe, expect, it } from "vitest";

import { Notices } from "../src/notices";

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("Notices", () => {
  it("shows one end at a time; a newer end replaces the one waiting", async () => {
    const shown: string[] = [];
    const close: (() => void)[] = [];
    const notice = (text: string) => () =>
      new Promise<void>((resolve) => {
        shown.push(text);
        close.push(resolve);
      });
    const notices = new Notices();
    notices.show(notice("first"));
    await tick();
    notices.show(notice("second"));
    notices.show(notice("third"));
    await tick();
    expect(shown).toEqual(["first"]);
    close[0]();
    await tick();
    await tick();
    expect(shown).toEqual(["first", "third"]);
    close[1]();
    await tick();
    expect(notices.busy).toBe(false);
    notices.show(notice("fourth"));
    await tick();
    expect(shown).toEqual(["first", "third", "fourth"]);
  });

  it("shows the waiting end after holdMs even if the open one stays (hidden into the center)", async () => {
    const notices = new Notices(20);
    const shown: string[] = [];
    notices.show(() => {
      shown.push("stays");
      return new Promise(() => undefined);
    });
    notices.show(async () => {
      shown.push("later");
    });
    await tick();
    expect(shown).toEqual(["stays"]);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(shown).toEqual(["stays", "later"]);
  });

  it("goes on after a notification that failed", async () => {
    const notices = new Notices();
    const shown: string[] = [];
    notices.show(() => Promise.reject(new Error("no window")));
    notices.show(async () => {
      shown.push("next");
    });
    await tick();
    await tick();
    await tick();
    expect(shown).toEqual(["next"]);
  });
});
