//! baton: pessimistic edit locks, guarded writes and live presence for
//! collaborative web apps.
//!
//! Layout: `http` (handlers) → `locks` (the lock engine and the guard) and
//! `models` (records and queries) → `db` (SQLite/PostgreSQL, transactions).
//! `realtime` carries committed changes to browser tabs; `auth` says who is
//! calling and what they may do; `config`, `error` and `server` hold it together.

pub mod auth;
pub mod clock;
pub mod config;
pub mod db;
pub mod demo;
pub mod error;
pub mod http;
pub mod locks;
pub mod models;
pub mod realtime;
pub mod server;
pub mod state;
