//! Finding the field a parse error is about, inside a tagged table.
//!
//! Workloads (`kind = ...`), program operations (`op = ...`) and duration distributions
//! (`dist = ...`) are serde's internally tagged enums. serde reads such a table whole before it
//! looks at the tag, then deserializes the variant from that copy, so `serde_path_to_error` loses
//! the path at the table: a wrong `threads` in a workload is reported at `vms[0].workloads[0]`.
//! [`refine`] recovers the field from the parsed document: the error's message names the
//! offending value ("invalid type: map", "invalid value: integer `-1`", "unknown variant `x`");
//! when exactly one value below the table matches that description, its path is the field's.
//! When none or several match, the table's path stands: an error is never moved to a field it
//! may not be about.

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

/// The value at a `serde_path_to_error` path such as `vms[0].workloads[1]`.
fn node_at<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut node = root;
    for part in path.split('.') {
        let (key, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            node = node.get(key)?;
        }
        for idx in indices.split('[').skip(1) {
            node = node.get(idx.strip_suffix(']')?.parse::<usize>().ok()?)?;
        }
    }
    Some(node)
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
    fn paths_are_followed_through_keys_and_indices() {
        let v: Value = serde_json::from_str(r#"{"a": [{"b": [1, {"c": 2}]}]}"#).unwrap();
        assert_eq!(node_at(&v, "a[0].b[1].c"), Some(&Value::from(2)));
        assert_eq!(node_at(&v, "a[3]"), None);
    }
}
