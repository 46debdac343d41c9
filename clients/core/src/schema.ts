import type { DeclaredType, SchemaDocument } from './types.js';

/** What the kit reads of a record to place it: its type, case and fields. */
type Placed = { type: string; caseId?: unknown } & { [field: string]: unknown };

/**
 * The record types in force, from `GET /schema`: their parents, plurals,
 * fields and lock policies. Everything the kit knows about a type it learns
 * here; it names none itself.
 */
export class Schema {
  readonly types: DeclaredType[];
  private readonly byName = new Map<string, DeclaredType>();

  constructor(doc: SchemaDocument) {
    this.types = doc.types;
    for (const type of doc.types) this.byName.set(type.name, type);
  }

  /** A declared type by name; undefined for `Case` and unknown names. */
  type(name: string): DeclaredType | undefined {
    return this.byName.get(name);
  }

  /** The types whose parent is `name` (`Case` for the case's own), in declaration order. */
  childrenOf(name: string): DeclaredType[] {
    return this.types.filter((t) => t.parent === name);
  }

  /**
   * The key a request body nests a record of `name` under, as the server
   * says (`APIEndpoint` → `apiEndpoint`); undefined for an unknown type.
   */
  bodyKey(name: string): string | undefined {
    return this.byName.get(name)?.bodyKey;
  }

  /** The key `GET /cases/:slug` (and each parent record) nests records of `name` under (`apiEndpoints`). */
  nestKey(name: string): string | undefined {
    return this.byName.get(name)?.nestKey;
  }

  /** The key a record names its parent by, as the server says: `projectId`; null for a type under the case (or unknown). */
  parentKey(name: string): string | null {
    const type = this.byName.get(name);
    return type && type.parent !== 'Case' ? type.parentKey : null;
  }

  /** The key (`Project/3`, `Case/1`) of a record's parent; null for a case or an unknown type. */
  parentOf(record: Placed): string | null {
    const type = this.byName.get(record.type);
    if (!type) return null;
    const field = this.parentKey(type.name);
    const id = field ? record[field] : record.caseId;
    return typeof id === 'number' || typeof id === 'string' ? `${field ? type.parent : 'Case'}/${id}` : null;
  }

  /**
   * The keys of a record's containers (baton's word for the records it is
   * inside, whose deep locks cover it), nearest first, up to its case.
   * `get` looks records up by key.
   */
  containerKeys(record: Placed, get: (key: string) => Placed | undefined): string[] {
    const keys: string[] = [];
    if (!this.byName.has(record.type)) return keys;
    let at: Placed | undefined = record;
    while (at) {
      const up = this.parentOf(at);
      if (!up || keys.includes(up)) break;
      keys.push(up);
      at = get(up);
    }
    const caseKey = typeof record.caseId === 'number' ? `Case/${record.caseId}` : null;
    if (caseKey && !keys.includes(caseKey)) keys.push(caseKey);
    return keys;
  }
}
