"""The seeds' own numbers: the only place they live.

Each entry is the value a seed document reports for a quantity of a reproduction, with where
it says so. Reproductions never import this module (a test checks it, and another re-runs the
quick reproductions with these values scrambled and expects identical simulated values); the
report reads it after the simulation to put each seed value beside the simulated one.

``analytic=True`` marks values the seed derives analytically (±5 % tolerance instead of
±25 %). ``GAPS`` holds, per reproduction and quantity, why the model cannot get within
tolerance, where we know; the report prints it next to the failing quantity.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Seed:
    value: float
    source: str
    analytic: bool = False


S000 = "000_e4beefc956462be7.txt"
S001 = "001_3582712ef98dbca6.txt"
S002 = "002_4e0f89b222427189.txt"
S003 = "003_4dc0d6f8eb99c3eb.txt"
S004 = "004_3bece153636bca8a.txt"

SEED: dict[str, dict[str, Seed]] = {
    # -- seed 000: FlexCore (vCPU ballooning on KVM), PARSEC dedup, vips, swaptions,
    #    streamcluster; 2 VMs of 12 vCPUs on 12 pCPUs --------------------------------------
    "flexcore-fig1": {
        "dedup_total_ratio": Seed(3.2, f"{S000} §2.1 (text of Fig. 1): total time 3.2x longer in 2VM"),
        "vips_total_ratio": Seed(4.1, f"{S000} §2.1 (text of Fig. 1): 4.1x"),
        "swaptions_total_ratio": Seed(2.7, f"{S000} §2.1 (text of Fig. 1): 2.7x"),
        "streamcluster_total_ratio": Seed(2.6, f"{S000} §2.1 (text of Fig. 1): 2.6x"),
        "dedup_kernel_ratio": Seed(3.7, f"{S000} §2.1 (text of Fig. 1): kernel time 3.7x longer in 2VM"),
        "vips_kernel_ratio": Seed(8.7, f"{S000} §2.1 (text of Fig. 1): 8.7x"),
        "swaptions_kernel_ratio": Seed(9.0, f"{S000} §2.1 (text of Fig. 1): 9.0x"),
        "streamcluster_kernel_ratio": Seed(6.3, f"{S000} §2.1 (text of Fig. 1): 6.3x"),
    },
    "flexcore-fig2-fig8": {
        # §4.3 gives numbers for dedup only; the other bars of Figs. 2 and 8 are plots without
        # numbers in the text ("for other tested applications as well, the time percentage drops").
        "dedup_ipi_pct_2vm": Seed(71, f"{S000} §4.3 (Fig. 8): dedup 2VM, function-call IPI 71 %"),
        "dedup_spin_pct_2vm": Seed(15, f"{S000} §4.3 (Fig. 8): dedup 2VM, spinlock 15 %"),
        "dedup_ipi_pct_flexcore": Seed(14, f"{S000} §4.3 (Fig. 8): dedup FlexCore, function-call IPI 14 %"),
        "dedup_spin_pct_flexcore": Seed(4, f"{S000} §4.3 (Fig. 8): dedup FlexCore, spinlock 4 %"),
    },
    "flexcore-fig7": {
        "dedup_reduction_pct": Seed(79.6, f"{S000} §4.2 (text of Fig. 7): dedup run time reduced by 79.6 %"),
        "vips_reduction_pct": Seed(54.1, f"{S000} §4.2 (text of Fig. 7): vips 54.1 %"),
        "swaptions_reduction_pct": Seed(35.4, f"{S000} §4.2 (text of Fig. 7): swaptions 35.4 %"),
        "streamcluster_reduction_pct": Seed(42.4, f"{S000} §4.2 (text of Fig. 7): streamcluster 42.4 %"),
        "average_reduction_pct": Seed(52.9, f"{S000} abstract and §4.2: average reduction 52.9 %"),
        # Read as FlexCore's kernel time in per cent of the 2VM case's (see flexcore.py FIG7 notes).
        "dedup_kernel_fc_pct_of_2vm": Seed(9.7, f"{S000} §4.2: kernel time 'drops ... 9.7 %' compared with 2VM (read as FlexCore / 2VM)"),
        "vips_kernel_fc_pct_of_2vm": Seed(11.1, f"{S000} §4.2: 11.1 % (read as FlexCore / 2VM)"),
        "swaptions_kernel_fc_pct_of_2vm": Seed(10.7, f"{S000} §4.2: 10.7 % (read as FlexCore / 2VM)"),
        "streamcluster_kernel_fc_pct_of_2vm": Seed(6.6, f"{S000} §4.2: 6.6 % (read as FlexCore / 2VM)"),
        # §4.4 says this for the applications generally ('nearly 25 % of the total execution time
        # would have elapsed'); given per application as the same approximate value.
        "dedup_balloon_done_pct": Seed(25, f"{S000} §4.4: vCPUs reduced after 'nearly 25 %' of the run (approximate, not per application)"),
        "vips_balloon_done_pct": Seed(25, f"{S000} §4.4: 'nearly 25 %' (approximate, not per application)"),
        "swaptions_balloon_done_pct": Seed(25, f"{S000} §4.4: 'nearly 25 %' (approximate, not per application)"),
        "streamcluster_balloon_done_pct": Seed(25, f"{S000} §4.4: 'nearly 25 %' (approximate, not per application)"),
    },
    "flexcore-table1": {
        "dedup_ple_2vm_1e7": Seed(9.52, f"{S000} Table 1, PLE in 2VM (10^7)"),
        "vips_ple_2vm_1e7": Seed(6.48, f"{S000} Table 1, PLE in 2VM (10^7)"),
        "swaptions_ple_2vm_1e7": Seed(8.13, f"{S000} Table 1, PLE in 2VM (10^7)"),
        "streamcluster_ple_2vm_1e7": Seed(15.70, f"{S000} Table 1, PLE in 2VM (10^7)"),
        "dedup_ple_flexcore_1e6": Seed(1.90, f"{S000} Table 1, PLE in FlexCore (10^6)"),
        "vips_ple_flexcore_1e6": Seed(9.75, f"{S000} Table 1, PLE in FlexCore (10^6)"),
        "swaptions_ple_flexcore_1e6": Seed(21.90, f"{S000} Table 1, PLE in FlexCore (10^6)"),
        "streamcluster_ple_flexcore_1e6": Seed(36.10, f"{S000} Table 1, PLE in FlexCore (10^6)"),
        "dedup_ple_reduction_pct": Seed(98, f"{S000} Table 1, reduction (%)"),
        "vips_ple_reduction_pct": Seed(85, f"{S000} Table 1, reduction (%)"),
        "swaptions_ple_reduction_pct": Seed(73, f"{S000} Table 1, reduction (%)"),
        "streamcluster_ple_reduction_pct": Seed(77, f"{S000} Table 1, reduction (%)"),
        "swaptions_ple_rate_before_khz": Seed(500, f"{S000} §4.4: swaptions PLE frequency before ballooning 'approximately 500 kHz'"),
        "swaptions_ple_rate_after_khz": Seed(10, f"{S000} §4.4: swaptions PLE frequency after ballooning 'approximately 10 kHz'"),
    },
    # -- seed 001: tasklets and CSRC on Xen (SPECvirt_sc2010) -------------------------------
    "csrc-table1-fig12": {
        "sched_calls_per_pcpu_s": Seed(29819, f"{S001} Table 1, Sched: scheduler"),
        "context_switches_per_pcpu_s": Seed(26551, f"{S001} Table 1, Sched: context switches"),
        "switches_per_sched_call": Seed(26551 / 29819, f"{S001} Table 1, 26,551 / 29,819"),
        "hv_pct": Seed(26.23, f"{S001} Table 1, hypervisor CPU utilisation, total"),
        "context_switch_cpu_pct": Seed(7.28, f"{S001} Table 1, hypervisor CPU utilisation, context switches"),
        "busy_pct": Seed(92, f"{S001} §6 and Figure 16: 92 % at peak (9 tiles), original"),
        "cause_ext_intr_pct": Seed(65, f"{S001} Figure 12 and §5.1: 'External Interrupt' VMExit"),
        "cause_hlt_pct": Seed(21, f"{S001} Figure 12 and §5.1: 'HLT' VMExit"),
    },
    "csrc-table3-table4": {
        "sched_softirq": Seed(13668, f"{S001} Table 3, configurable tasklet"),
        "cs_softirq": Seed(12006, f"{S001} Table 3, configurable tasklet"),
        "sched_csrc": Seed(13616, f"{S001} Table 4, with CSRC"),
        "cs_csrc": Seed(9685, f"{S001} Table 4, with CSRC"),
        "sched_reduction_softirq_pct": Seed(54.16, f"{S001} Table 3"),
        "cs_reduction_softirq_pct": Seed(54.78, f"{S001} Table 3"),
        "sched_reduction_csrc_pct": Seed(0.38, f"{S001} Table 4"),
        "cs_reduction_csrc_pct": Seed(19.33, f"{S001} Table 4"),
    },
    "csrc-fig15-17": {
        "busy_original_pct": Seed(92, f"{S001} §6, Figure 16: original at peak (9 tiles)"),
        "busy_softirq_pct": Seed(89, f"{S001} §6, Figure 16: dynamically-allocable tasklets, same load"),
        "busy_csrc_pct": Seed(81, f"{S001} §6, Figures 16 and 20: with CSRC, same load"),
        "tput_per_util_gain_csrc_pct": Seed(15, f"{S001} §6, Figure 15: peak throughput per CPU utilisation +15 %"),
        "resp_reduction_near_peak_pct": Seed(50, f"{S001} abstract, §6, Figure 17: 'up to 50 %' faster response"),
        "resp_original_peak_ms": Seed(0.32, f"{S001} §4.1, Figure 4: total response time at 9 tiles"),
    },
    # -- seed 002: Flex (slides; its other results are directional, see flex.py's claims) ----
    "flex-parallel": {
        "mix_flex_gain_over_balance_pct": Seed(30.4, f"{S002} slide 'Mix of Parallel Workloads': "
                                               "'Flex outperforms balance+cap by 30.4%'"),
    },
    # -- seed 003: DP-Scheduling (Figures 6-9 are plots without numbers in the text; its
    #    results are directional, see dp.py's claims) -----------------------------------------
    # -- seed 004: VMkit on Barrelfish ------------------------------------------------------
    "vmkit-table2-3": {
        "forkbench_1cpu_ms": Seed(112.3, f"{S004} Table 2, VMkit 1 CPU"),
        "forkbench_2cpu_ms": Seed(196.2, f"{S004} Table 2, VMkit 2 CPUs"),
        "forkbench_2cpu_over_1cpu": Seed(196.2 / 112.3, f"{S004} Table 2, VMkit 196.2/112.3 ms"),
        "hackbench_1cpu_s": Seed(0.63, f"{S004} Table 3, VMkit 1 CPU"),
        "hackbench_2cpu_s": Seed(0.69, f"{S004} Table 3, VMkit 2 CPU"),
        "hackbench_2cpu_affinity_s": Seed(1.03, f"{S004} Table 3, VMkit 2 CPU with affinity"),
    },
    "vmkit-table9": {
        "forkbench_same_node_ms": Seed(196.76, f"{S004} Table 9, nodes 0/1 (same socket pair)"),
        "forkbench_cross_node_ms": Seed(212.44, f"{S004} Table 9, nodes 1/2"),
        "kbuild_same_over_cross": Seed(81.32 / 82.01, f"{S004} Table 9, Linux compile 81.32/82.01 s"),
        "hackbench_aff_same_node_s": Seed(1.04, f"{S004} Table 9, nodes 0/1"),
        "hackbench_aff_cross_node_s": Seed(1.29, f"{S004} Table 9, nodes 1/2"),
    },
    "vmkit-table10-11": {
        "kbuild_sync_15_30": Seed(1 / 0.718, f"{S004} §7.5.1: 1/0.718 ≈ 1.39 (Table 11: 1.38)", analytic=True),
        "kbuild_offset_15_30": Seed(1 / 0.718, f"{S004} §7.5.1: 1/0.718 ≈ 1.39 (Table 11: 1.39)", analytic=True),
        "kbuild_sync_5_40": Seed(1 / 0.718, f"{S004} §7.5.1: 1/0.718 ≈ 1.39 (Table 11: 1.38)", analytic=True),
        "kbuild_offset_5_40": Seed(1 / 0.718, f"{S004} §7.5.1: 1/0.718 ≈ 1.39 (Table 11: 1.40)", analytic=True),
        "forkbench_sync_15_30": Seed(1.39, f"{S004} Table 11"),
        "forkbench_offset_15_30": Seed(1.63, f"{S004} Table 11"),
        "forkbench_sync_5_40": Seed(1.39, f"{S004} Table 11"),
        "forkbench_offset_5_40": Seed(2.03, f"{S004} Table 11"),
        "hackbench_aff_sync_15_30": Seed(1.26, f"{S004} Table 11"),
        "hackbench_aff_offset_15_30": Seed(1.15, f"{S004} Table 11"),
        "rambench_offset_over_sync_15_30": Seed(2.67 / 2.64, f"{S004} Table 10, random 2.67/2.64 s"),
    },
    "vmkit-polling": {
        "kbuild_1vcpu_s": Seed(157, f"{S004} Table 5, VMkit 1 CPU"),
        "kbuild_2vcpu_over_1vcpu_polling": Seed(4.0, f"{S004} §7.2.3: 'slowed down by a factor of four'"),
        "kbuild_2vcpu_over_1vcpu_ipi": Seed(81 / 157, f"{S004} Table 5, VMkit 81/157 s"),
    },
}

#: Why a quantity is out of tolerance, where the model is known to fall short.
GAPS: dict[str, dict[str, str]] = {
    # -- seed 000: FlexCore (numbers: means over the simulation seeds 1-3, flexcore.SEEDS) --------
    "flexcore-fig2-fig8": {
        "dedup_spin_pct_2vm":
            "dedup's workload is fitted jointly to Fig. 1 and Fig. 2's 2VM shares (calibration.toml "
            "flexcore.dedup: two kernel sections per iteration, on the address-space lock and on an "
            "I/O lock, §4.2); the chosen point gives 7.2 % of guest CPU time. Across the grid the 2VM "
            "spinlock share reaches 11-12 % only where the kernel ratio falls below 2.8x or below the "
            "total ratio (sections so long that the 1VM run already queues on them), which breaks "
            "Fig. 1. The function-call IPI share, fitted with it, holds (61 %, seed 71 %)",
        "dedup_ipi_pct_flexcore":
            "model result 25 % (seed 14 %): ballooned, 12 workers share 6 vCPUs and two locks whose "
            "105 µs sections (Fig. 1's kernel ratio needs that much kernel work) keep them busy, and "
            "a shootdown every 4 iterations waits on targets spinning there with interrupts off; "
            "the run also spends its first 40 % (until the vCPUs are bound, see flexcore-fig7 "
            "dedup_balloon_done_pct) at the 2VM's 61 %",
        "dedup_spin_pct_flexcore":
            "ballooned, the two locks stay contended (105 µs sections, one each per iteration, 12 "
            "workers on 6 vCPUs): 14.6 % native spin against the seed's 4 %. The model's dedup "
            "carries all the kernel work Fig. 1's kernel ratio (3.7x) needs under these two locks, "
            "and at 12 vCPUs alone it already queues on them; the seed's dedup spreads its kernel "
            "work over more locks (§4.2: 'a large number of synchronization operations')",
    },
    "flexcore-fig7": {
        "dedup_reduction_pct":
            "model result 55 % (seed 79.6 %): the seed's ballooned dedup runs in 0.65x its 1VM time "
            "(3.2 x (1 - 0.796)), faster on 6 pCPUs than alone on 12; the model's takes 1.47x its 1VM "
            "time. Started ballooned (6 vCPUs each, bound) it takes 1.01x, no faster than alone: "
            "the 1VM run queues on the same two locks. The rest is the 40 % of the run before the "
            "vCPUs are bound (dedup_balloon_done_pct), spent at the 2VM speed",
        "streamcluster_reduction_pct":
            "the 2VM/1VM ratio is fitted (2.42, seed 2.6), but the seed's ballooned streamcluster runs "
            "in 1.50x its 1VM time, faster than half the 1VM speed; the model's takes 1.80x, and "
            "1.80x also when started ballooned (vips and swaptions: model 1.83x and 1.77x, seed "
            "1.88x and 1.74x, both hold). Guest scalability at 12 vCPUs is not modelled",
        "average_reduction_pct":
            "the mean of the four (55, 45, 31, 26 %); dedup's and streamcluster's shortfalls (see "
            "there) pull it below the seed's 52.9 %",
        "dedup_kernel_fc_pct_of_2vm":
            "model result 37 % (seed 9.7 %): the critical sections are fixed kernel work (105 µs "
            "twice per iteration, which Fig. 1's kernel ratio needs) and ballooned they add native "
            "spin on the still contended locks: started ballooned the run's kernel time is 0.72x "
            "the 1VM's, the FlexCore run's 1.27x (the first 40 % at the 2VM's rate). The seed's "
            "9.7 % is 0.36x its 1VM kernel time (3.7 x 0.097), so the seed's dedup at 12 vCPUs "
            "wastes kernel time that the model's 1VM run does not (guest scalability)",
        "vips_kernel_fc_pct_of_2vm":
            "model result 14.5 % (seed 11.1 %): started ballooned vips's kernel time is 0.82x its "
            "1VM's (11 % of the 2VM's), but the FlexCore run spends its first 28 % unballooned "
            "(vips_balloon_done_pct: the 3 s window, then the hotplug), at 7.5x the 1VM's kernel "
            "rate, and ends at 1.08x",
        "streamcluster_kernel_fc_pct_of_2vm":
            "as dedup: the seed's 6.6 % is 0.42x its 1VM kernel time (6.3 x 0.066); the model's "
            "ballooned kernel time is 0.88x the 1VM's (started ballooned) and 0.89x in the FlexCore "
            "run",
        "dedup_balloon_done_pct":
            "model result 40 % (seed 'nearly 25 %'): the control centre judges over a full 3 s "
            "window (§3.1), so it decides at its 3 s check, and the parallel hotplug takes 3.5 s "
            "(§3.2) plus its real-time waits (vCPU 0 must run to take the request, each outgoing "
            "vCPU must reach a preemptible point), which at the time scale add about 0.5-1 s: "
            "bound at 7.0-7.5 s. dedup's FlexCore run stands for only ~18 s of seed time (time scale "
            "30, fitted to Table 1's 2VM count), so this is 40 % of it; the seed gives no run "
            "length. Not fitted (a with-FlexCore number)",
        "swaptions_balloon_done_pct":
            "model result 13 %: decided at the 3 s check (the first with a full window, §3.1), "
            "bound at 8.4-8.6 s of a 66 s run. The seed's 'nearly 25 %' with its 'approximately "
            "500 kHz' before ballooning and Table 1 (8.13e7 PLE exits in a ~160 s 2VM run, 2.19e7 "
            "with FlexCore) puts its ballooning some 25-40 s into the run, far later than a 3 s "
            "window plus a 3.5 s hotplug; the seed's applications start with lighter phases (§3: "
            "'before vCPU ballooning ... not much coordination'). The model's workers have none "
            "(adding one would be fitting to a FlexCore number). Also, each 3 s window is only "
            "6.4 ms of simulated time, less than one host-scheduler slice: a vCPU is dispatched "
            "about once in it, so its first few PLE exits already mark it contended",
        "streamcluster_balloon_done_pct":
            "as swaptions: decided at 3 s, bound at 15.4-15.5 s of a 146-149 s run (10.5 %); at time "
            "scale 1001 the hotplug's real-time waits (about 9 ms simulated) add some 9 s of seed "
            "time to its 3.5 s",
    },
    "flexcore-table1": {
        "dedup_ple_flexcore_1e6":
            "after ballooning dedup still spins on its two contended locks (105 µs sections, fitted "
            "to Fig. 1 with Fig. 2): 863 kHz of PLE exits on dedicated pCPUs, and the 40 % of the "
            "run before the binding at the 2VM's 2,358 kHz: 15x the seed's count",
        "dedup_ple_reduction_pct":
            "follows from dedup_ple_flexcore_1e6 (the 2VM count is fitted): 70 % fewer, seed 98 %",
        "vips_ple_flexcore_1e6":
            "the 2VM runs exit little in their first few seconds of seed time (the first host "
            "slices: the swaptions 2VM run exits at 0-14 kHz for its first 7 s, 15 ms simulated, "
            "then at 0.5-3 MHz), so the control centre's decision at 3 s and the binding at 7-8 s "
            "come before most of the contention; in the seed most of FlexCore's exits come from the "
            "first quarter of the run (§4.4), and its ballooning comes later (see flexcore-fig7 "
            "swaptions_balloon_done_pct)",
        "swaptions_ple_flexcore_1e6": "as vips; after ballooning the model's swaptions exits at 4 kHz",
        "streamcluster_ple_flexcore_1e6": "as vips",
        "swaptions_ple_reduction_pct": "follows from swaptions_ple_flexcore_1e6 (the 2VM count is fitted)",
        "streamcluster_ple_reduction_pct": "follows from streamcluster_ple_flexcore_1e6",
        "swaptions_ple_rate_before_khz":
            "the 2VM rate follows from the spin and IPI waiting at the Fig. 1 fit: with Linux 3.13's "
            "fixed 4096-cycle window (2.2 µs) a waiting vCPU exits about every 3 µs. The seed's "
            "'approximately 500 kHz' is a round figure (with Table 1's 8.13e7 it would mean a 160 s "
            "run)",
        "the PLE rate after ballooning is at least 10× lower than before, for every application":
            "holds for vips, swaptions and streamcluster (53-225x lower); dedup's falls only 2.7x "
            "(2,358 -> 863 kHz): ballooned, its 12 workers queue on the two kernel locks (105 µs "
            "sections of the joint Fig. 1 + Fig. 2 fit), and each waiter exits every ~3 µs (fixed "
            "4096-cycle window). The seed's dedup (98 % fewer PLE exits) spreads its kernel work "
            "over more locks",
        "swaptions_ple_rate_after_khz":
            "after ballooning the model's swaptions waits only on native contention of 5 µs sections, "
            "which seldom outlasts the 2.2 µs window; the seed's 'approximately 10 kHz' needs longer "
            "native waits",
    },
    "csrc-table1-fig12": {
        "hv_pct": "the model's hypervisor time is fixed costs per event. By the VM exit the seed "
                  "charges it to (Figure 9), at the fitted peak: external interrupts 7.7 % in the "
                  "model (72 % of the world switches, 1.5 µs per exit at 9,500/s/pCPU, the 1 µs "
                  "tasklet at 11,000 interrupts/s/pCPU) vs the seed's 12 %; HLT 2.0 % (20 % of "
                  "the switches, 1.2 µs per exit at 5,300/s/pCPU) vs 3.73 %; APIC access 0 vs "
                  "4.78 %; I/O instructions 0 vs 2.94 %. The APIC-access exits are real (without "
                  "APICv every virtual interrupt's EOI write exits: about 12,700/s/pCPU here, "
                  "device interrupts and vIPIs), but they would need 3.8 µs each to reach "
                  "4.78 %, and no seed gives that cost: the only sourced exit cost, a bare round "
                  "trip of 0.9 µs (seed 004 Table 1), would add 1.1 points; the rest is the "
                  "emulation path ([30] in the seed shortens it, without a figure) and the CPI "
                  "growth with the switch rate (Figures 7-8) that inflates every per-exit cost. "
                  "The seed does not say which port I/O the guests do on its SR-IOV/iSCSI path, "
                  "so the I/O-instruction exits have no count to model",
    },
    "csrc-table3-table4": {
        "sched_softirq": "in the model nearly every scheduler call after softirq tasklets switches "
                         "(9,485 calls, 9,481 switches); the seed's 13,668 calls include 1,662/s "
                         "that keep the current vCPU. Xen 4.1's __runq_tickle (credit.c) signals the "
                         "woken vCPU's pCPU when it preempts and, whenever that pCPU runs a vCPU, "
                         "an idle pCPU as well, whose scheduler call can find the vCPU already "
                         "taken; the model's credit tickles the one or the other, never both, so "
                         "those empty calls are missing. The switches themselves hold (cs_softirq)",
        "sched_csrc": "as sched_softirq (CSRC keeps the scheduler calls nearly unchanged)",
        "sched_reduction_csrc_pct": "±25 % of 0.38 % is ±0.1 point, below the run-to-run variation of "
                                    "the model; its 1.5 % still counts as nearly unchanged (the claim "
                                    "holds)",
        "cs_reduction_csrc_pct": "measured at the original's peak load; the seed counts CSRC at its "
                                 "own, higher peak. The model's saving grows with load (full run: 7 % "
                                 "at 9 tiles, 18 % at 10, 30 % at 11), as the rate criterion fires "
                                 "more often",
    },
    "csrc-fig15-17": {
        "tput_per_util_gain_csrc_pct": "the model has no CPI or path-length change with the switch "
                                       "rate (the seed's 92 → 81 % comes with 6 % lower CPI and 4 % "
                                       "shorter path length, Figures 18-20); CPU per request falls "
                                       "only by the saved hypervisor events (busy 88 % with CSRC)",
        "resp_reduction_near_peak_pct": "the model's original is not yet at its response-time knee at "
                                        "the fitted peak (+23 % from 8 to 9 tiles; the seed's rises "
                                        "146 %, Figure 4): the peak load is fitted to CPU and switch "
                                        "rate, not to the knee; beyond it the saving grows (28 % at "
                                        "11 tiles). Not a missing switch mechanism: after softirq "
                                        "tasklets the model's switches are those the seed names "
                                        "(blocking and wake-ups, §5.3) and hold Table 3's count",
        "resp_original_peak_ms": "not fitted: the model's request is its CPU work at the fitted size, "
                                 "one or two iSCSI I/Os of 100 µs each (an estimate, "
                                 "guest/workloads.rs) and queueing at 2.7 vCPUs per pCPU; the seed "
                                 "gives no per-request service demand to calibrate against",
        "at light load the response time with tasklets and CSRC is slightly higher than the "
        "original's (by at most 20 %)":
            "in the model the original pays the two tasklet switches on every interrupt at light "
            "load too, so softirq tasklets + CSRC answer 4 % faster; CSRC itself changes nothing at "
            "light load (CSRC / softirq alone = 1.00): with mostly idle pCPUs a woken vCPU finds an "
            "idle pCPU and scheduler calls come from blocking, which CSRC never skips, so the "
            "'less frequent scheduling' the seed blames does not arise",
    },
    # -- seed 002: Flex ------------------------------------------------------------------------
    "flex-fairness": {
        "Flex keeps the mean relative lag at most 5 % for every number of VMs (the slide's 'no "
        "more than 5 % unfairness', one value per number of VMs)":
            "model result: FlexW (in credit's accounting, gain 1, lag since the last reset) keeps "
            "the mean within 5 % with 2-4, 6 and 8 VMs but reaches 5.6 % with 5 VMs and 5.2 % with "
            "7; the worst single VM of any run is 10 % off its share. Credit hands out credit in "
            "whole 30 ms periods and FlexW's weights act from the next period, so the share of a VM "
            "swings around its GPS share",
    },
    "flex-parallel": {
        "mix_flex_gain_over_balance_pct":
            "model result: balance+cap (balance over cfs, each VM capped at its 4/3-pCPU fair share "
            "by CFS bandwidth control) finishes the mix in 8.66 s against Flex's 7.69 s (seed 1), a "
            "12.6 % gain; FlexS hands spinners' slices to queued siblings (~6 400 switches) and cuts "
            "barrier spin, but Flex's mean completion is only a few per cent below FlexW alone's "
            "(8.55 s; 7.29 vs 7.49 s over seeds 1-8, docs/policies.md ## flexs): the 2-vCPU VM "
            "finishes later as the larger VMs catch up, and balance+cap nearly matches FlexW",
    },
    # -- seed 003: DP-Scheduling ----------------------------------------------------------------
    "dp-stream": {
        "DP is not below credit at any array size":
            "model result: from 4 MiB arrays DP gets 0.2-10 % less bandwidth than credit (32 MiB: 10 %): "
            "a pinned vCPU that is preempted waits in its own pCPU's runqueue, where the competing vCPU "
            "keeps evicting its working set, and an idle pCPU may not take it (seed §4.3 Figure 3; the "
            "seed assumes the idle time this costs, C(CPU_idle) in §4.2, is 0); credit moves it to the "
            "idle core (docs/policies.md ## dp)",
    },
    "dp-imb": {
        "Sendrecv: DP is faster than credit at every message size of the CPU-bound range (128 B - 128 KiB)":
            "model result: below 16 KiB no rank reaches AC 75 (DP = credit); from 16 KiB DP pins the "
            "ranks, and a pinned rank that is preempted waits for its own pCPU while an idle one may "
            "not take it (seed §4.3 Figure 3, the rule itself: test "
            "an_idle_pcpu_does_not_take_a_pinned_vcpu_from_a_busy_one): DP at 9-27 % of credit's "
            "speed at 16-128 KiB",
        "Exchange: DP is faster than credit at every message size of the CPU-bound range (128 B - 128 KiB)":
            "as for Sendrecv; Exchange's four copies per repetition lift the ranks' AC past 75 from "
            "1 KiB (DP at 17-64 % of credit's speed at 1-128 KiB)",
    },
    "vmkit-table2-3": {
        "hackbench_2cpu_s": "the model's hackbench scales with a second vCPU as native Linux and KVM "
                            "do in Table 3 (0.60 → 0.38 s); VMkit's lack of speed-up comes from its "
                            "own slow paths (§7.3.3 gives no cause), which the model does not have",
        "hackbench_2cpu_affinity_s": "senders on vCPU 0 and receivers on vCPU 1 (sender_affinity, "
            "receiver_affinity) balance evenly in the model (equal work per send and receive) and "
            "it charges nothing for the cross-core transfer of messages and run-queue updates that "
            "§7.3.3 names, so the run takes as long as without affinity (and VMkit's own lack of "
            "speed-up, see hackbench_2cpu_s, is not modelled either)",
    },
    "vmkit-table9": {
        "forkbench is slower with the vCPUs on two nodes": "the model's IPI latency does not depend on "
            "the NUMA distance and fork's page-table work is not memory-bound (hv/vipi.rs leaves it out)",
        "hackbench_aff_same_node_s": "as vmkit-table2-3 hackbench_2cpu_affinity_s: no cost for "
            "cross-core communication, and VMkit's slow 2-vCPU hackbench is not modelled",
        "hackbench_aff_cross_node_s": "as hackbench_aff_same_node_s; the NUMA distance adds nothing "
            "either (the model's messages are not memory traffic, its IPI latency is flat)",
    },
    "vmkit-polling": {
        "with polling, 2 vCPUs build slower than 1": "polling now delays every vIPI to a halted vCPU "
            "until its VMM's next 80 ms time slice (seed §6.1, §6.3; hv/vipi.rs), which slows the "
            "2-vCPU build (0.50 → 0.52 of the 1-vCPU time; 0.49 → 0.56 with make -j4) and makes a "
            "script stage of short processes 127 times slower than on 1 vCPU (sim/vmkit_tests.rs), "
            "but the model's build is compilers only: make's job slots keep both vCPUs busy, so few "
            "IPIs find a halted target, and the extra time is a roughly fixed 2-4 s from phases "
            "with an idle vCPU (the last job alone): a build of 389 compiles is 1.14 times slower "
            "than on 1 vCPU, the full 7786 are not. The Bash-script stages that the seed says create many "
            "short processes (§7.2, §7.3.5) are not in the kbuild workload, and the seed gives no "
            "amount of them to model",
        "kbuild_2vcpu_over_1vcpu_polling": "as the claim: the model's kbuild has no script stages, "
            "where the polled wake-ups of a halted vCPU cost up to 80 ms each",
    },
    "vmkit-table10-11": {
        "hackbench_aff_offset_15_30": "the model's hackbench with affinity progresses only while "
            "both vCPUs run (each message crosses from vCPU 0 to vCPU 1), so offset slices slow it "
            "like forkbench (1.65, near the analytic 1.60); the seed measured a speed-up it could "
            "not explain (§7.5.2: a sequential part it did not find)",
        "hackbench with affinity is faster under offset than under synchronous slices (15/30 ms)":
            "as hackbench_aff_offset_15_30: the seed does not explain its result and the model "
            "has no sequential phase that would produce it",
    },
}
