// Message ids indexed by the second (unix seconds) of an entry of theirs, so that work due when
// the walk passes a time (the window's prune, the tracker's slice completion) visits the seconds
// passed instead of every message held. An id is listed once per run of entries in one second
// (entries of a page share seconds); a visitor checks whether each id still needs it.

export class MessagesBySecond {
  readonly #lists = new Map<number, string[]>();
  /** The second last added to, and its list. */
  #lastSecond = Number.NaN;
  #lastList: string[] = [];

  /** Lists `messageId` under the second of `time`. */
  add(time: number, messageId: string): void {
    const second = Math.floor(time / 1000);
    let list = this.#lastList;
    if (second !== this.#lastSecond) {
      let known = this.#lists.get(second);
      if (known === undefined) this.#lists.set(second, (known = []));
      list = known;
      this.#lastSecond = second;
      this.#lastList = list;
    }
    if (list.length === 0 || list[list.length - 1] !== messageId) list.push(messageId);
  }

  /**
   * Visits the ids listed under every second up to the one of `upTo`, and forgets the seconds
   * before it. The second of `upTo` keeps its list: its entries after `upTo` still need it.
   */
  visitUpTo(upTo: number, visit: (messageId: string) => void): void {
    const partial = Math.floor(upTo / 1000);
    for (const [second, messageIds] of this.#lists) {
      if (second > partial) continue;
      for (const messageId of messageIds) visit(messageId);
      if (second < partial) {
        this.#lists.delete(second);
        if (second === this.#lastSecond) this.#lastSecond = Number.NaN;
      }
    }
  }

  clear(): void {
    this.#lists.clear();
    this.#lastSecond = Number.NaN;
  }
}
