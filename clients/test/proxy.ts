/**
 * A TCP proxy in front of a real baton, for the kit's network tests: it
 * passes bytes through (optionally late), black-holes them (connections
 * stay open, nothing arrives either way, as on a dead Wi-Fi or a sleeping
 * laptop), or refuses connections (as while the server is down). Rules
 * aimed at one request (`cut`) lose its request, lose its answer, or hold
 * its answer back, leaving every other connection alone.
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

export type ProxyMode = 'pass' | 'blackhole' | 'refuse';

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Bytes were lost on it: it never carries any again. */
  dead: boolean;
  /** A rule matched the request on it: what happens to the rest of that exchange. */
  rule: Rule | null;
}

/**
 * What happens to one request, matched by the start of its request line
 * (`POST /locks `, `DELETE /locks/`, `GET /cases/`): `request` loses the
 * request (it never reaches baton; the connection stays open and silent),
 * `answer` loses baton's answer (baton did the work), `delay` holds the
 * answer back `ms`. Each rule applies to the next `times` matching
 * requests (default 1).
 */
export interface Rule {
  match: string;
  lose?: 'request' | 'answer';
  delay?: number;
  times?: number;
}

export class TcpProxy {
  mode: ProxyMode = 'pass';
  /** Added to every chunk, each way, in ms. */
  delayMs = 0;
  /** Connections accepted since the start (refused ones included). */
  accepted = 0;
  private server: Server | null = null;
  private pairs = new Set<Pair>();
  private port = 0;
  private rules: (Rule & { left: number })[] = [];
  /** Requests a rule caught, by the rule's `match`. */
  caught: string[] = [];

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A proxy for a baton's base URL (`http://127.0.0.1:1234`). */
  static async for(baseUrl: string): Promise<TcpProxy> {
    const url = new URL(baseUrl);
    const proxy = new TcpProxy(url.hostname, Number(url.port));
    await proxy.listen();
    return proxy;
  }

  /** The proxy's base URL: use it in place of the server's. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  listen(): Promise<void> {
    this.server = createServer((client) => this.accept(client));
    return new Promise((done, fail) => {
      this.server!.once('error', fail);
      this.server!.listen(0, '127.0.0.1', () => {
        this.port = (this.server!.address() as AddressInfo).port;
        done();
      });
    });
  }

  /**
   * Passes bytes again. Connections that were black-holed are reset, as a
   * server or NAT that forgot them answers their next packet.
   */
  pass(delayMs = this.delayMs): void {
    this.mode = 'pass';
    this.delayMs = delayMs;
    for (const pair of [...this.pairs]) if (pair.dead) this.reset(pair);
  }

  /** Nothing gets through either way, on open connections and new ones; nothing is closed. */
  blackhole(): void {
    this.mode = 'blackhole';
  }

  /** Resets every open connection and every new one. */
  refuse(): void {
    this.mode = 'refuse';
    for (const pair of [...this.pairs]) this.reset(pair);
  }

  /** Loses or delays the next request(s) whose request line starts with `rule.match` (see Rule). */
  cut(rule: Rule): void {
    this.rules.push({ ...rule, left: rule.times ?? 1 });
  }

  /** The rule for a chunk a client sent, when it starts a request that one matches. */
  private ruleFor(chunk: Buffer): Rule | null {
    const line = chunk.subarray(0, 200).toString('latin1');
    const rule = this.rules.find((r) => r.left > 0 && line.startsWith(r.match));
    if (!rule) return null;
    rule.left--;
    this.caught.push(rule.match);
    return rule;
  }

  /** How many connections are open through the proxy now. */
  get open(): number {
    return this.pairs.size;
  }

  async close(): Promise<void> {
    for (const pair of [...this.pairs]) this.reset(pair);
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }

  private reset(pair: Pair): void {
    this.pairs.delete(pair);
    pair.client.resetAndDestroy();
    pair.upstream.destroy();
  }

  private accept(client: Socket): void {
    this.accepted++;
    if (this.mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(this.targetPort, this.targetHost);
    // a black-holed connection stays black-holed: its bytes are lost, not held back
    const pair: Pair = { client, upstream, dead: this.mode === 'blackhole', rule: null };
    this.pairs.add(pair);
    const forward = (from: Socket, to: Socket, answers: boolean) => {
      from.on('data', (chunk: Buffer) => {
        if (pair.dead || this.mode !== 'pass') {
          pair.dead = true;
          return;
        }
        // a client's next request on a kept-alive connection ends the last one's rule
        if (!answers) pair.rule = this.ruleFor(chunk);
        const rule = pair.rule;
        if (rule?.lose === (answers ? 'answer' : 'request')) {
          // lost: this exchange never completes, and the connection carries nothing more
          pair.dead = true;
          return;
        }
        const delay = this.delayMs + (answers ? (rule?.delay ?? 0) : 0);
        if (delay > 0) setTimeout(() => to.writable && to.write(chunk), delay);
        else to.write(chunk);
      });
    };
    forward(client, upstream, false);
    forward(upstream, client, true);
    const end = () => {
      if (!this.pairs.delete(pair)) return;
      client.destroy();
      upstream.destroy();
    };
    // the server giving up on a black-holed connection is not seen by the client either
    const upstreamEnd = () => {
      if (pair.dead) upstream.destroy();
      else end();
    };
    client.on('close', end);
    client.on('error', end);
    upstream.on('close', upstreamEnd);
    upstream.on('error', upstreamEnd);
  }
}
