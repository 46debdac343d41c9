/**
 * baton's routes, typed from the `paths` of its OpenAPI document
 * (`generated/openapi.ts`): a path and a method give the path and query
 * parameters, the body, the guard headers and the answer, so a route, a
 * parameter or a body the document does not define does not compile.
 */
import type { paths } from './generated/openapi.js';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The paths the document defines `method` on, e.g. `PathsFor<'patch'>`. */
export type PathsFor<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never;
}[keyof paths];

/** The document's operation for a path and a method. */
export type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

type ParametersOf<O> = O extends { parameters: infer X } ? X : never;

/** A path segment is text: an id the document types `number` may also come in the string form records carry (`param`, `token`). */
type Segments<T> = { [K in keyof T]: T[K] | string };

type PathPart<O> =
  ParametersOf<O> extends { path: infer A extends Record<string, string | number> } ? { path: Segments<A> } : { path?: undefined };

type Query = Record<string, string | number | boolean | undefined>;

type QueryPart<O> =
  ParametersOf<O> extends { query: infer Q extends Query }
    ? { query: Q }
    : ParametersOf<O> extends { query?: infer Q extends Query }
      ? [NonNullable<Q>] extends [never]
        ? { query?: undefined }
        : { query?: Q }
      : { query?: undefined };

type BodyPart<O> = O extends { requestBody?: never }
  ? { body?: undefined }
  : O extends { requestBody: { content: { 'application/json': infer B } } }
    ? { body: B }
    : O extends { requestBody?: { content: { 'application/json': infer B } } }
      ? { body?: B }
      : { body?: undefined };

type HeadersOf<O> = NonNullable<ParametersOf<O> extends { header?: infer H } ? H : never>;

/** `If-Match` and `Lock-Token`, where the document lets the route take them. */
type GuardPart<O> = ([HeadersOf<O>] extends [never]
  ? { ifMatch?: undefined }
  : 'If-Match' extends keyof HeadersOf<O>
    ? { ifMatch?: number | null }
    : { ifMatch?: undefined }) &
  ([HeadersOf<O>] extends [never]
    ? { lockToken?: undefined }
    : 'Lock-Token' extends keyof HeadersOf<O>
      ? { lockToken?: string | null }
      : { lockToken?: undefined });

/** What a call of an operation takes: `path`, `query`, `body` and the guards, each the way the document says. */
export type RouteInit<O> = PathPart<O> &
  QueryPart<O> &
  BodyPart<O> &
  GuardPart<O> & {
    /** Lets the request outlive the page (`pagehide`). */
    keepalive?: boolean;
    signal?: AbortSignal;
  };

/** The init argument: optional when the operation needs nothing. */
export type RouteArgs<O> = Record<never, never> extends RouteInit<O> ? [init?: RouteInit<O>] : [init: RouteInit<O>];

type Success = 200 | 201 | 204;
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : null;

/** What an operation answers on success (`null` for 204). */
export type RouteData<O> = O extends { responses: infer R } ? JsonOf<R[keyof R & Success]> : never;

/** What every route init is at run time. */
export interface AnyRouteInit {
  path?: Record<string, string | number> | undefined;
  query?: Query | undefined;
  body?: unknown;
  ifMatch?: number | null | undefined;
  lockToken?: string | null | undefined;
  keepalive?: boolean;
  signal?: AbortSignal;
}

/** Fills a path's `{name}` segments: `fillPath('/locks/{id}', {id: 12})` → `/locks/12`. */
export function fillPath(path: string, params: Record<string, string | number> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`baton: ${path} needs {${name}}`);
    return encodeURIComponent(String(value));
  });
}
