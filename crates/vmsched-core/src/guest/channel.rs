//! Cache-line transfer of a pipe or socket's shared state between pCPUs.
//!
//! Models: a bounded queue (`put`/`get` ops: hackbench's sockets, IMB's channels) has state
//! that both ends write on every operation. In Linux 2.6.32 a write to a Unix stream socket
//! (net/unix/af_unix.c `unix_stream_sendmsg`) takes the reader's `unix_state_lock`, appends
//! to its `sk_receive_queue` and calls `sk_data_ready` (net/core/sock.c `sock_def_readable`),
//! whose wake-up (kernel/sched.c `try_to_wake_up`) locks and updates the reader's runqueue; a
//! read (`unix_stream_recvmsg`) dequeues from the same list and frees the buffer, whose
//! destructor (`sock_wfree`) updates the writer's `sk_wmem_alloc` and may wake writers
//! (`unix_write_space`). Those lines are in the cache of the pCPU that last operated on the
//! queue. An operation from another pCPU misses on them and fetches them from there: it costs
//! `host.costs.channel_transfer_ns`, times `cross_socket_refill_factor` when the two pCPUs sit
//! on different sockets (the transfer crosses the socket interconnect). An operation from the
//! pCPU that last touched the queue costs nothing extra.
//!
//! So the cost depends on how the two ends interleave, not only on where they run: when a
//! writer and a reader on different pCPUs run at the same time and alternate message by
//! message, every operation pays (the lines ping-pong); when one end runs alone (the other's
//! vCPU descheduled, or the queue full or empty) consecutive operations hit. This is the
//! "information that a communication socket is readable must be transferred cross core" and
//! the remote run-queue insertion that seed 004 names for hackbench with affinity (§7.3.3,
//! §7.4.2).
//!
//! A thread pays for its own operation and, when an operation completes a blocked peer's
//! (a put handed to a waiting getter, a get that admits a waiting putter), the peer pays for
//! its access from the pCPU of its vCPU. The cost is owed by the thread and added to its next
//! compute (the first work after the operation, which is where the misses stall it); a thread
//! that exits with no work left drops what it owes.
//!
//! Leaves out: the message data itself (about two lines per 100-byte message, written once and
//! read once, which a reader draining a full queue fetches with memory-level parallelism),
//! separate costs per line and per structure (one cost per operation; the seed's host gives
//! only the total through native hackbench, Table 3), and contention between more than two
//! pCPUs (the lines have one owner at a time).
//!
//! Sources: seed 004 §7.3.3, §7.4.2 and Table 3 (native rows: the fit); Linux 2.6.32
//! net/unix/af_unix.c, net/core/sock.c, kernel/sched.c as named above.

use crate::engine::Ns;
use crate::sim::state::*;
use crate::sim::World;

impl World {
    /// Thread `t` operates on queue `q` from the pCPU its vCPU runs on (or, not running, the
    /// one it last ran on: the vCPU's threads run there next). Owes the transfer if the
    /// queue's state was last written on another pCPU.
    pub(crate) fn channel_touch(&mut self, t: ThreadId, q: usize) {
        let cost = self.costs.channel_transfer_ns;
        if cost == 0 {
            return;
        }
        let v = self.threads[t].vcpu;
        let p = self.vcpus[v].running_on().unwrap_or(self.vcpus[v].last_pcpu);
        let vm = self.threads[t].vm;
        let Some(from) = self.vms[vm].queues[q].last_pcpu.replace(p) else { return };
        if from == p {
            return;
        }
        let ns: Ns = if self.topo.socket_of(from) != self.topo.socket_of(p) {
            (cost as f64 * self.costs.cross_socket_refill_factor).round() as Ns
        } else {
            cost
        };
        self.threads[t].comm_debt_ns += ns;
        self.vms[vm].channel_transfers += 1;
    }
}
