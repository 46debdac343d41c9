/**
 * Records of an external type (`store = "external"`, test/invoices.toml):
 * they live in a host's database and baton only names them, by type, case
 * and param. The kit's lock requests on them carry the case; the records a
 * host relays (`POST /cases/:slug/events` with its API key) go into the
 * store, keyed `Invoice/<param>`. On both databases.
 */
import { describe, expect, it, vi } from 'vitest';
import { LockHeldError, type AnyRecord, type ChangeFrame, type TargetRef, type User, type Waiter } from '../src/index.js';
import { cli, rest, schemaServers, tabsDisposedAfterEach, unique, type Person, type ServerInfo } from '../../test/support.js';

type Invoice = AnyRecord & { customer: string };

/** A host: its API key, and people it signs in with baton tokens it minted for its case. */
function host(server: ServerInfo): { slug: string; key: string; mint: (name: string) => Promise<Person> } {
  const key = cli(server, ['key', 'add', '--name', unique('kit')]).trim();
  const slug = unique('acme');
  const mint = async (name: string): Promise<Person> => {
    const { status, data } = await rest<{ token: string; user: User }>(server, key, 'POST', '/auth/tokens', {
      user: { externalId: unique(name.toLowerCase()), name },
      cases: [{ slug, role: 'editor' }],
    });
    if (status !== 201) throw new Error(`POST /auth/tokens: ${status} ${JSON.stringify(data)}`);
    return { user: data.user, email: '', password: '', token: data.token };
  };
  return { slug, key, mint };
}

const invoice = (param: string): TargetRef => ({ type: 'Invoice', param });
const later = (a: string, b: string) => BigInt(a) > BigInt(b);

describe.each(schemaServers('invoices'))('records of an external type on $backend', (server) => {
  const tab = tabsDisposedAfterEach();

  it('locks them with the case: 409, status, waiting and hand-off, "Edit anyway", sets and claims, tokens that grow', async () => {
    const { slug, mint } = host(server);
    const alice = await mint('Alice');
    const bob = await mint('Bob');
    const a = tab(server, alice);
    const b = tab(server, bob);
    expect((await a.schema()).type('Invoice')).toMatchObject({ store: 'external', plural: 'invoices', table: 'invoices', parent: 'Case' });
    const ca = a.openCase(slug);
    const cb = b.openCase(slug);
    await Promise.all([ca.live.ready(), cb.live.ready()]);

    // the open case is the client's case: the request carries it as `case`
    const inv = invoice('inv-2031');
    const first = await a.locks.acquire(inv);
    expect(first).toMatchObject({ lockable: { type: 'Invoice', table: 'invoices', param: 'inv-2031' }, depth: '0', user: { id: alice.user.id } });
    await vi.waitFor(() => expect(cb.live.getState().lockOn['Invoice/inv-2031']?.token).toBe(first.token));
    expect(b.locks.info(inv)).toMatchObject({ state: 'locked', holder: { id: alice.user.id } });
    const refused = await b.locks.acquire(inv).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockHeldError);
    expect(await b.api.lockStatus(inv)).toMatchObject({ state: 'locked', lock: { token: first.token } });
    expect(await a.api.lockStatus(inv)).toMatchObject({ state: 'owned' });

    // waiting: the release hands the invoice to Bob, under a greater token
    const waiter = (await b.locks.wait(inv)) as Waiter;
    expect(waiter).toMatchObject({ type: 'Waiter', position: 1, lockable: { type: 'Invoice', param: 'inv-2031' } });
    await a.locks.release(inv);
    await vi.waitFor(() => expect(b.locks.info(inv).state).toBe('owned'));
    const handed = b.locks.tokenFor(inv)!;
    expect(later(handed, first.token)).toBe(true);

    // "Edit anyway": greater again, and Bob's tab learns who took it
    const taken = await a.locks.editAnyway(inv);
    expect(later(taken.token, handed)).toBe(true);
    await vi.waitFor(() => expect(b.locks.info(inv)).toMatchObject({ state: 'lost', lostTo: { id: alice.user.id } }));

    // a set, all or nothing, and a claim of the first free one
    const set = await b.locks.lockMany([invoice('inv-1'), invoice('inv-2')]);
    expect(set.map((l) => l.lockable.param)).toEqual(['inv-1', 'inv-2']);
    const claimed = await a.locks.claim([invoice('inv-1'), invoice('inv-2'), invoice('inv-3')]);
    expect(claimed.lockable.param).toBe('inv-3');

    // a client with no case open says its case by the `case` option; a record's own `case` wins
    const c = tab(server, alice, undefined, { case: slug });
    const other = await c.locks.acquire(invoice('inv-9'));
    expect(other.caseId).toBe(first.caseId);
    const elsewhere = await mint('Carol');
    const d = tab(server, elsewhere, undefined, { case: 'no-such-case' });
    const held = await d.locks.acquire({ ...invoice('inv-9'), case: slug }).catch((e: unknown) => e);
    expect(held).toBeInstanceOf(LockHeldError);
  });

  it('keeps the records the host relays, keyed by type and param, through a refetch; the editing tab drops its echo', async () => {
    const { slug, key, mint } = host(server);
    const alice = await mint('Alice');
    const bob = await mint('Bob');
    const a = tab(server, alice);
    const b = tab(server, bob);
    const ca = a.openCase(slug);
    const cb = b.openCase(slug);
    const [, state] = await Promise.all([ca.live.ready(), cb.live.ready()]);
    const seen: ChangeFrame[] = [];
    ca.live.onChange((frame) => seen.push(frame));
    const relay = async (type: 'create' | 'update' | 'destroy', watchable: object) => {
      const { status } = await rest(server, key, 'POST', `/cases/${slug}/events`, { type, watchable, editorSessionId: a.sessionId });
      expect(status).toBe(202);
    };

    const saved = { type: 'Invoice', table: 'invoices', param: 'inv-7', customer: 'Initech', version: 1 };
    await relay('create', saved);
    await vi.waitFor(() => expect(cb.live.getState().records.Invoice).toEqual([saved]));
    expect(cb.live.store.get('Invoice/inv-7')).toEqual(saved);
    expect(cb.live.getState().children[`Case/${state.case!.id}`]?.Invoice).toEqual([saved]);

    await relay('update', { ...saved, customer: 'Initech GmbH', version: 2 });
    await vi.waitFor(() => expect(cb.live.store.get<Invoice>('Invoice/inv-7')?.customer).toBe('Initech GmbH'));
    // an older version relayed late does not undo a newer one
    await relay('update', { ...saved, customer: 'stale', version: 1 });
    await relay('update', { ...saved, customer: 'Initech AG', version: 3 });
    await vi.waitFor(() => expect(cb.live.store.get<Invoice>('Invoice/inv-7')?.customer).toBe('Initech AG'));
    // baton's own snapshot has no host records: a refetch keeps them
    await cb.live.refetch();
    expect(cb.live.store.get<Invoice>('Invoice/inv-7')?.customer).toBe('Initech AG');

    await relay('destroy', { type: 'Invoice', table: 'invoices', param: 'inv-7' });
    await vi.waitFor(() => expect(cb.live.getState().records.Invoice ?? []).toEqual([]));
    // Alice's tab made these edits (`editorSessionId`): it heard none of them
    expect(seen).toEqual([]);
    expect(ca.live.store.get('Invoice/inv-7')).toBeUndefined();
  });
});
