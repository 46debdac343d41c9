//! The checks across a schema file's types: plurals and keys that collide,
//! parents that are not declared or form a cycle, field names and the
//! field lists (`required`, `unique`, `label`) against the fields.

use std::collections::{HashMap, HashSet};

use super::{Derived, Problems, RawField, RawType, CASE_KEYS, RECORD_KEYS};
use crate::schema::fields::{Field, FieldKind};
use crate::schema::names::{self, path_key};
use crate::schema::{Store, RESERVED_PLURALS, TAKEN_NAMES};

pub(super) fn check_across(raws: &[RawType], derived: &[Derived], problems: &mut Problems) {
    let index: HashMap<&str, usize> = raws
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let declared: Vec<&str> = raws.iter().map(|r| r.name.as_str()).collect();

    for (i, (raw, d)) in raws.iter().zip(derived).enumerate() {
        problems.about_type(i);
        let path = &raw.path;

        if d.store == Store::External {
            let given = [
                ("fields", raw.fields.is_some()),
                ("required", raw.required.is_some()),
                ("unique", raw.unique.is_some()),
                ("label", raw.label.is_some()),
                ("ordered", raw.ordered.is_some()),
                ("movable", raw.movable.is_some()),
            ];
            for (key, _) in given.iter().filter(|(_, given)| *given) {
                problems.add(
                    &format!("{path}.{key}"),
                    "not allowed on an external type (its records live in your database; baton only locks them)",
                );
            }
            if let Some(parent) = &d.parent {
                problems.add(
                    &format!("{path}.parent"),
                    format!("an external type's parent is the case, not {parent} (write \"Case\" or leave parent out)"),
                );
            }
        }

        if let Some(parent) = &d.parent {
            match index.get(parent.as_str()) {
                None => problems.add(
                    &format!("{path}.parent"),
                    format!(
                        "no type named {parent} is declared (a parent is \"Case\" or one of: {})",
                        declared.join(", ")
                    ),
                ),
                Some(&p) if derived[p].store == Store::External && d.store == Store::Stored => {
                    problems.add(
                        &format!("{path}.parent"),
                        format!("{parent} is an external type, so it can't have children"),
                    )
                }
                Some(_) => {}
            }
        }

        if d.store == Store::Stored && raw.movable == Some(true) && d.parent.is_none() {
            problems.add(
                &format!("{path}.movable"),
                "a type under the case can't be movable (there is no other parent to move it to)",
            );
        }

        check_plural(i, raws, derived, problems);

        if d.store == Store::Stored {
            check_field_names(i, raws, derived, problems);
            check_field_lists(raw, problems);
        }
    }
}

fn check_plural(i: usize, raws: &[RawType], derived: &[Derived], problems: &mut Problems) {
    let (raw, d) = (&raws[i], &derived[i]);
    // A declared plural of the wrong shape is already told; a default one
    // from a wrong or taken name would only repeat the name's problem.
    let name_told = !names::is_pascal_case(&raw.name) || TAKEN_NAMES.contains(&raw.name.as_str());
    if !names::is_plural_name(&d.plural) || (name_told && !d.plural_declared) {
        return;
    }
    let whose = default_plural_note(raw, d);
    check_plural_is_free(i, raws, derived, problems, &whose);
    if d.store == Store::Stored {
        check_nest_key_is_free(i, raws, derived, problems, &whose);
    }
}

/// Where a problem with a default plural says so, and how to declare another.
fn default_plural_note(raw: &RawType, d: &Derived) -> String {
    if d.plural_declared {
        String::new()
    } else {
        format!(
            " (the default plural of {}; declare another with plural = \"…\")",
            raw.name
        )
    }
}

/// A plural that is a route of baton's own, or a plural, nest key or body
/// key an earlier type already has.
fn check_plural_is_free(
    i: usize,
    raws: &[RawType],
    derived: &[Derived],
    problems: &mut Problems,
    whose: &str,
) {
    let (raw, d) = (&raws[i], &derived[i]);
    let path = format!("{}.plural", raw.path);
    if RESERVED_PLURALS.contains(&d.plural.as_str()) {
        problems.add(
            &path,
            format!(
                "{} is one of baton's own routes (/{}){whose}",
                d.plural, d.plural
            ),
        );
    }
    if let Some(j) = (0..i).find(|&j| derived[j].plural == d.plural) {
        problems.add(
            &path,
            format!("{} is also the plural of {}{whose}", d.plural, raws[j].name),
        );
    } else if let Some(j) = (0..i).find(|&j| derived[j].nest_key == d.nest_key) {
        problems.add(
            &path,
            format!(
                "{} nests as {}, as {} does{whose}",
                d.plural, d.nest_key, raws[j].name
            ),
        );
    }
    if let Some(j) = (0..i).find(|&j| derived[j].body_key == d.body_key) {
        problems.add(
            &raw.path,
            format!(
                "its body key {} is also {}'s (rename one of them)",
                d.body_key, raws[j].name
            ),
        );
    }
}

/// The nest key sits beside the keys of whatever holds it in
/// `GET /cases/:slug`: the case's own keys, or the parent record's.
fn check_nest_key_is_free(
    i: usize,
    raws: &[RawType],
    derived: &[Derived],
    problems: &mut Problems,
    whose: &str,
) {
    let (raw, d) = (&raws[i], &derived[i]);
    let path = format!("{}.plural", raw.path);
    match &d.parent {
        None => {
            if CASE_KEYS.contains(&d.nest_key.as_str()) {
                problems.add(
                    &path,
                    format!(
                        "{} would nest as {}, a key a case's JSON already has{whose}",
                        d.plural, d.nest_key
                    ),
                );
            }
        }
        Some(parent) => {
            let parent_key = raws
                .iter()
                .zip(derived)
                .find(|(r, _)| &r.name == parent)
                .map(|(_, pd)| pd.parent_key.clone());
            if RECORD_KEYS.contains(&d.nest_key.as_str())
                || parent_key.as_deref() == Some(d.nest_key.as_str())
            {
                problems.add(
                    &path,
                    format!(
                        "{} would nest as {}, a key every {} record already has{whose}",
                        d.plural, d.nest_key, parent
                    ),
                );
            }
        }
    }
}

fn check_field_names(i: usize, raws: &[RawType], derived: &[Derived], problems: &mut Problems) {
    let (raw, d) = (&raws[i], &derived[i]);
    let Some(fields) = &raw.fields else {
        return;
    };
    for field in fields {
        let path = format!("{}.fields.{}", raw.path, path_key(&field.name));
        let name = field.name.as_str();
        if !names::is_field_name(name) {
            problems.add(
                &path,
                "a field name is a lower-case letter, then letters, digits or _ (like dueOn)",
            );
        } else if RECORD_KEYS.contains(&name) {
            problems.add(
                &path,
                format!("{name} is reserved: every record's JSON has it"),
            );
        } else if name == d.parent_key {
            let parent = d.parent.as_deref().unwrap_or("Case");
            problems.add(
                &path,
                format!("{name} is reserved: it carries the record's {parent} id"),
            );
        } else if let Some(j) = (0..raws.len()).find(|&j| {
            derived[j].parent.as_deref() == Some(raw.name.as_str()) && derived[j].nest_key == name
        }) {
            problems.add(
                &path,
                format!(
                    "{name} is where a {}'s {} records nest in GET /cases/:slug (rename the field or declare another plural for {})",
                    raw.name, raws[j].name, raws[j].name
                ),
            );
        }
    }
}

/// `required`, `unique` and `label` name declared fields of fitting kinds.
fn check_field_lists(raw: &RawType, problems: &mut Problems) {
    let fields: &[RawField] = raw.fields.as_deref().unwrap_or(&[]);
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    let known = if names.is_empty() {
        "the type has no fields".to_string()
    } else {
        format!("its fields: {}", names.join(", "))
    };
    let kind = |name: &str| {
        fields
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.compiled.as_ref())
            .map(Field::kind)
    };
    for (key, list) in [("required", &raw.required), ("unique", &raw.unique)] {
        let path = format!("{}.{key}", raw.path);
        let mut seen = HashSet::new();
        for name in list.iter().flatten() {
            if !names.contains(&name.as_str()) {
                problems.add(&path, format!("{name} is not a declared field ({known})"));
            } else if !seen.insert(name.as_str()) {
                problems.add(&path, format!("{name} is listed twice"));
            } else if key == "unique" && kind(name) == Some(FieldKind::Boolean) {
                problems.add(
                    &path,
                    format!("{name} is true or false, so it can't be unique"),
                );
            }
        }
    }
    if let Some(label) = &raw.label {
        let path = format!("{}.label", raw.path);
        if !names.contains(&label.as_str()) {
            problems.add(&path, format!("{label} is not a declared field ({known})"));
        } else if let Some(k) = kind(label).filter(|k| *k != FieldKind::String) {
            problems.add(
                &path,
                format!("{label} is {}; a label must be a string field", k.as_str()),
            );
        }
    }
}

/// Each cycle of parents once, naming every type in it, from its first
/// declared member.
pub(super) fn check_cycles(raws: &[RawType], problems: &mut Problems) {
    let index: HashMap<&str, usize> = raws
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let parent_of = |i: usize| {
        raws[i]
            .parent
            .as_deref()
            .and_then(|p| index.get(p).copied())
    };
    let mut reported: HashSet<usize> = HashSet::new();
    for start in 0..raws.len() {
        let mut chain = vec![start];
        let mut current = start;
        while let Some(parent) = parent_of(current) {
            if let Some(at) = chain.iter().position(|&c| c == parent) {
                let cycle = &chain[at..];
                if cycle.iter().all(|c| !reported.contains(c)) {
                    reported.extend(cycle.iter().copied());
                    problems.about_type(cycle.iter().copied().min().unwrap_or(start));
                    // Start the story at the cycle's first declared type.
                    let first = cycle
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, &c)| c)
                        .map_or(0, |(p, _)| p);
                    let mut order: Vec<&str> = cycle[first..]
                        .iter()
                        .chain(&cycle[..first])
                        .map(|&c| raws[c].name.as_str())
                        .collect();
                    order.push(order[0]);
                    let paths: Vec<String> = cycle
                        .iter()
                        .copied()
                        .collect::<std::collections::BTreeSet<usize>>()
                        .into_iter()
                        .map(|c| format!("{}.parent", raws[c].path))
                        .collect();
                    problems.add(
                        &paths.join(", "),
                        format!(
                            "the parents form a cycle: {} (every chain of parents must end at the case)",
                            order.join(" → ")
                        ),
                    );
                }
                break;
            }
            if chain.len() > raws.len() {
                break;
            }
            chain.push(parent);
            current = parent;
        }
    }
}
