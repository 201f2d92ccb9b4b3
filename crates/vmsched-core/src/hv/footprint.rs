//! Decayed footprints: the working sets of the threads that ran lately in each domain of a
//! shared hardware structure, the one mechanism behind the shared-LLC pressure (`hv::llc`,
//! a domain per socket) and the TLB pressure (`hv::tlb`, a domain per pCPU).
//!
//! Models: a thread that stopped running in a domain `age` ago still occupies it with its
//! working set weighted by exp(-age / window) (what later threads have not yet replaced); a
//! running thread counts whole. A thread's entry lives in the one domain where it last ran:
//! when it runs in another, what is left of it leaves the old domain and its whole working
//! set enters the new one, fresh (for the TLB this is the VPID renewal on a move,
//! `hv::tlb`). Each domain keeps the sum of its stopped threads' decayed working sets,
//! brought forward lazily (one `exp` per update). A domain can be flushed (`flush`: the TLB's
//! at a full context switch, `hv::tlb`): its footprint drops to nothing and every thread's
//! entry there is dropped at once, by a per-domain generation that an entry must match to
//! count (Xen's per-core ASID generation, xen/arch/x86/hvm/asid.c `core_asid_generation`).
//!
//! Leaves out: capacity-based replacement (a footprint above the structure's size still
//! decays in time only; the pressure functions in `host` turn the footprint into misses),
//! set conflicts, and any sharing of entries between threads (each thread's working set is
//! its own).
//!
//! Sources: none needed beyond the two users' (the window is fitted per seed with the stall
//! ratios, calibration.toml).

use crate::engine::Ns;

/// Where a thread's working set last entered a domain: the domain, when it last ran there,
/// and the domain's flush generation then (the entry counts only while that stands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FootprintEntry {
    pub domain: usize,
    pub since: Ns,
    pub generation: u64,
}

/// Per domain: the decayed footprint of the threads that stopped running there, as of `at`,
/// and the number of flushes so far (`generation`).
#[derive(Debug, Clone, Default)]
pub struct FootprintDomains {
    decayed_kib: Vec<f64>,
    at: Vec<Ns>,
    generation: Vec<u64>,
}

impl FootprintDomains {
    pub fn new(domains: usize) -> Self {
        FootprintDomains { decayed_kib: vec![0.0; domains], at: vec![0; domains], generation: vec![0; domains] }
    }

    /// Whether `entry` still holds working set in domain `d` (it is there and no flush of `d`
    /// came after it).
    pub fn holds(&self, entry: FootprintEntry, d: usize) -> bool {
        entry.domain == d && entry.generation == self.generation[d]
    }

    /// Domain `d` is emptied at `now`: its decayed footprint is gone and every entry there
    /// stops counting (a later `touch` of such a thread takes nothing out of `d`).
    pub fn flush(&mut self, d: usize, now: Ns) {
        self.decayed_kib[d] = 0.0;
        self.at[d] = now;
        self.generation[d] += 1;
    }

    /// Domain `d`'s decayed footprint brought to `now`.
    fn decayed(&mut self, d: usize, now: Ns, window_ns: Ns) -> f64 {
        if now != self.at[d] || window_ns == 0 {
            self.decayed_kib[d] *= weight(now - self.at[d], window_ns);
            self.at[d] = now;
        }
        self.decayed_kib[d]
    }

    /// A thread of `ws_kib` that last touched `prev` (domain, when) has run in domain `d`
    /// until `now`: its old entry leaves `prev`'s domain (what is left of it), its whole
    /// working set enters `d`'s, fresh. Returns its new entry. An entry a flush dropped has
    /// nothing left to take out.
    pub fn touch(&mut self, prev: Option<FootprintEntry>, ws_kib: f64, d: usize, now: Ns, window_ns: Ns) -> FootprintEntry {
        if let Some(e) = prev.filter(|e| self.holds(*e, e.domain)) {
            let left = ws_kib * weight(now - e.since, window_ns);
            self.decayed_kib[e.domain] = (self.decayed(e.domain, now, window_ns) - left).max(0.0);
        }
        self.decayed_kib[d] = self.decayed(d, now, window_ns) + ws_kib;
        FootprintEntry { domain: d, since: now, generation: self.generation[d] }
    }

    /// Domain `d`'s footprint at `now` with `running` (each thread's working set and its
    /// entry) counted whole instead of decayed.
    pub fn footprint_kib(&mut self, d: usize, now: Ns, window_ns: Ns, running: impl IntoIterator<Item = (f64, Option<FootprintEntry>)>) -> f64 {
        let mut f = self.decayed(d, now, window_ns);
        for (ws, entry) in running {
            let counted = match entry {
                Some(e) if self.holds(e, d) => ws * weight(now - e.since, window_ns),
                _ => 0.0,
            };
            f += ws - counted;
        }
        f.max(0.0)
    }
}

/// exp(-age / window); 0 with no window (only running threads count).
fn weight(age_ns: Ns, window_ns: Ns) -> f64 {
    if window_ns == 0 {
        0.0
    } else {
        (-(age_ns as f64) / window_ns as f64).exp()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The footprint counts each thread once, decayed since it last ran, in the domain where
    /// it last ran. Window 1 ms, one thread of 1024 KiB.
    #[test]
    fn a_stopped_thread_weighs_exp_minus_its_age_over_the_window_once_in_its_last_domain() {
        let w: Ns = 1_000_000;
        let mut l = FootprintDomains::new(2);
        let e = l.touch(None, 1024.0, 0, 0, w);
        // One window later: 1024 / e.
        let f = l.footprint_kib(0, w, w, []);
        assert!((f - 1024.0 * (-1.0f64).exp()).abs() < 1e-9, "{f}");
        // Running again in domain 0 it counts whole, not 1024 + 1024/e.
        assert!((l.footprint_kib(0, w, w, [(1024.0, Some(e))]) - 1024.0).abs() < 1e-9);
        // It runs in domain 1 until 2 ms: domain 0 keeps nothing of it, domain 1 all of it.
        let e = l.touch(Some(e), 1024.0, 1, 2 * w, w);
        assert!(l.footprint_kib(0, 2 * w, w, []).abs() < 1e-9);
        assert!((l.footprint_kib(1, 2 * w, w, []) - 1024.0).abs() < 1e-9);
        assert_eq!((e.domain, e.since), (1, 2 * w));
        // Without a window only running threads count.
        let mut z = FootprintDomains::new(1);
        z.touch(None, 1024.0, 0, 0, 0);
        assert_eq!(z.footprint_kib(0, 10, 0, []), 0.0);
        assert_eq!(z.footprint_kib(0, 10, 0, [(512.0, None)]), 512.0);
    }

    /// A thread that moves to another domain brings none of its entries: running there it
    /// adds its whole working set on top of what the domain holds, where back in its own
    /// domain it would only have replaced its decayed part. Window 1 ms; thread A (1024 KiB)
    /// ran in domain 0 until 0, thread B (512 KiB) in domain 1 until 0. Half a window later
    /// (weight w = exp(-1/2)): A resumed in domain 0 makes it 1024 (A whole, its w x 1024
    /// replaced); A moved to domain 1 makes that one 512 w + 1024, and domain 0 keeps
    /// 1024 w until A's entry moves, then nothing.
    #[test]
    fn a_thread_moved_to_another_domain_starts_there_cold_and_leaves_its_old_one() {
        let win: Ns = 1_000_000;
        let mut l = FootprintDomains::new(2);
        let a = l.touch(None, 1024.0, 0, 0, win);
        l.touch(None, 512.0, 1, 0, win);
        let t = win / 2;
        let w = (-0.5f64).exp();
        assert!((l.footprint_kib(0, t, win, [(1024.0, Some(a))]) - 1024.0).abs() < 1e-9);
        let moved = l.footprint_kib(1, t, win, [(1024.0, Some(a))]);
        assert!((moved - (512.0 * w + 1024.0)).abs() < 1e-9, "{moved}");
        assert!((l.footprint_kib(0, t, win, []) - 1024.0 * w).abs() < 1e-9);
        l.touch(Some(a), 1024.0, 1, t, win);
        assert!(l.footprint_kib(0, t, win, []).abs() < 1e-9);
        assert!((l.footprint_kib(1, t, win, []) - (512.0 * w + 1024.0)).abs() < 1e-9);
    }

    /// A flush empties its domain and drops every entry there, and only there. Window 1 ms;
    /// A (1024 KiB) and B (512 KiB) ran in domain 0 until 0, C (256 KiB) in domain 1. Domain 0
    /// flushed at half a window: it holds nothing, A running again there counts whole (1024,
    /// none of it replaced), A's later move takes nothing out of domain 0, and domain 1 keeps
    /// C's 256 exp(-1/2).
    #[test]
    fn a_flush_empties_its_domain_and_drops_the_entries_there_only() {
        let win: Ns = 1_000_000;
        let mut l = FootprintDomains::new(2);
        let a = l.touch(None, 1024.0, 0, 0, win);
        l.touch(None, 512.0, 0, 0, win);
        let c = l.touch(None, 256.0, 1, 0, win);
        let t = win / 2;
        let w = (-0.5f64).exp();
        assert!((l.footprint_kib(0, t, win, []) - 1536.0 * w).abs() < 1e-9);
        l.flush(0, t);
        assert!(!l.holds(a, 0) && l.holds(c, 1));
        assert_eq!(l.footprint_kib(0, t, win, []), 0.0);
        assert!((l.footprint_kib(0, t, win, [(1024.0, Some(a))]) - 1024.0).abs() < 1e-9);
        assert!((l.footprint_kib(1, t, win, []) - 256.0 * w).abs() < 1e-9);
        // B runs in domain 0 after the flush, then A moves to domain 1: domain 0 keeps B.
        let b = l.touch(None, 512.0, 0, t, win);
        assert!(l.holds(b, 0));
        l.touch(Some(a), 1024.0, 1, t, win);
        assert!((l.footprint_kib(0, t, win, []) - 512.0).abs() < 1e-9);
    }
}
