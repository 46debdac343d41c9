//! Field validation for request bodies: each failure is a 422 that names the
//! field and says what is allowed.

use crate::error::{AppError, AppResult};

pub const MAX_TITLE: usize = 200;
pub const MAX_CONTENT: usize = 100_000;

/// A required, non-blank text of at most `max` characters, trimmed.
pub fn required_text(field: &str, value: Option<String>, max: usize) -> AppResult<String> {
    match value {
        Some(v) => text(field, v, max),
        None => Err(AppError::invalid(format!("{field} is required."))),
    }
}

/// Like [`required_text`] when present.
pub fn optional_text(field: &str, value: Option<String>, max: usize) -> AppResult<Option<String>> {
    value.map(|v| text(field, v, max)).transpose()
}

/// What counts as blank around a text: exactly the characters the OpenAPI
/// patterns exclude (`[^ \t\n\r]`), so the document and the server agree.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn text(field: &str, value: String, max: usize) -> AppResult<String> {
    let trimmed = value.trim_matches(is_blank);
    if trimmed.is_empty() {
        return Err(AppError::invalid(format!("{field} can't be blank.")));
    }
    if value.chars().count() > max {
        return Err(AppError::invalid(format!(
            "{field} is too long (at most {max} characters)."
        )));
    }
    Ok(trimmed.to_owned())
}

/// Free text (card or note content): may be empty, never too long; kept as is.
pub fn body_text(field: &str, value: Option<String>) -> AppResult<Option<String>> {
    match value {
        Some(v) if v.chars().count() > MAX_CONTENT => Err(AppError::invalid(format!(
            "{field} is too long (at most {MAX_CONTENT} characters)."
        ))),
        other => Ok(other),
    }
}

/// Lowercase letters, digits and dashes, starting with a letter or digit; at
/// most 100. Taken as sent (not trimmed): it is an address.
pub fn slug(field: &str, value: Option<String>) -> AppResult<String> {
    let value = value.ok_or_else(|| AppError::invalid(format!("{field} is required.")))?;
    if value.len() > 100 {
        return Err(AppError::invalid(format!(
            "{field} is too long (at most 100 characters)."
        )));
    }
    let ok = value
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(value)
    } else {
        Err(AppError::invalid(format!(
            "{field} may only contain lowercase letters, digits and dashes, like 'my-case-1'."
        )))
    }
}

/// An optional 32-bit integer that may arrive as `3` or `3.0` (JSON Schema
/// counts both as integers); `null` is the same as leaving it out.
pub fn whole_number<'de, D>(deserializer: D) -> Result<Option<i32>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::de::Error;
    let Some(number) =
        <Option<serde_json::Number> as serde::Deserialize>::deserialize(deserializer)?
    else {
        return Ok(None);
    };
    let whole = number.as_i64().or_else(|| {
        number
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
            .map(|f| f as i64)
    });
    whole
        .and_then(|n| i32::try_from(n).ok())
        .map(Some)
        .ok_or_else(|| D::Error::custom(format!("expected a whole number (32-bit), got {number}")))
}

/// A body's nested resource (`{"case": {…}}`) read from a JSON object
/// only: serde's derive would also read a struct from an array, and
/// `{"case": [null]}` would be an empty update that reaches the guard (a
/// 412 or 423 for a body that cannot be right; RFC 9110 §13.2.1).
pub fn object<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::de::Error;
    let map = <serde_json::Map<String, serde_json::Value> as serde::Deserialize>::deserialize(
        deserializer,
    )?;
    serde_json::from_value(serde_json::Value::Object(map)).map_err(D::Error::custom)
}

pub fn position(field: &str, value: Option<i32>) -> AppResult<Option<i32>> {
    match value {
        Some(p) if p < 0 => Err(AppError::invalid(format!("{field} must be 0 or more."))),
        other => Ok(other),
    }
}

/// `local@domain`, neither part empty, no `@` or white space in either (the
/// OpenAPI pattern `^[^@ \t\n\r]+@[^@ \t\n\r]+$`); at most 254 characters.
pub fn email(value: Option<String>) -> AppResult<String> {
    let value = value.ok_or_else(|| AppError::invalid("user.email is required."))?;
    let plain = |part: &str| !part.is_empty() && !part.contains(|c: char| c == '@' || is_blank(c));
    match value.split_once('@') {
        Some((local, domain)) if value.chars().count() <= 254 && plain(local) && plain(domain) => {
            Ok(value)
        }
        _ => Err(AppError::invalid(
            "user.email must be an email address like bob@example.com.",
        )),
    }
}

pub const MIN_PASSWORD: usize = 8;
pub const MAX_PASSWORD: usize = 1024;

pub fn password(value: Option<String>) -> AppResult<String> {
    match value {
        Some(p) if (MIN_PASSWORD..=MAX_PASSWORD).contains(&p.chars().count()) => Ok(p),
        Some(_) => Err(AppError::invalid(format!(
            "user.password must be at least {MIN_PASSWORD} characters (and at most {MAX_PASSWORD})."
        ))),
        None => Err(AppError::invalid("user.password is required.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(
            slug("case.slug", Some("intro-101".into())).unwrap(),
            "intro-101"
        );
        assert!(slug("case.slug", Some("Intro".into())).is_err());
        assert!(slug("case.slug", Some("-x".into())).is_err());
        assert!(slug("case.slug", None).is_err());
        assert!(slug("case.slug", Some(" intro".into())).is_err());
    }

    #[test]
    fn texts() {
        assert_eq!(required_text("t", Some("  hi ".into()), 10).unwrap(), "hi");
        assert!(required_text("t", Some("   ".into()), 10).is_err());
        assert!(required_text("t", Some("x".repeat(11)), 10).is_err());
        assert!(email(Some("no-at-sign".into())).is_err());
        assert!(email(Some("bob@example.com".into())).is_ok());
        assert!(email(Some(" bob@example.com".into())).is_err());
        assert!(email(Some("a@b@c".into())).is_err());
        assert!(position("p", Some(-1)).is_err());
    }
}
