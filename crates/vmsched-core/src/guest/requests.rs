//! Client requests of server workloads (the SPECvirt-like consolidation mix, seed 001 §2.3):
//! open-loop Poisson arrivals per port, each a network receive interrupt whose guest handler
//! queues the request; server threads take requests with `accept` and finish them with
//! `respond`, which records the response time (arrival at the NIC to `respond`).
//!
//! Models: arrivals independent of service (open loop, as SPECvirt's client drivers issue
//! requests at a fixed injection rate); exponential inter-arrival times drawn from the port's
//! own stream `<vm>/port/<name>`; the receive interrupt goes through `device_interrupt`
//! (pass-through or emulated, `hv/tasklet.rs`); requests wait in FIFO order on the port,
//! and a waiting server thread is woken by the interrupt handler.
//!
//! Leaves out: transmit-completion interrupts (NAPI reaps them in the receive path), packet
//! coalescing, the client side and the network between.

use std::collections::VecDeque;

use crate::engine::{Ns, RngStream, Timer, NS_PER_S};
use crate::sim::state::*;
use crate::sim::{Ev, World};

#[derive(Debug, Default)]
pub struct Port {
    /// Arrival times of queued requests, oldest first.
    pub pending: VecDeque<Ns>,
    /// Server threads blocked in `accept`, longest waiting first.
    pub waiters: VecDeque<ThreadId>,
}

#[derive(Debug)]
pub struct Arrivals {
    pub port: usize,
    pub mean_gap_ns: f64,
    pub rng: RngStream,
    pub timer: Timer,
}

#[derive(Debug, Default)]
pub struct VmRequests {
    pub ports: Vec<Port>,
    pub sources: Vec<Arrivals>,
    /// Response time of every finished request after the warm-up, in completion order.
    pub response_ns: Vec<Ns>,
    /// Requests finished within the warm-up (left out of `response_ns`).
    pub warmup_count: u64,
}

impl Arrivals {
    pub fn new(port: usize, rate_per_s: f64, rng: RngStream) -> Arrivals {
        Arrivals { port, mean_gap_ns: NS_PER_S as f64 / rate_per_s, rng, timer: Timer::default() }
    }
}

impl World {
    /// Arm the first arrival of every source (at start).
    pub(crate) fn start_arrivals(&mut self) {
        for vm in 0..self.vms.len() {
            for s in 0..self.vms[vm].requests.sources.len() {
                self.next_arrival(vm, s);
            }
        }
    }

    fn next_arrival(&mut self, vm: VmId, s: usize) {
        let now = self.now();
        let src = &mut self.vms[vm].requests.sources[s];
        let gap = src.rng.exp(src.mean_gap_ns).round().max(1.0) as Ns;
        self.q.arm(&mut src.timer, now + gap, Ev::RequestArrive(vm, s));
    }

    /// A client request reaches VM `vm`'s NIC: a receive interrupt, and the next arrival.
    pub(crate) fn request_arrive(&mut self, vm: VmId, s: usize) {
        self.next_arrival(vm, s);
        let port = self.vms[vm].requests.sources[s].port;
        let now = self.now();
        self.device_interrupt(vm, IrqWork { left_ns: self.costs.irq_handler_ns, action: IrqAction::RequestRx(port), sent_at: now });
    }

    /// The receive handler ran (on vCPU `handler`, or nowhere if the interrupt was dropped):
    /// hand the request to a waiting server thread or queue it.
    pub(crate) fn request_received(&mut self, vm: VmId, port: usize, arrived: Ns, handler: Option<VcpuId>) {
        let p = &mut self.vms[vm].requests.ports[port];
        match p.waiters.pop_front() {
            Some(t) => {
                self.threads[t].request_since = Some(arrived);
                self.wake_thread(t, handler);
            }
            None => p.pending.push_back(arrived),
        }
    }

    /// `accept`: returns true if the thread blocked waiting for a request.
    pub(crate) fn request_accept(&mut self, t: ThreadId, port: usize) -> bool {
        let vm = self.threads[t].vm;
        let p = &mut self.vms[vm].requests.ports[port];
        match p.pending.pop_front() {
            Some(arrived) => {
                self.threads[t].request_since = Some(arrived);
                false
            }
            None => {
                p.waiters.push_back(t);
                true
            }
        }
    }

    /// `respond`: record the response time of the thread's current request (unless it
    /// completes within the warm-up, `Scenario::warmup_ms`: at or before its end, as a run
    /// that lasted only the warm-up would have counted it).
    pub(crate) fn request_respond(&mut self, t: ThreadId) {
        if let Some(arrived) = self.threads[t].request_since.take() {
            let now = self.now();
            let vm = self.threads[t].vm;
            if self.requests_warmup_ns.map_or(false, |w| now <= w) {
                self.vms[vm].requests.warmup_count += 1;
                return;
            }
            self.vms[vm].requests.response_ns.push(now - arrived);
        }
    }
}

/// Count, mean, median and 99th percentile (nearest rank) of response times, in ms.
pub fn summary(samples: &[Ns]) -> (u64, f64, f64, f64) {
    if samples.is_empty() {
        return (0, 0.0, 0.0, 0.0);
    }
    let mut v = samples.to_vec();
    v.sort_unstable();
    let n = v.len();
    let rank = |q: f64| v[((q * n as f64).ceil() as usize).clamp(1, n) - 1] as f64 / 1e6;
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64 / 1e6;
    (n as u64, mean, rank(0.5), rank(0.99))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_summary_uses_nearest_rank_percentiles_in_ms() {
        let s: Vec<Ns> = (1..=100).map(|i| i * 1_000_000).collect();
        let (n, mean, p50, p99) = summary(&s);
        assert_eq!(n, 100);
        assert!((mean - 50.5).abs() < 1e-9);
        assert_eq!((p50, p99), (50.0, 99.0));
        assert_eq!(summary(&[]), (0, 0.0, 0.0, 0.0));
    }
}
