//! The runqueue lock a Linux 2.6.32 wake-up holds across its reschedule IPI, and the
//! `schedule()` on the woken CPU that must take it (`guest.ttwu_rq_lock`, off by default).
//!
//! Models (Linux 2.6.32, BuzzBumbleBee/gtab-2632 kernel/sched.c, commit 009beea3):
//! `try_to_wake_up` takes the woken task's runqueue lock (`task_rq_lock`, and again
//! `__task_rq_lock` after `select_task_rq`), `activate_task`s it, calls `check_preempt_curr`,
//! whose `resched_task` sends `smp_send_reschedule` to a remote CPU that must preempt or that
//! idles in HLT (not polling), and only then `task_rq_unlock`s; `wake_up_new_task` does the
//! same for a forked child. So the IPI is sent holding the target's `rq->lock`, and on a
//! virtual machine whose IPI send exits (VMkit's APIC accesses, `vmkit_exit_costs` in the
//! Python reproductions) the lock stays held until that exit is handled and the guest code
//! resumes. `schedule()` takes the same lock (`spin_lock_irq(&rq->lock)`) before it picks the
//! next task or idles. The model: when vCPU w's code sends vCPU u a reschedule IPI from a
//! wake-up (`guest::kernel` `enqueue_thread` onto an idle u, `guest::resched`
//! `check_preempt_wakeup`'s remote IPI), w holds u's lock until w's hypervisor and background
//! debts are both paid on a running w (`hv::machine` `on_exec_timer`): a w stopped or
//! descheduled before it returns from the exit keeps holding it. While another vCPU holds it,
//! u's `guest_pick` does not pick: u keeps its pCPU and spins (guest time, `lock_spin`), then
//! picks, or halts, when the lock is released. A send that leaves w owing nothing (a host
//! whose IPI send does not exit, such as the native rows) holds the lock for no time.
//!
//! Not adopted for seed 004's 2.6.32 guests (session 48, rule AB): on VMkit it turns hackbench
//! with affinity into one IPI per message (the receivers' vCPU, held in `schedule()` until the
//! senders' vCPU returns from its IPI exit, runs each message as it comes and is idle again
//! before the next), 3.14 s against the seed's 1.03 (docs/model.md).
//!
//! Leaves out: `try_to_wake_up`'s own instructions (no section time besides the exit); the
//! other takers of `rq->lock` (`scheduler_tick`, load balancing, the target's own wake-ups,
//! another waker of the same runqueue, which would queue behind the holder: here several
//! vCPUs may hold one runqueue's lock at once, and the target waits for all of them); several
//! sends of one waker before it resumes count as one section; interrupts stay deliverable to a
//! spinning vCPU (`spin_lock_irq` masks them); the wake list of 3.0+ (`guest.ttwu_queue`,
//! `guest::resched` `ttwu_queue_remote`), which sends its IPI without the lock.

use crate::sim::state::VcpuId;
use crate::sim::World;

impl World {
    /// Code on vCPU `w` has just charged the exit of a reschedule IPI to vCPU `u` from a
    /// wake-up: if the guest takes the lock (`ttwu_rq_lock`), `w` holds `u`'s runqueue lock
    /// until it resumes.
    pub(crate) fn hold_rq_lock_for_ipi(&mut self, w: VcpuId, u: VcpuId) {
        let vm = self.vcpus[u].vm;
        if w == u || !self.vms[vm].ttwu_rq_lock {
            return;
        }
        let vw = &self.vcpus[w];
        if vw.hv_debt_ns + vw.bg_debt_ns == 0 || vw.running_on().is_none() {
            return;
        }
        if !self.vcpus[u].rq_lock_holders.contains(&w) {
            self.vcpus[u].rq_lock_holders.push(w);
            self.vcpus[w].rq_locks_held.push(u);
        }
    }

    /// Whether another vCPU holds vCPU `v`'s runqueue lock (its `schedule()` must wait).
    pub(crate) fn rq_lock_contended(&self, v: VcpuId) -> bool {
        !self.vcpus[v].rq_lock_holders.is_empty()
    }

    /// Running vCPU `w` has paid its debts and its guest code resumes: it unlocks the
    /// runqueues it held, and a vCPU spinning for one of them picks (`guest_pick`).
    pub(crate) fn release_rq_locks(&mut self, w: VcpuId) {
        for u in std::mem::take(&mut self.vcpus[w].rq_locks_held) {
            self.vcpus[u].rq_lock_holders.retain(|&x| x != w);
            let vc = &self.vcpus[u];
            if vc.rq_lock_spin && vc.rq_lock_holders.is_empty() && vc.cur.is_none() && vc.running_on().is_some() {
                self.advance(u);
                self.guest_pick(u);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::from_toml_str;
    use crate::sim::tests::done_ms;
    use crate::sim::{Overrides, Results, Simulation};

    fn run(text: &str) -> Results {
        crate::sim::tests::run_text(text, None)
    }

    /// Exit of a reschedule IPI's send in `exchange` (ns).
    const EXIT_IPI_NS: u64 = 20_000;

    /// A pinned 2-vCPU VM under Linux 2.6.32's placement, the lock `rq_lock`, on pCPUs 0 and 1
    /// with no pause-loop exits and a 1-s credit slice (as VMkit, seed 004); `host` adds to
    /// `[host]`, `exit_ipi_ns` prices the IPI send, `groups` are the custom workload's.
    fn run_pair(host: &str, exit_ipi_ns: u64, rq_lock: bool, groups: &str) -> Results {
        let text = format!(
            r#"
[host]
cores_per_socket = 2
{host}[host.costs]
exit_ipi_ns = {exit_ipi_ns}
[hypervisor]
scheduler = "credit"
params = {{ tslice_ms = 1000 }}
ple = {{ enabled = false }}
[[vms]]
vcpus = 2
pin = [0, 1]
guest = {{ wake_placement = "affine", ttwu_rq_lock = {rq_lock} }}
[[vms.workloads]]
kind = "custom"
groups = [
{groups}]
"#
        );
        run(&text)
    }

    /// Two producers bound to vCPU 0 and their two consumers bound to vCPU 1, one queue per
    /// pair; the producers are the slower side (15 µs of work per message against 10), so the
    /// consumers drain their queues and block, and a put that finds its consumer blocked wakes
    /// it with a reschedule IPI whose send exits for `EXIT_IPI_NS`.
    fn exchange(rq_lock: bool) -> Results {
        let pair = |q: &str| {
            format!(
                r#"  {{ threads = 1, affinity = [0], bind = true, program = [{{ op = "loop", count = 3000, body = [{{ op = "compute", us = 15 }}, {{ op = "put", queue = "{q}" }}] }}] }},
  {{ threads = 1, affinity = [1], bind = true, program = [{{ op = "loop", count = 3000, body = [{{ op = "get", queue = "{q}" }}, {{ op = "compute", us = 10 }}] }}] }},
"#
            )
        };
        run_pair("", EXIT_IPI_NS, rq_lock, &(pair("q1") + &pair("q2")))
    }

    fn spin_ns(r: &Results) -> u64 {
        r.vms[0].guest_ns.on_cpu.lock_spin
    }

    fn ipis(r: &Results) -> u64 {
        r.vms[0].exits["ipi"]
    }

    /// The consumers' vCPU, woken by the IPI while the producer is still in the send's exit,
    /// spins in `schedule()` until the producer returns and unlocks: at most one exit per IPI
    /// without background load, and nothing without the lock. The producers set the pace, so
    /// the run takes about as long either way.
    #[test]
    fn a_woken_vcpu_picks_only_once_the_waker_returns_from_its_ipi_exit() {
        let (locked, free) = (exchange(true), exchange(false));
        assert_eq!(spin_ns(&free), 0, "nothing spins without the lock");
        let bound = ipis(&locked) * EXIT_IPI_NS;
        eprintln!("{} IPIs; spin {} us (bound {} us); {:.2} ms with the lock, {:.2} without", ipis(&locked), spin_ns(&locked) / 1000, bound / 1000, done_ms(&locked), done_ms(&free));
        assert!(spin_ns(&locked) > bound / 4, "the consumers' vCPU waited {} us for {} IPI exits", spin_ns(&locked) / 1000, ipis(&locked));
        assert!(spin_ns(&locked) <= bound, "a wait outlasted its exit: {} us for {} IPIs", spin_ns(&locked) / 1000, ipis(&locked));
        assert!((done_ms(&locked) / done_ms(&free) - 1.0).abs() < 0.03, "{:.2} ms with the lock, {:.2} without", done_ms(&locked), done_ms(&free));
    }

    /// A producer bound to vCPU 0 computes 10 ms and sends one message to a consumer bound to
    /// vCPU 1, which a hog keeps busy: the consumer, asleep since the start, preempts the hog
    /// through a reschedule IPI whose send exits for 1 ms (10-11 ms). `stop_at_ms`: pCPU 0's
    /// background spin of 40 ms (seed 004 §7.5's load) begins then (only pCPU 0 has one), or
    /// never.
    fn one_preempting_wakeup(stop_at_ms: Option<f64>) -> Results {
        let bg = stop_at_ms.map_or(String::new(), |at| {
            format!("background = {{ period_ms = 80, delays_ms = [40], pcpus = [0], phase_ms = {} }}\n", 80.0 - at)
        });
        let groups = r#"  { threads = 1, affinity = [0], bind = true, program = [{ op = "compute", us = 10000 }, { op = "put", queue = "q" }] },
  { threads = 1, affinity = [1], bind = true, program = [{ op = "get", queue = "q" }, { op = "compute", us = 10 }] },
  { threads = 1, affinity = [1], bind = true, program = [{ op = "compute", us = 100000 }] },
"#;
        run_pair(&bg, 1_000_000, true, groups)
    }

    /// The IPI reaches the busy consumer's vCPU while the producer is still in the send's exit,
    /// and its handler's `schedule()` spins until the producer unlocks: about the rest of the
    /// exit. A background spin that stops the producer's pCPU inside the exit (at 10.5 ms, for
    /// 40 ms) keeps the lock held through the stop, so the consumer's vCPU spins until 50.5 ms
    /// and more. The same stop after the exit (at 12 ms) costs the consumer nothing.
    #[test]
    fn a_waker_stopped_inside_its_ipi_exit_holds_the_targets_runqueue_lock_through_the_stop() {
        let ms = |r: &Results| spin_ns(r) as f64 / 1e6;
        let (quiet, inside, after) = (one_preempting_wakeup(None), one_preempting_wakeup(Some(10.5)), one_preempting_wakeup(Some(12.0)));
        eprintln!("spin: {:.3} ms without a stop, {:.3} with one inside the exit, {:.3} after it", ms(&quiet), ms(&inside), ms(&after));
        assert_eq!(ipis(&quiet), 1);
        assert!((0.9..=1.0).contains(&ms(&quiet)), "without a stop the consumer's vCPU spun {:.3} ms", ms(&quiet));
        assert!(ms(&inside) > 40.0, "a stop inside the exit: {:.3} ms", ms(&inside));
        assert_eq!(ms(&after), ms(&quiet), "a stop after the exit");
    }

    /// The lock is off unless asked for, and a wake list excludes it.
    #[test]
    fn the_runqueue_lock_is_off_by_default_and_excludes_a_wake_list() {
        let vm = |guest: &str| format!("duration_ms = 1\n[host]\ncores_per_socket = 2\n[[vms]]\nvcpus = 2\nguest = {guest}\n[[vms.workloads]]\nkind = \"hog\"\n");
        let lock = |guest: &str| Simulation::new(&from_toml_str(&vm(guest)).unwrap(), &Overrides::default()).unwrap().world().vms[0].ttwu_rq_lock;
        assert!(!lock("{ }"));
        assert!(!lock("{ wake_placement = \"affine\" }"));
        assert!(lock("{ ttwu_rq_lock = true }"));
        let msg = format!("{:?}", from_toml_str(&vm("{ ttwu_rq_lock = true, ttwu_queue = true }")).err().expect("rejected"));
        assert!(msg.contains("guest.ttwu_rq_lock"), "{msg}");
    }
}
