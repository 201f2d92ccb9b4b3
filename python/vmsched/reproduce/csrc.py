"""Seed 001 (server consolidation on Xen: dynamically-allocable tasklets and the context-switch
rate controller), §4-§6: Table 1 and Figure 12, Tables 3-4, Figures 15-17.

The seed's host runs 9 SPECvirt_sc2010 tiles on 24 hardware threads with pass-through (SR-IOV)
I/O under Xen 4.1. Here (since session 17) as the seed scales: a load of t tiles is t sets of
the six server VMs of ``scenarios/consolidation-specvirt.toml`` (web, mail, app, db, infra,
idle: 2/1/2/1/1/1 vCPUs; :func:`tile_vms`) on the seed's 24 hardware threads as 24 pCPUs (2
sockets x 12, the LLC's 12 MB per socket), every VM at the same arrival rates at every load
(the fitted load factor times its role's preset), each VM's memory on the node of the CPU
Xen 4.1 placed its vCPU 0 on (:func:`xen41_vcpu0_cpus`). Until session 16 the reproduction
scaled every rate on one fixed set of two tiles (12 VMs, 16 vCPUs on 6 pCPUs), so that "9
tiles" put 4.5 tiles' worth of requests on each VM and its web and app servers queued inside
their two vCPUs well before the host filled (the original's response rose 4.4 times from 1 to
9 tiles against the seed's 2.5; calibration.toml csrc.specvirt.load). The change was chosen on
the seed's text; the rule for adopting it was written before the refit: the original's
baselines refitted by the recorded methods and criterion (calibration.toml csrc.*: the six
peak targets by tools/calibrate/csrc_peak_solve.py, the cache point by the three growths and
the neighbour rule, the I/O wait by the 1-tile response and the HLT share), no softirq or CSRC
run looked at before the choice, and the policies' results taken as they come. Three
configurations of credit (docs/policies.md ## tasklets, ## csrc):

- ``original``: tasklets in the idle vCPU, no CSRC (the seed's unoptimised Xen 4.1; the
  scenario also takes 4.1's wake-up, ``wake = "xen41"``, and its load balancing without a
  rate limit, docs/policies.md ## credit_wake);
- ``softirq``: dynamically-allocable tasklets in softirq context (§5.2);
- ``csrc``: softirq tasklets and the context-switch rate controller (§5.3).

Calibration (``calibration.toml`` ``csrc.*``): the load factor and the per-request size (CPU
work and working set, scaled together) are fitted to the *original* configuration at the
seed's peak only: 26,551 context switches per pCPU-second (Table 1) and 92 % CPU utilisation
(Figure 16, original at 9 tiles), jointly (session 12) with the host's shared-LLC pressure
(``csrc.host.*``: hv/llc.rs, guest compute's CPI grows with the footprint active on its
socket's LLC) to the original's CPI and LLC miss-rate growth from 1 to 9 tiles (§4.1, Figures
7-8); since session 14 with the TLB pressure too (hv/tlb.rs: the translations active on each
pCPU's second-level TLB) and the TLB's growth (Figure 8), the LLC's exponent fitted within the
power law's range; since session 15 with Xen 4.1's flush of the guest TLB at every full context
switch, whose walk cost (``TLB_WALK_CYCLES``, 40 cycles) is a sourced constant, not fitted. Since session 13 also, on the original at the peak, the hypervisor's handling costs of
external-interrupt, HLT and APIC-access (EOI) exits (``csrc.host.exit_*``) to its cycles by VM
exit (§4.2, Figure 9; hv/machine.rs counts hypervisor time by the exit it is handled in; since
session 18 also the I/O-instruction exit of one emulated port access per request,
``PORT_IO_PER_REQUEST``), and
the requests' I/O wait (``csrc.specvirt.disk_us``) to the original's response at 1 tile (Figure
4) and its share of switches in HLT exits (Figure 12) together. Since session 14 Xen's lazy
context switch is on (hv/lazy_switch.rs) and the full switch's cost (``csrc.host.world_switch_ns``)
is solved with them to Table 1's switching share (7.28 % of the CPU); since session 22 the
scheduler path (``sched_call_ns``, what a lazy switch costs) keeps the host model's estimate of
its ratio to the full switch (:func:`sched_call_per_world_switch`). The load factor so found
holds at every load; 9 tiles is the peak. Everything about softirq tasklets and CSRC comes out of the
simulation with these inputs. Every configuration runs at every load with simulation seeds
1-8 (``SEEDS``) and every measure is their mean (the fit was made over seeds 1-4, since
session 8's refit over seeds 1-8).

Where the seed counts: Table 1, Figure 12 and Figure 16 (CPU) at the original's peak, 9
tiles; Tables 3 and 4 each configuration at its own peak (§5.3: the counts with CSRC are "at
peak performance (with CSRC method, system obtains higher performance than previous
result)"); Figure 15 each at its compliant peak ("When considering the compliant results -
achieving QoS requirements - the peak performance (throughput per CPU utilization)"); Figure
17 along the load.

The causes of context switches (Figure 12) come from credit's per-cause counters
(``hv/sched/switch_causes.rs``): each switch is attributed to what called the scheduler and to
the VM exit the pCPU was handling.

Compliant peak (SPECvirt's QoS; since session 16 judged on the total response time): a
configuration's compliant peak is the first load where its expected total response time (the
geometric mean of the web, mail and app servers' mean responses, :func:`response_ms`; its mean
over the seeds, on a monotone fit along the sweep) exceeds the original's at the original's peak
(``compliant_tiles``). Why this reading:

- the seed's QoS indicator is the total response time: "The response time, or QoS, is another
  indicator in Specvirt_sc2010" (§1), "the total response time (geometric mean result of three
  sub-workload's response time)" (§4.1, Figure 4), and §6 explains the higher compliant peak
  by it: Figure 17's proposals "shorten the response time significantly when close to peak
  performance, explaining that such methods achieve higher throughput with qualified QoS". The
  seed's runs are research runs, "noncompliant with the SPEC run-rules" (footnote 1), and it
  gives no per-workload limit;
- SPECvirt_sc2010's own limits are per workload (§2.3: "All workloads must continue to meet
  required quality of service (QoS) criteria"), but they are percentiles of response times
  against fixed thresholds that no model of this scale can carry over; sessions 9-15 stood in
  for them with each role's mean in the original at its peak, and the noise analysis below
  showed what that does: mail, whose response hardly grows near the peak (the original's mail
  answers 0.376 ms at 8 tiles and 0.357 at 9, the limit), decided every peak by noise, with
  bands of 2-3 tiles (softirq tasklets 6.79-9.15 in session 15) and both optimisations' peaks
  below the original's, against the seed's "more loads can be added to achieve higher
  throughput with CSRC" (§6);
- the original's peak stays 9 tiles by construction, as before.

Session 16 chose this reading knowing the per-role data above and that it puts the peaks above
9 tiles; it changes where the peaks are read, nothing in the simulation. The per-role reading's
peaks are still reported (``peak_tiles_*_per_role``, not judged) so that the reader sees what
the choice moves.

How it is measured, and why (a noise analysis of the sweep made under the per-role reading and
the load-scaled structure of sessions 7-16, which the numbers below describe;
sessions 9-14, runs of 3000 ms, simulation seeds 1-8): each point of the sweep is a mean over
simulation seeds, and its noise is the spread of that mean over the seeds.

- The limit is the noisiest number in the judgement. The original at 9 tiles answers, per
  seed: web 0.30-0.54 ms (two states: 0.30 or 0.50-0.54, mean 0.388, SD 0.109), mail
  0.49-0.55 (mean 0.515, SD 0.023), app 0.5-10.6 (mean 2.77, SD 3.30: one seed's app VM
  tips into overload). The standard error of the mean over seeds 1-4 is 14.5 % (web), 2.7 %
  (mail), 24 % (app); over seeds 1-8 9.9 %, 1.6 % and 42 % (the overloaded seed is among
  5-8). In 600 ms runs (the quick mode's then) the mail limit scatters more (SD 0.080) and
  lies higher: 0.583 ms against 0.515 in 3000 ms runs and 0.498 in 9000 ms runs.
- That is a start transient, not noise: over seeds 1-8 the original's mail server answers in
  0.62, 0.66, 0.59, 0.60 ms in the first four 100 ms of the run, then 0.50-0.51 from 400 to
  2000 ms and 0.49 from 2000 to 3000 ms (web steady at 0.37-0.42; app growing as more VMs
  tip into overload). CSRC at 9 tiles has none (mail 0.51-0.53 throughout); softirq tasklets
  at 10 tiles a smaller one (mail 0.57 for 200 ms, then 0.50-0.53). Over 0-3000 ms the
  transient raises the mail limit by 3 % (0.515 against 0.498 ms over 600-3000 ms); in the
  quick mode it was most of the run.
- CSRC's curves are smooth: the SE of each role's mean is at most 0.9 % (seeds 1-4) at every
  load from 8 to 12 tiles (mail 0.479, 0.517, 0.565, 0.613, 0.677 ms). Softirq tasklets'
  scatter more (web SE 4-6 %, app 7-12 %: an app VM of some seeds in a slower state) and
  their mail server answers nearly flat near the limit (0.508, 0.522, 0.508, 0.535 ms at 9-12
  tiles over seeds 1-8; measured before the session 7 softirq delivery fix, hv/tasklet.rs,
  which made softirq tasklets' mail server faster).
- So the judgement was decided by noise: CSRC's mail server at 9 tiles lay 1 % above a limit
  whose own SE was 2.7 %, and softirq tasklets' mail server hovers within one or two SE of
  its limit over five tiles, so a piecewise-linear first crossing between two of its points
  is set by whichever point happens to poke above (over 500-3000 ms, seeds 1-8: 0.509, 0.519,
  0.499, 0.509, 0.515 ms at 9-13 tiles against a limit of 0.498 ± 0.006). Between
  neighbouring loads CSRC's curves are close to straight (mail rises 0.038, 0.048, 0.048,
  0.064 ms per tile), so linear interpolation between whole tiles errs by about 0.001 ms, far
  below the limit's SE: a finer sweep (half tiles) would not help.

The method therefore:

0. Response times count the requests completed after a warm-up of 500 ms (``WARMUP_MS``), as
   a benchmark measures its steady state after a warm-up (SPECvirt's harness runs its
   workloads through a ramp-up and warm-up before the measurement interval).
1. Every run has simulation seeds 1-8 (``SEEDS``), which halves the variance of every mean
   and gives each point's standard error from 7 degrees of freedom.
2. The limit's runs (the original at 9 tiles) are full length (3000 ms) in the quick mode
   too: the limit dominates the noise, and over a 500-1000 ms window it is both noisier (mail
   SE 2.9 %) and higher (0.507 ms, the start transient's tail) than over 500-3000 ms (0.498,
   SE 1.1 %). The quick mode then judges against the same limit as the full mode. Its rate
   quantities (CPU busy, throughput per CPU, switch and call rates) then compare the
   original's 3000 ms runs with the others' 1000 ms runs, each over the whole run: over the
   first 1000 ms the original at 9 tiles (seeds 1-8) is 1.0 % less busy (91.7 against
   92.6 %), makes 0.6 % more scheduler calls, 0.1 % fewer switches and 1.1 % more
   throughput per CPU than over 3000 ms, an order of magnitude below every difference that
   the claims compare (softirq tasklets and CSRC at 9 tiles: 81.7 and 78.2 % busy, 18 % more
   throughput per CPU, 53 % fewer switches). The full mode's runs are all 3000 ms.
3. A configuration is out of QoS at a load when its expected total response exceeds the
   limit (margin 0):
   SPECvirt's QoS compliance is a fixed threshold judged on what a run measures (seed §2.3:
   "All workloads must continue to meet required quality of service (QoS) criteria"; §5.3
   compares peaks, not confidence levels), and the expected value of that measurement is what
   the mean over the seeds estimates. A statistical margin (an earlier reading: out of QoS
   only beyond 2 standard errors of the difference) would answer a different question, where
   the seeds can *detect* the crossing: the peak would then move with each configuration's
   noise and with the number of seeds (a noisy configuration would get a later peak than a
   smooth one with the same expected curve, and more seeds would lower every peak). The noise is reported instead of judged: ``compliant_tiles`` with
   ``margin_se`` = -2 and +2 (``BAND_SE``) gives the loads where the fit of mean - limit
   +/- 2 standard errors of the difference (the limit's and the point's SE from the spread
   over seeds, in quadrature; about 97.7 % one-sided each) crosses 0: the interval within
   which the seeds place the peak (quantities ``peak_tiles_*_lo`` and ``_hi``; the sweep's
   first load when an edge lies at or below it).
4. The crossing is read on the monotone (non-decreasing) least-squares fit of mean - limit
   along the sweep, each point weighted by 1 / its SE squared, interpolated linearly between
   the two loads around it: the fit assumes that the expected response does not fall
   as tiles are added, and it pools a point that pokes above its successors with them, so the
   peak is where the fitted expected response crosses the limit, not where one noisy point
   does. Where the points rise steadily (CSRC) the fit is the points themselves.

The limit is the original's mean total response at 9 tiles (its peak, the seed's reference
point); the counts "at peak" (§5.3) are read at the crossing, interpolated linearly in the
sweep.

Path length (session 15; Figure 7's growth from 4 to 8 tiles, Figure 18's saving with CSRC at
9 tiles). Written down before any value was measured, chosen on the seed's text and the
model's structure:

- what it is: seed §4.1, Equation 1, "cycles per throughput are decided by the multiplicative
  of Cycles per instruction (CPI) and Path Length (PL) ... PL refers to instructions required
  per transaction". The cycles are the system's (Figures 4 and 6: guest user, guest kernel,
  hypervisor and domain 0, each counted "by programing the hardware performance counter
  separately") and the CPI the "overall CPI" (§4.1), so for Equation 1 to hold PL counts the
  instructions of the same cycles: guest and hypervisor alike. §6 confirms a hypervisor part:
  the hypervisor's CPU "is caused by both PL and CPI", the guest's "primarily ... by the lower
  CPI";
- the transaction: Equation 1's throughput, Figure 7's axis; the model's throughput is the
  requests completed by every VM (``throughput_per_s``, as in Figure 15's throughput per CPU),
  so PL is per request of any role (the load scales every role's rate alike, so the mix is
  the same at every load and configuration); instructions and requests both over the whole
  run, as ``throughput_per_s``;
- the model's instructions (:func:`path_length_parts_ns`), in ns of work at CPI factor 1 (the
  unit in which a request's CPU work is stated; instructions times the base CPI over the clock,
  a constant that cancels in both ratios): guest compute's work (``totals.
  guest_compute_work_ns``, its time / the CPI factor it ran at, hv/llc.rs); the guest kernel's
  interrupt handlers (``vms[].guest_ns.irq``), fixed times that no CPI scales, taken as they
  are; the hypervisor's costs at factor 1 (``totals.hv_work_ns``: world switches, scheduler
  calls, exit handling and the dpci tasklet are stated at the original's peak CPI,
  ``host.costs.hv_costs_reference_cpi``, so each counts cost / reference, hv/machine.rs
  ``owe_hv``);
- not instructions: stalls (cache refills, TLB walks after flushes, cross-socket line
  transfers), idle (Xen's idle vCPU halts) and steal;
- not modelled: domain 0 (the guests reach their SR-IOV functions directly, §3, and the
  model has no domain 0; in Figure 6 its part is the one that does not grow with load), spin
  loops (the servers hold no locks; hv/perfcounters.rs synthesises counts only for a policy
  that reads the PMU, and the summary does not carry them).

Leaves out: a CPI of the hypervisor's
code other than guest compute's (since session 13 the hypervisor's costs per event are stated at
the original's peak CPI and scale with their socket's CPI, host.costs.hv_costs_reference_cpi),
the TLB (Figure 8); SPECvirt's actual QoS criteria (percentiles of each workload's
response time against fixed limits, replaced by the total response above).
"""

from __future__ import annotations

import copy
import math
from functools import lru_cache
from typing import Any, Callable, Mapping

from .calibration import fitted
from .core import XEN_HOST_PARAMS, Claim, Quantity, Reproduction, Run, host_default_costs
from .core import kept, mean_over_seeds

S001 = "001_3582712ef98dbca6.txt"

#: The server roles' presets (docs/scenarios.md, ``server``; guest/workloads.rs
#: ``role_preset``): arrivals per second, mean CPU µs per request, working set KiB per worker.
#: The reproduction must set rates explicitly to scale them, so it restates them here.
PRESET_RATE_PER_S = {"web": 5000.0, "mail": 1000.0, "app": 2000.0, "db": 2000.0,
                     "infra": 2500.0, "idle": 10.0}
PRESET_CPU_US = {"web": 120.0, "mail": 200.0, "app": 300.0, "db": 100.0, "infra": 60.0,
                 "idle": 50.0}
PRESET_WORKING_SET_KIB = {"web": 1024, "mail": 1024, "app": 2048, "db": 2048, "infra": 512,
                          "idle": 64}

#: Host costs per VM exit fitted to Figure 9 (``calibration.toml`` ``csrc.host.<name>``).
EXIT_COSTS = ("exit_ext_intr_ns", "exit_hlt_ns", "exit_apic_eoi_ns", "exit_io_ns")

#: Port I/O instructions per request that Xen emulates itself (the server workload's
#: ``port_io_exits``: an I/O-instruction exit each, no device model, no block; session 18).
#: Figure 9 gives the I/O-instruction exits 2.94 % of the CPU at the peak, and §4.2 names no
#: port: the guests' devices are SR-IOV functions driven by MMIO (§3), so what is left is
#: emulated platform hardware, such as the ACPI PM timer that a guest clock reads
#: (xen/arch/x86/hvm/pmtimer.c). One per request is a structural estimate, the simplest count
#: that follows the load; the exit's cost is fitted to Figure 9's share on the original at
#: its peak (calibration.toml csrc.host.exit_io_ns).
PORT_IO_PER_REQUEST = 1

#: Cycles per guest TLB-miss page walk after Xen 4.1's flush at a full context switch
#: (``host.costs.tlb_walk_cycles``, hv/tlb.rs; docs/model.md, TLB pressure). A SOURCED host
#: constant, derived, not measured, and not fitted (session 15): no measured cycle count of a
#: two-dimensional (EPT) walk on Nehalem or Westmere was found. Derivation:
#: - a native walk whose upper page-structure entries are cached costs 23 cycles, measured on
#:   a Xeon X5650, Westmere-EP, the seed's X5680's die (7-cpu.com/cpu/Westmere.html, "1 GB
#:   pages mode": "Miss penalty = 23 cycles");
#: - under EPT a walk adds the references to the guest-physical translations (up to 24
#:   references against 4 for 4-level guest and EPT tables: Bhargava, Serebrin, Spadini,
#:   Manne, ASPLOS 2008; Yaniv & Tsafrir, SIGMETRICS 2016), but Xen maps the guest-physical
#:   space with host superpages by default (xen/arch/x86/mm/p2m.c: opt_hap_1gb = 1,
#:   opt_hap_2mb = 1, "default on"; read in stored 4.x-era copies, not the 4.1.0 file itself)
#:   and the flush (a new VPID/ASID) leaves EPT's own cached entries, so with a few MiB of
#:   working set a walk adds one or two EPT references, each an L1 or L2 hit on Westmere (4
#:   and 10 cycles, the same 7-cpu.com page): 23 + 1..2 x (4..10) = 27-43 cycles;
#: - 40, the single value session 15's reading of these sources gave for the warm-cache
#:   bracket (about 30-45 cycles; 27-43 by the sum above, so 40 lies in its upper half);
#:   23 (native) is its floor and about 105 (the extra references in L3, 40 cycles each) a
#:   plausible ceiling.
#: Chosen on these sources alone, before any run with it.
TLB_WALK_CYCLES = 40

#: The three sub-workloads whose response times SPECvirt_sc2010 combines (geometric mean,
#: seed §4.1): SPECweb (web), SPECmail (mail), SPECjAppServer (app).
QOS_ROLES = ("web", "mail", "app")

#: Configurations: label → (tasklet mode, CSRC).
CONFIGS = {"original": ("idle_vcpu", False), "softirq": ("softirq", False),
           "csrc": ("softirq", True)}

#: Loads as tiles of the seed's 9-tile peak. The sweep starts below 9 tiles and goes past
#: it far enough for softirq tasklets and CSRC to reach their compliant peaks
#: (``compliant_tiles``: 9.05 tiles for CSRC, 9.48 for softirq tasklets in the full run since
#: session 10's sourced memory refill rate and memory nodes, 8.18 and 10.4 in session 9, 8.35
#: and 9.25 before; the noise band reaches 12).
PEAK_TILES = 9
LIGHT_TILES = 4
#: The seed's lightest load (§4.1, Figures 4, 7 and 8 start at 1 tile).
ONE_TILE = 1
FULL_TILES = (1, 2, 4, 6, 8, 9, 10, 11, 12, 13)
QUICK_TILES = (1, 2, 4, 8, 9, 10, 11)

#: Every configuration at every load runs with these simulation seeds and each measure is
#: their mean: at 8-10 tiles one seed's original may settle into a colder or a warmer cache
#: state than another's (calibration.toml, csrc.specvirt.load), a few points of busy and a
#: response time that scatters by ±30 %, so a single seed would decide the orderings. Eight
#: rather than four to narrow the compliant peak's estimate and its noise band (module
#: docstring).
SEEDS = (1, 2, 3, 4, 5, 6, 7, 8)

#: The compliant peak's noise band: the peak's interval is where mean - limit -/+ this many
#: standard errors of the difference crosses 0 (module docstring, method step 3; the peak
#: itself is judged with margin 0).
BAND_SE = 2.0

FULL_MS = 3000.0
QUICK_MS = 1000.0

#: Response times are measured after this warm-up (module docstring: the original's mail
#: server answers 15-25 % slower in its first 400 ms than afterwards): the scenario's
#: ``warmup_ms``, which leaves the requests completed by then out of the request summaries.
#: (Until session 28 each run had a twin of this length with the same seed whose requests were
#: subtracted; the same requests, at a seventh of the simulation.)
WARMUP_MS = 500.0


@lru_cache(maxsize=1)
def _base() -> dict:
    from .. import Scenario, scenarios_dir

    return Scenario.from_file(str(scenarios_dir() / "consolidation-specvirt.toml")).to_dict()


@lru_cache(maxsize=1)
def sched_call_per_world_switch() -> float:
    """The host model's estimate of a scheduler invocation without a switch as a fraction of
    a full switch (host/mod.rs ``sched_call_ns``: "the ``csched_schedule`` path without the
    context switch, about a fifth of a full switch"), read from the host defaults. On seed
    001's host the full switch is fitted (calibration.toml csrc.host.world_switch_ns) and the
    scheduler path keeps this ratio to it (session 22; until then it kept the default 500 ns,
    a fifteenth of the fitted switch)."""
    costs = host_default_costs()
    return costs["sched_call_ns"] / costs["world_switch_ns"]


def scenario(tiles: int, config: str, duration_ms: float,
             fitted: Callable[[str], float] = fitted) -> dict:
    """The consolidation scenario with ``tiles`` tiles of server VMs, in ``config``.
    ``fitted`` gives the fitted values (calibration.toml's by default; a refit passes trial
    values, tools/calibrate/csrc_peak_solve.py)."""
    tasklet, csrc = CONFIGS[config]
    load = fitted("csrc.specvirt.load")
    size = fitted("csrc.specvirt.request_scale")
    sc = copy.deepcopy(_base())
    sc["name"] = f"specvirt-{tiles}t-{config}"
    # Tiles are sets of VMs (§2.3) on the seed's 24 hardware threads, every VM at the same
    # rate at every load (session 17; module docstring).
    sc["host"]["sockets"] = SOCKETS
    sc["host"]["cores_per_socket"] = THREADS_PER_SOCKET
    sc["vms"] = tile_vms(tiles, sc["vms"])
    sc["duration_ms"] = duration_ms
    if duration_ms > WARMUP_MS:  # shorter runs (vmsched bench's) measure no response
        sc["warmup_ms"] = WARMUP_MS
    # Xen switches lazily (session 14; core.XEN_HOST_PARAMS): a switch to the idle vCPU keeps
    # the previous vCPU's state, and that vCPU comes back without a state switch; the full
    # switch's cost is fitted to Table 1's switching share on the original
    # (calibration.toml csrc.host.world_switch_ns).
    sc["hypervisor"]["params"] = {**sc["hypervisor"]["params"], **XEN_HOST_PARAMS,
                                  "tasklet": tasklet, "csrc": csrc}
    # Shared-LLC pressure (hv/llc.rs): fitted to the original's CPI and LLC miss-rate growth
    # from 1 to 9 tiles (seed §4.1, Figures 7-8); the LLC size is the scenario's (sourced),
    # the power law's exponent fitted within its measured range 0.3-0.7 (session 14).
    # Per-exit handling costs (session 13): fitted to the original's hypervisor cycles by VM
    # exit at its peak (seed §4.2, Figure 9: external interrupt, HLT, APIC access; since
    # session 18 I/O instruction, PORT_IO_PER_REQUEST), the EOI
    # write of each virtual interrupt being an APIC-access exit on the seed's processor
    # (Westmere has no APIC virtualisation). The hypervisor's costs (these, the world switch,
    # the scheduler call, the dpci tasklet) are stated at the CPI of the original's peak and
    # scale with the CPI of the socket they run on (session 13; seed §6, Figure 20: the
    # hypervisor's part "is caused by both PL and CPI").
    # The TLB pressure (hv/tlb.rs, session 14): a core's STLB (512 entries, the scenario's
    # host default) with its stall ratio and the power law's exponent fitted with the LLC's
    # to the original's CPI, LLC and TLB miss growths (Figures 7-8). Since session 15 with
    # Xen 4.1's guest TLB flush at every full context switch, its walks at the sourced
    # TLB_WALK_CYCLES (not fitted; derivation above).
    sc["host"]["costs"] = dict(sc["host"]["costs"],
                               llc_stall_at_capacity_ratio=fitted("csrc.host.llc_stall_at_capacity_ratio"),
                               llc_window_ns=round(fitted("csrc.host.llc_window_ns")),
                               llc_miss_exponent=fitted("csrc.host.llc_miss_exponent"),
                               tlb_stall_at_capacity_ratio=fitted("csrc.host.tlb_stall_at_capacity_ratio"),
                               tlb_miss_exponent=fitted("csrc.host.tlb_miss_exponent"),
                               tlb_walk_cycles=TLB_WALK_CYCLES,
                               hv_costs_reference_cpi=fitted("csrc.host.hv_costs_reference_cpi"),
                               world_switch_ns=round(fitted("csrc.host.world_switch_ns")),
                               sched_call_ns=round(fitted("csrc.host.world_switch_ns")
                                                   * sched_call_per_world_switch()),
                               **{k: round(fitted(f"csrc.host.{k}")) for k in EXIT_COSTS})
    # The mean wait of a request's iSCSI I/O (exponential, as the servers' preset), fitted to
    # the original's response at 1 tile (Figure 4) and its share of switches in HLT exits
    # (Figure 12) together (calibration.toml).
    disk = {"dist": "exp", "mean_us": fitted("csrc.specvirt.disk_us")}
    for vm in sc["vms"]:
        for w in vm["workloads"]:
            if w["kind"] != "server":
                continue
            role = w["role"]
            w["rate_per_s"] = PRESET_RATE_PER_S[role] * load
            w["cpu_us"] = {"dist": "exp", "mean_us": PRESET_CPU_US[role] * size}
            w["working_set_kib"] = max(1, round(PRESET_WORKING_SET_KIB[role] * size))
            w["disk_us"] = dict(disk)
            w["port_io_exits"] = PORT_IO_PER_REQUEST
    return sc


#: The seed's host (§3): two Xeon 5680 sockets of 6 cores with Hyper-Threading on, 12
#: hardware threads each; each hardware thread is one pCPU of the model (the sharing of a
#: core by its two threads is not modelled).
SOCKETS = 2
THREADS_PER_SOCKET = 12


def xen41_vcpu0_cpus(vcpus: list[int], n_cpus: int = SOCKETS * THREADS_PER_SOCKET,
                     threads_per_core: int = 2) -> list[int]:
    """The CPU Xen 4.1 puts each new domain's vCPU 0 on, domains created in order on an
    otherwise idle host (xen/common/domctl.c ``default_vcpu0_location`` and
    ``XEN_DOMCTL_max_vcpus``): the least-populated CPU among the non-primary hyperthreads,
    CPU 0's sibling first, ties to the highest-numbered; vCPU k on the CPU after vCPU
    k-1's. CPU numbering as the BIOS's MADT lists a two-socket Westmere-EP: the first
    threads of every core, socket by socket, then the second threads (Linux's and Xen's
    CPUs 0-5 and 12-17 on socket 0), so CPU x's sibling is x +- n_cpus / 2. A dom0 with one
    vCPU per CPU adds the same count everywhere and changes no choice."""
    half = n_cpus // threads_per_core
    cnt = [0] * n_cpus
    firsts = []
    for n in vcpus:
        cpu = half                       # CPU 0's sibling
        for i in range(half + 1, n_cpus):  # the other second threads
            if cnt[i] <= cnt[cpu]:
                cpu = i
        firsts.append(cpu)
        for k in range(n):
            cnt[(cpu + k) % n_cpus] += 1
    return firsts


def xen41_cpu_socket(cpu: int, n_cpus: int = SOCKETS * THREADS_PER_SOCKET) -> int:
    """The socket of Xen CPU ``cpu`` in the MADT order of :func:`xen41_vcpu0_cpus`."""
    cores_per_socket = n_cpus // 2 // SOCKETS
    return (cpu % (n_cpus // 2)) // cores_per_socket


def tile_vms(tiles: int, template: list[dict]) -> list[dict]:
    """``tiles`` copies of the first tile of ``template`` (the scenario's VMs ``t0-*``: the six
    server VMs of a SPECvirt_sc2010 tile, §2.3, in creation order, with the seed's vCPUs), each
    VM's memory on the node of its vCPU 0 when Xen 4.1 created it (the domain builder
    allocates on ``domain_to_node``, the node of vCPU 0's CPU;
    scenarios/consolidation-specvirt.toml)."""
    first = [vm for vm in template if vm["name"].startswith("t0-")]
    vms = []
    for t in range(tiles):
        for vm in first:
            vm = copy.deepcopy(vm)
            vm["name"] = f"t{t}-{vm['name'][len('t0-'):]}"
            vms.append(vm)
    for vm, cpu in zip(vms, xen41_vcpu0_cpus([vm["vcpus"] for vm in vms])):
        vm["memory_node"] = xen41_cpu_socket(cpu)
    return vms


def label(tiles: int, config: str) -> str:
    return f"{config}-{tiles}t"


def run_ms(tiles: int, config: str, quick: bool) -> float:
    """A run's length: the QoS limit's runs (the original at its peak) are full length in
    the quick mode too, since the limit is the noisiest number of the peak judgement (module
    docstring); the others are shortened in the quick mode."""
    return FULL_MS if not quick or (tiles, config) == (PEAK_TILES, "original") else QUICK_MS


def _runs(tiles: tuple[int, ...], configs, quick: bool) -> list[Run]:
    return [Run(f"{label(t, c)}@{s}", scenario(t, c, run_ms(t, c, quick)), seed=s)
            for t in tiles for c in configs for s in SEEDS]


def sweep_of(r: Mapping[str, Any], full: tuple[int, ...], quick: tuple[int, ...],
             configs) -> tuple[int, ...]:
    """The loads that results ``r`` hold for ``configs`` (each load with every seed of
    :data:`SEEDS`): ``full`` or ``quick``, the reproduction's two sweeps. Anything else (a run
    missing, or a mix of the two) is an error, not a shorter sweep."""
    def has(t: int) -> bool:
        return all(f"{label(t, c)}@{s}" in r for c in configs for s in SEEDS)

    present = tuple(t for t in sorted(set(full) | set(quick)) if has(t))
    for sweep in (full, quick):
        if present == tuple(sorted(sweep)):
            return sweep
    raise KeyError(f"csrc: the results hold loads {present} (every seed of {SEEDS}) for "
                   f"{list(configs)}, neither the full sweep {full} nor the quick sweep {quick}")


#: the mean of a measure over :data:`SEEDS` (``core.mean_over_seeds``).
over_seeds = mean_over_seeds(SEEDS)


# ---- what the seed measures ---------------------------------------------------------------

def totals(r: Mapping[str, Any], lab: str) -> dict:
    return r[lab].summary["totals"]


@over_seeds
def total(r: Mapping[str, Any], lab: str, key: str) -> float:
    """One of the run's ``totals`` (per pCPU-second rates, fractions)."""
    return float(totals(r, lab)[key])


@over_seeds
def counter(r: Mapping[str, Any], lab: str, key: str) -> float:
    """One of the scheduler's counters (credit's per-cause switch counts), or for ``key``
    ending in ``_`` the sum of the counters it begins."""
    c = totals(r, lab)["scheduler_counters"]
    if key.endswith("_"):
        return float(sum(v for k, v in c.items() if k.startswith(key)))
    return float(c.get(key, 0))


@over_seeds
def busy(r: Mapping[str, Any], lab: str) -> float:
    return 1.0 - totals(r, lab)["idle_fraction"]


def completed_requests(s: Mapping[str, Any]) -> int:
    """Every request run summary ``s`` completed, the warm-up's included (``warmup_count``)."""
    return sum(v["requests"]["count"] + v["requests"]["warmup_count"] for v in s["vms"])


@over_seeds
def throughput_per_s(r: Mapping[str, Any], lab: str) -> float:
    """Requests completed per second over the whole run."""
    s = r[lab].summary
    return completed_requests(s) / (s["sim_time_ns"] / 1e9)


def role_of(vm: Mapping[str, Any], scenario_vms: list) -> str:
    return scenario_vms[vm["vm"]]["workloads"][0]["role"]


@over_seeds
def response_ms(r: Mapping[str, Any], lab: str) -> float:
    """SPECvirt_sc2010's total response time: the geometric mean over web, mail and app of
    each role's mean response time (:func:`role_response_ms`)."""
    logs = [math.log(role_response_ms(r, lab, role)) for role in QOS_ROLES]
    return math.exp(sum(logs) / len(logs))


@over_seeds
def switching_cpu_pct(r: Mapping[str, Any], lab: str) -> float:
    """Table 1's context-switching share of the CPU: full switches times the world switch's
    cost plus lazy switches times the scheduler call's (the stated costs, at the reference
    CPI), per pCPU-second."""
    t, c = totals(r, lab), r[lab].summary["scenario"]["host"]["costs"]
    return 100 * (t["state_switches_per_pcpu_s"] * c["world_switch_ns"]
                  + t["lazy_switches_per_pcpu_s"] * c["sched_call_ns"]) / 1e9


#: The parts of the path length (:func:`path_length_us`): guest compute, the guest kernel's
#: interrupt handlers, the hypervisor.
PL_PARTS = ("guest_compute", "guest_irq", "hv")


def path_length_parts_ns(s: Mapping[str, Any]) -> dict[str, float]:
    """Run summary ``s``'s instructions by part (:data:`PL_PARTS`), in ns of work at CPI
    factor 1: guest compute's work (``totals.guest_compute_work_ns``), the guest's interrupt
    handlers (``vms[].guest_ns.irq``: fixed times, which no CPI scales, taken as they are) and
    the hypervisor's costs at factor 1 (``totals.hv_work_ns``: each stated at the reference
    CPI counts cost / reference). Stalls (cache refills, TLB walks, cache-line transfers) and
    idle retire nothing and count nothing. Module docstring, "Path length"."""
    t = s["totals"]
    return {"guest_compute": float(t["guest_compute_work_ns"]),
            "guest_irq": float(sum(v["guest_ns"]["irq"] for v in s["vms"])),
            "hv": float(t["hv_work_ns"])}


@over_seeds
def path_length_us(r: Mapping[str, Any], lab: str, part: str | None = None) -> float:
    """Seed 001's path length (§4.1, Equation 1: "PL refers to instructions required per
    transaction"): the instructions of guest and hypervisor (:func:`path_length_parts_ns`, all
    parts, or ``part`` alone) per request completed by every VM (the transactions of
    :func:`throughput_per_s`), both over the whole run; in µs of work at CPI factor 1 per
    request, in proportion to instructions per transaction."""
    s = r[lab].summary
    parts = path_length_parts_ns(s)
    ns = parts[part] if part is not None else sum(parts.values())
    n = completed_requests(s)
    return math.nan if n == 0 else ns / n / 1e3


def _requests(r: Mapping[str, Any], lab: str, role: str) -> tuple[int, float]:
    """(requests completed, their summed response ms) of ``role``'s VMs in run ``lab``."""
    s = r[lab].summary
    vs = [v for v in s["vms"] if role_of(v, s["scenario"]["vms"]) == role]
    return (sum(v["requests"]["count"] for v in vs),
            sum(v["requests"]["mean_ms"] * v["requests"]["count"] for v in vs))


@over_seeds
def role_response_ms(r: Mapping[str, Any], lab: str, role: str) -> float:
    """One QoS role's mean response time (request-weighted over the tiles), over the requests
    completed after the warm-up (:data:`WARMUP_MS`, the scenario's ``warmup_ms``)."""
    n, total_ms = _requests(r, lab, role)
    return math.nan if n == 0 else total_ms / n


def first_crossing(pts: list[tuple[int, float]], limit: float) -> float | None:
    """The load where the curve ``pts`` (load, value) first reaches ``limit``, interpolated
    linearly; the sweep's first load if the curve is already above ``limit`` there (the
    crossing lies at or below the sweep); None if it never reaches it."""
    if pts and pts[0][1] > limit:
        return float(pts[0][0])
    for (t0, y0), (t1, y1) in zip(pts, pts[1:]):
        if y0 <= limit <= y1:
            return float(t0) if y1 == y0 else t0 + (t1 - t0) * (limit - y0) / (y1 - y0)
    return None


def qos_response_ms(r: Mapping[str, Any], lab: str, role: str | None = None) -> float:
    """What QoS is judged on: the total response (:func:`response_ms`), or one role's
    (:func:`role_response_ms`) for the per-role reading (``role`` one of :data:`QOS_ROLES`)."""
    return response_ms(r, lab) if role is None else role_response_ms(r, lab, role)


def qos_response_se_ms(r: Mapping[str, Any], lab: str, role: str | None = None) -> float:
    """The standard error of :func:`qos_response_ms`'s mean over :data:`SEEDS` (the sample
    standard deviation over the seeds / sqrt(number of seeds))."""
    v = [qos_response_ms(r, f"{lab}@{s}", role) for s in kept(SEEDS)]
    m = sum(v) / len(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1) / len(v))


def qos_excess_ms(r: Mapping[str, Any], config: str, tiles: int, role: str | None = None,
                  margin_se: float = 0.0) -> float:
    """How much ``config`` at ``tiles`` answers slower than its QoS limit, the original at its
    peak (:func:`qos_response_ms`: the total response, or ``role``'s): mean - limit -
    ``margin_se`` x the standard error of the difference (0: the expected response against the
    limit; +/- BAND_SE: the noise band's edges, module docstring); positive = out of QoS."""
    lab, peak = label(tiles, config), label(PEAK_TILES, "original")
    excess = qos_response_ms(r, lab, role) - qos_response_ms(r, peak, role)
    if margin_se == 0.0:
        return excess
    se = math.hypot(qos_response_se_ms(r, lab, role), qos_response_se_ms(r, peak, role))
    return excess - margin_se * se


def monotone_fit(ys: list[float], weights: list[float]) -> list[float]:
    """The weighted least-squares non-decreasing fit of ``ys`` (pool adjacent violators: a
    point above its successor is pooled with it into their weighted mean, until none is)."""
    blocks: list[list[float]] = []  # [value, weight, points]
    for y, w in zip(ys, weights):
        blocks.append([y, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v, w2, n = blocks.pop()
            b = blocks[-1]
            b[0] = (b[0] * b[1] + v * w2) / (b[1] + w2)
            b[1] += w2
            b[2] += n
    return [v for v, _, n in blocks for _ in range(int(n))]


def qos_crossing(r: Mapping[str, Any], config: str, tiles: tuple[int, ...],
                 role: str | None = None, margin_se: float = 0.0) -> float | None:
    """The first load (in tiles, interpolated in the sweep) where the monotone fit
    (:func:`monotone_fit`, each point weighted by 1 / its standard error squared) of
    :func:`qos_excess_ms` along the sweep crosses 0; None if it never does in the sweep."""
    ex = [qos_excess_ms(r, config, t, role, margin_se) for t in tiles]
    w = [1 / max(qos_response_se_ms(r, label(t, config), role), 1e-9) ** 2 for t in tiles]
    return first_crossing(list(zip(tiles, monotone_fit(ex, w))), 0.0)


def compliant_tiles(r: Mapping[str, Any], config: str, tiles: tuple[int, ...],
                    margin_se: float = 0.0) -> float | None:
    """``config``'s compliant peak (in tiles, interpolated in the sweep): the first load where
    its total response time (SPECvirt's geometric mean over web, mail and app, the seed's QoS
    indicator, §1, §4.1 and §6) answers slower than the original's at the original's peak, read
    on the monotone fit (:func:`qos_crossing`; ``margin_se``: 0 for the peak, -/+ BAND_SE for
    its noise band). Module docstring, "Compliant peak". None if it is not reached in the
    sweep."""
    return qos_crossing(r, config, tiles, None, margin_se)


def per_role_compliant_tiles(r: Mapping[str, Any], config: str,
                             tiles: tuple[int, ...]) -> float | None:
    """The compliant peak under sessions 9-15's per-role reading, reported beside the judged
    one and not judged: the first load where any role (web, mail, app) answers slower than it
    does in the original at the original's peak. None if no role reaches its limit."""
    xs = [x for role in QOS_ROLES if (x := qos_crossing(r, config, tiles, role)) is not None]
    return min(xs) if xs else None


def at_tiles(r: Mapping[str, Any], config: str, x: float, tiles: tuple[int, ...],
             fn: Callable[..., float], *args: Any) -> float:
    """``fn`` of ``config``'s runs at load ``x`` tiles, interpolated linearly between the two
    loads of the sweep around it."""
    if x in tiles:
        return fn(r, label(int(x), config), *args)
    t0 = max(t for t in tiles if t < x)
    t1 = min(t for t in tiles if t > x)
    y0, y1 = fn(r, label(t0, config), *args), fn(r, label(t1, config), *args)
    return y0 + (y1 - y0) * (x - t0) / (t1 - t0)


def compliant_peak(r: Mapping[str, Any], config: str, tiles: tuple[int, ...]):
    """(throughput, busy) at ``config``'s compliant peak (None if not in the sweep)."""
    x = compliant_tiles(r, config, tiles)
    if x is None:
        return None
    return at_tiles(r, config, x, tiles, throughput_per_s), at_tiles(r, config, x, tiles, busy)


# ---- Table 1 and Figure 12: the unoptimised Xen at peak ------------------------------------

def _t1_runs(quick: bool) -> list[Run]:
    return _runs((PEAK_TILES,), ["original"], quick)


def _t1_measure(r: Mapping[str, Any]) -> dict[str, float]:
    lab = label(PEAK_TILES, "original")
    cs = total(r, lab, "context_switches_per_pcpu_s")
    sched = total(r, lab, "sched_calls_per_pcpu_s")
    return {
        "sched_calls_per_pcpu_s": sched,
        "context_switches_per_pcpu_s": cs,
        "switches_per_sched_call": cs / sched,
        "hv_pct": 100 * total(r, lab, "hv_fraction"),
        **hv_by_exit_pct(r, lab),
        # Full switches at the world switch's cost, lazy ones (to the idle vCPU, back to the
        # vCPU whose state the pCPU kept) at the scheduler path's (hv/lazy_switch.rs); the
        # state syncs (under 0.1 /s/pCPU) left out.
        "context_switch_cpu_pct": switching_cpu_pct(r, lab),
        "busy_pct": 100 * busy(r, lab),
        **cause_shares(r, lab),
    }


#: Figure 9's VM exits: quantity → the model's exit reasons whose hypervisor time it sums
#: (``totals.hv_ns_by_exit``). APIC access is the ICR write of a virtual IPI (``ipi``) and the
#: EOI write of each handled virtual interrupt (``apic_eoi``): seed §4.2 b, "register access
#: operations, such as EOI and ICR". ``none`` is work on an idle pCPU, in no exit.
HV_EXITS = {"hv_ext_intr_pct": ("ext_intr",), "hv_apic_access_pct": ("ipi", "apic_eoi"),
            "hv_hlt_pct": ("hlt",), "hv_io_pct": ("io",), "hv_other_exits_pct": ("hypercall", "ple"),
            "hv_no_exit_pct": ("none",)}


@over_seeds
def hv_exit_pct(r: Mapping[str, Any], lab: str, key: str) -> float:
    """The share of host CPU that the hypervisor spent in the exits of ``HV_EXITS[key]``."""
    s = r[lab].summary
    ns = sum(s["totals"]["hv_ns_by_exit"][e] for e in HV_EXITS[key])
    return 100 * ns / (len(s["pcpus"]) * s["sim_time_ns"])


def hv_by_exit_pct(r: Mapping[str, Any], lab: str) -> dict[str, float]:
    """Figure 9: the hypervisor's share of CPU by VM exit (external interrupt, APIC access,
    HLT; the work in no exit beside them). HLT's share, as the seed's, leaves the idle state
    out (§4.2 c: "calculated by eliminating the idle state"): idle time is not hypervisor time
    in the model, and the switch out of idle counts under no exit."""
    return {k: hv_exit_pct(r, lab, k) for k in HV_EXITS}


CAUSES = {"cause_ext_intr_pct": "credit_cs_exit_ext_intr", "cause_hlt_pct": "credit_cs_exit_hlt",
          "cause_no_exit_pct": "credit_cs_exit_none", "cause_tasklet_pct": "credit_cs_tasklet",
          "cause_wake_pct": "credit_cs_wake"}


def cause_share(r: Mapping[str, Any], lab: str, key: str) -> float:
    """One share of :func:`cause_shares` (its counters summed over the seeds)."""
    n = counter(r, lab, "credit_cs_exit_")
    return math.nan if n == 0 else 100 * counter(r, lab, CAUSES[key]) / n


def cause_shares(r: Mapping[str, Any], lab: str) -> dict[str, float]:
    """Figure 12: the share of context switches taken in each kind of VM exit, from credit's
    per-cause counters (hv/sched/switch_causes.rs): external-interrupt exits (device
    interrupts and their idle-vCPU tasklets, timer interrupts, event-check IPIs of wake-ups),
    HLT exits (blocking), and switches on an idle pCPU (no exit)."""
    return {k: cause_share(r, lab, k) for k in CAUSES}


TABLE1_FIG12 = Reproduction(
    name="csrc-table1-fig12", seed_file=S001, figure="Table 1 and Figure 12",
    title="Unoptimised Xen at peak load: scheduler calls, context switches, hypervisor share",
    runs=_t1_runs, measure=_t1_measure,
    quantities=[
        Quantity("sched_calls_per_pcpu_s", "scheduler calls", "/s/pCPU", "scheduler events"),
        Quantity("context_switches_per_pcpu_s", "context switches", "/s/pCPU", "scheduler events"),
        Quantity("switches_per_sched_call", "context switches per scheduler call", "×", "ratio"),
        Quantity("hv_pct", "hypervisor share of CPU", "%", "CPU"),
        Quantity("hv_ext_intr_pct", "hypervisor share in external-interrupt exits", "%", "CPU"),
        Quantity("hv_apic_access_pct", "hypervisor share in APIC-access exits (EOI and ICR writes)", "%", "CPU"),
        Quantity("hv_hlt_pct", "hypervisor share in HLT exits (idle state left out)", "%", "CPU"),
        Quantity("hv_io_pct", "hypervisor share in I/O-instruction exits", "%", "CPU"),
        Quantity("hv_other_exits_pct", "hypervisor share in the other exits (hypercall, PAUSE)", "%", "CPU"),
        Quantity("hv_no_exit_pct", "hypervisor share outside any VM exit (idle pCPUs)", "%", "CPU"),
        Quantity("context_switch_cpu_pct", "context switching share of CPU", "%", "CPU"),
        Quantity("busy_pct", "CPU utilisation", "%", "CPU"),
        Quantity("cause_ext_intr_pct", "switches caused by external-interrupt exits", "%", "causes"),
        Quantity("cause_hlt_pct", "switches caused by HLT exits", "%", "causes"),
        Quantity("cause_no_exit_pct", "switches on an idle pCPU (no VM exit)", "%", "causes"),
        Quantity("cause_tasklet_pct", "of which idle-vCPU tasklet switches (external-interrupt exits)", "%", "causes"),
        Quantity("cause_wake_pct", "of which wake-up tickles (preemption or idle pCPU)", "%", "causes"),
    ],
    claims=[
        Claim("most scheduler calls switch vCPUs (context switches ≥ 80 % of scheduler calls)",
              lambda q: q["switches_per_sched_call"] >= 0.8),
        # Table 1: "cycles consumed by the context switch process occupy more than 27% of total
        # hypervisor cycles at peak performance" (≥ 25 % until session 16).
        Claim("context switching is more than 27 % of the hypervisor's time",
              lambda q: q["context_switch_cpu_pct"] > 0.27 * q["hv_pct"]),
        # Added in session 16 by the completeness rule (expected.py's module docstring).
        # §4.2, Figure 9: "The VMExit event of 'External Interrupt' consumes the largest
        # portion ... The rest 52 VMExit only contribute less than 2% CPU utilization."
        Claim("external-interrupt exits take the largest part of the hypervisor's time (Figure 9)",
              lambda q: q["hv_ext_intr_pct"] > max(q["hv_apic_access_pct"], q["hv_hlt_pct"], q["hv_io_pct"],
                                                   q["hv_other_exits_pct"])),
        Claim("the exits other than external interrupt, APIC access, HLT and I/O instruction take "
              "less than 2 % of the CPU (Figure 9)",
              lambda q: q["hv_other_exits_pct"] < 2),
        # §4.3, Figure 12: "most of the context switches take place in the 'External Interrupt'
        # VMExit events".
        Claim("most context switches are taken in external-interrupt exits (Figure 12)",
              lambda q: q["cause_ext_intr_pct"] > 50),
    ],
    fitted=["context_switches_per_pcpu_s", "context_switch_cpu_pct", "busy_pct",
            "hv_ext_intr_pct", "hv_apic_access_pct", "hv_hlt_pct", "hv_io_pct", "cause_hlt_pct"],
    notes="Baseline: credit with tasklets in the idle vCPU and no rate control, at the load "
          "fitted to the seed's peak (context switches per pCPU-second, Table 1, and 92 % CPU, "
          "Figure 16). Xen switches lazily (session 14, docs/policies.md ## "
          "lazy_context_switch): a switch to the idle vCPU, and from it back to the vCPU whose "
          "state the pCPU kept, costs the scheduler path (sched_call_ns, since session 22 the host "
          "model's estimated fifth of the fitted full switch) and no state switch. "
          "The context-switching share is the full switches times the world switch's cost plus "
          "the lazy ones times the scheduler call's; the full switch's cost is fitted to Table "
          "1's share (calibration.toml csrc.host.world_switch_ns), so the share is calibration "
          "too. Scheduler calls are not fitted. The hypervisor's share by VM exit (Figure 9) "
          "counts every hypervisor cost under the exit whose handling it is part of (docs/"
          "model.md §2.2); since session 13 the handling costs of external-interrupt, HLT and "
          "APIC-access exits (the EOI write of each virtual interrupt) are fitted to their "
          "Figure 9 shares at the peak (calibration.toml csrc.host.exit_*), since session 18 "
          "with the I/O-instruction exit of one emulated port access per request "
          "(PORT_IO_PER_REQUEST, a structural estimate: the seed names no port), so the total "
          "is their sum, the ICR writes' and the work on idle pCPUs. Left out: the other 52 exit "
          "reasons (< 2 %); the costs are times per exit at the peak's CPI and scale with the "
          "socket's CPI at other loads (host.costs.hv_costs_reference_cpi). The causes of "
          "context switches (Figure 12) are credit's per-cause counters: the VM exit during "
          "which the scheduler switched (external interrupt: device interrupts with both "
          "switches of an idle-vCPU tasklet, timer interrupts, wake-up IPIs; HLT: blocking; "
          "none: the pCPU ran the idle vCPU). Since session 13 the share in HLT exits is "
          "fitted too, with Figure 4's 1-tile response, through the requests' I/O wait "
          "(calibration.toml csrc.specvirt.disk_us).",
)


# ---- Tables 3 and 4: softirq tasklets, then CSRC, each at its own peak --------------------

#: Loads around the configurations' peaks (in both sweeps of Figures 15-17, so that a run of
#: all three reproductions simulates them once). They must reach below every configuration's
#: compliant peak and its noise band, or the peak is clipped to the first load: since session
#: 14 (Xen's lazy context switch) the peaks lie near 7.4 tiles, so the sweeps start at
#: Figures 15-17's next load below 8 (6 tiles; 4 in the quick mode). Session 15 (the idle-vCPU
#: tasklet's exit order, the original re-solved): peaks 8.05-8.44 tiles, the lowest noise-band
#: edge 6.72 (quick: 5.75), the highest 9.12 (quick 9.31); the rule still holds. Session 16
#: (the total response's reading): peaks 9.19 and 9.57 tiles, bands 9.04-9.79 (quick
#: 9.05-9.83), the per-role reading's peaks 8.16-8.49 (quick 8.15-9.01): the sweep holds them.
PEAK_SWEEP = (6, 8, 9, 10, 11, 12, 13)
QUICK_PEAK_SWEEP = (4, 8, 9, 10, 11)


def _t34_runs(quick: bool) -> list[Run]:
    return (_runs((PEAK_TILES,), ["original"], quick)
            + _runs(QUICK_PEAK_SWEEP if quick else PEAK_SWEEP, ["softirq", "csrc"], quick))


def peaks(r: Mapping[str, Any], tiles: tuple[int, ...]) -> dict[str, float | None]:
    """Each configuration's peak load in tiles: the original's is the fitted peak (9 tiles);
    softirq tasklets' and CSRC's are their compliant peaks (:func:`compliant_tiles`; None when
    not within ``tiles``)."""
    return {"original": float(PEAK_TILES),
            **{c: compliant_tiles(r, c, tiles) for c in ("softirq", "csrc")}}


def _t34_measure(r: Mapping[str, Any]) -> dict[str, float]:
    # Seed §5.3: "After applying the CSRC method, the number of [scheduler calls] at peak
    # performance (with CSRC method, system obtains higher performance than previous result)
    # reduces slightly as shown in Table 4": each configuration is counted at its own peak.
    sweep = sweep_of(r, PEAK_SWEEP, QUICK_PEAK_SWEEP, ("softirq", "csrc"))
    pk = peaks(r, sweep)
    band = {(c, side): compliant_tiles(r, c, sweep, m * BAND_SE)
            for c in ("softirq", "csrc") for side, m in (("lo", -1), ("hi", 1))}
    per_role = {c: per_role_compliant_tiles(r, c, sweep) for c in ("softirq", "csrc")}
    nan = math.nan

    def at_peak(c: str, fn, *args) -> float:
        return nan if pk[c] is None else at_tiles(r, c, pk[c], sweep, fn, *args)

    def rate(c: str, key: str) -> float:
        return at_peak(c, total, key)

    def by_cause(c: str, cause: str) -> float:
        f = lambda rr, lab: (total(rr, lab, "context_switches_per_pcpu_s")
                             * cause_share(rr, lab, cause) / 100)
        return at_peak(c, f)

    sc = {c: rate(c, "sched_calls_per_pcpu_s") for c in CONFIGS}
    cs = {c: rate(c, "context_switches_per_pcpu_s") for c in CONFIGS}
    cs9 = {c: total(r, label(PEAK_TILES, c), "context_switches_per_pcpu_s") for c in ("softirq", "csrc")}
    return {
        "sched_softirq": sc["softirq"], "cs_softirq": cs["softirq"],
        "sched_csrc": sc["csrc"], "cs_csrc": cs["csrc"],
        "sched_reduction_softirq_pct": 100 * (1 - sc["softirq"] / sc["original"]),
        "cs_reduction_softirq_pct": 100 * (1 - cs["softirq"] / cs["original"]),
        "sched_reduction_csrc_pct": 100 * (1 - sc["csrc"] / sc["softirq"]),
        "cs_reduction_csrc_pct": 100 * (1 - cs["csrc"] / cs["softirq"]),
        "peak_tiles_softirq": nan if pk["softirq"] is None else pk["softirq"],
        "peak_tiles_csrc": nan if pk["csrc"] is None else pk["csrc"],
        **{f"peak_tiles_{c}_{side}": nan if x is None else x for (c, side), x in band.items()},
        **{f"peak_tiles_{c}_per_role": nan if x is None else x for c, x in per_role.items()},
        "cs_reduction_csrc_same_load_pct": 100 * (1 - cs9["csrc"] / cs9["softirq"]),
        # What the switches left after softirq tasklets are (per pCPU-second).
        "cs_softirq_block": by_cause("softirq", "cause_hlt_pct"),
        "cs_softirq_wake": by_cause("softirq", "cause_wake_pct"),
        "cs_original_not_tasklet": cs["original"] - by_cause("original", "cause_tasklet_pct"),
    }


TABLE3_TABLE4 = Reproduction(
    name="csrc-table3-table4", seed_file=S001, figure="Tables 3 and 4",
    title="Scheduler calls and context switches at peak: softirq tasklets, then CSRC",
    runs=_t34_runs, measure=_t34_measure,
    quantities=[
        Quantity("sched_softirq", "scheduler calls, softirq tasklets", "/s/pCPU", "scheduler events"),
        Quantity("cs_softirq", "context switches, softirq tasklets", "/s/pCPU", "scheduler events"),
        Quantity("sched_csrc", "scheduler calls, softirq tasklets + CSRC", "/s/pCPU", "scheduler events"),
        Quantity("cs_csrc", "context switches, softirq tasklets + CSRC", "/s/pCPU", "scheduler events"),
        Quantity("sched_reduction_softirq_pct", "scheduler calls saved by softirq tasklets", "%", "reductions"),
        Quantity("cs_reduction_softirq_pct", "context switches saved by softirq tasklets", "%", "reductions"),
        Quantity("sched_reduction_csrc_pct", "scheduler calls saved by CSRC", "%", "reductions"),
        Quantity("cs_reduction_csrc_pct", "context switches saved by CSRC", "%", "reductions"),
        Quantity("peak_tiles_softirq", "peak load of softirq tasklets (compliant peak)", "tiles", "peak load"),
        Quantity("peak_tiles_csrc", "peak load of softirq tasklets + CSRC (compliant peak)", "tiles", "peak load"),
        Quantity("peak_tiles_softirq_lo", "softirq tasklets' peak, noise band: mean + 2 SE crosses the limit", "tiles", "peak load"),
        Quantity("peak_tiles_softirq_hi", "softirq tasklets' peak, noise band: mean - 2 SE crosses the limit", "tiles", "peak load"),
        Quantity("peak_tiles_csrc_lo", "CSRC's peak, noise band: mean + 2 SE crosses the limit", "tiles", "peak load"),
        Quantity("peak_tiles_csrc_hi", "CSRC's peak, noise band: mean - 2 SE crosses the limit", "tiles", "peak load"),
        Quantity("peak_tiles_softirq_per_role", "softirq tasklets' peak under the per-role reading (sessions 9-15, not judged)", "tiles", "peak load"),
        Quantity("peak_tiles_csrc_per_role", "CSRC's peak under the per-role reading (sessions 9-15, not judged)", "tiles", "peak load"),
        Quantity("cs_reduction_csrc_same_load_pct", "context switches saved by CSRC at the same load (9 tiles)", "%", "reductions"),
        Quantity("cs_softirq_block", "softirq tasklets: switches after blocking (HLT)", "/s/pCPU", "causes"),
        Quantity("cs_softirq_wake", "softirq tasklets: switches for wake-ups", "/s/pCPU", "causes"),
        Quantity("cs_original_not_tasklet", "original: switches other than idle-vCPU tasklets", "/s/pCPU", "causes"),
    ],
    claims=[
        Claim("softirq tasklets cut context switches by at least a third",
              lambda q: q["cs_reduction_softirq_pct"] >= 100 / 3),
        Claim("softirq tasklets cut scheduler calls by at least a third",
              lambda q: q["sched_reduction_softirq_pct"] >= 100 / 3),
        Claim("CSRC cuts context switches further",
              lambda q: q["cs_reduction_csrc_pct"] > 0),
        Claim("CSRC leaves scheduler calls nearly unchanged (within 5 %)",
              lambda q: abs(q["sched_reduction_csrc_pct"]) <= 5),
        Claim("CSRC saves more context switches than scheduler calls",
              lambda q: q["cs_reduction_csrc_pct"] > q["sched_reduction_csrc_pct"]),
        # §5.3: the counts with CSRC are at its peak, where "with CSRC method, system obtains
        # higher performance than previous result" (softirq tasklets'); §6: "more loads can be
        # added to achieve higher throughput with CSRC". Added in session 16 with the total
        # response's reading; under sessions 9-15's per-role reading it would not have held.
        # §5.3: with softirq tasklets "the number of context switch (12006) is very close to the
        # number of scheduler triggered (13668)"; the same bound as Table 1's claim. Added in
        # session 16 by the completeness rule (expected.py's module docstring).
        Claim("with softirq tasklets most scheduler calls still switch vCPUs (context switches "
              "≥ 80 % of scheduler calls at their peak)",
              lambda q: q["cs_softirq"] >= 0.8 * q["sched_softirq"]),
        Claim("CSRC's compliant peak lies at a higher load than softirq tasklets' and than the "
              "original's (9 tiles)",
              lambda q: q["peak_tiles_csrc"] > max(q["peak_tiles_softirq"], PEAK_TILES)),
    ],
    notes="Each configuration is counted at its own peak, as the seed does (§5.3: the counts "
          "of Table 4 are 'at peak performance (with CSRC method, system obtains higher "
          "performance than previous result)'): the original at the fitted peak (9 tiles, "
          "csrc-table1-fig12), softirq tasklets and CSRC at their compliant peaks, the first load "
          "where the expected total response time (SPECvirt's geometric mean over web, mail and "
          "app, the seed's QoS indicator) exceeds the original's at its peak (Figures 15-17; "
          "since session 16, before it each role against its own mean in the original, whose "
          "peaks are shown as _per_role): response times over the requests completed after a "
          "500 ms warm-up, the mean over simulation seeds 1-8 on a monotone fit along the "
          "sweep, margin 0 (QoS is a fixed threshold on what a run measures), interpolated "
          "linearly between the loads swept; the peaks' noise band (_lo, _hi) is where the "
          "fit of the mean plus and minus twice the standard error of the difference crosses "
          "the limit (csrc.py's docstring gives the noise analysis behind this). Every count is the mean over simulation seeds 1-8. The saving at the same load (9 tiles) is shown beside it.",
)


# ---- Figures 15-17: CPU utilisation, throughput per utilisation, response time -------------

def _f1517_runs(quick: bool) -> list[Run]:
    return _runs(QUICK_TILES if quick else FULL_TILES, list(CONFIGS), quick)


def _f1517_measure(r: Mapping[str, Any]) -> dict[str, float]:
    tiles = sweep_of(r, FULL_TILES, QUICK_TILES, tuple(CONFIGS))
    peak = {c: label(PEAK_TILES, c) for c in CONFIGS}
    light = {c: label(LIGHT_TILES, c) for c in CONFIGS}
    q: dict[str, float] = {f"busy_{c}_pct": 100 * busy(r, peak[c]) for c in CONFIGS}
    # Compliant peak: the original's is the fitted peak by construction; another
    # configuration's is the first load where the monotone fit of its mean total response
    # crosses the original's there, margin 0 (compliant_tiles).
    limit = response_ms(r, peak["original"])
    tpu_orig = throughput_per_s(r, peak["original"]) / busy(r, peak["original"])
    for c in ("softirq", "csrc"):
        p = compliant_peak(r, c, tiles)
        q[f"tput_per_util_gain_{c}_pct"] = math.nan if p is None else 100 * (p[0] / p[1] / tpu_orig - 1)
        q[f"tput_gain_{c}_pct"] = (math.nan if p is None
                                   else 100 * (p[0] / throughput_per_s(r, peak["original"]) - 1))
        q[f"tput_per_util_same_load_gain_{c}_pct"] = 100 * (
            throughput_per_s(r, peak[c]) / busy(r, peak[c]) / tpu_orig - 1)
    near = [t for t in tiles if PEAK_TILES - 1 <= t <= PEAK_TILES]
    q["resp_reduction_near_peak_pct"] = max(
        100 * (1 - response_ms(r, label(t, "csrc")) / response_ms(r, label(t, "original")))
        for t in near)
    q["resp_original_peak_ms"] = limit
    q["resp_csrc_peak_ms"] = response_ms(r, peak["csrc"])
    q["resp_light_csrc_over_original"] = response_ms(r, light["csrc"]) / response_ms(r, light["original"])
    q["resp_light_csrc_over_softirq"] = response_ms(r, light["csrc"]) / response_ms(r, light["softirq"])
    q["busy_light_original_pct"] = 100 * busy(r, light["original"])
    q["busy_light_csrc_pct"] = 100 * busy(r, light["csrc"])
    # The original's growth with load (§4.1): CPU utilisation along Figure 4, CPI (Figure 7)
    # and LLC misses per instruction (Figure 8) from 1 to 9 tiles, the latter two being what
    # the shared-LLC pressure was fitted to (calibration.toml csrc.host.*).
    orig = lambda t: label(t, "original")
    q["resp_original_one_tile_ms"] = response_ms(r, orig(ONE_TILE))
    q["resp_original_8_tiles_ms"] = response_ms(r, orig(PEAK_TILES - 1))
    for a, b in ((2, 1), (4, 2), (8, 4)):
        q[f"busy_growth_{a}_over_{b}"] = busy(r, orig(a)) / busy(r, orig(b))
    q["cpi_growth_original"] = (total(r, peak["original"], "llc_cpi_factor")
                                / total(r, orig(ONE_TILE), "llc_cpi_factor"))
    q["llc_miss_growth_original"] = (total(r, peak["original"], "llc_miss_rate_rel")
                                     / total(r, orig(ONE_TILE), "llc_miss_rate_rel"))
    q["tlb_miss_growth_original"] = (total(r, peak["original"], "tlb_miss_rate_rel")
                                     / total(r, orig(ONE_TILE), "tlb_miss_rate_rel"))
    # Figure 19: CPI and LLC misses with CSRC (and softirq tasklets) against the original at
    # the same load, 9 tiles.
    q["cpi_reduction_csrc_pct"] = 100 * (1 - total(r, peak["csrc"], "llc_cpi_factor")
                                         / total(r, peak["original"], "llc_cpi_factor"))
    q["llc_miss_reduction_csrc_pct"] = 100 * (1 - total(r, peak["csrc"], "llc_miss_rate_rel")
                                              / total(r, peak["original"], "llc_miss_rate_rel"))
    q["tlb_miss_reduction_csrc_pct"] = 100 * (1 - total(r, peak["csrc"], "tlb_miss_rate_rel")
                                              / total(r, peak["original"], "tlb_miss_rate_rel"))
    # Figure 20: where CSRC's CPU saving at the same load (9 tiles) lies, in points of CPU:
    # the hypervisor's part and the guests' (the model has no dom0 work, module docstring).
    hv = {c: 100 * total(r, peak[c], "hv_fraction") for c in ("original", "csrc")}
    q["hv_part_saved_csrc_pts"] = hv["original"] - hv["csrc"]
    q["guest_part_saved_csrc_pts"] = ((q["busy_original_pct"] - hv["original"])
                                      - (q["busy_csrc_pct"] - hv["csrc"]))
    # Path length (module docstring, "Path length"): the original's growth from 4 to 8 tiles
    # (§4.1, Figure 7) and CSRC's saving against the original at 9 tiles (§6, Figure 18).
    q["pl_growth_original_4_to_8"] = (path_length_us(r, orig(8)) / path_length_us(r, orig(LIGHT_TILES)))
    q["pl_growth_original_1_to_4"] = (path_length_us(r, orig(LIGHT_TILES)) / path_length_us(r, orig(ONE_TILE)))
    q["pl_growth_original_1_to_9"] = (path_length_us(r, orig(PEAK_TILES)) / path_length_us(r, orig(ONE_TILE)))
    q["pl_reduction_csrc_pct"] = 100 * (1 - path_length_us(r, peak["csrc"])
                                        / path_length_us(r, peak["original"]))
    return q


FIG15_17 = Reproduction(
    name="csrc-fig15-17", seed_file=S001, figure="Figures 15, 16, 17 (and 4)",
    title="CPU utilisation, throughput per CPU utilisation and response time with tasklets and CSRC",
    runs=_f1517_runs, measure=_f1517_measure,
    quantities=[
        Quantity("busy_original_pct", "CPU at peak load, original", "%", "CPU at peak load"),
        Quantity("busy_softirq_pct", "CPU at peak load, softirq tasklets", "%", "CPU at peak load"),
        Quantity("busy_csrc_pct", "CPU at peak load, softirq tasklets + CSRC", "%", "CPU at peak load"),
        Quantity("hv_part_saved_csrc_pts", "CPU saved by tasklets and CSRC at peak load, hypervisor part", "points", "CPU at peak load"),
        Quantity("guest_part_saved_csrc_pts", "CPU saved by tasklets and CSRC at peak load, guest part", "points", "CPU at peak load"),
        Quantity("tput_per_util_gain_csrc_pct", "throughput per CPU at the compliant peak, CSRC vs original", "%", "throughput per CPU"),
        Quantity("tput_per_util_gain_softirq_pct", "throughput per CPU at the compliant peak, softirq vs original", "%", "throughput per CPU"),
        Quantity("tput_gain_csrc_pct", "throughput at the compliant peak, CSRC vs original", "%", "throughput per CPU"),
        Quantity("tput_gain_softirq_pct", "throughput at the compliant peak, softirq vs original", "%", "throughput per CPU"),
        Quantity("tput_per_util_same_load_gain_csrc_pct", "throughput per CPU at the same load, CSRC vs original", "%", "throughput per CPU"),
        Quantity("resp_reduction_near_peak_pct", "response time saved near peak (8-9 tiles), CSRC vs original", "%", "response time"),
        Quantity("resp_original_peak_ms", "response time at peak, original", "ms", "response time (ms)"),
        Quantity("resp_csrc_peak_ms", "response time at peak, CSRC", "ms", "response time (ms)"),
        Quantity("resp_light_csrc_over_original", "response time at light load (4 tiles), CSRC / original", "×", "light load"),
        Quantity("resp_light_csrc_over_softirq", "response time at light load (4 tiles), CSRC / softirq alone", "×", "light load"),
        Quantity("resp_original_one_tile_ms", "response time at 1 tile, original", "ms", "response time (ms)"),
        Quantity("resp_original_8_tiles_ms", "response time at 8 tiles, original", "ms", "response time (ms)"),
        Quantity("busy_growth_2_over_1", "CPU utilisation, original, 2 tiles / 1 tile", "×", "growth with load"),
        Quantity("busy_growth_4_over_2", "CPU utilisation, original, 4 tiles / 2 tiles", "×", "growth with load"),
        Quantity("busy_growth_8_over_4", "CPU utilisation, original, 8 tiles / 4 tiles", "×", "growth with load"),
        Quantity("cpi_growth_original", "CPI of guest compute, original, 9 tiles / 1 tile", "×", "growth with load"),
        Quantity("llc_miss_growth_original", "LLC misses per instruction, original, 9 tiles / 1 tile", "×", "growth with load"),
        Quantity("tlb_miss_growth_original", "TLB misses per instruction, original, 9 tiles / 1 tile", "×", "growth with load"),
        Quantity("pl_growth_original_4_to_8", "path length (instructions per request), original, 8 tiles / 4 tiles", "×", "growth with load"),
        Quantity("pl_growth_original_1_to_4", "path length, original, 4 tiles / 1 tile", "×", "growth with load"),
        Quantity("pl_growth_original_1_to_9", "path length, original, 9 tiles / 1 tile", "×", "growth with load"),
        Quantity("cpi_reduction_csrc_pct", "CPI of guest compute saved by tasklets and CSRC (9 tiles)", "%", "CPI, cache misses and path length"),
        Quantity("llc_miss_reduction_csrc_pct", "LLC misses per instruction saved by tasklets and CSRC (9 tiles)", "%", "CPI, cache misses and path length"),
        Quantity("tlb_miss_reduction_csrc_pct", "TLB misses per instruction saved by tasklets and CSRC (9 tiles)", "%", "CPI, cache misses and path length"),
        Quantity("pl_reduction_csrc_pct", "path length (instructions per request) saved by tasklets and CSRC (9 tiles)", "%", "CPI, cache misses and path length"),
    ],
    claims=[
        Claim("CPU utilisation at the same (peak) load falls: original > softirq tasklets > + CSRC",
              lambda q: q["busy_original_pct"] > q["busy_softirq_pct"] > q["busy_csrc_pct"]),
        Claim("throughput per CPU utilisation at the compliant peak is higher with CSRC",
              lambda q: q["tput_per_util_gain_csrc_pct"] > 0),
        Claim("response time near peak is lower with tasklets and CSRC",
              lambda q: q["resp_reduction_near_peak_pct"] > 0),
        Claim("at light load the response time with tasklets and CSRC is slightly higher than the "
              "original's (by at most 20 %)",
              lambda q: 1.0 < q["resp_light_csrc_over_original"] <= 1.2),
        Claim("no obvious change at light load: CPU utilisation within 10 % of the original's",
              lambda q: abs(q["busy_light_csrc_pct"] / q["busy_light_original_pct"] - 1) <= 0.10),
        # Added in session 16 by the completeness rule (expected.py's module docstring).
        # §6, Figure 20: "both guest and hypervisor parts obtain lower CPU utilization".
        Claim("at the same (peak) load CSRC lowers both the guests' and the hypervisor's part of the CPU",
              lambda q: q["hv_part_saved_csrc_pts"] > 0 and q["guest_part_saved_csrc_pts"] > 0),
        # §6: "reducing both CPI and PL"; "Less number of context switches reduces the cache miss
        # ratio" (Figures 18 and 19, 9 tiles).
        Claim("at 9 tiles CSRC lowers the CPI, the path length and the LLC and TLB misses per instruction",
              lambda q: min(q["cpi_reduction_csrc_pct"], q["pl_reduction_csrc_pct"],
                            q["llc_miss_reduction_csrc_pct"], q["tlb_miss_reduction_csrc_pct"]) > 0),
        # §4.1, Figure 4: the total response "keeps relatively low until close to the peak
        # throughput from 0.13ms to 0.32ms (146% increase), an exponential-like increase from
        # 8-tile to 9-tile": most of the rise from 1 to 9 tiles comes in the last tile.
        Claim("the original's response time rises more from 8 to 9 tiles than from 1 to 8 (Figure 4)",
              lambda q: q["resp_original_peak_ms"] - q["resp_original_8_tiles_ms"]
              > q["resp_original_8_tiles_ms"] - q["resp_original_one_tile_ms"]),
        # §4.1, Figure 7: "the trend of PL keeps relatively flat when system load is low, but
        # increases slightly (5.9% increase from 4-tile to 8-tile)".
        Claim("the original's path length grows less from 1 to 4 tiles than from 4 to 8 (Figure 7)",
              lambda q: q["pl_growth_original_1_to_4"] < q["pl_growth_original_4_to_8"]),
        # §4.1: "Whereas CPI increases sharply as throughput grows (88% increase from 1-tile to
        # 9-tile). Obviously, the dramatic increase of CPI is the major contributor".
        Claim("from 1 to 9 tiles the original's CPI grows more than its path length (Figure 7)",
              lambda q: q["cpi_growth_original"] > q["pl_growth_original_1_to_9"]),
    ],
    fitted=["busy_original_pct", "cpi_growth_original", "llc_miss_growth_original",
            "tlb_miss_growth_original", "resp_original_one_tile_ms"],
    notes="A load of t tiles is t sets of the six server VMs on 24 pCPUs, every VM at the "
          "fitted rate factor (since session 17; before, the rates of one set of two tiles on 6 "
          "pCPUs were scaled by t/9). "
          "Response time is SPECvirt's: the geometric mean of the web, mail and application "
          "servers' mean response times, over the requests completed after a 500 ms warm-up. The compliant peak of softirq tasklets and of CSRC is "
          "the first load (interpolated in the sweep) where the expected total response (the "
          "mean over simulation seeds 1-8, on a monotone fit along the sweep) exceeds the "
          "original's at its peak, margin 0 (csrc-table3-table4 reports the band where the "
          "seeds place it, and the peaks under sessions 9-15's per-role reading): the seed's "
          "QoS indicator is the total response (§1, §4.1), by which §6 explains the higher "
          "compliant peak, and the original's peak is the one point known to be compliant. Since session 12 guest compute's CPI grows with "
          "the footprint active on each socket's LLC (hv/llc.rs), since session 14 also with "
          "the translations active on each pCPU's TLB (hv/tlb.rs), since session 15 with Xen "
          "4.1's flush of the guest TLB at every full context switch, its walks at a sourced 40 "
          "cycles (TLB_WALK_CYCLES, derived, not fitted), fitted on the original alone "
          "to its CPI, LLC and TLB miss growths from 1 to 9 tiles (Figures 7-8; CPI and misses count "
          "the threads' cache refills, as a processor's counters would); the CPI, LLC and TLB "
          "savings of tasklets and CSRC (Figure 19) come out of the simulation. They depend on "
          "which point of the fit is taken, more than the fit can tell apart: after session 14's "
          "choice (by the growths alone), the other points within the fit's noise (sums of "
          "squared errors 0.0010-0.0015) gave CSRC's CPI saving at 9 tiles 1.3-5.0 % and its "
          "LLC saving 1.7-6.8 % (scratch, seeds 1-8, 3000 ms; at the chosen point 4.8 and 6.2 %, "
          "their standard error over seeds about 0.3 points): about 5 % at the LLC's stall ratio "
          "3 and exponent 0.6, 1.3-3.5 % at ratios 3.5-5 or exponent 0.65. With Xen's lazy context "
          "switch (session 14) the grid was run again on the original by the same criterion (LLC "
          "stall ratio 4 chosen, exponent 0.6; calibration.toml): CSRC's CPI saving at 9 tiles is "
          "then 1.4 % and its LLC saving 1.6 % (1.2 and 1.6 % at ratio 3; 1.0-1.8 and 1.4-2.3 % at "
          "the other points within that fit's noise). Since session 13 "
          "the hypervisor's costs per event (world switch, exits, tasklet) are stated at the "
          "original's peak CPI and scale with the CPI of their socket (seed §6: its part 'is "
          "caused by both PL and CPI'). Path length (session 15; csrc.py's docstring, 'Path "
          "length'): the instructions of guest and hypervisor per request completed, counted as "
          "work at CPI factor 1 (guest compute's work, the guest's interrupt handlers, the "
          "hypervisor's costs / the reference CPI); neither quantity is fitted. Guest compute "
          "gives 28.5 µs a request and the interrupt handlers 4.2 µs at every load and "
          "configuration; what moves is the hypervisor's part: in the original 9.8 µs a request "
          "at 4 tiles (23.1 % of the path length), 13.8 at 8 (29.7 %) and 14.2 at 9 (30.4 %), "
          "with CSRC 11.9 at 9 tiles (26.7 %; measured by vmsched reproduce csrc-fig15-17, full mode, "
          "seeds 1-8, from its runs' totals, session 15 after the wake-race fix and the "
          "original's re-solve). From 4 to 8 tiles the "
          "original takes more external-interrupt exits per request (0.56 to 1.64: interrupts "
          "reach busy pCPUs instead of idle ones) and more full switches (0.87 to 1.54, fewer "
          "lazy ones); at 9 tiles CSRC makes 0.96 full switches a request against the original's "
          "1.58. The saving "
          "near the peak is 23.3 % in session 15 after the wake-race fix (a wake-up raised in a "
          "vCPU's exit takes effect when the exit is handled; CSRC's CPI, LLC and TLB savings at 9 "
          "tiles 3.7, 4.2 and 9.3 %), 17.7 % in session 15 after credit's steal fixes (the scheduling tail, 4.1's "
          "steal order) and the original's refit (CSRC's CPI, LLC and TLB savings at 9 tiles 1.9, "
          "1.9 and 8.0 %), 21.9 % in session 15 with Xen 4.1's TLB flush at 40 cycles a walk and "
          "the cache model refitted (CSRC's CPI, LLC and TLB savings at 9 tiles 2.3, 2.3 and 8.1 %), "
          "23.8 % in session 15 after the fix of the idle-vCPU tasklet's exit "
          "order and the original's re-solve at the same cache point (CSRC's CPI and LLC savings "
          "at 9 tiles 1.9 and 2.2 %), 17.5 % in session 14 with the lazy switch and the cache model refitted "
          "under it (18 % before that refit), 32 % at 9 tiles in session 14 before the lazy switch "
          "(the TLB pressure, with the LLC's "
          "exponent and stall ratios refitted), 36 % in session 13 after the LLC stall ratio's refit "
          "(k 4; 29 % at k 3 with the hypervisor's costs with the "
          "CPI; 31 % with them fixed, after the per-exit costs and the I/O wait were fitted), "
          "28 % in session 12 (the LLC pressure, refitted after the "
          "fix of the cache-refill model; 35 % with that fix alone), 32 % "
          "over seeds 1-8 at 9 tiles since session 10 (the host's sourced memory refill rate, refills "
          "charged by the VMs' memory nodes, and the refit); 31 % in session 9 (the host's "
          "sourced cross-socket costs); 24 % in session 8 (the two-level cache), 42 % before it, when one seed's app "
          "VM dominated the original's mean; the refit for 4.1's tasklet priority had taken it "
          "from 67 % (seeds 1-4, an app VM of seed 1 in overload at 9 tiles) to 31 %. In the quick mode the original at 9 tiles "
          "runs 3000 ms (the QoS limit), the others 1000 ms; its rates over 1000 ms differ by "
          "at most 1.1 % (csrc.py's docstring).",
)

REPRODUCTIONS = [TABLE1_FIG12, TABLE3_TABLE4, FIG15_17]
