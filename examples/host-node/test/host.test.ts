/**
 * The example host against a real baton and a real PostgreSQL: people sign
 * in to the host, get baton tokens from it, lock invoices on @baton/client,
 * and save through the host, which asks baton's guard, fences its own
 * UPDATE with the lock's token, and announces the save to every tab.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LockHeldError, type Lock, type Waiter } from '@baton/client';
import type { Invoice } from '../src/server/db.js';
import { Person, closeTabs, invoice, row, startWorld, type World } from './support.js';

/** Holds a save between its guard and its UPDATE, while the test does something else. */
class Gate {
  private waiting = new Map<string, { arrived: () => void; release: Promise<void>; open: () => void }>();
  private arrivals = new Map<string, Promise<void>>();

  /** The next save of `id` stops after its guard; resolves when it got there. */
  hold(id: string): { arrived: Promise<void>; open: () => void } {
    let arrived!: () => void;
    let open!: () => void;
    const release = new Promise<void>((done) => (open = done));
    const reached = new Promise<void>((done) => (arrived = done));
    this.waiting.set(id, { arrived, release, open });
    this.arrivals.set(id, reached);
    return { arrived: reached, open };
  }

  beforeWrite = async (id: string): Promise<void> => {
    const gate = this.waiting.get(id);
    if (!gate) return;
    this.waiting.delete(id);
    gate.arrived();
    await gate.release;
  };
}

const gate = new Gate();
const later = (a: string, b: string) => BigInt(a) > BigInt(b);

describe('the example host beside baton', () => {
  let world: World;
  let alice: Person;
  let bob: Person;
  let carol: Person;

  beforeAll(async () => {
    world = await startWorld({ beforeWrite: gate.beforeWrite });
    alice = await Person.signIn(world.url, 'alice@acme.test', 'alice-pass');
    bob = await Person.signIn(world.url, 'bob@acme.test', 'bob-pass');
    carol = await Person.signIn(world.url, 'carol@acme.test', 'carol-pass');
  });
  afterEach(() => closeTabs());
  afterAll(async () => {
    await world?.stop();
  });

  it('two people edit one invoice: who is editing shows, "Edit anyway" takes it, the stale tab is refused, the holder’s save reaches the other tab', async () => {
    const id = 'inv-2031';
    const a = await alice.tab();
    const b = await bob.tab();
    expect(a.invoice(id)).toMatchObject({ type: 'Invoice', param: id, customer: 'Northwind Traders', version: 1 });

    // Bob starts editing: a lock on (Invoice, inv-2031, acme); Alice's tab sees who
    const bobs: Lock = await b.baton.locks.acquire(invoice(id));
    expect(bobs).toMatchObject({ lockable: { type: 'Invoice', table: 'invoices', param: id }, user: { name: 'Bob Baker' } });
    expect(bobs.token).toMatch(/^[0-9]+$/);
    await vi.waitFor(() => expect(a.baton.locks.info(invoice(id))).toMatchObject({ state: 'locked', holder: { name: 'Bob Baker' } }));
    const refused = await a.baton.locks.acquire(invoice(id)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LockHeldError);
    expect((refused as LockHeldError).holder.name).toBe('Bob Baker');

    // and Alice can't save through the host while Bob holds it: baton's guard says 423
    const blocked = await a.save(id, { customer: 'Alice without the lock' }, bobs.token);
    expect(blocked.status).toBe(423);
    expect(blocked.data).toMatchObject({ error: { code: 'locked', lock: { user: { name: 'Bob Baker' } } } });

    // "Edit anyway": a new grant with a greater fencing token; Bob's tab learns it lost the lock
    const alices = await a.baton.locks.editAnyway(invoice(id));
    expect(later(alices.token, bobs.token)).toBe(true);
    await vi.waitFor(() => expect(b.baton.locks.info(invoice(id))).toMatchObject({ state: 'lost', lostTo: { name: 'Alice Archer' } }));

    // Alice saves: guard 204, the fenced UPDATE keeps her token, the host announces it
    const saved = await a.save<Invoice>(id, { customer: 'Northwind Traders GmbH', amountCents: 130000 });
    expect(saved.status).toBe(200);
    expect(saved.data).toMatchObject({ customer: 'Northwind Traders GmbH', version: 2, batonToken: alices.token, updatedBy: 'Alice Archer' });
    // … and Bob's tab gets it over the edits channel
    await vi.waitFor(() => expect(b.invoice(id)).toMatchObject({ customer: 'Northwind Traders GmbH', amountCents: 130000, version: 2 }));
    expect(b.live.getState().records.Invoice?.map((i) => i.param)).toContain(id);

    // Bob's stale tab saves its draft with the lock it lost: baton refuses while Alice holds it (423) …
    const stale = await b.save(id, { customer: 'Bob’s stale draft' });
    expect(stale.status).toBe(423);
    // … and after she let go, as a lost lock (412)
    await a.baton.locks.release(invoice(id));
    const lost = await b.save(id, { customer: 'Bob’s stale draft' });
    expect(lost.status).toBe(412);
    expect(lost.data).toMatchObject({ error: { code: 'lock_lost', current: null } });
    // nothing was overwritten
    expect(await row(world.db, id)).toEqual({ customer: 'Northwind Traders GmbH', version: 2, baton_token: alices.token });
  });

  it('the fence: a save whose guard passed before a takeover writes nothing once the newer holder saved', async () => {
    const id = 'inv-2032';
    const a = await alice.tab();
    const b = await bob.tab();
    const bobs = await b.baton.locks.acquire(invoice(id));

    // Bob's save passes baton's guard, then stalls before its UPDATE (a slow network, a long GC pause)
    const { arrived, open } = gate.hold(id);
    const slow = b.save(id, { customer: 'Bob, late' });
    await arrived;

    // meanwhile Alice takes over and saves
    const alices = await a.baton.locks.editAnyway(invoice(id));
    const saved = await a.save<Invoice>(id, { customer: 'Globex, by Alice' });
    expect(saved.status).toBe(200);

    // Bob's UPDATE lands now, with his older token: `baton_token <= $t` matches no row
    open();
    const late = await slow;
    expect(late.status).toBe(409);
    expect(late.data).toMatchObject({ error: { code: 'fenced', current: { customer: 'Globex, by Alice', batonToken: alices.token } } });
    expect(await row(world.db, id)).toEqual({ customer: 'Globex, by Alice', version: 2, baton_token: alices.token });

    // the same statement, called straight: the older token writes nothing, the newer one writes
    expect(await world.db.saveInvoice(id, { customer: 'Bob, straight' }, bobs.token, 'u-bob')).toBeNull();
    expect((await row(world.db, id)).customer).toBe('Globex, by Alice');
    expect(await world.db.saveInvoice(id, { notes: 'still Alice' }, alices.token, 'u-alice')).toMatchObject({ version: 3 });
  });

  it('waiting in line: the invoice goes to the next person when the holder saves and lets go', async () => {
    const id = 'inv-2033';
    const a = await alice.tab();
    const b = await bob.tab();
    const alices = await a.baton.locks.acquire(invoice(id));

    const waiter = (await b.baton.locks.wait(invoice(id))) as Waiter;
    expect(waiter).toMatchObject({ type: 'Waiter', position: 1, lockable: { type: 'Invoice', param: id } });
    expect(b.baton.locks.info(invoice(id)).state).toBe('waiting');
    await vi.waitFor(() => expect(a.baton.locks.info(invoice(id)).waiters.map((w) => w.user.name)).toEqual(['Bob Baker']));

    expect((await a.save(id, { status: 'sent' })).status).toBe(200);
    await a.baton.locks.release(invoice(id));

    // handed off in baton's commit: Bob's tab holds it now, with a greater token, and has Alice's save
    await vi.waitFor(() => expect(b.baton.locks.info(invoice(id)).state).toBe('owned'));
    const bobs = b.baton.locks.tokenFor(invoice(id))!;
    expect(later(bobs, alices.token)).toBe(true);
    await vi.waitFor(() => expect(b.invoice(id)).toMatchObject({ status: 'sent', version: 2 }));
    const saved = await b.save<Invoice>(id, { notes: 'Sent on Monday' });
    expect(saved.data).toMatchObject({ status: 'sent', notes: 'Sent on Monday', version: 3, batonToken: bobs });
    await vi.waitFor(() => expect(a.invoice(id)).toMatchObject({ notes: 'Sent on Monday', version: 3 }));
    await b.baton.locks.release(invoice(id));
  });

  it('a reader watches but cannot save; a save without a lock is refused before baton is asked', async () => {
    const c = await carol.tab();
    const a = await alice.tab();
    expect(c.live.getState().role).toBe('reader');
    const refused = await c.save('inv-2034', { customer: 'Carol' }, '1');
    expect(refused.status).toBe(403);
    const unlocked = await a.save('inv-2034', { customer: 'No lock' }, null);
    expect(unlocked.status).toBe(428);
    expect(unlocked.data).toMatchObject({ error: { code: 'lock_required' } });
    const invalid = await a.save('inv-2034', { amountCents: -5 }, '1');
    expect(invalid.status).toBe(422);
    expect((await row(world.db, 'inv-2034')).customer).toBe('Umbrella Health');
  });

  it('a revoked key stops the host minting tokens; tokens it minted before still work', async () => {
    const key = (await world.baton.cli(['key', 'add', '--name', 'second-host'])).trim();
    expect(key).toMatch(/^baton_key_/);
    const second = await world.hostWith(key);
    const bobThere = await Person.signIn(second.url, 'bob@acme.test', 'bob-pass');
    const before = await bobThere.api<{ token: string }>('POST', '/api/baton-token', {});
    expect(before.status).toBe(201);

    await world.baton.cli(['key', 'revoke', 'second-host']);
    const after = await bobThere.api('POST', '/api/baton-token', {});
    expect(after.status).toBe(503);
    expect(after.data).toMatchObject({ error: { code: 'baton_unavailable' } });
    expect(JSON.stringify(after.data)).toMatch(/refused this host's API key/);

    // the token minted before the revocation is still a token (until it expires)
    const me = await fetch(`${world.baton.url}/me`, { headers: { Authorization: `Bearer ${before.data.token}` } });
    expect(me.status).toBe(200);
    // the first host's key is untouched
    expect((await bob.api('POST', '/api/baton-token', {})).status).toBe(201);
  });
});
