/** The minimal part of the Web Storage API the client uses. */
export interface SessionStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export const SESSION_KEY = 'baton.sessionId';

function uuid(): string {
  const c = typeof crypto === 'undefined' ? undefined : crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  const bytes = new Uint8Array(16);
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function defaultStore(): SessionStore | undefined {
  try {
    return typeof sessionStorage === 'undefined' ? undefined : sessionStorage;
  } catch {
    return undefined; // storage disabled (privacy mode, sandboxed iframe)
  }
}

/**
 * The tab's session id: made once per tab and kept in `sessionStorage`, so a
 * reload keeps the same id (and, within the disconnect grace, its locks).
 * Without storage the id lives as long as the page.
 */
export function tabSessionId(store: SessionStore | undefined = defaultStore()): string {
  try {
    const existing = store?.getItem(SESSION_KEY);
    if (existing) return existing;
    const id = uuid();
    store?.setItem(SESSION_KEY, id);
    return id;
  } catch {
    return uuid();
  }
}

/** The part of `BroadcastChannel` the session uses (browsers' and Node's both fit). */
export interface BroadcastLike {
  onmessage: ((event: { data: unknown }) => void) | null;
  postMessage(message: unknown): void;
  close(): void;
  /** Node: lets the process end while the channel is open. */
  unref?: () => void;
}

export type BroadcastConstructor = new (name: string) => BroadcastLike;

/** The channel live tabs of an origin answer on: "this session id is mine". */
export const SESSION_CHANNEL = 'baton.session';

interface Probe {
  type: 'probe' | 'taken';
  id: string;
  nonce: string;
}

const isProbe = (data: unknown): data is Probe =>
  typeof data === 'object' && data !== null && 'type' in data && 'id' in data && 'nonce' in data && typeof data.id === 'string';

export interface TabSessionOptions {
  /** Where the id is kept (default: `sessionStorage`). */
  storage?: SessionStore | undefined;
  /** Use this id, as it is (no check). */
  id?: string | undefined;
  /** A `BroadcastChannel` implementation (default: the global one; `null`: no check). */
  broadcast?: BroadcastConstructor | null | undefined;
  /** How long to wait for another live tab to say the stored id is its own (ms, default 150). */
  waitMs?: number | undefined;
}

/**
 * The tab's session id, one per tab. It is kept in `sessionStorage`, so a
 * reload keeps it (and, within the disconnect grace, the tab's locks). A
 * browser's "Duplicate tab" copies `sessionStorage`, and with it the id: so
 * a tab that starts with a stored id asks the origin's other live tabs
 * (`BroadcastChannel`) whether it is theirs, and takes a new one if so.
 * Until that is settled (`ready`, at most `waitMs`), nothing is sent.
 */
export class TabSession {
  private current: string;
  readonly ready: Promise<void>;
  /** The id is settled (no other tab had to be asked, or they answered). */
  settled = false;
  private channel: BroadcastLike | null = null;
  /** The probes this tab sent: its own listener does not answer them. */
  private readonly asked = new Set<string>();

  constructor(options: TabSessionOptions = {}) {
    const store = 'storage' in options && options.storage !== undefined ? options.storage : defaultStore();
    const Broadcast =
      options.broadcast === undefined ? (globalThis as { BroadcastChannel?: BroadcastConstructor }).BroadcastChannel : options.broadcast;
    const stored = options.id ? null : readStored(store);
    this.current = options.id ?? stored ?? tabSessionId(store);
    if (stored && Broadcast) {
      this.ready = this.check(Broadcast, store, options.waitMs ?? 150).then(() => {
        this.settled = true;
      });
    } else {
      this.settled = true;
      this.ready = Promise.resolve();
    }
    if (Broadcast) this.listen(Broadcast);
  }

  get id(): string {
    return this.current;
  }

  /** Asks the other live tabs whether the stored id is theirs; takes a new one if it is. */
  private check(Broadcast: BroadcastConstructor, store: SessionStore | undefined, waitMs: number): Promise<void> {
    return new Promise((settle) => {
      let asking: BroadcastLike;
      try {
        asking = new Broadcast(SESSION_CHANNEL);
      } catch {
        settle();
        return;
      }
      asking.unref?.();
      const nonce = uuid();
      this.asked.add(nonce);
      const done = () => {
        clearTimeout(timer);
        asking.onmessage = null;
        asking.close();
        settle();
      };
      const timer = setTimeout(done, waitMs);
      asking.onmessage = ({ data }) => {
        if (!isProbe(data) || data.type !== 'taken' || data.nonce !== nonce || data.id !== this.current) return;
        // a duplicated tab: the id is another live tab's
        this.current = uuid();
        try {
          store?.setItem(SESSION_KEY, this.current);
        } catch {
          // storage disabled: the new id lives as long as the page
        }
        done();
      };
      asking.postMessage({ type: 'probe', id: this.current, nonce } satisfies Probe);
    });
  }

  /** Answers other tabs that ask whether this tab's id is taken. */
  private listen(Broadcast: BroadcastConstructor): void {
    try {
      this.channel = new Broadcast(SESSION_CHANNEL);
    } catch {
      return;
    }
    this.channel.unref?.();
    this.channel.onmessage = ({ data }) => {
      if (isProbe(data) && data.type === 'probe' && data.id === this.current && !this.asked.has(data.nonce)) {
        this.channel?.postMessage({ type: 'taken', id: data.id, nonce: data.nonce } satisfies Probe);
      }
    };
  }

  /** Stops answering other tabs. */
  dispose(): void {
    this.channel?.close();
    this.channel = null;
  }
}

function readStored(store: SessionStore | undefined): string | null {
  try {
    return store?.getItem(SESSION_KEY) ?? null;
  } catch {
    return null;
  }
}
