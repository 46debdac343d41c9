//! Names derived from a type's PascalCase name: its snake_case form, its
//! default plural, its camelCase keys and its words for messages.

/// `BookComponent` → `book_component`, `HTTPServer` → `http_server`,
/// `Page2` → `page2`. An underscore goes before an upper-case letter that
/// follows a lower-case letter or digit, or that starts a word after an
/// acronym.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                let prev = chars[i - 1];
                let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
                if prev.is_ascii_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_ascii_uppercase() && next_is_lower)
                {
                    out.push('_');
                }
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The regular English plural of a snake_case name: `-s`; `-es` after s, x,
/// z, ch, sh; consonant + `y` → `-ies`. Anything else is declared with
/// `plural`.
pub fn plural(snake: &str) -> String {
    let bytes = snake.as_bytes();
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| snake.ends_with(end))
    {
        return format!("{snake}es");
    }
    if bytes.len() >= 2 && bytes[bytes.len() - 1] == b'y' {
        let before = bytes[bytes.len() - 2];
        if before.is_ascii_lowercase() && !b"aeiou".contains(&before) {
            return format!("{}ies", &snake[..snake.len() - 1]);
        }
    }
    format!("{snake}s")
}

/// `book_components` → `bookComponents` (empty parts from doubled
/// underscores are skipped).
pub fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    for part in snake.split('_').filter(|p| !p.is_empty()) {
        if out.is_empty() {
            out.push_str(part);
        } else {
            let mut chars = part.chars();
            if let Some(first) = chars.next() {
                out.push(first.to_ascii_uppercase());
                out.push_str(chars.as_str());
            }
        }
    }
    out
}

/// `book_component` → `book component`, for messages ("Add book component").
pub fn words(snake: &str) -> String {
    snake
        .split('_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The key that carries a record's parent id: `caseId` under the case,
/// else the parent's camelCase name + `Id` (`shelfId`, whatever the plural).
pub fn parent_key(parent: Option<&str>) -> String {
    match parent {
        None => "caseId".to_string(),
        Some(name) => format!("{}Id", camel_case(&snake_case(name))),
    }
}

/// Whether `s` matches `^[A-Z][A-Za-z0-9]*$`.
pub fn is_pascal_case(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

/// Whether `s` matches `^[a-z][a-z0-9_]*$`.
pub fn is_plural_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Whether `s` matches `^[a-z][A-Za-z0-9_]*$`.
pub fn is_field_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A key as it appears in a dotted path: bare when TOML allows, else quoted.
pub fn path_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_string()
    } else {
        format!("{key:?}")
    }
}

/// `["a", "b", "c"]` → `a, b or c`, for "expected …" lists.
pub fn or_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// `["a", "b", "c"]` → `a, b and c`.
pub fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_follow_the_regular_rules() {
        for (singular, expected) in [
            ("card", "cards"),
            ("box", "boxes"),
            ("branch", "branches"),
            ("category", "categories"),
            ("day", "days"),
            ("book_component", "book_components"),
            ("bus", "buses"),
            ("quiz", "quizes"),
            ("wish", "wishes"),
            ("key", "keys"),
            ("edgenote", "edgenotes"),
        ] {
            assert_eq!(plural(singular), expected, "{singular}");
        }
    }

    #[test]
    fn snake_case_splits_words_and_acronyms() {
        assert_eq!(snake_case("BookComponent"), "book_component");
        assert_eq!(snake_case("Ticket"), "ticket");
        assert_eq!(snake_case("HTTPServer"), "http_server");
        assert_eq!(snake_case("Page2"), "page2");
        assert_eq!(snake_case("Page2Item"), "page2_item");
    }

    #[test]
    fn camel_case_words_and_parent_keys() {
        assert_eq!(camel_case("book_component"), "bookComponent");
        assert_eq!(camel_case("book_components"), "bookComponents");
        assert_eq!(camel_case("cards"), "cards");
        assert_eq!(words("book_component"), "book component");
        assert_eq!(parent_key(None), "caseId");
        assert_eq!(parent_key(Some("Column")), "columnId");
        assert_eq!(parent_key(Some("BookComponent")), "bookComponentId");
    }

    #[test]
    fn name_shapes() {
        assert!(is_pascal_case("BookComponent"));
        assert!(!is_pascal_case("bookComponent"));
        assert!(!is_pascal_case("Book_Component"));
        assert!(!is_pascal_case(""));
        assert!(is_plural_name("book_components"));
        assert!(!is_plural_name("BookComponents"));
        assert!(!is_plural_name("_x"));
        assert!(is_field_name("dueOn"));
        assert!(is_field_name("due_on"));
        assert!(!is_field_name("DueOn"));
        assert!(!is_field_name("due-on"));
    }

    #[test]
    fn lists_and_paths() {
        assert_eq!(
            or_list(&["lease", "takeover", "wait"]),
            "lease, takeover or wait"
        );
        assert_eq!(or_list(&["types"]), "types");
        assert_eq!(path_key("Ticket"), "Ticket");
        assert_eq!(path_key("my type"), "\"my type\"");
    }
}
