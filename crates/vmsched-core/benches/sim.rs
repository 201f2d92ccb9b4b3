//! Simulator throughput: simulated events per second and simulated seconds per wall second
//! on a small scenario, the sync-heavy two-VM case (issue 2, case 3b) and a 64-pCPU host with
//! 32 VMs of 8 vCPUs. `cargo bench -p vmsched-core`; the README quotes the medians.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use vmsched_core::scenario::{from_toml_str, Scenario};
use vmsched_core::sim::{Overrides, Simulation};

fn big_host() -> String {
    let mut s = String::from("name = \"host64-32x8\"\nduration_ms = 200\n[host]\nsockets = 4\ncores_per_socket = 16\n");
    for i in 0..32 {
        s += &format!(
            "[[vms]]\nvcpus = 8\nmemory_node = {}\n[[vms.workloads]]\nkind = \"parallel\"\ncompute_us = {{ dist = \"exp\", mean_us = 200 }}\nlocks = 2\ncs_us = 2\nshootdown_every = 20\nbarrier_every = 50\nbarrier_spin_us = 20\n",
            i % 4
        );
    }
    s
}

fn scenarios() -> Vec<(&'static str, Scenario)> {
    vec![
        ("small-fairness-1234", from_toml_str(include_str!("../../../scenarios/fairness-1234.toml")).unwrap()),
        ("case3b-sync-heavy-2vm", from_toml_str(include_str!("../../../scenarios/sync-heavy-2vm.toml")).unwrap()),
        ("host64-32vm-x8", from_toml_str(&big_host()).unwrap()),
    ]
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulate");
    g.sample_size(10);
    for (name, sc) in scenarios() {
        for sched in ["credit", "cfs"] {
            let ov = Overrides { scheduler: Some(sched.into()), ..Default::default() };
            let mut probe = Simulation::new(&sc, &ov).unwrap();
            let r = probe.run().unwrap();
            eprintln!("{name}/{sched}: {} events for {:.3} simulated s", r.events, r.sim_time_ns as f64 / 1e9);
            g.throughput(Throughput::Elements(r.events));
            g.bench_function(format!("{name}/{sched}"), |b| {
                b.iter(|| Simulation::new(&sc, &ov).unwrap().run().unwrap().events)
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
