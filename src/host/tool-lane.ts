interface LaneItem<T> {
  exclusive: boolean;
  run: () => Promise<T>;
  started: boolean;
  finished: boolean;
  result?: { ok: true; value: T } | { ok: false; error: unknown };
}

/**
 * Schedules one actor's tool calls: shared (read-only) calls run concurrently up to `limit`; an exclusive call
 * (anything that writes) runs alone, after everything before it and before anything after it. Whatever order calls
 * finish in, their outcomes are committed strictly in request order, one at a time.
 */
export class ToolLane<T> {
  private readonly items: LaneItem<T>[] = [];
  private committed = 0;
  private running = 0;
  private committing = false;

  constructor(
    private readonly limit: number,
    private readonly commit: (outcome: { ok: true; value: T } | { ok: false; error: unknown }) => Promise<void>,
  ) {}

  /** Add a call in request order. */
  add(exclusive: boolean, run: () => Promise<T>): void {
    this.items.push({ exclusive, run, started: false, finished: false });
    this.pump();
  }

  /** True when every added call has been committed. */
  get idle(): boolean {
    return this.committed === this.items.length;
  }

  private pump(): void {
    for (let index = this.committed; index < this.items.length; index++) {
      const item = this.items[index]!;
      if (item.started) {
        if (item.exclusive && !item.finished) return;
        continue;
      }
      if (item.exclusive) {
        if (this.running === 0 && this.allBeforeFinished(index)) this.start(item);
        return;
      }
      if (this.running >= this.limit) return;
      this.start(item);
    }
  }

  private allBeforeFinished(index: number): boolean {
    for (let before = this.committed; before < index; before++) if (!this.items[before]!.finished) return false;
    return true;
  }

  private start(item: LaneItem<T>): void {
    item.started = true;
    this.running++;
    item.run().then(
      (value) => this.finish(item, { ok: true, value }),
      (error: unknown) => this.finish(item, { ok: false, error }),
    );
  }

  private finish(item: LaneItem<T>, result: NonNullable<LaneItem<T>['result']>): void {
    item.finished = true;
    item.result = result;
    this.running--;
    void this.flush();
    this.pump();
  }

  private async flush(): Promise<void> {
    if (this.committing) return;
    this.committing = true;
    try {
      while (this.committed < this.items.length && this.items[this.committed]!.finished) {
        const item = this.items[this.committed]!;
        await this.commit(item.result!);
        this.committed++;
        this.pump();
      }
    } finally {
      this.committing = false;
    }
  }
}
