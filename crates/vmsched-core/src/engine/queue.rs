//! The event queue: a binary heap keyed by (time, seq). `seq` increases with every push, so
//! events at the same instant pop in the order they were scheduled; the order of a run
//! therefore depends only on the scenario and the seed.

use super::Ns;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: Ns,
    seq: u64,
    gen: u32,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: invert.
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// A re-armable timer slot. Arming bumps the generation, which invalidates the previous arm.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timer {
    gen: u32,
    armed_at: Option<Ns>,
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
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: Ns,
    pushed: u64,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::new(), seq: 0, now: 0, pushed: 0, popped: 0 }
    }

    pub fn now(&self) -> Ns {
        self.now
    }

    /// Schedule an untimed (one-shot, never cancelled) event. Panics on a time in the past:
    /// that is a simulator bug, not an input error.
    pub fn push(&mut self, at: Ns, ev: E) {
        self.push_gen(at, 0, ev)
    }

    fn push_gen(&mut self, at: Ns, gen: u32, ev: E) {
        assert!(at >= self.now, "event scheduled in the past: {} < now {}", at, self.now);
        self.seq += 1;
        self.pushed += 1;
        self.heap.push(Entry { at, seq: self.seq, gen, ev });
    }

    /// Arm `timer` to deliver `ev` at `at`; any earlier arm of the same timer is cancelled.
    pub fn arm(&mut self, timer: &mut Timer, at: Ns, ev: E) {
        if timer.armed_at == Some(at) {
            return;
        }
        timer.gen = timer.gen.wrapping_add(1);
        timer.armed_at = Some(at);
        self.push_gen(at, timer.gen, ev);
    }

    /// Pop the next event with the generation it was armed with (0 for plain pushes).
    pub fn pop(&mut self) -> Option<(Ns, u32, E)> {
        let e = self.heap.pop()?;
        self.now = e.at;
        self.popped += 1;
        Some((e.at, e.gen, e.ev))
    }

    pub fn peek_time(&self) -> Option<Ns> {
        self.heap.peek().map(|e| e.at)
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
    fn rearming_a_timer_invalidates_the_old_event() {
        let mut q = EventQueue::new();
        let mut t = Timer::default();
        q.arm(&mut t, 10, 1);
        q.arm(&mut t, 20, 2);
        let (at, gen, ev) = q.pop().unwrap();
        assert_eq!((at, ev), (10, 1));
        assert!(!t.fire(gen), "stale arm must not fire");
        let (at, gen, ev) = q.pop().unwrap();
        assert_eq!((at, ev), (20, 2));
        assert!(t.fire(gen));
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
