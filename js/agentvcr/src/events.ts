// Progress events (docs/proxy.md#progress-events-and-holds): the SSE
// stream of GET /v1/events as an async iterator, and onProgress, which
// holds events, awaits a handler and releases them.
import type { Control, Transport } from './control.js';
import type { Dispatcher } from 'undici';
import type { Event, HoldableEventType } from './openapi.js';

/** A progress event, as the proxy sends it (the API's Event union, by type). */
export type ProgressEvent = Event;

/** How to open the event stream. */
export interface EventsOptions {
  /** Event types whose requests wait until release(id): model_request, tool_request, reply. */
  hold?: HoldableEventType[];
  /** Bounds each of this stream's holds (1 to 3600000; the proxy's default 60000), after which the request fails with 504. */
  holdTimeoutMs?: number;
  /** Closes the stream when aborted. */
  signal?: AbortSignal;
}

/**
 * An open event stream: iterate it for events (once). ready resolves when
 * the proxy has subscribed it (a request started after that is seen), and
 * rejects when the stream could not open. close() ends it; the proxy ends
 * the stream's open holds, letting their requests go on.
 */
export interface EventStream extends AsyncIterable<ProgressEvent> {
  readonly ready: Promise<void>;
  /** Resolves when the stream has ended, however. */
  readonly closed: Promise<void>;
  close(): void;
}

/** What a handler can do while its event is held. */
export interface ProgressActions {
  /** Posts an input to the agent (onProgress's opts.send) while the request waits. */
  send(input: unknown): Promise<void>;
}

/** Called for every progress event; a held event is released after its promise settles. */
export type ProgressHandler = (event: ProgressEvent, actions: ProgressActions) => unknown | Promise<unknown>;

/** How onProgress subscribes. */
export interface OnProgressOptions {
  /** Event types held until the handler's promise settles. */
  hold?: HoldableEventType[];
  /** Bounds each hold (the proxy's default 60000 ms). */
  holdTimeoutMs?: number;
  /** What actions.send does: post an input to the agent (a steering message, say). */
  send?: (input: unknown) => Promise<void>;
}

/**
 * An onProgress subscription. close() stops it after the running handlers
 * settle (their held events released), waiting for them at most the
 * hold timeout (holdTimeoutMs, else 5 s): a handler still running then is
 * an error "the handler for event N did not settle". errors() are the
 * handlers' errors and failed releases, for a test to assert empty.
 */
export interface Subscription extends AsyncDisposable {
  close(): Promise<void>;
  errors(): Error[];
}

/** openEvents opens GET /v1/events through t. */
export function openEvents(t: Transport, opts: EventsOptions): EventStream {
  const query = new URLSearchParams();
  if (opts.hold?.length) query.set('hold', opts.hold.join(','));
  if (opts.holdTimeoutMs !== undefined) query.set('holdTimeoutMs', String(opts.holdTimeoutMs));
  const path = '/v1/events' + (query.size ? `?${query}` : '');

  const abort = new AbortController();
  const queue: ProgressEvent[] = [];
  let waiter: (() => void) | undefined;
  let ended = false;
  let failure: Error | undefined;
  let iterated = false;
  let markReady!: () => void;
  let failReady!: (err: Error) => void;
  let markClosed!: () => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  ready.catch(() => {}); // the iterator reports it too
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const wake = () => {
    const w = waiter;
    waiter = undefined;
    w?.();
  };
  const finish = (err?: Error) => {
    if (ended) return;
    ended = true;
    if (err && !abort.signal.aborted) failure = err;
    failReady(err ?? new Error('agentvcr: the event stream closed before it opened'));
    markClosed();
    wake();
  };
  const close = () => {
    abort.abort();
    finish();
  };
  if (opts.signal) {
    if (opts.signal.aborted) close();
    else opts.signal.addEventListener('abort', close, { once: true });
  }

  (async () => {
    const { res, destroy } = await t.open(path, abort.signal);
    try {
      if (res.statusCode !== 200) {
        throw t.fail(`GET /v1/events`, res.statusCode, await res.body.text());
      }
      await read(res.body);
    } finally {
      destroy();
    }
  })().then(
    () => finish(),
    (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
  );

  async function read(body: Dispatcher.ResponseData['body']): Promise<void> {
    let buf = '';
    let data: string[] = [];
    body.setEncoding('utf8');
    for await (const chunk of body as AsyncIterable<string>) {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        if (line === '') {
          if (data.length) {
            queue.push(JSON.parse(data.join('\n')) as ProgressEvent);
            data = [];
            wake();
          }
        } else if (line.startsWith(':')) {
          // The opening comment: the proxy subscribed the stream before it.
          if (line.startsWith(': agentvcr events')) markReady();
        } else if (line.startsWith('data:')) {
          data.push(line.slice(5).replace(/^ /, ''));
        }
      }
    }
  }

  return {
    ready,
    closed,
    close,
    [Symbol.asyncIterator](): AsyncIterator<ProgressEvent> {
      if (iterated) throw new Error('agentvcr: an event stream is iterated once; open another with control.events()');
      iterated = true;
      return {
        async next(): Promise<IteratorResult<ProgressEvent>> {
          for (;;) {
            const ev = queue.shift();
            if (ev) return { value: ev, done: false };
            if (ended) {
              if (failure) {
                const err = failure;
                failure = undefined;
                const why = t.diagnose();
                throw new Error(`agentvcr: the event stream failed: ${err.message}${why ? ` (${why})` : ''}`, { cause: err });
              }
              return { value: undefined, done: true };
            }
            await new Promise<void>((resolve) => (waiter = resolve));
          }
        },
        async return(): Promise<IteratorResult<ProgressEvent>> {
          close();
          return { value: undefined, done: true };
        },
      };
    },
  };
}

/** How long Subscription.close() waits for running handlers when onProgress has no holdTimeoutMs. */
const closeSettleMs = 5_000;

/** subscribe is Control.onProgress. */
export async function subscribe(
  control: Control,
  handler: ProgressHandler,
  opts: OnProgressOptions,
  report: (err: Error) => void,
): Promise<Subscription> {
  const stream = control.events({
    ...(opts.hold ? { hold: opts.hold } : {}),
    ...(opts.holdTimeoutMs !== undefined ? { holdTimeoutMs: opts.holdTimeoutMs } : {}),
  });
  await stream.ready;
  const collected: Error[] = [];
  const fail = (err: Error): void => {
    collected.push(err);
    report(err);
  };
  const running = new Map<Promise<void>, ProgressEvent>();
  const actions: ProgressActions = {
    send: async (input) => {
      if (!opts.send) {
        throw new Error('agentvcr: actions.send needs onProgress(handler, { send: async (input) => ... }): how to post an input to the agent');
      }
      await opts.send(input);
    },
  };
  const asError = (err: unknown) => (err instanceof Error ? err : new Error(String(err)));
  const handle = async (ev: ProgressEvent) => {
    try {
      await handler(ev, actions);
    } catch (err) {
      fail(asError(err));
    } finally {
      if ('held' in ev && ev.held) {
        try {
          await control.release(ev.id);
        } catch (err) {
          fail(new Error(`agentvcr: release of held ${ev.type} event ${ev.id}: ${asError(err).message}`, { cause: err }));
        }
      }
    }
  };
  // Each event's handler starts as it arrives, in order, without waiting
  // for earlier handlers: a handler holding one request must not hold up
  // the events (and releases) of the others.
  const pump = (async () => {
    try {
      for await (const ev of stream) {
        const p = handle(ev);
        running.set(p, ev);
        void p.finally(() => running.delete(p));
      }
    } catch (err) {
      fail(asError(err));
    }
  })();
  // close() waits this long for running handlers: a handler that never
  // settles must not hang the test's teardown.
  const settleMs = opts.holdTimeoutMs ?? closeSettleMs;
  const settled = async (deadline: number): Promise<boolean> => {
    while (running.size) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()))));
      const r = await Promise.race([Promise.allSettled([...running.keys()]), late]);
      clearTimeout(timer);
      if (r === 'late') return false;
    }
    return true;
  };
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const deadline = Date.now() + settleMs;
      // Let running handlers settle (and release) before the stream closes.
      let ok = await settled(deadline);
      stream.close(); // the proxy ends the holds still open
      await pump;
      if (ok) ok = await settled(deadline);
      if (!ok) {
        for (const ev of running.values()) {
          fail(new Error(`agentvcr: onProgress: the handler for event ${ev.id} (${ev.type}) did not settle within ${settleMs} ms ` +
            'of close(); close() went on without it (make the handler return, or time out what it awaits)'));
        }
        running.clear();
      }
    })());
  return { close, errors: () => [...collected], [Symbol.asyncDispose]: close };
}
