//! Users, memberships, who is online, and open tabs.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{CaseView, Identity, LockView};
use crate::clock::utc;
use crate::models::{Case, Membership, Presence, Role, User, UserRef};

/// A user, in one shape everywhere. `email` and `admin` appear only where the
/// caller may see them: their own user, site admins, a case's managers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = User)]
pub struct UserView {
    #[serde(flatten)]
    pub identity: Identity,
    pub name: String,
    /// A stable avatar colour (`#rrggbb`).
    #[schema(example = "#4363d8")]
    pub color: String,
    /// Null only for a user a team's backend provisioned without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = true, value_type = Option<String>)]
    pub email: Option<Option<String>>,
    /// The id a team's backend knows the user by (`POST /auth/tokens`);
    /// null for a user who signs in here. Present wherever `email` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = true, value_type = Option<String>)]
    pub external_id: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub admin: Option<bool>,
}

impl UserView {
    /// What everyone may see: beside a lock, in presence, in the audit trail.
    pub fn public(user: &UserRef) -> UserView {
        UserView {
            identity: Identity::of(user),
            name: user.name.clone(),
            color: user.color.clone(),
            email: None,
            external_id: None,
            admin: None,
        }
    }

    /// With email and admin flag: for the user themself, admins and managers.
    pub fn full(user: &User) -> UserView {
        UserView {
            identity: Identity::of(user),
            name: user.name.clone(),
            color: user.color.clone(),
            email: Some(user.email.clone()),
            external_id: Some(user.external_id.clone()),
            admin: Some(user.admin),
        }
    }
}

/// A case role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = Role)]
pub enum RoleView {
    Reader,
    Editor,
    Manager,
}

impl From<RoleView> for Role {
    fn from(role: RoleView) -> Role {
        match role {
            RoleView::Reader => Role::Reader,
            RoleView::Editor => Role::Editor,
            RoleView::Manager => Role::Manager,
        }
    }
}

impl From<Role> for RoleView {
    fn from(role: Role) -> RoleView {
        match role {
            Role::Reader => RoleView::Reader,
            Role::Editor => RoleView::Editor,
            Role::Manager => RoleView::Manager,
        }
    }
}

/// Someone who belongs to a case, with their role.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Membership)]
pub struct MembershipView {
    #[serde(flatten)]
    pub identity: Identity,
    pub case_id: i64,
    pub role: RoleView,
    pub user: UserView,
}

impl MembershipView {
    pub fn new(membership: &Membership, user: &User) -> MembershipView {
        MembershipView {
            identity: Identity::of(membership),
            case_id: membership.case_id.get(),
            role: membership.role().into(),
            user: UserView::full(user),
        }
    }

    /// What a manager who added (or re-roled) someone by email sees: the
    /// public user and the email they typed, not whether the user is a
    /// site admin or who a team's backend knows them as.
    pub fn added(membership: &Membership, user: &User) -> MembershipView {
        MembershipView {
            user: UserView {
                email: Some(user.email.clone()),
                ..UserView::public(&user.to_ref())
            },
            ..MembershipView::new(membership, user)
        }
    }
}

/// One person online in a case, with how many tabs they have open there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = OnlineUser)]
pub struct OnlineUserView {
    pub user: UserView,
    #[schema(example = "#4363d8")]
    pub color: String,
    /// Open tabs (edits channels) of this user on the case.
    #[schema(minimum = 1)]
    pub sessions: u32,
}

/// One open tab, for site admins.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Session)]
pub struct SessionView {
    pub session_id: String,
    pub user: UserView,
    pub case: CaseView,
    /// The baton instance the tab is connected to.
    pub instance_id: String,
    pub user_agent: Option<String>,
    pub connected_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    /// The locks this tab holds.
    pub locks: Vec<LockView>,
}

impl SessionView {
    pub fn new(presence: &Presence, user: &UserRef, case: &Case, locks: Vec<LockView>) -> Self {
        SessionView {
            session_id: presence.session_id.clone(),
            user: UserView::public(user),
            case: case.into(),
            instance_id: presence.instance_id.clone(),
            user_agent: presence.user_agent.clone(),
            connected_at: utc(presence.connected_at),
            last_seen_at: utc(presence.last_seen_at),
            locks,
        }
    }
}

/// `POST /auth/login`: a bearer token and who it belongs to.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[schema(as = Login)]
pub struct LoginView {
    /// Send as `Authorization: Bearer <token>`, and as `?token=` on the edits channel.
    pub token: String,
    pub user: UserView,
}
