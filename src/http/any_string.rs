//! Any string, never a 500: no string holding U+0000 reaches a handler.
//! PostgreSQL can store none (neither `text` nor `jsonb`), and SQLite would
//! store what PostgreSQL refuses, so both backends refuse it here alike,
//! before anything is read or stored: 422 `invalid` naming the field. One
//! check for what a request carries: its path, its query string and a JSON
//! body. (A header cannot hold a NUL byte: the HTTP parser refuses it.)
//!
//! On `POST /auth/login` a NUL is wrong credentials (401): in `email` or
//! `password` its handler answers it as any failed sign-in, and anywhere
//! else in the body this does.
//!
//! The OpenAPI document says the same ([`document_refusals`]): every string
//! a request can carry has a pattern without U+0000, every open object's
//! keys and values too, so a client generated from the document never
//! sends what this refuses, and a fuzzer that follows it is never refused
//! for it.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::CONTENT_TYPE;
use actix_web::middleware::Next;
use actix_web::{web, FromRequest};
use serde_json::{json, Value};
use utoipa::openapi::schema::{AdditionalProperties, AllOfBuilder, ArrayItems, Schema, SchemaType};
use utoipa::openapi::{ObjectBuilder, OpenApi as Document, RefOr, Type};

use crate::auth::AuthError;
use crate::error::AppError;

/// Where a NUL is wrong credentials, not a field to name.
const SIGN_IN: &str = "/auth/login";

/// Middleware: 422 for a request whose path, query or JSON body holds a
/// string with U+0000 (401 on `POST /auth/login`).
pub async fn refuse_nul(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let sign_in = req.path() == SIGN_IN;
    if !sign_in {
        if let Some(field) = nul_in_target(req.uri().path(), req.query_string()) {
            return Ok(req.error_response(nul_error(&field)).map_into_right_body());
        }
    }
    let req = if is_json(&req) {
        match check_body(req, sign_in).await {
            Ok(req) => req,
            Err(refused) => return Ok(refused.map_into_right_body()),
        }
    } else {
        req
    };
    Ok(next.call(req).await?.map_into_left_body())
}

/// The message every refusal gives.
fn nul_error(field: &str) -> AppError {
    AppError::invalid(format!(
        "{field} contains a NUL character (U+0000), which cannot be stored; remove it."
    ))
}

fn is_json(req: &ServiceRequest) -> bool {
    req.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("json"))
}

/// Reads the body (within the configured limit), refuses it if a string in
/// it holds U+0000, and hands it on unchanged. A sign-in's `email` and
/// `password` are its handler's to refuse (a failed sign-in, counted by
/// the throttle).
async fn check_body(req: ServiceRequest, sign_in: bool) -> Result<ServiceRequest, ServiceResponse> {
    let (http, mut payload) = req.into_parts();
    let body = match web::Bytes::from_request(&http, &mut payload).await {
        Ok(body) => body,
        // Too large, or cut off: the framework's answer (413, 400).
        Err(e) => return Err(ServiceResponse::from_err(e, http)),
    };
    // Only a body that spells the escape can hold one (JSON has no raw
    // control characters in strings): most bodies are never parsed here.
    if memchr_escape(&body) {
        if let Ok(value) = serde_json::from_slice::<Value>(&body) {
            match nul_in_json(&value, "") {
                Some(field) if sign_in && matches!(field.as_str(), "email" | "password") => {}
                Some(_) if sign_in => {
                    let refused = AppError::from(AuthError::BadCredentials);
                    return Err(ServiceResponse::from_err(refused, http));
                }
                Some(field) => return Err(ServiceResponse::from_err(nul_error(&field), http)),
                None => {}
            }
        }
    }
    Ok(ServiceRequest::from_parts(http, Payload::from(body)))
}

/// Whether `\u0000` appears in the raw body.
fn memchr_escape(body: &[u8]) -> bool {
    body.windows(6).any(|w| w.eq_ignore_ascii_case(b"\\u0000"))
}

/// The first field (`card.content`, `locks[1].lockableParam`, a key's own
/// path) whose string holds U+0000.
fn nul_in_json(value: &Value, at: &str) -> Option<String> {
    match value {
        Value::String(s) if s.contains('\0') => Some(name_or_body(at)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_in_json(item, &format!("{at}[{i}]"))),
        Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            let path = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            if key.contains('\0') {
                Some(format!("A field name in {}", name_or_body(at)))
            } else {
                nul_in_json(item, &path)
            }
        }),
        _ => None,
    }
}

fn name_or_body(at: &str) -> String {
    if at.is_empty() {
        "the body".to_owned()
    } else {
        at.to_owned()
    }
}

/// The path or the query parameter that holds an encoded NUL (`%00`).
fn nul_in_target(path: &str, query: &str) -> Option<String> {
    let encoded_nul = |s: &str| {
        s.as_bytes()
            .windows(3)
            .any(|w| w.eq_ignore_ascii_case(b"%00"))
    };
    if encoded_nul(path) {
        return Some("The path".to_owned());
    }
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        if encoded_nul(name) {
            Some("A query parameter's name".to_owned())
        } else if encoded_nul(value) {
            Some(format!("The query parameter {name}"))
        } else {
            None
        }
    })
}

// ---- the document says so ----

/// What every string a request carries must match: no U+0000. Written with
/// the `\u0000` escape, which JSON Schema's regexes (ECMA-262), Python's
/// `re` (schemathesis) and Rust's `regex` (the `jsonschema` crate) read
/// alike.
pub const NO_NUL: &str = r"^[^\u0000]*$";

/// The component an open object's other keys answer to: any JSON value,
/// with no string and no key in it holding U+0000.
pub const JSON_VALUE: &str = "JsonValue";

/// Says in `doc` what [`refuse_nul`] refuses, wherever a request can carry
/// it: in every parameter's and request body's schema, and every component
/// they reach, a string gets a pattern without U+0000 (a pattern it had is
/// narrowed, or joined with [`NO_NUL`] in an `allOf`), and an object gets
/// `propertyNames` with [`NO_NUL`] and, while it is open, its other keys'
/// values [`JSON_VALUE`] (as `unevaluatedProperties`, which generated
/// types leave as they were). Response schemas only reached from responses
/// are left as they are: baton never sends a NUL.
pub fn document_refusals(doc: &mut Document) {
    let mut reached = Vec::new();
    for item in doc.paths.paths.values_mut() {
        let operations = [
            item.get.as_mut(),
            item.post.as_mut(),
            item.put.as_mut(),
            item.patch.as_mut(),
            item.delete.as_mut(),
        ];
        for operation in operations.into_iter().flatten() {
            for parameter in operation.parameters.iter_mut().flatten() {
                if let RefOr::T(parameter) = parameter {
                    if let Some(schema) = parameter.schema.as_mut() {
                        forbid_nul(schema, &mut reached);
                    }
                }
            }
            if let Some(RefOr::T(body)) = operation.request_body.as_mut() {
                for content in body.content.values_mut() {
                    if let RefOr::T(utoipa::openapi::Content {
                        schema: Some(schema),
                        ..
                    }) = content
                    {
                        forbid_nul(schema, &mut reached);
                    }
                }
            }
        }
    }
    let components = doc.components.get_or_insert_with(Default::default);
    components
        .schemas
        .insert(JSON_VALUE.to_owned(), RefOr::T(json_value()));
    let mut done = std::collections::HashSet::new();
    while let Some(name) = reached.pop() {
        if !done.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = components.schemas.get_mut(&name) {
            forbid_nul(schema, &mut reached);
        }
    }
}

/// [`NO_NUL`] alone, for any type (it bears on strings only).
fn no_nul() -> Schema {
    Schema::Object(
        ObjectBuilder::new()
            .schema_type(SchemaType::AnyValue)
            .pattern(Some(NO_NUL))
            .build(),
    )
}

/// What an object's keys must be: strings without U+0000.
fn names_without_nul() -> Box<Schema> {
    Box::new(Schema::Object(
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(NO_NUL))
            .build(),
    ))
}

/// [`JSON_VALUE`]: any JSON value, in which a string matches [`NO_NUL`],
/// and so do an object's keys, and an array's items and an object's values
/// are [`JSON_VALUE`] again. Without a type rather than an `anyOf` of the
/// six, so that generated TypeScript types read it as `unknown` (an `anyOf`
/// that refers to itself through an array is a type that refers to itself,
/// which TypeScript refuses); and two parts, so that each carries one of
/// the keywords utoipa has no field for (see [`with_keyword`]).
fn json_value() -> Schema {
    let mut strings_and_objects = ObjectBuilder::new()
        .schema_type(SchemaType::AnyValue)
        .pattern(Some(NO_NUL))
        .build();
    strings_and_objects.property_names = Some(names_without_nul());
    with_keyword(&mut strings_and_objects, "unevaluatedProperties");
    let mut arrays = ObjectBuilder::new()
        .schema_type(SchemaType::AnyValue)
        .build();
    with_keyword(&mut arrays, "items");
    Schema::AllOf(
        AllOfBuilder::new()
            .item(Schema::Object(strings_and_objects))
            .item(Schema::Object(arrays))
            .description(Some(
                "Any JSON value in which no string and no key holds U+0000 (NUL): baton \
                 refuses those (422).",
            ))
            .build(),
    )
}

/// Gives `object` the JSON Schema `keyword` (`unevaluatedProperties`,
/// `items`) with [`JSON_VALUE`] as its schema. utoipa's schema has no
/// field for it, so it is written with the extensions, which sit beside
/// the other keywords. baton gives each schema one at most: they are kept
/// in a map whose order changes from run to run, and the document's
/// snapshot would too.
fn with_keyword(object: &mut utoipa::openapi::schema::Object, keyword: &str) {
    object
        .extensions
        .get_or_insert_with(Default::default)
        .insert(keyword.to_owned(), json_value_ref());
}

fn json_value_ref() -> serde_json::Value {
    json!({ "$ref": format!("#/components/schemas/{JSON_VALUE}") })
}

/// Forbids U+0000 in what `schema` admits (see [`document_refusals`]);
/// components it refers to are pushed on `reached`.
fn forbid_nul(schema: &mut RefOr<Schema>, reached: &mut Vec<String>) {
    match schema {
        RefOr::Ref(r) => {
            if let Some(name) = r.ref_location.strip_prefix("#/components/schemas/") {
                reached.push(name.to_owned());
            }
        }
        RefOr::T(schema) => forbid_nul_in(schema, reached),
    }
}

fn forbid_nul_in(schema: &mut Schema, reached: &mut Vec<String>) {
    match schema {
        Schema::Object(object) => {
            for property in object.properties.values_mut() {
                forbid_nul(property, reached);
            }
            if let Some(AdditionalProperties::RefOr(other)) =
                object.additional_properties.as_deref_mut()
            {
                forbid_nul(other, reached);
            }
            let closed = matches!(
                object.additional_properties.as_deref(),
                Some(AdditionalProperties::FreeForm(false))
            );
            if admits(&object.schema_type, Type::Object) && !closed {
                object.property_names.get_or_insert_with(names_without_nul);
                let open = matches!(
                    object.additional_properties.as_deref(),
                    None | Some(AdditionalProperties::FreeForm(true))
                );
                if open {
                    with_keyword(object, "unevaluatedProperties");
                }
            }
            let mut also = None;
            if admits(&object.schema_type, Type::String) && object.enum_values.is_none() {
                match object.pattern.as_deref().map(without_nul) {
                    None => object.pattern = Some(NO_NUL.to_owned()),
                    Some(Some(narrowed)) => object.pattern = Some(narrowed),
                    // A pattern that cannot be narrowed: both must match.
                    Some(None) => also = Some(RefOr::T(no_nul())),
                }
            }
            // Without a type it may be an array too, of anything.
            if object.schema_type == SchemaType::AnyValue && object.enum_values.is_none() {
                also = Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
                    JSON_VALUE,
                )));
            }
            if let Some(also) = also {
                let own = std::mem::take(schema);
                *schema = Schema::AllOf(AllOfBuilder::new().item(own).item(also).build());
            }
        }
        Schema::Array(array) => {
            if let ArrayItems::RefOrSchema(items) = &mut array.items {
                forbid_nul(items, reached);
            }
            for item in &mut array.prefix_items {
                forbid_nul_in(item, reached);
            }
        }
        Schema::OneOf(one_of) => one_of.items.iter_mut().for_each(|s| forbid_nul(s, reached)),
        Schema::AllOf(all_of) => all_of.items.iter_mut().for_each(|s| forbid_nul(s, reached)),
        Schema::AnyOf(any_of) => any_of.items.iter_mut().for_each(|s| forbid_nul(s, reached)),
        _ => {}
    }
}

/// Whether a value of type `ty` can match: a schema without a type admits
/// every type.
fn admits(schema_type: &SchemaType, ty: Type) -> bool {
    match schema_type {
        SchemaType::Type(t) => *t == ty,
        SchemaType::Array(types) => types.contains(&ty),
        SchemaType::AnyValue => true,
    }
}

/// `pattern` narrowed to strings without U+0000, if it can be said in one
/// pattern: as it is when it admits none already; with U+0000 added to its
/// negated classes when that is enough (`^[^@ ]+@[^@ ]+$`); and for one
/// class anywhere (`[^ \t\n\r]`, "not blank"), that class somewhere in a
/// string of no U+0000. `None` otherwise.
fn without_nul(pattern: &str) -> Option<String> {
    let narrowed = nul_in_negated_classes(pattern);
    if excludes_nul(&narrowed) {
        return Some(narrowed);
    }
    let class = narrowed.strip_prefix('[')?.strip_suffix(']')?;
    let whole = format!("[{class}]");
    if class.contains(['[', ']']) || !excludes_nul(&format!("^{whole}$")) {
        return None;
    }
    Some(format!("^[^\\u0000]*{whole}[^\\u0000]*$"))
}

/// `pattern` with `\u0000` added to each negated class (`[^…]`) that does
/// not name it.
fn nul_in_negated_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\\' => out.extend(chars.next()),
            '[' => {
                let negated = chars.next_if_eq(&'^').is_some();
                let mut class = String::new();
                let mut closed = false;
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            class.push(c);
                            class.extend(chars.next());
                        }
                        ']' => {
                            closed = true;
                            break;
                        }
                        _ => class.push(c),
                    }
                }
                if negated {
                    out.push('^');
                }
                let names_nul = class.contains("\\u0000") || class.contains("\\x00");
                out.push_str(&class);
                if negated && !names_nul && closed {
                    out.push_str("\\u0000");
                }
                if closed {
                    out.push(']');
                }
            }
            _ => {}
        }
    }
    out
}

/// Escapes that match no U+0000, outside a class: `\d`, `\w`, `\s`, a few
/// control characters, word boundaries, and escaped punctuation.
fn safe_escape(e: char) -> bool {
    matches!(e, 'd' | 'w' | 's' | 't' | 'n' | 'r' | 'f' | 'v' | 'b' | 'B')
        || (e.is_ascii_punctuation() && e != '_')
}

/// Whether `pattern` surely admits no string holding U+0000: it is anchored
/// at both ends with no alternative outside a group, has no `.`, and every
/// class and escape in it leaves U+0000 out (a negated class by naming it).
/// `false` when unsure.
fn excludes_nul(pattern: &str) -> bool {
    let Some(body) = pattern.strip_prefix('^').and_then(|b| b.strip_suffix('$')) else {
        return false;
    };
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    let mut depth = 0usize;
    while i < chars.len() {
        match chars[i] {
            '\0' | '.' => return false,
            '\\' => match chars.get(i + 1) {
                Some(e) if safe_escape(*e) => i += 1,
                // Unknown, or the `$` escaped.
                _ => return false,
            },
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '|' if depth == 0 => return false,
            '[' => match class_excludes_nul(&chars[i + 1..]) {
                Some(length) => i += length,
                None => return false,
            },
            _ => {}
        }
        i += 1;
    }
    true
}

/// A class, from after its `[`: the length up to its `]` when it leaves
/// U+0000 out.
fn class_excludes_nul(class: &[char]) -> Option<usize> {
    let negated = class.first() == Some(&'^');
    let mut i = usize::from(negated);
    let (mut names_nul, mut unsure) = (false, false);
    loop {
        match class.get(i)? {
            ']' => break,
            '\0' => names_nul = true,
            '\\' => {
                let digits = |n: usize| {
                    class
                        .get(i + 2..i + 2 + n)
                        .map(|d| d.iter().collect::<String>())
                };
                match class.get(i + 1)? {
                    'u' if digits(4).as_deref() == Some("0000") => names_nul = true,
                    'x' if digits(2).as_deref() == Some("00") => names_nul = true,
                    '0' => names_nul = true,
                    e if safe_escape(*e) => {}
                    _ => unsure = true,
                }
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    let leaves_nul_out = if negated { names_nul } else { !names_nul };
    (leaves_nul_out && !unsure).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_field_that_holds_a_nul() {
        let body = serde_json::json!({"card": {"content": "x\u{0}y", "title": "ok"}});
        assert_eq!(nul_in_json(&body, "").as_deref(), Some("card.content"));
        let list =
            serde_json::json!({"locks": [{"lockableParam": "1"}, {"lockableParam": "\u{0}"}]});
        assert_eq!(
            nul_in_json(&list, "").as_deref(),
            Some("locks[1].lockableParam")
        );
        assert_eq!(nul_in_json(&serde_json::json!({"a": "fine"}), ""), None);
        assert_eq!(
            nul_in_json(&serde_json::json!("\u{0}"), "").as_deref(),
            Some("the body")
        );
    }

    #[test]
    fn finds_an_encoded_nul_in_the_path_or_a_parameter() {
        assert_eq!(
            nul_in_target("/cases/a%00b", "").as_deref(),
            Some("The path")
        );
        assert_eq!(
            nul_in_target("/locks", "case=x%00").as_deref(),
            Some("The query parameter case")
        );
        assert_eq!(nul_in_target("/locks", "case=x%2500"), None);
        assert_eq!(nul_in_target("/locks", "case=sample"), None);
    }

    #[test]
    fn patterns_are_narrowed_to_strings_without_nul() {
        // Already without: kept.
        for kept in [
            "^[A-Za-z0-9_-]{1,64}$",
            r#"^([0-9]{1,18}|"[0-9]{1,18}"|<[0-9]{1,18}>)$"#,
            r#"^(\*|(W/)?"?[0-9]{1,18}"?)$"#,
            NO_NUL,
        ] {
            assert_eq!(without_nul(kept).as_deref(), Some(kept), "{kept}");
        }
        // Negated classes learn to leave U+0000 out.
        assert_eq!(
            without_nul(r"^[^@ \t\n\r]+@[^@ \t\n\r]+$").as_deref(),
            Some(r"^[^@ \t\n\r\u0000]+@[^@ \t\n\r\u0000]+$")
        );
        // "Not blank": the class somewhere, in a string without U+0000.
        assert_eq!(
            without_nul(r"[^ \t\n\r]").as_deref(),
            Some(r"^[^\u0000]*[^ \t\n\r\u0000][^\u0000]*$")
        );
        // Unsure: left to an `allOf` with NO_NUL.
        for unsure in [
            "^a.b$",
            "abc",
            "^a|b$",
            r"^\D+$",
            "^[\\x00-\\x1f]$",
            r"^[^a-z]\$",
        ] {
            assert_eq!(without_nul(unsure), None, "{unsure}");
        }
    }

    #[test]
    fn spots_the_escape_in_a_raw_body() {
        assert!(memchr_escape(br#"{"a":"x\u0000"}"#));
        assert!(!memchr_escape(br#"{"a":"x\u0001"}"#));
    }
}
