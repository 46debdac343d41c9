// Generated from openapi.json by `npm run generate` (openapi-typescript). Do not edit.

export interface paths {
    "/admin/sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /admin/sessions`: every open tab on every instance, with the locks
         *     it holds.
         */
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every open tab on every instance, with its locks */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Session"][];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only a site admin can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/admin/sessions/{sessionId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * `DELETE /admin/sessions/:sessionId[?user=ID]`: releases the tab's locks
         *     (reason `kicked`), takes it out of its lines, tells it (`kicked`) and
         *     closes its channel, on every instance. 404 if no such tab has an open
         *     channel, a lock or a place in line.
         */
        delete: {
            parameters: {
                query?: {
                    /**
                     * @description Only this user's tab with the session id (a tab is a user and a
                     *     session id together); without it, every tab with the session id.
                     */
                    user?: number;
                };
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The tab's session id */
                    sessionId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Its locks are released (`kicked`), it is told, and its channel closed */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only a site admin can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No open tab, lock or place in line has this session id (of this user) */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/demo": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /auth/demo`: who to sign in as, when the server runs with `--demo`
         *     (404 otherwise). The web app's sign-in page lists them.
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The demo people (password `demo`) */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["DemoPeople"];
                    };
                };
                /** @description The server does not run with `--demo` */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /auth/login {email, password}` → `{token, user}`. Failed attempts
         *     are counted per account and per client address; past either limit the
         *     answer is 429 with `Retry-After`, before any password is checked.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["LoginBody"];
                };
            };
            responses: {
                /** @description Signed in */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Login"];
                    };
                };
                /** @description The body is not valid JSON. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Wrong email or password */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `email` or `password` is missing, or longer than its limit (254 and 1,024 characters) */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Too many failed sign-ins for this account or address; see `Retry-After` */
                429: {
                    headers: {
                        /** @description Seconds to wait */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /auth/logout`: ends the calling token at once, on every instance,
         *     and closes the tabs opened with it (`signed_out`).
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Signed out: this token no longer works, and the edits channels opened with it are closed */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /auth/tokens` (API key): creates or updates the user your backend
         *     knows as `externalId`, sets their role in each named case (creating a
         *     case that is absent), and returns a token for them.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["TokenRequest"];
                };
            };
            responses: {
                /** @description A token for the user (earlier ones stay valid) */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["MintedToken"];
                    };
                };
                /** @description The body is not valid JSON. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No API key, a user's token, or an unknown or revoked key */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `conflict`: another user has this email, or the user was removed from baton */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid, or `ttl` is longer than the server allows (`BATON_TOKEN_TTL` set below 12h) */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The card's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The card */
                200: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Card"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description You are not a member of its case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** @description Deletes the card and everything inside it (guarded). */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /**
                     * @description The version you last saw, from the record's `ETag` (`"3"`): the write
                     *     is refused with 412 `stale_version` if the record has changed since.
                     */
                    "If-Match"?: string;
                    /**
                     * @description The token of the lock you hold on the record: the write is refused
                     *     with 412 `lock_lost` if that lock has been overridden, expired or
                     *     released, even when nobody holds the record now.
                     */
                    "Lock-Token"?: string;
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The card's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only an editor or above of its case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `stale_version` or `lock_lost` (with `current`) */
                412: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds a lock on it or on something inside it */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** @description Saves the fields given; `position` reorders it; `pageId` moves it to another page of its case (guarded). */
        patch: {
            parameters: {
                query?: never;
                header?: {
                    /**
                     * @description The version you last saw, from the record's `ETag` (`"3"`): the write
                     *     is refused with 412 `stale_version` if the record has changed since.
                     */
                    "If-Match"?: string;
                    /**
                     * @description The token of the lock you hold on the record: the write is refused
                     *     with 412 `lock_lost` if that lock has been overridden, expired or
                     *     released, even when nobody holds the record now.
                     */
                    "Lock-Token"?: string;
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The card's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["CardUpdateBody"];
                };
            };
            responses: {
                /** @description Saved; `version` went up by one */
                200: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Card"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only an editor or above of its case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No card has this id, or (a move) no page has `pageId` */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `stale_version` (with `current`): it changed since your `If-Match`; or `lock_lost` (with `current`): your `Lock-Token` is gone */
                412: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds its lock, or a deep lock around it (or, for a move, around the target); `lockable` is the locked record; nothing was saved */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/cases": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /cases`: the cases the caller is a member of. */
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The cases you are a member of, by title */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Case"][];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        /** `POST /cases`: 201; the creator becomes its manager. */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["NewCaseBody"];
                };
            };
            responses: {
                /** @description Created; you are its manager */
                201: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Case"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only site admins may create cases on this server (`BATON_USER_CASES=false`) */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The slug is taken */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cases/{slug}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /cases/:slug`: the case with its records as a tree (each type
         *     under the case by its plural, children under their parent), active
         *     locks, waiters, online users and the caller's role.
         */
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The case's slug */
                    slug: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The case with its records as a tree, active locks, waiters, online users and your role */
                200: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["CaseDetail"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description You are not a member of the case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /**
         * `DELETE /cases/:slug` (managers, guarded): refused while someone else
         *     holds a lock anywhere in the case.
         */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /**
                     * @description The version you last saw, from the record's `ETag` (`"3"`): the write
                     *     is refused with 412 `stale_version` if the record has changed since.
                     */
                    "If-Match"?: string;
                    /**
                     * @description The token of the lock you hold on the record: the write is refused
                     *     with 412 `lock_lost` if that lock has been overridden, expired or
                     *     released, even when nobody holds the record now.
                     */
                    "Lock-Token"?: string;
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The case's slug */
                    slug: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted, with everything in it */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only a manager of the case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `stale_version` or `lock_lost` (with `current`) */
                412: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds a lock in the case */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** `PATCH /cases/:slug` (managers, guarded). */
        patch: {
            parameters: {
                query?: never;
                header?: {
                    /**
                     * @description The version you last saw, from the record's `ETag` (`"3"`): the write
                     *     is refused with 412 `stale_version` if the record has changed since.
                     */
                    "If-Match"?: string;
                    /**
                     * @description The token of the lock you hold on the record: the write is refused
                     *     with 412 `lock_lost` if that lock has been overridden, expired or
                     *     released, even when nobody holds the record now.
                     */
                    "Lock-Token"?: string;
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The case's slug */
                    slug: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["CaseUpdateBody"];
                };
            };
            responses: {
                /** @description Saved */
                200: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Case"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only a manager of the case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `stale_version` or `lock_lost` (with `current`) */
                412: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds the case's lock */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/cases/{slug}/edgenotes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Creates an edgenote (editors). */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The case's slug */
                    slug: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["NewEdgenoteBody"];
                };
            };
            responses: {
                /** @description Created */
                201: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Edgenote"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only an editor or above of the case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `conflict`: another edgenote of the case has this slug */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds the case deeply (or something around it; `lock` is that deep lock, `lockable` its record); nothing was created */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cases/{slug}/edits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The edits channel: a WebSocket carrying the case's changes, lock changes
         *     and presence as JSON text frames (see the `ServerFrame` schema), tagged
         *     with the tab that made them. The server pings every heartbeat; a tab that
         *     misses two pongs is treated as gone.
         */
        get: {
            parameters: {
                query?: {
                    /** @description The bearer token (browsers cannot set headers on a WebSocket). */
                    token?: string;
                    /** @description The tab's id; one is made (and told in `welcome`) when left out. */
                    sessionId?: string;
                };
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The case's slug */
                    slug: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Switching to the WebSocket protocol; frames are `ServerFrame`s */
                101: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A malformed `sessionId` */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description You are not a member of the case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `upgrade_required`: a plain request, not a WebSocket upgrade; the answer carries `Upgrade: websocket` */
                426: {
                    headers: {
                        /** @description `websocket` */
                        Upgrade?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `rate_limited`: you have `BATON_CHANNELS_PER_USER` channels open on this instance already; close one (another tab) or try again after `Retry-After` seconds */
                429: {
                    headers: {
                        /** @description Seconds to wait */
                        "Retry-After"?: number;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cases/{slug}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /cases/:slug/events` (API key): a `create`, `update` or `destroy`
         *     frame for every tab of the case, on every instance, in the order baton
         *     accepts them. Send it after your own commit.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The case's slug */
                    slug: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["HostEvent"];
                };
            };
            responses: {
                /** @description Accepted: the frame goes to the case's tabs */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description The body is not valid JSON. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No API key, a user's token, or an unknown or revoked key */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No case has this slug */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `type` or `watchable` is missing or invalid, or the watchable's type is not an external type (`store = "external"`) */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cases/{slug}/lock_events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * `GET /cases/:slug/lock_events` (managers): newest first; `?limit=` (at
         *     most 1000, default 100) and `?before=<id>` page back.
         */
        get: {
            parameters: {
                query?: {
                    /** @description How many, newest first (default 100). */
                    limit?: number;
                    /** @description Only events older than this event id (to page back). */
                    before?: number;
                };
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The case's slug */
                    slug: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The audit trail, newest first */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["LockEvent"][];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only a manager of the case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `limit` or `before` is out of range */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cases/{slug}/memberships": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /cases/:slug/memberships`. */
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The case's slug */
                    slug: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The case's members, by name */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Membership"][];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only a manager of the case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        /**
         * `POST /cases/:slug/memberships {membership: {email, role}}`: 201 for a new
         *     member, 200 when an existing member's role changes. The user in the
         *     answer is the public one with the email sent: adding someone tells a
         *     manager nothing more of them (not whether they are a site admin).
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The case's slug */
                    slug: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["MembershipBody"];
                };
            };
            responses: {
                /** @description Was a member already: role changed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Membership"];
                    };
                };
                /** @description Added */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Membership"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only a manager of the case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No user has this email, or no case this slug */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description It would leave the case without a manager */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cases/{slug}/pages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Creates a page (editors). */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The case's slug */
                    slug: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["NewPageBody"];
                };
            };
            responses: {
                /** @description Created */
                201: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Page"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only an editor or above of the case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds the case deeply (or something around it; `lock` is that deep lock, `lockable` its record); nothing was created */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/edgenotes/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The edgenote's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The edgenote */
                200: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Edgenote"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description You are not a member of its case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** @description Deletes the edgenote and everything inside it (guarded). */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /**
                     * @description The version you last saw, from the record's `ETag` (`"3"`): the write
                     *     is refused with 412 `stale_version` if the record has changed since.
                     */
                    "If-Match"?: string;
                    /**
                     * @description The token of the lock you hold on the record: the write is refused
                     *     with 412 `lock_lost` if that lock has been overridden, expired or
                     *     released, even when nobody holds the record now.
                     */
                    "Lock-Token"?: string;
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The edgenote's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only an editor or above of its case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `stale_version` or `lock_lost` (with `current`) */
                412: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds a lock on it or on something inside it */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** @description Saves the fields given (guarded). */
        patch: {
            parameters: {
                query?: never;
                header?: {
                    /**
                     * @description The version you last saw, from the record's `ETag` (`"3"`): the write
                     *     is refused with 412 `stale_version` if the record has changed since.
                     */
                    "If-Match"?: string;
                    /**
                     * @description The token of the lock you hold on the record: the write is refused
                     *     with 412 `lock_lost` if that lock has been overridden, expired or
                     *     released, even when nobody holds the record now.
                     */
                    "Lock-Token"?: string;
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The edgenote's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["EdgenoteUpdateBody"];
                };
            };
            responses: {
                /** @description Saved; `version` went up by one */
                200: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Edgenote"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only an editor or above of its case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `conflict`: another edgenote of the case has this slug */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `stale_version` (with `current`): it changed since your `If-Match`; or `lock_lost` (with `current`): your `Lock-Token` is gone */
                412: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds its lock, or a deep lock around it (or, for a move, around the target); `lockable` is the locked record; nothing was saved */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/guard": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /guard` (API key): may this user write this record now? The same
         *     guard as baton's own writes, in the same order: 423 when someone else
         *     holds it (or a deep lock around it), then 412 `lock_lost` when
         *     `lockToken` no longer holds it. 204 renews the holder's lock activity.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["GuardRequest"];
                };
            };
            responses: {
                /** @description The user may write: nobody else holds it (the holder's lock activity was renewed) */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description The body is not valid JSON. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No API key, a user's token, or an unknown or revoked key */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The user is not an editor (or above) of the case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No case has this slug, or no record this type and id */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `lock_lost` (with `current`: the record's live lock, or null): `lockToken` names a lock that no longer holds the record */
                412: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked` (with `lock` and `lockable`): someone else holds it, or another tab of the user */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /healthz`: 200 when the database answers. */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The database answers */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Health"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/locks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /locks?case=:slug`: the active locks of a case. */
        get: {
            parameters: {
                query: {
                    /** @description The case's slug. */
                    case: string;
                };
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The case's active locks, oldest first */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Lock"][];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description You are not a member of the case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No case has this slug */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `case` is missing */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        /**
         * `POST /locks`: 201 new lock, 200 when the caller already holds it, 409
         *     when someone else does; with `takeover: true`, "Edit anyway"; with
         *     `wait: true`, 202 and a place in the record's waiting line.
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["LockBody"];
                };
            };
            responses: {
                /** @description You (this tab) held it already: lease renewed. Or, with `wait`, this tab was in its line already: that waiter, renewed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["LockOrWaiter"];
                    };
                };
                /** @description A new lock (or, with `takeover`, the holder's revoked and this one granted) */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Lock"];
                    };
                };
                /** @description With `wait`: someone else holds it and this tab joined its line; the record is handed over when their lock ends */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Waiter"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `forbidden`: not an editor of its case; `outranked` (with `lock`): the holder (of a deep takeover: one of the holders inside) outranks you */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No record has this type and id */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `lock_held` (with the holder's `lock`, and `locks`: every lock in the way): someone else holds it, or a deep lock of someone else covers it (`lock` is that deep lock), or (`depth: "infinity"`) someone else holds a lock inside it; or `conflict`: it changed hands repeatedly, try again */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `lockableType` or `lockableParam` is missing or invalid, `wait` without `X-Session-ID` or with `depth: "infinity"`, or `depth: "infinity"` on a record that holds no others */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        /**
         * `DELETE /locks?session=mine`: releases every lock of the calling tab and
         *     takes it out of every waiting line.
         */
        delete: {
            parameters: {
                query: {
                    session: components["schemas"]["SessionSelector"];
                };
                header: {
                    /** @description Required here: the tab whose locks to release. */
                    "X-Session-ID": string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Every lock of the calling tab is released, and it left every waiting line */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `session` is not `mine`, or no `X-Session-ID` was sent */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/locks/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /locks/batch`: all of them or none. */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["LockSetBody"];
                };
            };
            responses: {
                /** @description Every record is locked by this tab, in the order asked (records it held already were renewed) */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["LockSet"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not an editor of their case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description One of the records does not exist */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `lock_held`: someone else holds at least one of them (`locks` names every lock in the way, `lock` the first); nothing was locked */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No records, more than 50, records of several cases, or an invalid `lockableType`/`lockableParam` */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/locks/claim": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /locks/claim`: a lock on the first candidate nobody holds. */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["ClaimBody"];
                };
            };
            responses: {
                /** @description This tab already held one of the candidates (the first such): renewed, nothing new taken */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Lock"];
                    };
                };
                /** @description A new lock on the first candidate, in the order given, that nobody else held */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Lock"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not an editor of their case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description One of the candidates does not exist */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `none_free` (with `locks`): every candidate is held */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No candidates, more than 100, candidates of several cases, or an invalid `lockableType`/`lockableParam` */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/locks/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /locks/status?lockableType=Ticket&lockableParam=1`. */
        get: {
            parameters: {
                query: {
                    /** @description The record's type name. */
                    lockableType: components["schemas"]["LockableType"];
                    /**
                     * @description The record's id: `"12"` or `12`.
                     * @example 12
                     */
                    lockableParam: string;
                    /**
                     * @description The case's slug: required for an external type (`store =
                     *     "external"`), whose records are named per case; ignored otherwise.
                     */
                    case?: string;
                };
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description `owned` (your tab holds it, or a deep lock of yours covers it), `locked` (someone else does: `lock` is theirs, maybe the deep lock on its page or case) or `unlocked`, with the record's waiting line */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["LockStatus"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description You are not a member of its case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No record has this type and id */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `lockableType` or `lockableParam` is missing or invalid */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/locks/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /locks/:id`: readers of its case. */
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The lock's id (its token) */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The lock */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Lock"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description You are not a member of its case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** `DELETE /locks/:id`: release (holder) or break (equal or higher rank). */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The lock's id (its token) */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Released (by its holder) or broken (by an editor of equal or higher rank, recorded as `overridden`) */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `forbidden`: not an editor of its case; `outranked` (with `lock`): the holder outranks you */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/locks/{id}/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /locks/:id/refresh`: the holder renews lease and activity. */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The lock's id (its token) */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Lease and activity renewed */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Lock"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only the holding tab can refresh it */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /me`. */
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description You */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["User"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/memberships/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * `DELETE /memberships/:id`: 204. The user's locks and places in line in
         *     the case end, and their tabs on it are closed (`access_removed`).
         */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The membership's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Removed */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only a manager of the case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description It would leave the case without a manager */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /openapi.json`: this document (OpenAPI 3.1). */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The OpenAPI 3.1 document */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": unknown;
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/pages/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The page's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The page */
                200: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Page"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description You are not a member of its case */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** @description Deletes the page and everything inside it (guarded). */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /**
                     * @description The version you last saw, from the record's `ETag` (`"3"`): the write
                     *     is refused with 412 `stale_version` if the record has changed since.
                     */
                    "If-Match"?: string;
                    /**
                     * @description The token of the lock you hold on the record: the write is refused
                     *     with 412 `lock_lost` if that lock has been overridden, expired or
                     *     released, even when nobody holds the record now.
                     */
                    "Lock-Token"?: string;
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The page's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only an editor or above of its case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `stale_version` or `lock_lost` (with `current`) */
                412: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds a lock on it or on something inside it */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** @description Saves the fields given (guarded). */
        patch: {
            parameters: {
                query?: never;
                header?: {
                    /**
                     * @description The version you last saw, from the record's `ETag` (`"3"`): the write
                     *     is refused with 412 `stale_version` if the record has changed since.
                     */
                    "If-Match"?: string;
                    /**
                     * @description The token of the lock you hold on the record: the write is refused
                     *     with 412 `lock_lost` if that lock has been overridden, expired or
                     *     released, even when nobody holds the record now.
                     */
                    "Lock-Token"?: string;
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The page's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["PageUpdateBody"];
                };
            };
            responses: {
                /** @description Saved; `version` went up by one */
                200: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Page"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only an editor or above of its case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `stale_version` (with `current`): it changed since your `If-Match`; or `lock_lost` (with `current`): your `Lock-Token` is gone */
                412: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds its lock, or a deep lock around it (or, for a move, around the target); `lockable` is the locked record; nothing was saved */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/pages/{id}/cards": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** @description Creates a card (editors). */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The page's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["NewCardBody"];
                };
            };
            responses: {
                /** @description Created */
                201: {
                    headers: {
                        /** @description The record's version, quoted (`"3"`): send it back as `If-Match` */
                        ETag?: string;
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Card"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only an editor or above of the case can do this */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description `locked`: someone else holds the page deeply (or something around it; `lock` is that deep lock, `lockable` its record); nothing was created */
                423: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schema": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** `GET /schema` (any signed-in user). */
        get: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The schema in force: every declared type with its plural, table, parent, store, order, moves, label, keys (bodyKey, parentKey, nestKey: clients take these, never derive them), fields (JSON Schemas), required and unique fields and lock policy, in declaration order */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Schema"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** `POST /users` (site admins): 201 with the new user. */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["NewUserBody"];
                };
            };
            responses: {
                /** @description Created */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["User"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only a site admin can create users */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The email is taken */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/users/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * `DELETE /users/:id` (site admins): the user is deactivated. Their tokens
         *     end at once, their locks are released (`kicked`), their open tabs are
         *     closed; their audit history stays.
         */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The user's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Removed */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only a site admin can remove users */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description You cannot remove yourself */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /**
         * `PATCH /users/:id`: the user themselves (a new password needs
         *     `currentPassword`) or a site admin (`admin` only by a site admin).
         */
        patch: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The user's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["UserUpdateBody"];
                };
            };
            responses: {
                /** @description Changed; a new password ended every other token of the user */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["User"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not your account, `admin` without being a site admin, or a missing or wrong `currentPassword` when changing your own password */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Nothing has this id (any more). */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A site admin cannot give up their own admin rights */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is larger than the limit. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The body is not sent as `application/json`. */
                415: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A field is missing or invalid; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/waiters/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** `DELETE /waiters/:id`: its tab (or its user) leaves the line. */
        delete: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The waiter's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Out of the line; everyone after it moves up */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description It is someone else's place in line */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description It is no longer in line (granted, left or expired) */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/waiters/{id}/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * `POST /waiters/:id/refresh`: its tab renews its place's lease (a tab
         *     with an open edits channel needs not: its pongs do).
         */
        post: {
            parameters: {
                query?: never;
                header?: {
                    /** @description The browser tab's id (a UUID it made at load). Locks taken with it belong to that tab, and broadcasts carry it as `editorSessionId`. */
                    "X-Session-ID"?: string;
                };
                path: {
                    /** @description The waiter's id */
                    id: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Its lease renewed, with its place in line now */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Waiter"];
                    };
                };
                /** @description A header is malformed (`X-Session-ID`, `If-Match`, `Lock-Token`). */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description No token, or an invalid or expired one: sign in again. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Only the waiting tab can refresh it */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description It is no longer in line (granted, left or expired) */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A path segment or query parameter holds a NUL character (U+0000), which cannot be stored; the message names it. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The database is busy or not answering; try again. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description A card record. */
        Card: components["schemas"]["Identity"] & {
            /** @enum {string} */
            type: "Card";
            /** @enum {string} */
            table: "cards";
        } & {
            /** Format: int64 */
            caseId: number;
            /** Format: int64 */
            pageId: number;
            /** @description Its place among its siblings, from 0. */
            position: number;
            content: string;
            /**
             * Format: int64
             * @description Starts at 1; every update increments it. Send it back as `If-Match`.
             */
            version: number;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        CardUpdateBody: {
            card: components["schemas"]["CardUpdateFields"];
        };
        CardUpdateFields: {
            content?: string | null;
            /** @description Where it goes among its siblings (one there, and those after it, move up); the end when left out. */
            position?: number | null;
            /** @description Moves the record to this Page of its case: its id, a string of digits or a number. `null`, like leaving it out, moves nothing. */
            pageId?: string | number | null;
        };
        Case: components["schemas"]["Identity"] & {
            /** @enum {string} */
            type: "Case";
            /** @enum {string} */
            table: "cases";
        } & {
            slug: string;
            title: string;
            /**
             * Format: int64
             * @description Starts at 1; every update increments it. Send it back as `If-Match`.
             */
            version: number;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        /** @description `GET /cases/:slug`: the case with everything in it. */
        CaseDetail: components["schemas"]["Case"] & {
            activeLocks: components["schemas"]["Lock"][];
            /** @description Every live waiter of the case, line by line, first first. */
            waiters: components["schemas"]["Waiter"][];
            onlineUsers: components["schemas"]["OnlineUser"][];
            /**
             * @description The caller's rank on the case: `reader`, `editor`, `manager` or `site admin`.
             * @example editor
             */
            role: string;
        } & {
            pages: components["schemas"]["PageWithCards"][];
            edgenotes: components["schemas"]["Edgenote"][];
        };
        CaseUpdateBody: {
            case: components["schemas"]["CaseUpdateFields"];
        };
        /** @description A case's slug cannot change (it is its address). */
        CaseUpdateFields: {
            title?: string | null;
        };
        /** @enum {string} */
        Change: "create" | "update" | "destroy";
        /**
         * @description One change to a watchable, tagged with the tab that made it: a tab drops
         *     frames whose `editorSessionId` and `editorUserId` are both its own
         *     (another user may send the same session id: that is another tab).
         */
        ChangeFrame: {
            watchable: components["schemas"]["Watchable"];
            editorSessionId?: string | null;
            /**
             * Format: int64
             * @description The user whose request made the change; null when baton itself did
             *     (a lease ran out, a tab closed).
             */
            editorUserId?: number | null;
        };
        ClaimBody: {
            claim: components["schemas"]["ClaimFields"];
        };
        ClaimFields: {
            /** @description 1–100 records of one case, in the order to try them. */
            candidates: components["schemas"]["TargetRef"][];
        };
        /** @description The record as it is now; from POST /guard, the record's live lock. */
        Current: components["schemas"]["Record"] | components["schemas"]["Lock"];
        /** @description One declared type. */
        DeclaredType: {
            /**
             * @description PascalCase, e.g. `BookComponent`: `lockableType` and the records' `type`.
             * @example Ticket
             */
            name: string;
            /**
             * @description snake_case: its routes (`/tickets/{id}`).
             * @example tickets
             */
            plural: string;
            /**
             * @description The records' `table`: its plural.
             * @example tickets
             */
            table: string;
            /**
             * @description `Case` or another declared type.
             * @example Case
             */
            parent: string;
            /**
             * @description `baton` (baton stores its records) or `external` (a host's records
             *     that baton only names and locks).
             * @example baton
             */
            store: string;
            /** @description Records keep a 0-based `position` among their siblings. */
            ordered: boolean;
            /** @description A PATCH may give a record another parent of the same case. */
            movable: boolean;
            /** @description The string field that names a record to people, if any. */
            label?: string | null;
            /**
             * @description The key a request body nests a record under (`apiEndpoint`).
             * @example ticket
             */
            bodyKey: string;
            /**
             * @description The key of a record's parent id (`columnId`, or `caseId` under the case).
             * @example caseId
             */
            parentKey: string;
            /**
             * @description The key `GET /cases/:slug` (or the parent record) nests the records under (`apiEndpoints`).
             * @example tickets
             */
            nestKey: string;
            /** @description Each field's JSON Schema (2020-12), by name, in declaration order. */
            fields: Record<string, never>;
            /** @description Fields a create must give. */
            required: string[];
            /** @description Fields whose values are unique among the type's records in a case. */
            unique: string[];
            lock: components["schemas"]["LockRules"];
        };
        /** @description People to sign in as, on a server started with `--demo`. */
        DemoPeople: {
            /** @description Each signs in with the password `demo`. */
            users: components["schemas"]["DemoPerson"][];
        };
        DemoPerson: {
            email: string;
            name: string;
        };
        /** @description An edgenote record. */
        Edgenote: components["schemas"]["Identity"] & {
            /** @enum {string} */
            type: "Edgenote";
            /** @enum {string} */
            table: "edgenotes";
        } & {
            /** Format: int64 */
            caseId: number;
            /** @description Lowercase letters, digits and dashes; unique within the case. */
            slug: string;
            caption: string;
            /** @default  */
            content: string;
            /**
             * Format: int64
             * @description Starts at 1; every update increments it. Send it back as `If-Match`.
             */
            version: number;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        EdgenoteUpdateBody: {
            edgenote: components["schemas"]["EdgenoteUpdateFields"];
        };
        EdgenoteUpdateFields: {
            /** @description Lowercase letters, digits and dashes; unique within the case. */
            slug?: string | null;
            caption?: string | null;
            content?: string | null;
        };
        /** @description A lock that has ended, as its `destroy` frame carries it. */
        EndedLock: components["schemas"]["Lock"] & {
            reason: components["schemas"]["LockAction"];
            /** @description Who took it over or broke it (reason `overridden`). */
            overriddenBy?: components["schemas"]["User"];
        };
        /** @description A waiter that left its line, as its `destroy` frame carries it. */
        EndedWaiter: components["schemas"]["Waiter"] & {
            reason: components["schemas"]["WaiterEnd"];
        };
        /** @description Every error response's body. */
        ErrorBody: {
            error: components["schemas"]["ErrorDetail"];
        };
        /**
         * @description Machine-readable error codes; `message` says the same for a person.
         * @enum {string}
         */
        ErrorCode: "bad_request" | "unauthorized" | "forbidden" | "outranked" | "not_found" | "method_not_allowed" | "lock_held" | "none_free" | "conflict" | "stale_version" | "lock_lost" | "payload_too_large" | "unsupported_media_type" | "invalid" | "locked" | "rate_limited" | "unavailable" | "upgrade_required" | "internal";
        ErrorDetail: {
            code: components["schemas"]["ErrorCode"];
            /** @description What went wrong and what to do, for a person. */
            message: string;
            /** @description The lock in the way (`lock_held`, `locked`, `outranked`). */
            lock?: components["schemas"]["Lock"];
            /**
             * @description Every lock in the way (`lock_held`, `none_free`): of a lock set, a
             *     claim's candidates, or a deep lock's subtree.
             */
            locks?: components["schemas"]["Lock"][];
            /** @description The record the refused write was for (`locked`). */
            lockable?: components["schemas"]["Record"];
            current?: components["schemas"]["Current"] | null;
            /** @description Every field that breaks its declared schema (`invalid`). */
            fields?: components["schemas"]["FieldProblem"][];
        };
        /**
         * @description A record of an external type, as far as baton knows it: `{type, table,
         *     param, caseId}` (its fields live in the host's database).
         */
        ExternalRecord: {
            /**
             * @description Its type name, e.g. `Invoice`.
             * @example Invoice
             */
            type: string;
            /** @example invoices */
            table: string;
            /**
             * @description What the host calls it.
             * @example inv-2031
             */
            param: string;
            /** Format: int64 */
            caseId: number;
        };
        /** @description One bad field of a request body. */
        FieldProblem: {
            /** @description The field's declared name. */
            field: string;
            /** @description What is wrong with it, for a person. */
            message: string;
        };
        /** @description `POST /guard`'s body: flat, since it is a question, not a resource. */
        GuardRequest: {
            /**
             * @description The record's type name.
             * @enum {string}
             */
            lockableType: "Case" | "Page" | "Card" | "Edgenote";
            /** @description The record's id (`"12"` or `12`): a case, or a record baton stores. */
            lockableParam: string | number;
            /** @description The slug of the case the record belongs to. */
            case: string;
            /** @description The user writing, as your backend knows them (`POST /auth/tokens`). */
            userExternalId: string;
            /** @description The tab the write comes from. Without it, a lock taken by a tab is another tab's (423). */
            sessionId?: string | null;
            /** @description The lock the tab believes it holds (its `token`): 412 `lock_lost` when it no longer does. */
            lockToken?: string | number | null;
        };
        /** @description `GET /healthz`. */
        Health: {
            /** @example ok */
            status: string;
            /**
             * @description `sqlite` or `postgres`.
             * @example sqlite
             */
            database: string;
        };
        HostCaseFields: {
            slug: string;
            role: components["schemas"]["Role"] | null;
            /**
             * @description A created case's title (its slug if left out); ignored for a case
             *     that exists.
             */
            title?: string | null;
        };
        /** @description A change that happened in your backend, for the case's tabs. */
        HostEvent: {
            type: components["schemas"]["Change"];
            watchable: components["schemas"]["RelayedRecord"];
            /** @description The tab that made the change: it ignores its own frame. */
            editorSessionId?: string | null;
        };
        HostUserFields: {
            /** @description Your backend's id for the user: 1–200 characters, not all blank. */
            externalId: string;
            name: string;
            /**
             * @description Updated when given; another user's email is 409.
             * @example dana@example.com
             */
            email?: string | null;
        };
        /** @description `{type, table, param, id}`: what identifies a record, even a destroyed one. */
        Identity: {
            /**
             * @description The record's type name, e.g. `Ticket`.
             * @example Ticket
             */
            type: string;
            /**
             * @description Its table, e.g. `tickets`.
             * @example tickets
             */
            table: string;
            /**
             * @description Its id as a string: key records by `${type}/${param}`.
             * @example 12
             */
            param: string;
            /** Format: int64 */
            id: number;
        };
        /** @description Any JSON value in which no string and no key holds U+0000 (NUL): baton refuses those (422). */
        JsonValue: unknown & unknown;
        /**
         * @description Why a tab was closed, as its `kicked` frame says.
         * @enum {string}
         */
        KickReason: "kicked" | "access_removed" | "signed_out";
        /**
         * @description A lock: who holds which record, from which tab, until when. Its `token`
         *     (also its id) names this one holding: send it as `Lock-Token` when saving.
         */
        Lock: components["schemas"]["Identity"] & {
            /** @enum {string} */
            type: "Lock";
            /** @enum {string} */
            table: "locks";
        } & {
            /** @example 12 */
            token: string;
            /** @description The locked record. */
            lockable: components["schemas"]["RecordKey"];
            /**
             * @description `"0"`: the record alone; `"infinity"`: the record and everything
             *     inside it (a page's cards; everything in a case).
             */
            depth: components["schemas"]["LockDepth"];
            /** Format: int64 */
            caseId: number;
            /** @description The holder. */
            user: components["schemas"]["User"];
            /** @description The holding tab, when it sent `X-Session-ID`. */
            sessionId?: string | null;
            userAgent?: string | null;
            /** Format: date-time */
            createdAt: string;
            /**
             * Format: date-time
             * @description The lease: the lock ends then unless renewed.
             */
            expiresAt: string;
            /** Format: date-time */
            lastActivityAt: string;
        };
        /**
         * @description What happened to a lock, in the audit trail and on the wire. Every
         *     action but `acquired`, `queued` and `handed_off` ends a lock, and is then
         *     also the `reason` of its `destroy` frame. `queued`: a tab joined the line
         *     for the lock's record (the actor is the waiting user); `handed_off`: the
         *     first row of a lock the line gave to its next waiter.
         * @enum {string}
         */
        LockAction: "acquired" | "released" | "overridden" | "expired" | "idle" | "disconnected" | "kicked" | "queued" | "handed_off";
        LockBody: {
            lock: components["schemas"]["LockFields"];
        };
        /**
         * @description How much a lock covers, as WebDAV says it (RFC 4918 §10.2).
         * @enum {string}
         */
        LockDepth: "0" | "infinity";
        /** @description One row of a case's audit trail. */
        LockEvent: components["schemas"]["Identity"] & {
            /** @enum {string} */
            type: "LockEvent";
            /** @enum {string} */
            table: "lock_events";
        } & {
            /**
             * Format: int64
             * @description The lock (its token) this happened to.
             */
            lockId: number;
            lockable: components["schemas"]["RecordKey"];
            /** Format: int64 */
            caseId: number;
            action: components["schemas"]["LockAction"];
            actor?: components["schemas"]["User"] | null;
            /** @description Who held the lock. */
            holder: components["schemas"]["User"];
            /** Format: date-time */
            at: string;
        };
        LockFields: components["schemas"]["TargetRef"] & {
            /**
             * @description "Edit anyway": revoke the holder's lock and take it, if your role on
             *     the case is at least theirs. It skips the waiting line.
             */
            takeover?: boolean;
            /**
             * @description When someone else holds it, join its waiting line (202 with your
             *     tab's waiter) instead of a 409: the record is handed to your tab when
             *     their lock ends. Needs `X-Session-ID`. Depth `"0"` only.
             */
            wait?: boolean;
            /**
             * @description `"infinity"` (a case, or a record whose type has children): lock the record with everything
             *     inside it, including records created later. Refused (409, `locks`
             *     naming them) while someone else holds anything inside; with
             *     `takeover`, their locks end.
             */
            depth?: components["schemas"]["LockDepth"];
        };
        /** @description The lock this tab holds, or (with `wait`) its place in line; `type` says which. */
        LockOrWaiter: components["schemas"]["Lock"] | components["schemas"]["Waiter"];
        /** @description A type's lock policy. */
        LockRules: {
            /**
             * @description Its locks' lease (`"2m"`); `null` where the server's `BATON_LOCK_TTL` applies.
             * @example 2m
             */
            lease?: string | null;
            /**
             * @description The least case role that may "Edit anyway" (or break a lock):
             *     `editor`, `manager` or `none`.
             * @example editor
             */
            takeover: string;
            /** @description Whether `wait: true` may join a waiting line on it. */
            wait: boolean;
        };
        /** @description A lock set: every lock asked for, in the order asked. */
        LockSet: {
            locks: components["schemas"]["Lock"][];
        };
        LockSetBody: {
            /**
             * @description 1–50 records of one case (one named twice counts once, and its lock
             *     appears at each place).
             */
            locks: components["schemas"]["TargetRef"][];
        };
        /**
         * @description `owned`: the caller's tab holds it; `locked`: someone else does.
         * @enum {string}
         */
        LockState: "owned" | "locked" | "unlocked";
        /** @description `GET /locks/status`: for clients that poll instead of listening. */
        LockStatus: {
            state: components["schemas"]["LockState"];
            lock?: components["schemas"]["Lock"];
            /** @description The record's waiting line, first first. */
            waiters: components["schemas"]["Waiter"][];
        };
        /**
         * @description A lockable type's name.
         * @enum {string}
         */
        LockableType: "Case" | "Page" | "Card" | "Edgenote";
        /** @description `POST /auth/login`: a bearer token and who it belongs to. */
        Login: {
            /** @description Send as `Authorization: Bearer <token>`, and as `?token=` on the edits channel. */
            token: string;
            user: components["schemas"]["User"];
        };
        LoginBody: {
            /** @example alice@example.com */
            email: string;
            /** @example demo */
            password: string;
        };
        /** @description Someone who belongs to a case, with their role. */
        Membership: components["schemas"]["Identity"] & {
            /** @enum {string} */
            type: "Membership";
            /** @enum {string} */
            table: "memberships";
        } & {
            /** Format: int64 */
            caseId: number;
            role: components["schemas"]["Role"];
            user: components["schemas"]["User"];
        };
        MembershipBody: {
            membership: components["schemas"]["MembershipFields"];
        };
        MembershipFields: {
            /** @description The email of an existing user. */
            email: string;
            role: components["schemas"]["Role"];
        };
        /** @description A token minted for a team's user. */
        MintedToken: {
            /** @description An ordinary baton token for the user: REST and the edits channel. */
            token: string;
            user: components["schemas"]["User"];
            /** Format: date-time */
            expiresAt: string;
        };
        NewCardBody: {
            card: components["schemas"]["NewCardFields"];
        };
        NewCardFields: {
            content: string;
            /** @description Where it goes among its siblings (one there, and those after it, move up); the end when left out. */
            position?: number | null;
        };
        NewCaseBody: {
            case: components["schemas"]["NewCaseFields"];
        };
        NewCaseFields: {
            /** @description The case's address: lowercase letters, digits and dashes. */
            slug: string;
            title: string;
        };
        NewEdgenoteBody: {
            edgenote: components["schemas"]["NewEdgenoteFields"];
        };
        NewEdgenoteFields: {
            /** @description Lowercase letters, digits and dashes; unique within the case. */
            slug: string;
            caption: string;
            /** @default  */
            content: string | null;
        };
        NewPageBody: {
            page: components["schemas"]["NewPageFields"];
        };
        NewPageFields: {
            title: string;
            /** @description Where it goes among its siblings (one there, and those after it, move up); the end when left out. */
            position?: number | null;
        };
        NewUserBody: {
            user: components["schemas"]["NewUserFields"];
        };
        NewUserFields: {
            /** @example dana@example.com */
            email: string;
            name: string;
            password: string;
            /** @description A site admin acts as a manager on every case. */
            admin?: boolean;
        };
        /** @description One person online in a case, with how many tabs they have open there. */
        OnlineUser: {
            user: components["schemas"]["User"];
            /** @example #4363d8 */
            color: string;
            /**
             * Format: int32
             * @description Open tabs (edits channels) of this user on the case.
             */
            sessions: number;
        };
        /** @description A page record. */
        Page: components["schemas"]["Identity"] & {
            /** @enum {string} */
            type: "Page";
            /** @enum {string} */
            table: "pages";
        } & {
            /** Format: int64 */
            caseId: number;
            /** @description Its place among its siblings, from 0. */
            position: number;
            title: string;
            /**
             * Format: int64
             * @description Starts at 1; every update increments it. Send it back as `If-Match`.
             */
            version: number;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        PageUpdateBody: {
            page: components["schemas"]["PageUpdateFields"];
        };
        PageUpdateFields: {
            title?: string | null;
            /** @description Where it goes among its siblings (one there, and those after it, move up); the end when left out. */
            position?: number | null;
        };
        PageWithCards: components["schemas"]["Page"] & {
            cards: components["schemas"]["Card"][];
        };
        /** @description Any lockable record: in errors (`current`, `lockable`) and frames. */
        Record: components["schemas"]["Case"] | components["schemas"]["Page"] | components["schemas"]["Card"] | components["schemas"]["Edgenote"];
        /** @description `{type, table, param}`: the record a lock is on. */
        RecordKey: {
            /** @example Ticket */
            type: string;
            /** @example tickets */
            table: string;
            /** @example 12 */
            param: string;
        };
        /** @description A record's id: a string of digits, or a number. For an external type: what your backend calls the record (1–200 of `A-Za-z0-9._:-`), with `case`. */
        RecordParam: string | number;
        /** @description The record as your backend has it. This server's schema declares no type with `store = "external"`, so no event can be right: every one is 422. */
        RelayedRecord: {
            /** @description Must name a type declared with `store = "external"`; this server's schema declares none, so every event is refused (422). */
            type: string;
            /** @description The record's param, what tabs key it by. */
            param: string;
        };
        /**
         * @description A case role.
         * @enum {string}
         */
        Role: "reader" | "editor" | "manager";
        /** @description The record types in force, in declaration order. */
        Schema: {
            types: components["schemas"]["DeclaredType"][];
        };
        /** @description Every message the server sends on `GET /cases/:slug/edits`, as JSON text. */
        ServerFrame: {
            sessionId: string;
            /**
             * Format: int64
             * @description How often the tab sends `{"type": "ping"}`; a `pong` not back by
             *     the next ping means the connection is dead.
             */
            heartbeatMs: number;
            activeLocks: components["schemas"]["Lock"][];
            /** @description Every live waiter of the case, line by line, first first. */
            waiters: components["schemas"]["Waiter"][];
            onlineUsers: components["schemas"]["OnlineUser"][];
            /** @enum {string} */
            type: "welcome";
        } | (components["schemas"]["ChangeFrame"] & {
            /** @enum {string} */
            type: "create";
        }) | (components["schemas"]["ChangeFrame"] & {
            /** @enum {string} */
            type: "update";
        }) | (components["schemas"]["ChangeFrame"] & {
            /** @enum {string} */
            type: "destroy";
        }) | {
            onlineUsers: components["schemas"]["OnlineUser"][];
            /** @enum {string} */
            type: "presence";
        } | {
            /** Format: int64 */
            missed?: number;
            reason?: string;
            /** @enum {string} */
            type: "resync";
        } | {
            /** @enum {string} */
            type: "pong";
        } | {
            reason: components["schemas"]["KickReason"];
            /** @enum {string} */
            type: "kicked";
        };
        /** @description One open tab, for site admins. */
        Session: {
            sessionId: string;
            user: components["schemas"]["User"];
            case: components["schemas"]["Case"];
            /** @description The baton instance the tab is connected to. */
            instanceId: string;
            userAgent?: string | null;
            /** Format: date-time */
            connectedAt: string;
            /** Format: date-time */
            lastSeenAt: string;
            /** @description The locks this tab holds. */
            locks: components["schemas"]["Lock"][];
        };
        /**
         * @description Only `mine` (the calling tab, from `X-Session-ID`).
         * @enum {string}
         */
        SessionSelector: "mine";
        /** @description Which record: `lockableType` + `lockableParam` (snake_case accepted too). */
        TargetRef: {
            /** @description The record's type name. */
            lockableType: components["schemas"]["LockableType"];
            /** @description The record's id: `"12"` or `12`. */
            lockableParam: components["schemas"]["RecordParam"];
            /**
             * @description The case's slug: required for an external type (`store =
             *     "external"`), whose records are named per case; ignored otherwise.
             */
            case?: string;
        };
        TokenRequest: {
            user: components["schemas"]["HostUserFields"];
            /**
             * @description The cases to set the user's role in (may be empty); cases not named
             *     are left alone, and a case named more than once takes its last entry.
             */
            cases: components["schemas"]["HostCaseFields"][];
            /**
             * @description How long the token lasts, in whole seconds, minutes or hours (`"90s"`,
             *     `"30m"`, `"2h"`), at most 12h: by default, and at most, the server's
             *     `BATON_TOKEN_TTL` (12h unless it is set lower).
             * @example 1h
             */
            ttl?: string | null;
        };
        /**
         * @description A user, in one shape everywhere. `email` and `admin` appear only where the
         *     caller may see them: their own user, site admins, a case's managers.
         */
        User: components["schemas"]["Identity"] & {
            /** @enum {string} */
            type: "User";
            /** @enum {string} */
            table: "users";
        } & {
            name: string;
            /**
             * @description A stable avatar colour (`#rrggbb`).
             * @example #4363d8
             */
            color: string;
            /** @description Null only for a user a team's backend provisioned without one. */
            email?: string | null;
            /**
             * @description The id a team's backend knows the user by (`POST /auth/tokens`);
             *     null for a user who signs in here. Present wherever `email` is.
             */
            externalId?: string | null;
            admin?: boolean;
        };
        UserUpdateBody: {
            user: components["schemas"]["UserUpdateFields"];
            /** @description Your current password; required to change your own password. */
            currentPassword?: string;
        };
        UserUpdateFields: {
            name?: string;
            /** @description A new password: every other token of the user ends at once. */
            password?: string;
            /** @description Only a site admin may change this. */
            admin?: boolean;
        };
        /**
         * @description A tab's place in the line for a locked record (`position` 1 = next):
         *     the record is handed to it when the lock ends, unless taken over.
         */
        Waiter: components["schemas"]["Identity"] & {
            /** @enum {string} */
            type: "Waiter";
            /** @enum {string} */
            table: "lock_waiters";
        } & {
            /** @description The record waited for. */
            lockable: components["schemas"]["RecordKey"];
            /** Format: int64 */
            caseId: number;
            /** @description Who waits. */
            user: components["schemas"]["User"];
            /** @description The waiting tab: the lock handed over carries it. */
            sessionId: string;
            /**
             * Format: int64
             * @description 1 = next. As of this response or frame: a client that follows the
             *     channel counts the earlier waiters of the same record still in line.
             *     0 in a `destroy` frame: the waiter is no longer in line.
             */
            position: number;
            /** Format: date-time */
            createdAt: string;
            /**
             * Format: date-time
             * @description The waiter leaves the line then, unless its tab renews it.
             */
            expiresAt: string;
        };
        /**
         * @description Why a waiter left its line: the `reason` of its `destroy` frame.
         * @enum {string}
         */
        WaiterEnd: "granted" | "left" | "expired" | "disconnected" | "kicked";
        /** @description A record, a lock, a waiter, an ended lock or waiter (destroy, with `reason`), a destroyed record's identity, or a record a team's backend announced. */
        Watchable: components["schemas"]["Record"] | components["schemas"]["EndedLock"] | components["schemas"]["Lock"] | components["schemas"]["EndedWaiter"] | components["schemas"]["Waiter"] | components["schemas"]["Identity"] | {
            type: string;
            param: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
