//! Parse errors a user can act on: the field's own path, and a reason in the scenario's words.
//!
//! Paths. Workloads (`kind = ...`), program operations (`op = ...`) and duration distributions
//! (`dist = ...`) are serde's internally tagged enums. serde reads such a table whole before it
//! looks at the tag, then deserializes the variant from that copy, so `serde_path_to_error` loses
//! the path at the table: a wrong `threads` in a workload is reported at `vms[0].workloads[0]`.
//! [`refine`] recovers the field from the parsed document: the error's message names the
//! offending value ("invalid type: map", "invalid value: integer `-1`", "unknown variant `x`");
//! when exactly one value below the table matches that description, its path is the field's.
//! When none or several match, the table's path stands: an error is never moved to a field it
//! may not be about.
//!
//! Reasons. serde speaks of Rust types ("expected struct VmSpec", "internally tagged enum
//! WorkloadSpec", "a map"); [`reword`] says table, list and the choices instead. A name field
//! (`spinlock`, `io_path`, ...) given a number or a list is told its choices: they are read from
//! the error the parser gives when the field holds a name it does not know ([`choices_at`]).

use serde::de::Unexpected;
use serde_json::Value;

/// The tag keys of the scenario's internally tagged tables.
const TAGS: [&str; 3] = ["kind", "op", "dist"];

/// A finer path for an error reported at `path` with `msg`, or `None` to keep `path`.
pub fn refine(path: &str, msg: &str, root: &Value) -> Option<String> {
    let table = node_at(root, path)?.as_object()?;
    if !TAGS.iter().any(|t| table.contains_key(*t)) {
        return None;
    }
    let wanted = offending_value(msg)?;
    let mut found = Vec::new();
    for (k, v) in table {
        collect(v, &format!("{path}.{k}"), &wanted, &mut found);
    }
    match found.as_slice() {
        [only] => Some(only.clone()),
        _ => None,
    }
}

/// What the message says the offending value was, as serde's `Unexpected` prints it, or
/// `string "x"` for an unknown variant.
fn offending_value(msg: &str) -> Option<String> {
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        let name = rest.split('`').next()?;
        return Some(Unexpected::Str(name).to_string());
    }
    let rest = msg.strip_prefix("invalid type: ").or_else(|| msg.strip_prefix("invalid value: "))?;
    Some(rest.rsplit_once(", expected ")?.0.to_string())
}

/// How serde would describe `v` in an "invalid type" error (several spellings for null).
fn descriptions(v: &Value) -> Vec<String> {
    match v {
        Value::Null => vec!["null".into(), Unexpected::Unit.to_string(), Unexpected::Option.to_string()],
        Value::Bool(b) => vec![Unexpected::Bool(*b).to_string()],
        Value::Number(n) => {
            let mut d = Vec::new();
            if let Some(u) = n.as_u64() {
                d.push(Unexpected::Unsigned(u).to_string());
            } else if let Some(i) = n.as_i64() {
                d.push(Unexpected::Signed(i).to_string());
            }
            if let Some(f) = n.as_f64() {
                d.push(Unexpected::Float(f).to_string());
            }
            d
        }
        Value::String(s) => vec![Unexpected::Str(s).to_string()],
        Value::Array(_) => vec![Unexpected::Seq.to_string()],
        Value::Object(_) => vec![Unexpected::Map.to_string()],
    }
}

fn collect(v: &Value, path: &str, wanted: &str, found: &mut Vec<String>) {
    if descriptions(v).iter().any(|d| d == wanted) {
        found.push(path.to_string());
    }
    match v {
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                collect(x, &format!("{path}[{i}]"), wanted, found);
            }
        }
        Value::Object(map) => {
            for (k, x) in map {
                collect(x, &format!("{path}.{k}"), wanted, found);
            }
        }
        _ => {}
    }
}

/// `msg` in the scenario's words (see the module's doc); `choices`: the names the field at the
/// error's path accepts, when it is a name field (from [`choices_at`]).
pub fn reword(msg: &str, got: Option<&Value>, choices: Option<&str>) -> String {
    let wrong_kind_for_a_name = msg.ends_with("expected string or map")
        || msg.ends_with("expected variant identifier")
        || msg == "wanted string or table";
    if let (true, Some(choices)) = (wrong_kind_for_a_name, choices) {
        let got = got.map(|v| descriptions(v).swap_remove(0)).unwrap_or_else(|| "another type".into());
        return format!("invalid type: {got}, expected {choices}");
    }
    if msg.starts_with("invalid length ") && msg.contains("expected struct ") {
        return "invalid type: sequence, expected a table".into();
    }
    let mut out = msg.to_string();
    if let Some(i) = out.find("expected struct ") {
        out.truncate(i);
        out.push_str("expected a table");
    }
    for (rust, ours) in [
        ("expected internally tagged enum WorkloadSpec", "expected a workload (a table with `kind`)"),
        ("expected internally tagged enum OpSpec", "expected a program step (a table with `op`)"),
        ("expected a map", "expected a table"),
    ] {
        out = out.replace(rust, ours);
    }
    for (rust, ours) in [
        ("expected u32", "expected a whole number from 0 to 4294967295"),
        ("expected u64", "expected a whole number ≥ 0"),
        ("expected f64", "expected a number"),
        ("expected variant identifier", "expected a name"),
    ] {
        if let Some(head) = out.strip_suffix(rust) {
            out = format!("{head}{ours}");
        }
    }
    if out == "invalid type: map, expected a sequence" {
        out.push_str(" (a list: in TOML each entry is a [[...]] table, or write [ ... ])");
    }
    out
}

/// The names a name field at `path` accepts ("one of `a`, `b`"), read from the parser's error
/// for a name it does not know; `None` when the field is not a name field.
pub fn choices_at<T: serde::de::DeserializeOwned>(doc: &Value, path: &str) -> Option<String> {
    const PROBE: &str = "\u{7f}?";
    let mut probe = doc.clone();
    *probe.pointer_mut(&pointer(path)?)? = Value::String(PROBE.into());
    let e = serde_path_to_error::deserialize::<_, T>(&probe).err()?;
    let msg = e.inner().to_string();
    let rest = msg.strip_prefix(&format!("unknown variant `{PROBE}`, expected "))?;
    Some(rest.to_string())
}

/// The value at a `serde_path_to_error` path such as `vms[0].workloads[1]`.
pub fn node_at<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    root.pointer(&pointer(path)?)
}

/// That path as a JSON pointer (RFC 6901, serde_json's `Value::pointer`): `/vms/0/workloads/1`.
fn pointer(path: &str) -> Option<String> {
    let mut out = String::new();
    for part in path.split('.') {
        let (key, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push('/');
            out.push_str(&key.replace('~', "~0").replace('/', "~1"));
        }
        for idx in indices.split('[').skip(1) {
            let i: usize = idx.strip_suffix(']')?.parse().ok()?;
            out.push_str(&format!("/{i}"));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{from_json_str, from_toml_str};

    const BASE: &str = r#"
        [host]
        cores_per_socket = 4
        [[vms]]
        vcpus = 2
        [[vms.workloads]]
        kind = "parallel"
        threads = 2
    "#;

    fn toml_err(extra_in_workload: &str) -> String {
        let text = format!("{BASE}{extra_in_workload}\n");
        from_toml_str(&text).unwrap_err().to_string()
    }

    #[test]
    fn a_wrong_field_inside_a_workload_is_named_by_its_own_path() {
        let e = toml_err("cs_us = -1\nbarrier_every = \"often\"");
        assert!(e.starts_with("vms[0].workloads[0].barrier_every: "), "{e}");
    }

    #[test]
    fn a_field_inside_a_program_op_inside_a_custom_workload_is_named() {
        let text = r#"{"host": {"cores_per_socket": 2}, "vms": [{"vcpus": 1, "workloads": [
            {"kind": "custom", "groups": [{"threads": 1, "program": [
                {"op": "compute", "us": 5}, {"op": "barrier", "barrier": "b", "parties": -3}]}]}]}]}"#;
        let e = from_json_str(text).unwrap_err().to_string();
        assert!(e.starts_with("vms[0].workloads[0].groups[0].program[1].parties: "), "{e}");
    }

    #[test]
    fn an_ambiguous_value_keeps_the_tables_path() {
        // Two maps below the workload: the error cannot be pinned on one of them.
        let text = r#"{"host": {"cores_per_socket": 2}, "vms": [{"vcpus": 1, "workloads": [
            {"kind": "parallel", "threads": {}, "cs_us": {"dist": "exp", "mean_us": 3}}]}]}"#;
        let e = from_json_str(text).unwrap_err();
        assert_eq!(e.path, "vms[0].workloads[0]", "{e}");
    }

    #[test]
    fn a_json_enum_of_the_wrong_type_gets_a_reason_not_a_column() {
        let text = r#"{"host": {"cores_per_socket": 2}, "vms": [{"vcpus": 1, "guest": {"spinlock": 0}, "workloads": []}]}"#;
        let e = from_json_str(text).unwrap_err();
        assert_eq!(e.path, "vms[0].guest.spinlock");
        assert!(e.reason.starts_with("invalid type: integer `0`"), "{e}");
    }

    #[test]
    fn a_json_syntax_error_says_so_with_its_position_and_no_path() {
        let e = from_json_str("{not json").unwrap_err();
        assert_eq!(e.path, "");
        assert!(e.reason.starts_with("JSON syntax error: ") && e.reason.contains("line 1 column 2"), "{e}");
    }

    #[test]
    fn a_name_field_of_the_wrong_type_is_told_its_choices() {
        let text = r#"{"host": {"cores_per_socket": 2}, "vms": [{"vcpus": 1, "io_path": 0, "workloads": []}]}"#;
        let e = from_json_str(text).unwrap_err();
        assert_eq!(e.path, "vms[0].io_path");
        assert_eq!(e.reason, "invalid type: integer `0`, expected `emulated` or `passthrough`");
        let e = from_toml_str("[host]\ncores_per_socket = 2\n[[vms]]\nvcpus = 1\nio_path = [1]\n").unwrap_err();
        assert_eq!(e.to_string(), "vms[0].io_path: invalid type: sequence, expected `emulated` or `passthrough`");
        let text = r#"{"host": {"cores_per_socket": 2}, "vms": [{"vcpus": 1, "workloads": [{"kind": null}]}]}"#;
        let e = from_json_str(text).unwrap_err();
        assert!(e.reason.starts_with("invalid type: null, expected one of `hog`, `parallel`"), "{e}");
    }

    #[test]
    fn rust_type_names_are_said_as_tables() {
        let e = from_toml_str("vms = [1]\n[host]\ncores_per_socket = 2\n").unwrap_err();
        assert_eq!(e.to_string(), "vms[0]: invalid type: integer `1`, expected a table");
        let e = from_toml_str("[host]\ncores_per_socket = 2\n[vms]\nvcpus = 1\n").unwrap_err();
        assert!(e.to_string().starts_with("vms: invalid type: map, expected a sequence (a list: in TOML"), "{e}");
        let text = r#"{"host": {"cores_per_socket": 2}, "vms": [{"vcpus": 1, "workloads": [7]}]}"#;
        let e = from_json_str(text).unwrap_err();
        assert_eq!(e.reason, "invalid type: integer `7`, expected a workload (a table with `kind`)");
        let e = from_toml_str("[host]\ncores_per_socket = -2\n[[vms]]\nvcpus = 1.5\n").unwrap_err();
        assert_eq!(e.to_string(), "host.cores_per_socket: invalid value: integer `-2`, expected a whole number from 0 to 4294967295");
        let text = r#"{"host": [2], "vms": []}"#;
        assert_eq!(from_json_str(text).unwrap_err().to_string(), "host: invalid type: sequence, expected a table");
    }

    #[test]
    fn paths_are_followed_through_keys_and_indices() {
        let v: Value = serde_json::from_str(r#"{"a": [{"b": [1, {"c": 2}]}]}"#).unwrap();
        assert_eq!(node_at(&v, "a[0].b[1].c"), Some(&Value::from(2)));
        assert_eq!(node_at(&v, "a[3]"), None);
    }
}
