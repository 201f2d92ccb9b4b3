//! Idle-while-waiting time: how long each pCPU sat idle while a vCPU that may run on it was
//! runnable and waiting (steal). This is the CPU fragmentation that strict co-scheduling
//! causes (reference/related-work.md "CPU fragmentation"; seed 004 §"gang scheduling": "one
//! CPU must idle as the gang scheduling forbids running only one vCPU"). A work-conserving
//! scheduler keeps it near zero (only the IPI latency of a tickle and momentary imbalance).
//!
//! Accounting is by intervals, not sampling: the world reports every change of a vCPU's
//! "waiting" status (`RunState::Runnable`) and every change of a pCPU's occupancy, and the
//! interval of a pCPU that is idle with a waiting vCPU allowed on it is opened or closed.
//! Hard affinity counts: a vCPU pinned to pCPU 3 does not make pCPU 5 "idle while waiting".

use crate::engine::Ns;
use crate::sim::state::PcpuId;

#[derive(Debug, Clone, Default)]
pub struct IdleWhileWaiting {
    /// Waiting vCPUs without hard affinity (allowed everywhere).
    waiting_any: u32,
    /// Per pCPU: waiting vCPUs with hard affinity that includes it.
    waiting_pinned: Vec<u32>,
    idle: Vec<bool>,
    since: Vec<Option<Ns>>,
    /// Closed idle-while-waiting time per pCPU.
    pub per_pcpu_ns: Vec<Ns>,
}

impl IdleWhileWaiting {
    /// All pCPUs idle, no vCPU waiting.
    pub fn new(n_pcpus: usize) -> Self {
        IdleWhileWaiting {
            waiting_any: 0,
            waiting_pinned: vec![0; n_pcpus],
            idle: vec![true; n_pcpus],
            since: vec![None; n_pcpus],
            per_pcpu_ns: vec![0; n_pcpus],
        }
    }

    fn refresh(&mut self, p: PcpuId, now: Ns) {
        let on = self.idle[p] && (self.waiting_any > 0 || self.waiting_pinned[p] > 0);
        match (on, self.since[p]) {
            (true, None) => self.since[p] = Some(now),
            (false, Some(s)) => {
                self.per_pcpu_ns[p] += now - s;
                self.since[p] = None;
            }
            _ => {}
        }
    }

    /// pCPU `p` became idle or busy.
    pub fn set_idle(&mut self, p: PcpuId, idle: bool, now: Ns) {
        self.idle[p] = idle;
        self.refresh(p, now);
    }

    /// A vCPU with this hard affinity started (`true`) or stopped (`false`) waiting.
    pub fn set_waiting(&mut self, affinity: Option<&[PcpuId]>, waiting: bool, now: Ns) {
        match affinity {
            None => {
                let before = self.waiting_any;
                if waiting {
                    self.waiting_any += 1;
                } else {
                    self.waiting_any -= 1;
                }
                if (before == 0) != (self.waiting_any == 0) {
                    for p in 0..self.idle.len() {
                        self.refresh(p, now);
                    }
                }
            }
            Some(ps) => {
                for &p in ps {
                    if waiting {
                        self.waiting_pinned[p] += 1;
                    } else {
                        self.waiting_pinned[p] -= 1;
                    }
                    self.refresh(p, now);
                }
            }
        }
    }

    /// Close open intervals at `now` (end of run); they stay open for a later continuation.
    pub fn settle(&mut self, now: Ns) {
        for p in 0..self.since.len() {
            if let Some(s) = self.since[p] {
                self.per_pcpu_ns[p] += now - s;
                self.since[p] = Some(now);
            }
        }
    }

    pub fn total_ns(&self) -> Ns {
        self.per_pcpu_ns.iter().sum()
    }

    /// The waiting vCPUs as counted: (without hard affinity, per pCPU with it).
    pub fn waiting(&self) -> (u32, &[u32]) {
        (self.waiting_any, &self.waiting_pinned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_idle_pcpus_while_an_allowed_vcpu_waits() {
        let mut m = IdleWhileWaiting::new(2);
        m.set_idle(0, false, 0);
        // pCPU 1 idle, nothing waiting: nothing counts.
        m.set_waiting(None, true, 10);
        m.set_waiting(None, false, 25);
        // A vCPU pinned to pCPU 0 (busy) waits: idle pCPU 1 does not count.
        m.set_waiting(Some(&[0]), true, 30);
        m.set_idle(0, true, 40);
        m.set_idle(0, false, 45);
        m.set_waiting(Some(&[0]), false, 50);
        m.settle(100);
        assert_eq!(m.per_pcpu_ns, vec![5, 15]);
        assert_eq!(m.total_ns(), 20);
    }
}
