//! Built-in workloads. Each expands into thread groups written in the program language of
//! `guest::program`, so a built-in is exactly what a user could have written by hand.
//!
//! | kind | approximates | source |
//! |---|---|---|
//! | `hog` | `while(1);` one thread per vCPU | seed 002 (Flex fairness experiment) |
//! | `parallel` | a PARSEC/OpenMP-like worker pool: compute, spinlock sections, TLB shootdowns, barriers | seed 000 §2.1 (dedup, vips, ...); Linux `kernel/smp.c`, `arch/x86/mm/tlb.c` |
//! | `forkbench` | fork a child that exits at once, wait, repeat | seed 004 §7.2 |
//! | `hackbench` | groups of senders and receivers over pipes | seed 004 §7.2; Linux `hackbench` |
//! | `rambench` | traverse a shuffled linked list / sequential array, memory-bound | seed 004 §7.2 |
//! | `kbuild` | `make -jN`: each compile run through Kbuild's recipe (sh, gcc, cc1, as, fixdep, rm, mv); optionally Kbuild's serial stages before and after the compiles | seed 004 §7.2; Linux scripts/Makefile.build `rule_cc_o_c`, top-level Makefile `prepare`, scripts/link-vmlinux.sh |
//! | `stream` | STREAM-like array kernels, optionally with a barrier per iteration; bandwidth per thread, and stream.c's best rate (bytes / the team's fastest pass) | seed 003 §2.3, §5; McCalpin STREAM |
//! | `epcc` | EPCC OpenMP syncbench: barrier, reduction or critical loops against a serial reference; overhead per construct | seed 003 §5; EPCC syncbench.c; libgomp team.c, bar.c |
//! | `imb` | Intel MPI Benchmarks Sendrecv / Exchange between single-threaded ranks over sockets; MB/s | seed 003 §5; IMB user guide; MPICH2 ch3:sock |
//! | `server` | a SPECvirt_sc2010 tile member (web, mail, app, db, infra, idle) serving open-loop requests | seed 001 §2.3, §3 |
//!
//! The benchmark workloads (`stream`, `epcc`, `imb`) time themselves with `mark` ops and
//! `metrics` turns the marks into the benchmark's own figure (results `vms[].bench`).
//!
//! Default amounts of work are illustrative until calibrated (see `docs/calibration.md` once
//! the reproductions exist); the shape of each program follows its source.

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::metrics::MarkStat;
use crate::scenario::{DurationUs, OpSpec, ThreadGroupSpec};

/// What the host's memory system means for a workload's compute time.
#[derive(Debug, Clone, Copy)]
pub struct MemoryModel {
    /// A core's share of the socket's LLC (`u32::MAX` without `host.costs.llc_kib`).
    pub llc_share_kib: u32,
    /// Streaming from memory: `host.costs.cache_refill_ns_per_mib / 1024`.
    pub mem_ns_per_kib: f64,
}

impl MemoryModel {
    pub fn new(topo: &crate::host::Topology, costs: &crate::host::CostParams) -> Self {
        MemoryModel {
            llc_share_kib: crate::host::cached_kib(topo, costs, u32::MAX),
            mem_ns_per_kib: costs.cache_refill_ns_per_mib as f64 / 1024.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParallelParams {
    /// Worker threads (default: one per vCPU).
    #[serde(default)]
    pub threads: Option<u32>,
    /// Iterations per thread; absent = run forever.
    #[serde(default)]
    pub iterations: Option<u64>,
    #[serde(default = "d_compute")]
    pub compute_us: DurationUs,
    /// Spinlock sections per iteration.
    #[serde(default = "d_one")]
    pub locks_per_iteration: u32,
    /// Distinct locks: section k of an iteration takes lock `k % locks`.
    #[serde(default = "d_one")]
    pub locks: u32,
    #[serde(default = "d_cs")]
    pub cs_us: DurationUs,
    /// A TLB shootdown every this many iterations (0 = none).
    #[serde(default)]
    pub shootdown_every: u32,
    /// A barrier every this many iterations (0 = none).
    #[serde(default)]
    pub barrier_every: u32,
    /// Spin before blocking at a barrier (0 = pure blocking, as pthreads).
    #[serde(default)]
    pub barrier_spin_us: f64,
    #[serde(default)]
    pub mem_fraction: f64,
    #[serde(default = "d_ws")]
    pub working_set_kib: u32,
}

fn d_compute() -> DurationUs {
    DurationUs::Exp { mean_us: 50.0 }
}
fn d_cs() -> DurationUs {
    DurationUs::Fixed { us: 2.0 }
}
fn d_one() -> u32 {
    1
}
fn d_ws() -> u32 {
    512
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForkbenchParams {
    #[serde(default = "d_forks")]
    pub forks: u64,
    /// Parent's work per fork (copying page tables, COW setup).
    #[serde(default = "d_fork_us")]
    pub fork_us: f64,
    /// Child's work from start to exit.
    #[serde(default = "d_child_us")]
    pub child_us: f64,
}
fn d_forks() -> u64 {
    1000
}
fn d_fork_us() -> f64 {
    40.0
}
fn d_child_us() -> f64 {
    10.0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HackbenchParams {
    #[serde(default = "d_groups")]
    pub groups: u32,
    /// Senders and receivers per group (hackbench: 20 each).
    #[serde(default = "d_fds")]
    pub fds: u32,
    #[serde(default = "d_loops")]
    pub loops: u64,
    /// Work per message send (and per receive unless `recv_us` is given).
    #[serde(default = "d_msg_us")]
    pub msg_us: f64,
    /// Work per message receive, if it differs from the send's (`msg_us`). Linux's
    /// `unix_stream_sendmsg` allocates the buffer, copies and wakes the reader; the reader's
    /// `unix_stream_recvmsg` dequeues, copies and frees it (net/unix/af_unix.c).
    #[serde(default)]
    pub recv_us: Option<f64>,
    /// Bytes per message, copied into a socket buffer by the sender and out by the receiver
    /// (`guest::channel`; 0 = the data is not modelled). Hackbench's `DATASIZE`, 100 (Linux
    /// tools/perf/bench/sched-messaging.c, from rt-tests hackbench; seed 004 §7.2: "The
    /// message size is 100 bytes").
    #[serde(default = "d_hackbench_msg_bytes")]
    pub msg_bytes: u32,
    /// Each receiver's socket send buffer, which its group's senders share (`sk_sndbuf`,
    /// `guest::channel::unix_stream_queue`): by default the seed's 112 KiB `wmem_default`
    /// (seed 004 §7.2). Until session 46 a queue held a fixed 64 messages.
    #[serde(default = "d_hackbench_sndbuf_bytes")]
    pub sndbuf_bytes: u32,
    /// Each send and receive takes the receiving socket's `unix_state_lock`, a guest spinlock,
    /// and fetches the socket's state while holding it (Linux 2.6.32 net/unix/af_unix.c
    /// `unix_stream_sendmsg` around `skb_queue_tail`, `unix_stream_recvmsg` around
    /// `skb_dequeue`; `guest::channel`). Off: the fetch is paid after the operation, with no
    /// lock (until session 47).
    #[serde(default = "d_true")]
    pub state_lock: bool,
    /// Guest CPU affinity for all threads (e.g. [0] to keep everything on vCPU0).
    #[serde(default)]
    pub affinity: Option<Vec<u32>>,
    /// Guest CPU affinity of the senders, in place of `affinity` (seed 004 §7.2: "we set the
    /// CPU affinity of all sender processes to CPU zero and all receiver to CPU one").
    #[serde(default)]
    pub sender_affinity: Option<Vec<u32>>,
    /// Guest CPU affinity of the receivers, in place of `affinity`.
    #[serde(default)]
    pub receiver_affinity: Option<Vec<u32>>,
}

impl HackbenchParams {
    fn senders_on(&self) -> Option<Vec<u32>> {
        self.sender_affinity.clone().or_else(|| self.affinity.clone())
    }
    fn receivers_on(&self) -> Option<Vec<u32>> {
        self.receiver_affinity.clone().or_else(|| self.affinity.clone())
    }
}
fn d_groups() -> u32 {
    1
}
fn d_fds() -> u32 {
    20
}
fn d_loops() -> u64 {
    100
}
fn d_msg_us() -> f64 {
    2.0
}
fn d_hackbench_msg_bytes() -> u32 {
    100
}
fn d_hackbench_sndbuf_bytes() -> u32 {
    crate::guest::channel::SOCKET_SNDBUF_BYTES
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessPattern {
    Sequential,
    Random,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RambenchParams {
    #[serde(default = "d_ram_mib")]
    pub mib: u32,
    #[serde(default = "d_pattern")]
    pub pattern: AccessPattern,
    #[serde(default = "d_passes")]
    pub passes: u64,
    /// Local-memory time of one pass.
    #[serde(default = "d_pass_us")]
    pub pass_us: f64,
}
fn d_ram_mib() -> u32 {
    512
}
fn d_pattern() -> AccessPattern {
    AccessPattern::Random
}
fn d_passes() -> u64 {
    10
}
fn d_pass_us() -> f64 {
    100_000.0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KbuildParams {
    /// `make -j`.
    #[serde(default)]
    pub jobs: Option<u32>,
    /// Compiler invocations in all.
    #[serde(default = "d_units")]
    pub units: u64,
    #[serde(default = "d_compile")]
    pub compile_us: DurationUs,
    /// Short serial steps between compiles (make's own work).
    #[serde(default = "d_make_us")]
    pub make_us: f64,
    /// Run each compile through Kbuild's recipe (scripts/Makefile.build `rule_cc_o_c`, Linux
    /// 2.6.16-4.x): make hands it to `/bin/sh -c`, which runs the gcc driver (itself forking
    /// `cc1` and `as`), then `scripts/basic/fixdep`, `rm -f` and `mv -f`, each a process that
    /// its parent forks and waits for. false: make forks the compiler alone.
    #[serde(default = "d_true")]
    pub recipe: bool,
    /// Run time of each short recipe process (sh, the gcc driver, fixdep, rm, mv): fork, exec,
    /// its work, exit. Estimate (no seed gives it): about a millisecond.
    #[serde(default = "d_helper_us")]
    pub helper_us: f64,
    /// Run time of the assembler per compile. Estimate: a tenth of the mean compile.
    #[serde(default = "d_as_us")]
    pub as_us: f64,
    /// Kbuild's serial stages (seed 004 §7.2: "Some parts of the compilation consist of Bash
    /// scripts ... many short running processes are created during these stage"): before the
    /// first object directory (the top Makefile's `$(shell)` and `try-run` probes, `prepare`)
    /// and after the last (`scripts/link-vmlinux.sh`, the bzImage), make or a shell it started
    /// runs programs one after another with nothing beside them. `prepare_programs` and
    /// `link_programs` are the short ones (`helper_us` each); `prepare_compiles` and
    /// `link_compiles` the long ones (a compile's `compile_us` each: cc1 of a whole file, the
    /// `ld` of vmlinux, `conf`, `modpost`, `gzip`). Default 0: no serial stage. When any is
    /// set, one more process (the top-level make) runs them, and the job slots start after
    /// the first stage and the second starts after every job slot is done.
    #[serde(default)]
    pub prepare_programs: u64,
    #[serde(default)]
    pub prepare_compiles: u64,
    #[serde(default)]
    pub link_programs: u64,
    #[serde(default)]
    pub link_compiles: u64,
}
fn d_helper_us() -> f64 {
    1000.0
}
fn d_as_us() -> f64 {
    2000.0
}
fn d_units() -> u64 {
    400
}
fn d_compile() -> DurationUs {
    DurationUs::Lognormal { mean_us: 20_000.0, cv: 0.8 }
}
fn d_make_us() -> f64 {
    200.0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamParams {
    #[serde(default)]
    pub threads: Option<u32>,
    /// Size of each of the three arrays.
    #[serde(default = "d_array_kib")]
    pub array_kib: u32,
    #[serde(default = "d_iters")]
    pub iterations: u64,
    /// Time per KiB of array per iteration when the data is in cache.
    #[serde(default = "d_ns_per_kib")]
    pub ns_per_kib: f64,
    /// Spin before blocking at the barrier. The default (200 µs) is unsourced; libgomp's spin
    /// count (libgomp/env.c, `OMP_WAIT_POLICY` and `GOMP_SPINCOUNT` unset, "a rough estimation
    /// of 100000 spins per msec") is 20 000 000 in gcc 4.4 and 300 000 from gcc r167371 (Dec
    /// 2010); `scenarios/dp-stream.toml` sets gcc 4.4's (docs/policies.md ## dp).
    #[serde(default = "d_stream_spin")]
    pub barrier_spin_us: f64,
    /// A barrier over all threads after each iteration, as the implicit one that ends each
    /// kernel's `omp parallel for` in stream.c (false: threads run unsynchronised).
    #[serde(default = "d_true")]
    pub barrier: bool,
    /// Passes per STREAM execution (stream.c's `NTIMES`, whose default is 10; at least 2, as
    /// the first is not counted): the run is taken as back-to-back executions of `ntimes`
    /// passes, each reporting its best rate (`metrics`). Absent: the run is one execution.
    #[serde(default)]
    pub ntimes: Option<u64>,
}
fn d_true() -> bool {
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EpccConstruct {
    Barrier,
    Reduction,
    Critical,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpccParams {
    /// OpenMP threads (default: one per vCPU).
    #[serde(default)]
    pub threads: Option<u32>,
    pub construct: EpccConstruct,
    /// Constructs timed (EPCC `innerreps`); `critical` splits them over the threads.
    #[serde(default = "d_innerreps")]
    pub innerreps: u64,
    /// Work inside each construct (EPCC `delaytime`, default 0.1 µs in syncbench).
    #[serde(default = "d_delay_us")]
    pub delay_us: f64,
    /// Spin before sleeping in a barrier or lock. The default (300 µs: libgomp's later
    /// 300 000 spins taken as about 1 ns each) is an estimate; gcc 4.4's libgomp spins
    /// 20 000 000 times, which `scenarios/dp-epcc.toml` sets (docs/policies.md ## dp).
    #[serde(default = "d_gomp_spin")]
    pub spin_us: f64,
    /// The reduction's combine step (one atomic update under the team lock). Estimate.
    #[serde(default = "d_combine_us")]
    pub combine_us: f64,
}
fn d_innerreps() -> u64 {
    1000
}
fn d_delay_us() -> f64 {
    0.1
}
fn d_gomp_spin() -> f64 {
    300.0
}
fn d_combine_us() -> f64 {
    0.05
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImbPattern {
    Sendrecv,
    Exchange,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImbParams {
    /// MPI ranks, one single-threaded process each (default: one per vCPU).
    #[serde(default)]
    pub ranks: Option<u32>,
    pub pattern: ImbPattern,
    #[serde(default = "d_msg_bytes")]
    pub msg_bytes: u64,
    /// Timed repetitions.
    #[serde(default = "d_imb_reps")]
    pub reps: u64,
    /// Fixed cost of one message through the socket channel (MPICH2 ch3:sock over loopback TCP:
    /// the sender's `writev` and the TCP/IP path, the receiver's `poll` and `readv`), split evenly
    /// between sender and receiver and charged once per message. Estimate: no published
    /// ch3:sock or loopback-TCP latency for seed 003's platform was found (session 12). Left
    /// out (Linux 2.6.18 `drivers/net/loopback.c`): the receive-side protocol work runs in the
    /// sender's NET_RX softirq (`netif_rx` on the sending CPU), and loopback's 16 KiB MTU cuts
    /// larger messages into segments that each pass the stack. docs/policies.md ## dp.
    #[serde(default = "d_per_msg_us")]
    pub per_msg_us: f64,
    /// Copy cost per KiB on each side (about 4 GB/s memcpy). Estimate.
    #[serde(default = "d_copy_ns_per_kib")]
    pub copy_ns_per_kib: f64,
}
fn d_msg_bytes() -> u64 {
    1024
}
fn d_imb_reps() -> u64 {
    1000
}
fn d_per_msg_us() -> f64 {
    10.0
}
fn d_copy_ns_per_kib() -> f64 {
    250.0
}
/// Messages one sender→receiver channel buffers before the sender blocks (eager sends). Estimate.
const IMB_INBOX_MSGS: u32 = 4;
fn d_array_kib() -> u32 {
    4096
}
fn d_iters() -> u64 {
    100
}
fn d_ns_per_kib() -> f64 {
    50.0
}
fn d_stream_spin() -> f64 {
    200.0
}

/// Role of a server VM in a SPECvirt_sc2010 tile (seed 001 §2.3, Figure 2, §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerRole {
    /// SPECweb2005 (support) web server; 2 vCPUs in the seed.
    Web,
    /// SPECmail2008 IMAP server; 1 vCPU.
    Mail,
    /// SPECjAppServer2004 Java application server; 2 vCPUs.
    App,
    /// The application server's database; 1 vCPU.
    Db,
    /// Infrastructure server (web back end and file service); 1 vCPU.
    Infra,
    /// Idle server, polled now and then; 1 vCPU.
    Idle,
}

/// A server answering client requests that arrive open loop (Poisson) on the port
/// `w<j>.requests`: per request, a receive interrupt, then a worker thread computes, does
/// `disk_ios` I/Os (iSCSI over the VF in the seed's setup, so each completion is a network
/// interrupt), computes again and responds. Fields left out take the role's preset.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerParams {
    pub role: ServerRole,
    /// Request arrival rate (the load level).
    #[serde(default)]
    pub rate_per_s: Option<f64>,
    /// Worker threads (default 4 per vCPU).
    #[serde(default)]
    pub threads: Option<u32>,
    /// Guest CPU work per request, split evenly before and after the I/Os.
    #[serde(default)]
    pub cpu_us: Option<DurationUs>,
    #[serde(default)]
    pub disk_ios: Option<u32>,
    /// Latency of one I/O (iSCSI round trip to the SSD target).
    #[serde(default)]
    pub disk_us: Option<DurationUs>,
    #[serde(default)]
    pub working_set_kib: Option<u32>,
    /// Port I/O instructions per request that the hypervisor emulates itself (`port_io` op:
    /// an I/O-instruction exit each, no block), executed when the worker takes the request.
    /// Default 0: no source names such a port for a generic server.
    #[serde(default)]
    pub port_io_exits: Option<u32>,
}

/// Role presets: (rate_per_s, cpu mean us, disk I/Os, working set KiB). All estimates, scaled
/// so that one tile at these rates asks for about 1.75 CPUs of guest work and about 26 000
/// device interrupts per second. The aggregate is fitted to the seed's baseline at peak (9
/// tiles at 92 % of 24 hardware threads, 26 % of it hypervisor: about 1.8 CPUs of guest work
/// per tile, seed 001 §4.1, §6, Table 1); the split among roles follows only the seed's
/// remark that web and application servers use most CPU (two vCPUs) and database and
/// infrastructure servers less (§4.1, Figure 5).
fn role_preset(r: ServerRole) -> (f64, f64, u32, u32) {
    match r {
        ServerRole::Web => (5000.0, 120.0, 1, 1024),
        ServerRole::Mail => (1000.0, 200.0, 2, 1024),
        ServerRole::App => (2000.0, 300.0, 1, 2048),
        ServerRole::Db => (2000.0, 100.0, 1, 2048),
        ServerRole::Infra => (2500.0, 60.0, 1, 512),
        ServerRole::Idle => (10.0, 50.0, 0, 64),
    }
}

/// Estimate: iSCSI read from an SSD target over 10 GbE, about 100 us (seed 001 §3 setup; no
/// latency is given; the SSD alone, Intel's X25-E, takes 75 us per access by Intel's figure).
/// Seed 001's reproduction sets its servers' `disk_us` to a wait fitted to the seed's 1-tile
/// response instead (calibration.toml `csrc.specvirt.disk_us`).
const DISK_US: f64 = 100.0;

impl ServerParams {
    pub fn rate(&self) -> f64 {
        self.rate_per_s.unwrap_or(role_preset(self.role).0)
    }
}

fn halve(d: &DurationUs) -> DurationUs {
    match *d {
        DurationUs::Fixed { us } => DurationUs::Fixed { us: us / 2.0 },
        DurationUs::Exp { mean_us } => DurationUs::Exp { mean_us: mean_us / 2.0 },
        DurationUs::Uniform { min_us, max_us } => DurationUs::Uniform { min_us: min_us / 2.0, max_us: max_us / 2.0 },
        DurationUs::Lognormal { mean_us, cv } => DurationUs::Lognormal { mean_us: mean_us / 2.0, cv },
    }
}

pub fn server(vcpus: u32, p: &ServerParams, tag: &str) -> Vec<ThreadGroupSpec> {
    let (_, cpu, ios, ws) = role_preset(p.role);
    let cpu = p.cpu_us.clone().unwrap_or(DurationUs::Exp { mean_us: cpu });
    let ios = p.disk_ios.unwrap_or(ios);
    let mut body = vec![OpSpec::Accept { port: format!("{tag}.requests") }];
    body.extend((0..p.port_io_exits.unwrap_or(0)).map(|_| OpSpec::PortIo));
    body.push(compute(halve(&cpu), 0.0));
    if ios > 0 {
        let disk = p.disk_us.clone().unwrap_or(DurationUs::Exp { mean_us: DISK_US });
        body.push(OpSpec::Loop { count: ios as u64, body: vec![OpSpec::Io { us: disk }] });
    }
    body.push(compute(halve(&cpu), 0.0));
    body.push(OpSpec::Respond);
    vec![ThreadGroupSpec {
        threads: p.threads.unwrap_or(4 * vcpus),
        program: vec![OpSpec::Forever { body }],
        affinity: None,
        bind: false,
        working_set_kib: Some(p.working_set_kib.unwrap_or(ws)),
    }]
}

/// The arrival stream a workload feeds: (port name, rate per second).
pub fn arrivals(w: &crate::scenario::WorkloadSpec, tag: &str) -> Option<(String, f64)> {
    match w {
        crate::scenario::WorkloadSpec::Server(p) => Some((format!("{tag}.requests"), p.rate())),
        _ => None,
    }
}

fn compute(us: DurationUs, mem_fraction: f64) -> OpSpec {
    OpSpec::Compute { us, mem_fraction }
}

fn repeat(iterations: Option<u64>, body: Vec<OpSpec>) -> Vec<OpSpec> {
    match iterations {
        Some(n) => vec![OpSpec::Loop { count: n, body }],
        None => vec![OpSpec::Forever { body }],
    }
}

/// Thread groups of the hog workload (one `while(1)` thread per vCPU by default).
pub fn hog(vcpus: u32, threads: Option<u32>) -> Vec<ThreadGroupSpec> {
    vec![ThreadGroupSpec {
        threads: threads.unwrap_or(vcpus),
        program: vec![OpSpec::Forever { body: vec![compute(DurationUs::fixed(10_000.0), 0.0)] }],
        affinity: None,
        bind: false,
        working_set_kib: Some(256),
    }]
}

pub fn parallel(vcpus: u32, p: &ParallelParams, tag: &str) -> Vec<ThreadGroupSpec> {
    let mut body = vec![compute(p.compute_us.clone(), p.mem_fraction)];
    for k in 0..p.locks_per_iteration {
        body.push(OpSpec::Lock { lock: format!("{tag}.lock{}", k % p.locks.max(1)), cs_us: p.cs_us.clone(), irqs_off: false, spread: 1 });
    }
    let threads = p.threads.unwrap_or(vcpus);
    if p.shootdown_every > 0 {
        body.push(OpSpec::Every { n: p.shootdown_every as u64, body: vec![OpSpec::Shootdown { local_us: 1.0 }] });
    }
    if p.barrier_every > 0 {
        body.push(OpSpec::Every {
            n: p.barrier_every as u64,
            body: vec![OpSpec::Barrier { barrier: format!("{tag}.barrier"), parties: threads, spin_us: p.barrier_spin_us }],
        });
    }
    vec![ThreadGroupSpec {
        threads,
        program: repeat(p.iterations, body),
        affinity: None,
        bind: false,
        working_set_kib: Some(p.working_set_kib),
    }]
}

pub fn forkbench(p: &ForkbenchParams) -> Vec<ThreadGroupSpec> {
    vec![ThreadGroupSpec {
        threads: 1,
        program: vec![OpSpec::Loop {
            count: p.forks,
            body: vec![
                // The fork flushes the parent's address space on every vCPU in its mm_cpumask
                // (copy-on-write protection, `guest::mm`); the child's exit unmaps its own.
                compute(DurationUs::fixed(p.fork_us), 0.0),
                OpSpec::Fork {
                    body: vec![compute(DurationUs::fixed(p.child_us), 0.0)],
                    share_mm: false,
                    wait: true,
                    exec: false,
                },
            ],
        }],
        affinity: None,
        bind: false,
        working_set_kib: Some(64),
    }]
}

pub fn hackbench(p: &HackbenchParams, tag: &str) -> Vec<ThreadGroupSpec> {
    let (capacity, writable_at) = crate::guest::channel::unix_stream_queue(p.sndbuf_bytes, p.msg_bytes);
    let mut groups = Vec::new();
    for g in 0..p.groups {
        for r in 0..p.fds {
            // Receiver r of group g reads loops*fds messages from its pipe.
            groups.push(ThreadGroupSpec {
                threads: 1,
                program: vec![OpSpec::Loop {
                    count: p.loops * p.fds as u64,
                    body: vec![
                        OpSpec::Get { queue: format!("{tag}.g{g}.r{r}"), capacity, state_lock: p.state_lock },
                        compute(DurationUs::fixed(p.recv_us.unwrap_or(p.msg_us)), 0.0),
                    ],
                }],
                affinity: p.receivers_on(),
                bind: false,
                working_set_kib: Some(32),
            });
        }
        // Each sender writes `loops` messages to every receiver of its group.
        let mut send = Vec::new();
        for r in 0..p.fds {
            send.push(compute(DurationUs::fixed(p.msg_us), 0.0));
            send.push(OpSpec::Put {
                queue: format!("{tag}.g{g}.r{r}"),
                capacity,
                msg_bytes: p.msg_bytes,
                writable_at: Some(writable_at),
                state_lock: p.state_lock,
            });
        }
        // Every sender is a process of its own, as every receiver (seed 004 §7.2: "all of
        // them being processes"; hackbench forks each unless run with threads).
        for _ in 0..p.fds {
            groups.push(ThreadGroupSpec {
                threads: 1,
                program: vec![OpSpec::Loop { count: p.loops, body: send.clone() }],
                affinity: p.senders_on(),
                bind: false,
                working_set_kib: Some(32),
            });
        }
    }
    groups
}

pub fn rambench(p: &RambenchParams) -> Vec<ThreadGroupSpec> {
    let mem = match p.pattern {
        AccessPattern::Random => 1.0,
        AccessPattern::Sequential => 0.5,
    };
    vec![ThreadGroupSpec {
        threads: 1,
        program: vec![OpSpec::Loop { count: p.passes, body: vec![compute(DurationUs::fixed(p.pass_us), mem)] }],
        affinity: None,
        bind: false,
        working_set_kib: Some(p.mib.saturating_mul(1024).min(64 * 1024)),
    }]
}

/// One job slot per (sub-)make process: Kbuild recurses with a make per directory
/// (`$(MAKE) -f scripts/Makefile.build obj=...`) sharing the jobserver, so the job slots are
/// separate single-threaded processes, each forking compilers and waiting for them (wait4).
/// Fork and exit flush address spaces (`guest::mm`); a make woken on a busy vCPU preempts
/// it with a reschedule IPI (`guest::resched`). With serial stages (`prepare_*`, `link_*`) a
/// top-level make runs the first, releases the job slots (a barrier: make starts the
/// directory builds only when `prepare` is done, top Makefile `$(vmlinux-dirs): prepare
/// scripts`), waits for all of them (`vmlinux: ... $(vmlinux-deps)`) and runs the second.
pub fn kbuild(vcpus: u32, p: &KbuildParams, tag: &str) -> Vec<ThreadGroupSpec> {
    let jobs = p.jobs.unwrap_or(vcpus).max(1);
    let per_job = (p.units + jobs as u64 - 1) / jobs as u64;
    let mut slot = vec![OpSpec::Loop { count: per_job, body: vec![compute(DurationUs::fixed(p.make_us), 0.0), p.compile_op()] }];
    let make = |program: Vec<OpSpec>| ThreadGroupSpec {
        threads: 1,
        program,
        affinity: None,
        bind: false,
        working_set_kib: Some(2048),
    };
    let mut groups = Vec::new();
    if p.has_serial_stages() {
        let bar = |name: &str| OpSpec::Barrier { barrier: format!("{tag}.{name}"), parties: jobs + 1, spin_us: 0.0 };
        slot.insert(0, bar("prepared"));
        slot.push(bar("linked"));
        let mut top = p.serial_stage(p.prepare_programs, p.prepare_compiles);
        top.extend([bar("prepared"), bar("linked")]);
        top.extend(p.serial_stage(p.link_programs, p.link_compiles));
        groups.push(make(top));
    }
    groups.extend((0..jobs).map(|_| make(slot.clone())));
    groups
}

impl KbuildParams {
    pub fn has_serial_stages(&self) -> bool {
        self.prepare_programs + self.prepare_compiles + self.link_programs + self.link_compiles > 0
    }

    /// A serial stage: `programs` short processes, then `compiles` long ones, each forked,
    /// exec'd and waited for by the lone parent (flat: a nested `sh -c` → `gcc` → `cc1` chain
    /// has as many forks, execs and exits, each waking its parent).
    fn serial_stage(&self, programs: u64, compiles: u64) -> Vec<OpSpec> {
        let run = |us: DurationUs, mem: f64| OpSpec::Fork { body: vec![compute(us, mem)], share_mm: false, wait: true, exec: true };
        let mut ops = Vec::new();
        if programs > 0 {
            ops.push(OpSpec::Loop { count: programs, body: vec![run(DurationUs::fixed(self.helper_us), 0.0)] });
        }
        if compiles > 0 {
            ops.push(OpSpec::Loop { count: compiles, body: vec![run(self.compile_us.clone(), 0.2)] });
        }
        ops
    }

    /// What make forks for one object file: the compiler, or Kbuild's recipe around it.
    fn compile_op(&self) -> OpSpec {
        // Every process of the recipe is a fork and an exec (sh, gcc, cc1, as, fixdep, rm, mv).
        let fork = |body: Vec<OpSpec>| OpSpec::Fork { body, share_mm: false, wait: true, exec: true };
        let cc1 = fork(vec![compute(self.compile_us.clone(), 0.2)]);
        if !self.recipe {
            return cc1;
        }
        let helper = || compute(DurationUs::fixed(self.helper_us), 0.0);
        let gcc = fork(vec![helper(), cc1, fork(vec![compute(DurationUs::fixed(self.as_us), 0.0)])]);
        // sh -c 'gcc ...; scripts/basic/fixdep ... > .x.o.tmp; rm -f .x.o.d; mv -f .x.o.tmp .x.o.cmd'
        fork(vec![helper(), gcc, fork(vec![helper()]), fork(vec![helper()]), fork(vec![helper()])])
    }
}

fn mark(tag: &str, name: &str) -> OpSpec {
    OpSpec::Mark { mark: format!("{tag}.{name}") }
}

fn stream_threads(vcpus: u32, p: &StreamParams) -> u32 {
    p.threads.unwrap_or(vcpus).max(1)
}

/// Each thread's slice of the three arrays, KiB.
fn stream_per_thread_kib(vcpus: u32, p: &StreamParams) -> u32 {
    (3 * p.array_kib as u64 / stream_threads(vcpus, p) as u64).max(1).min(u32::MAX as u64) as u32
}

/// One pass over a thread's slice: the part its core's LLC share holds at `ns_per_kib`, the
/// rest at memory speed. Each thread marks the end of every pass (`pass`, before the
/// barrier), so the team's pass k ends at round k of that mark (its slowest thread): STREAM's
/// per-kernel timing (below, `metrics`).
pub fn stream(vcpus: u32, p: &StreamParams, tag: &str, mem: &MemoryModel) -> Vec<ThreadGroupSpec> {
    let threads = stream_threads(vcpus, p);
    let per_thread_kib = stream_per_thread_kib(vcpus, p);
    let cached = per_thread_kib.min(mem.llc_share_kib);
    let us = (cached as f64 * p.ns_per_kib + (per_thread_kib - cached) as f64 * mem.mem_ns_per_kib) / 1000.0;
    let mut body = vec![compute(DurationUs::fixed(us), 1.0), mark(tag, "pass")];
    if p.barrier {
        body.push(OpSpec::Barrier { barrier: format!("{tag}.barrier"), parties: threads, spin_us: p.barrier_spin_us });
    }
    vec![ThreadGroupSpec {
        threads,
        program: vec![mark(tag, "start"), OpSpec::Loop { count: p.iterations, body }, mark(tag, "end")],
        affinity: None,
        bind: false,
        working_set_kib: Some(per_thread_kib),
    }]
}

fn epcc_threads(vcpus: u32, p: &EpccParams) -> u32 {
    p.threads.unwrap_or(vcpus).max(1)
}

/// Constructs each thread executes, and in all.
fn epcc_constructs(vcpus: u32, p: &EpccParams) -> (u64, u64) {
    let threads = epcc_threads(vcpus, p) as u64;
    match p.construct {
        EpccConstruct::Critical => {
            let per = (p.innerreps / threads).max(1);
            (per, per * threads)
        }
        _ => (p.innerreps, p.innerreps),
    }
}

/// Thread 0 (the master) first times the serial reference (`refer`: innerreps × delay) while
/// the team waits; then all threads time the construct loop (syncbench `testbar`, `testred`,
/// `testcrit`). A parallel region (reduction) costs two team barriers in libgomp: the dock the
/// team waits in for the next region (`gomp_team_start`/`gomp_thread_start`, threads_dock) and
/// the join (`gomp_team_end`).
pub fn epcc(vcpus: u32, p: &EpccParams, tag: &str) -> Vec<ThreadGroupSpec> {
    let threads = epcc_threads(vcpus, p);
    let (per_thread, _) = epcc_constructs(vcpus, p);
    let delay = || compute(DurationUs::fixed(p.delay_us), 0.0);
    let bar = |name: &str| OpSpec::Barrier { barrier: format!("{tag}.{name}"), parties: threads, spin_us: p.spin_us };
    let body = match p.construct {
        EpccConstruct::Barrier => vec![delay(), bar("bar")],
        EpccConstruct::Reduction => vec![
            bar("dock"),
            delay(),
            OpSpec::Mutex { mutex: format!("{tag}.reduction"), cs_us: DurationUs::fixed(p.combine_us), spin_us: p.spin_us },
            bar("join"),
        ],
        EpccConstruct::Critical => {
            vec![OpSpec::Mutex { mutex: format!("{tag}.critical"), cs_us: DurationUs::fixed(p.delay_us), spin_us: p.spin_us }]
        }
    };
    let test = vec![mark(tag, "test_start"), OpSpec::Loop { count: per_thread, body }, mark(tag, "test_end")];
    let mut master = vec![
        mark(tag, "ref_start"),
        OpSpec::Loop { count: p.innerreps, body: vec![delay()] },
        mark(tag, "ref_end"),
        bar("go"),
    ];
    master.extend(test.iter().cloned());
    let group = |threads: u32, program: Vec<OpSpec>| ThreadGroupSpec {
        threads,
        program,
        affinity: None,
        bind: false,
        working_set_kib: Some(64),
    };
    let mut groups = vec![group(1, master)];
    if threads > 1 {
        let mut worker = vec![bar("go")];
        worker.extend(test);
        groups.push(group(threads - 1, worker));
    }
    // The master and its team share one address space.
    groups
}

fn imb_ranks(vcpus: u32, p: &ImbParams) -> u32 {
    p.ranks.unwrap_or(vcpus).max(2)
}

/// Rank i sends to i+1 and receives from i-1 (`sendrecv`, IMB's `MPI_Sendrecv`), or sends to
/// both neighbours and then receives from the left and from the right (`exchange`, IMB's two
/// `MPI_Isend`, two `MPI_Recv` and `MPI_Waitall`), in a ring. Receives name their source (MPI
/// matches on it), so each ordered pair of neighbours has its own channel. Each send and each
/// receive costs half the fixed per-message cost plus one copy of the message. The message's
/// bytes go through the channel (`msg_bytes` of the put, `guest::channel`): the receiver fetches
/// the socket buffer's lines from the pCPU it was written on, at the host's cache-to-cache
/// line cost (none on a host that does not price a line, such as seed 003's).
pub fn imb(vcpus: u32, p: &ImbParams, tag: &str) -> Vec<ThreadGroupSpec> {
    let ranks = imb_ranks(vcpus, p);
    // Validated to 1 B - 1 GiB (scenario/validate.rs), so it fits.
    let msg_bytes = u32::try_from(p.msg_bytes).expect("imb msg_bytes validated to at most 1 GiB");
    let kib = p.msg_bytes as f64 / 1024.0;
    let copy_us = kib * p.copy_ns_per_kib / 1000.0;
    let side_us = p.per_msg_us / 2.0 + copy_us;
    let mem = if side_us > 0.0 { copy_us / side_us } else { 0.0 };
    // The channel into rank `to` from its left (`from_left`) or right neighbour.
    let chan = |to: u32, from_left: bool| format!("{tag}.to{to}.from_{}", if from_left { "left" } else { "right" });
    let send = |to: u32, from_left: bool| {
        vec![
            compute(DurationUs::fixed(side_us), mem),
            OpSpec::Put { queue: chan(to, from_left), capacity: IMB_INBOX_MSGS, msg_bytes, writable_at: None, state_lock: false },
        ]
    };
    let recv = |at: u32, from_left: bool| {
        vec![OpSpec::Get { queue: chan(at, from_left), capacity: IMB_INBOX_MSGS, state_lock: false }, compute(DurationUs::fixed(side_us), mem)]
    };
    let ws_kib = ((2 * p.msg_bytes).div_ceil(1024)).clamp(4, u32::MAX as u64) as u32;
    (0..ranks)
        .map(|r| {
            let right = (r + 1) % ranks;
            let left = (r + ranks - 1) % ranks;
            let mut body = send(right, true);
            if p.pattern == ImbPattern::Exchange {
                body.extend(send(left, false));
                body.extend(recv(r, true));
                body.extend(recv(r, false));
            } else {
                body.extend(recv(r, true));
            }
            ThreadGroupSpec {
                threads: 1,
                program: vec![mark(tag, "start"), OpSpec::Loop { count: p.reps, body }, mark(tag, "end")],
                affinity: None,
                bind: false,
                working_set_kib: Some(ws_kib),
            }
        })
        .collect()
}

/// The benchmark figures of a finished benchmark workload, from its marks (`None` for other
/// kinds, or if the benchmark did not finish).
pub fn metrics(vcpus: u32, w: &crate::scenario::WorkloadSpec, tag: &str, marks: &[MarkStat]) -> Option<BTreeMap<String, f64>> {
    use crate::scenario::WorkloadSpec;
    let get = |name: &str| marks.iter().find(|m| m.name == format!("{tag}.{name}"));
    let mut out = BTreeMap::new();
    match w {
        WorkloadSpec::Stream(p) => {
            let threads = stream_threads(vcpus, p) as u64;
            let (start, end) = (get("start")?, get("end")?);
            if end.count < threads {
                return None;
            }
            let bytes = (p.iterations * stream_per_thread_kib(vcpus, p) as u64 * 1024) as f64;
            let per_thread_s = (end.mean_ns() - start.mean_ns()) / 1e9;
            let all_s = (end.last_ns - start.first_ns) as f64 / 1e9;
            out.insert("bytes_per_thread".into(), bytes);
            out.insert("elapsed_ns".into(), (end.last_ns - start.first_ns) as f64);
            out.insert("bandwidth_bytes_per_s_per_thread".into(), bytes / per_thread_s.max(1e-12));
            out.insert("bandwidth_bytes_per_s".into(), bytes * threads as f64 / all_s.max(1e-12));
            // STREAM's own figure (McCalpin stream.c): each kernel is a `parallel for` the master
            // times from before the region to after its join, NTIMES times, and "Best Rate
            // MB/s" is bytes / the minimum time, the first iteration skipped ("note -- skip
            // first iteration"). Here the team's pass k runs from the end of pass k-1 (the
            // barrier releases the team when its last thread arrives) to the end of pass k by
            // its slowest thread: round k of the `pass` mark minus round k-1. The run is cut
            // into executions of `ntimes` passes (one execution without it; a last, shorter
            // one is left out); each execution's best rate is the team's bytes per pass over
            // its fastest pass after its first, and `best_rate_bytes_per_s` is their mean
            // (the seed averages the figure over runs of the benchmark).
            let rounds = get("pass")?.round_last_ns();
            let n = p.ntimes.map_or(rounds.len(), |n| n as usize).max(2);
            let bests: Vec<u64> = rounds
                .chunks_exact(n)
                .map(|ex| ex.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(0))
                .collect();
            if !bests.is_empty() {
                let pass_bytes = stream_per_thread_kib(vcpus, p) as f64 * 1024.0;
                let rate = |ns: u64| pass_bytes / (ns as f64 / 1e9).max(1e-12);
                let mean_rate = bests.iter().map(|&ns| rate(ns)).sum::<f64>() / bests.len() as f64;
                out.insert("executions".into(), bests.len() as f64);
                out.insert("best_pass_ns".into(), *bests.iter().min().unwrap() as f64);
                out.insert("best_rate_bytes_per_s".into(), mean_rate * threads as f64);
                out.insert("best_rate_bytes_per_s_per_thread".into(), mean_rate);
            }
        }
        WorkloadSpec::Epcc(p) => {
            let threads = epcc_threads(vcpus, p) as u64;
            let (rs, re, ts, te) = (get("ref_start")?, get("ref_end")?, get("test_start")?, get("test_end")?);
            if te.count < threads || re.count < 1 {
                return None;
            }
            let (_, constructs) = epcc_constructs(vcpus, p);
            let ref_ns = (re.last_ns - rs.first_ns) as f64;
            let test_ns = (te.last_ns - ts.first_ns) as f64;
            out.insert("constructs".into(), constructs as f64);
            out.insert("ref_ns".into(), ref_ns);
            out.insert("test_ns".into(), test_ns);
            out.insert("overhead_ns_per_construct".into(), test_ns / constructs as f64 - ref_ns / p.innerreps as f64);
        }
        WorkloadSpec::Imb(p) => {
            let ranks = imb_ranks(vcpus, p) as u64;
            let (start, end) = (get("start")?, get("end")?);
            if end.count < ranks {
                return None;
            }
            // IMB: Sendrecv moves 2 messages per rank and repetition, Exchange 4; MB = 2^20 B.
            let factor = if p.pattern == ImbPattern::Exchange { 4.0 } else { 2.0 };
            let t_ns = (end.last_ns - start.first_ns) as f64 / p.reps as f64;
            out.insert("time_per_rep_ns".into(), t_ns);
            out.insert("throughput_mib_per_s".into(), factor * p.msg_bytes as f64 / (t_ns.max(1e-3) / 1e9) / (1u64 << 20) as f64);
        }
        _ => return None,
    }
    Some(out)
}

/// Catalogue for `vmsched list`: (name, description, source).
pub fn catalog() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("hog", "one while(1) thread per vCPU", "seed 002 (Flex fairness runs)"),
        ("parallel", "worker pool: compute, spinlock sections, TLB shootdowns, barriers (spin-then-block)", "seed 000 §2.1; Linux kernel/smp.c, arch/x86/mm/tlb.c"),
        ("forkbench", "fork a child that exits at once, wait, repeat", "seed 004 §7.2"),
        ("hackbench", "sender/receiver groups over pipes, optional guest affinity per role", "seed 004 §7.2; Linux hackbench"),
        ("rambench", "memory-bound list/array traversal, NUMA-sensitive", "seed 004 §7.2"),
        ("kbuild", "make -jN: many short-lived compiler processes", "seed 004 §7.2"),
        ("server", "SPECvirt-like server VM (web, mail, app, db, infra, idle): open-loop Poisson requests, interrupt-driven I/O, response times", "seed 001 §2.3, §3"),
        ("stream", "STREAM-like array kernels (LLC-aware pass time), optional barrier per iteration; stream.c best rate and bandwidth per thread", "seed 003 §2.3, §5; McCalpin STREAM"),
        ("epcc", "EPCC OpenMP syncbench: barrier / reduction / critical loops vs a serial reference; overhead per construct", "seed 003 §5; EPCC syncbench.c; libgomp team.c"),
        ("imb", "IMB Sendrecv / Exchange in a ring of single-threaded ranks over sockets; throughput MB/s", "seed 003 §5; Intel MPI Benchmarks user guide"),
        ("custom", "thread groups with programs in the op language", "docs/scenarios.md"),
    ]
}
