/**
 * A one-shot "something may have changed" flag with an awaitable promise.
 *
 * Recipes create a fresh Signal *before* issuing the read that arms a ZooKeeper watch and
 * hand the watcher a closure over that Signal. A watch that fires before the read's reply
 * is processed then still counts, so a wake-up is never lost between "read" and "wait".
 */
export class Signal {
  private done = false;
  private readonly promise: Promise<void>;
  private resolve!: () => void;

  constructor() {
    this.promise = new Promise<void>((resolve) => {
      this.resolve = resolve;
    });
  }

  get fired(): boolean {
    return this.done;
  }

  fire(): void {
    if (this.done) return;
    this.done = true;
    this.resolve();
  }

  wait(): Promise<void> {
    return this.promise;
  }
}
