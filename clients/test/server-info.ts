export interface ServerInfo {
  backend: 'sqlite' | 'postgres';
  baseUrl: string;
  bin: string;
  /** The server's working directory. */
  dir: string;
  /** The environment baton runs with (database, secret, lifetimes). */
  env: Record<string, string>;
  adminToken: string;
  adminEmail: string;
  /** The example schema it serves (examples/schemas/<name>.toml, or test/invoices.toml); none for the default. */
  schema?: 'kanban' | 'book' | 'api' | 'invoices';
}

declare module 'vitest' {
  export interface ProvidedContext {
    servers: ServerInfo[];
    schemaServers: ServerInfo[];
  }
}
