import type { TreeListener, Watcher } from '@zoott/core';
import type { ServerState, Session } from './server-state.js';

/** One `watchTree` of a client: kept by the client, set again on every new connection. */
export interface TreeWatchReg {
  /** Client path. */
  path: string;
  /** What the server's watch table calls: forwards to the listener while registered. */
  watcher: Watcher;
  listener: TreeListener;
}

/**
 * A client's tree watches (ZooKeeper 3.6+'s persistent recursive watches). The server keeps
 * them per connection, like one-shot watches; unlike those, the client sets them again by
 * itself on a new connection or session, and tells each listener `reset`, since the changes
 * made while they were not set are not replayed.
 */
export class ClientTreeWatches {
  private readonly regs = new Set<TreeWatchReg>();

  constructor(
    private readonly server: ServerState,
    private readonly toServer: (path: string) => string,
    /** Queues a `reset` for `reg` in the client's inbox, in order with watch events. */
    private readonly queueReset: (reg: TreeWatchReg) => void,
  ) {}

  /** Sets a tree watch on `session`; returns its stop function. */
  add(session: Session, path: string, listener: TreeListener): () => void {
    const reg: TreeWatchReg = {
      path,
      listener,
      watcher: (event) => {
        // A stopped watch hears nothing, even an event already in the inbox.
        if (!this.regs.has(reg)) return;
        listener({ type: event.type as 'created' | 'deleted' | 'dataChanged', path: event.path });
      },
    };
    this.server.watches.addTree(session, this.toServer(path), reg.watcher);
    this.regs.add(reg);
    return () => {
      if (!this.regs.delete(reg)) return;
      // Wherever the server holds it now (the session it was set on, or a later one).
      this.server.watches.removeTree(reg.watcher);
    };
  }

  /** Whether `reg` is still registered (not stopped, the client not closed). */
  has(reg: TreeWatchReg): boolean {
    return this.regs.has(reg);
  }

  /** Tells `reg`'s listener `reset`, unless it was stopped meanwhile. */
  reset(reg: TreeWatchReg, onError: (err: unknown) => void): void {
    if (!this.regs.has(reg)) return;
    try {
      reg.listener({ type: 'reset' });
    } catch (err) {
      onError(err);
    }
  }

  /** A new connection or session: every tree watch is set on it, and hears `reset`. */
  registerAll(session: Session): void {
    for (const reg of this.regs) {
      this.server.watches.addTree(session, this.toServer(reg.path), reg.watcher);
      this.queueReset(reg);
    }
  }

  /** The client closed: every tree watch is gone. */
  clear(): void {
    this.regs.clear();
  }
}
