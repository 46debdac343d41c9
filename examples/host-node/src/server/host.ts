/**
 * The host's HTTP server: its own sign-in (a session cookie), its invoices,
 * a baton token for whoever is signed in, and the guarded, fenced save.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { extname, join } from 'node:path';
import { Baton, BatonUnavailable } from './baton.js';
import { STATUSES, type HostDb, type HostUser, type Invoice, type InvoiceFields } from './db.js';
import { verifyPassword } from './passwords.js';

export interface HostOptions {
  db: HostDb;
  baton: Baton;
  /** Where index.html, style.css and the built app.js are. */
  publicDir: string;
  /** How long a minted baton token lasts (default: baton's own maximum). */
  tokenTtl?: string;
  /**
   * Runs after the guard let a save through and before its UPDATE. The
   * tests hold a save here to open the window the fence is for: a tab whose
   * guard passed loses its lock before its write lands.
   */
  beforeWrite?: (invoiceId: string) => Promise<void>;
  log?: (line: string) => void;
}

const COOKIE = 'host_session';
const FILES: Record<string, string> = {
  '/': 'index.html',
  '/index.html': 'index.html',
  '/app.js': 'app.js',
  '/style.css': 'style.css',
};
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The host's answer to a save, as its page reads it. */
export interface SaveBody {
  invoice: InvoiceFields;
  /** The tab's baton session id (`BatonClient.sessionId`). */
  sessionId: string;
  /** The tab's lock on the invoice (`baton.locks.tokenFor(invoice)`): its fencing token. */
  lockToken: string;
}

export function createHost(options: HostOptions): Server {
  const { db, baton } = options;
  const log = options.log ?? ((line: string) => console.log(line));
  /** Signed-in sessions: a random id in an HttpOnly cookie → the host's user id. */
  const sessions = new Map<string, string>();

  async function signedIn(req: IncomingMessage): Promise<HostUser> {
    const sid = cookie(req, COOKIE);
    const userId = sid ? sessions.get(sid) : undefined;
    const user = userId ? await db.user(userId) : null;
    if (!user) throw new HttpError(401, 'unauthorized', 'Sign in first.');
    return user;
  }

  async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await json(req);
    const email = typeof body.email === 'string' ? body.email : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const row = await db.userByEmail(email);
    // a missing user costs the same as a wrong password
    const ok = await verifyPassword(password, row?.password_hash ?? 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAA');
    if (!row || !ok) throw new HttpError(401, 'bad_credentials', 'Wrong email or password.');
    const sid = randomBytes(24).toString('base64url');
    sessions.set(sid, row.id);
    res.setHeader('Set-Cookie', `${COOKIE}=${sid}; HttpOnly; SameSite=Lax; Path=/`);
    send(res, 200, { user: publicUser(row) });
  }

  /** Mints a baton token for the signed-in person, with what the page needs to use it. */
  async function batonToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const user = await signedIn(req);
    const minted = await baton.mint(user, options.tokenTtl);
    send(res, 201, { ...minted, batonUrl: baton.url, case: baton.options.caseSlug, type: baton.options.type, user: publicUser(user) });
  }

  /**
   * A save: the guard (baton), then the fenced UPDATE (the host's database),
   * then the announcement to every tab (after the commit).
   */
  async function save(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const user = await signedIn(req);
    if (!(await db.invoice(id))) throw new HttpError(404, 'not_found', `There is no invoice ${id}.`);
    if (user.role === 'reader') throw new HttpError(403, 'forbidden', `${user.name} may read invoices but not change them.`);
    const { invoice: fields, sessionId, lockToken } = saveBody(await json(req));

    const guard = await baton.guard(id, user, sessionId, lockToken);
    if (!guard.ok) return send(res, guard.status, guard.body);

    await options.beforeWrite?.(id);
    const saved = await db.saveInvoice(id, fields, lockToken, user.id);
    if (!saved) {
      const current = await db.invoice(id);
      if (!current) throw new HttpError(404, 'not_found', `Invoice ${id} was deleted.`);
      // 0 rows: a save under a later grant of this invoice's lock came first
      throw new HttpError(
        409,
        'fenced',
        `Not saved: ${current.updatedBy ?? 'someone'} saved invoice ${id} under a newer lock; your edit would have overwritten it.`,
        { current },
      );
    }
    await announce('update', saved, sessionId);
    send(res, 200, saved);
  }

  async function announce(type: 'update', invoice: Invoice, sessionId: string): Promise<void> {
    try {
      await baton.announce(type, invoice, sessionId);
    } catch (error) {
      // the save stands; tabs see it when they next load the list
      log(`could not announce ${type} of ${invoice.id}: ${String(error)}`);
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://host');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (method === 'GET' && FILES[path]) return serveFile(res, join(options.publicDir, FILES[path]!));
    if (path.startsWith('/api/') && method !== 'GET' && !isJson(req)) {
      // only a page of this origin can send JSON here (a form from elsewhere cannot)
      throw new HttpError(415, 'unsupported_media_type', 'Send JSON (Content-Type: application/json).');
    }
    if (method === 'POST' && path === '/api/login') return login(req, res);
    if (method === 'POST' && path === '/api/logout') {
      const sid = cookie(req, COOKIE);
      if (sid) sessions.delete(sid);
      res.setHeader('Set-Cookie', `${COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0`);
      return send(res, 204, null);
    }
    if (method === 'GET' && path === '/api/me') return send(res, 200, { user: publicUser(await signedIn(req)) });
    if (method === 'POST' && path === '/api/baton-token') return batonToken(req, res);
    if (method === 'GET' && path === '/api/invoices') {
      await signedIn(req);
      return send(res, 200, { invoices: await db.invoices() });
    }
    const match = /^\/api\/invoices\/([A-Za-z0-9._:-]{1,200})$/.exec(path);
    if (match) {
      const id = match[1]!;
      if (method === 'GET') {
        await signedIn(req);
        const invoice = await db.invoice(id);
        if (!invoice) throw new HttpError(404, 'not_found', `There is no invoice ${id}.`);
        return send(res, 200, invoice);
      }
      if (method === 'PATCH') return save(req, res, id);
    }
    throw new HttpError(404, 'not_found', `No route ${method} ${path}.`);
  }

  return createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (error instanceof HttpError) return send(res, error.status, { error: { code: error.code, message: error.message, ...error.extra } });
      if (error instanceof BatonUnavailable) {
        log(error.message);
        return send(res, 503, { error: { code: 'baton_unavailable', message: error.message } });
      }
      log(`${req.method} ${req.url}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      send(res, 500, { error: { code: 'internal', message: 'Something went wrong on the host.' } });
    });
  });
}

function saveBody(body: Record<string, unknown>): SaveBody {
  const { invoice, sessionId, lockToken, ...rest } = body;
  const problems: string[] = Object.keys(rest).map((key) => `unknown key ${key}`);
  if (typeof sessionId !== 'string' || !/^[0-9a-fA-F-]{36}$/.test(sessionId)) problems.push('sessionId must be the tab’s session id');
  if (!invoice || typeof invoice !== 'object' || Array.isArray(invoice)) problems.push('invoice must be an object');
  const fields: InvoiceFields = {};
  for (const [key, value] of Object.entries((invoice ?? {}) as Record<string, unknown>)) {
    if (key === 'customer' && typeof value === 'string' && value.trim().length >= 1 && value.length <= 200) fields.customer = value.trim();
    else if (key === 'amountCents' && Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 2_000_000_000)
      fields.amountCents = value as number;
    else if (key === 'status' && STATUSES.some((s) => s === value)) fields.status = value as InvoiceFields['status'];
    else if (key === 'notes' && typeof value === 'string' && value.length <= 2000) fields.notes = value;
    else problems.push(`invoice.${key} is not valid`);
  }
  if (problems.length) throw new HttpError(422, 'invalid', problems.join('; '));
  // every save is made under a lock: its token is what the fence compares
  if (typeof lockToken !== 'string' || !/^[0-9]{1,20}$/.test(lockToken)) {
    throw new HttpError(428, 'lock_required', 'Take the invoice’s lock before saving: a save carries its lock token.');
  }
  return { invoice: fields, sessionId: sessionId as string, lockToken };
}

const publicUser = (user: HostUser): HostUser => ({ id: user.id, email: user.email, name: user.name, role: user.role });

function cookie(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return null;
}

const isJson = (req: IncomingMessage): boolean => /^application\/json\b/i.test(req.headers['content-type'] ?? '');

async function json(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 64 * 1024) throw new HttpError(413, 'too_large', 'The body is over 64 kB.');
    chunks.push(chunk);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new HttpError(400, 'bad_request', 'The body is not a JSON object.');
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('Cache-Control', 'no-store');
  if (body === null) return void res.end();
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}

async function serveFile(res: ServerResponse, file: string): Promise<void> {
  try {
    const body = await readFile(file);
    res.statusCode = 200;
    res.setHeader('Content-Type', TYPES[extname(file)] ?? 'application/octet-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.end(body);
  } catch {
    send(res, 404, { error: { code: 'not_found', message: `${file} is missing: run npm run build.` } });
  }
}
