//! The event queue: a 4-ary min-heap keyed by (time, seq). `seq` increases with every push
//! and every arm, so events at the same instant pop in the order they were scheduled; the order
//! of a run therefore depends only on the scenario and the seed.
//!
//! Timers are re-armed in place: a timer keeps the heap entry of its pending arm and moving
//! the arm moves that entry (a new `seq`, as a fresh push would get), so a re-armed timer leaves
//! no stale entry behind. The order of the events that fire is the same as if each arm were a
//! new push and the old one were skipped when popped. A cancelled timer's entry stays until it
//! pops (its generation no longer matches) or the timer is armed again.
//! Events live in a slab beside the heap; the heap holds only keys and slab indices.
//!
//! Why (session 22, `vmsched bench`): with every arm a new entry, a PLE-heavy 2VM run kept up
//! to 64,000 entries, 17 % of its pushes were re-arms that later popped stale, and popping
//! took a third of the run's time.

use super::Ns;

#[derive(Clone, Copy)]
struct Key {
    at: Ns,
    seq: u64,
    slot: u32,
}

impl Key {
    #[inline]
    fn before(&self, o: &Key) -> bool {
        (self.at, self.seq) < (o.at, o.seq)
    }
}

struct Slot<E> {
    ev: Option<E>,
    gen: u32,
    /// Bumped each time the slot is taken, so a timer can tell its own entry from a reuse
    /// (64 bits: never wraps within a run).
    epoch: u64,
    /// Position in the heap while the entry is pending.
    pos: u32,
}

const NO_SLOT: u32 = u32::MAX;
/// Children per heap node: a 4-ary heap is shallower than a binary one and its siblings share
/// a cache line.
const ARITY: usize = 4;

/// A re-armable timer slot. Arming bumps the generation, which invalidates the previous arm.
#[derive(Debug, Clone, Copy)]
pub struct Timer {
    gen: u32,
    armed_at: Option<Ns>,
    /// The queue slot of the last arm and that slot's epoch then (`NO_SLOT`: never armed).
    slot: u32,
    epoch: u64,
}

impl Default for Timer {
    fn default() -> Self {
        Timer { gen: 0, armed_at: None, slot: NO_SLOT, epoch: 0 }
    }
}

impl Timer {
    pub fn armed_at(&self) -> Option<Ns> {
        self.armed_at
    }
    pub fn cancel(&mut self) {
        self.gen = self.gen.wrapping_add(1);
        self.armed_at = None;
    }
    /// Does a popped event with generation `gen` belong to the current arm? Disarms if so.
    pub fn fire(&mut self, gen: u32) -> bool {
        if gen == self.gen && self.armed_at.is_some() {
            self.armed_at = None;
            true
        } else {
            false
        }
    }
}

pub struct EventQueue<E> {
    heap: Vec<Key>,
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
    seq: u64,
    now: Ns,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: Vec::new(), slots: Vec::new(), free: Vec::new(), seq: 0, now: 0, popped: 0 }
    }

    pub fn now(&self) -> Ns {
        self.now
    }

    /// Schedule an untimed (one-shot, never cancelled) event. Panics on a time in the past:
    /// that is a simulator bug, not an input error.
    pub fn push(&mut self, at: Ns, ev: E) {
        self.push_gen(at, 0, ev);
    }

    /// The sequence number of a new push or arm at `at`. Panics on a time in the past.
    fn next_seq(&mut self, at: Ns) -> u64 {
        assert!(at >= self.now, "event scheduled in the past: {} < now {}", at, self.now);
        self.seq += 1;
        self.seq
    }

    fn push_gen(&mut self, at: Ns, gen: u32, ev: E) -> (u32, u64) {
        let seq = self.next_seq(at);
        let slot = match self.free.pop() {
            Some(i) => {
                let s = &mut self.slots[i as usize];
                s.ev = Some(ev);
                s.gen = gen;
                s.epoch = s.epoch.wrapping_add(1);
                i
            }
            None => {
                self.slots.push(Slot { ev: Some(ev), gen, epoch: 0, pos: 0 });
                (self.slots.len() - 1) as u32
            }
        };
        let pos = self.heap.len();
        self.heap.push(Key { at, seq, slot });
        self.sift_up(pos);
        (slot, self.slots[slot as usize].epoch)
    }

    /// Arm `timer` to deliver `ev` at `at`; any earlier arm of the same timer is cancelled.
    pub fn arm(&mut self, timer: &mut Timer, at: Ns, ev: E) {
        if timer.armed_at == Some(at) {
            return;
        }
        timer.gen = timer.gen.wrapping_add(1);
        timer.armed_at = Some(at);
        let own = timer.slot != NO_SLOT && {
            let s = &self.slots[timer.slot as usize];
            s.epoch == timer.epoch && s.ev.is_some()
        };
        if !own {
            let (slot, epoch) = self.push_gen(at, timer.gen, ev);
            timer.slot = slot;
            timer.epoch = epoch;
            return;
        }
        let seq = self.next_seq(at);
        let s = &mut self.slots[timer.slot as usize];
        s.ev = Some(ev);
        s.gen = timer.gen;
        let pos = s.pos as usize;
        let old = self.heap[pos];
        self.heap[pos] = Key { at, seq, slot: timer.slot };
        if self.heap[pos].before(&old) {
            self.sift_up(pos);
        } else {
            self.sift_down(pos);
        }
    }

    /// Pop the next event with the generation it was armed with (0 for plain pushes).
    pub fn pop(&mut self) -> Option<(Ns, u32, E)> {
        let top = *self.heap.first()?;
        let last = self.heap.pop().expect("non-empty");
        if !self.heap.is_empty() {
            self.place(0, last);
            self.sift_down(0);
        }
        let s = &mut self.slots[top.slot as usize];
        let ev = s.ev.take().expect("a pending entry holds its event");
        self.free.push(top.slot);
        self.now = top.at;
        self.popped += 1;
        Some((top.at, s.gen, ev))
    }

    fn sift_up(&mut self, mut i: usize) {
        let k = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let pk = self.heap[parent];
            if !k.before(&pk) {
                break;
            }
            self.place(i, pk);
            i = parent;
        }
        self.place(i, k);
    }

    fn place(&mut self, i: usize, k: Key) {
        self.heap[i] = k;
        self.slots[k.slot as usize].pos = i as u32;
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let k = self.heap[i];
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let mut c = first;
            for j in first + 1..(first + ARITY).min(n) {
                if self.heap[j].before(&self.heap[c]) {
                    c = j;
                }
            }
            let ck = self.heap[c];
            if !ck.before(&k) {
                break;
            }
            self.place(i, ck);
            i = c;
        }
        self.place(i, k);
    }

    pub fn peek_time(&self) -> Option<Ns> {
        self.heap.first().map(|k| k.at)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn events_popped(&self) -> u64 {
        self.popped
    }

    /// Advance the clock without an event (end of run at a fixed horizon).
    pub fn advance_to(&mut self, t: Ns) {
        assert!(t >= self.now);
        self.now = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(5, 'b');
        q.push(3, 'a');
        q.push(5, 'c');
        q.push(5, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, _, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
    }

    #[test]
    fn rearming_a_timer_moves_its_event_and_leaves_nothing_behind() {
        let mut q = EventQueue::new();
        let mut t = Timer::default();
        q.arm(&mut t, 10, 1);
        q.arm(&mut t, 20, 2);
        assert_eq!(q.len(), 1, "the re-arm moved the pending entry");
        let (at, gen, ev) = q.pop().unwrap();
        assert_eq!((at, ev), (20, 2));
        assert!(t.fire(gen));
        assert!(q.pop().is_none());
    }

    #[test]
    fn a_rearmed_timer_orders_as_a_fresh_push_at_its_new_time() {
        let mut q = EventQueue::new();
        let mut t = Timer::default();
        q.arm(&mut t, 50, 't');
        q.push(10, 'a');
        q.push(30, 'b');
        q.arm(&mut t, 30, 'u'); // same instant as 'b', armed after it: pops after it
        q.push(30, 'c');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, _, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'u', 'c']);
    }

    /// The queue against the plain reference it replaced (every arm a new entry, stale
    /// entries skipped when popped): the same live events in the same order.
    #[test]
    fn live_events_pop_as_with_lazy_deletion() {
        use std::collections::BTreeMap;
        let mut rng = crate::engine::RngStream::new(7, "queue-test");
        let mut q: EventQueue<(usize, u64)> = EventQueue::new();
        let mut timers = [Timer::default(); 6];
        let mut reference: BTreeMap<(Ns, u64), (usize, u32, u64)> = BTreeMap::new();
        let mut ref_gen = [0u32; 6];
        let mut ref_seq = 0u64;
        let mut got = Vec::new();
        let mut want = Vec::new();
        let mut id = 0u64;
        for _ in 0..20_000 {
            let now = q.now();
            let k = rng.below(6);
            match rng.below(4) {
                0 | 1 => {
                    let at = now + rng.below(100) as Ns;
                    if timers[k].armed_at() != Some(at) {
                        id += 1;
                        ref_gen[k] = ref_gen[k].wrapping_add(1);
                        ref_seq += 1;
                        reference.insert((at, ref_seq), (k, ref_gen[k], id));
                    }
                    q.arm(&mut timers[k], at, (k, id));
                }
                2 => {
                    timers[k].cancel();
                    ref_gen[k] = ref_gen[k].wrapping_add(1);
                }
                _ => {
                    // The next event that fires, in each.
                    while let Some((at, gen, (k, id))) = q.pop() {
                        if timers[k].fire(gen) {
                            got.push((at, id));
                            break;
                        }
                    }
                    while let Some((&(at, seq), &(k, g, id))) = reference.iter().next() {
                        reference.remove(&(at, seq));
                        if g == ref_gen[k] {
                            ref_gen[k] = ref_gen[k].wrapping_add(1);
                            want.push((at, id));
                            break;
                        }
                    }
                }
            }
        }
        assert!(got.len() > 1000);
        assert_eq!(got, want);
    }

    #[test]
    fn cancelled_timer_does_not_fire() {
        let mut q = EventQueue::new();
        let mut t = Timer::default();
        q.arm(&mut t, 10, ());
        t.cancel();
        let (_, gen, _) = q.pop().unwrap();
        assert!(!t.fire(gen));
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn scheduling_in_the_past_is_caught() {
        let mut q = EventQueue::new();
        q.push(10, ());
        q.pop();
        q.push(5, ());
    }
}
