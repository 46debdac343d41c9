//! baton: pessimistic edit locks, guarded writes and live presence for
//! collaborative web apps.
//!
//! Layers, top to bottom; each imports only the ones below it (a test,
//! `tests/layering.rs`, keeps it so):
//!
//! - `cli`: the `baton` command (`main` only calls it);
//! - `server`: putting it together;
//! - `http`: handlers (parse, authorize, call, render), the extractors, the
//!   OpenAPI document, the embedded web app; `demo` (the `--demo` data) sits
//!   beside it; `state` is what they share;
//! - `realtime`: the edits channel, hub, presence, heartbeat and event buses;
//!   `accounts` (changing and removing users) and `backup` (SQLite copies,
//!   taken on demand and on a schedule) sit beside it;
//! - `locks`: the lock engine, the guard, leases and the reaper;
//! - `auth`: tokens, passwords, the caller, ranks on a case;
//! - `error`: the error type and its one mapping to HTTP;
//! - `views`: the wire shapes (every JSON body and channel frame);
//! - `models`: records and their queries;
//! - `db`: connections, the transaction and what it will publish;
//! - `config`, `clock`, `schema`: settings, time and the declared record
//!   types in force, used by any layer.

pub mod accounts;
pub mod auth;
pub mod backup;
pub mod cli;
pub mod clock;
pub mod config;
pub mod db;
pub mod demo;
pub mod error;
pub mod http;
pub mod locks;
pub mod models;
pub mod realtime;
pub mod schema;
pub mod server;
pub mod state;
pub mod views;
