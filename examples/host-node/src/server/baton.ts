/**
 * The three calls a host makes to baton with its API key: mint a token for a
 * signed-in person, ask the guard before a save, and announce a save to the
 * case's tabs after it committed.
 */
import type { HostUser } from './db.js';

export interface BatonOptions {
  /** baton's address, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** A key from `baton key add --name NAME`. */
  apiKey: string;
  /** The case the host's invoices are in, and its title when baton creates it. */
  caseSlug: string;
  caseTitle: string;
  /** The lockable type the schema file declares with `store = "external"`. */
  type: string;
}

/** baton's error body: `{error: {code, message, …}}`. */
export interface BatonErrorBody {
  error: { code: string; message: string; [key: string]: unknown };
}

/** baton did not answer, or refused the host's key: the host cannot mint or guard until it does. */
export class BatonUnavailable extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

export interface Minted {
  token: string;
  expiresAt: string;
}

/** The guard's answer: the save may go on, or baton's refusal to pass to the page as it is. */
export type GuardAnswer = { ok: true } | { ok: false; status: 423 | 412 | 403 | 404 | 422; body: BatonErrorBody };

export class Baton {
  constructor(readonly options: BatonOptions) {}

  get url(): string {
    return this.options.url.replace(/\/+$/, '');
  }

  private async post(path: string, body: unknown): Promise<{ status: number; data: unknown }> {
    let response: Response;
    try {
      response = await fetch(this.url + path, {
        method: 'POST',
        headers: { Authorization: `Bearer ${this.options.apiKey}`, 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (cause) {
      throw new BatonUnavailable(`baton at ${this.url} did not answer (${String(cause)})`, null);
    }
    const text = await response.text();
    let data: unknown = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = text;
    }
    if (response.status === 401) {
      throw new BatonUnavailable(`baton refused this host's API key: ${messageOf(data) ?? 'unauthorized'}`, 401);
    }
    return { status: response.status, data };
  }

  /**
   * `POST /auth/tokens`: a baton token for a signed-in person, who baton
   * knows by the host's id for them (`externalId`), with their role in the
   * host's case (created the first time).
   */
  async mint(user: HostUser, ttl?: string): Promise<Minted> {
    const { status, data } = await this.post('/auth/tokens', {
      user: { externalId: user.id, name: user.name, email: user.email },
      cases: [{ slug: this.options.caseSlug, role: user.role, title: this.options.caseTitle }],
      ...(ttl ? { ttl } : {}),
    });
    if (status !== 201) throw new BatonUnavailable(`baton did not mint a token (${status}): ${messageOf(data) ?? ''}`, status);
    return data as Minted;
  }

  /**
   * `POST /guard`: may this person, in this tab, write this invoice now?
   * 204 yes (and the holder's lock activity is renewed); 423 someone else
   * holds it; 412 `lock_lost` the tab's lock ended; 403 not an editor.
   */
  async guard(invoiceId: string, user: HostUser, sessionId: string | null, lockToken: string | null): Promise<GuardAnswer> {
    const { status, data } = await this.post('/guard', {
      lockableType: this.options.type,
      lockableParam: invoiceId,
      case: this.options.caseSlug,
      userExternalId: user.id,
      ...(sessionId ? { sessionId } : {}),
      ...(lockToken ? { lockToken } : {}),
    });
    if (status === 204) return { ok: true };
    if (status === 423 || status === 412 || status === 403 || status === 404 || status === 422) {
      return { ok: false, status, body: data as BatonErrorBody };
    }
    throw new BatonUnavailable(`baton's guard answered ${status}: ${messageOf(data) ?? ''}`, status);
  }

  /**
   * `POST /cases/:slug/events`: tells every tab of the case about a write
   * that committed here. The tab that made it (`editorSessionId`) drops its
   * own echo.
   */
  async announce(type: 'create' | 'update' | 'destroy', watchable: { type: string; param: string }, editorSessionId: string | null): Promise<void> {
    const { status, data } = await this.post(`/cases/${encodeURIComponent(this.options.caseSlug)}/events`, {
      type,
      watchable,
      ...(editorSessionId ? { editorSessionId } : {}),
    });
    if (status !== 202) throw new BatonUnavailable(`baton did not take the event (${status}): ${messageOf(data) ?? ''}`, status);
  }
}

function messageOf(data: unknown): string | null {
  if (data && typeof data === 'object' && 'error' in data) {
    const error = (data as BatonErrorBody).error;
    return `${error.code}: ${error.message}`;
  }
  return null;
}
