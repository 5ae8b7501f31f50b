// A cap on the connections the HTTP(S) server serves at once, the way Prometheus' own
// --web.max-connections works (Go's netutil.LimitListener): a connection beyond the cap is not
// refused, it waits, unread, until a served one closes, then it is served in arrival order.
// Node's server.maxConnections would instead close it at once, which a scraper sees as a reset.
// Waiting connections cost a file descriptor and no parsing; their number is bounded too
// (beyond it a connection is closed at once), and so is how long one waits.

import type { Server, Socket } from 'node:net';

export interface ConnectionLimitOptions {
  /** Connections served at once. */
  maxConnections: number;
  /** Connections allowed to wait for a slot; more are closed at once. */
  maxWaiting: number;
  /** A connection that waited this long is closed, ms. */
  maxWaitMs: number;
}

export interface ConnectionLimit {
  /** Connections being served now. */
  readonly active: number;
  /** Connections waiting for a slot now. */
  readonly waiting: number;
  /** Connections closed because too many were waiting or one waited too long. */
  readonly dropped: number;
  /** Closes every waiting connection (on shutdown: server.close() waits for them otherwise). */
  closeWaiting(): void;
}

interface Waiter {
  socket: Socket;
  since: number;
  onError: () => void;
}

/**
 * Puts the cap in front of the server's own connection handling (HTTP parser, or TLS then HTTP).
 * Call before listen(). Sockets are accepted paused (`pauseOnConnect`), so a waiting one reads
 * nothing and the server's timeouts (TLS handshake, headers) start only when it is served.
 */
export function limitConnections(server: Server, options: ConnectionLimitOptions): ConnectionLimit {
  const handlers = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  // A documented option of net.createServer that http(s).createServer does not pass on.
  (server as Server & { pauseOnConnect: boolean }).pauseOnConnect = true;
  const waiters: Waiter[] = [];
  const state = { active: 0, dropped: 0 };

  const serve = (socket: Socket): void => {
    state.active += 1;
    socket.once('close', () => {
      state.active -= 1;
      admitNext();
    });
    for (const handler of handlers) handler.call(server, socket);
    socket.resume();
  };

  const admitNext = (): void => {
    const now = Date.now();
    while (state.active < options.maxConnections && waiters.length > 0) {
      const { socket, since, onError } = waiters.shift()!;
      socket.off('error', onError);
      if (socket.destroyed) continue;
      if (now - since > options.maxWaitMs) {
        state.dropped += 1;
        socket.destroy();
        continue;
      }
      serve(socket);
    }
  };

  // Waiters past their wait are closed even when no slot frees up (every slot held by slow clients).
  const sweep = setInterval(
    () => {
      const now = Date.now();
      while (waiters.length > 0 && now - waiters[0]!.since > options.maxWaitMs) {
        state.dropped += 1;
        waiters.shift()!.socket.destroy();
      }
    },
    Math.max(100, Math.min(options.maxWaitMs, 1_000)),
  );
  sweep.unref();
  server.once('close', () => clearInterval(sweep));

  server.on('connection', (socket: Socket) => {
    if (state.active < options.maxConnections) {
      serve(socket);
    } else if (waiters.length < options.maxWaiting) {
      // An error on a waiting socket (the peer reset it) must not be an uncaught exception.
      const onError = (): void => void socket.destroy();
      socket.on('error', onError);
      waiters.push({ socket, since: Date.now(), onError });
    } else {
      state.dropped += 1;
      socket.destroy();
    }
  });

  return {
    get active() {
      return state.active;
    },
    get waiting() {
      return waiters.length;
    },
    get dropped() {
      return state.dropped;
    },
    closeWaiting() {
      for (const { socket } of waiters.splice(0)) socket.destroy();
    },
  };
}
