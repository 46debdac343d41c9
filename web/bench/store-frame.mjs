#!/usr/bin/env node
/**
 * The store's per-frame cost: a case of BENCH_RECORDS records (default
 * 10,000: BENCH_PAGES pages, the rest cards spread over them) loaded into
 * the kit's CaseStore, then frames applied one at a time, each followed by
 * the view an app renders from (`getView()`), as a live case does. Prints
 * the median and mean time per frame, by kind of frame: an edit to one card,
 * a lock taken on one, a card added, moved to another page, and deleted.
 * No server and no browser: the store alone, in Node.
 *
 *   node bench/store-frame.mjs                    # the kit this app builds with (../clients/core/dist)
 *   BENCH_KIT=/path/to/core/dist/index.js node bench/store-frame.mjs   # another build of the kit, to compare
 *
 * A measurement, not a test: it asserts nothing about speed.
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 10_000);
const PAGES = Number(process.env.BENCH_PAGES ?? 20);
const FRAMES = Number(process.env.BENCH_FRAMES ?? 400);
const kit = process.env.BENCH_KIT ? pathToFileURL(resolve(process.env.BENCH_KIT)).href : '@baton/client';
const { CaseStore, Schema } = await import(kit);

const at = '2026-01-01T00:00:00Z';
const rules = { lease: null, takeover: 'editor', wait: true };
const declared = (name, plural, parent) => ({
  name,
  plural,
  table: plural,
  parent,
  store: 'baton',
  ordered: true,
  movable: name === 'Card',
  label: null,
  bodyKey: name.toLowerCase(),
  parentKey: parent === 'Case' ? 'caseId' : `${parent.toLowerCase()}Id`,
  nestKey: plural,
  fields: {},
  required: [],
  unique: [],
  lock: rules,
});
const schema = new Schema({ types: [declared('Page', 'pages', 'Case'), declared('Card', 'cards', 'Page')] });
const user = { type: 'User', table: 'users', param: '2', id: 2, name: 'Bob', color: '#3cb44b', kind: 'person' };

const page = (id) => ({ type: 'Page', table: 'pages', param: String(id), id, caseId: 1, position: id, title: `Chapter ${id}`, version: 1, createdAt: at, updatedAt: at });
const card = (id, pageId, version = 1, position = id) => ({
  type: 'Card',
  table: 'cards',
  param: String(id),
  id,
  caseId: 1,
  pageId,
  position,
  content: `Card ${id}: a note of a sentence or two, as a case's cards are. (v${version})`,
  version,
  createdAt: at,
  updatedAt: at,
});
const lock = (token, cardId) => ({
  type: 'Lock',
  table: 'locks',
  param: String(token),
  id: token,
  token: String(token),
  lockable: { type: 'Card', table: 'cards', param: String(cardId) },
  depth: '0',
  caseId: 1,
  user,
  sessionId: 'tab-b',
  userAgent: null,
  createdAt: at,
  expiresAt: at,
  lastActivityAt: at,
});

const cards = RECORDS - PAGES;
const pages = Array.from({ length: PAGES }, (_, p) => ({ ...page(p + 1), cards: [] }));
for (let c = 1; c <= cards; c++) pages[(c - 1) % PAGES].cards.push(card(1000 + c, ((c - 1) % PAGES) + 1));
const detail = { type: 'Case', table: 'cases', param: '1', id: 1, slug: 'big', title: 'Big', version: 1, createdAt: at, updatedAt: at, role: 'editor', activeLocks: [], waiters: [], onlineUsers: [], pages };

const store = new CaseStore();
store.setSchema(schema);
let t0 = performance.now();
store.reset(detail);
store.getView();
const loaded = performance.now() - t0;

const versions = new Map();
const frame = (type, watchable) => ({ type, watchable, editorSessionId: 'tab-b', editorUserId: 2 });
const pick = (i) => 1001 + ((i * 7919) % cards);
const kinds = {
  'edit one card': (i) => {
    const id = pick(i);
    const v = (versions.get(id) ?? 1) + 1;
    versions.set(id, v);
    return frame('update', card(id, ((id - 1001) % PAGES) + 1, v));
  },
  'lock one card': (i) => frame('create', lock(50_000 + i, pick(i))),
  'add a card': (i) => frame('create', card(100_000 + i, (i % PAGES) + 1)),
  'move a card to another page': (i) => {
    const id = 100_000 + i;
    return frame('update', card(id, ((i + 1) % PAGES) + 1, 2, 1));
  },
  'delete a card': (i) => frame('destroy', { type: 'Card', table: 'cards', param: String(100_000 + i), id: 100_000 + i }),
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const us = (ms) => `${(ms * 1000).toFixed(1)} µs`;
console.log(`kit: ${kit}`);
console.log(`records: ${RECORDS} (${PAGES} pages, ${cards} cards); snapshot loaded and viewed in ${loaded.toFixed(1)} ms`);
for (const [name, make] of Object.entries(kinds)) {
  const times = [];
  for (let i = 0; i < FRAMES; i++) {
    const f = make(i);
    t0 = performance.now();
    store.apply(f);
    store.getView();
    times.push(performance.now() - t0);
  }
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  console.log(`${name.padEnd(28)} median ${us(median(times)).padStart(10)}, mean ${us(mean).padStart(10)} per frame (${FRAMES} frames)`);
}
