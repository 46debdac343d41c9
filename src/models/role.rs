//! A member's role on a case.

use std::fmt;

/// A member's role on one case; the derived order is the rank order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Reader,
    Editor,
    Manager,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Reader, Role::Editor, Role::Manager];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Editor => "editor",
            Role::Manager => "manager",
        }
    }

    /// The names of `min` and every role above it.
    pub fn at_least(min: Role) -> Vec<&'static str> {
        Role::ALL
            .into_iter()
            .filter(|r| *r >= min)
            .map(Role::as_str)
            .collect()
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
