/**
 * The host's page, in plain TypeScript on @baton/client: the invoices (from
 * the host), who is editing each (from baton), a lock taken on "Edit",
 * "Edit anyway", waiting in line, and other tabs' saves as they happen
 * (the host announces them; baton relays them to this tab).
 */
import { BatonClient, BatonError, LockHeldError, type LiveCase, type LockInfo, type TargetRef } from '@baton/client';

type Role = 'reader' | 'editor' | 'manager';
interface HostUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}
type Status = 'draft' | 'sent' | 'paid';
interface Invoice {
  type: 'Invoice';
  table: 'invoices';
  param: string;
  id: string;
  customer: string;
  amountCents: number;
  status: Status;
  notes: string;
  version: number;
  batonToken: string;
  updatedBy: string | null;
  updatedAt: string;
}
interface Minted {
  token: string;
  expiresAt: string;
  batonUrl: string;
  case: string;
  type: string;
}

/** The host's own API answered with an error: `{error: {code, message}}`. */
class HostError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function host<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const data: unknown = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const error = (data as { error?: { code: string; message: string } } | null)?.error;
    throw new HostError(response.status, error?.code ?? 'error', error?.message ?? `The host answered ${response.status}.`);
  }
  return data as T;
}

/** Builds an element: `el('button', {type: 'button'}, 'Save')`. */
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false) continue;
    node.setAttribute(key, value === true ? '' : value);
  }
  node.append(...children);
  return node;
}

const app = document.getElementById('app')!;
const who = document.getElementById('who')!;
const money = new Intl.NumberFormat('en', { style: 'currency', currency: 'EUR' });
const time = (iso: string) => new Date(iso).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

function showSignIn(problem = ''): void {
  who.replaceChildren();
  const email = el('input', { name: 'email', type: 'email', autocomplete: 'username', required: true });
  const password = el('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const notice = el('p', { role: 'alert' }, problem);
  const form = el(
    'form',
    { class: 'signin' },
    el('h2', {}, 'Sign in'),
    el('label', {}, 'Email', email),
    el('label', {}, 'Password', password),
    el('button', { type: 'submit' }, 'Sign in'),
    notice,
    el('p', {}, 'Demo people: alice@acme.test / alice-pass (manager), bob@acme.test / bob-pass (editor), carol@acme.test / carol-pass (reader).'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    host<{ user: HostUser }>('POST', '/api/login', { email: email.value, password: password.value })
      .then(({ user }) => showInvoices(user))
      .catch((error: unknown) => (notice.textContent = error instanceof Error ? error.message : String(error)));
  });
  app.replaceChildren(form);
}

/** The page once signed in: one baton client for this tab, the host's case open on it. */
async function showInvoices(me: HostUser): Promise<void> {
  const minted = await host<Minted>('POST', '/api/baton-token', {});
  const baton = new BatonClient({ baseUrl: minted.batonUrl, token: minted.token, case: minted.case });
  const { live } = baton.openCase(minted.case);
  const page = new InvoicesPage(me, baton, live, minted.type);
  await page.start();
}

class InvoicesPage {
  private readonly table = el('tbody');
  private readonly online = el('span', { class: 'online' });
  private readonly notice = el('p', { id: 'notice', role: 'status', hidden: true });
  private editor: Editor | null = null;
  private lastStatus = '';

  constructor(
    readonly me: HostUser,
    readonly baton: BatonClient,
    readonly live: LiveCase,
    readonly type: string,
  ) {}

  ref(id: string): TargetRef {
    return { type: this.type, param: id };
  }

  get canEdit(): boolean {
    return this.me.role !== 'reader';
  }

  async start(): Promise<void> {
    const signOut = el('button', { type: 'button' }, 'Sign out');
    signOut.addEventListener('click', () => {
      this.baton.dispose();
      void host('POST', '/api/logout', {}).finally(() => showSignIn());
    });
    who.replaceChildren(this.online, ` ${this.me.name} (${this.me.role}) `, signOut);
    app.replaceChildren(
      this.notice,
      el(
        'table',
        {},
        el('thead', {}, el('tr', {}, ...['Invoice', 'Customer', 'Amount', 'Status', 'Editing', ''].map((h) => el('th', {}, h)))),
        this.table,
      ),
    );
    this.live.subscribe(() => this.changed());
    this.baton.locks.subscribe(() => this.render());
    this.baton.onAuthError(() => this.say('Your baton session ended: reload the page to sign in again.', 'error'));
    await this.live.ready();
    await this.load();
  }

  /** The host's invoices into the case's store, where the host's announcements keep them current. */
  async load(): Promise<void> {
    const { invoices } = await host<{ invoices: Invoice[] }>('GET', '/api/invoices');
    for (const invoice of invoices) this.live.store.upsert(invoice);
  }

  private changed(): void {
    const { status } = this.live.getState();
    // back after a disconnection: frames sent meanwhile are gone, so ask the host again
    if (status === 'live' && this.lastStatus === 'reconnecting') void this.load();
    this.lastStatus = status;
    this.render();
  }

  invoices(): Invoice[] {
    // sound: the store's Invoice records are the host's invoices (its list and its announcements)
    return (this.live.getState().records[this.type] ?? []) as unknown as Invoice[];
  }

  invoice(id: string): Invoice | undefined {
    return this.invoices().find((i) => i.id === id);
  }

  say(message: string, kind: 'info' | 'error' = 'info'): void {
    this.notice.textContent = message;
    this.notice.hidden = !message;
    this.notice.className = `status ${kind === 'error' ? 'error' : ''}`;
  }

  render(): void {
    const state = this.live.getState();
    this.online.replaceChildren(
      'Online:',
      ...state.onlineUsers.map((o) => el('span', { style: `background:${o.color}`, title: o.user.name }, o.user.name)),
    );
    this.table.replaceChildren(...this.invoices().map((invoice) => this.row(invoice)));
    this.editor?.update();
  }

  private row(invoice: Invoice): HTMLTableRowElement {
    const info = this.baton.locks.info(this.ref(invoice.id));
    const waiting = info.waiters.length ? ` · ${info.waiters.length} waiting` : '';
    let badge: HTMLElement | string = '';
    if (info.state === 'owned') badge = el('span', { class: 'badge owned' }, `You are editing${waiting}`);
    else if (info.holder) badge = el('span', { class: 'badge' }, `${info.holder.name} is editing${waiting}`);
    const edit = el('button', { type: 'button' }, 'Edit');
    edit.addEventListener('click', () => void this.edit(invoice.id));
    return el(
      'tr',
      { 'data-invoice': invoice.id },
      el('td', {}, invoice.id),
      el('td', { class: 'customer' }, invoice.customer),
      el('td', { class: 'amount' }, money.format(invoice.amountCents / 100)),
      el('td', { class: 'state' }, invoice.status),
      el('td', { class: 'editing' }, badge),
      el('td', {}, this.canEdit && this.editor?.id !== invoice.id ? edit : ''),
    );
  }

  /** "Edit": takes the invoice's lock; someone else's lock opens the editor read-only, with "Edit anyway" and "Wait in line". */
  async edit(id: string): Promise<void> {
    if (this.editor && this.editor.id !== id) await this.editor.close();
    this.editor ??= new Editor(this, id);
    this.say('');
    try {
      await this.baton.locks.acquire(this.ref(id));
    } catch (error) {
      if (!(error instanceof LockHeldError)) this.editor?.problem(error);
    }
    this.render();
  }

  closed(editor: Editor): void {
    if (this.editor === editor) this.editor = null;
    this.render();
  }
}

/** The editor of one invoice: its form, and what the tab's lock on it allows. */
class Editor {
  private readonly section: HTMLElement;
  private readonly status = el('p', { class: 'status lock-status', role: 'status' });
  private readonly problemLine = el('p', { class: 'status error problem', role: 'alert', hidden: true });
  private readonly customer = el('input', { name: 'customer', maxlength: '200' });
  private readonly amount = el('input', { name: 'amount', type: 'number', step: '0.01', min: '0' });
  private readonly state = el('select', { name: 'status' }, ...['draft', 'sent', 'paid'].map((s) => el('option', { value: s }, s)));
  private readonly notes = el('textarea', { name: 'notes', rows: '3', maxlength: '2000' });
  private readonly buttons = el('div', { class: 'buttons' });
  /** The lock state the form was last laid out for. */
  private shown: LockInfo['state'] | null = null;
  private shownVersion = 0;

  constructor(
    private readonly page: InvoicesPage,
    readonly id: string,
  ) {
    this.section = el(
      'section',
      { id: 'editor', 'aria-label': `Invoice ${id}` },
      el('h2', {}, `Invoice ${id}`),
      this.status,
      el('label', {}, 'Customer', this.customer),
      el('label', {}, 'Amount (EUR)', this.amount),
      el('label', {}, 'Status', this.state),
      el('label', {}, 'Notes', this.notes),
      this.buttons,
      this.problemLine,
    );
    app.append(this.section);
    this.fill();
  }

  private get ref(): TargetRef {
    return this.page.ref(this.id);
  }

  /** The form shows the invoice as saved now. */
  private fill(): void {
    const invoice = this.page.invoice(this.id);
    if (!invoice) return;
    this.customer.value = invoice.customer;
    this.amount.value = (invoice.amountCents / 100).toFixed(2);
    this.state.value = invoice.status;
    this.notes.value = invoice.notes;
    this.shownVersion = invoice.version;
  }

  problem(error: unknown): void {
    this.problemLine.hidden = false;
    this.problemLine.textContent = error instanceof Error ? error.message : String(error);
  }

  private button(label: string, action: () => Promise<unknown>): HTMLButtonElement {
    const button = el('button', { type: 'button' }, label);
    button.addEventListener('click', () => {
      this.problemLine.hidden = true;
      action().catch((error: unknown) => this.problem(error));
    });
    return button;
  }

  /** Lays the editor out for the tab's lock on the invoice. */
  update(): void {
    const { locks } = this.page.baton;
    const info = locks.info(this.ref);
    const invoice = this.page.invoice(this.id);
    const mine = info.state === 'owned';
    // someone else's saves show while the form is not this tab's to edit; a lost lock keeps the draft
    if (invoice && invoice.version !== this.shownVersion && (info.state === 'locked' || info.state === 'waiting' || info.state === 'unlocked')) this.fill();
    if (mine && this.shown !== 'owned' && this.shown !== null) this.fill();
    for (const input of [this.customer, this.amount, this.state, this.notes]) input.disabled = !(mine || info.state === 'lost');
    const holder = info.holder?.name ?? 'Someone';
    const since = info.lock ? ` since ${time(info.lock.createdAt)}` : '';
    const layout = `${info.state}/${info.position ?? ''}/${info.holder?.id ?? ''}`;
    if (this.status.dataset.layout === layout) return;
    this.status.dataset.layout = layout;
    this.shown = info.state;
    this.status.classList.toggle('warn', info.state === 'locked' || info.state === 'waiting');
    this.status.classList.toggle('error', info.state === 'lost');
    const save = this.button('Save', () => this.save());
    const close = this.button('Close', () => this.close());
    const anyway = this.button('Edit anyway', () => locks.editAnyway(this.ref));
    const wait = this.button('Wait in line', () => locks.wait(this.ref));
    const leave = this.button('Leave the line', () => locks.leave(this.ref));
    const take = this.button('Edit', () => locks.acquire(this.ref));
    switch (info.state) {
      case 'owned':
        this.status.textContent = 'You are editing this invoice; others see that you are.';
        this.buttons.replaceChildren(save, close);
        break;
      case 'locked':
        this.status.textContent = `${holder} is editing this invoice${since}.`;
        this.buttons.replaceChildren(anyway, wait, close);
        break;
      case 'waiting':
        this.status.textContent = `You are number ${info.position ?? '?'} in line; the invoice comes to you when ${holder} is done.`;
        this.buttons.replaceChildren(leave, anyway, close);
        break;
      case 'lost':
        this.status.textContent =
          info.lostTo !== null
            ? `${info.lostTo.name} took over this invoice. Your draft is still here, but it will not be saved over their work.`
            : `Your lock on this invoice ended (${info.lostReason ?? 'expired'}). Your draft is still here.`;
        this.buttons.replaceChildren(save, anyway, close);
        break;
      case 'unlocked':
        this.status.textContent = 'Nobody is editing this invoice.';
        this.buttons.replaceChildren(take, close);
        break;
    }
  }

  /** Saves through the host (which asks baton's guard and fences its UPDATE), then lets the invoice go. */
  private async save(): Promise<void> {
    const { baton, live } = this.page;
    const fields = {
      customer: this.customer.value,
      amountCents: Math.round(Number(this.amount.value) * 100),
      status: this.state.value,
      notes: this.notes.value,
    };
    try {
      const saved = await host<Invoice>('PATCH', `/api/invoices/${encodeURIComponent(this.id)}`, {
        invoice: fields,
        sessionId: baton.sessionId,
        lockToken: baton.locks.tokenFor(this.ref),
      });
      // this tab's own announcement is not echoed back to it
      live.store.upsert(saved);
      await this.close();
      this.page.say(`Saved invoice ${this.id}.`);
    } catch (error) {
      if (error instanceof HostError) throw new Error(`Not saved: ${error.message}`);
      throw error;
    }
  }

  async close(): Promise<void> {
    const { locks } = this.page.baton;
    const info = locks.info(this.ref);
    this.section.remove();
    this.page.closed(this);
    if (info.state === 'owned') await locks.release(this.ref);
    else if (info.state === 'waiting') await locks.leave(this.ref);
    else locks.dismiss(this.ref);
  }
}

host<{ user: HostUser }>('GET', '/api/me')
  .then(({ user }) => showInvoices(user))
  .catch((error: unknown) => {
    if (error instanceof HostError && error.status === 401) return showSignIn();
    app.replaceChildren(el('p', { class: 'status error' }, error instanceof BatonError || error instanceof Error ? error.message : String(error)));
  });
