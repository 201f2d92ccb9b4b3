//! The guest-thread program language: scenario ops (`scenario::OpSpec`) compiled to a flat
//! instruction list with jumps. Loops keep their counters in per-thread slots, so a program
//! is shared by all threads of a group and by forked children.
//!
//! Named objects (locks, mutexes, barriers, queues, condition variables) are resolved to
//! per-VM indices here; two workloads of one VM that use the same name share the object.

use std::collections::BTreeMap;

use crate::scenario::{DurationUs, OpSpec};

#[derive(Debug, Clone, PartialEq)]
pub enum Instr {
    Compute { us: DurationUs, mem_fraction: f64 },
    /// `spread` > 1: the lock is drawn uniformly from `lock .. lock + spread` at each pass.
    /// `guards`: the queue whose shared state the holder fetches inside the section
    /// (`guest::channel`, a put's or get's `state_lock`).
    Lock { lock: usize, spread: u32, cs_us: DurationUs, irqs_off: bool, guards: Option<usize> },
    Mutex { mutex: usize, cs_us: DurationUs, spin_us: f64 },
    /// `down_read` / `down_write` of rw-semaphore `sem` (`guest::rwsem`); `wait_lock`: the
    /// index of its wait_lock spinlock and that lock's hold time, if modelled.
    RwsemDown { sem: usize, write: bool, wait_lock: Option<(usize, f64)> },
    /// `up_read` / `up_write` of rw-semaphore `sem`.
    RwsemUp { sem: usize, write: bool, wait_lock: Option<(usize, f64)> },
    Barrier { barrier: usize, spin_us: f64 },
    /// `msg_lines`: cache lines a message's buffer occupies (`guest::channel`), 0 = none.
    Put { queue: usize, msg_lines: u32 },
    Get { queue: usize },
    CondWait { cond: usize },
    CondSignal { cond: usize },
    Shootdown { local_us: f64 },
    CallAll,
    Io { us: DurationUs },
    PortIo,
    Sleep { us: DurationUs },
    Fork { prog: usize, share_mm: bool, wait: bool },
    /// `sched_exec` at the start of an exec'ing child (`guest::forkexec`).
    Exec,
    /// `flush_tlb_mm` of the thread's own address space (fork's `dup_mmap`, `guest::mm`).
    FlushTlbMm,
    /// `exit_mm`: the last user of the address space flushes it everywhere (`guest::mm`).
    ExitMm,
    Accept { port: usize },
    Respond,
    /// Enter a counted loop: counter slot, iterations, pc after the loop.
    LoopStart { slot: usize, count: u64, end: usize },
    /// Back-edge to the loop body start.
    LoopEnd { slot: usize, start: usize },
    /// Skip to `end` unless this is the n-th pass (counter slot).
    Every { slot: usize, n: u64, end: usize },
    Jump { to: usize },
    Mark { mark: usize },
    Exit,
}

#[derive(Debug, Clone, Default)]
pub struct Program {
    pub code: Vec<Instr>,
    pub slots: usize,
}

/// Per-VM table of named synchronisation objects.
#[derive(Debug, Clone, Default)]
pub struct Names {
    pub locks: BTreeMap<String, usize>,
    pub mutexes: BTreeMap<String, usize>,
    pub rwsems: BTreeMap<String, usize>,
    pub barriers: BTreeMap<String, (usize, u32)>,
    /// Per queue: index, capacity and its puts' `writable_at`.
    pub queues: BTreeMap<String, (usize, u32, Option<u32>)>,
    pub conds: BTreeMap<String, usize>,
    pub ports: BTreeMap<String, usize>,
    pub marks: BTreeMap<String, usize>,
}

fn intern(map: &mut BTreeMap<String, usize>, name: &str) -> usize {
    let n = map.len();
    *map.entry(name.to_string()).or_insert(n)
}

/// Name of lock `k` of a `spread` lock family named `lock` (`OpSpec::Lock`).
pub fn spread_member(lock: &str, k: u32) -> String {
    format!("{lock}.{k}")
}

/// Name of the wait_lock spinlock of rw-semaphore `sem` (`OpSpec::Rwsem`).
pub fn rwsem_wait_lock(sem: &str) -> String {
    format!("{sem}.wait_lock")
}

/// Name of the state lock of queue `queue` (a put's or get's `state_lock`).
pub fn queue_state_lock(queue: &str) -> String {
    format!("{queue}.state_lock")
}

/// Compiles op trees; forked bodies become programs of their own in `programs`.
pub struct Compiler<'a> {
    pub names: &'a mut Names,
    pub programs: &'a mut Vec<Program>,
}

impl<'a> Compiler<'a> {
    pub fn compile(&mut self, ops: &[OpSpec]) -> usize {
        self.compile_child(ops, false)
    }

    /// A program; `exec`: it starts with an exec (a forked child running a new program).
    fn compile_child(&mut self, ops: &[OpSpec], exec: bool) -> usize {
        let mut p = Program::default();
        if exec {
            p.code.push(Instr::Exec);
        }
        self.emit(ops, &mut p);
        p.code.push(Instr::ExitMm);
        p.code.push(Instr::Exit);
        self.programs.push(p);
        self.programs.len() - 1
    }

    /// A put's or get's `state_lock`: the queue's state lock, whose section is the fetch of the
    /// queue's state (no time of its own).
    fn emit_state_lock(&mut self, queue: &str, q: usize, on: bool, p: &mut Program) {
        if on {
            let lock = intern(&mut self.names.locks, &queue_state_lock(queue));
            p.code.push(Instr::Lock { lock, spread: 1, cs_us: DurationUs::fixed(0.0), irqs_off: false, guards: Some(q) });
        }
    }

    fn emit(&mut self, ops: &[OpSpec], p: &mut Program) {
        for op in ops {
            match op {
                OpSpec::Compute { us, mem_fraction } => p.code.push(Instr::Compute { us: us.clone(), mem_fraction: *mem_fraction }),
                OpSpec::Lock { lock, cs_us, irqs_off, spread } => {
                    let l = if *spread <= 1 {
                        intern(&mut self.names.locks, lock)
                    } else {
                        // The family's locks get consecutive indices (validate.rs rejects a
                        // plain lock op named like a member, the one way to break that).
                        let ids: Vec<usize> = (0..*spread).map(|k| intern(&mut self.names.locks, &spread_member(lock, k))).collect();
                        debug_assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "lock family {lock} not consecutive");
                        ids[0]
                    };
                    p.code.push(Instr::Lock { lock: l, spread: (*spread).max(1), cs_us: cs_us.clone(), irqs_off: *irqs_off, guards: None })
                }
                OpSpec::Mutex { mutex, cs_us, spin_us } => {
                    let m = intern(&mut self.names.mutexes, mutex);
                    p.code.push(Instr::Mutex { mutex: m, cs_us: cs_us.clone(), spin_us: *spin_us })
                }
                OpSpec::Rwsem { sem, write, wait_lock_us, body } => {
                    let s = intern(&mut self.names.rwsems, sem);
                    let wait_lock =
                        (*wait_lock_us > 0.0).then(|| (intern(&mut self.names.locks, &rwsem_wait_lock(sem)), *wait_lock_us));
                    p.code.push(Instr::RwsemDown { sem: s, write: *write, wait_lock });
                    self.emit(body, p);
                    p.code.push(Instr::RwsemUp { sem: s, write: *write, wait_lock });
                }
                OpSpec::Barrier { barrier, parties, spin_us } => {
                    let n = self.names.barriers.len();
                    let (b, _) = *self.names.barriers.entry(barrier.clone()).or_insert((n, *parties));
                    p.code.push(Instr::Barrier { barrier: b, spin_us: *spin_us })
                }
                OpSpec::Put { queue, capacity, msg_bytes, writable_at, state_lock } => {
                    let n = self.names.queues.len();
                    let entry = self.names.queues.entry(queue.clone()).or_insert((n, *capacity, *writable_at));
                    entry.2 = entry.2.or(*writable_at);
                    let q = entry.0;
                    self.emit_state_lock(queue, q, *state_lock, p);
                    p.code.push(Instr::Put { queue: q, msg_lines: crate::guest::channel::message_lines(*msg_bytes) })
                }
                OpSpec::Get { queue, capacity, state_lock } => {
                    let n = self.names.queues.len();
                    let (q, _, _) = *self.names.queues.entry(queue.clone()).or_insert((n, *capacity, None));
                    self.emit_state_lock(queue, q, *state_lock, p);
                    p.code.push(Instr::Get { queue: q })
                }
                OpSpec::CondWait { cond } => {
                    let c = intern(&mut self.names.conds, cond);
                    p.code.push(Instr::CondWait { cond: c })
                }
                OpSpec::CondSignal { cond } => {
                    let c = intern(&mut self.names.conds, cond);
                    p.code.push(Instr::CondSignal { cond: c })
                }
                OpSpec::Shootdown { local_us } => p.code.push(Instr::Shootdown { local_us: *local_us }),
                OpSpec::CallAll => p.code.push(Instr::CallAll),
                OpSpec::Io { us } => p.code.push(Instr::Io { us: us.clone() }),
                OpSpec::PortIo => p.code.push(Instr::PortIo),
                OpSpec::Sleep { us } => p.code.push(Instr::Sleep { us: us.clone() }),
                OpSpec::Fork { body, share_mm, wait, exec } => {
                    let prog = self.compile_child(body, *exec);
                    if !*share_mm {
                        p.code.push(Instr::FlushTlbMm);
                    }
                    p.code.push(Instr::Fork { prog, share_mm: *share_mm, wait: *wait })
                }
                OpSpec::Loop { count, body } => {
                    let slot = p.slots;
                    p.slots += 1;
                    let at = p.code.len();
                    p.code.push(Instr::LoopStart { slot, count: *count, end: 0 });
                    self.emit(body, p);
                    p.code.push(Instr::LoopEnd { slot, start: at + 1 });
                    let end = p.code.len();
                    p.code[at] = Instr::LoopStart { slot, count: *count, end };
                }
                OpSpec::Every { n, body } => {
                    let slot = p.slots;
                    p.slots += 1;
                    let at = p.code.len();
                    p.code.push(Instr::Every { slot, n: *n, end: 0 });
                    self.emit(body, p);
                    let end = p.code.len();
                    p.code[at] = Instr::Every { slot, n: *n, end };
                }
                OpSpec::Accept { port } => {
                    let q = intern(&mut self.names.ports, port);
                    p.code.push(Instr::Accept { port: q })
                }
                OpSpec::Respond => p.code.push(Instr::Respond),
                OpSpec::Mark { mark } => {
                    let m = intern(&mut self.names.marks, mark);
                    p.code.push(Instr::Mark { mark: m })
                }
                OpSpec::Forever { body } => {
                    let at = p.code.len();
                    self.emit(body, p);
                    p.code.push(Instr::Jump { to: at });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_and_every_compile_to_jumps_with_slots() {
        let mut names = Names::default();
        let mut progs = Vec::new();
        let ops = vec![OpSpec::Loop {
            count: 3,
            body: vec![
                OpSpec::Compute { us: DurationUs::fixed(1.0), mem_fraction: 0.0 },
                OpSpec::Every { n: 2, body: vec![OpSpec::Lock { lock: "a".into(), cs_us: DurationUs::fixed(1.0), irqs_off: false, spread: 1 }] },
            ],
        }];
        let id = Compiler { names: &mut names, programs: &mut progs }.compile(&ops);
        let p = &progs[id];
        assert_eq!(p.slots, 2);
        assert_eq!(p.code[0], Instr::LoopStart { slot: 0, count: 3, end: 5 });
        assert_eq!(p.code[2], Instr::Every { slot: 1, n: 2, end: 4 });
        assert_eq!(p.code[4], Instr::LoopEnd { slot: 0, start: 1 });
        assert_eq!(p.code[5], Instr::ExitMm);
        assert_eq!(p.code[6], Instr::Exit);
        assert_eq!(names.locks["a"], 0);
    }

    #[test]
    fn a_lock_family_compiles_to_consecutive_locks_after_the_named_ones() {
        let mut names = Names::default();
        let mut progs = Vec::new();
        let lock = |name: &str, spread: u32| OpSpec::Lock { lock: name.into(), cs_us: DurationUs::fixed(1.0), irqs_off: false, spread };
        let ops = vec![lock("a", 1), lock("pt", 3), lock("pt", 3), lock("b", 1)];
        let id = Compiler { names: &mut names, programs: &mut progs }.compile(&ops);
        let p = &progs[id];
        // "a" is lock 0, the family pt.0..pt.2 locks 1..3 (both ops the same), "b" lock 4.
        assert_eq!(p.code[1], Instr::Lock { lock: 1, spread: 3, cs_us: DurationUs::fixed(1.0), irqs_off: false, guards: None });
        assert_eq!(p.code[2], p.code[1]);
        assert_eq!(p.code[3], Instr::Lock { lock: 4, spread: 1, cs_us: DurationUs::fixed(1.0), irqs_off: false, guards: None });
        assert_eq!((names.locks["pt.0"], names.locks["pt.2"], names.locks.len()), (1, 3, 5));
    }

    /// A put or get with `state_lock` first takes the queue's state lock, a plain spinlock
    /// named `<queue>.state_lock` whose section is only the fetch of the queue's state (no drawn
    /// time): one lock per queue, shared by both ends.
    #[test]
    fn a_state_locked_put_or_get_takes_its_queues_state_lock_first() {
        let mut names = Names::default();
        let mut progs = Vec::new();
        let get = |state_lock| OpSpec::Get { queue: "s".into(), capacity: 8, state_lock };
        let put = OpSpec::Put { queue: "s".into(), capacity: 8, msg_bytes: 0, writable_at: None, state_lock: true };
        let id = Compiler { names: &mut names, programs: &mut progs }.compile(&[get(true), put, get(false)]);
        let p = &progs[id];
        let lock = Instr::Lock { lock: 0, spread: 1, cs_us: DurationUs::fixed(0.0), irqs_off: false, guards: Some(0) };
        assert_eq!(p.code[..5], [lock.clone(), Instr::Get { queue: 0 }, lock, Instr::Put { queue: 0, msg_lines: 0 }, Instr::Get { queue: 0 }]);
        assert_eq!((names.locks["s.state_lock"], names.locks.len()), (0, 1));
    }

    /// Twelve threads on twelve vCPUs (twelve pCPUs), each taking a 1 µs section 400 times
    /// after 1 µs of compute, on one lock or on a family of `spread` locks.
    fn lock_pool_ns(spread: u32) -> u64 {
        let text = format!(
            r#"
name = "lock-family"
seed = 1
[host]
sockets = 1
cores_per_socket = 12
[hypervisor]
scheduler = "cfs"
[[vms]]
name = "vm0"
vcpus = 12
[[vms.workloads]]
kind = "custom"
[[vms.workloads.groups]]
threads = 12
program = [{{ op = "loop", count = 400, body = [
  {{ op = "compute", us = 1.0 }},
  {{ op = "lock", lock = "l", cs_us = 1.0, spread = {spread} }},
] }}]
"#
        );
        let sc = crate::scenario::from_toml_str(&text).expect("scenario parses");
        let ov = crate::sim::Overrides { scheduler: None, seed: None, check: true };
        let r = crate::sim::Simulation::new(&sc, &ov).expect("builds").run().expect("no invariant violated");
        r.vms[0].completion_ns.expect("finished")
    }

    #[test]
    fn sections_spread_over_a_family_of_locks_contend_less_than_on_one_lock() {
        // One lock serialises all 12 x 400 sections of 1 µs: at least 4.8 ms. Spread over 48
        // locks, a thread's own path is 400 x (1 + 1) µs = 0.8 ms and a section finds its lock
        // held by one of the 11 others' sections with probability of about 11 x 0.5 / 48
        // (each holds half its time), ~0.1, waiting half a section: ~0.85 ms; under half
        // the one-lock bound is a margin of nearly 3x.
        let one = lock_pool_ns(1);
        let spread = lock_pool_ns(48);
        assert!(one >= 4_800_000, "one lock: {one} ns");
        assert!(spread < 2_400_000, "48 locks: {spread} ns (one lock: {one} ns)");
    }
}
