//! Discrete-event engine: integer-nanosecond clock, an event queue ordered by
//! (time, insertion sequence), cheap timer cancellation, and per-entity RNG streams.
//!
//! Models: nothing of the machine; this is the clock and the agenda. Timers are cancelled by
//! generation numbers: each re-armable timer owns a `Timer` slot whose generation is bumped on
//! re-arm or cancel, and a popped event whose generation is stale is dropped (lazy deletion,
//! O(log n) per arm, O(1) per cancel).

mod queue;
mod rng;

pub use queue::{EventQueue, Timer};
pub use rng::{stream_seed, RngStream};

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
