//! Cache-line transfer of a pipe or socket's shared state, and of its messages, between pCPUs.
//!
//! Models, first, the queue's shared state: a bounded queue (`put`/`get` ops: hackbench's
//! sockets, IMB's channels) has state that both ends write on every operation. In Linux 2.6.32
//! a write to a Unix stream socket (net/unix/af_unix.c `unix_stream_sendmsg`) takes the
//! reader's `unix_state_lock`, appends to its `sk_receive_queue` and calls `sk_data_ready`
//! (net/core/sock.c `sock_def_readable`), whose wake-up (kernel/sched.c `try_to_wake_up`) locks
//! and updates the reader's runqueue; a read (`unix_stream_recvmsg`) dequeues from the same list
//! and frees the buffer, whose destructor (`sock_wfree`) updates the writer's `sk_wmem_alloc`
//! and may wake writers (`unix_write_space`). Those lines are in the cache of the pCPU that last
//! operated on the queue. An operation from another pCPU misses on them and fetches them from
//! there: it costs `host.costs.channel_transfer_ns`, times `cross_socket_refill_factor` when the
//! two pCPUs sit on different sockets. An operation from the pCPU that last touched the queue
//! costs nothing extra. So this cost depends on how the two ends interleave: when a writer and
//! a reader on different pCPUs alternate message by message, every operation pays (the lines
//! ping-pong); when one end runs alone (the other's vCPU descheduled, or the queue full or
//! empty) consecutive operations hit. This is the "information that a communication socket is
//! readable must be transferred cross core" and the remote run-queue insertion that seed 004
//! names for hackbench with affinity (§7.3.3, §7.4.2). A thread pays for its own operation and,
//! when an operation completes a blocked peer's (a put handed to a waiting getter, a get that
//! admits a waiting putter), the peer pays for its access from the pCPU of its vCPU.
//! With `state_lock` (hackbench's sockets, since session 47) the operation first takes the
//! queue's state lock, a guest spinlock (`<queue>.state_lock`, `program::queue_state_lock`), as
//! both ends of a 2.6.32 stream socket take the receiving socket's `unix_state_lock` around
//! `skb_queue_tail` and `skb_dequeue`; the fetch of the state is then made holding that lock
//! (`kernel.rs critical_section_ns`), where the misses really stall, instead of being owed to
//! the next compute. So the two ends wait for each other's fetch, and a vCPU descheduled inside
//! the section leaves the other end spinning on that socket until it runs again.
//!
//! Second, the message itself (a put with `msg_bytes`; hackbench's 100 bytes): "the messages
//! which are written on one core and read from the other must be transferred over the
//! interconnect" (seed 004 §7.4.2). `unix_stream_sendmsg` allocates a buffer
//! (`sock_alloc_send_skb` → net/core/skbuff.c `__alloc_skb`: a `struct sk_buff` from
//! `skbuff_head_cache`, cleared up to `tail`, and a kmalloc'd data area whose end holds
//! `struct skb_shared_info`, initialised) and copies the message into it
//! (`memcpy_fromiovec`); `unix_stream_recvmsg` reads the `sk_buff` (list links, `cb`, `len`,
//! `data`, `destructor`), copies the data out (`skb_copy_datagram_iovec`, which reads the
//! shared info's `nr_frags` and `frag_list`) and frees both (`consume_skb` →
//! `skb_release_data` decrements the shared info's `dataref`; `kmem_cache_free`, `kfree`). On
//! the seed's i386 guest (Linux 2.6.32 include/linux/skbuff.h) the `sk_buff` spans
//! `SKB_HEAD_LINES` = 3 cache lines of 64 bytes (192 bytes, `SKB_HEAD_BYTES`: links, `sk`, `tstamp`,
//! `dev`, 48 bytes of `cb`, lengths, flags, `destructor`, the header offsets, `head`, `data`,
//! `truesize`, `users`), the shared info's fields used here one line, and the data
//! `ceil(bytes / 64)` lines (the kmalloc'd area is line-aligned and the message starts at its
//! head: no headroom is reserved). The reader fetches every line of a message written on
//! another pCPU (`message_read`). The freed objects go back through the slab allocator
//! (mm/slab.c, the allocator of 2.6.32's default config): `__cache_free` puts an object on
//! the freeing CPU's array (`array_cache`, `SLAB_CPU_LIMIT` = 120 objects for objects up to
//! 256 bytes, `enable_cpucache`); when that is full, `cache_flusharray` moves its oldest
//! `SLAB_BATCH` = 60 to the node's shared pool; `____cache_alloc` takes the CPU's most recently
//! freed object, and an empty array refills from the shared pool (`cache_alloc_refill`). So a
//! writer whose receivers run on another CPU allocates buffers freed there, and its writes
//! must first take those lines from the freeing CPU's cache (`message_write`): a message's
//! lines cross cores twice, once each way, however the two ends interleave, while a writer
//! and reader on one CPU recycle their buffers locally and pay nothing. Each line costs the
//! host's cache-to-cache transfer (`ticket_transfer_cycles` on one socket,
//! `ticket_transfer_remote_cycles` across; Levinthal's guide, see host/mod.rs). With
//! no `msg_bytes` (0) no data is modelled. IMB's messages (`guest::workloads::imb`) carry
//! their bytes since session 12, through this same model: their path in the seed's guest
//! (MPICH2 ch3:sock over loopback TCP, Linux 2.6.18: `tcp_sendmsg` copies into page
//! fragments on a scatter-gather device such as loopback, whose 16 KiB MTU cuts larger
//! messages into segments; the pages recycle through the page allocator) is not modelled
//! apart from a Unix socket's.
//!
//! Third, how many messages a socket holds (`unix_stream_queue`). A Unix stream socket's writes
//! are charged to the writing socket's send buffer: `sock_alloc_send_pskb` (net/core/sock.c)
//! allocates while `sk_wmem_alloc < sk_sndbuf` and otherwise sleeps on the socket, each buffer
//! counting its `truesize`, the data rounded up to a cache line (`SKB_DATA_ALIGN`) plus
//! `sizeof(struct sk_buff)` (net/core/skbuff.c `__alloc_skb`); `sk_wmem_alloc` starts at 1
//! (2.6.31's `sock_init_data`). A read frees the buffer: `sock_wfree` takes back its
//! `truesize` but for 1 and calls `sk_write_space`, whose `unix_write_space` wakes the sleeping
//! writers (all of them: `wake_up_interruptible_sync_poll` on the socket's queue) only if
//! `unix_writable`, `sk_wmem_alloc` x 4 <= `sk_sndbuf`: a quarter. Hackbench's 20 senders of a
//! group share each receiver's socket (seed 004 §7.2), so one queue per receiver holds
//! `capacity` messages and admits its blocked senders again at `writable_at`.
//!
//! The cost is owed by the thread and added to its next compute (the first work after the
//! operation, which is where the misses stall it); a thread that exits with no work left drops
//! what it owes.
//!
//! Leaves out: the state lock's own instructions (the list operation, tens of ns: its section
//! is the fetch alone, so a local operation holds it for no time); the wait queue's lock and the
//! woken reader's runqueue lock that the wake-up after the operation takes; memory-level
//! parallelism (the lines of a message are charged one after the other; the reader's
//! dependent chain, list link → `sk_buff` → data and shared info, is three misses deep, the
//! data's two lines could overlap); separate costs per line and per
//! structure for the queue's state (one fitted cost per operation: the seed's host gives only
//! the total through native hackbench, Table 3); lines evicted from the owner's cache while
//! it ran something else (they are then fetched from L3 or memory, which costs about as much,
//! 40-60 ns against 75 cycles, Levinthal p. 22); the data kmalloc cache's smaller array
//! (objects of 256-1024 bytes: limit 54), taken as the `sk_buff`'s; a buffer's first use
//! (fresh slab pages, free); contention between more than two pCPUs (the lines have one owner
//! at a time).
//!
//! Sources: seed 004 §7.2 (message size 100 bytes), §7.3.3, §7.4.2 and Table 3 (native rows:
//! the fit); hackbench's `DATASIZE` 100 (Linux tools/perf/bench/sched-messaging.c, derived from
//! rt-tests hackbench); Linux 2.6.32 net/unix/af_unix.c, net/core/sock.c, net/core/skbuff.c,
//! include/linux/skbuff.h, mm/slab.c, kernel/sched.c as named above.

use std::collections::BTreeMap;

use crate::engine::Ns;
use crate::sim::state::*;
use crate::sim::World;

impl World {
    /// Thread `t` operates on queue `q` from the pCPU its vCPU runs on (or, not running, the
    /// one it last ran on: the vCPU's threads run there next). Owes the transfer if the
    /// queue's state was last written on another pCPU.
    pub(crate) fn channel_touch(&mut self, t: ThreadId, q: usize) {
        let ns = self.channel_fetch(t, q);
        self.threads[t].comm_debt_ns += ns;
    }

    /// The cost of thread `t` fetching queue `q`'s state now (0 if it was last written on the
    /// same pCPU, or never); the queue's state is then on this pCPU.
    pub(crate) fn channel_fetch(&mut self, t: ThreadId, q: usize) -> Ns {
        let cost = self.costs.channel_transfer_ns;
        if cost == 0 {
            return 0;
        }
        let p = self.thread_pcpu(t);
        let vm = self.threads[t].vm;
        let Some(from) = self.vms[vm].queues[q].last_pcpu.replace(p) else { return 0 };
        if from == p {
            return 0;
        }
        self.vms[vm].channel_transfers += 1;
        if self.topo.socket_of(from) != self.topo.socket_of(p) {
            (cost as f64 * self.costs.cross_socket_refill_factor).round() as Ns
        } else {
            cost
        }
    }
}

/// Bytes per cache line on the seed's hosts (64 on every x86 processor in the seeds).
pub const CACHE_LINE_BYTES: u32 = 64;
/// Lines of a `struct sk_buff` on an i386 Linux 2.6.32 guest (`SKB_HEAD_BYTES`).
pub const SKB_HEAD_LINES: u32 = SKB_HEAD_BYTES.div_ceil(CACHE_LINE_BYTES);
/// Lines of `struct skb_shared_info` that a send and a receive touch (`dataref`, `nr_frags`,
/// `frag_list` lie at its start).
pub const SKB_SHINFO_LINES: u32 = 1;
/// mm/slab.c `enable_cpucache`: a CPU's array holds up to 120 objects of at most 256 bytes.
pub const SLAB_CPU_LIMIT: usize = 120;
/// mm/slab.c: `batchcount` = (limit + 1) / 2 objects move to the shared pool at a flush.
pub const SLAB_BATCH: usize = 60;

/// `sizeof(struct sk_buff)` on the seed's i386 Linux 2.6.32 guest: 192 bytes, the three lines
/// of `SKB_HEAD_LINES`, and what the guest's 112 KiB `net.core.wmem_default` (seed 004 §7.2)
/// implies, 2.6.32's `SK_WMEM_MAX` being (`sizeof(struct sk_buff)` + 256) x 256
/// (net/core/sock.c; 448 x 256 = 114,688).
pub const SKB_HEAD_BYTES: u32 = 192;
/// `net.core.wmem_default`, a socket's default `sk_sndbuf`: seed 004 §7.2, "The buffer size for
/// sockets is 112 KiB", read from /proc/sys/net/core/wmem_default.
pub const SOCKET_SNDBUF_BYTES: u32 = 114_688;

/// A Unix stream socket with send buffer `sndbuf` carrying messages of `bytes`: how many it
/// holds (`capacity`) and the count at or below which a read wakes its blocked writers
/// (`writable_at`; module doc, third part). With `truesize` t, a k-th message in flight is
/// admitted while 1 + (k - 1) t < sndbuf; a free leaves 2 + n t charged when it asks
/// `unix_writable`, (2 + n t) x 4 <= sndbuf.
pub fn unix_stream_queue(sndbuf: u32, bytes: u32) -> (u32, u32) {
    let truesize = bytes.div_ceil(CACHE_LINE_BYTES) * CACHE_LINE_BYTES + SKB_HEAD_BYTES;
    let capacity = sndbuf.saturating_sub(2) / truesize + 1;
    let writable_at = (sndbuf / 4).saturating_sub(2) / truesize;
    (capacity, writable_at.min(capacity - 1))
}

/// Cache lines a message of `bytes` occupies with its socket buffer (0: not modelled).
pub fn message_lines(bytes: u32) -> u32 {
    if bytes == 0 {
        0
    } else {
        SKB_HEAD_LINES + SKB_SHINFO_LINES + bytes.div_ceil(CACHE_LINE_BYTES)
    }
}

/// The slab allocator's freed socket buffers of one VM: per vCPU the pCPU each object was
/// freed on (the top is the most recent), and the node's shared pool.
#[derive(Debug, Default)]
pub struct SkbCache {
    per_vcpu: BTreeMap<VcpuId, Vec<PcpuId>>,
    shared: Vec<PcpuId>,
}

impl World {
    /// The pCPU thread `t`'s vCPU runs on or, not running, last ran on (its threads run there next).
    fn thread_pcpu(&self, t: ThreadId) -> PcpuId {
        self.vcpus[self.threads[t].vcpu].pcpu()
    }

    /// Time to fetch `lines` cache lines last written on pCPU `from` into pCPU `to`.
    fn lines_ns(&self, from: PcpuId, to: PcpuId, lines: u32) -> Ns {
        if from == to || lines == 0 {
            return 0;
        }
        let per_line = self.costs.line_transfer_cycles(self.topo.socket_of(from) == self.topo.socket_of(to));
        if per_line == 0 {
            return 0;
        }
        self.topo.cycles_to_ns(per_line * lines as u64)
    }

    /// Thread `t`, on pCPU `to`, owes the fetch of `lines` lines last written on `from`
    /// (counted in its VM's `message_line_transfers` when it costs anything).
    fn owe_lines(&mut self, t: ThreadId, from: PcpuId, to: PcpuId, lines: u32) {
        let ns = self.lines_ns(from, to, lines);
        if ns > 0 {
            self.threads[t].comm_debt_ns += ns;
            self.vms[self.threads[t].vm].message_line_transfers += lines as u64;
        }
    }

    /// Thread `t` allocates a buffer for a message of `lines` cache lines and writes it.
    /// Owes the fetch of the buffer's lines if it was last freed on another pCPU. Returns the
    /// pCPU the message was written on (None: no data modelled).
    pub(crate) fn message_write(&mut self, t: ThreadId, lines: u32) -> Option<PcpuId> {
        if lines == 0 {
            return None;
        }
        let p = self.thread_pcpu(t);
        let v = self.threads[t].vcpu;
        let vm = self.threads[t].vm;
        let cache = &mut self.vms[vm].skb_cache;
        let freed_on = cache.per_vcpu.get_mut(&v).and_then(|a| a.pop()).or_else(|| cache.shared.pop());
        if let Some(f) = freed_on {
            self.owe_lines(t, f, p, lines);
        }
        Some(p)
    }

    /// Thread `t` reads a message of `lines` cache lines written on pCPU `written` and frees
    /// its buffer onto its vCPU's slab array. Owes the fetch of the lines from there.
    pub(crate) fn message_read(&mut self, t: ThreadId, written: Option<PcpuId>, lines: u32) {
        let Some(w) = written else { return };
        let p = self.thread_pcpu(t);
        self.owe_lines(t, w, p, lines);
        let vm = self.threads[t].vm;
        let v = self.threads[t].vcpu;
        let cache = &mut self.vms[vm].skb_cache;
        let array = cache.per_vcpu.entry(v).or_default();
        array.push(p);
        if array.len() > SLAB_CPU_LIMIT {
            cache.shared.extend(array.drain(..SLAB_BATCH));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::from_toml_str;
    use crate::sim::{Overrides, Results, Simulation};

    /// A producer and a consumer over one 64-deep queue of 100-byte messages (`msg_bytes`),
    /// `msgs` messages, 10 µs of work per message on the producer's side and 8 on the
    /// consumer's. `bursts`: each side works in turns of 64 messages, the producer sleeping
    /// 1 ms after each, the consumer starting 0.82 ms later and sleeping 1.128 ms after each
    /// (same 1.64 ms period), so one runs while the other sleeps; otherwise the consumer drains
    /// the queue and waits for every message. `pin`: the vCPUs' pCPUs; `roles`: the two
    /// threads' vCPUs. The queue's state costs 1 ns per transfer: counted, not felt.
    fn exchange(msg_bytes: u32, msgs: u32, bursts: bool, pin: &str, roles: (u32, u32)) -> Results {
        exchange_sim(msg_bytes, msgs, bursts, pin, Some(roles)).1
    }

    /// `exchange`, returning the finished simulation too (its threads' state). `roles` None:
    /// neither thread is bound (both may run on either vCPU; the guest spreads the two busy
    /// threads over the two vCPUs), so neither has hard affinity (DP's AC 100).
    fn exchange_sim(msg_bytes: u32, msgs: u32, bursts: bool, pin: &str, roles: Option<(u32, u32)>) -> (Simulation, Results) {
        let (p, c) = match roles {
            Some((p, c)) => (p.to_string(), c.to_string()),
            None => ("0, 1".to_string(), "0, 1".to_string()),
        };
        let (turns, turn) = if bursts { (msgs / 64, 64) } else { (msgs, 1) };
        let sleep = |us: f64| if bursts { format!(r#", {{ op = "sleep", us = {us} }}"#) } else { String::new() };
        let (p_sleep, c_sleep) = (sleep(1000.0), sleep(1128.0));
        let c_first = if bursts { r#"{ op = "sleep", us = 820.0 }, "# } else { "" };
        let text = format!(
            r#"
[host]
sockets = 2
cores_per_socket = 2
cpu_ghz = 2.5
[host.costs]
channel_transfer_ns = 1
[hypervisor]
scheduler = "credit"
[[vms]]
vcpus = 2
pin = {pin}
[[vms.workloads]]
kind = "custom"
groups = [
  {{ threads = 1, affinity = [{p}], program = [{{ op = "loop", count = {turns}, body = [{{ op = "loop", count = {turn}, body = [{{ op = "compute", us = 10.0 }}, {{ op = "put", queue = "q", msg_bytes = {msg_bytes} }}] }}{p_sleep}] }}] }},
  {{ threads = 1, affinity = [{c}], program = [{c_first}{{ op = "loop", count = {turns}, body = [{{ op = "loop", count = {turn}, body = [{{ op = "get", queue = "q" }}, {{ op = "compute", us = 8.0 }}] }}{c_sleep}] }}] }},
]
"#,
        );
        simulate(&text)
    }

    /// Builds and runs a scenario, with the invariant checks on.
    fn simulate(text: &str) -> (Simulation, Results) {
        let sc = from_toml_str(text).expect("scenario parses");
        let mut sim = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).expect("scenario builds");
        let r = sim.run().expect("no invariant violated");
        (sim, r)
    }

    fn done_ms(r: &Results) -> f64 {
        r.vms[0].completion_ns.expect("VM finished") as f64 / 1e6
    }

    #[test]
    fn a_hackbench_message_spans_the_sk_buff_its_shared_info_and_its_data() {
        assert_eq!(message_lines(0), 0, "no message data modelled");
        assert_eq!(message_lines(100), 3 + 1 + 2, "100 bytes: two data lines");
        assert_eq!(message_lines(64), 3 + 1 + 1);
        assert_eq!(message_lines(65), 3 + 1 + 2);
    }

    /// Apart (vCPUs on pCPUs 0 and 1), every message's 6 lines cross once to the reader, and
    /// the writer's buffers, freed by the reader onto its CPU's slab array and handed back
    /// through the shared pool, cross again: about 12 lines per message, whether the two ends
    /// alternate message by message or take turns of 64 (where the queue's own state crosses
    /// only about once per turn). Only the first buffers, fresh from
    /// the slab before the reader's array first overflows, come free.
    #[test]
    fn message_lines_cross_cores_each_way_however_the_ends_interleave() {
        let msgs = 1920;
        let pingpong = exchange(100, msgs, false, "[0, 1]", (0, 1));
        let runs = exchange(100, msgs, true, "[0, 1]", (0, 1));
        for (name, r) in [("message by message", &pingpong), ("in turns of 64", &runs)] {
            let lines = r.vms[0].message_line_transfers as f64;
            let state = r.vms[0].channel_transfers as f64;
            eprintln!("{name}: {:.2} lines per message, {:.3} state transfers per message, {:.2} ms", lines / msgs as f64, state / msgs as f64, done_ms(r));
            let read = 6.0 * msgs as f64;
            let written = lines - read;
            assert!(written <= 6.0 * msgs as f64 && written >= 6.0 * (msgs as f64 - 2.0 * (SLAB_CPU_LIMIT + SLAB_BATCH) as f64),
                "{name}: {written} lines fetched by the writer");
        }
        // channel_transfer_ns is 1 ns here: the state is barely charged, but its count says how
        // the ends interleave.
        assert!(runs.vms[0].channel_transfers * 10 < pingpong.vms[0].channel_transfers,
            "state transfers: in runs {}, message by message {}", runs.vms[0].channel_transfers, pingpong.vms[0].channel_transfers);
    }

    /// With both ends on one vCPU the reader frees onto the array the writer allocates from,
    /// and no line moves; with no message size (`msg_bytes` 0) nothing is counted either.
    #[test]
    fn buffers_recycle_locally_when_writer_and_reader_share_a_cpu() {
        let stacked = exchange(100, 640, false, "[0, 1]", (0, 0));
        assert_eq!(stacked.vms[0].message_line_transfers, 0);
        let no_data = exchange(0, 640, false, "[0, 1]", (0, 1));
        assert_eq!(no_data.vms[0].message_line_transfers, 0);
    }

    /// The lines cost the host's cache-to-cache transfer: `ticket_transfer_cycles` each on one
    /// socket, `ticket_transfer_remote_cycles` across sockets. The writer, the slower side,
    /// paces the exchange and pays its 6 lines per message.
    #[test]
    fn message_lines_cost_the_hosts_line_transfer_more_across_sockets() {
        let msgs = 1920;
        let c = crate::host::CostParams::default();
        let base = done_ms(&exchange(0, msgs, false, "[0, 1]", (0, 1)));
        let same = done_ms(&exchange(100, msgs, false, "[0, 1]", (0, 1)));
        let cross = done_ms(&exchange(100, msgs, false, "[0, 2]", (0, 1)));
        let line_ms = |cycles: u64| msgs as f64 * 6.0 * cycles as f64 / 2.5 / 1e6;
        eprintln!("no data {base:.3} ms; same socket {same:.3} ms (+{:.3}, lines {:.3}); cross {cross:.3} ms (+{:.3}, lines {:.3})",
            same - base, line_ms(c.ticket_transfer_cycles), cross - base, line_ms(c.ticket_transfer_remote_cycles));
        assert!(same - base > 0.8 * line_ms(c.ticket_transfer_cycles) && same - base < 2.2 * line_ms(c.ticket_transfer_cycles),
            "same socket: +{:.3} ms", same - base);
        assert!(cross - base > 0.8 * line_ms(c.ticket_transfer_remote_cycles), "cross socket: +{:.3} ms", cross - base);
    }

    /// DP's affinity coefficient counts memory reads and writes (seed 003 §3.2: "Times of
    /// memory read/write can make AC rise"); fetching a message's lines from another core's
    /// cache is nothing but that, whatever the memory-bound fraction of the work that pays
    /// for it. Here both threads compute with no memory work (`mem_fraction` 0), so all
    /// their AC gain is the line fetches: 4 KiB messages apart on one socket (pCPUs 0 and 1)
    /// move 3 + 1 + 64 = 68 lines to the reader and, through the slab's recycled buffers,
    /// about as many back to the writer, each 75 cycles = 30 ns at 2.5 GHz, plus the queue
    /// state's 1 ns per transfer. Gain = that time in ms x `AC_MEM_GAIN_PCT_PER_MS` (10),
    /// summed over the two threads: 1920 x 136 x 30 ns = 7.8 ms, about 78 points, so each
    /// stays under the 100 cap. The debt a thread still owes when it exits (at most one
    /// message's 68 lines, 2 us, 0.02 points) is dropped, hence the small tolerance.
    #[test]
    fn line_fetches_count_whole_as_memory_work_in_the_affinity_coefficient() {
        use crate::guest::affinity::{AC_INITIAL_PCT, AC_MEM_GAIN_PCT_PER_MS};
        let msgs = 1920;
        let (mut sim, r) = exchange_sim(4096, msgs, false, "[0, 1]", None);
        let line_ns = 75.0 / 2.5;
        let owed_ms = (r.vms[0].message_line_transfers as f64 * line_ns + r.vms[0].channel_transfers as f64) / 1e6;
        let w = sim.world();
        let gain: f64 = w.threads.iter_mut().map(|th| {
            th.ac.fold(false);
            th.ac.ac_pct - AC_INITIAL_PCT
        }).sum();
        let want = owed_ms * AC_MEM_GAIN_PCT_PER_MS;
        eprintln!("{} lines, owed {owed_ms:.3} ms; AC gain {gain:.2} points (want {want:.2})", r.vms[0].message_line_transfers);
        assert!(want > 50.0, "the set-up moves enough lines to matter: {want:.2}");
        assert!(gain <= want + 1e-6 && gain >= want - 0.1, "AC gain {gain:.2} points, lines owed {want:.2}");
    }

    #[test]
    fn the_seeds_112_kib_socket_holds_359_hackbench_messages_and_wakes_its_writers_at_89() {
        // truesize of a 100-byte message: 128 bytes of data (SKB_DATA_ALIGN) + 192 of sk_buff.
        assert_eq!(unix_stream_queue(SOCKET_SNDBUF_BYTES, 100), (359, 89));
        // 1 + 358 x 320 = 114,561 < 114,688 admits the 359th; (2 + 89 x 320) x 4 = 113,928 <= 114,688.
        // 64 bytes: truesize 256, 1 + 447 x 256 = 114,433 admits the 448th.
        assert_eq!(unix_stream_queue(SOCKET_SNDBUF_BYTES, 64), (448, 111));
        assert_eq!(unix_stream_queue(2048, 100), (7, 1));
    }

    /// Two writers (1 us a message) on vCPU 0 fill a queue of 10 that a slow reader (20 us)
    /// on vCPU 1 drains. Woken one per freed slot, a writer blocks again after every message
    /// and its vCPU halts and wakes each time; woken only at `writable_at` 2, both refill 8
    /// at once, so vCPU 0 halts about an eighth as often. The reader sets the pace.
    #[test]
    fn blocked_writers_wake_together_once_the_queue_falls_to_writable_at() {
        let run = |writable_at: &str| {
            let writers = format!(r#"{{ op = "compute", us = 1.0 }}, {{ op = "put", queue = "q", capacity = 10{writable_at} }}"#);
            let reader = r#"{ op = "get", queue = "q", capacity = 10 }, { op = "compute", us = 20.0 }"#;
            let text = format!(
                "[host]\ncores_per_socket = 2\n[hypervisor]\nscheduler = \"credit\"\n[[vms]]\nvcpus = 2\npin = [0, 1]\n\
                 [[vms.workloads]]\nkind = \"custom\"\ngroups = [\n\
                 {{ threads = 2, affinity = [0], program = [{{ op = \"loop\", count = 200, body = [{writers}] }}] }},\n\
                 {{ threads = 1, affinity = [1], program = [{{ op = \"loop\", count = 400, body = [{reader}] }}] }},\n]\n"
            );
            simulate(&text).1
        };
        let each = run("");
        let quarter = run(", writable_at = 2");
        let halts = |r: &Results| r.vms[0].exits["hlt"];
        eprintln!("halts: one per slot {}, at writable_at {}; {:.2} and {:.2} ms", halts(&each), halts(&quarter), done_ms(&each), done_ms(&quarter));
        assert!(halts(&each) > 300, "a writer's vCPU halts after nearly every message: {}", halts(&each));
        assert!(halts(&quarter) * 5 < halts(&each), "{} halts at writable_at against {}", halts(&quarter), halts(&each));
        // The reader's 400 x 20 us set the pace; the halts cost the one-per-slot run a little.
        assert!(done_ms(&quarter) <= done_ms(&each) && done_ms(&quarter) < 8.0 * 1.05, "{:.2} ms", done_ms(&quarter));
    }
}
