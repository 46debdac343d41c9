/**
 * The wire shapes baton sends and accepts, from the component schemas of its
 * `/openapi.json` (`src/generated/openapi.ts`, made by `npm run generate`).
 * This is the one module that names them: everything else imports from here.
 */
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

/** `{type, table, param}`: enough to key anything by `${type}/${param}`. */
export type RecordKey = Schemas['RecordKey'];
/** A record's identity: `{type, table, param, id}` (all a destroyed record keeps). */
export type Identity = Schemas['Identity'];
export type User = Schemas['User'];
export type Lock = Schemas['Lock'];
/** How far a lock reaches: `0` the record alone, `infinity` a page with its cards or a case with everything in it. */
export type LockDepth = Lock['depth'];
/** A lock as its `destroy` frame carries it: with `reason` and, for an override, `overriddenBy`. */
export type EndedLock = Schemas['EndedLock'];
export type LockAction = Schemas['LockAction'];
/** Why a lock ended (the audit's other actions start a lock or a place in line). */
export type LockEndReason = Exclude<LockAction, 'acquired' | 'queued' | 'handed_off'>;
export type LockEvent = Schemas['LockEvent'];
export type LockStatus = Schemas['LockStatus'];
export type Card = Schemas['Card'];
export type Page = Schemas['Page'];
export type PageWithCards = Schemas['PageWithCards'];
export type Edgenote = Schemas['Edgenote'];
export type Case = Schemas['Case'];
export type CaseDetail = Schemas['CaseDetail'];
/** A case role; `GET /cases/:slug` says `site admin` for site admins. */
export type Role = Schemas['Role'] | 'site admin';
export type Membership = Schemas['Membership'];
export type OnlineUser = Schemas['OnlineUser'];
export type Session = Schemas['Session'];
export type Login = Schemas['Login'];
export type ErrorBody = Schemas['ErrorBody'];
export type ErrorCode = Schemas['ErrorCode'];
/** Any lockable record. */
export type Lockable = Schemas['Record'];
/** What a change frame is about: a record, a lock, an ended lock, or a destroyed record's identity. */
export type Watchable = Schemas['Watchable'];
/** The types baton locks: `Case`, `Page`, `Card`, `Edgenote`. */
export type LockableType = Schemas['LockableType'];
/** `GET /auth/demo`: who to sign in as on a server started with `--demo`. */
export type DemoPeople = Schemas['DemoPeople'];
export type DemoPerson = Schemas['DemoPerson'];

export type NewUserFields = Schemas['NewUserFields'];
export type NewCaseFields = Schemas['NewCaseFields'];
export type NewPageFields = Schemas['NewPageFields'];
export type NewCardFields = Schemas['NewCardFields'];
export type NewEdgenoteFields = Schemas['NewEdgenoteFields'];
/** What `save` may change: every lockable's update fields (`content`, `title`, `caption`, `position`, `slug`). */
export type UpdateFields = Schemas['CaseUpdateFields'] &
  Schemas['PageUpdateFields'] &
  Schemas['CardUpdateFields'] &
  Schemas['EdgenoteUpdateFields'];

export type ServerFrame = Schemas['ServerFrame'];
export type WelcomeFrame = Extract<ServerFrame, { type: 'welcome' }>;
export type ChangeFrame = Extract<ServerFrame, { type: 'create' | 'update' | 'destroy' }>;
export type PresenceFrame = Extract<ServerFrame, { type: 'presence' }>;
export type ResyncFrame = Extract<ServerFrame, { type: 'resync' }>;
export type KickedFrame = Extract<ServerFrame, { type: 'kicked' }>;

/** Why a tab's place in a waiting line ended: it got the record, left, or its tab went away. */
export type WaiterEndReason = Schemas['WaiterEnd'];
/**
 * A tab waiting for a record (`POST /locks` with `wait: true` answered 202):
 * `position` 1 is next, as of when baton sent it.
 */
export type Waiter = Schemas['Waiter'];
/** A waiter as its `destroy` frame carries it, with `reason`. */
export type EndedWaiter = Schemas['EndedWaiter'];
