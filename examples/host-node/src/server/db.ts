/**
 * The host's own database: its users and its invoices, in a PostgreSQL schema
 * of their own (`host_node` by default), so they never meet baton's tables.
 * baton never sees these rows; it only names an invoice by its id.
 */
import pg from 'pg';
import { hashPassword } from './passwords.js';

export type Role = 'reader' | 'editor' | 'manager';
export const STATUSES = ['draft', 'sent', 'paid'] as const;
export type Status = (typeof STATUSES)[number];

export interface HostUser {
  /** The host's id for the person; baton knows it as `externalId`. */
  id: string;
  email: string;
  name: string;
  /** The person's role in the company's invoices; baton gets it as their role in the case. */
  role: Role;
}

interface UserRow extends HostUser {
  password_hash: string;
}

/**
 * An invoice as the host serves it and as its frames carry it: baton's
 * identity keys (`type`, `table`, `param`) so a page on `@baton/client` keys
 * it as `Invoice/inv-2031`, then the host's own fields.
 */
export interface Invoice {
  type: 'Invoice';
  table: 'invoices';
  param: string;
  id: string;
  customer: string;
  amountCents: number;
  status: Status;
  notes: string;
  version: number;
  /** The fencing token of the lock the last save was made under ("0" before any). */
  batonToken: string;
  updatedBy: string | null;
  updatedAt: string;
}

export type InvoiceFields = Partial<Pick<Invoice, 'customer' | 'amountCents' | 'status' | 'notes'>>;

interface InvoiceRow {
  id: string;
  customer: string;
  amount_cents: number;
  status: Status;
  notes: string;
  version: number;
  baton_token: string;
  updated_by_name: string | null;
  updated_at: Date;
}

const invoiceOf = (row: InvoiceRow): Invoice => ({
  type: 'Invoice',
  table: 'invoices',
  param: row.id,
  id: row.id,
  customer: row.customer,
  amountCents: row.amount_cents,
  status: row.status,
  notes: row.notes,
  version: row.version,
  batonToken: row.baton_token,
  updatedBy: row.updated_by_name,
  updatedAt: row.updated_at.toISOString(),
});

const SELECT_INVOICE = `
  SELECT i.id, i.customer, i.amount_cents, i.status, i.notes, i.version, i.baton_token,
         u.name AS updated_by_name, i.updated_at
    FROM invoices i LEFT JOIN users u ON u.id = i.updated_by`;

/** The people and invoices a fresh database starts with. */
export const DEMO_USERS: (HostUser & { password: string })[] = [
  { id: 'u-alice', email: 'alice@acme.test', name: 'Alice Archer', role: 'manager', password: 'alice-pass' },
  { id: 'u-bob', email: 'bob@acme.test', name: 'Bob Baker', role: 'editor', password: 'bob-pass' },
  { id: 'u-carol', email: 'carol@acme.test', name: 'Carol Cole', role: 'reader', password: 'carol-pass' },
];

const DEMO_INVOICES: [string, string, number, Status][] = [
  ['inv-2031', 'Northwind Traders', 125000, 'draft'],
  ['inv-2032', 'Globex Corporation', 98050, 'sent'],
  ['inv-2033', 'Initech', 420000, 'draft'],
  ['inv-2034', 'Umbrella Health', 31000, 'paid'],
];

export class HostDb {
  private constructor(
    readonly pool: pg.Pool,
    readonly schema: string,
  ) {}

  /** Connects with every connection's search path on `schema`, and creates the tables there if absent. */
  static async open(url: string, schema: string): Promise<HostDb> {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`not a schema name: ${schema}`);
    const pool = new pg.Pool({ connectionString: url, max: 10, options: `-c search_path=${schema}` });
    const db = new HostDb(pool, schema);
    await db.migrate();
    return db;
  }

  private async migrate(): Promise<void> {
    await this.pool.query(`
      CREATE SCHEMA IF NOT EXISTS ${this.schema};
      CREATE TABLE IF NOT EXISTS users (
        id            text PRIMARY KEY,
        email         text NOT NULL UNIQUE,
        name          text NOT NULL,
        role          text NOT NULL CHECK (role IN ('reader', 'editor', 'manager')),
        password_hash text NOT NULL
      );
      CREATE TABLE IF NOT EXISTS invoices (
        id           text PRIMARY KEY,
        customer     text NOT NULL,
        amount_cents integer NOT NULL CHECK (amount_cents >= 0),
        status       text NOT NULL CHECK (status IN ('draft', 'sent', 'paid')),
        notes        text NOT NULL DEFAULT '',
        version      integer NOT NULL DEFAULT 1,
        -- the fencing token of the baton lock the last save was made under
        baton_token  bigint NOT NULL DEFAULT 0,
        updated_by   text REFERENCES users (id),
        updated_at   timestamptz NOT NULL DEFAULT now()
      );`);
  }

  /** Adds the demo people and invoices that are not there yet. */
  async seed(): Promise<void> {
    for (const { id, email, name, role, password } of DEMO_USERS) {
      const known = await this.pool.query('SELECT 1 FROM users WHERE id = $1', [id]);
      if (known.rowCount) continue;
      await this.pool.query(
        'INSERT INTO users (id, email, name, role, password_hash) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING',
        [id, email, name, role, await hashPassword(password)],
      );
    }
    for (const [id, customer, amount, status] of DEMO_INVOICES) {
      await this.pool.query(
        'INSERT INTO invoices (id, customer, amount_cents, status) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
        [id, customer, amount, status],
      );
    }
  }

  async userByEmail(email: string): Promise<UserRow | null> {
    const { rows } = await this.pool.query<UserRow>('SELECT id, email, name, role, password_hash FROM users WHERE email = $1', [
      email.trim().toLowerCase(),
    ]);
    return rows[0] ?? null;
  }

  async user(id: string): Promise<HostUser | null> {
    const { rows } = await this.pool.query<HostUser>('SELECT id, email, name, role FROM users WHERE id = $1', [id]);
    return rows[0] ?? null;
  }

  async invoices(): Promise<Invoice[]> {
    const { rows } = await this.pool.query<InvoiceRow>(`${SELECT_INVOICE} ORDER BY i.id`);
    return rows.map(invoiceOf);
  }

  async invoice(id: string): Promise<Invoice | null> {
    const { rows } = await this.pool.query<InvoiceRow>(`${SELECT_INVOICE} WHERE i.id = $1`, [id]);
    const row = rows[0];
    return row ? invoiceOf(row) : null;
  }

  /**
   * The fenced write: one statement that saves only if no save under a later
   * lock came first (`baton_token <= $token`), and keeps the token on the
   * row. Null when it wrote nothing: the invoice is gone, or a newer grant
   * already wrote (`fenced`); the caller tells which.
   */
  async saveInvoice(id: string, fields: InvoiceFields, token: string, userId: string): Promise<Invoice | null> {
    const { rows } = await this.pool.query<InvoiceRow>(
      `WITH saved AS (
         UPDATE invoices
            SET customer     = COALESCE($3, customer),
                amount_cents = COALESCE($4, amount_cents),
                status       = COALESCE($5, status),
                notes        = COALESCE($6, notes),
                version      = version + 1,
                baton_token  = $2,
                updated_by   = $7,
                updated_at   = now()
          WHERE id = $1 AND baton_token <= $2
          RETURNING *)
       SELECT s.id, s.customer, s.amount_cents, s.status, s.notes, s.version, s.baton_token,
              u.name AS updated_by_name, s.updated_at
         FROM saved s LEFT JOIN users u ON u.id = s.updated_by`,
      [id, token, fields.customer ?? null, fields.amountCents ?? null, fields.status ?? null, fields.notes ?? null, userId],
    );
    const row = rows[0];
    return row ? invoiceOf(row) : null;
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
