//! The declared types in the OpenAPI document: built at start from the
//! schema in force. Per type: its record (`Ticket`), its create and update
//! bodies (`NewTicketBody`, `TicketUpdateBody`), its record with its
//! children as `GET /cases/:slug` nests it (`TicketWithComments`), and its four routes;
//! `CaseDetail` gets the case's top types. The conventions every route
//! shares (errors, the session header) are added after, as for the static
//! routes.

use serde_json::Value;
use std::ops::Not;
use utoipa::openapi::path::{
    HttpMethod, Operation, OperationBuilder, ParameterBuilder, ParameterIn,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{AllOfBuilder, ArrayBuilder, Schema};
use utoipa::openapi::{
    ContentBuilder, ObjectBuilder, OpenApi as Document, Ref, RefOr, Required, ResponseBuilder, Type,
};
use utoipa::IntoParams;

use super::extract::WriteHeaders;
use super::records::{create_path, member_path};
use crate::schema::{self, RecordType, Store};

/// Adds every declared type's components and paths to `doc`.
pub fn add_declared_types(doc: &mut Document) {
    let schema = schema::in_force();
    let components = doc.components.get_or_insert_with(Default::default);
    for ty in schema.types().iter().filter(|t| t.store == Store::Stored) {
        add_type_schemas(&mut components.schemas, ty);
    }
    let external_names: Vec<String> = schema
        .types()
        .iter()
        .filter(|t| t.store == Store::External)
        .map(|t| t.name.clone())
        .collect();
    list_lockable_records(&mut components.schemas, &external_names);
    name_external_types(&mut components.schemas, &external_names);
    nest_top_types_in_case_detail(&mut components.schemas);
    for ty in schema.types().iter().filter(|t| t.store == Store::Stored) {
        add_paths(doc, ty);
    }
}

type Schemas = std::collections::BTreeMap<String, RefOr<Schema>>;

/// A stored type's record, its create and update fields and bodies, and
/// its record with its children where it has child types.
fn add_type_schemas(schemas: &mut Schemas, ty: &RecordType) {
    schemas.insert(ty.name.clone(), record_schema(ty).into());
    schemas.insert(
        format!("New{}Fields", ty.name),
        fields_schema(ty, true).into(),
    );
    schemas.insert(
        format!("New{}Body", ty.name),
        body_schema(ty, &format!("New{}Fields", ty.name)).into(),
    );
    schemas.insert(
        format!("{}UpdateFields", ty.name),
        fields_schema(ty, false).into(),
    );
    schemas.insert(
        format!("{}UpdateBody", ty.name),
        body_schema(ty, &format!("{}UpdateFields", ty.name)).into(),
    );
    if let Some(name) = nested_name(ty) {
        schemas.insert(name, nested_schema(ty).into());
    }
}

/// `Record`: any lockable record, the case or a record of any declared type.
fn list_lockable_records(schemas: &mut Schemas, external_names: &[String]) {
    let Some(RefOr::T(Schema::OneOf(record))) = schemas.get_mut("Record") else {
        return;
    };
    record.items = std::iter::once(reference("Case"))
        .chain(
            schema::in_force()
                .types()
                .iter()
                .filter(|t| t.store == Store::Stored)
                .map(|t| reference(&t.name)),
        )
        .chain(
            external_names
                .is_empty()
                .not()
                .then(|| reference("ExternalRecord")),
        )
        .collect();
}

/// `ExternalRecord`: a record of an external type; its `type` is one of them.
fn name_external_types(schemas: &mut Schemas, external_names: &[String]) {
    if external_names.is_empty() {
        return;
    }
    if let Some(RefOr::T(Schema::Object(external))) = schemas.get_mut("ExternalRecord") {
        external.properties.insert(
            "type".into(),
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(external_names.to_vec()))
                .into(),
        );
    }
}

/// `CaseDetail`: the flattened tree's placeholder gives way to the case's
/// top types.
fn nest_top_types_in_case_detail(schemas: &mut Schemas) {
    let Some(RefOr::T(Schema::AllOf(detail))) = schemas.get_mut("CaseDetail") else {
        return;
    };
    detail.items.retain(|item| {
        !matches!(item, RefOr::T(Schema::Object(o)) if o.properties.is_empty() && o.description.is_some())
    });
    let mut top = ObjectBuilder::new().schema_type(Type::Object);
    for ty in schema::in_force().children_of(None) {
        if ty.store == Store::Stored {
            top = top
                .property(&ty.nest_key, ArrayBuilder::new().items(nested_ref(ty)))
                .required(&ty.nest_key);
        }
    }
    detail.items.push(RefOr::T(Schema::Object(top.build())));
}

/// "a" or "an", by the word's first letter.
fn article(words: &str) -> &'static str {
    match words.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

fn reference(name: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(name))
}

/// A declared field's JSON Schema as the document's schema type. A field
/// declared by its `enum` alone gets the `type` its values have (the
/// document's object type would otherwise read it as an object).
fn field_schema(schema: &Value) -> RefOr<Schema> {
    let mut schema = schema.clone();
    if let Some(object) = schema.as_object_mut() {
        with_type(object);
    }
    serde_json::from_value::<Schema>(schema)
        .map(RefOr::T)
        .unwrap_or_else(|_| RefOr::T(Schema::Object(ObjectBuilder::new().build())))
}

fn integer() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Integer).format(Some(
        utoipa::openapi::SchemaFormat::KnownFormat(utoipa::openapi::KnownFormat::Int64),
    ))
}

fn timestamp() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String).format(Some(
        utoipa::openapi::SchemaFormat::KnownFormat(utoipa::openapi::KnownFormat::DateTime),
    ))
}

/// `Ticket`: `Identity` (its `type` and `table` literals are added with the
/// other records') and the record's own keys.
fn record_schema(ty: &RecordType) -> Schema {
    let mut own = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("caseId", integer())
        .required("caseId");
    if ty.parent.is_some() {
        own = own
            .property(&ty.parent_key, integer())
            .required(&ty.parent_key);
    }
    if ty.ordered {
        own = own
            .property(
                "position",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(0))
                    .description(Some("Its place among its siblings, from 0.")),
            )
            .required("position");
    }
    for field in &ty.fields {
        own = own
            .property(&field.name, field_schema(&field.schema))
            .required(&field.name);
    }
    own = own
        .property(
            "version",
            integer().description(Some(
                "Starts at 1; every update increments it. Send it back as `If-Match`.",
            )),
        )
        .required("version")
        .property("createdAt", timestamp())
        .required("createdAt")
        .property("updatedAt", timestamp())
        .required("updatedAt");
    Schema::AllOf(
        AllOfBuilder::new()
            .item(reference("Identity"))
            .item(own)
            .description(Some(format!(
                "{} {} record.",
                capitalized(article(&ty.words)),
                ty.words
            )))
            .build(),
    )
}

/// `NewTicketFields` / `TicketUpdateFields`.
fn fields_schema(ty: &RecordType, creating: bool) -> Schema {
    let mut fields = ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(
            utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
        ));
    for field in &ty.fields {
        let mut declared = field.schema.clone();
        if !creating {
            // A default fills in a create; an update leaves out what it keeps.
            if let Some(object) = declared.as_object_mut() {
                object.remove("default");
            }
        }
        // `null` is "not given": fine wherever the field may be left out.
        let required = creating && ty.required.contains(&field.name);
        if !required {
            declared = nullable(declared);
        }
        fields = fields.property(&field.name, field_schema(&declared));
        if creating && ty.required.contains(&field.name) {
            fields = fields.required(&field.name);
        }
    }
    if ty.ordered {
        fields = fields.property(
            "position",
            ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
                    Type::Integer,
                    Type::Null,
                ]))
                .minimum(Some(0))
                .maximum(Some(crate::models::record::MAX_POSITION))
                .description(Some(
                    "Where it goes among its siblings (one there, and those after it, move up); \
                     the end when left out.",
                )),
        );
    }
    if !creating && ty.movable {
        fields = fields.property(&ty.parent_key, move_target(ty));
    }
    Schema::Object(fields.build())
}

/// A movable type's parent key in an update: the new parent's id (digits
/// or a number, as anywhere an id is sent), or `null`, which is "not
/// given" (no move) like any field's `null`.
fn move_target(ty: &RecordType) -> RefOr<Schema> {
    let parent = ty.parent.as_deref().unwrap_or("parent");
    field_schema(&serde_json::json!({
        "oneOf": [
            { "type": "string", "pattern": "^[0-9]{1,18}$", "examples": ["12"] },
            { "type": "integer", "format": "int64", "minimum": 0, "maximum": 999_999_999_999_999_999_i64 },
            { "type": "null" }
        ],
        "description": format!(
            "Moves the record to this {parent} of its case: its id, a string of digits or a \
             number. `null`, like leaving it out, moves nothing."
        )
    }))
}

/// Gives a field declared by its `enum` alone the `type` its values have.
fn with_type(object: &mut serde_json::Map<String, Value>) {
    if object.contains_key("type") {
        return;
    }
    let values = object.get("enum").and_then(Value::as_array).cloned();
    let kind = values.unwrap_or_default().iter().find_map(|v| match v {
        Value::String(_) => Some("string"),
        Value::Bool(_) => Some("boolean"),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some("integer"),
        Value::Number(_) => Some("number"),
        _ => None,
    });
    if let Some(kind) = kind {
        object.insert("type".into(), Value::from(kind));
    }
}

/// A field's schema that also takes `null`.
fn nullable(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut() {
        with_type(object);
        if let Some(values) = object.get_mut("enum").and_then(Value::as_array_mut) {
            values.push(Value::Null);
        }
        if let Some(Value::String(kind)) = object.get("type").cloned() {
            object.insert("type".into(), serde_json::json!([kind, "null"]));
        }
    }
    schema
}

/// `{"ticket": {…}}`.
fn body_schema(ty: &RecordType, fields: &str) -> Schema {
    Schema::Object(
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .additional_properties(Some(
                utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
            ))
            .property(&ty.body_key, reference(fields))
            .required(&ty.body_key)
            .build(),
    )
}

/// The name of a type's record with its children for a
/// type that has child types (`TicketWithComments`).
fn nested_name(ty: &RecordType) -> Option<String> {
    let children: Vec<String> = schema::in_force()
        .children_of(Some(&ty.name))
        .iter()
        .filter(|c| c.store == Store::Stored)
        .map(|c| capitalized(&c.nest_key))
        .collect();
    (!children.is_empty()).then(|| format!("{}With{}", ty.name, children.join("And")))
}

fn nested_ref(ty: &RecordType) -> RefOr<Schema> {
    reference(&nested_name(ty).unwrap_or_else(|| ty.name.clone()))
}

fn nested_schema(ty: &RecordType) -> Schema {
    let mut children = ObjectBuilder::new().schema_type(Type::Object);
    for child in schema::in_force().children_of(Some(&ty.name)) {
        if child.store == Store::Stored {
            children = children
                .property(
                    &child.nest_key,
                    ArrayBuilder::new().items(nested_ref(child)),
                )
                .required(&child.nest_key);
        }
    }
    Schema::AllOf(
        AllOfBuilder::new()
            .item(reference(&ty.name))
            .item(children)
            .build(),
    )
}

fn json_response(description: &str, body: Option<&str>, etag: bool) -> utoipa::openapi::Response {
    let mut response = ResponseBuilder::new().description(description);
    if let Some(body) = body {
        response = response.content(
            "application/json",
            ContentBuilder::new().schema(Some(reference(body))).build(),
        );
    }
    if etag {
        response = response.header(
            "ETag",
            utoipa::openapi::HeaderBuilder::new()
                .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                .description(Some(
                    "The record's version, quoted (`\"3\"`): send it back as `If-Match`",
                ))
                .build(),
        );
    }
    response.build()
}

fn path_parameter(
    name: &str,
    description: String,
    string: bool,
) -> utoipa::openapi::path::Parameter {
    let schema = if string {
        ObjectBuilder::new().schema_type(Type::String)
    } else {
        integer()
    };
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

/// A declared type's four routes: create under its parent, show, update
/// and delete by id.
fn add_paths(doc: &mut Document, ty: &RecordType) {
    let parent_words = parent_words(ty);
    doc.paths.add_path_operation(
        create_path(ty),
        vec![HttpMethod::Post],
        create_operation(ty, &parent_words),
    );
    doc.paths
        .add_path_operation(member_path(ty), vec![HttpMethod::Get], show_operation(ty));
    doc.paths.add_path_operation(
        member_path(ty),
        vec![HttpMethod::Patch],
        update_operation(ty, &parent_words),
    );
    doc.paths.add_path_operation(
        member_path(ty),
        vec![HttpMethod::Delete],
        delete_operation(ty),
    );
}

/// What a type's parent is called in prose: its words, or "case".
fn parent_words(ty: &RecordType) -> String {
    ty.parent
        .as_deref()
        .and_then(|p| schema::in_force().get(p))
        .map_or_else(|| "case".to_owned(), |p| p.words.clone())
}

fn id_parameter(ty: &RecordType) -> utoipa::openapi::path::Parameter {
    path_parameter("id", format!("The {}'s id", ty.words), false)
}

/// A required JSON body of the component `schema_name`.
fn json_body(schema_name: &str) -> utoipa::openapi::request_body::RequestBody {
    RequestBodyBuilder::new()
        .required(Some(Required::True))
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(reference(schema_name)))
                .build(),
        )
        .build()
}

/// The 409 of a type with unique fields, on create and update.
fn with_conflict(operation: OperationBuilder, ty: &RecordType) -> OperationBuilder {
    if ty.unique.is_empty() {
        return operation;
    }
    operation.response(
        "409",
        json_response(
            &format!(
                "`conflict`: another {} of the case has this {}",
                ty.words,
                ty.unique.join(" or ")
            ),
            None,
            false,
        ),
    )
}

fn create_operation(ty: &RecordType, parent_words: &str) -> Operation {
    let words = &ty.words;
    let parent_param = match ty.parent {
        Some(_) => path_parameter("id", format!("The {parent_words}'s id"), false),
        None => path_parameter("slug", "The case's slug".to_owned(), true),
    };
    let locked_inside = format!(
        "`locked`: someone else holds the {parent_words} deeply (or something around it; \
         `lock` is that deep lock, `lockable` its record); nothing was created"
    );
    let create = OperationBuilder::new()
        .operation_id(Some(format!("create{}", ty.name)))
        .tag("content")
        .description(Some(format!(
            "Creates {} {words} (editors).",
            article(words)
        )))
        .parameter(parent_param)
        .request_body(Some(json_body(&format!("New{}Body", ty.name))))
        .response("201", json_response("Created", Some(&ty.name), true))
        .response(
            "403",
            json_response(
                "Only an editor or above of the case can do this",
                None,
                false,
            ),
        )
        .response("423", json_response(&locked_inside, None, false));
    with_conflict(create, ty).build()
}

fn show_operation(ty: &RecordType) -> Operation {
    OperationBuilder::new()
        .operation_id(Some(format!("show{}", ty.name)))
        .tag("content")
        .parameter(id_parameter(ty))
        .response(
            "200",
            json_response(&format!("The {}", ty.words), Some(&ty.name), true),
        )
        .response(
            "403",
            json_response("You are not a member of its case", None, false),
        )
        .build()
}

fn update_operation(ty: &RecordType, parent_words: &str) -> Operation {
    let words = &ty.words;
    let mut update = OperationBuilder::new()
        .operation_id(Some(format!("update{}", ty.name)))
        .tag("content")
        .description(Some(if ty.movable {
            format!(
                "Saves the fields given; `position` reorders it; `{}` moves it to another {parent_words} of its case (guarded).",
                ty.parent_key
            )
        } else {
            "Saves the fields given (guarded).".to_owned()
        }))
        .parameter(id_parameter(ty))
        .parameters(Some(write_headers()))
        .request_body(Some(json_body(&format!("{}UpdateBody", ty.name))))
        .response(
            "200",
            json_response("Saved; `version` went up by one", Some(&ty.name), true),
        )
        .response(
            "403",
            json_response("Only an editor or above of its case can do this", None, false),
        )
        .response("412", json_response("`stale_version` (with `current`): it changed since your `If-Match`; or `lock_lost` (with `current`): your `Lock-Token` is gone", None, false))
        .response("423", json_response("`locked`: someone else holds its lock, or a deep lock around it (or, for a move, around the target); `lockable` is the locked record; nothing was saved", None, false));
    if ty.movable {
        update = update.response(
            "404",
            json_response(
                &format!(
                    "No {words} has this id, or (a move) no {parent_words} has `{}`",
                    ty.parent_key
                ),
                None,
                false,
            ),
        );
    }
    with_conflict(update, ty).build()
}

fn delete_operation(ty: &RecordType) -> Operation {
    OperationBuilder::new()
        .operation_id(Some(format!("delete{}", ty.name)))
        .tag("content")
        .description(Some(format!(
            "Deletes the {} and everything inside it (guarded).",
            ty.words
        )))
        .parameter(id_parameter(ty))
        .parameters(Some(write_headers()))
        .response("204", json_response("Deleted", None, false))
        .response(
            "403",
            json_response(
                "Only an editor or above of its case can do this",
                None,
                false,
            ),
        )
        .response(
            "412",
            json_response(
                "`stale_version` or `lock_lost` (with `current`)",
                None,
                false,
            ),
        )
        .response(
            "423",
            json_response(
                "`locked`: someone else holds a lock on it or on something inside it",
                None,
                false,
            ),
        )
        .build()
}

/// `If-Match` and `Lock-Token`, which guard an update and a delete.
fn write_headers() -> Vec<utoipa::openapi::path::Parameter> {
    WriteHeaders::into_params(|| Some(ParameterIn::Header))
}
