//! Scenario-level behaviour: determinism, common random numbers, and the double-scheduling
//! effects that must emerge (issue 2, acceptance 2-7). Every run here checks the invariants
//! after every event.

use super::*;
use crate::hv::machine::RefillOwed;
use crate::hv::vipi::VipiDelivery;
use crate::scenario::from_toml_str;

const SYNC_1VM: &str = include_str!("../../../../scenarios/sync-heavy-1vm.toml");
const SYNC_2VM: &str = include_str!("../../../../scenarios/sync-heavy-2vm.toml");
const FAIRNESS: &str = include_str!("../../../../scenarios/fairness-1234.toml");

/// Run a scenario text (under `scheduler` if given) with the invariants checked after every
/// event: the one such helper of the crate's scenario-level tests.
pub(crate) fn run_text(text: &str, scheduler: Option<&str>) -> Results {
    let sc = from_toml_str(text).expect("scenario parses");
    let ov = Overrides { scheduler: scheduler.map(str::to_string), seed: None, check: true };
    let mut sim = Simulation::new(&sc, &ov).expect("scenario builds");
    sim.run().expect("no invariant violated")
}

/// VM 0's completion time, ms.
pub(crate) fn done_ms(r: &Results) -> f64 {
    r.vms[0].completion_ns.expect("VM finished") as f64 / 1e6
}

fn completion(r: &Results, vm: usize) -> f64 {
    r.vms[vm].completion_ns.expect("VM finished") as f64
}

/// The 12-thread sync-free variant of the sync-heavy workload: no locks, shootdowns or barriers.
fn sync_free(text: &str) -> String {
    text.replace("locks_per_iteration = 2", "locks_per_iteration = 0")
        .replace("shootdown_every = 4", "shootdown_every = 0")
        .replace("barrier_every = 50", "barrier_every = 0")
}

#[test]
fn same_scenario_and_seed_give_byte_identical_results() {
    let sc = from_toml_str(SYNC_2VM).unwrap();
    let run = || {
        let mut sim = Simulation::new(&sc, &Overrides { scheduler: Some("cfs".into()), seed: Some(7), check: true }).unwrap();
        sim.run_until(40 * NS_PER_MS).unwrap();
        results_json(&sim.results())
    };
    let a = run();
    let b = run();
    assert_eq!(a, b);
    assert!(a.contains("\"schema_version\": 1"));
}

#[test]
fn different_seeds_give_different_results() {
    let sc = from_toml_str(SYNC_1VM).unwrap();
    let run = |seed| {
        let mut sim = Simulation::new(&sc, &Overrides { seed: Some(seed), check: true, ..Default::default() }).unwrap();
        sim.run_until(20 * NS_PER_MS).unwrap();
        results_json(&sim.results())
    };
    assert_ne!(run(1), run(2));
}

#[test]
fn every_thread_draws_the_same_work_under_credit_and_cfs() {
    let sc = from_toml_str(SYNC_2VM).unwrap();
    let draws = |s: &str| {
        let mut sim = Simulation::new(&sc, &Overrides { scheduler: Some(s.into()), seed: None, check: false }).unwrap();
        sim.run().unwrap();
        assert!(sim.results().vms.iter().all(|v| v.finished));
        sim.thread_draws()
    };
    let a = draws("credit");
    let b = draws("cfs");
    assert_eq!(a.len(), 24);
    assert!(a.iter().all(|(_, n, _)| *n > 1000));
    assert_eq!(a, b, "common random numbers: identical draw sequences per thread");
}

#[test]
fn dithered_hypervisor_costs_are_deterministic_and_leave_the_guests_draws_alone() {
    let plain = from_toml_str(SYNC_2VM).unwrap();
    let dithered = from_toml_str(&SYNC_2VM.replace("[hypervisor]", "[host.costs]\nhv_cost_jitter_pct = 5\n\n[hypervisor]")).unwrap();
    assert_eq!(dithered.host.costs.hv_cost_jitter_pct, 5.0);
    let run = |sc: &crate::scenario::Scenario| {
        let mut sim = Simulation::new(sc, &Overrides { scheduler: Some("cfs".into()), seed: None, check: true }).unwrap();
        sim.run().unwrap();
        assert!(sim.results().vms.iter().all(|v| v.finished));
        (results_json(&sim.results()), sim.thread_draws())
    };
    let (a, draws_a) = run(&dithered);
    let (b, _) = run(&dithered);
    assert_eq!(a, b, "the same seed gives the same dither");
    let (c, draws_c) = run(&plain);
    assert_ne!(a, c, "the dither changes the run");
    assert_eq!(draws_a, draws_c, "the guests draw the same work with and without the dither");
}

#[test]
fn double_scheduling_emerges_on_an_overcommitted_host() {
    let alone = run_text(SYNC_1VM, Some("credit"));
    let shared = run_text(SYNC_2VM, Some("credit"));
    for vm in 0..2 {
        let ratio = completion(&shared, vm) / completion(&alone, 0);
        assert!(ratio >= 2.5, "vm{vm}: slowdown {ratio:.2} < 2.5");
        let spin = shared.vms[vm].spin_fraction;
        assert!(spin >= 0.30, "vm{vm}: only {spin:.2} of guest CPU spent spinning or waiting for IPIs");
    }
    let free_alone = run_text(&sync_free(SYNC_1VM), Some("credit"));
    let free_shared = run_text(&sync_free(SYNC_2VM), Some("credit"));
    for vm in 0..2 {
        let ratio = completion(&free_shared, vm) / completion(&free_alone, 0);
        assert!((1.9..=2.2).contains(&ratio), "sync-free vm{vm}: ratio {ratio:.3} outside [1.9, 2.2]");
    }
}

#[test]
fn credit_shares_follow_vcpu_counts_and_cfs_shares_follow_vm_weights() {
    let credit = run_text(FAIRNESS, Some("credit"));
    let one = credit.vms.iter().find(|v| v.vcpus == 1).unwrap().share;
    let four = credit.vms.iter().find(|v| v.vcpus == 4).unwrap().share;
    assert!(four >= 2.0 * one, "credit: 4-vCPU VM {four:.3} vs 1-vCPU VM {one:.3}");
    let cfs = run_text(FAIRNESS, Some("cfs"));
    for v in &cfs.vms {
        assert!((v.share - 0.25).abs() <= 0.05 * 0.25, "cfs: {} has share {:.4}", v.name, v.share);
    }
}

#[test]
fn ticket_locks_lose_more_time_than_test_and_set_when_overcommitted() {
    let tas = SYNC_2VM.replace("vcpus = 12\n", "vcpus = 12\nguest = { spinlock = \"tas\" }\n");
    let r_ticket = run_text(SYNC_2VM, Some("credit"));
    let r_tas = run_text(&tas, Some("credit"));
    let spin = |r: &Results| r.vms.iter().map(|v| v.guest_ns.on_cpu.lock_spin).sum::<Ns>();
    assert!(spin(&r_ticket) > spin(&r_tas), "ticket {} ns vs tas {} ns", spin(&r_ticket), spin(&r_tas));
    let waiter_preemptions = |r: &Results| r.vms.iter().map(|v| v.lock_waiter_preemptions).sum::<u64>();
    assert!(waiter_preemptions(&r_ticket) > waiter_preemptions(&r_tas));
}

#[test]
fn ple_with_directed_yield_shortens_the_sync_heavy_case_on_cfs() {
    let on = run_text(SYNC_2VM, Some("cfs"));
    let off_text = SYNC_2VM.replace("[hypervisor]\n", "[hypervisor]\nple = { enabled = false }\n");
    let off = run_text(&off_text, Some("cfs"));
    assert!(on.vms.iter().all(|v| v.ple_exits > 0));
    assert!(off.vms.iter().all(|v| v.ple_exits == 0));
    assert!(on.totals.directed_yield_successful > 0);
    for vm in 0..2 {
        assert!(completion(&on, vm) < completion(&off, vm), "vm{vm}: PLE+DY {} vs off {}", completion(&on, vm), completion(&off, vm));
    }
}

#[test]
fn the_invariant_checker_reports_a_vcpu_on_two_pcpus() {
    let sc = from_toml_str(SYNC_1VM).unwrap();
    let mut sim = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
    sim.run_until(NS_PER_MS).unwrap();
    sim.corrupt_for_test();
    let err = sim.run_until(2 * NS_PER_MS).expect_err("the checker must catch the corruption");
    assert!(err.message.contains("pcpu"), "{}", err.message);
}

#[test]
fn pcpu_time_adds_up_to_simulated_time() {
    for s in ["credit", "cfs", "rr", "gang", "relaxed_cosched", "balance"] {
        let r = run_text(FAIRNESS, Some(s));
        for p in &r.pcpus {
            assert_eq!(p.idle_ns + p.hv_ns + p.guest_ns, r.sim_time_ns, "{s}: pcpu {}", p.pcpu);
        }
    }
}

#[test]
fn unknown_scheduler_is_a_scenario_error_naming_the_field() {
    let sc = from_toml_str(SYNC_1VM).unwrap();
    let err = Simulation::new(&sc, &Overrides { scheduler: Some("nope".into()), ..Default::default() }).err().unwrap();
    assert_eq!(err.path, "hypervisor.scheduler");
}

#[test]
fn offlined_vcpus_stop_running_and_their_threads_finish_elsewhere() {
    let sc = from_toml_str(SYNC_1VM).unwrap();
    let mut sim = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
    sim.run_until(20 * NS_PER_MS).unwrap();
    for k in 6..12 {
        sim.set_vcpu_online(0, k, false).unwrap();
    }
    // Going down waits for a preemptible moment (stop_machine); give it a millisecond.
    sim.run_until(21 * NS_PER_MS).unwrap();
    let at_offline = sim.vcpu_run_ns();
    let r = sim.run().unwrap();
    assert!(r.vms[0].finished, "all threads must finish on the remaining vCPUs");
    for k in 6..12 {
        assert_eq!(r.vcpus[k].run_ns, at_offline[k], "offline vCPU {k} ran");
    }
    assert!(sim.set_vcpu_online(0, 99, false).is_err());
}

#[test]
fn a_guest_without_tickless_idle_wakes_its_idle_vcpus_every_tick() {
    let text = SYNC_1VM.replace("vcpus = 12\n", "vcpus = 12\nguest = { tickless = false }\n").replace("threads = 12", "threads = 2");
    let ticking = run_text(&text, Some("credit"));
    let tickless = run_text(&SYNC_1VM.replace("threads = 12", "threads = 2"), Some("credit"));
    let hlt = |r: &Results| r.vms[0].exits["hlt"];
    assert!(hlt(&ticking) > hlt(&tickless) + 100, "ticking {} vs tickless {}", hlt(&ticking), hlt(&tickless));
}

fn with_guest(text: &str, guest: &str) -> String {
    text.replace("vcpus = 12\n", &format!("vcpus = 12\nguest = {guest}\n"))
}

#[test]
fn paravirt_tlb_flush_and_sched_yield_shorten_the_sync_heavy_case_on_cfs() {
    let base = run_text(SYNC_2VM, Some("cfs"));
    let tlb = run_text(&with_guest(SYNC_2VM, "{ paravirt = { tlb_flush = true } }"), Some("cfs"));
    let sy = run_text(&with_guest(SYNC_2VM, "{ paravirt = { sched_yield = true } }"), Some("cfs"));
    for vm in 0..2 {
        assert!(completion(&tlb, vm) < completion(&base, vm), "pv TLB flush vm{vm}");
        assert!(completion(&sy, vm) < completion(&base, vm), "pv sched yield vm{vm}");
        assert!(tlb.vms[vm].guest_ns.on_cpu.ipi_wait < base.vms[vm].guest_ns.on_cpu.ipi_wait);
    }
}

#[test]
fn paravirt_spinlock_waiters_halt_and_are_kicked() {
    // A short spin budget so that waiters halt often.
    let pv = with_guest(SYNC_2VM, "{ spinlock = \"queued\", paravirt = { spinlock = true, spin_loops = 64 } }");
    let plain = with_guest(SYNC_2VM, "{ spinlock = \"queued\" }");
    let r_pv = run_text(&pv, Some("cfs"));
    let r_plain = run_text(&plain, Some("cfs"));
    for vm in 0..2 {
        assert!(r_pv.vms[vm].finished);
        assert!(r_pv.vms[vm].exits["hypercall"] > 0, "unlockers kick halted waiters");
        assert!(r_pv.vms[vm].exits["hlt"] > r_plain.vms[vm].exits["hlt"], "waiters halt");
        assert_eq!(r_plain.vms[vm].exits["hypercall"], 0);
    }
}

/// Linux 5.3's directed-yield candidates (`hypervisor.ple.boost_woken`, session 32): with pv TLB
/// flush the shootdown IPIs go to running and halted vCPUs only, and a waiter's PLE exit may
/// now yield to a target its IPI woke, which then acknowledges at once. Seeds 1-3 measured in
/// session 32 (Python API): 0.41, 0.41, 0.40 s against 1.57, 1.56, 1.36 s with the 3.x-5.2 rule.
#[test]
fn yielding_to_vcpus_woken_by_an_ipi_shortens_the_sync_heavy_case_with_pv_tlb_flush() {
    let text = with_guest(SYNC_2VM, "{ paravirt = { tlb_flush = true } }");
    for seed in 1..=3 {
        let new = sync_2vm_on_cfs_s(&text, true, VipiDelivery::Ipi, seed);
        let old = sync_2vm_on_cfs_s(&text, false, VipiDelivery::Ipi, seed);
        assert!(new < 0.5 * old, "seed {seed}: {new:.3} s with Linux 5.3's rule, {old:.3} s without");
    }
}

/// Mean completion (s) of the two VMs of `text` (a `SYNC_2VM` variant) on cfs with Linux 5.3's
/// directed-yield rule or not (`boost_woken`), the given virtual-interrupt delivery and seed.
fn sync_2vm_on_cfs_s(text: &str, boost_woken: bool, delivery: VipiDelivery, seed: u64) -> f64 {
    let mut sc = from_toml_str(text).unwrap();
    sc.hypervisor.ple.boost_woken = boost_woken;
    sc.hypervisor.vipi_delivery = delivery;
    let ov = Overrides { scheduler: Some("cfs".into()), seed: Some(seed), check: true };
    let r = Simulation::new(&sc, &ov).unwrap().run().unwrap();
    (0..2).map(|vm| completion(&r, vm)).sum::<f64>() / 2e9
}

/// Posted interrupts (`vipi_delivery = "posted"`, APICv) under Linux 5.3's rule: a vCPU the host
/// preempted in user mode while a shootdown IPI waits in its PI descriptor becomes a
/// directed-yield candidate (`kvm_arch_dy_has_pending_interrupt`), so waiters yield to the
/// targets they wait for. Seeds 1-3 measured in session 33 (the later VM's completion, Python
/// API): 0.50, 0.51, 0.50 s against 2.54, 2.31, 2.29 s with the 3.x-5.2 rule and 1.45, 1.56,
/// 1.61 s with physical-IPI delivery and the 5.3 rule.
#[test]
fn posted_interrupts_make_preempted_ipi_targets_yield_candidates_in_the_sync_heavy_case() {
    for seed in 1..=3 {
        let posted = sync_2vm_on_cfs_s(SYNC_2VM, true, VipiDelivery::Posted, seed);
        let old_rule = sync_2vm_on_cfs_s(SYNC_2VM, false, VipiDelivery::Posted, seed);
        let exits = sync_2vm_on_cfs_s(SYNC_2VM, true, VipiDelivery::Ipi, seed);
        assert!(posted < 0.5 * old_rule, "seed {seed}: {posted:.3} s with Linux 5.3's rule, {old_rule:.3} s without");
        assert!(posted < 0.5 * exits, "seed {seed}: {posted:.3} s posted, {exits:.3} s with physical IPIs");
    }
}

/// KVM reports a vCPU preempted in steal time (what pv TLB flush and `vcpu_is_preempted` read)
/// only if it was descheduled while runnable at an instruction boundary, i.e. through a host
/// interrupt exit: a vCPU that gave its pCPU away from a PLE exit is descheduled runnable
/// (`vcpu->preempted`) but not reported, and neither is a halted vCPU or one woken from halt
/// that waits for a pCPU (x86.c `kvm_steal_time_set_preempted`). Sampled every 0.5 ms over
/// 200 ms of the sync-heavy case, where all kinds occur (seed 1: 716 reported, 75 yielded, 2003
/// woken-and-waiting samples).
#[test]
fn only_vcpus_preempted_by_the_host_are_reported_preempted_to_the_guest() {
    let sc = from_toml_str(&with_guest(SYNC_2VM, "{ paravirt = { tlb_flush = true } }")).unwrap();
    let mut sim = Simulation::new(&sc, &Overrides { scheduler: Some("cfs".into()), seed: None, check: true }).unwrap();
    let (mut reported, mut yielded_unreported, mut woken) = (0, 0, 0);
    for step in 1..=400 {
        sim.run_until(step * 500_000).unwrap();
        for vc in &sim.w.vcpus {
            match (vc.run, vc.preempted, vc.steal_preempted) {
                (RunState::Runnable, true, true) => reported += 1,
                (RunState::Runnable, true, false) => yielded_unreported += 1,
                (RunState::Runnable, false, _) => woken += 1,
                _ => {}
            }
            if vc.run == RunState::Blocked {
                assert!(!vc.steal_preempted, "a halted vCPU is never reported preempted");
            }
        }
    }
    assert!(reported > 0 && yielded_unreported > 0 && woken > 0, "reported {reported}, yielded {yielded_unreported}, woken {woken}");
}

fn run_seeded(text: &str, scheduler: &str, seed: u64) -> Results {
    let sc = from_toml_str(text).expect("scenario parses");
    let ov = Overrides { scheduler: Some(scheduler.to_string()), seed: Some(seed), check: true };
    Simulation::new(&sc, &ov).expect("scenario builds").run().expect("no invariant violated")
}

/// Issue 3 acceptance: pv spinlocks shorten the sync-heavy two-VM case on `cfs`, against native
/// qspinlock (FIFO hand-off) with the same seeds. The case is 76-82 % IPI wait, which pv
/// spinlocks do not touch, so the gain is small beside one seed's scatter: per seed the two
/// VMs' mean completion moves by about 11 % (standard deviation of the paired ratio) while the
/// mean gain is about 2 %. Over 16 seeds that is a coin toss (pv ahead by 0.2 % there in
/// session 31, behind after the spin-wait refill deferral), so the claim is on the paired ratio
/// averaged over 64 seeds, whose standard error is about 1.4 %. Measured in session 31 (Python
/// API) after the deferral: seeds 1-64 pv ahead by 1.4 %, seeds 65-256 (an independent sample)
/// by 2.4 % ± 0.8 %; before it, seeds 1-64 by 2.2 %.
#[test]
fn paravirt_spinlocks_shorten_the_sync_heavy_case_on_cfs_on_average_over_seeds() {
    let plain = with_guest(SYNC_2VM, "{ spinlock = \"queued\" }");
    let pv = with_guest(SYNC_2VM, "{ spinlock = \"queued\", paravirt = { spinlock = true } }");
    let case = |r: &Results| (completion(r, 0) + completion(r, 1)) / 2.0;
    let per_seed: Vec<(f64, u64, u64)> = parallel_over_seeds(1..=64, |seed| {
        let (a, b) = (run_seeded(&plain, "cfs", seed), run_seeded(&pv, "cfs", seed));
        let lwp = |r: &Results| r.vms.iter().map(|v| v.lock_waiter_preemptions).sum::<u64>();
        (case(&b) / case(&a), lwp(&a), lwp(&b))
    });
    let n = per_seed.len() as f64;
    let ratio = per_seed.iter().map(|x| x.0).sum::<f64>() / n;
    let sd = (per_seed.iter().map(|x| (x.0 - ratio).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    assert!(ratio < 1.0, "pv / native completion, mean over seeds: {ratio:.4} (per-seed sd {sd:.3})");
    let (lwp_plain, lwp_pv) = per_seed.iter().fold((0, 0), |(a, b), x| (a + x.1, b + x.2));
    assert!(lwp_pv < lwp_plain, "lock-waiter preemptions pv {lwp_pv} vs native {lwp_plain}");
}

/// `f(seed)` for every seed, spread over the available CPUs; results in seed order.
fn parallel_over_seeds<T: Send>(seeds: std::ops::RangeInclusive<u64>, f: impl Fn(u64) -> T + Sync) -> Vec<T> {
    let seeds: Vec<u64> = seeds.collect();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(seeds.len()).max(1);
    let chunk = seeds.len().div_ceil(workers);
    std::thread::scope(|s| {
        let handles: Vec<_> = seeds.chunks(chunk).map(|c| s.spawn(|| c.iter().map(|&x| f(x)).collect::<Vec<T>>())).collect();
        handles.into_iter().flat_map(|h| h.join().expect("a seed's run panicked")).collect()
    })
}

/// Hybrid pv qspinlock: while the MCS queue head has not set the pending bit (its vCPU has not
/// run since it became head), running spinners steal the free lock instead of waiting for it,
/// so fewer releases stall on a descheduled waiter than with native FIFO hand-off.
#[test]
fn paravirt_spinlock_stealing_cuts_lock_waiter_preemptions() {
    let pv = run_text(&with_guest(SYNC_2VM, "{ spinlock = \"queued\", paravirt = { spinlock = true } }"), Some("cfs"));
    let plain = run_text(&with_guest(SYNC_2VM, "{ spinlock = \"queued\" }"), Some("cfs"));
    for vm in 0..2 {
        let (a, b) = (pv.vms[vm].lock_waiter_preemptions, plain.vms[vm].lock_waiter_preemptions);
        assert!(a < b, "vm{vm}: pv {a} vs native {b} lock-waiter preemptions");
    }
}

// ---- seed 001: tasklets and CSRC on the SPECvirt-like consolidation mix ----

const SPECVIRT: &str = include_str!("../../../../scenarios/consolidation-specvirt.toml");

/// The consolidation scenario with every server's arrival rate scaled by `load`, under
/// `tasklet` mode and with or without CSRC.
fn specvirt(load: f64, tasklet: &str, csrc: bool, duration_ms: Option<f64>) -> Results {
    specvirt_seeded(load, tasklet, csrc, duration_ms, None)
}

/// A halt-polling vCPU whose pCPU is called to run idle-vCPU tasklets (Xen 4.1 credit with
/// `hypervisor.halt_poll` set, which only a user would combine) blocks, and the pCPU switches
/// to the idle vCPU for the tasklets. Until session 38 the ended poll turned the call into a
/// block's, the scheduler picked another vCPU, and the tasklets ran beside it: the pCPU counted
/// that vCPU's run twice (found by fuzzing the built-in scenarios: 8.9 us too many 2 ms into
/// the arena's consolidation mix).
#[test]
fn a_tasklet_call_that_ends_a_halt_poll_runs_the_tasklets_in_the_idle_vcpu() {
    let mut sc = from_toml_str(SPECVIRT).expect("scenario parses");
    sc.duration_ms = Some(200.0);
    sc.hypervisor.halt_poll = crate::hv::halt_poll::HaltPollSpec { max_ns: Some(200_000), ..Default::default() };
    for seed in 1..=3 {
        let mut sim = Simulation::new(&sc, &Overrides { seed: Some(seed), check: true, ..Default::default() }).unwrap();
        let r = sim.run().expect("pCPU time adds up");
        let polls: u64 = r.vms.iter().map(|v| v.halt_polls).sum();
        assert!(polls > 0, "seed {seed}: the vCPUs halt-poll");
    }
}

fn specvirt_seeded(load: f64, tasklet: &str, csrc: bool, duration_ms: Option<f64>, seed: Option<u64>) -> Results {
    let mut sc = from_toml_str(SPECVIRT).expect("scenario parses");
    if let Some(seed) = seed {
        sc.seed = seed;
    }
    if duration_ms.is_some() {
        sc.duration_ms = duration_ms;
    }
    sc.hypervisor.params.insert("tasklet".into(), toml::Value::String(tasklet.into()));
    sc.hypervisor.params.insert("csrc".into(), toml::Value::Boolean(csrc));
    for vm in &mut sc.vms {
        for w in &mut vm.workloads {
            if let WorkloadSpec::Server(p) = w {
                p.rate_per_s = Some(p.rate() * load);
            }
        }
    }
    crate::scenario::validate(&sc).expect("still valid");
    let mut sim = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
    sim.run().expect("no invariant violated")
}

fn describe(label: &str, r: &Results) -> String {
    let reqs: u64 = r.vms.iter().map(|v| v.requests.count).sum();
    let mean = r.vms.iter().map(|v| v.requests.mean_ms * v.requests.count as f64).sum::<f64>() / reqs.max(1) as f64;
    let worst_p99 = r.vms.iter().map(|v| v.requests.p99_ms).fold(0.0, f64::max);
    let busy = 1.0 - r.totals.idle_fraction;
    format!(
        "{label:24} ctxsw/pCPU-s {:6.0}  sched/pCPU-s {:6.0}  busy {:.3}  hv {:.3}  irq/s {:6.0}  requests {reqs:6}  mean {mean:.3} ms  worst-VM p99 {worst_p99:.3} ms",
        r.totals.context_switches_per_pcpu_s,
        r.totals.sched_calls_per_pcpu_s,
        busy,
        r.totals.hv_fraction,
        r.pcpus.iter().map(|p| p.device_irqs).sum::<u64>() as f64 / (r.sim_time_ns as f64 / 1e9),
    )
}

/// Seed 001 §5.2, §5.3, Tables 3-4: on the consolidation mix, softirq tasklets cut context
/// switches per pCPU-second relative to idle-vCPU tasklets, and CSRC on top of them cuts
/// them further under load without raising them at any load; response times near the peak
/// (load 1.0, the highest whose runs keep up with the offered requests) improve with softirq
/// tasklets. Loads scale every server's arrival rate.
#[test]
fn softirq_tasklets_and_csrc_reduce_context_switches_on_the_consolidation_mix() {
    let loads = [0.5, 1.0, 1.3];
    let mut rows = Vec::new();
    for &load in &loads {
        let idle = specvirt(load, "idle_vcpu", false, None);
        let soft = specvirt(load, "softirq", false, None);
        let csrc = specvirt(load, "softirq", true, None);
        for (label, r) in [("idle-vCPU tasklets", &idle), ("softirq tasklets", &soft), ("softirq tasklets + CSRC", &csrc)] {
            eprintln!("load {load:.1}: {}", describe(label, r));
        }
        // The same clients: arrivals come from per-port streams, independent of scheduling.
        let irqs = |r: &Results| r.pcpus.iter().map(|p| p.device_irqs).sum::<u64>();
        assert!(irqs(&idle) > 1000 && irqs(&soft) > 1000);
        let cs = |r: &Results| r.totals.context_switches_per_pcpu_s;
        assert!(cs(&soft) < cs(&idle), "load {load}: softirq {:.0} vs idle-vCPU {:.0} switches/pCPU-s", cs(&soft), cs(&idle));
        // Where CSRC seldom skips (low load) its run only diverges from softirq's by chance:
        // 6,730 vs 6,712 switches/pCPU-s at load 0.5 under Xen 4.1's wake-up (wake = xen41).
        assert!(cs(&csrc) <= 1.01 * cs(&soft), "load {load}: CSRC raised switches: {:.0} vs {:.0}", cs(&csrc), cs(&soft));
        rows.push((load, idle, soft, csrc));
    }
    let (_, idle, soft, csrc) = rows.last().unwrap();
    let cs = |r: &Results| r.totals.context_switches_per_pcpu_s;
    assert!(cs(csrc) < 0.97 * cs(soft), "highest load: CSRC {:.0} vs softirq {:.0} switches/pCPU-s", cs(csrc), cs(soft));
    let mean_ms = |r: &Results| {
        let n: u64 = r.vms.iter().map(|v| v.requests.count).sum();
        r.vms.iter().map(|v| v.requests.mean_ms * v.requests.count as f64).sum::<f64>() / n as f64
    };
    // The seed's claim is near the peak (§6, Figure 17). At load 1.3 every configuration is in
    // overload (it completes under 1.3x the requests of load 1.0: the backlog grows, 18-24 ms
    // means), and which backlog is shorter is not the claim; load 1.0 keeps up.
    let reqs = |r: &Results| r.vms.iter().map(|v| v.requests.count).sum::<u64>() as f64;
    let (_, idle_1, soft_1, _) = &rows[1];
    assert!(reqs(idle) < 1.25 * reqs(idle_1) && reqs(soft) < 1.25 * reqs(soft_1), "load 1.3 is meant to be overload");
    // Near the peak one seed's run can tip either way (seed 1: softirq 4.41 ms against 4.20
    // since softirq tasklets wake onto the interrupted pCPU, `hv/tasklet.rs`; seeds 2-4: 4.14
    // against 10.35, 5.21 against 7.65, 2.44 against 4.79), so the claim is on the mean of
    // the per-seed means over seeds 1-4.
    let over_seeds = |tasklet: &str| {
        let (seed_1, rest) = (if tasklet == "softirq" { soft_1 } else { idle_1 }, 2..=4u64);
        (mean_ms(seed_1) + rest.map(|s| mean_ms(&specvirt_seeded(1.0, tasklet, false, None, Some(s)))).sum::<f64>()) / 4.0
    };
    let (soft_m, idle_m) = (over_seeds("softirq"), over_seeds("idle_vcpu"));
    eprintln!("load 1.0, seeds 1-4: mean response softirq {soft_m:.3} ms, idle-vCPU {idle_m:.3} ms");
    assert!(soft_m < idle_m, "load 1.0, seeds 1-4: mean response softirq {soft_m:.3} ms vs idle-vCPU {idle_m:.3} ms");
}

/// Mean over the VMs of (lock spin + IPI wait) / guest CPU time.
fn mean_spin(r: &Results) -> f64 {
    r.vms.iter().map(|v| v.spin_fraction).sum::<f64>() / r.vms.len() as f64
}

#[test]
fn strict_gang_removes_double_scheduling_spin_but_leaves_pcpus_idle() {
    let solo = run_text(SYNC_1VM, Some("cfs"));
    let gang = run_text(SYNC_2VM, Some("gang"));
    let cfs = run_text(SYNC_2VM, Some("cfs"));
    for vm in 0..2 {
        let g = &gang.vms[vm];
        assert!(g.finished);
        // What is left is mostly the contention of the VM running alone, not lock-holder
        // preemption. Not all of it: a member halted at its gang's co-start that is woken
        // while every pCPU is taken waits for the next co-start (gang.rs), and a shootdown
        // sender spins for it meanwhile (with ticket hand-offs on, vm1 here: 5.6 % of its CPU
        // in IPI waits, spin 0.172 against 0.148 alone; cfs: 80 % IPI waits, asserted below).
        assert!(g.spin_fraction <= solo.vms[0].spin_fraction + 0.05, "vm{vm}: gang spin {:.3} vs alone {:.3}", g.spin_fraction, solo.vms[0].spin_fraction);
        let cfs_ipi = cfs.vms[vm].guest_ns.on_cpu.ipi_wait as f64 / cfs.vms[vm].cpu_ns as f64;
        let gang_ipi = g.guest_ns.on_cpu.ipi_wait as f64 / g.cpu_ns as f64;
        assert!(gang_ipi < 0.1 * cfs_ipi, "vm{vm}: shootdowns wait for descheduled siblings: gang {gang_ipi:.4} of CPU vs cfs {cfs_ipi:.4}");
        assert!(cfs_ipi >= 0.5, "vm{vm}: under cfs shootdowns must wait for descheduled siblings: {cfs_ipi:.4} of CPU");
        assert!(cfs.vms[vm].spin_fraction >= 0.3, "vm{vm}: the base case must show the problem");
    }
    let f = gang.totals.idle_while_waiting_fraction;
    assert!(f >= 0.05, "gang: pCPUs idle while vCPUs wait only {f:.4} of the time");
    assert!(gang.totals.idle_while_waiting_ns > 100 * cfs.totals.idle_while_waiting_ns.max(1), "gang {} ns vs cfs {} ns", gang.totals.idle_while_waiting_ns, cfs.totals.idle_while_waiting_ns);
    let per_pcpu: Ns = gang.pcpus.iter().map(|p| p.idle_while_waiting_ns).sum();
    assert_eq!(per_pcpu, gang.totals.idle_while_waiting_ns);
}

#[test]
fn balance_scheduling_spins_less_than_cfs_and_more_than_gang() {
    let gang = run_text(SYNC_2VM, Some("gang"));
    let cfs = run_text(SYNC_2VM, Some("cfs"));
    let bal = run_text(SYNC_2VM, Some("balance"));
    let (g, c, b) = (mean_spin(&gang), mean_spin(&cfs), mean_spin(&bal));
    assert!(g < b && b < c, "spin fraction: gang {g:.3}, balance {b:.3}, cfs {c:.3}");
    assert_eq!(bal.totals.scheduler_counters["balance_fallbacks"], 0, "12 siblings always find a sibling-free pCPU among 12");
    assert!(bal.vms.iter().all(|v| v.finished));
}

#[test]
fn relaxed_cosched_co_stops_leaders_without_the_fragmentation_of_strict_gang() {
    let gang = run_text(SYNC_2VM, Some("gang"));
    let relaxed = run_text(SYNC_2VM, Some("relaxed_cosched"));
    let cfs = run_text(SYNC_2VM, Some("cfs"));
    let (gs, rs, cs) = (mean_spin(&gang), mean_spin(&relaxed), mean_spin(&cfs));
    assert!(gs < rs && rs < cs, "spin fraction: gang {gs:.3}, relaxed {rs:.3}, cfs {cs:.3}");
    let c = &relaxed.totals.scheduler_counters;
    assert!(c["co_stops"] > 0 && c["co_starts"] > 0 && c["co_stopped_ns"] > 0, "{c:?}");
    // Every co-stop ends in a co-start (the run ends with every vCPU halted).
    assert_eq!(c["co_stops"], c["co_starts"]);
    assert!(relaxed.vms.iter().all(|v| v.finished));
    let (r, g) = (relaxed.totals.idle_while_waiting_fraction, gang.totals.idle_while_waiting_fraction);
    assert!(r * 20.0 < g, "idle while waiting: relaxed {r:.4} vs gang {g:.4}");
    assert_eq!(c["co_start_fallbacks"], 0, "12 siblings always find a sibling-free pCPU among 12");
}

const DP_STREAM: &str = include_str!("../../../../scenarios/dp-stream.toml");
const DP_EPCC: &str = include_str!("../../../../scenarios/dp-epcc.toml");
const DP_IMB: &str = include_str!("../../../../scenarios/dp-imb.toml");

/// A dp scenario run under `scheduler` with the scenario's hypervisor params (Xen 3.4's credit
/// settings, which `dp` takes too; an override of the scheduler would drop them).
fn run_dp_scenario(text: &str, scheduler: &str) -> Results {
    assert!(text.contains("scheduler = \"credit\""), "the dp scenario no longer names credit");
    run_text(&text.replace("scheduler = \"credit\"", &format!("scheduler = \"{scheduler}\"")), None)
}

fn bench(r: &Results, vm: usize, key: &str) -> f64 {
    r.vms[vm].bench.get("w0").and_then(|m| m.get(key)).copied().unwrap_or_else(|| panic!("no bench.w0.{key} in {:?}", r.vms[vm].bench))
}

#[test]
fn dp_reduces_stream_migrations_against_credit() {
    let credit = run_dp_scenario(DP_STREAM, "credit");
    let dp = run_dp_scenario(DP_STREAM, "dp");
    let (c, d) = (&credit.vms[0], &dp.vms[0]);
    assert!(c.finished && d.finished);
    let vcpu_refill = |r: &Results| r.vcpus.iter().filter(|v| v.vm == 0).map(|v| v.cache_refill_ns).sum::<Ns>();
    assert_eq!(vcpu_refill(&credit), c.guest_ns.on_cpu.cache_refill);
    println!(
        "stream: migrations credit {} dp {}; refill credit {} ns dp {} ns; bandwidth/thread credit {:.3e} dp {:.3e} B/s; dp counters {:?}",
        c.migrations,
        d.migrations,
        c.guest_ns.on_cpu.cache_refill,
        d.guest_ns.on_cpu.cache_refill,
        bench(&credit, 0, "bandwidth_bytes_per_s_per_thread"),
        bench(&dp, 0, "bandwidth_bytes_per_s_per_thread"),
        dp.totals.scheduler_counters
    );
    assert!(dp.totals.scheduler_counters["dp_pins"] > 0);
    // Seed 1, 5 s: 2288 vs 2757 (1715 before session 10's boost of a migrated vCPU; the
    // default reading pins a vCPU when credit picks it, so a woken one is still placed, and
    // stolen, by credit; evaluate = "all" gave 213).
    assert!(d.migrations < c.migrations, "dp {} vs credit {} migrations", d.migrations, c.migrations);
    // Issue 3 also expects less cache refill time under DP. The refill follows the thread, so
    // a vCPU woken from a barrier halt on another pCPU pays for its thread's working set.
    let (cr, dr) = (c.guest_ns.on_cpu.cache_refill, d.guest_ns.on_cpu.cache_refill);
    assert!(dr < cr, "refill dp {dr} ns vs credit {cr} ns");
    assert!(credit.totals.scheduler_counters.keys().all(|k| !k.starts_with("dp_")), "plain credit never pins");
}

#[test]
fn a_thread_woken_on_another_socket_refills_its_working_set() {
    // One 1 MiB thread that sleeps between bursts (its vCPU halts with no current thread) on a
    // 2-socket host, beside a bursty VM, so an idle pCPU steals it from the other socket's runqueue. The thread left its data on the old socket: each cross-socket resume must refill it,
    // even though the vCPU was dispatched empty and only picked the thread up afterwards.
    let text = r#"
name = "refill-after-halt"
seed = 3
duration_ms = 400
[host]
sockets = 2
cores_per_socket = 1
[hypervisor]
scheduler = "credit"
[[vms]]
name = "sleeper"
vcpus = 1
[[vms.workloads]]
kind = "custom"
groups = [{ threads = 1, working_set_kib = 1024, program = [
  { op = "forever", body = [
    { op = "compute", us = { dist = "exp", mean_us = 2000 } },
    { op = "sleep", us = { dist = "exp", mean_us = 2000 } },
  ] },
] }]
[[vms]]
name = "hog"
vcpus = 3
[[vms.workloads]]
kind = "custom"
groups = [{ threads = 3, working_set_kib = 64, program = [
  { op = "forever", body = [
    { op = "compute", us = { dist = "exp", mean_us = 3000 } },
    { op = "sleep", us = { dist = "exp", mean_us = 1000 } },
  ] },
] }]
"#;
    let r = run_text(text, None);
    let v = &r.vcpus[0];
    assert!(v.migrations >= 10, "sleeper migrated only {} times", v.migrations);
    // A full cold refill of 1 MiB across sockets: 100 us x 1.3 (host::CostParams defaults).
    let full_ns = 130_000;
    assert!(
        v.cache_refill_ns >= v.migrations / 2 * full_ns,
        "{} migrations but only {} ns refilled",
        v.migrations,
        v.cache_refill_ns
    );
}

/// `refill_by_memory_node` charges the remote rate by where the VM's memory is: a sleeper
/// pinned to socket 1, whose working set a hog on the same pCPU evicts, refills exactly as by
/// the move when its memory is on node 1 (it never moves), and about `cross_socket_refill_factor`
/// times more when its memory is on node 0.
#[test]
fn a_pinned_vcpu_refills_at_the_remote_rate_when_its_memory_is_on_the_other_node() {
    let text = |by_node: bool, node: u32| {
        format!(
            r#"
name = "refill-by-node"
seed = 5
duration_ms = 300
[host]
sockets = 2
cores_per_socket = 1
[host.costs]
refill_by_memory_node = {by_node}
[hypervisor]
scheduler = "credit"
[[vms]]
name = "sleeper"
vcpus = 1
pin = [1]
memory_node = {node}
[[vms.workloads]]
kind = "custom"
groups = [{{ threads = 1, working_set_kib = 1024, program = [
  {{ op = "forever", body = [
    {{ op = "compute", us = {{ dist = "exp", mean_us = 1000 }} }},
    {{ op = "sleep", us = {{ dist = "exp", mean_us = 2000 }} }},
  ] }},
] }}]
[[vms]]
name = "hog"
vcpus = 1
pin = [1]
[[vms.workloads]]
kind = "custom"
groups = [{{ threads = 1, working_set_kib = 64, program = [
  {{ op = "forever", body = [ {{ op = "compute", us = {{ dist = "exp", mean_us = 3000 }} }} ] }},
] }}]
"#
        )
    };
    let refill = |r: &Results| r.vcpus[0].cache_refill_ns;
    let by_move = run_text(&text(false, 0), None);
    let local = run_text(&text(true, 1), None);
    let remote = run_text(&text(true, 0), None);
    assert_eq!(by_move.vcpus[0].migrations, 0);
    assert!(refill(&by_move) > 1_000_000, "the hog must evict: {} ns refilled", refill(&by_move));
    assert_eq!(refill(&local), refill(&by_move), "memory on its own node: as by the move");
    let ratio = refill(&remote) as f64 / refill(&local) as f64;
    println!("refill local {} ns, remote {} ns, ratio {ratio:.3}", refill(&local), refill(&remote));
    assert!((1.15..1.45).contains(&ratio), "remote/local refill {ratio:.3}, default factor 1.3");
}

#[test]
fn imb_exchange_finishes_under_dp_and_credit() {
    // Regression: with one shared inbox per rank (capacity 4, blocking sends), a receive could
    // take a second message from the same neighbour, ranks drifted apart and, under dp, every
    // rank ended blocked (two inboxes full with their owners stuck sending, the others waiting
    // on empty ones) about 0.6 s into the 16 KiB run. IMB's receives name their source, so each
    // neighbour pair has its own channel, and the ring cannot deadlock.
    for bytes in [1024, 16384] {
        let text = DP_IMB
            .replace("pattern = \"sendrecv\", ranks = 8, msg_bytes = 65536, reps = 5000", &format!("pattern = \"exchange\", ranks = 8, msg_bytes = {bytes}, reps = 5000"))
            .replace("duration_ms = 2500", "duration_ms = 20000");
        for s in ["credit", "dp"] {
            let r = run_dp_scenario(&text, s);
            let v = &r.vms[0];
            println!("exchange {bytes} B {s}: completion {:?}, {:?}", v.completion_ns, v.bench);
            assert!(v.finished, "{s}, {bytes} B: the exchange did not finish ({} ops)", v.ops);
            assert_eq!(v.ops, 8 * 5000 * 4, "four sends/receives per rank and repetition");
        }
    }
}

/// IMB's messages carry their bytes through the channel (`guest/channel.rs`): a rank reads
/// each message's socket buffer, 3 + 1 lines of `sk_buff` and shared info plus 64 KiB / 64 =
/// 1024 data lines, from the cache of the pCPU it was written on, and writes into buffers its
/// receivers freed. On seed 003's host those lines cost nothing (not modelled: no published
/// Harpertown figure, scenarios/dp-imb.toml), and nothing is counted; with the default host's
/// line costs (75 / 200 cycles) the lines are counted and slow the ring. Each message crosses
/// at most twice (to its reader, and back as a recycled buffer): at most 2 x 1028 lines per
/// message, 8 ranks x 5000 messages.
#[test]
fn imb_messages_carry_their_bytes_between_pcpus() {
    let host_costs = "ticket_transfer_cycles = 0, ticket_transfer_remote_cycles = 0";
    assert!(DP_IMB.contains(host_costs), "seed 003's host leaves line transfers out");
    let seed003 = run_text(DP_IMB, Some("credit"));
    let priced = run_text(&DP_IMB.replace(host_costs, "ticket_transfer_cycles = 75, ticket_transfer_remote_cycles = 200"), Some("credit"));
    assert_eq!(seed003.vms[0].message_line_transfers, 0);
    let lines = priced.vms[0].message_line_transfers;
    let msgs = 8 * 5000;
    println!("{lines} lines for {msgs} messages ({:.0} per message)", lines as f64 / msgs as f64);
    assert!(lines > msgs as u64 * 1028 / 4, "most messages cross pCPUs under credit: {lines} lines");
    assert!(lines <= 2 * 1028 * msgs as u64, "{lines} lines");
    let speed = |r: &Results| bench(r, 0, "throughput_mib_per_s");
    assert!(speed(&priced) < speed(&seed003), "priced lines slow the ring: {:.1} vs {:.1} MiB/s", speed(&priced), speed(&seed003));
}

#[test]
fn dp_without_high_affinity_tasks_schedules_exactly_like_credit() {
    // 64-byte messages: the copies are a sliver of each send and receive, and a blocked
    // receiver sleeps without spinning, so every AC stays near 50 and DP never pins.
    let text = DP_IMB.replace("msg_bytes = 65536, reps = 5000", "msg_bytes = 64, reps = 3000");
    let credit = run_dp_scenario(&text, "credit");
    let dp = run_dp_scenario(&text, "dp");
    assert_eq!(dp.totals.scheduler_counters["dp_pins"], 0);
    for (c, d) in credit.vms.iter().zip(&dp.vms) {
        assert_eq!((c.completion_ns, c.migrations, c.cpu_ns, c.ops), (d.completion_ns, d.migrations, d.cpu_ns, d.ops));
    }
    for (c, d) in credit.pcpus.iter().zip(&dp.pcpus) {
        assert_eq!((c.context_switches, c.idle_ns), (d.context_switches, d.idle_ns));
    }
}

#[test]
fn stream_bandwidth_falls_when_the_arrays_outgrow_the_llc() {
    let alone = |kib: u32, iters: u32| {
        let text = DP_STREAM
            .split("[[vms]]\nname = \"load\"")
            .next()
            .unwrap()
            .replace("array_kib = 1024, iterations = 8000", &format!("array_kib = {kib}, iterations = {iters}"));
        let r = run_text(&text, Some("credit"));
        bench(&r, 0, "bandwidth_bytes_per_s_per_thread")
    };
    // A core's LLC share is 3 MiB: 3 x 2 MiB / 8 threads = 768 KiB fits, 3 x 64 MiB / 8 does not.
    let small = alone(2048, 200);
    let large = alone(65536, 10);
    assert!(large < 0.75 * small, "in cache {small:.3e} B/s, from memory {large:.3e} B/s");
}

#[test]
fn stream_best_rate_is_the_teams_fastest_pass_as_stream_c_reports_it() {
    // STREAM alone on the host (the competing VM cut off): 8 threads on 8 pCPUs. A thread's
    // slice is 3 x 1024 / 8 = 384 KiB, inside its core's 3 MiB LLC share, so an undisturbed
    // pass takes 384 x 50 ns/KiB = 19.2 us, and the best rate per thread is 384 x 1024 B /
    // 19.2 us; the team moves 8 slices per pass. 200 passes in executions of 10 (stream.c's
    // NTIMES) are 20 executions, each with an undisturbed pass.
    let alone = DP_STREAM
        .split("[[vms]]\nname = \"load\"")
        .next()
        .unwrap()
        .replace("iterations = 8000", "iterations = 200");
    assert!(alone.contains("ntimes = 10"), "dp-stream.toml times executions of stream.c's NTIMES = 10");
    let r = run_text(&alone, Some("credit"));
    assert_eq!(bench(&r, 0, "executions"), 20.0);
    assert_eq!(bench(&r, 0, "best_pass_ns"), 19_200.0);
    let per_thread = 384.0 * 1024.0 / 19.2e-6;
    assert!((bench(&r, 0, "best_rate_bytes_per_s_per_thread") / per_thread - 1.0).abs() < 1e-12);
    assert!((bench(&r, 0, "best_rate_bytes_per_s") / (8.0 * per_thread) - 1.0).abs() < 1e-12);
    // Beside the competing VM a thread may stay preempted through a whole execution (10
    // passes, 0.2 ms; the competitor computes 3 ms at a time), so that execution's best pass
    // waits for it: the mean of the executions' best rates falls below the run's fastest pass,
    // which one execution (the whole run, no ntimes) reports.
    let busy = DP_STREAM.replace("iterations = 8000", "iterations = 2000");
    let r = run_dp_scenario(&busy, "credit");
    let one = run_dp_scenario(&busy.replace("ntimes = 10, ", ""), "credit");
    assert_eq!(bench(&r, 0, "executions"), 200.0);
    assert_eq!(bench(&one, 0, "executions"), 1.0);
    assert_eq!(bench(&r, 0, "best_pass_ns"), bench(&one, 0, "best_pass_ns"));
    let (mean_of_bests, best) = (bench(&r, 0, "best_rate_bytes_per_s"), bench(&one, 0, "best_rate_bytes_per_s"));
    // (Strictly below: with libgomp 4.4.0's 155 ms spin the team keeps its vCPUs runnable and
    // few executions lose every pass to a preempted thread, about 1 % below at seed 1; with
    // the earlier 200 us spin it was more than 1 %.)
    assert!(mean_of_bests < best, "mean of executions' best rates {mean_of_bests:.3e} vs the run's best {best:.3e} B/s");
}

#[test]
fn epcc_and_imb_report_their_figures() {
    let epcc = run_text(DP_EPCC, Some("credit"));
    assert!(epcc.vms[0].finished);
    assert_eq!(bench(&epcc, 0, "constructs"), 2000.0);
    // The library's 2000 barriers (1 us delay: 2 ms of reference time) end before credit
    // moves any vCPU, and the waiters spin (libgomp 4.4.0: 155 ms), so nothing is preempted.
    // 20000 barriers (20 ms) meet the competing VM: a barrier waits for preempted vCPUs.
    assert_eq!(bench(&epcc, 0, "overhead_ns_per_construct"), 0.0, "undisturbed spinning barriers cost nothing in the model");
    let long = run_text(&DP_EPCC.replace("innerreps = 2000", "innerreps = 20000"), Some("credit"));
    assert!(long.vms[0].finished);
    assert!(bench(&long, 0, "overhead_ns_per_construct") > 1000.0, "barriers across preempted vCPUs are slow");
    assert_eq!(epcc.vms[0].marks["w0.test_end"].count, 8);
    let critical = DP_EPCC.replace("construct = \"barrier\", threads = 8, innerreps = 2000", "construct = \"critical\", threads = 8, innerreps = 8000");
    let r = run_text(&critical, Some("credit"));
    assert!(r.vms[0].finished, "every critical-section thread finishes (mutex spinners resume)");
    assert_eq!(bench(&r, 0, "constructs"), 8000.0);
    let imb = |text: &str| bench(&run_text(text, Some("credit")), 0, "throughput_mib_per_s");
    let big = imb(DP_IMB);
    let small = imb(&DP_IMB.replace("msg_bytes = 65536, reps = 5000", "msg_bytes = 256, reps = 5000"));
    assert!(small < big / 10.0, "fixed per-message cost dominates small messages: {small:.1} vs {big:.1} MiB/s");
    let exchange = imb(&DP_IMB.replace("pattern = \"sendrecv\"", "pattern = \"exchange\"").replace("reps = 5000", "reps = 2500"));
    assert!(exchange > 0.0);
}

/// Two 2-vCPU VMs of hogs on 2 pCPUs for 2 s (fair share 1 pCPU each); the first capped at
/// `cap_pct`.
fn capped_pair(scheduler: &str, cap_pct: u32) -> String {
    format!(
        "duration_ms = 2000\nseed = 1\n[host]\nsockets = 1\ncores_per_socket = 2\n[hypervisor]\nscheduler = \"{scheduler}\"\n\
         [[vms]]\nname = \"capped\"\nvcpus = 2\ncap_pct = {cap_pct}\n[[vms.workloads]]\nkind = \"hog\"\n\
         [[vms]]\nname = \"free\"\nvcpus = 2\n[[vms.workloads]]\nkind = \"hog\"\n"
    )
}

#[test]
fn a_capped_vm_gets_its_cap_under_cfs_bandwidth_control() {
    // pCPUs' worth of CPU time each VM got over the run.
    let pcpus = |r: &Results, vm: usize| r.vms[vm].cpu_ns as f64 / 2e9;
    for sched in ["cfs", "balance"] {
        let free = run_text(&capped_pair(sched, 0), None);
        assert!((pcpus(&free, 0) - 1.0).abs() < 0.05, "{sched} uncapped: {:.3} pCPUs", pcpus(&free, 0));
        for cap in [30u32, 50, 80] {
            let r = run_text(&capped_pair(sched, cap), None);
            let (got, want) = (pcpus(&r, 0), cap as f64 / 100.0);
            eprintln!("{sched} cap {cap}%: capped VM {got:.4} pCPUs, other {:.4}", pcpus(&r, 1));
            assert!((got - want).abs() <= 0.05 * want, "{sched} cap {cap}%: {got:.3} pCPUs");
            // Work-conserving: the other VM takes what the capped one may not use.
            assert!(pcpus(&r, 1) > 2.0 - want - 0.1, "{sched} cap {cap}%: the other VM got {:.3} pCPUs", pcpus(&r, 1));
            assert!(r.totals.scheduler_counters["cfs_throttles"] > 0);
        }
    }
}

const FLEX_PARALLEL: &str = include_str!("../../../../scenarios/flex-parallel.toml");

/// Issue 3 acceptance: "FlexW+FlexS does at least as well as FlexW alone on a mix of
/// busy-waiting parallel VMs" (FlexW alone = credit with FlexW in its accounting), read as the
/// means over seeds of mean completion, makespan and barrier spin, none worse than FlexW
/// alone's. Until session 9, with FlexS sampling every 1 ms and a two-window memory, Flex was
/// far ahead (mean completion 5.89 vs 7.37 s, sooner on 7 of 8 seeds) and the test asked for
/// that. Since FlexS samples at credit's 10 ms tick and keeps counts since the 10 s reset (the
/// seed's text, `hv/sched/flexs.rs`), it detects fewer spinners and Flex is close to FlexW
/// alone: see docs/policies.md `## flexs`.
///
/// Seeds 1-64 since session 11 (1-8 before). The mix is chaotic: a perturbation of tens of ns
/// in one cache refill, or one early FlexS switch, sends a run on another path, and one
/// policy's mean completion spreads over seeds with a standard deviation of 1.1-1.3 s; the
/// paired difference Flex − FlexW has a standard deviation of about 0.9 s, so over 8 seeds its
/// standard error (0.40 s) exceeds the difference itself (−0.26 s over 64 seeds) and the verdict
/// on 8 seeds is a coin toss (with the refill fix found in session 11 and not yet merged, which moves every
/// run a little, seeds 1-8 give 7.42 vs 7.28 s). Over 64 seeds the standard error is 0.11 s.
/// Measured (session 11, Python API), Flex vs FlexW alone: seeds 1-64: mean completion 7.27 vs
/// 7.53 s, makespan 9.76 vs 10.15 s, barrier spin 25.3 vs 26.9 vCPU-s; seeds 1-8: 7.34 vs 7.37,
/// 9.83 vs 9.97, 25.6 vs 26.1; seeds 1-16 and 1-32: Flex ahead on all three as well.
#[test]
fn flexw_plus_flexs_does_at_least_as_well_as_flexw_alone_on_the_busy_waiting_mix_over_seeds() {
    let flexw = FLEX_PARALLEL.replace("scheduler = \"flex\"\n", "scheduler = \"credit\"\nparams = { flexw = true }\n");
    let mean_s = |r: &Results| r.vms.iter().map(|v| v.completion_ns.expect("finished") as f64 / 1e9).sum::<f64>() / r.vms.len() as f64;
    let makespan_s = |r: &Results| r.vms.iter().map(|v| v.completion_ns.expect("finished")).max().unwrap() as f64 / 1e9;
    let spin_s = |r: &Results| r.vms.iter().map(|v| v.guest_ns.on_cpu.barrier_spin).sum::<u64>() as f64 / 1e9;
    let per_seed = parallel_over_seeds(1..=64, |seed| {
        let (a, b) = (run_seeded(&flexw, "credit", seed), run_seeded(FLEX_PARALLEL, "flex", seed));
        assert!(b.totals.scheduler_counters["flexs_switches"] > 0);
        eprintln!(
            "seed {seed}: mean completion / makespan / barrier spin: Flex {:.2} / {:.2} / {:.1}, FlexW {:.2} / {:.2} / {:.1}; switches {}",
            mean_s(&b), makespan_s(&b), spin_s(&b), mean_s(&a), makespan_s(&a), spin_s(&a), b.totals.scheduler_counters["flexs_switches"]
        );
        [a, b].map(|r| [mean_s(&r), makespan_s(&r), spin_s(&r)])
    });
    let n = per_seed.len() as f64;
    let mean_of = |k: usize| std::array::from_fn::<f64, 3, _>(|m| per_seed.iter().map(|x| x[k][m]).sum::<f64>() / n);
    let (w, f) = (mean_of(0), mean_of(1));
    let show = format!("means over seeds, mean completion / makespan / barrier spin: Flex {f:.3?} vs FlexW {w:.3?}");
    eprintln!("{show}");
    assert!(f[0] <= w[0] && f[1] <= w[1] && f[2] <= w[2], "{show}");
}

/// Two 12-vCPU VMs (dedup-like, two kernel locks, FlexCore hot-unplugging) on 12 pCPUs, seed 3:
/// from about 90 ms both VMs' lock holders share one pCPU and PLE directed yields and wake-up
/// preemption switch them out every few µs. When a reschedule IPI could deschedule a vCPU
/// before its world switch was paid for, the unpaid cost carried over and grew with every
/// dispatch, and neither holder ran guest code again (the run never finished). The host takes
/// the IPI only after the switch (`hv_work_ends`), so both VMs finish. The reproducer names the
/// control centre's window reading (`window = "available"`, ballooning at the first check)
/// under which it was recorded.
#[test]
fn lock_holders_ping_ponged_by_directed_yields_still_finish() {
    let sc = crate::scenario::from_json_str(include_str!("testdata/hv-debt-livelock.json")).unwrap();
    let ov = Overrides { scheduler: None, seed: Some(3), check: true };
    let r = Simulation::new(&sc, &ov).unwrap().run().unwrap();
    for vm in 0..2 {
        let done_ms = completion(&r, vm) / 1e6;
        assert!(done_ms < 1000.0, "vm{vm} finished at {done_ms:.1} ms");
    }
}

#[test]
fn a_vcpu_taken_offline_while_preempted_comes_back_online_not_preempted() {
    let sc = from_toml_str(SYNC_2VM).unwrap();
    let ov = Overrides { scheduler: Some("cfs".into()), check: true, ..Default::default() };
    let mut sim = Simulation::new(&sc, &ov).unwrap();
    let mut t = 5 * NS_PER_MS;
    let (vm, k, v) = loop {
        sim.run_until(t).unwrap();
        let hit = sim.w.vms.iter().enumerate().find_map(|(i, m)| {
            m.vcpus.iter().enumerate().skip(1).find(|&(_, &u)| sim.w.vcpus[u].steal_preempted).map(|(k, &u)| (i, k as u32, u))
        });
        if let Some(h) = hit {
            break h;
        }
        t += NS_PER_MS / 10;
        assert!(t < 100 * NS_PER_MS, "no vCPU was ever descheduled while runnable");
    };
    sim.set_vcpu_online(vm, k, false).unwrap();
    // Going down waits for a preemptible moment (stop_machine), which a preempted vCPU
    // reaches only once it runs again.
    while sim.w.vcpus[v].run != RunState::Offline {
        t += NS_PER_MS / 10;
        sim.run_until(t).unwrap();
        assert!(t < 200 * NS_PER_MS, "the vCPU never went offline");
    }
    sim.set_vcpu_online(vm, k, true).unwrap();
    let vc = &sim.w.vcpus[v];
    assert!(!vc.preempted && !vc.preempted_in_kernel && !vc.steal_preempted, "came back reported preempted");
    sim.run_until(t + 20 * NS_PER_MS).unwrap();
}

/// The same two VMs with FlexCore's control centre started with the run (`window = "full"`: it
/// judges from the first full 3 s window), seed 31: a vCPU is unplugged while
/// preempted and FlexCore later re-inflates, so it comes back online. It must come back halted
/// and not reported preempted to its guest; the invariant checker (on here) fails the run at
/// the next check if the steal-time flag is stale. The case depends on the trajectory (seed 3
/// produced it until session 12's fix of the refill model, then seed 107 until session 20's cap
/// on the refill debt and synchronous `cpu_down`, then seed 3 until session 23's refill deferral,
/// then seeds 1, 5, 7, 14, ... of 1-60 until session 30 deferred it for a granted waiter's
/// hand-off too, then seeds 18 and 30 of 1-40 until session 31 deferred it for every spin-wait,
/// then seed 31 of 1-60 until session 34's fix of the dy_eligible toggle (hv/sched/cfs.rs); now
/// seeds 1, 4, 21, 38, 40, 44, 65, 74, 79 and 80 of 1-80), so
/// the test first asserts that it arose, observing every 0.5 ms (observation does not change a
/// run: `sim::control` tests). The scenario is the dedup reproduction's (flexcore.py), so its
/// PLE handler is Linux 3.13's (`boost_woken = false`). The direct case, without FlexCore, is
/// `a_vcpu_taken_offline_while_preempted_comes_back_online_not_preempted`.
#[test]
fn a_vcpu_unplugged_while_preempted_comes_back_not_preempted() {
    let text = include_str!("testdata/hv-debt-livelock.json").replace("\"window\": \"available\"", "\"window\": \"full\"");
    assert!(text.contains("\"window\": \"full\""));
    let sc = crate::scenario::from_json_str(&text).unwrap();
    let ov = Overrides { scheduler: None, seed: Some(1), check: true };
    let mut sim = Simulation::new(&sc, &ov).unwrap();
    let (mut t, mut down, mut came_back) = (0, Vec::new(), 0);
    while sim.w.vms.iter().any(|m| m.finished_at.is_none()) {
        t += NS_PER_MS / 2;
        assert!(t < 1000 * NS_PER_MS, "the VMs did not finish within 1 s");
        sim.run_until(t).unwrap();
        for (v, vc) in sim.w.vcpus.iter().enumerate() {
            if vc.run == RunState::Offline && vc.steal_preempted && !down.contains(&v) {
                down.push(v);
            }
            if vc.online && down.contains(&v) {
                came_back += 1;
                down.retain(|&u| u != v);
            }
        }
    }
    assert!(came_back > 0, "no vCPU unplugged while preempted came back online: the case did not arise");
}

/// One 2-vCPU VM on 2 pCPUs, two threads of one process: each takes lock `io` for 200 µs, works
/// 10 µs and shoots down the address space (100 times). The other thread spins for the lock or
/// holds it nearly all the time. Returns the VM's function-call IPI wait in ns.
fn ipi_wait_beside_a_lock_holder(irqs_off: bool) -> u64 {
    let text = format!(
        r#"
name = "irqs-off"
seed = 1
[host]
sockets = 1
cores_per_socket = 2
[hypervisor]
scheduler = "cfs"
[[vms]]
name = "vm"
vcpus = 2
[[vms.workloads]]
kind = "custom"
groups = [
  {{ threads = 2, program = [{{ op = "loop", count = 100, body = [
    {{ op = "lock", lock = "io", cs_us = 200, irqs_off = {irqs_off} }},
    {{ op = "compute", us = 10 }}, {{ op = "shootdown", local_us = 1.0 }} ] }}] }},
]
"#
    );
    let r = run_text(&text, None);
    r.vms[0].guest_ns.on_cpu.ipi_wait
}

#[test]
fn a_flush_ipi_waits_for_a_target_that_holds_a_lock_taken_with_interrupts_off() {
    // spin_lock_irq: the target, which took the lock at the sender's release, acknowledges
    // only at the end of its 200 µs section; with interrupts on the handler runs at once (a
    // vIPI round trip and the handler, a few µs).
    let on = ipi_wait_beside_a_lock_holder(false);
    let off = ipi_wait_beside_a_lock_holder(true);
    assert!(on < 200 * 10_000, "interrupts on: {on} ns of IPI wait over 200 shootdowns");
    assert!(off > 200 * 100_000, "interrupts off: {off} ns of IPI wait over 200 shootdowns");
}

#[test]
fn a_vm_with_a_cpus_set_runs_only_on_it_and_fills_it() {
    // Three hog vCPUs confined to socket 0's two pCPUs (vms[].cpus, as xend's NUMA placement
    // sets it): socket 1 stays idle although it is free, and both allowed pCPUs stay busy.
    let text = r#"
name = "cpus-set"
seed = 1
duration_ms = 200
[host]
sockets = 2
cores_per_socket = 2
[hypervisor]
scheduler = "credit"
[[vms]]
vcpus = 3
cpus = [0, 1]
workloads = [{ kind = "hog" }]
"#;
    let r = run_text(text, None);
    let t = r.sim_time_ns as f64;
    for p in &r.pcpus {
        if p.pcpu < 2 {
            assert!(p.guest_ns as f64 > 0.9 * t, "pcpu {}: guest {} ns of {t}", p.pcpu, p.guest_ns);
        } else {
            assert_eq!(p.guest_ns, 0, "pcpu {} is outside the VM's cpus", p.pcpu);
        }
    }
}

/// Two finite VMs (one twice as long as the other) beside a VM that never finishes, with a
/// 5 s horizon; `stop` is added by the caller.
fn finite_beside_endless(stop: &str) -> String {
    format!(
        "duration_ms = 5000\n{stop}\n[host]\ncores_per_socket = 4\n\
         [[vms]]\nname = \"short\"\nvcpus = 2\nworkloads = [{{ kind = \"parallel\", threads = 2, iterations = 200, compute_us = 100, locks_per_iteration = 0 }}]\n\
         [[vms]]\nname = \"long\"\nvcpus = 2\nworkloads = [{{ kind = \"parallel\", threads = 2, iterations = 400, compute_us = 100, locks_per_iteration = 0 }}]\n\
         [[vms]]\nname = \"endless\"\nvcpus = 4\nworkloads = [{{ kind = \"hog\" }}]\n"
    )
}

#[test]
fn stop_when_finite_done_ends_the_run_where_the_last_finite_vm_finishes() {
    let cut = run_text(&finite_beside_endless("stop = \"finite_done\""), None);
    let full = run_text(&finite_beside_endless(""), None);
    // Without the rule the run lasts its 5 s horizon; with it, it ends at the event where the
    // later of the two finite VMs finishes, and the VM that never ends is cut off there.
    assert_eq!(full.sim_time_ns, 5000 * NS_PER_MS);
    let last = cut.vms[0].completion_ns.max(cut.vms[1].completion_ns).expect("both finite VMs finished");
    assert_eq!(cut.sim_time_ns, last);
    assert!(last < full.sim_time_ns / 10, "the finite VMs take {last} ns, far less than the horizon");
    assert!(!cut.vms[2].finished);
    // Ending early changes nothing before the end: the finite VMs finish at the same instants
    // and did the same work.
    for vm in 0..2 {
        assert_eq!(cut.vms[vm].completion_ns, full.vms[vm].completion_ns, "{}", cut.vms[vm].name);
        assert_eq!(cut.vms[vm].ops, full.vms[vm].ops, "{}", cut.vms[vm].name);
    }
}

#[test]
fn stop_when_finite_done_is_deterministic() {
    let text = finite_beside_endless("stop = \"finite_done\"");
    assert_eq!(results_json(&run_text(&text, Some("credit"))), results_json(&run_text(&text, Some("credit"))));
}

#[test]
fn stop_when_finite_done_without_a_finite_vm_runs_to_the_horizon_if_not_validated() {
    // Validation rejects the rule when no VM is finite (validate.rs); a scenario built around
    // validation keeps its horizon rather than ending at once.
    let mut sc = from_toml_str(&format!("duration_ms = 30\n[host]\ncores_per_socket = 2\n[[vms]]\nvcpus = 2\n{}", "workloads = [{ kind = \"hog\" }]")).unwrap();
    sc.stop = crate::scenario::StopRule::FiniteDone;
    let mut sim = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
    assert_eq!(sim.run().unwrap().sim_time_ns, 30 * NS_PER_MS);
}

/// Shared-LLC pressure (`hv::llc`, `host::llc_pressure`): a thread computing beside another
/// VM's thread on the same socket runs slower per instruction than alone, by the power law.
/// LLC 1024 KiB, stall ratio 1, exponent 1/2, window 0 (only running threads count), each
/// thread's working set 1024 KiB. VM a wakes every 1000 us and computes 1000 us of work, 20
/// times, on pCPU 0; in "shared" a hog of VM b computes all the time on pCPU 1 of the same
/// socket. Each compute of a samples F at its thread's switch-in:
/// - alone: F = 1024 (a itself), miss (1024/1024)^0.5 = 1, CPI 1 + 1 x 1 = 2: 20 x 1000 us x 2
///   = 40 ms of compute;
/// - shared: F = 2048, miss 2^0.5, CPI 1 + 1.414 = 2.414: 20 x 1000 us x 2.414 = 48.28 ms;
/// - model off (stall ratio 0): 20 ms.
/// (The execution timer rounds each compute up to a whole ns: at most 20 ns over.)
#[test]
fn two_vms_sharing_an_llc_run_slower_per_instruction_than_one_alone() {
    let text = |stall: f64, hog: bool| {
        let hog_vm = if hog {
            r#"
[[vms]]
name = "hog"
vcpus = 1
pin = [1]
[[vms.workloads]]
kind = "custom"
groups = [{ threads = 1, working_set_kib = 1024, program = [
  { op = "forever", body = [ { op = "compute", us = { dist = "exp", mean_us = 3000 } } ] },
] }]
"#
        } else {
            ""
        };
        format!(
            r#"
name = "llc-pressure"
seed = 3
duration_ms = 100
[host]
sockets = 1
cores_per_socket = 2
[host.costs]
llc_kib = 1024
llc_stall_at_capacity_ratio = {stall}
llc_window_ns = 0
[hypervisor]
scheduler = "credit"
[[vms]]
name = "a"
vcpus = 1
pin = [0]
[[vms.workloads]]
kind = "custom"
groups = [{{ threads = 1, working_set_kib = 1024, program = [
  {{ op = "loop", count = 20, body = [
    {{ op = "sleep", us = 1000 }},
    {{ op = "compute", us = 1000 }},
  ] }},
] }}]
{hog_vm}"#
        )
    };
    let useful_us = |r: &Results| r.vms[0].guest_ns.on_cpu.useful as f64 / 1e3;
    let off = run_text(&text(0.0, true), None);
    let alone = run_text(&text(1.0, false), None);
    let shared = run_text(&text(1.0, true), None);
    println!("a's compute: off {} us, alone {} us, shared {} us", useful_us(&off), useful_us(&alone), useful_us(&shared));
    assert!(off.vms[0].finished && alone.vms[0].finished && shared.vms[0].finished);
    assert!((useful_us(&off) - 20_000.0).abs() <= 0.02, "model off: 20 ms");
    assert!((useful_us(&alone) - 40_000.0).abs() <= 0.02, "alone: CPI 2");
    let want = 20_000.0 * (1.0 + 2f64.sqrt());
    assert!((useful_us(&shared) - want).abs() <= 0.02, "shared: CPI 1 + sqrt 2, want {want} us");
    // The counters see compute and refills per cycle of work: alone, work = compute / 2.
    let refill_us = alone.vcpus.iter().map(|v| v.cache_refill_ns).sum::<Ns>() as f64 / 1e3;
    let want_cpi = (useful_us(&alone) + refill_us) / (useful_us(&alone) / 2.0);
    assert!((alone.totals.llc_cpi_factor - want_cpi).abs() < 1e-6, "{} against {want_cpi}", alone.totals.llc_cpi_factor);
}

/// The path length's instruction counts (seed 001 §4.1, Equation 1; `totals.guest_compute_work_ns`,
/// `totals.hv_work_ns`): work at CPI factor 1, whatever CPI it ran at. One vCPU on pCPU 0 wakes
/// every 1000 us and computes 1000 us of work, 20 times; its thread's working set fills the
/// 1024 KiB LLC and stays in the socket's footprint while it sleeps (window 1 s, decayed by at
/// most 1 - exp(-0.06) in the run), so at stall ratio 1 (exponent 1/2) its compute runs at CPI
/// 1 + (F/1024)^0.5, about 2 (`two_vms_sharing_an_llc_run_slower_per_instruction_than_one_alone`),
/// and so do the hypervisor's costs charged around it:
/// - guest compute: about 40 ms of compute time but 20 x 1000 us = 20 ms of work (the execution
///   timer rounds each compute up to a whole ns: at most 20 ns over);
/// - the hypervisor, fixed costs (reference 0): every cost here goes through `hv_cost_ns` (one
///   socket, no lazy switch, no background load), so its work is the hypervisor time charged,
///   Σ `hv_ns_by_exit`;
/// - the hypervisor, costs stated at reference CPI 1.5: each cost c charged at socket CPI x
///   takes round(c x / 1.5) and counts c / 1.5 of work, so the time charged is the work times
///   the cost-weighted mean CPI (`hv_llc_cpi_factor`), within 0.5 ns of rounding per charge.
#[test]
fn the_path_length_counts_work_at_cpi_factor_one_for_guest_compute_and_the_hypervisor() {
    let text = |reference: f64| {
        format!(
            r#"
name = "path-length"
seed = 3
duration_ms = 100
[host]
sockets = 1
cores_per_socket = 2
[host.costs]
llc_kib = 1024
llc_stall_at_capacity_ratio = 1.0
llc_window_ns = 1000000000
hv_costs_reference_cpi = {reference}
[hypervisor]
scheduler = "credit"
[[vms]]
name = "a"
vcpus = 1
pin = [0]
[[vms.workloads]]
kind = "custom"
groups = [{{ threads = 1, working_set_kib = 1024, program = [
  {{ op = "loop", count = 20, body = [
    {{ op = "sleep", us = 1000 }},
    {{ op = "compute", us = 1000 }},
  ] }},
] }}]
"#
        )
    };
    let charged = |r: &Results| r.totals.hv_ns_by_exit.values().sum::<Ns>() as f64;
    let fixed = run_text(&text(0.0), None);
    assert!(fixed.vms[0].finished);
    let compute_ns = fixed.vms[0].guest_ns.on_cpu.useful as f64;
    assert!(compute_ns > 1.9 * 20e6, "CPI about 2: about 40 ms of compute, got {compute_ns} ns");
    assert!((fixed.totals.guest_compute_work_ns - 20e6).abs() <= 20.0, "{:?}", fixed.totals);
    assert!(charged(&fixed) > 0.0);
    assert!((fixed.totals.hv_work_ns - charged(&fixed)).abs() < 1e-6, "{} against {}", fixed.totals.hv_work_ns, charged(&fixed));
    let scaled = run_text(&text(1.5), None);
    assert!((scaled.totals.guest_compute_work_ns - 20e6).abs() <= 20.0, "{:?}", scaled.totals);
    let t = &scaled.totals;
    assert!(t.hv_llc_cpi_factor > 1.5, "{t:?}");
    // Charges: the exits, dispatches and scheduler calls of 20 wake-ups and blocks, a few
    // hundred at most; each rounds by at most 0.5 ns.
    let want = t.hv_work_ns * t.hv_llc_cpi_factor;
    assert!((charged(&scaled) - want).abs() <= 500.0 * 0.5, "charged {} ns, work {} x CPI {} = {want}", charged(&scaled), t.hv_work_ns, t.hv_llc_cpi_factor);
}

/// TLB pressure (`hv::tlb`, `host::tlb_pressure`) on a host of `cores` pCPUs in one socket:
/// single-vCPU VMs whose one thread (working set `ws_kib`) sleeps 500 us and computes (mean
/// 3 ms) in turn, so that its vCPU is dispatched again and again and samples its pCPU's
/// translations each time, VM k pinned to pCPU `pins[k]`; 512 entries (reach 2048 KiB), exponent 1/2, window 10 ms (the
/// LLC's, which the TLB shares), the LLC pressure off, no cache refills; 200 ms.
fn tlb_text(cores: u32, pins: &[u32], ws_kib: u32, tlb_ratio: f64, tlb_entries_line: &str) -> String {
    let mut t = format!(
        r#"
name = "tlb-pressure"
seed = 3
duration_ms = 200
[host]
sockets = 1
cores_per_socket = {cores}
[host.costs]
tlb_stall_at_capacity_ratio = {tlb_ratio}
{tlb_entries_line}
llc_window_ns = 10000000
cache_refill_ns_per_mib = 0
[hypervisor]
scheduler = "credit"
"#
    );
    for (k, p) in pins.iter().enumerate() {
        t += &format!(
            r#"
[[vms]]
name = "hog{k}"
vcpus = 1
pin = [{p}]
[[vms.workloads]]
kind = "custom"
groups = [{{ threads = 1, working_set_kib = {ws_kib}, program = [
  {{ op = "forever", body = [ {{ op = "sleep", us = 500 }}, {{ op = "compute", us = {{ dist = "exp", mean_us = 3000 }} }} ] }},
] }}]
"#
        );
    }
    t
}

/// Alone on its pCPU a thread's translations are its own working set: F = 1024 KiB, miss
/// (1024 / 2048)^1/2 = 0.7071, stall ratio 1, so 0.7071 stall cycles per cycle of work, and
/// guest compute's CPI factor 1.7071 (no LLC stall, no refills; its own entries, decayed
/// while it slept, are replaced by its whole working set). Two such threads sharing one pCPU:
/// at a dispatch the other's entries stopped at most a few ms ago (weight exp(-age / 10 ms)),
/// so F lies well above 1024 and never above 2048, the miss never above
/// (2048 / 2048)^1/2 = 1. More distinct threads per core, more TLB stall.
#[test]
fn more_distinct_threads_per_core_stall_more_on_the_tlb() {
    let alone = run_text(&tlb_text(1, &[0], 1024, 1.0, ""), None).totals;
    let want = 0.5f64.sqrt();
    assert!((alone.tlb_miss_rate_rel - want).abs() < 1e-6, "{} against {want}", alone.tlb_miss_rate_rel);
    assert!((alone.llc_cpi_factor - (1.0 + want)).abs() < 1e-6, "CPI factor {}", alone.llc_cpi_factor);
    assert!(alone.llc_miss_rate_rel.abs() < 1e-9, "a TLB stall is not an LLC miss: {}", alone.llc_miss_rate_rel);
    let two = run_text(&tlb_text(1, &[0, 0], 1024, 1.0, ""), None).totals;
    println!("TLB stall per cycle of work: alone {}, two threads {}", alone.tlb_miss_rate_rel, two.tlb_miss_rate_rel);
    assert!(two.tlb_miss_rate_rel > want + 0.2, "{} against alone {want}", two.tlb_miss_rate_rel);
    assert!(two.tlb_miss_rate_rel <= 1.0 + 1e-9, "{}", two.tlb_miss_rate_rel);
}

/// The TLB is per core (Nehalem/Westmere's STLB), not per socket as the LLC: a thread on
/// pCPU 1 of the same socket adds nothing to pCPU 0's translations, so each of two threads
/// pinned apart stalls as alone, (1024 / 2048)^1/2 = 0.7071.
#[test]
fn a_thread_on_another_core_of_the_socket_adds_nothing_to_a_cores_tlb() {
    let apart = run_text(&tlb_text(2, &[0, 1], 1024, 1.0, ""), None).totals;
    assert!((apart.tlb_miss_rate_rel - 0.5f64.sqrt()).abs() < 1e-6, "{}", apart.tlb_miss_rate_rel);
}

/// Off (stall ratio 0, the default) the TLB model changes nothing, whatever its other
/// parameters: the same results as a scenario without them, and no TLB stall counted.
#[test]
fn the_tlb_model_off_changes_nothing() {
    let plain = run_text(&tlb_text(1, &[0, 0], 1024, 0.0, ""), None);
    let other = run_text(&tlb_text(1, &[0, 0], 1024, 0.0, "tlb_entries = 64\ntlb_miss_exponent = 0.7"), None);
    // Everything but the scenario echoed in the results.
    let strip = |r: &Results| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("scenario");
        v.to_string()
    };
    assert_eq!(strip(&plain), strip(&other));
    assert_eq!(plain.totals.tlb_miss_rate_rel, 0.0);
    assert_eq!(plain.totals.llc_cpi_factor, 1.0);
}

/// `tlb_text` with the TLB flush at full context switches (`host.costs.tlb_walk_cycles`,
/// `hv::tlb`), optionally Xen's lazy switch, run to 200 ms; the world after it.
fn tlb_flush_world(pins: &[u32], walk_cycles: u64, lazy: bool) -> Simulation {
    let mut text = tlb_text(1, pins, 1024, 1.0, &format!("tlb_walk_cycles = {walk_cycles}"));
    if lazy {
        text = text.replace("scheduler = \"credit\"\n", "scheduler = \"credit\"\nparams = { lazy_context_switch = true, ratelimit_us = 0 }\n");
    }
    let sc = from_toml_str(&text).expect("scenario parses");
    let mut s = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).expect("scenario builds");
    s.run_until(200 * NS_PER_MS).expect("no invariant violated");
    s
}

/// Two threads (1024 KiB each) share one pCPU, no lazy switch: every dispatch is a full
/// switch and flushes the pCPU's TLB. Without the flush each dispatch finds the other's
/// entries (the stall above alone's 0.7071, `more_distinct_threads_per_core_stall_more_on_the_tlb`);
/// with it the domain is empty, so each thread's stall is alone's, (1024 / 2048)^1/2 = 0.7071
/// per cycle of work, and each start after a flush costs 1024 / 4 = 256 walks (below the 512
/// entries) of 100 cycles, charged as refill time (the cache refill is 0 here) and counted in
/// the TLB miss rate: (stall + walks) / work. A thread's first start (never ran) costs none.
#[test]
fn a_full_switch_empties_the_pcpus_tlb_and_the_incoming_thread_pays_its_walks() {
    let mut s = tlb_flush_world(&[0, 0], 100, false);
    let w = s.world();
    let pc = &w.pcpus[0];
    let per_start = w.topo.cycles_to_ns(256 * 100) as f64;
    // One flush per dispatch, each a full switch (no tasklets here).
    assert!(pc.tlb_flushes > 20 && pc.tlb_flushes == pc.lazy.state_switches, "{} flushes, {} full switches", pc.tlb_flushes, pc.lazy.state_switches);
    // Walks: whole sets of 256, one per start after a flush; a vCPU dispatched and switched out
    // before its thread started adds a flush without a start, so at most flushes - 2. The
    // pCPU counts them as paid (`World::pay_refill`), the rest is still owed at the end.
    let owed_walks: f64 = w.vcpus.iter().map(|v| v.refill_debt_walks_ns).sum();
    let starts = (pc.tlb_walk_ns + owed_walks) / per_start;
    assert!((starts - starts.round()).abs() < 1e-6, "{} ns of walks, {per_start} per start", pc.tlb_walk_ns + owed_walks);
    let starts = starts.round();
    assert!(starts >= 0.9 * (pc.tlb_flushes - 2) as f64 && starts <= (pc.tlb_flushes - 2) as f64, "{starts} starts, {} flushes", pc.tlb_flushes);
    let (stall, work, walks) = (pc.tlb_stall_ns, pc.llc_work_ns, pc.tlb_walk_ns);
    assert!((stall / work - 0.5f64.sqrt()).abs() < 1e-6, "stall per work {} against alone's 0.7071", stall / work);
    // The walks were paid as refill time (the cache refill is 0 here), and counted as paid.
    let paid: Ns = w.vcpus.iter().map(|v| v.t.cache_refill).sum();
    assert!((paid as f64 - walks).abs() < 1e-3, "{paid} ns paid, {walks} ns of walks counted");
    let r = s.run().unwrap();
    assert!((r.totals.tlb_miss_rate_rel - (stall + walks) / work).abs() < 1e-9, "{:?}", r.totals);
    assert!(r.totals.tlb_miss_rate_rel > 0.5f64.sqrt() + 1e-3);
    // One pCPU over 0.2 s.
    assert!((r.totals.tlb_flushes_per_pcpu_s - r.pcpus[0].tlb_flushes as f64 / 0.2).abs() < 1e-6, "{:?}", r.totals);
}

/// With Xen's lazy switch a vCPU alone on its pCPU comes back to the state the pCPU still
/// holds (`hv::lazy_switch`): only its first dispatch is a full switch, so the TLB is flushed
/// once and its thread, which had not run before that flush, never pays a walk.
#[test]
fn a_lazy_switch_back_to_the_loaded_vcpu_does_not_flush_the_tlb() {
    let mut s = tlb_flush_world(&[0], 100, true);
    let w = s.world();
    let pc = &w.pcpus[0];
    assert!(pc.lazy.lazy_switches > 20, "{:?}", pc.lazy);
    assert_eq!((pc.tlb_flushes, pc.lazy.state_switches), (1, 1));
    assert_eq!(pc.tlb_walk_ns, 0.0);
    // Two vCPUs on the pCPU: the switches between them are full and flush, the lazy ones
    // (back to the vCPU whose state is loaded) do not.
    let mut s = tlb_flush_world(&[0, 0], 100, true);
    let pc = &s.world().pcpus[0];
    assert!(pc.lazy.lazy_switches > 0 && pc.lazy.state_switches > 2, "{:?}", pc.lazy);
    assert_eq!(pc.tlb_flushes, pc.lazy.state_switches);
}

/// Off (`tlb_walk_cycles` 0, the default) nothing is flushed: the TLB model runs as before,
/// the same results whether the line is written or not, no flush and no walk counted.
#[test]
fn the_tlb_flush_off_changes_nothing() {
    let absent = run_text(&tlb_text(1, &[0, 0], 1024, 1.0, ""), None);
    let zero = run_text(&tlb_text(1, &[0, 0], 1024, 1.0, "tlb_walk_cycles = 0"), None);
    let strip = |r: &Results| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("scenario");
        v.to_string()
    };
    assert_eq!(strip(&absent), strip(&zero));
    assert_eq!(absent.totals.tlb_flushes_per_pcpu_s, 0.0);
    let mut s = tlb_flush_world(&[0, 0], 0, false);
    assert_eq!((s.world().pcpus[0].tlb_flushes, s.world().pcpus[0].tlb_walk_ns), (0, 0.0));
}

#[test]
fn a_servers_port_io_instructions_are_io_exits_paid_in_the_hypervisor() {
    let text = |n: u32| {
        format!(
            r#"
duration_ms = 50
[host]
sockets = 1
cores_per_socket = 1
[host.costs]
exit_io_ns = 1500
[[vms]]
vcpus = 1
io_path = "passthrough"
workloads = [{{ kind = "server", role = "db", rate_per_s = 2000.0, threads = 1, port_io_exits = {n} }}]
"#
        )
    };
    let r = run_text(&text(3), None);
    let vm = &r.vms[0];
    let io = vm.exits["io"];
    // One worker: every request it took is finished or the one still in its hands.
    assert!(vm.requests.count > 50, "requests served: {}", vm.requests.count);
    assert!(io >= 3 * vm.requests.count && io <= 3 * (vm.requests.count + 1), "{io} exits for {} requests", vm.requests.count);
    assert_eq!(r.totals.hv_ns_by_exit["io"], io * 1500);
    // Without them the pass-through server takes no I/O-instruction exit at all.
    assert_eq!(run_text(&text(0), None).vms[0].exits["io"], 0);
}

#[test]
fn a_warm_up_leaves_out_exactly_the_requests_completed_by_its_end() {
    let text = |head: &str| {
        format!(
            r#"
{head}
[host]
sockets = 1
cores_per_socket = 2
[[vms]]
vcpus = 2
workloads = [{{ kind = "server", role = "web", rate_per_s = 4000.0, threads = 2 }}]
"#
        )
    };
    let whole = run_text(&text("duration_ms = 60"), None);
    let warm = run_text(&text("duration_ms = 60\nwarmup_ms = 20"), None);
    let first = run_text(&text("duration_ms = 20"), None);
    let (a, b, c) = (&whole.vms[0].requests, &warm.vms[0].requests, &first.vms[0].requests);
    assert!(c.count > 20 && b.count > 20, "{} requests in the warm-up, {} after", c.count, b.count);
    assert_eq!((b.count, b.warmup_count, a.warmup_count), (a.count - c.count, c.count, 0));
    let sum = |r: &crate::metrics::results::RequestSummary| r.mean_ms * r.count as f64;
    assert!((sum(a) - sum(c) - sum(b)).abs() < 1e-9 * sum(a), "{} - {} vs {}", sum(a), sum(c), sum(b));
    // Nothing else changes: the warm-up only decides what the request summaries count.
    assert_eq!((warm.events, warm.vms[0].exits.clone()), (whole.events, whole.vms[0].exits.clone()));
}

/// A 1-vCPU hog alone on a 2-pCPU host with the cache refill on, run 5 ms: the simulation,
/// its vCPU, the vCPU's thread and pCPU, and the thread's whole refill from memory (ns).
fn hog_refill_world() -> (Simulation, VcpuId, ThreadId, PcpuId, Ns) {
    let text = r#"
        duration_ms = 100
        [host]
        cores_per_socket = 2
        [host.costs]
        cache_refill_ns_per_mib = 134000
        [[vms]]
        vcpus = 1
        [[vms.workloads]]
        kind = "hog"
        "#;
    let sc = from_toml_str(text).unwrap();
    let mut sim = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
    sim.run_until(5 * NS_PER_MS).unwrap();
    let v = 0;
    let (t, p) = (sim.w.vcpus[v].cur.unwrap(), sim.w.vcpus[v].running_on().unwrap());
    let ws = sim.w.threads[t].ws_kib;
    let whole = crate::host::refill_parts_ns(&sim.w.topo, &sim.w.costs, p, p, ws, 0.0, 0).0.round() as Ns;
    (sim, v, t, p, whole)
}

/// The refill debt is capped (session 20, `hv::machine` `refill_debt_after`): a vCPU
/// descheduled before it paid its thread's refill owes, at its next dispatch, what it still
/// owed plus the new refill, but never more than the thread's whole working set from memory
/// (and its page walks). Uncapped, a preempted ticket-lock holder given directed yields for
/// moments at a time owed more with each dispatch and never reached its critical section
/// (FlexCore's streamcluster, seed 2: the holder's cpu_down, and the ballooning, waited 13 s).
#[test]
fn a_vcpu_never_owes_more_than_its_threads_whole_refill() {
    let (mut sim, v, t, p, whole) = hog_refill_world();
    assert!(whole > 1000, "the hog's working set costs a refill ({whole} ns)");
    sim.w.vcpus[v].refill_debt_ns = 0;
    assert_eq!(sim.w.refill_debt_after(v, t, p, 10), 10, "nothing owed: the new refill");
    sim.w.vcpus[v].refill_debt_ns = 20;
    assert_eq!(sim.w.refill_debt_after(v, t, p, 10), 30, "debts below the whole add up");
    sim.w.vcpus[v].refill_debt_ns = 1000 * whole;
    assert_eq!(sim.w.refill_debt_after(v, t, p, 10), whole, "never more than the whole working set");
    // The checker (on in every test) holds whole runs to it: a debt above the coldest refill
    // any thread of the VM can need is an error, the whole refill itself is not.
    sim.w.vcpus[v].refill_debt_ns = whole;
    assert_eq!(sim.w.check(), Ok(()));
    sim.w.vcpus[v].refill_debt_ns = 1000 * whole;
    let e = sim.w.check().unwrap_err();
    assert!(e.contains("vcpu 0 owes") && e.contains("cache refill"), "{e}");
}

/// The LLC and TLB accounting (`llc_cpi_factor` and the miss rates) counts the refill as the
/// vCPU pays it (`World::pay_refill`), not what each dispatch owed: what a capped debt drops
/// was never refetched (session 27; before, a vCPU dispatched for moments at a time counted
/// its whole refill again at each dispatch). The debt's part from memory goes with it.
#[test]
fn the_cache_accounting_counts_the_refill_paid_not_what_a_capped_debt_dropped() {
    let (mut sim, v, t, p, whole) = hog_refill_world();
    // Owing the whole refill already, a vCPU owed it whole again (four moments' dispatches):
    // its debt stays the whole, and its part from memory with it.
    sim.w.vcpus[v].refill_debt_ns = 0;
    sim.w.vcpus[v].refill_debt_dram_ns = 0.0;
    let owed = RefillOwed { ns: whole, walks_ns: 0, dram_ns: whole as f64 };
    for _ in 0..4 {
        sim.w.owe_refill(v, t, p, owed);
    }
    assert_eq!(sim.w.vcpus[v].refill_debt_ns, whole);
    assert!((sim.w.vcpus[v].refill_debt_dram_ns - whole as f64).abs() < 1e-6);
    // Paid over the rest of the run (the hog alone on its pCPU owes nothing more): the pCPU
    // counts the whole refill once, not four times, and exactly what was paid.
    let (refill0, dram0) = (sim.w.pcpus[p].llc_refill_ns, sim.w.pcpus[p].llc_refill_dram_ns);
    let paid0 = sim.w.vcpus[v].t.cache_refill;
    sim.run().unwrap();
    assert_eq!(sim.w.vcpus[v].refill_debt_ns, 0, "paid by the end");
    let counted = sim.w.pcpus[p].llc_refill_ns - refill0;
    assert_eq!(counted, (sim.w.vcpus[v].t.cache_refill - paid0) as f64);
    assert!((counted - whole as f64).abs() < 1.0, "{counted} ns counted, the whole is {whole} ns");
    assert!((sim.w.pcpus[p].llc_refill_dram_ns - dram0 - whole as f64).abs() < 1.0);
}

/// One 1-vCPU VM whose one thread (512 KiB working set) alternates 5 ms of compute with 5 ms
/// holding lock `l`, from t = 0; checked every event.
fn compute_then_hold_sim() -> Simulation {
    let text = r#"
        duration_ms = 100
        [host]
        cores_per_socket = 2
        [[vms]]
        vcpus = 1
        [[vms.workloads]]
        kind = "custom"
        groups = [{ threads = 1, working_set_kib = 512, program = [
          { op = "forever", body = [
            { op = "compute", us = { dist = "fixed", us = 5000 } },
            { op = "lock", lock = "l", cs_us = 5000 },
          ] },
        ] }]
        "#;
    let sc = from_toml_str(text).unwrap();
    Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap()
}

/// A thread dispatched inside a spinlock critical section runs the section before its vCPU
/// pays the refill debt, and pays it after the release (`hv::machine` `refill_deferred`, session
/// 23); a thread running its own code pays the debt first. Before, a holder dispatched for a
/// few µs at a time owed its whole working set again at each dispatch and never finished its
/// section while its waiters spun (a FlexCore run of dedup livelocked so).
#[test]
fn a_lock_holder_finishes_its_critical_section_before_paying_the_refill() {
    let mut sim = compute_then_hold_sim();
    let v = 0;
    let in_section = |sim: &Simulation| {
        let t = sim.w.vcpus[v].cur.unwrap();
        sim.w.threads[t].act.in_critical_section()
    };
    // In the section: 5 ms of compute, then 5 ms holding the lock, from t = 0.
    sim.run_until(7 * NS_PER_MS).unwrap();
    assert!(in_section(&sim), "the thread holds its lock at 7 ms");
    // Below the whole 512 KiB refill from memory (about 65 µs), which the checker allows at most.
    let debt: Ns = 60_000;
    sim.w.advance(v);
    sim.w.vcpus[v].refill_debt_ns = debt;
    sim.w.arm_exec(v);
    sim.run_until(9 * NS_PER_MS).unwrap();
    sim.w.advance(v);
    sim.w.arm_exec(v);
    assert!(in_section(&sim), "still in the section at 9 ms");
    assert_eq!(sim.w.vcpus[v].refill_debt_ns, debt, "nothing of the debt paid inside the section");
    // The section ends at 10 ms; then the debt is paid before the next compute.
    sim.run_until(10 * NS_PER_MS + 30_000).unwrap();
    sim.w.advance(v);
    sim.w.arm_exec(v);
    assert!(!in_section(&sim), "the section ended on time");
    let left = sim.w.vcpus[v].refill_debt_ns;
    assert!(left > 0 && left < debt, "paid after the release: {left} ns left");
    // Outside a section the debt comes first: 50 µs later the thread's compute has not moved.
    sim.run_until(10 * NS_PER_MS + 100_000).unwrap();
    sim.w.advance(v);
    sim.w.vcpus[v].refill_debt_ns = debt;
    sim.w.arm_exec(v);
    let t = sim.w.vcpus[v].cur.unwrap();
    let compute_left = |sim: &Simulation| match sim.w.threads[t].act {
        Activity::Compute { left, .. } => left,
        _ => panic!("computing"),
    };
    let before = compute_left(&sim);
    sim.run_until(10 * NS_PER_MS + 150_000).unwrap();
    sim.w.advance(v);
    assert_eq!(compute_left(&sim), before, "no progress while the refill is owed");
    assert!(sim.w.vcpus[v].refill_debt_ns < debt);
}

/// Session 30: a waiter granted a ticket lock while descheduled (`LockGranted`) takes the lock
/// over before its vCPU pays the refill debt, as a holder runs its section first: the hand-off
/// reads only the lock word. With the refill first, two such waiters of two VMs sharing a pCPU,
/// each dispatched for a few µs by its own VM's spinners' directed yields, never took their
/// locks (a FlexCore dedup run with I/O waits stood for 16 s).
#[test]
fn a_granted_waiter_takes_its_lock_before_paying_the_refill() {
    let mut sim = compute_then_hold_sim();
    let v = 0;
    sim.run_until(7 * NS_PER_MS).unwrap();
    let t = sim.w.vcpus[v].cur.unwrap();
    let Activity::Compute { then: AfterCompute::ReleaseLock(lock), .. } = sim.w.threads[t].act else {
        panic!("the thread holds its lock at 7 ms")
    };
    // The lock handed to the thread (its holder already), 300 ns of hand-off to run, and a
    // refill owed below the whole 512 KiB from memory (about 65 µs).
    sim.w.advance(v);
    let now = sim.w.now();
    sim.w.threads[t].act = Activity::LockGranted { lock, left: 300, since: now };
    let debt: Ns = 60_000;
    sim.w.vcpus[v].refill_debt_ns = debt;
    sim.w.arm_exec(v);
    sim.run_until(now + 1_000).unwrap();
    sim.w.advance(v);
    assert!(sim.w.threads[t].act.in_critical_section(), "in the section 1 µs later: {:?}", sim.w.threads[t].act);
    assert_eq!(sim.w.vcpus[v].refill_debt_ns, debt, "nothing of the debt paid before the section");
}

/// Session 32: KVM's `kvm_arch_dy_runnable` as the model keeps it (`VcpuState::dy_runnable`,
/// read by the 5.3+ directed-yield rule in `hv/sched/cfs.rs`): a halted vCPU woken by an
/// interrupt stays dy_runnable until it runs; a LAPIC timer wake-up (`KVM_REQ_UNBLOCK`, no
/// `KVM_REQ_EVENT`) does not make it so.
#[test]
fn a_vcpu_woken_by_an_interrupt_is_dy_runnable_until_it_runs_and_a_timer_wake_is_not() {
    let text = "duration_ms = 50\n[hypervisor]\nscheduler = \"cfs\"\n[host]\ncores_per_socket = 1\n[[vms]]\nvcpus = 2\nworkloads = [{ kind = \"hog\", threads = 1 }]\n";
    let sc = from_toml_str(text).unwrap();
    let mut sim = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
    sim.run_until(5 * NS_PER_MS).unwrap();
    let idle = (0..2).find(|&v| sim.w.vcpus[v].run == RunState::Blocked).expect("one vCPU halted");
    let irq = |sim: &Simulation| IrqWork { left_ns: 1_000, action: IrqAction::Nothing, sent_at: sim.w.now() };
    let work = irq(&sim);
    sim.w.deliver_irq(idle, work);
    assert_ne!(sim.w.vcpus[idle].run, RunState::Blocked, "woken");
    assert!(sim.w.vcpus[idle].dy_runnable && sim.w.facts[idle].dy_runnable, "an interrupt's wake-up is dy_runnable");
    let dispatched = sim.w.vcpus[idle].dispatches;
    let mut t = sim.w.now();
    while sim.w.vcpus[idle].dispatches == dispatched {
        assert!(sim.w.vcpus[idle].dy_runnable, "dy_runnable while it waits");
        t += 1_000;
        assert!(t < 40 * NS_PER_MS, "the woken vCPU never ran");
        sim.run_until(t).unwrap();
    }
    assert!(!sim.w.vcpus[idle].dy_runnable && !sim.w.facts[idle].dy_runnable, "cleared when it runs");
    while sim.w.vcpus[idle].run != RunState::Blocked {
        t += 1_000;
        assert!(t < 45 * NS_PER_MS, "the vCPU never halted again");
        sim.run_until(t).unwrap();
    }
    let work = irq(&sim);
    sim.w.deliver_irq_as(idle, work, false);
    assert_ne!(sim.w.vcpus[idle].run, RunState::Blocked, "woken by its timer");
    assert!(!sim.w.vcpus[idle].dy_runnable, "a timer wake-up is not dy_runnable");
}

#[test]
fn a_pv_kick_that_reaches_a_halt_polling_vcpu_is_never_lost() {
    // The kick lands while the waiter's vCPU polls in kvm_vcpu_halt; a reschedule of its pCPU
    // then ends the poll, and kvm_vcpu_block's last kvm_vcpu_check_block sees pv_unhalted:
    // the vCPU must not block with its kicked thread (the checker, on here, calls a halted
    // vCPU whose thread has work a lost wake-up). Seeds 1-8 include runs where that happens
    // (before the fix seed 5 lost a kick and left every vCPU of a VM halted; under session 34's
    // dy_eligible fix seed 1 did, at 913.8 ms).
    let text = with_guest(SYNC_2VM, "{ spinlock = \"queued\", paravirt = { spinlock = true, spin_loops = 64 } }");
    let sc = from_toml_str(&text).unwrap();
    for seed in 1..=8 {
        let mut sim = Simulation::new(&sc, &Overrides { scheduler: Some("cfs".into()), seed: Some(seed), check: true }).unwrap();
        let r = sim.run().expect("no invariant violated");
        assert!(r.vms.iter().all(|v| v.finished), "seed {seed}: every VM finishes");
    }
}

/// A 4-vCPU hackbench VM (two groups of 10 senders and 10 receivers over sockets) on 4 pCPUs:
/// wake-ups between its 40 processes mostly land on busy vCPUs. Its sockets are 20 KiB (64
/// messages), so that the senders keep blocking on them and the receivers keep draining them:
/// with the default 112 KiB most of its 4,000 messages a socket fit without a wake-up.
fn hackbench_4vcpu(guest: &str) -> String {
    format!(
        r#"name = "hackbench-4"
seed = 1
[host]
sockets = 1
cores_per_socket = 4
[hypervisor]
scheduler = "cfs"
[[vms]]
name = "hb"
vcpus = 4
guest = {guest}
[[vms.workloads]]
kind = "hackbench"
groups = 2
fds = 10
loops = 200
msg_us = 2.0
sndbuf_bytes = 20480
"#
    )
}

#[test]
fn the_wake_list_sends_a_reschedule_ipi_for_wakeups_onto_busy_vcpus() {
    let off = run_text(&hackbench_4vcpu("{ ttwu_queue = false }"), None);
    let on = run_text(&hackbench_4vcpu("{ ttwu_queue = true }"), None);
    assert!(on.vms[0].finished && off.vms[0].finished);
    assert_eq!(results_json(&off), results_json(&run_text(&hackbench_4vcpu("{}"), None)), "off is the default");
    let ipi = |r: &Results| r.vms[0].exits["ipi"];
    // Without the list a wake-up onto a busy vCPU sends an IPI only when it preempts; with it,
    // every wake-up onto a busy vCPU whose list was empty does.
    assert!(ipi(&on) > 2 * ipi(&off), "IPI exits: wake list {} against none {}", ipi(&on), ipi(&off));
    assert_eq!(results_json(&on), results_json(&run_text(&hackbench_4vcpu("{ ttwu_queue = true }"), None)));
}

#[test]
fn the_2632_wake_placements_are_deterministic_and_off_by_default() {
    let default = results_json(&run_text(&hackbench_4vcpu("{}"), None));
    assert_eq!(default, results_json(&run_text(&hackbench_4vcpu("{ wake_placement = \"prev_or_idle\" }"), None)));
    for wp in ["affine", "affine_idle_sibling"] {
        let text = hackbench_4vcpu(&format!("{{ wake_placement = \"{wp}\" }}"));
        let r = run_text(&text, None);
        assert!(r.vms[0].finished, "{wp}");
        assert_eq!(results_json(&r), results_json(&run_text(&text, None)), "{wp}: same seed, same result");
        assert_ne!(results_json(&r), default, "{wp} changes the placement");
    }
}

#[test]
fn threads_on_the_wake_list_of_a_vcpu_taken_offline_finish_elsewhere() {
    let sc = from_toml_str(&hackbench_4vcpu("{ ttwu_queue = true }")).unwrap();
    let mut sim = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap();
    sim.run_until(5 * NS_PER_MS).unwrap();
    sim.set_vcpu_online(0, 3, false).unwrap();
    sim.set_vcpu_online(0, 2, false).unwrap();
    let r = sim.run().unwrap();
    assert!(r.vms[0].finished, "all threads must finish on the remaining vCPUs");
}

/// The guest's tick accounting (`metrics::cputime`) of VM `vm`: user, system and steal time.
fn ticks_of(r: &Results, vm: usize) -> (f64, f64, f64) {
    let g = &r.vms[vm].guest_ticks;
    (g.user_ns as f64, g.system_ns as f64, g.steal_ns as f64)
}

#[test]
fn the_guests_tick_accounting_covers_its_running_and_stolen_time() {
    let r = run_text(SYNC_2VM, Some("cfs"));
    for vm in 0..2 {
        let (user, system, steal) = ticks_of(&r, vm);
        let v = &r.vms[vm];
        // Every jiffy the vCPUs ran or waited preempted is charged once (halted ones are not).
        let covered = (v.cpu_ns - v.guest_ns.on_cpu.halt_poll + v.guest_ns.steal) as f64;
        let charged = user + system + steal;
        assert!((charged / covered - 1.0).abs() < 0.05, "vm{vm}: ticks {charged} against {covered} ns");
        assert!(system > 0.0 && user > 0.0 && steal > 0.0, "vm{vm}: {user} / {system} / {steal}");
    }
    // The same ticks and nothing else: sampling leaves the simulation as it was.
    assert_eq!(results_json(&r), results_json(&run_text(SYNC_2VM, Some("cfs"))));
}

#[test]
fn a_guest_with_no_kernel_work_and_no_contention_ticks_in_user_mode() {
    let one = sync_free(SYNC_2VM);
    let one = one.split("[[vms]]\nname = \"vm1\"").next().unwrap().to_string();
    let r = run_text(&one, Some("cfs"));
    let (user, system, steal) = ticks_of(&r, 0);
    assert!(user > 0.0);
    assert!(system < 0.02 * user, "system {system} against user {user}");
    assert!(steal < 0.02 * user, "steal {steal} against user {user}");
}
