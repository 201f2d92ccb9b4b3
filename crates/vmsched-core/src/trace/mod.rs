//! Timeline trace: every vCPU's run state over a window of simulated time, exported as Chrome
//! Trace Event JSON (opens in ui.perfetto.dev and chrome://tracing).
//!
//! Models nothing: an observer of `World::set_run`, the one place a vCPU's run state changes
//! (docs/model.md §2). Layout (reference/ecosystem.md §2.2): one process "host" with a track
//! per pCPU, whose slices name the vCPU it ran (never overlapping: a pCPU runs one vCPU or
//! none; idle time is left empty); one process per VM with a track per vCPU and a slice per
//! state (`run@p<N>`, `runnable`, `halted`, `offline`; a vCPU descheduled while runnable is
//! named for what its guest thread was doing, as `hv::machine` `deschedule` counts lock-holder
//! and lock-waiter preemptions: `preempted holding a lock`, `preempted with a granted lock`,
//! `preempted in kernel`); controller actions as instant events
//! on the host; and per VM a counter track `exits/ms` with its VM exits by reason in 1 ms
//! buckets (`World::count_exit` reports each). Times are written in µs with the nanoseconds
//! kept exactly (`ts` 1234.567).
//!
//! Leaves out: each exit and interrupt as an event of its own (a PLE-heavy run takes millions
//! of exits a second), guest threads, and Perfetto's protobuf format (JSON is what the viewers
//! open directly; a trace is capped at `max_slices` state slices so that it stays within what
//! they load, about 100 MB).

use std::fmt::Write;

use crate::engine::Ns;
use crate::host::ExitReason;
use crate::sim::control::ActionRecord;
use crate::sim::state::{RunState, Vcpu, Vm};

/// The default cap on state slices (about 0.1 kB of JSON each, twice for running slices).
pub const DEFAULT_MAX_SLICES: usize = 500_000;

/// Width of the exit counters' buckets.
pub const EXIT_BUCKET_NS: Ns = 1_000_000;

type ExitCounts = [u32; ExitReason::ALL.len()];

/// What a vCPU descheduled while runnable was doing (`hv::machine` `deschedule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Preempted {
    /// Not preempted, or preempted in guest user mode.
    #[default]
    Plain,
    /// In guest kernel mode (spinning, waiting for IPI acknowledgements, handling interrupts).
    InKernel,
    /// Its thread holds a spinlock: a lock-holder preemption.
    LockHolder,
    /// Its thread was granted a spinlock it has not yet taken: a lock-waiter preemption.
    LockWaiter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slice {
    vcpu: usize,
    state: RunState,
    why: Preempted,
    from: Ns,
    to: Ns,
}

/// What `World::set_run` reports to, while a trace is on.
#[derive(Debug, Clone)]
pub struct Recorder {
    from_ns: Ns,
    until_ns: Ns,
    max_slices: usize,
    /// Each vCPU's current state, why it was preempted, and since when (clipped to the window
    /// at export).
    open: Vec<(RunState, Preempted, Ns)>,
    slices: Vec<Slice>,
    /// Simulated time at which the cap stopped the recording.
    truncated_at: Option<Ns>,
    /// Per VM, per `EXIT_BUCKET_NS` bucket from `from_ns`: its exits by reason.
    exits: Vec<Vec<ExitCounts>>,
}

impl Recorder {
    /// A recorder over `[from_ns, until_ns)` starting at `now` with the vCPUs' current states.
    pub(crate) fn new(from_ns: Ns, until_ns: Ns, max_slices: usize, now: Ns, vcpus: &[Vcpu]) -> Recorder {
        Recorder {
            from_ns,
            until_ns,
            max_slices,
            open: vcpus.iter().map(|v| (v.run, Preempted::Plain, now)).collect(),
            slices: Vec::new(),
            truncated_at: None,
            exits: Vec::new(),
        }
    }

    /// A VM exit of VM `vm` at `now`.
    pub(crate) fn exit(&mut self, vm: usize, r: ExitReason, now: Ns) {
        if now < self.from_ns || now >= self.until_ns {
            return;
        }
        let b = ((now - self.from_ns) / EXIT_BUCKET_NS) as usize;
        if self.exits.len() <= vm {
            self.exits.resize(vm + 1, Vec::new());
        }
        let buckets = &mut self.exits[vm];
        if buckets.len() <= b {
            buckets.resize(b + 1, [0; ExitReason::ALL.len()]);
        }
        buckets[b][r.index()] += 1;
    }

    /// vCPU `vcpu` changes state at `now`.
    pub(crate) fn state_changed(&mut self, vcpu: usize, new: RunState, now: Ns) {
        let (state, why, since) = std::mem::replace(&mut self.open[vcpu], (new, Preempted::Plain, now));
        self.record(Slice { vcpu, state, why, from: since, to: now });
    }

    /// vCPU `vcpu`, just descheduled while runnable, was preempted as `why`.
    pub(crate) fn preempted(&mut self, vcpu: usize, why: Preempted) {
        self.open[vcpu].1 = why;
    }

    fn record(&mut self, s: Slice) {
        let Some(s) = self.clip(s) else { return };
        if self.truncated_at.is_some() {
            return;
        }
        if self.slices.len() >= self.max_slices {
            self.truncated_at = Some(s.from);
            return;
        }
        self.slices.push(s);
    }

    /// `s` cut to the window, None if nothing of it lies inside.
    fn clip(&self, s: Slice) -> Option<Slice> {
        let (from, to) = (s.from.max(self.from_ns), s.to.min(self.until_ns));
        (from < to).then_some(Slice { from, to, ..s })
    }

    /// When the cap stopped the recording, if it did.
    pub fn truncated_at_ns(&self) -> Option<Ns> {
        self.truncated_at
    }

    /// The trace as Chrome Trace Event JSON, the vCPUs' open states closed at `now` (as
    /// `record` would, within the cap).
    pub(crate) fn chrome_json(&self, now: Ns, n_pcpus: usize, vms: &[Vm], vcpus: &[Vcpu], actions: &[ActionRecord]) -> String {
        let open = self.open.iter().enumerate().filter_map(|(vcpu, &(state, why, from))| self.clip(Slice { vcpu, state, why, from, to: now }));
        let (mut closing, mut truncated_at) = (Vec::new(), self.truncated_at);
        if truncated_at.is_none() {
            let room = self.max_slices - self.slices.len();
            closing = open.collect::<Vec<_>>();
            if closing.len() > room {
                truncated_at = Some(closing[room].from);
                closing.truncate(room);
            }
        }
        let slices = self.slices.iter().chain(&closing);
        let mut out = String::with_capacity(128 * (2 * (self.slices.len() + closing.len()) + vcpus.len() + n_pcpus + 8));
        out.push_str("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"vmsched\"");
        let _ = write!(out, ",\"window_ns\":[{},{}]", self.from_ns, self.until_ns.min(now));
        if let Some(t) = truncated_at {
            let _ = write!(out, ",\"truncated_at_ns\":{t}");
        }
        out.push_str("},\"traceEvents\":[\n");
        let mut first = true;
        let mut event = |out: &mut String, text: String| {
            if !std::mem::take(&mut first) {
                out.push_str(",\n");
            }
            out.push_str(&text);
        };
        event(&mut out, name_meta(0, None, "process_name", "host"));
        event(&mut out, sort_meta(0, None, "process_sort_index", 0));
        for p in 0..n_pcpus {
            event(&mut out, name_meta(0, Some(p), "thread_name", &format!("pCPU{p}")));
            event(&mut out, sort_meta(0, Some(p), "thread_sort_index", p));
        }
        for (i, vm) in vms.iter().enumerate() {
            event(&mut out, name_meta(i + 1, None, "process_name", &format!("vm {}", vm.name)));
            event(&mut out, sort_meta(i + 1, None, "process_sort_index", i + 1));
            for k in 0..vm.vcpus.len() {
                event(&mut out, name_meta(i + 1, Some(k), "thread_name", &format!("vCPU{k}")));
                event(&mut out, sort_meta(i + 1, Some(k), "thread_sort_index", k));
            }
        }
        for s in slices {
            let vc = &vcpus[s.vcpu];
            let name = match (s.state, s.why) {
                (RunState::Running(p), _) => format!("run@p{p}"),
                (RunState::Runnable, Preempted::Plain) => "runnable".into(),
                (RunState::Runnable, Preempted::InKernel) => "preempted in kernel".into(),
                (RunState::Runnable, Preempted::LockHolder) => "preempted holding a lock".into(),
                (RunState::Runnable, Preempted::LockWaiter) => "preempted with a granted lock".into(),
                (RunState::Blocked, _) => "halted".into(),
                (RunState::Offline, _) => "offline".into(),
            };
            event(&mut out, complete(vc.vm + 1, vc.idx as usize, "vcpu", &name, s.from, s.to));
            if let RunState::Running(p) = s.state {
                let who = format!("{}/v{}", json_escape(&vms[vc.vm].name), vc.idx);
                event(&mut out, complete(0, p, "pcpu", &who, s.from, s.to));
            }
        }
        for (vm, buckets) in self.exits.iter().enumerate() {
            let seen: Vec<ExitReason> =
                ExitReason::ALL.iter().copied().filter(|r| buckets.iter().any(|c| c[r.index()] > 0)).collect();
            let mut last: Option<&ExitCounts> = None;
            let zero = [0; ExitReason::ALL.len()];
            // A counter holds its value until the next sample: write a bucket when it differs
            // from the one before, and a closing zero after the last.
            for (b, c) in buckets.iter().chain(std::iter::once(&zero)).enumerate() {
                if last == Some(c) || (last.is_none() && c == &zero) {
                    continue;
                }
                last = Some(c);
                let t = self.from_ns + b as Ns * EXIT_BUCKET_NS;
                let args: Vec<String> = seen.iter().map(|r| format!("\"{}\":{}", r.name(), c[r.index()])).collect();
                event(
                    &mut out,
                    format!("{{\"ph\":\"C\",\"pid\":{},\"ts\":{},\"name\":\"exits/ms\",\"args\":{{{}}}}}", vm + 1, us(t), args.join(",")),
                );
            }
        }
        for a in actions {
            let t = (a.t_ms * 1e6).round() as Ns;
            if t < self.from_ns || t >= self.until_ns {
                continue;
            }
            let args = serde_json::to_string(&a.action).unwrap_or_else(|_| "{}".into());
            event(
                &mut out,
                format!(
                    "{{\"ph\":\"i\",\"s\":\"p\",\"pid\":0,\"tid\":0,\"ts\":{},\"name\":\"{}\",\"cat\":\"action\",\"args\":{}}}",
                    us(t),
                    json_escape(&a.by),
                    args
                ),
            );
        }
        out.push_str("\n]}\n");
        out
    }
}

/// `t` ns as µs with three decimals, exactly.
fn us(t: Ns) -> String {
    format!("{}.{:03}", t / 1000, t % 1000)
}

fn complete(pid: usize, tid: usize, cat: &str, name: &str, from: Ns, to: Ns) -> String {
    format!(
        "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{},\"name\":\"{name}\",\"cat\":\"{cat}\"}}",
        us(from),
        us(to - from)
    )
}

/// A metadata event naming a process or thread track.
fn name_meta(pid: usize, tid: Option<usize>, what: &str, name: &str) -> String {
    meta(pid, tid, what, &format!("{{\"name\":\"{}\"}}", json_escape(name)))
}

/// A metadata event placing a process or thread track.
fn sort_meta(pid: usize, tid: Option<usize>, what: &str, index: usize) -> String {
    meta(pid, tid, what, &format!("{{\"sort_index\":{index}}}"))
}

fn meta(pid: usize, tid: Option<usize>, what: &str, args: &str) -> String {
    let tid = tid.map(|t| format!(",\"tid\":{t}")).unwrap_or_default();
    format!("{{\"ph\":\"M\",\"pid\":{pid}{tid},\"name\":\"{what}\",\"args\":{args}}}")
}

fn json_escape(s: &str) -> String {
    let quoted = serde_json::to_string(s).expect("a string serialises");
    quoted[1..quoted.len() - 1].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_in_microseconds_with_every_nanosecond() {
        assert_eq!(us(0), "0.000");
        assert_eq!(us(1_234_567), "1234.567");
        assert_eq!(us(5), "0.005");
    }

    #[test]
    fn slices_are_clipped_to_the_window_and_stop_at_the_cap() {
        let mut r = Recorder { from_ns: 100, until_ns: 1000, max_slices: 2, open: vec![(RunState::Blocked, Preempted::Plain, 0)], slices: Vec::new(), truncated_at: None, exits: Vec::new() };
        r.state_changed(0, RunState::Running(3), 50); // wholly before the window
        r.state_changed(0, RunState::Runnable, 150); // [100, 150) running
        r.state_changed(0, RunState::Running(1), 400); // [150, 400) runnable
        r.state_changed(0, RunState::Blocked, 600); // cap reached: not recorded
        assert_eq!(
            r.slices,
            vec![
                Slice { vcpu: 0, state: RunState::Running(3), why: Preempted::Plain, from: 100, to: 150 },
                Slice { vcpu: 0, state: RunState::Runnable, why: Preempted::Plain, from: 150, to: 400 }
            ]
        );
        assert_eq!(r.truncated_at_ns(), Some(400));
    }

    const SYNC_2VM: &str = include_str!("../../../../scenarios/sync-heavy-2vm.toml");

    /// `SYNC_2VM` on cfs, seed 1, with a trace of `[from, until)` ms unless `None`: the
    /// results' JSON and the trace.
    fn traced(window_ms: Option<(u64, u64)>) -> (String, Option<String>) {
        let sc = crate::scenario::from_toml_str(SYNC_2VM).unwrap();
        let ov = crate::sim::Overrides { scheduler: Some("cfs".into()), seed: Some(1), check: true };
        let mut sim = crate::sim::Simulation::new(&sc, &ov).unwrap();
        if let Some((a, b)) = window_ms {
            sim.enable_trace(a * 1_000_000, b * 1_000_000, DEFAULT_MAX_SLICES).unwrap();
        }
        let r = sim.run().unwrap();
        (crate::sim::results_json(&r), sim.trace_json())
    }

    fn ns(v: &serde_json::Value) -> u64 {
        let text = v.to_string();
        let (whole, frac) = text.split_once('.').unwrap_or((&text, "0"));
        whole.parse::<u64>().unwrap() * 1000 + format!("{frac:0<3}")[..3].parse::<u64>().unwrap()
    }

    #[test]
    fn a_trace_covers_every_vcpu_over_its_window_and_no_pcpu_runs_two_vcpus_at_once() {
        let (plain, none) = traced(None);
        assert!(none.is_none());
        let (with_trace, trace) = traced(Some((100, 300)));
        assert_eq!(plain, with_trace, "tracing changed the run");
        let trace = trace.unwrap();
        assert_eq!(traced(Some((100, 300))).1.unwrap(), trace, "same seed, same trace");
        let doc: serde_json::Value = serde_json::from_str(&trace).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        let (from, until) = (100_000_000u64, 300_000_000u64);
        let mut per_vcpu: std::collections::BTreeMap<(u64, u64), Vec<(u64, u64)>> = Default::default();
        let mut per_pcpu: std::collections::BTreeMap<u64, Vec<(u64, u64)>> = Default::default();
        let (mut running, mut on_pcpus) = (0, 0);
        for e in events.iter().filter(|e| e["ph"] == "X") {
            let (t, d) = (ns(&e["ts"]), ns(&e["dur"]));
            let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
            if pid == 0 {
                per_pcpu.entry(tid).or_default().push((t, t + d));
                on_pcpus += 1;
            } else {
                per_vcpu.entry((pid, tid)).or_default().push((t, t + d));
                running += e["name"].as_str().unwrap().starts_with("run@p") as usize;
            }
        }
        assert_eq!(per_vcpu.len(), 24, "every vCPU of the two 12-vCPU VMs has a track");
        for (k, mut s) in per_vcpu {
            s.sort();
            assert_eq!(s.first().unwrap().0, from, "{k:?}");
            assert_eq!(s.last().unwrap().1, until, "{k:?}");
            assert!(s.windows(2).all(|w| w[0].1 == w[1].0), "{k:?}: a gap or an overlap");
        }
        assert!(running > 1000 && running == on_pcpus);
        for (p, mut s) in per_pcpu {
            s.sort();
            assert!(s.windows(2).all(|w| w[0].1 <= w[1].0), "pCPU {p} ran two vCPUs at once");
        }
    }

    /// The `exits/ms` counters, each value held until the next sample, add up to the run's own
    /// exit counts by VM and reason when the window covers the whole run (the slice cap does
    /// not stop the counters).
    #[test]
    fn the_exit_counters_add_up_to_the_runs_exits() {
        let sc = crate::scenario::from_toml_str(SYNC_2VM).unwrap();
        let ov = crate::sim::Overrides { scheduler: Some("cfs".into()), seed: Some(1), check: false };
        let mut sim = crate::sim::Simulation::new(&sc, &ov).unwrap();
        sim.enable_trace(0, u64::MAX, 1000).unwrap();
        let r = sim.run().unwrap();
        assert!(sim.trace_truncated_at_ns().is_some(), "the slice cap was reached");
        let doc: serde_json::Value = serde_json::from_str(&sim.trace_json().unwrap()).unwrap();
        for (vm, res) in r.vms.iter().enumerate() {
            let samples: Vec<&serde_json::Value> =
                doc["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "C" && e["pid"] == vm as u64 + 1).collect();
            assert!(samples.len() > 10);
            for (reason, &total) in &res.exits {
                let sum: u64 = samples
                    .windows(2)
                    .map(|w| {
                        let buckets = (ns(&w[1]["ts"]) - ns(&w[0]["ts"])) / EXIT_BUCKET_NS;
                        w[0]["args"].get(reason.as_str()).and_then(|v| v.as_u64()).unwrap_or(0) * buckets
                    })
                    .sum();
                assert_eq!(sum, total, "vm{vm} {reason}");
            }
            assert!(res.exits["ple"] > 0);
        }
    }

    #[test]
    fn every_lock_holder_preemption_is_a_slice_of_its_own() {
        // A short run of the sync-heavy case, traced whole: each lock-holder preemption the
        // results count is one "preempted holding a lock" slice on its vCPU's track.
        let text = SYNC_2VM.replace("iterations = 2000", "iterations = 150");
        let sc = crate::scenario::from_toml_str(&text).unwrap();
        let ov = crate::sim::Overrides { scheduler: Some("cfs".into()), seed: Some(1), check: true };
        let mut sim = crate::sim::Simulation::new(&sc, &ov).unwrap();
        sim.enable_trace(0, u64::MAX, DEFAULT_MAX_SLICES).unwrap();
        let r = sim.run().unwrap();
        assert!(sim.trace_truncated_at_ns().is_none());
        let doc: serde_json::Value = serde_json::from_str(&sim.trace_json().unwrap()).unwrap();
        let named = |vm: u64, name: &str| {
            doc["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X" && e["pid"] == vm + 1 && e["name"] == name).count() as u64
        };
        for (vm, res) in r.vms.iter().enumerate() {
            assert!(res.lock_holder_preemptions > 0, "vm{vm}: the case arises");
            assert_eq!(named(vm as u64, "preempted holding a lock"), res.lock_holder_preemptions, "vm{vm}");
            assert!(named(vm as u64, "preempted in kernel") > 0 && named(vm as u64, "runnable") > 0, "vm{vm}");
        }
    }

    #[test]
    fn a_bad_trace_window_or_cap_names_what_is_wrong() {
        let sc = crate::scenario::from_toml_str(SYNC_2VM).unwrap();
        let mut sim = crate::sim::Simulation::new(&sc, &Default::default()).unwrap();
        assert_eq!(sim.enable_trace(5, 5, 10).unwrap_err().path, "trace.window");
        assert_eq!(sim.enable_trace(0, 5, 0).unwrap_err().path, "trace.max_slices");
    }
}
