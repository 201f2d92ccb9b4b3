//! What `vmsched list` shows: every scheduler, controller and workload with a one-line description and
//! its source.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct CatalogEntry {
    pub name: String,
    pub description: String,
    pub source: String,
}

fn entries(v: Vec<(&str, &str, &str)>) -> Vec<CatalogEntry> {
    v.into_iter()
        .map(|(n, d, s)| CatalogEntry { name: n.into(), description: d.into(), source: s.into() })
        .collect()
}

pub fn schedulers() -> Vec<CatalogEntry> {
    entries(crate::hv::sched::catalog())
}

pub fn controllers() -> Vec<CatalogEntry> {
    entries(crate::controllers::catalog())
}

pub fn workloads() -> Vec<CatalogEntry> {
    entries(crate::guest::workloads::catalog())
}
