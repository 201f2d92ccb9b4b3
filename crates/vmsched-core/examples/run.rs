//! Run a scenario file and print a per-VM summary: `cargo run --release --example run -- FILE [SCHED] [--check]`.
use vmsched_core::scenario::from_toml_str;
use vmsched_core::sim::{Overrides, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).expect("read scenario");
    let sc = match from_toml_str(&text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{}: {e}", args[1]);
            std::process::exit(2);
        }
    };
    let ov = Overrides {
        scheduler: args.get(2).filter(|a| !a.starts_with("--")).cloned(),
        seed: None,
        check: args.iter().any(|a| a == "--check"),
    };
    let t0 = std::time::Instant::now();
    let mut sim = Simulation::new(&sc, &ov).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let r = sim.run().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(3)
    });
    let wall = t0.elapsed().as_secs_f64();
    println!("{} under {}: sim {:.3} s, {} events, {:.2} s wall", r.scenario.name, r.scheduler, r.sim_time_ns as f64 / 1e9, r.events, wall);
    for v in &r.vms {
        let g = &v.guest_ns;
        let c = v.cpu_ns.max(1) as f64;
        println!(
            "  {:6} done={} t={:>9.3}ms share={:.3} ideal={:.3} lag={:+.3} useful={:.2} lock={:.2} ipi={:.2} bar={:.2} hv={:.2} refill={:.2} ple={} lhp={} lwp={} ops={}",
            v.name, v.finished, v.completion_ns.unwrap_or(r.sim_time_ns) as f64 / 1e6, v.share, v.ideal_share, v.relative_lag,
            g.on_cpu.useful as f64 / c, g.on_cpu.lock_spin as f64 / c, g.on_cpu.ipi_wait as f64 / c, g.on_cpu.barrier_spin as f64 / c,
            g.on_cpu.hv as f64 / c, g.on_cpu.cache_refill as f64 / c, v.ple_exits, v.lock_holder_preemptions, v.lock_waiter_preemptions, v.ops
        );
        if v.halt_polls > 0 {
            println!("         halt polls {} ({} successful), halt_poll={:.3}", v.halt_polls, v.halt_polls_successful, g.on_cpu.halt_poll as f64 / c);
        }
    }
    for v in &r.vms {
        println!("  {:6} spin_fraction={:.3}", v.name, v.spin_fraction);
    }
    println!(
        "  ctxsw/pcpu/s={:.0} idle={:.3} idle_while_waiting={:.3} ({:.1} ms) hv={:.4} dy={}/{}",
        r.totals.context_switches_per_pcpu_s,
        r.totals.idle_fraction,
        r.totals.idle_while_waiting_fraction,
        r.totals.idle_while_waiting_ns as f64 / 1e6,
        r.totals.hv_fraction,
        r.totals.directed_yield_successful,
        r.totals.directed_yield_attempted
    );
    if !r.totals.scheduler_counters.is_empty() {
        println!("  counters: {:?}", r.totals.scheduler_counters);
    }
    let mut last = f64::NAN;
    for a in &r.actions {
        if a.t_ms != last {
            let n = r.actions.iter().filter(|b| b.t_ms == a.t_ms).count();
            println!("  t={:.1}ms {}: {} action(s), first {}", a.t_ms, a.by, n, serde_json::to_string(&a.action).unwrap_or_default());
            last = a.t_ms;
        }
    }
}
