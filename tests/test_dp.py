"""Seed 003 (DP-Scheduling) reproductions: the seed's averaging (§5.3: many repetitions, "the
average value except for some few abnormal points"), STREAM's team barrier (stream.c's `omp
parallel for` ends in one) and STREAM's own figure, the best rate."""

from __future__ import annotations

import math

import pytest

import vmsched
from vmsched.reproduce import dp
from vmsched.reproduce.core import mean_over_seeds, trimmed_mean


def test_trimmed_mean_drops_the_few_abnormal_points_at_each_end():
    xs = [5.0, 1.0, 2.0, 3.0, 4.0, 6.0, 7.0, 8.0, 9.0, 1000.0]
    # 10 values, 10 %: floor(1.0) = 1 dropped at each end (1 and 1000): mean of 2..9 = 5.5,
    # where the plain mean is (45 + 1000) / 10 = 104.5.
    assert trimmed_mean(xs, 0.1) == 5.5
    assert trimmed_mean(xs) == 104.5
    # 9 values: floor(0.9) = 0, nothing dropped.
    assert trimmed_mean(xs[:9], 0.1) == 5.0
    # 20 values: 2 dropped at each end, so two abnormal points on one side both go.
    twenty = [10.0] * 18 + [0.0, 0.0]
    assert trimmed_mean(twenty, 0.1) == 10.0


def test_trimmed_mean_keeps_nan_and_rejects_bad_fractions():
    assert math.isnan(trimmed_mean([1.0, float("nan"), 3.0], 0.1))
    with pytest.raises(ValueError, match="trim_fraction"):
        trimmed_mean([1.0, 2.0], 0.5)
    with pytest.raises(ValueError, match="no values"):
        trimmed_mean([], 0.1)


def test_mean_over_seeds_trims_when_asked_and_is_the_plain_mean_by_default():
    r = {f"x@{s}": v for s, v in zip(range(1, 11), [1, 2, 3, 4, 5, 6, 7, 8, 9, 100])}

    def value(results, label):
        return float(results[label])

    assert mean_over_seeds(range(1, 11))(value)(r, "x") == 14.5  # (45 + 100) / 10
    assert mean_over_seeds(range(1, 11), 0.1)(value)(r, "x") == 5.5  # 2..9


class _Run:
    """A finished run's summary with only what dp's measures read."""

    def __init__(self, key: str, value: float, migrations: int = 0, mutex_spin_ns: float = 0.0,
                 **more: float):
        self.summary = {"vms": [{"finished": True, "bench": {"w0": {key: value, **more}},
                                 "migrations": migrations,
                                 "guest_ns": {"mutex_spin": mutex_spin_ns, "lock_spin": 0.0}}]}


def test_dp_runs_every_case_over_the_seeds_of_its_mode():
    for quick in (False, True):
        seeds = dp.SEEDS[quick]
        for runs, cases in ((dp._stream_runs(quick), len(dp.STREAM_KIB[quick]) * 2),
                            (dp._epcc_runs(quick), len(dp.EPCC_THREADS[quick]) * 3 * 2),
                            (dp._imb_runs(quick), len(dp.IMB_BYTES[quick]) * 2 * 2)):
            assert len(runs) == cases * len(seeds)
            assert sorted({r.seed for r in runs}) == list(seeds)
            assert all(r.label.endswith(f"@{r.seed}") for r in runs)
    # §5.3's "at least 1000 times": far more repetitions than the earlier 1 to 3 seeds.
    assert len(dp.SEEDS[False]) >= 16


def test_dp_stream_ratio_drops_an_abnormal_run_for_both_schedulers():
    key = "best_rate_bytes_per_s"
    seeds = range(1, 11)
    r = {}
    for seed in seeds:
        r[f"credit-1024kib@{seed}"] = _Run(key, 80e9, bandwidth_bytes_per_s_per_thread=5e9)
        # DP 88 GB/s except one abnormal run at 0.8 GB/s (10 runs: 1 dropped at each end).
        r[f"dp-1024kib@{seed}"] = _Run(key, 0.8e9 if seed == 3 else 88e9,
                                       bandwidth_bytes_per_s_per_thread=4e9)
    q = dp._stream_measure(r)
    # Trimmed: DP's 0.8 and one 88 GB/s go, credit's two ends are both 80: 88 / 80 = 1.1. The
    # plain mean would give (9 x 88 + 0.8) / 10 / 80 = 0.991.
    assert q["dp_over_credit_1024kib"] == pytest.approx(1.1)
    assert q["credit_1024kib_best_gbs"] == pytest.approx(80.0)
    # The claims read the best rate, not the run mean listed beside it (4 / 5 = 0.8).
    assert q["dp_over_credit_mean_1024kib"] == pytest.approx(0.8)
    assert q["gap_smallest"] == pytest.approx(1.1)


def test_dp_epcc_averages_whole_suite_runs():
    seeds = range(1, 11)
    r = {}
    for seed in seeds:
        for s in dp.SCHEDULERS:
            for c in dp.EPCC_CONSTRUCTS:
                # One abnormal credit suite run (seed 5): its barrier loop takes 1 s.
                ns = 1e9 if (s, c, seed) == ("credit", "barrier", 5) else (2e6 if s == "credit" else 1e6)
                r[f"{s}-{c}-8t@{seed}"] = _Run("test_ns", ns)
    q = dp._epcc_measure(r)
    # Each suite run is the three constructs added: credit 6 ms (the abnormal one 1004 ms,
    # dropped with one 6 ms run), DP 3 ms.
    assert q["credit_8t_ms"] == pytest.approx(6.0)
    assert q["gap_8t_ms"] == pytest.approx(3.0)


def test_dp_counts_migrations_over_every_case_and_lock_waits_at_the_most_threads():
    # Two thread counts, ten seeds: credit's benchmark VM migrates 10 times a run at 2 threads
    # and 20 at 8, DP's 1 and 2, so the sums over the cases are 30 and 3 (the trimmed mean of
    # equal runs is the run). Lock waits are read at the most threads only: credit's critical
    # loop spins 5 ms there, DP's 2 ms (4 and 1 ms at 2 threads do not count).
    r = {}
    for seed in range(1, 11):
        for s, mig, spin in (("credit", (10, 20), (4e6, 5e6)), ("dp", (1, 2), (1e6, 2e6))):
            for k, t in enumerate((2, 8)):
                for c in dp.EPCC_CONSTRUCTS:
                    r[f"{s}-{c}-{t}t@{seed}"] = _Run("test_ns", 1e6, migrations=mig[k] if c == "barrier" else 0,
                                                     mutex_spin_ns=spin[k] if c == "critical" else 0.0)
    assert dp.migrations_per_scheduler(r) == {"credit": pytest.approx(30.0), "dp": pytest.approx(3.0)}
    q = dp.EPCC.measure(r)
    assert (q["migrations_credit"], q["migrations_dp"]) == (pytest.approx(30.0), pytest.approx(3.0))
    assert (q["lock_wait_credit_most_ms"], q["lock_wait_dp_most_ms"]) == (pytest.approx(5.0), pytest.approx(2.0))


def test_dp_stream_team_meets_at_the_barrier_ending_each_parallel_for():
    # stream.c runs every kernel as `#pragma omp parallel for`, which ends in an implicit
    # barrier (libgomp's team barrier): the library scenario keeps one after each pass.
    d = dp.stream_scenario(1024, True, "credit")
    assert d["vms"][0]["workloads"][0]["barrier"] is True
    # stream.c's NTIMES default: each execution times 10 passes and reports the best after
    # the first.
    assert d["vms"][0]["workloads"][0]["ntimes"] == 10
    d["duration_ms"] = 2000
    # 2000 passes (about 40 ms undisturbed) beside the competing VM, so threads are preempted
    # unevenly and the others wait for them at the barrier.
    d["vms"][0]["workloads"][0]["iterations"] = 2000
    vm = vmsched.run(d, seed=1).summary["vms"][0]
    assert vm["finished"]
    assert vm["guest_ns"]["barrier_spin"] > 0
    # The figure dp reports: the team's best pass is at least an undisturbed one (3 x 1024 /
    # 8 = 384 KiB at 50 ns/KiB = 19.2 us), so the best rate is at most 8 x 384 KiB / 19.2 us.
    w0 = vm["bench"]["w0"]
    assert w0["executions"] == 2000 / 10
    assert w0["best_pass_ns"] >= 19_200
    assert w0["best_rate_bytes_per_s"] <= 8 * 384 * 1024 / 19.2e-6 * (1 + 1e-12)


def test_dp_openmp_spins_are_libgomp_4_4_0s_default_at_the_seeds_clock():
    # The seed's guest, CentOS 5.4 (§5.1), ships libgomp-4.4.0-6.el5 (RHEL 5.4 media, beside
    # gcc-4.1.2-46.el5). gcc 4.4's libgomp/env.c, OMP_WAIT_POLICY and GOMP_SPINCOUNT unset:
    # gomp_spin_count_var = 20,000,000 (300,000 only from gcc r167371, Dec 2010); wait.h's
    # do_wait spins that many times before futex_wait, in the barrier and in the mutex
    # (critical, the reduction's lock) alike. One spin is about 15.5 cycles before Skylake
    # (hv/perfcounters.rs), at the seed's 2.0 GHz: 20e6 x 15.5 / 2.0e9 s = 0.155 s = 155,000 us.
    spin_us = 20_000_000 * 15.5 / 2.0e9 * 1e6
    stream = dp.stream_scenario(1024, True, "credit")
    assert stream["host"]["cpu_ghz"] == 2.0
    assert stream["vms"][0]["workloads"][0]["barrier_spin_us"] == pytest.approx(spin_us)
    epcc = dp.epcc_scenario(8, "critical", "credit")
    assert epcc["host"]["cpu_ghz"] == 2.0
    assert epcc["vms"][0]["workloads"][0]["spin_us"] == pytest.approx(spin_us)


def test_dp_hosts_spin_without_pause_loop_exits():
    # Seed 003's guests are paravirtualised (§3.1: CR3 writes are reported by hypercall), so a
    # PAUSE never leaves the guest, and its Xeon 5405 has no PLE (scenarios/dp-*.toml).
    # EPCC's critical loop with 4 threads: its waiters spin in libgomp's do_spin (a PAUSE loop)
    # for longer than a PLE window (4096 cycles, 2 us at 2.0 GHz) whenever the holder's vCPU
    # is preempted, which with PLE would exit; 20,000 sections (20 ms of delay) suffice.
    for scheduler in dp.SCHEDULERS:
        d = dp.epcc_scenario(4, "critical", scheduler)
        d["vms"][0]["workloads"][0]["innerreps"] = 20_000
        vm = vmsched.run(d, seed=1).summary["vms"][0]
        assert vm["finished"]
        assert vm["guest_ns"]["mutex_spin"] > 4096 / 2.0  # ns: more than one window of spin
        assert vm["ple_exits"] == 0


def test_dp_runs_end_when_the_benchmark_finishes():
    # Every dp figure is the benchmark VM's own, so a run ends when it finishes (stop =
    # "finite_done") rather than simulating the competing VM, which runs forever, to the
    # horizon; the horizon still bounds a run that does not finish.
    d = dp.epcc_scenario(2, "barrier", "dp")
    assert d["stop"] == "finite_done"
    r = vmsched.run(d, seed=1).summary
    assert r["vms"][0]["finished"] and not r["vms"][1]["finished"]
    assert r["sim_time_ns"] == r["vms"][0]["completion_ns"] < d["duration_ms"] * 1e6


def test_dp_epcc_runs_each_construct_as_long_as_syncbench_2_0():
    # EPCC OpenMP MicroBenchmark Suite 2.0, syncbench.c: every test loops
    # `for (k=0; k<=OUTERREPS; k++)` with OUTERREPS 20, i.e. 21 timed runs, and main fixes
    # innerreps: 1000 for testbar and testred, 100000 for testcrit (innerreps/nthreads per
    # thread, 100000 for the team). So 21 x 1000 = 21,000 barriers and reduction regions and
    # 21 x 100,000 = 2,100,000 critical sections, whatever the thread count.
    expected = {"barrier": 21_000, "reduction": 21_000, "critical": 2_100_000}
    for construct, constructs in expected.items():
        for threads in dp.EPCC_THREADS[False]:
            w = dp.epcc_scenario(threads, construct, "credit")["vms"][0]["workloads"][0]
            assert w["innerreps"] == constructs
    # The shortest, 21,000 barriers with a 1 us delay each (21 ms of delay alone, more with
    # the barrier), outlasts the 2000 the model ran until session 11's step 4 (2 ms of delay)
    # tenfold; the critical loop's delays alone take 2.1 s, 70 credit slices of 30 ms.
    delay_us = dp.epcc_scenario(8, "critical")["vms"][0]["workloads"][0]["delay_us"]
    assert expected["critical"] * delay_us / 1000 / 30 == pytest.approx(70)


def test_dp_imb_runs_each_message_size_as_many_times_as_imb_3():
    # Intel MPI Benchmarks 3.x, IMB_settings.h: MSGSPERSAMPLE 1000, OVERALL_VOL 40*1048576;
    # IMB_init_buffers_iter: n_sample = max(1, min(OVERALL_VOL / X, MSGSPERSAMPLE)) for a
    # message of X > 0 bytes (MPI-1 benchmarks take MSGSPERSAMPLE: AGGREGATE = -1). 40 MiB /
    # 40 KiB = 1000, so 1000 repetitions up to 40 KiB, then 41,943,040 / 131,072 = 320 at
    # 128 KiB, 40 at 1 MiB, 10 at 4 MiB; the same in quick mode (the sizes are a subset).
    expected = {4: 1000, 64: 1000, 1024: 1000, 16384: 1000, 131072: 320, 1048576: 40,
                4194304: 10}
    assert set(dp.IMB_BYTES[True]) <= set(expected) == set(dp.IMB_BYTES[False])
    for quick in (False, True):
        labels = {r.label: r for r in dp.IMB.runs(quick)}
        for b in dp.IMB_BYTES[quick]:
            for p in dp.IMB_PATTERNS:
                run = labels[f"credit-{p}-{b}b@1"]
                assert run.scenario["vms"][0]["workloads"][0]["reps"] == expected[b]


def test_dp_xen_3_4_hosts_switch_lazily():
    # Xen 3.4's context_switch (xen/arch/x86/domain.c, read in 3.4.4) skips __context_switch
    # when the next vCPU is the idle vCPU or the one whose state the pCPU still holds, under
    # credit and DP alike (core.XEN_HOST_PARAMS). IMB Sendrecv at 1 KiB: 8 ranks that block in every
    # receive (ch3:sock's poll()), so a pCPU often idles and wakes the rank it held; each such
    # pair is two lazy switches, and the counts split every switch into full and lazy
    # (results.md: state_switches + lazy_switches = context_switches with the option on).
    for scheduler in dp.SCHEDULERS:
        d = dp.imb_scenario("sendrecv", 1024, scheduler)
        assert d["hypervisor"]["params"]["lazy_context_switch"] is True
        assert d["hypervisor"]["params"]["wake"] == "xen34"  # the scenario's params are kept
        pcpus = vmsched.run(d, scheduler=scheduler, seed=1).summary["pcpus"]
        lazy = sum(p["lazy_switches"] for p in pcpus)
        assert lazy > 0
        assert lazy + sum(p["state_switches"] for p in pcpus) == sum(p["context_switches"] for p in pcpus)
