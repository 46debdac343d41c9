//! Table definitions shared by both backends. Only portable column types are
//! used (BigInt, Integer, Text, Bool, Timestamp), so one schema serves SQLite
//! and PostgreSQL alike.

diesel::table! {
    users (id) {
        id -> BigInt,
        email -> Nullable<Text>,
        name -> Text,
        password_hash -> Text,
        color -> Text,
        admin -> Bool,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        deactivated_at -> Nullable<Timestamp>,
        external_id -> Nullable<Text>,
    }
}

diesel::table! {
    api_keys (id) {
        id -> BigInt,
        name -> Text,
        key_hash -> Text,
        created_at -> Timestamp,
        last_used_at -> Nullable<Timestamp>,
        revoked_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    auth_tokens (id) {
        id -> BigInt,
        user_id -> BigInt,
        created_at -> Timestamp,
        expires_at -> Timestamp,
        revoked_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    cases (id) {
        id -> BigInt,
        slug -> Text,
        title -> Text,
        version -> BigInt,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        made_by -> Nullable<Text>,
    }
}

diesel::table! {
    memberships (id) {
        id -> BigInt,
        case_id -> BigInt,
        user_id -> BigInt,
        role -> Text,
        created_at -> Timestamp,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    /// Every record of a declared type (the schema file): its declared
    /// fields are one JSON object in `fields`.
    records (record_type, id) {
        record_type -> Text,
        id -> BigInt,
        case_id -> BigInt,
        parent_type -> Nullable<Text>,
        parent_id -> Nullable<BigInt>,
        position -> Nullable<Integer>,
        fields -> Text,
        version -> BigInt,
        created_at -> Timestamp,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    /// The last id handed out per declared type: ids are never used twice.
    record_ids (record_type) {
        record_type -> Text,
        last_id -> BigInt,
    }
}

diesel::table! {
    locks (id) {
        id -> BigInt,
        lockable_type -> Text,
        lockable_id -> BigInt,
        case_id -> BigInt,
        user_id -> BigInt,
        session_id -> Nullable<Text>,
        user_agent -> Nullable<Text>,
        created_at -> Timestamp,
        expires_at -> Timestamp,
        last_activity_at -> Timestamp,
        disconnected_at -> Nullable<Timestamp>,
        has_waiters -> Bool,
        deep -> Bool,
        lockable_param -> Nullable<Text>,
    }
}

diesel::table! {
    lock_waiters (id) {
        id -> BigInt,
        lockable_type -> Text,
        lockable_id -> BigInt,
        case_id -> BigInt,
        user_id -> BigInt,
        session_id -> Text,
        user_agent -> Nullable<Text>,
        created_at -> Timestamp,
        expires_at -> Timestamp,
        disconnected_at -> Nullable<Timestamp>,
        lockable_param -> Nullable<Text>,
    }
}

diesel::table! {
    /// The records of external types that were ever locked: baton names
    /// them by (type, case, param) and gives each an id.
    external_records (id) {
        id -> BigInt,
        record_type -> Text,
        case_id -> BigInt,
        param -> Text,
        created_at -> Timestamp,
    }
}

diesel::table! {
    events (id) {
        id -> BigInt,
        at -> Timestamp,
        lock_id -> Nullable<BigInt>,
        lockable_type -> Nullable<Text>,
        lockable_id -> Nullable<BigInt>,
        case_id -> Nullable<BigInt>,
        actor_id -> Nullable<BigInt>,
        holder_id -> Nullable<BigInt>,
        action -> Nullable<Text>,
        payload -> Nullable<Text>,
    }
}

diesel::table! {
    presences (id) {
        id -> BigInt,
        session_id -> Text,
        user_id -> BigInt,
        case_id -> BigInt,
        instance_id -> Text,
        user_agent -> Nullable<Text>,
        connected_at -> Timestamp,
        last_seen_at -> Timestamp,
    }
}

diesel::joinable!(auth_tokens -> users (user_id));
diesel::joinable!(memberships -> cases (case_id));
diesel::joinable!(memberships -> users (user_id));
diesel::joinable!(records -> cases (case_id));
diesel::joinable!(external_records -> cases (case_id));
diesel::joinable!(locks -> users (user_id));
diesel::joinable!(lock_waiters -> users (user_id));
diesel::joinable!(presences -> users (user_id));
diesel::joinable!(presences -> cases (case_id));

diesel::allow_tables_to_appear_in_same_query!(
    api_keys,
    users,
    auth_tokens,
    cases,
    memberships,
    records,
    record_ids,
    locks,
    events,
    lock_waiters,
    external_records,
    presences,
);
