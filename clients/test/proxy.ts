/**
 * A TCP proxy in front of a real baton, for the kit's network tests: it
 * passes bytes through (optionally late), black-holes them (connections
 * stay open, nothing arrives either way, as on a dead Wi-Fi or a sleeping
 * laptop), or refuses connections (as while the server is down).
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

export type ProxyMode = 'pass' | 'blackhole' | 'refuse';

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Bytes were lost on it: it never carries any again. */
  dead: boolean;
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
    const pair: Pair = { client, upstream, dead: this.mode === 'blackhole' };
    this.pairs.add(pair);
    const forward = (from: Socket, to: Socket) => {
      from.on('data', (chunk: Buffer) => {
        if (pair.dead || this.mode !== 'pass') {
          pair.dead = true;
          return;
        }
        if (this.delayMs > 0) setTimeout(() => to.writable && to.write(chunk), this.delayMs);
        else to.write(chunk);
      });
    };
    forward(client, upstream);
    forward(upstream, client);
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
