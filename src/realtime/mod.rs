//! The live side: events produced by committed writes, and the hub that fans
//! them out to the tabs watching a case.

pub mod events;
pub mod hub;
pub mod presence;
