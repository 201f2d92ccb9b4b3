use vmsched_core::scenario::from_toml_str;
use vmsched_core::sim::{Overrides, Simulation};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).unwrap();
    let sc = from_toml_str(&text).unwrap_or_else(|e| panic!("{e}"));
    for s in args[2..].iter() {
        let t0 = std::time::Instant::now();
        let mut sim = Simulation::new(&sc, &Overrides { scheduler: Some(s.clone()), seed: std::env::var("SEED").ok().map(|s| s.parse().unwrap()), check: false }).unwrap();
        let r = sim.run().unwrap();
        println!("{s}: sim {:.1} ms, {} ev, wall {:.2}s idle={:.3} {:?}", r.sim_time_ns as f64/1e6, r.events, t0.elapsed().as_secs_f64(), r.totals.idle_fraction, r.totals.scheduler_counters);
        for v in &r.vms {
            if std::env::var("MARKS").is_ok() { println!("{:?}", v.marks); }
            println!("  {:8} done={} t={:.1}ms mig={} refill={:.2}ms steal={:.1}ms halted={:.1}ms bar={:.1}ms bench={:?}", v.name, v.finished, v.completion_ns.unwrap_or(0) as f64/1e6, v.migrations, v.guest_ns.on_cpu.cache_refill as f64/1e6, v.guest_ns.steal as f64/1e6, v.guest_ns.halted as f64/1e6, v.guest_ns.on_cpu.barrier_spin as f64 / 1e6, v.bench);
        }
    }
}
