//! Putting it together, a file a concern: the database made ready
//! (`database`), the state built from settings (`app_state`), the HTTP app
//! (`http_app`), the metrics server (`metrics`), the background tasks
//! (`background`), the open-file limit (`open_files`), and serving until a
//! signal (`serve`).

mod app_state;
mod background;
mod database;
mod http_app;
mod metrics;
mod open_files;
mod serve;

use crate::auth::AuthError;
use crate::db::DbError;

pub use app_state::build_state;
pub use database::{load_schema, mismatch_message};
#[cfg(unix)]
pub use open_files::raise_open_file_limit;
pub use open_files::OpenFiles;
pub use serve::{run, start};

/// Why `baton serve` could not start (or stopped).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Config(String),
    /// A setting that cannot be right, named in the message (exit status 2).
    #[error("{0}")]
    Setting(String),
    /// A schema file that cannot be right (exit status 2).
    #[error(transparent)]
    Schema(#[from] crate::schema::SchemaError),
    /// A schema that does not fit the stored records (exit status 3).
    #[error("{0}")]
    SchemaMismatch(String),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("the server failed: {0}")]
    Io(#[from] std::io::Error),
}
