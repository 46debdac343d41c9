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

fn text(field: &str, value: String, max: usize) -> AppResult<String> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(AppError::invalid(format!("{field} can't be blank.")));
    }
    if trimmed.chars().count() > max {
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

/// Lowercase letters, digits and dashes, starting with a letter or digit.
pub fn slug(field: &str, value: Option<String>) -> AppResult<String> {
    let value = required_text(field, value, 100)?;
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

pub fn position(field: &str, value: Option<i32>) -> AppResult<Option<i32>> {
    match value {
        Some(p) if p < 0 => Err(AppError::invalid(format!("{field} must be 0 or more."))),
        other => Ok(other),
    }
}

pub fn email(value: Option<String>) -> AppResult<String> {
    let value = required_text("user.email", value, 254)?;
    match value.split_once('@') {
        Some((local, domain))
            if !local.is_empty() && !domain.is_empty() && !value.contains(' ') =>
        {
            Ok(value)
        }
        _ => Err(AppError::invalid(
            "user.email must be an email address like bob@example.com.",
        )),
    }
}

pub const MIN_PASSWORD: usize = 8;

pub fn password(value: Option<String>) -> AppResult<String> {
    match value {
        Some(p) if p.chars().count() >= MIN_PASSWORD => Ok(p),
        Some(_) => Err(AppError::invalid(format!(
            "user.password must be at least {MIN_PASSWORD} characters."
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
    }

    #[test]
    fn texts() {
        assert_eq!(required_text("t", Some("  hi ".into()), 10).unwrap(), "hi");
        assert!(required_text("t", Some("   ".into()), 10).is_err());
        assert!(required_text("t", Some("x".repeat(11)), 10).is_err());
        assert!(email(Some("no-at-sign".into())).is_err());
        assert!(email(Some("bob@example.com".into())).is_ok());
        assert!(position("p", Some(-1)).is_err());
    }
}
