//! The lock routes (`handlers.rs`) and what their requests send, with how
//! the OpenAPI document describes it (`schema.rs`).

mod handlers;
mod schema;

pub use handlers::*;
pub use schema::{LockOrWaiter, LockableType, ParamText, RecordParam, SessionSelector, TargetRef};
