//! Discrete-event engine: integer-nanosecond clock, an event queue ordered by
//! (time, insertion sequence), cheap timer cancellation, and per-entity RNG streams.
//!
//! Models: nothing of the machine; this is the clock and the agenda. Each re-armable timer
//! owns a `Timer` whose generation is bumped on re-arm or cancel. A re-arm moves the timer's
//! pending heap entry in place (O(log n), no stale entry left behind); a cancel is O(1) and its
//! entry, when popped, carries a stale generation and is dropped (lazy deletion).

mod queue;
mod rng;

pub use queue::{EventQueue, Timer};
pub use rng::{log_normal, stream_seed, RngStream};

/// Simulated time in nanoseconds.
pub type Ns = u64;

pub const NS_PER_US: Ns = 1_000;
pub const NS_PER_MS: Ns = 1_000_000;
pub const NS_PER_S: Ns = 1_000_000_000;

/// Milliseconds to nanoseconds, rounded to the nearest ns (negative → 0).
pub fn ms_to_ns(ms: f64) -> Ns {
    us_to_ns(ms * 1000.0)
}

/// Microseconds (scenario unit) to nanoseconds, rounded to the nearest ns.
pub fn us_to_ns(us: f64) -> Ns {
    if us <= 0.0 {
        0
    } else {
        (us * 1000.0).round() as Ns
    }
}
