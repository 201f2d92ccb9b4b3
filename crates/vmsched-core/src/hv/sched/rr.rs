//! Global round robin: one FIFO runqueue for the whole host and a fixed slice.
//!
//! Models: the textbook policy, for teaching and as a cross-check of the machinery (with
//! one VM per pCPU it must behave like a dedicated host). Leaves out: weights, caps,
//! priorities, cache affinity. PLE exits yield to the back of the queue.

use std::collections::VecDeque;

use super::{Decision, HvScheduler, Params, Reason, SchedView};
use crate::engine::{Ns, NS_PER_MS};
use crate::scenario::ScenarioError;
use crate::sim::state::{PcpuId, VcpuId};

pub struct RoundRobin {
    slice_ns: Ns,
    queue: VecDeque<VcpuId>,
    tickled: Vec<bool>,
}

impl RoundRobin {
    pub fn from_params(p: &mut Params) -> Result<Self, ScenarioError> {
        let slice_ms = p.f64("slice_ms", 10.0, 0.01, 10_000.0)?;
        Ok(RoundRobin { slice_ns: (slice_ms * NS_PER_MS as f64) as Ns, queue: VecDeque::new(), tickled: Vec::new() })
    }
}

impl HvScheduler for RoundRobin {
    fn name(&self) -> &'static str {
        "rr"
    }
    fn init(&mut self, view: &mut SchedView) {
        self.tickled = vec![false; view.n_pcpus()];
    }

    fn wake(&mut self, view: &mut SchedView, v: VcpuId) {
        self.queue.push_back(v);
        if let Some(p) = (0..view.n_pcpus()).find(|&p| view.is_idle(p) && !self.tickled[p] && view.allowed(v, p)) {
            self.tickled[p] = true;
            view.tickle(p);
        }
    }

    fn sleep(&mut self, _view: &mut SchedView, v: VcpuId) {
        self.queue.retain(|&x| x != v);
    }

    fn do_schedule(&mut self, view: &mut SchedView, p: PcpuId, prev: Option<VcpuId>, prev_runnable: bool, _why: Reason) -> Decision {
        self.tickled[p] = false;
        if let (Some(v), true) = (prev, prev_runnable) {
            self.queue.push_back(v);
        }
        let pos = self.queue.iter().position(|&v| view.allowed(v, p));
        let next = pos.and_then(|i| self.queue.remove(i));
        Decision { next, slice_ns: next.map(|_| self.slice_ns) }
    }

    fn pause_exit(&mut self, _view: &mut SchedView, _v: VcpuId) -> bool {
        !self.queue.is_empty()
    }
}
