//! Sleeping reader-writer semaphores (`OpSpec::Rwsem`): Linux's `rw_semaphore` as Linux 3.13
//! has it (lib/rwsem.c, the xadd variant x86 uses, with the fast paths of
//! arch/x86/include/asm/rwsem.h). The guest kernel's `mm->mmap_sem` is one: page faults take it
//! shared (arch/x86/mm/fault.c __do_page_fault: `down_read_trylock`, then `down_read`),
//! munmap exclusive (mm/mmap.c vm_munmap: `down_write`, do_munmap, `up_write`).
//!
//! Models:
//! - fast paths: `down_read` succeeds when no writer holds the semaphore and nobody waits (the
//!   count stays non-negative); `down_write` when nobody holds it and nobody waits (the count
//!   was 0). Otherwise the slow path queues the thread at the tail of the FIFO wait list;
//! - `rwsem_down_read_failed`: after queueing, if nobody holds the semaphore, or only readers
//!   do and the list was empty, `__rwsem_do_wake(RWSEM_WAKE_ANY)` runs (it may grant the
//!   queuer itself); a queued reader then sleeps until it is granted (`waiter.task` cleared);
//! - `rwsem_down_write_failed`: after queueing behind others while readers hold it,
//!   `__rwsem_do_wake(RWSEM_WAKE_READ_OWNED)`; then, in its loop, the writer takes the
//!   semaphore whenever nobody holds it (the count is `RWSEM_WAITING_BIAS`), wherever it is in
//!   the list: a writer arriving while a woken writer has not yet run steals the semaphore
//!   (3.13's lock stealing). Otherwise it sleeps until woken and, once running, re-checks;
//! - `__rwsem_do_wake`: a writer at the head of the list is woken but not granted (it grabs the
//!   semaphore itself when it runs; `RWSEM_WAKE_READ_OWNED` does not wake it); readers at the
//!   head, up to the first writer, are all granted at once (counted active before they run,
//!   so a granted reader whose vCPU is descheduled holds the semaphore) and woken, unless a
//!   writer stole the semaphore first;
//! - `up_read` by the last reader and `up_write` call `rwsem_wake` when threads wait;
//! - the `wait_lock` (a raw spinlock taken with `raw_spin_lock_irq(save)`) in every slow path:
//!   with `wait_lock_us` > 0 it is a spinlock section of the guest's own spinlock kind, with
//!   interrupts off, on a lock named `<sem>.wait_lock`; the slow path's list work happens at
//!   the end of the section;
//! - waiters sleep: the thread blocks and its vCPU picks another thread or halts. Linux 3.13
//!   has no optimistic spinning on rw-semaphores (rwsem_optimistic_spin came with 3.16).
//!
//! Leaves out: `down_read_trylock`'s failure path as a separate op (a fault that fails the
//! trylock does a `down_read`, the same waits), `downgrade_write`, the transient active count
//! of a reader between its failed fast path and its queueing, and any cost of the atomic
//! count updates themselves (cache-line transfers of the count).
//!
//! Sources: Linux 3.13 lib/rwsem.c and include/linux/rwsem.h, read in the search index's
//! copies of lib/rwsem.c: a pre-3.10 one (torvalds/linux 023fe4f7; `try_get_writer_sem`, no
//! `try_reader_grant`) and a 3.16 one (with `rwsem_optimistic_spin`), between which 3.13's
//! `__rwsem_do_wake` (`try_reader_grant`, writers woken ungranted "as we want other writers to
//! be able to steal it") and `rwsem_down_write_failed` (`count == RWSEM_WAITING_BIAS` then
//! `cmpxchg`) sit; the 3.16 optimistic spinning patch set ("rwsem: do optimistic spinning for
//! writer lock acquisition", Tim Chen, Davidlohr Bueso) dates that feature.

use std::collections::VecDeque;

use crate::engine::us_to_ns;
use crate::sim::state::*;
use crate::sim::World;

/// One rw-semaphore of a VM.
#[derive(Debug, Default)]
pub struct RwsemObj {
    /// Readers granted the semaphore (woken or not yet running).
    pub readers: u32,
    pub writer: Option<ThreadId>,
    /// The wait list, head first: (thread, waits to write).
    pub waiters: VecDeque<(ThreadId, bool)>,
    /// Downs that took the slow path.
    pub contended: u64,
    /// Times a thread went to sleep waiting for the semaphore.
    pub sleeps: u64,
}

impl RwsemObj {
    fn held(&self) -> bool {
        self.readers > 0 || self.writer.is_some()
    }
}

/// A slow-path step, run at the end of the wait_lock section (or at once without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RwsemStep {
    /// `rwsem_down_read_failed`'s list work.
    QueueRead(usize),
    /// `rwsem_down_write_failed`'s list work and first try.
    QueueWrite(usize),
    /// A woken writer's try (its loop after `schedule()`).
    RetryWrite(usize),
    /// `rwsem_wake` after an up with waiters.
    Wake(usize),
}

/// The semaphore's wait_lock spinlock and its hold time, if modelled (`Instr::RwsemDown`).
pub type WaitLock = Option<(usize, f64)>;

impl World {
    /// `down_read` / `down_write`. Returns true if the thread waits (or spins for the
    /// wait_lock), false if it holds the semaphore and goes on.
    pub(crate) fn rwsem_down(&mut self, t: ThreadId, sem: usize, write: bool, wait_lock: WaitLock) -> bool {
        let s = &mut self.vms[self.threads[t].vm].rwsems[sem];
        if s.waiters.iter().any(|&(w, _)| w == t) {
            // A woken writer: `while ((count = sem->count) & RWSEM_ACTIVE_MASK) schedule();`
            // then the try under the wait_lock.
            if s.held() {
                return self.rwsem_sleep(t, sem, true);
            }
            return self.rwsem_slow(t, RwsemStep::RetryWrite(sem), wait_lock);
        }
        let free = if write { !s.held() } else { s.writer.is_none() };
        if free && s.waiters.is_empty() {
            if write {
                s.writer = Some(t);
            } else {
                s.readers += 1;
            }
            return false;
        }
        s.contended += 1;
        let step = if write { RwsemStep::QueueWrite(sem) } else { RwsemStep::QueueRead(sem) };
        self.rwsem_slow(t, step, wait_lock)
    }

    /// `up_read` / `up_write`. Returns true if the thread spins for the wait_lock to wake
    /// waiters.
    pub(crate) fn rwsem_up(&mut self, t: ThreadId, sem: usize, write: bool, wait_lock: WaitLock) -> bool {
        let s = &mut self.vms[self.threads[t].vm].rwsems[sem];
        if write {
            debug_assert_eq!(s.writer, Some(t));
            s.writer = None;
        } else {
            debug_assert!(s.readers > 0);
            s.readers -= 1;
        }
        if s.held() || s.waiters.is_empty() {
            return false;
        }
        self.rwsem_slow(t, RwsemStep::Wake(sem), wait_lock)
    }

    /// Run `step` at the end of a wait_lock section, or at once if the wait_lock is not
    /// modelled. Returns true if the thread does not go on at once.
    fn rwsem_slow(&mut self, t: ThreadId, step: RwsemStep, wait_lock: WaitLock) -> bool {
        let Some((lock, us)) = wait_lock else { return self.rwsem_step(t, step) };
        let th = &mut self.threads[t];
        th.pending_ns = us_to_ns(us);
        th.irqs_off = true;
        th.rwsem_next = Some(step);
        self.lock_acquire(t, lock);
        true
    }

    /// A slow-path step. Returns true if the thread sleeps.
    pub(crate) fn rwsem_step(&mut self, t: ThreadId, step: RwsemStep) -> bool {
        let vm = self.threads[t].vm;
        match step {
            RwsemStep::QueueRead(sem) => {
                let s = &mut self.vms[vm].rwsems[sem];
                let first = s.waiters.is_empty();
                s.waiters.push_back((t, false));
                if !s.held() || (s.writer.is_none() && first) {
                    self.rwsem_do_wake(t, sem, false);
                }
                let granted = !self.vms[vm].rwsems[sem].waiters.iter().any(|&(w, _)| w == t);
                !granted && self.rwsem_sleep(t, sem, false)
            }
            RwsemStep::QueueWrite(sem) => {
                let s = &mut self.vms[vm].rwsems[sem];
                let others = !s.waiters.is_empty();
                s.waiters.push_back((t, true));
                if others && s.readers > 0 && s.writer.is_none() {
                    self.rwsem_do_wake(t, sem, true);
                }
                self.rwsem_try_write(t, sem)
            }
            RwsemStep::RetryWrite(sem) => self.rwsem_try_write(t, sem),
            RwsemStep::Wake(sem) => {
                self.rwsem_do_wake(t, sem, false);
                false
            }
        }
    }

    /// A queued writer takes the semaphore if nobody holds it, else sleeps.
    fn rwsem_try_write(&mut self, t: ThreadId, sem: usize) -> bool {
        let s = &mut self.vms[self.threads[t].vm].rwsems[sem];
        if s.held() {
            return self.rwsem_sleep(t, sem, true);
        }
        s.writer = Some(t);
        s.waiters.retain(|&(w, _)| w != t);
        false
    }

    /// The thread sleeps on the semaphore; a writer re-runs its down when woken.
    fn rwsem_sleep(&mut self, t: ThreadId, sem: usize, write: bool) -> bool {
        self.vms[self.threads[t].vm].rwsems[sem].sleeps += 1;
        if write {
            self.threads[t].pc -= 1;
        }
        self.block(t);
        true
    }

    /// `__rwsem_do_wake` run by thread `t` (the waker pays the wake-ups' IPIs);
    /// `read_owned`: `RWSEM_WAKE_READ_OWNED` (readers hold the semaphore).
    fn rwsem_do_wake(&mut self, t: ThreadId, sem: usize, read_owned: bool) {
        let vm = self.threads[t].vm;
        let v = self.threads[t].vcpu;
        let s = &mut self.vms[vm].rwsems[sem];
        let Some(&(head, head_writes)) = s.waiters.front() else { return };
        if head_writes {
            if !read_owned && self.threads[head].act == Activity::Blocked {
                self.wake_thread(head, Some(v));
            }
            return;
        }
        if s.writer.is_some() {
            return; // a writer stole the semaphore
        }
        let mut granted = Vec::new();
        while let Some(&(r, false)) = s.waiters.front() {
            s.waiters.pop_front();
            s.readers += 1;
            granted.push(r);
        }
        for r in granted {
            if self.threads[r].act == Activity::Blocked {
                self.wake_thread(r, Some(v));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::results::Results;
    use crate::scenario::from_toml_str;
    use crate::sim::{Overrides, Simulation};

    /// One VM of 4 vCPUs on 4 pCPUs (nothing else runs, so no vCPU is ever descheduled by the
    /// host); each group is one thread running `programs[i]`, then marking "done.<i>".
    fn run(programs: &[&str]) -> Results {
        let groups: Vec<String> = programs
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{{ threads = 1, program = [ {p}, {{ op = \"mark\", mark = \"done.{i}\" }} ] }}"))
            .collect();
        let text = format!(
            "name = \"rwsem\"\nseed = 1\nduration_ms = 50\n[host]\nsockets = 1\ncores_per_socket = 4\n\
             [hypervisor]\nscheduler = \"cfs\"\n[[vms]]\nname = \"vm\"\nvcpus = 4\n[[vms.workloads]]\n\
             kind = \"custom\"\ngroups = [ {} ]\n",
            groups.join(", ")
        );
        let sc = from_toml_str(&text).expect("scenario parses");
        let ov = Overrides { scheduler: None, seed: None, check: true };
        Simulation::new(&sc, &ov).expect("scenario builds").run().expect("no invariant violated")
    }

    /// Sleep `delay_us`, then take `sem` (write or read) around 100 µs of compute.
    fn holder(delay_us: f64, write: bool, wait_lock_us: f64) -> String {
        format!(
            "{{ op = \"sleep\", us = {delay_us} }}, {{ op = \"rwsem\", sem = \"mm\", write = {write}, \
             wait_lock_us = {wait_lock_us}, body = [ {{ op = \"compute\", us = 100 }} ] }}"
        )
    }

    fn done_us(r: &Results, i: usize) -> f64 {
        r.vms[0].marks[&format!("done.{i}")].last_ns as f64 / 1e3
    }

    #[test]
    fn readers_share_an_rwsem_and_a_writer_excludes() {
        // Two readers arriving 1 µs apart overlap: both done at about 101-102 µs. A writer
        // and a reader, or two writers, run one after the other: the second is done 100 µs
        // after the first, plus its wake-up.
        let rr = run(&[&holder(1.0, false, 0.0), &holder(2.0, false, 0.0)]);
        let (a, b) = (done_us(&rr, 0), done_us(&rr, 1));
        assert!(a < 110.0 && b < 110.0, "readers done at {a:.1} and {b:.1} us: they must share");
        for second_writes in [false, true] {
            let wx = run(&[&holder(1.0, true, 0.0), &holder(2.0, second_writes, 0.0)]);
            let (a, b) = (done_us(&wx, 0), done_us(&wx, 1));
            assert!(a < 110.0, "the writer done at {a:.1} us");
            assert!(b >= a + 100.0, "the second done at {b:.1} us, the writer at {a:.1}: it must wait");
        }
    }

    #[test]
    fn an_rwsem_waiter_sleeps_and_its_vcpu_halts() {
        // The second writer waits 99 µs for the first: it sleeps (its vCPU halts) rather
        // than spinning, so no spin time is counted and the vCPUs halt for at least the wait.
        let r = run(&[&holder(1.0, true, 0.0), &holder(2.0, true, 0.0)]);
        let g = &r.vms[0].guest_ns;
        assert_eq!(g.on_cpu.lock_spin + g.on_cpu.mutex_spin, 0, "a waiter spun: {:?}", g.on_cpu);
        let halted: u64 = r.vcpus.iter().map(|v| v.halted_ns).sum();
        let wait_ns = ((done_us(&r, 1) - 100.0 - 2.0) * 1e3) as u64;
        assert!(wait_ns > 90_000, "the second writer waited only {wait_ns} ns");
        // vCPUs 2 and 3 halt all along; vCPU 1 (the waiter's) halts during the wait as well.
        assert!(halted >= wait_ns + 2 * 200_000, "halted {halted} ns in all, wait {wait_ns} ns");
    }

    #[test]
    fn rwsem_waiters_are_served_in_fifo_order_and_readers_queue_behind_a_waiting_writer() {
        // W1 holds from 1 µs; R1 (10 µs) and W2 (20 µs) queue in that order. At W1's release
        // (~101 µs) __rwsem_do_wake grants the readers at the head up to the first writer (R1
        // alone); R2 arrives at 150 µs, while R1 reads and W2 waits, and queues behind W2: W2
        // follows R1 and R2 comes last, each about 100 µs after the one before. Were a reader
        // to join the readers holding the semaphore past a queued writer, R2 would be done
        // at about 250 µs, before W2.
        let r = run(&[&holder(1.0, true, 0.0), &holder(10.0, false, 0.0), &holder(20.0, true, 0.0), &holder(150.0, false, 0.0)]);
        let d: Vec<f64> = (0..4).map(|i| done_us(&r, i)).collect();
        println!("done at {d:?} us");
        for i in 1..4 {
            assert!(d[i] >= d[i - 1] + 100.0 && d[i] < d[i - 1] + 120.0, "holder {i} done at {:.1} us after {:.1}", d[i], d[i - 1]);
        }
    }

    #[test]
    fn a_writer_that_finds_the_rwsem_free_steals_it_from_a_woken_writer() {
        // W1 holds from 1 µs and, at its release (~101 µs), wakes the queued W2 without
        // granting it; W1 then downs again at once, finds the semaphore free while W2's vCPU
        // is still waking, and takes it (3.13's rwsem_down_write_failed: `count ==
        // RWSEM_WAITING_BIAS`, cmpxchg). W2 runs, finds it held and sleeps again: W1 is done
        // (~201 µs) before W2 (~301 µs). A FIFO hand-off to W2 would reverse the order.
        let again = "{ op = \"rwsem\", sem = \"mm\", write = true, body = [ { op = \"compute\", us = 100 } ] }";
        let r = run(&[&format!("{}, {again}", holder(1.0, true, 0.0)), &holder(2.0, true, 0.0)]);
        let (w1, w2) = (done_us(&r, 0), done_us(&r, 1));
        assert!(w1 < 215.0 && w2 >= w1 + 100.0, "W1 done at {w1:.1} us, W2 at {w2:.1}: W1 must steal");
    }

    #[test]
    fn a_contended_rwsem_takes_its_wait_lock_in_the_slow_paths() {
        // Two writers: W2 queues under the wait_lock (off W1's critical path), W1's up_write
        // takes it to wake W2 (so W1 passes its mark 5 µs later), and W2 takes it once more
        // to grab the semaphore: two wait_lock sections of 5 µs lie between W1's end and W2's
        // start, so W2 is done 10 µs later than without them (the wake-up itself is the same).
        let plain = run(&[&holder(1.0, true, 0.0), &holder(2.0, true, 0.0)]);
        let locked = run(&[&holder(1.0, true, 5.0), &holder(2.0, true, 5.0)]);
        let up = done_us(&locked, 0) - done_us(&plain, 0);
        assert!((4.9..5.1).contains(&up), "W1's up_write took {up:.2} us more");
        let extra = done_us(&locked, 1) - done_us(&plain, 1);
        assert!((9.9..10.1).contains(&extra), "the wait_lock added {extra:.2} us to the waiter");
    }
}
