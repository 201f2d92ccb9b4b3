//! FlexW, Flex's flexible vCPU weights for VM-level fairness (seed 002_4e0f89b222427189.txt,
//! "FlexW Design", "Practical Considerations", "Implementation"), where the seed puts it: in
//! Xen credit's system-wide accounting (`csched_acct`, every 30 ms; "FlexW in the system-wide
//! csched_acct() routine, adjusts VM credit refill based on real-time weights"). An option of
//! the `credit` scheduler (`hypervisor.params.flexw = true`, on by default in `flex`); the
//! `flexw` controller (`controllers/flexw.rs`) is the control-plane variant and calls the same
//! [`flexw_update`].
//!
//! At each accounting, before credits are distributed (`Credit::acct`):
//! - usage `S_i` and demand of each VM over the lag window (t1, now] (t1 = the last reset,
//!   or with `flexw_window = "period"` the previous accounting): run time of its vCPUs, and
//!   run + runnable-waiting time (Xen's runstate `RUNSTATE_running` + `RUNSTATE_runnable`),
//!   both measured by credit itself;
//! - ideal share `S_i,GPS`: generalised processor sharing of `P × period` (P = pCPUs) by the
//!   configured VM weights among the VMs that ran or waited in the window, water-filled
//!   (`metrics::gps_shares`) with each VM's share capped at its *peak* demand, vCPUs × window
//!   ("Infeasible weight -> peak CPU demand less than the fair share / Solution: peak demand
//!   as the fair share"). Not capped at the measured demand: "VMs demanding less than its
//!   share will have ever increasing real-time weight" needs such a VM to keep lagging
//!   (`flexw_fair_share = "peak"`, the default; `"demand"`, the older reading, caps the share
//!   at run + runnable-waiting time, so a VM that demands less never lags);
//! - lag `lag_i = (S_i,GPS − S_i) / S_i,GPS`;
//! - real-time weight `w'_i = w_i + g · w_i · lag_i` (`w_i` the current real-time weight; the
//!   seed's formula is g = `flexw_gain` = 1), then the demanding VMs' real-time weights are
//!   rescaled to the geometric mean of their configured weights and kept in 1..=65535;
//! - credit then shares `300 × P` credits by real-time weight × active vCPUs, as it does by
//!   configured weight without FlexW;
//! - every `flexw_reset_ms` (10 s) the real-time weights return to the configured weights
//!   ("reset real-time weight every 10s").
//!
//! Choices where the seed is ambiguous (also in docs/policies.md `## flexw`): the lag is over
//! the time since the last reset (`flexw_window`) and `w` is the real-time weight (compounding); the
//! normalisation keeps the geometric mean; a change of a VM's configured weight (by a
//! controller or `xl sched-credit`) resets that VM's real-time weight to it.
//!
//! Leaves out: the cost of the computation inside `csched_acct` (the seed measures it growing
//! with the number of VMs).

use super::Params;
use crate::engine::{ms_to_ns, Ns};
use crate::metrics::gps_shares;
use crate::scenario::{ScenarioError, MAX_WEIGHT};

/// One FlexW update on a period: returns (GPS shares, lags, new real-time weights).
/// `base` are the configured weights, `rt` the current real-time weights, `used` the per-VM
/// CPU time received in the period, `share_caps` the cap on each VM's GPS share
/// ([`ShareCap::caps`]: its peak or its measured demand; 0 = not competing) and `capacity`
/// pCPUs × period, all in the same unit. The step is `w + gain·w·lag`, rescaled so the demanding VMs keep the geometric
/// mean of their configured weights.
pub fn flexw_update(capacity: f64, base: &[f64], rt: &[f64], used: &[f64], share_caps: &[f64], gain: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let gps = gps_shares(capacity, share_caps, base);
    let lag: Vec<f64> = gps.iter().zip(used).map(|(&g, &s)| if g > 0.0 { (g - s) / g } else { 0.0 }).collect();
    let mut w: Vec<f64> = rt.iter().zip(&lag).map(|(&w, &l)| (w + w * gain * l).max(0.0)).collect();
    let demanding: Vec<usize> = (0..w.len()).filter(|&i| gps[i] > 0.0 && w[i] > 0.0).collect();
    if !demanding.is_empty() {
        let n = demanding.len() as f64;
        let log_w: f64 = demanding.iter().map(|&i| w[i].ln()).sum::<f64>() / n;
        let log_b: f64 = demanding.iter().map(|&i| base[i].max(1.0).ln()).sum::<f64>() / n;
        let k = (log_b - log_w).exp();
        for &i in &demanding {
            w[i] *= k;
        }
    }
    for x in w.iter_mut() {
        *x = x.clamp(1.0, MAX_WEIGHT as f64);
    }
    (gps, lag, w)
}

/// What caps a VM's GPS share in [`flexw_update`] (its `demand` argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareCap {
    /// The VM's peak demand, vCPUs × window, for every VM that ran or waited in the window
    /// (seed 002 "Practical Considerations": "Infeasible weight -> peak CPU demand less than
    /// the fair share / Solution: peak demand as the fair share"). A VM that demands less
    /// than its share keeps a positive lag: "VMs demanding less than its share will have ever
    /// increasing real-time weight".
    Peak,
    /// The VM's measured demand in the window (run + runnable-waiting time): the older reading.
    Demand,
}

impl ShareCap {
    /// Reads `key` (`"peak"`, the default, or `"demand"`).
    pub fn from_params(p: &mut Params, key: &'static str) -> Result<ShareCap, ScenarioError> {
        Ok(match p.choice(key, "peak", &["peak", "demand"])? {
            "demand" => ShareCap::Demand,
            _ => ShareCap::Peak,
        })
    }

    /// The per-VM caps on the GPS share: `demand` (run + runnable-waiting) and `peak` (vCPUs ×
    /// window) in the same unit.
    pub fn caps(self, demand: &[f64], peak: &[f64]) -> Vec<f64> {
        match self {
            ShareCap::Peak => demand.iter().zip(peak).map(|(&d, &p)| if d > 0.0 { p } else { 0.0 }).collect(),
            ShareCap::Demand => demand.to_vec(),
        }
    }
}

/// Per-VM CPU time over one period, in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct VmUsage {
    /// Run time of the VM's vCPUs.
    pub ran_ns: Ns,
    /// Run + runnable-waiting time of the VM's vCPUs.
    pub demand_ns: Ns,
}

/// Over which interval `lag_i(t1, t2)` is measured at an accounting at `t2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LagWindow {
    /// `t1` = the previous accounting (30 ms earlier).
    Period,
    /// `t1` = the last reset of the real-time weights.
    SinceReset,
}

/// FlexW's state inside credit's accounting.
#[derive(Debug, Clone)]
pub struct FlexWAcct {
    gain: f64,
    window: LagWindow,
    share_cap: ShareCap,
    reset_ns: Ns,
    next_reset: Ns,
    /// Cumulative per-VM usage at the last reset, and when it was.
    at_reset: Vec<VmUsage>,
    reset_at: Ns,
    base: Vec<f64>,
    rt: Vec<f64>,
    /// Real-time weights as credit uses them (rounded, 1..=65535).
    weights: Vec<u32>,
    /// Cumulative per-VM (ran, demand) at the previous accounting, and when it ran.
    prev: Vec<VmUsage>,
    prev_at: Ns,
    pub updates: u64,
    pub resets: u64,
}

impl FlexWAcct {
    /// Reads `flexw` (default `on_by_default`), `flexw_gain` and `flexw_reset_ms`. `None` when
    /// off.
    pub fn from_params(p: &mut Params, on_by_default: bool) -> Result<Option<FlexWAcct>, ScenarioError> {
        let on = p.bool("flexw", on_by_default)?;
        // seed 002 "FlexW Design": w'_i = w_i + w_i·lag_i, i.e. gain 1.
        let gain = p.f64("flexw_gain", 1.0, 0.0, 10.0)?;
        // seed 002 "Practical Considerations": reset real-time weight every 10 s.
        let reset_ms = p.f64("flexw_reset_ms", 10_000.0, 1.0, 1e9)?;
        let window = match p.choice("flexw_window", "since_reset", &["since_reset", "period"])? {
            "period" => LagWindow::Period,
            _ => LagWindow::SinceReset,
        };
        let share_cap = ShareCap::from_params(p, "flexw_fair_share")?;
        if !on {
            return Ok(None);
        }
        let reset_ns = ms_to_ns(reset_ms).max(1);
        Ok(Some(FlexWAcct {
            gain,
            window,
            share_cap,
            reset_ns,
            next_reset: reset_ns,
            at_reset: Vec::new(),
            reset_at: 0,
            base: Vec::new(),
            rt: Vec::new(),
            weights: Vec::new(),
            prev: Vec::new(),
            prev_at: 0,
            updates: 0,
            resets: 0,
        }))
    }

    /// The real-time weights (unrounded).
    pub fn real_time_weights(&self) -> &[f64] {
        &self.rt
    }

    /// The weight credit uses for VM `vm` this period.
    pub fn weight(&self, vm: usize) -> u32 {
        self.weights[vm]
    }

    /// Called by `csched_acct` before it distributes credits. `configured` are the VMs'
    /// configured weights, `vcpus` their vCPU counts, `totals` their cumulative usage up to
    /// `now`.
    pub fn on_acct(&mut self, now: Ns, n_pcpus: usize, configured: &[u32], vcpus: &[usize], totals: &[VmUsage]) {
        let n = configured.len();
        if self.base.len() != n {
            self.base = configured.iter().map(|&w| w as f64).collect();
            self.rt = self.base.clone();
            self.prev = vec![VmUsage::default(); n];
            self.at_reset = vec![VmUsage::default(); n];
        }
        for (i, &w) in configured.iter().enumerate() {
            if self.base[i] != w as f64 {
                self.base[i] = w as f64;
                self.rt[i] = w as f64;
            }
        }
        let (from, from_at) = match self.window {
            LagWindow::Period => (&self.prev, self.prev_at),
            LagWindow::SinceReset => (&self.at_reset, self.reset_at),
        };
        let used: Vec<f64> = totals.iter().zip(from).map(|(t, p)| t.ran_ns.saturating_sub(p.ran_ns) as f64).collect();
        let demand: Vec<f64> = totals.iter().zip(from).map(|(t, p)| t.demand_ns.saturating_sub(p.demand_ns) as f64).collect();
        let period = now.saturating_sub(from_at) as f64;
        self.prev = totals.to_vec();
        self.prev_at = now;
        if now >= self.next_reset {
            self.next_reset = (now / self.reset_ns + 1) * self.reset_ns;
            self.rt = self.base.clone();
            self.at_reset = totals.to_vec();
            self.reset_at = now;
            self.resets += 1;
        } else if period > 0.0 {
            let peak: Vec<f64> = vcpus.iter().map(|&n| n as f64 * period).collect();
            let caps = self.share_cap.caps(&demand, &peak);
            let (_, _, w) = flexw_update(n_pcpus as f64 * period, &self.base, &self.rt, &used, &caps, self.gain);
            self.rt = w;
            self.updates += 1;
        }
        self.weights = self.rt.iter().map(|&w| (w.round() as u32).clamp(1, MAX_WEIGHT)).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn hand_computed_lag_and_weights_for_vms_of_one_to_four_vcpus() {
        // 4 pCPUs, a 30 ms period: 120 ms of CPU. Hogs demand 30/60/90/120 ms; credit gave
        // each vCPU 12 ms (120 ms over 10 vCPUs): 12/24/36/48 ms.
        // GPS with equal weights: 30 each. Lags (30-12)/30 = 0.6, 0.2, -0.2, -0.6.
        // w + w·lag = 256·(1.6, 1.2, 0.8, 0.4) = 409.6, 307.2, 204.8, 102.4, whose geometric
        // mean is 256·0.6144^(1/4); rescaled to the configured geometric mean (256) by
        // k = 0.6144^(-1/4) = 1.1295: 462.6, 347.0, 231.3, 115.7.
        let b = [256.0; 4];
        let (gps, lag, w) = flexw_update(120.0, &b, &b, &[12.0, 24.0, 36.0, 48.0], &[30.0, 60.0, 90.0, 120.0], 1.0);
        assert!(close(&gps, &[30.0; 4]), "{gps:?}");
        assert!(close(&lag, &[0.6, 0.2, -0.2, -0.6]), "{lag:?}");
        let k = 0.6144f64.powf(-0.25);
        assert!(close(&w, &[409.6 * k, 307.2 * k, 204.8 * k, 102.4 * k]), "{w:?}");
        assert!((w[0] - 462.64).abs() < 0.01 && (w[3] - 115.66).abs() < 0.01);
        // With gain g the step is w + g·w·lag: g = 0.25 gives 256·(1.15, 1.05, 0.95, 0.85),
        // rescaled the same way.
        let (_, _, wg) = flexw_update(120.0, &b, &b, &[12.0, 24.0, 36.0, 48.0], &[30.0, 60.0, 90.0, 120.0], 0.25);
        let kg = (1.15f64 * 1.05 * 0.95 * 0.85).powf(-0.25);
        assert!(close(&wg, &[256.0 * 1.15 * kg, 256.0 * 1.05 * kg, 256.0 * 0.95 * kg, 256.0 * 0.85 * kg]), "{wg:?}");
        // The next period starts from the real-time weights: with the shares now right the
        // weights stay.
        let (_, lag2, w2) = flexw_update(120.0, &b, &w, &[30.0; 4], &[30.0, 60.0, 90.0, 120.0], 1.0);
        assert!(close(&lag2, &[0.0; 4]) && close(&w2, &w));
    }

    #[test]
    fn peak_demand_below_the_share_is_the_fair_share() {
        // A 1-vCPU VM and a 4-vCPU VM, equal weights, 4 pCPUs: the weighted share is 60 ms
        // each, but the 1-vCPU VM can use at most 30 (its peak demand), so GPS gives it 30 and
        // the other 90. Receiving exactly that, neither lags and the weights stay.
        let b = [256.0, 256.0];
        let (gps, lag, w) = flexw_update(120.0, &b, &b, &[30.0, 90.0], &[30.0, 120.0], 1.0);
        assert!(close(&gps, &[30.0, 90.0]), "{gps:?}");
        assert!(close(&lag, &[0.0, 0.0]) && close(&w, &b));
        // Weights 3:1 — the heavier VM still cannot use more than its peak.
        let (gps, _, _) = flexw_update(120.0, &[768.0, 256.0], &[768.0, 256.0], &[30.0, 90.0], &[30.0, 120.0], 1.0);
        assert!(close(&gps, &[30.0, 90.0]), "{gps:?}");
        // A VM with no demand takes no share and keeps its weight; the others' weights are
        // rescaled among themselves: 256·(7/6, 5/6)·sqrt(36/35).
        let (gps, lag, w) = flexw_update(120.0, &[256.0; 3], &[256.0; 3], &[0.0, 50.0, 70.0], &[0.0, 120.0, 120.0], 1.0);
        assert!(close(&gps, &[0.0, 60.0, 60.0]));
        assert!(close(&lag, &[0.0, 1.0 / 6.0, -1.0 / 6.0]));
        let k = (36.0f64 / 35.0).sqrt();
        assert!(close(&w, &[256.0, 256.0 * 7.0 / 6.0 * k, 256.0 * 5.0 / 6.0 * k]), "{w:?}");
    }

    fn acct(params: &[(&str, toml::Value)]) -> Option<FlexWAcct> {
        let map: BTreeMap<String, toml::Value> = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let mut p = Params::new(&map);
        let f = FlexWAcct::from_params(&mut p, false).unwrap();
        p.finish("credit").unwrap();
        f
    }

    #[test]
    fn off_unless_asked_and_bad_parameters_name_the_field() {
        assert!(acct(&[]).is_none());
        assert!(acct(&[("flexw", toml::Value::Boolean(true))]).is_some());
        let mut m = BTreeMap::new();
        m.insert("flexw_gain".to_string(), toml::Value::Float(-1.0));
        let e = FlexWAcct::from_params(&mut Params::new(&m), true).err().unwrap();
        assert_eq!(e.path, "hypervisor.params.flexw_gain");
    }

    const MS: Ns = 1_000_000;

    fn u(ran: Ns, demand: Ns) -> VmUsage {
        VmUsage { ran_ns: ran * MS, demand_ns: demand * MS }
    }

    /// 2 pCPUs, two 1-vCPU VMs: in the first 30 ms VM 0 ran 20 ms and waited 5 (demand 25 < its
    /// 30 ms share), VM 1 ran 30; in the next 30 ms both ran 30 of 30.
    fn two_periods(f: &mut FlexWAcct) -> [(u32, u32); 2] {
        f.on_acct(30 * MS, 2, &[256, 256], &[1, 1], &[u(20, 25), u(30, 30)]);
        let first = (f.weight(0), f.weight(1));
        f.on_acct(60 * MS, 2, &[256, 256], &[1, 1], &[u(50, 55), u(60, 60)]);
        [first, (f.weight(0), f.weight(1))]
    }

    fn demand_capped() -> (&'static str, toml::Value) {
        ("flexw_fair_share", toml::Value::String("demand".into()))
    }

    #[test]
    fn the_lag_is_measured_since_the_last_reset_or_over_the_last_period() {
        // With the GPS share capped at the measured demand (the older reading), first
        // accounting, both windows: VM 0 lags 5/25 = 0.2 → 256·1.2 and 256, rescaled to
        // geometric mean 256: 256·√1.2 = 280.4 and 256/√1.2 = 233.7.
        let mut since = acct(&[("flexw", toml::Value::Boolean(true)), demand_capped()]).unwrap();
        let [first, second] = two_periods(&mut since);
        assert_eq!(first, (280, 234));
        // Since the reset (60 ms): VM 0 ran 50 of its GPS share 55 (its demand), lag 5/55; VM 1
        // got its 60. Ratio 1.2·(1 + 1/11) = 1.309: 256·√1.309 = 292.9, 256/√1.309 = 223.7.
        assert_eq!(second, (293, 224));
        // Over the last period only: both got all they demanded, no lag, the weights stay.
        let mut period = acct(&[("flexw", toml::Value::Boolean(true)), ("flexw_window", toml::Value::String("period".into())), demand_capped()]).unwrap();
        assert_eq!(two_periods(&mut period), [(280, 234), (280, 234)]);
        assert_eq!((since.updates, period.updates), (2, 2));
        // With the share capped at the peak (default): VM 0's share is its peak, 30 of the
        // first 30 ms, so it lags 10/30 → ratio 4/3: 256·√(4/3) = 295.6, 256/√(4/3) = 221.7;
        // since the reset it lags 10/60 more → ratio (4/3)(7/6): 319.3 and 205.3.
        let mut peak = acct(&[("flexw", toml::Value::Boolean(true))]).unwrap();
        assert_eq!(two_periods(&mut peak), [(296, 222), (319, 205)]);
    }

    #[test]
    fn a_vm_demanding_less_than_its_share_gets_an_ever_increasing_real_time_weight_until_the_reset() {
        // Seed 002 "Practical Considerations": "VMs demanding less than its share will have
        // ever increasing real-time weight / Solution: reset real-time weight every 10s", and
        // "peak demand as the fair share". 2 pCPUs, two 1-vCPU VMs: VM 0 runs 15 ms of every
        // 30 and sleeps the rest (demand 15, below its 30 ms share), VM 1 runs all 30.
        let run = |params: &[(&str, toml::Value)]| -> Vec<u32> {
            let mut f = acct(params).unwrap();
            let mut w = Vec::new();
            for k in 1..=5u64 {
                f.on_acct(30 * k * MS, 2, &[256, 256], &[1, 1], &[u(15 * k, 15 * k), u(30 * k, 30 * k)]);
                w.push(f.weight(0));
            }
            f.on_acct(10_000 * MS, 2, &[256, 256], &[1, 1], &[u(5_000, 5_000), u(10_000, 10_000)]);
            w.push(f.weight(0));
            w
        };
        // Peak as the share: VM 0 lags 50 % at every accounting (since the reset), so its
        // weight is multiplied by 1.5 against VM 1's each time, 256·1.5^(k/2) after the
        // geometric-mean rescaling, until the reset returns it to 256.
        let peak = run(&[("flexw", toml::Value::Boolean(true))]);
        assert_eq!(peak, vec![314, 384, 470, 576, 705, 256]);
        // Capped at its measured demand it never lags: the weight stays.
        let demand = run(&[("flexw", toml::Value::Boolean(true)), demand_capped()]);
        assert_eq!(demand, vec![256; 6]);
    }

    #[test]
    fn the_reset_restores_the_configured_weights_and_a_new_configured_weight_replaces_the_real_time_one() {
        let mut f = acct(&[("flexw", toml::Value::Boolean(true))]).unwrap();
        two_periods(&mut f);
        // At 10 s both return to 256, and the window restarts there.
        f.on_acct(10_020 * MS, 2, &[256, 256], &[1, 1], &[u(9_000, 10_000), u(10_020, 10_020)]);
        assert_eq!((f.weight(0), f.weight(1), f.resets), (256, 256, 1));
        // 30 ms after the reset both got what they demanded: no lag, the weights stay.
        f.on_acct(10_050 * MS, 2, &[256, 256], &[1, 1], &[u(9_030, 10_030), u(10_050, 10_050)]);
        assert_eq!((f.weight(0), f.weight(1)), (256, 256));
        // A changed configured weight replaces that VM's real-time weight (no lag: it stays).
        f.on_acct(10_080 * MS, 2, &[512, 256], &[1, 1], &[u(9_060, 10_060), u(10_080, 10_080)]);
        assert_eq!((f.weight(0), f.weight(1)), (512, 256));
    }

}

#[cfg(test)]
mod scenario_tests {
    use crate::scenario::from_toml_str;
    use crate::sim::{Overrides, Results, Simulation};

    const FAIRNESS: &str = include_str!("../../../../../scenarios/flex-fairness.toml");
    const IN_ACCT: &str = "params = { flexw = true }";

    fn run(params: &str) -> Results {
        assert!(FAIRNESS.contains(IN_ACCT));
        let sc = from_toml_str(&FAIRNESS.replace(IN_ACCT, params)).unwrap();
        let ov = Overrides { check: true, ..Default::default() };
        Simulation::new(&sc, &ov).unwrap().run().unwrap()
    }

    fn mean_abs_lag(r: &Results) -> f64 {
        r.vms.iter().map(|v| v.relative_lag.abs()).sum::<f64>() / r.vms.len() as f64
    }

    fn lags(r: &Results) -> String {
        r.vms.iter().map(|v| format!("{:+.3}", v.relative_lag)).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn flexw_in_credit_accounting_at_gain_one_keeps_vms_of_one_to_four_vcpus_within_five_percent_of_gps() {
        let credit = run("params = {}");
        let flexw = run(IN_ACCT);
        let (c, f) = (mean_abs_lag(&credit), mean_abs_lag(&flexw));
        // Credit gives each vCPU an equal share: the 1-vCPU VM gets 0.4 of its GPS share.
        assert!(c > 0.3, "credit alone: mean |lag| {c:.3} ({})", lags(&credit));
        assert!(f <= 0.05, "credit + FlexW (gain 1): mean |lag| {f:.3} ({})", lags(&flexw));
        assert!(flexw.vms.iter().all(|v| v.relative_lag.abs() <= 0.1), "{}", lags(&flexw));
        // The configured weights are untouched (FlexW's weights live in credit) and are what
        // the ideal share is computed from.
        assert!(flexw.vms.iter().all(|v| v.weight == 256 && (v.ideal_share - 0.25).abs() < 1e-6));
        let c = &flexw.totals.scheduler_counters;
        assert_eq!((c["flexw_updates"], c["flexw_resets"]), (665, 1), "{c:?}");
    }

    #[test]
    fn a_one_slice_lag_window_makes_gain_one_swing_the_weights() {
        // With the lag over the 30 ms period just ended — one credit slice — each VM's usage in
        // a period is a whole number of slices, and `w + w·lag` with lags of -300 %..+100 %
        // swings the weights from bound to bound; the shares follow the swings.
        let since_reset = mean_abs_lag(&run(IN_ACCT));
        let period = run("params = { flexw = true, flexw_window = \"period\" }");
        assert!(mean_abs_lag(&period) > 2.0 * since_reset, "period window {:.3} ({}) vs since reset {since_reset:.3}", mean_abs_lag(&period), lags(&period));
        // A quarter of the step damps it.
        let damped = run("params = { flexw = true, flexw_window = \"period\", flexw_gain = 0.25 }");
        assert!(mean_abs_lag(&damped) <= 0.05, "period window, gain 0.25: {:.3} ({})", mean_abs_lag(&damped), lags(&damped));
    }

    #[test]
    fn flexw_since_reset_is_fair_over_the_run_but_its_shares_swing_over_one_second_windows() {
        // The real-time weight compounds a lag that is itself an average since the reset, so the
        // shares swing around GPS with growing amplitude until the reset, and only the run's
        // average comes close. The run is deterministic, so the run to k s is a prefix of the
        // run to k+1 s: CPU in second k+1 = the difference.
        let base = "duration_ms = 20000";
        assert!(FAIRNESS.contains(base));
        let cpu_to = |s: u64| -> (Vec<f64>, Vec<f64>) {
            let sc = from_toml_str(&FAIRNESS.replace(base, &format!("duration_ms = {}", s * 1000))).unwrap();
            let r = Simulation::new(&sc, &Overrides { check: true, ..Default::default() }).unwrap().run().unwrap();
            (r.vms.iter().map(|v| v.cpu_ns as f64).collect(), r.vms.iter().map(|v| v.ideal_share).collect())
        };
        let runs: Vec<(Vec<f64>, Vec<f64>)> = (0..=20).map(|s| if s == 0 { (vec![0.0; 4], vec![0.25; 4]) } else { cpu_to(s) }).collect();
        let host_s_ns = 4.0 * 1e9;
        let mut window_lags = Vec::new();
        for k in 1..=20 {
            for vm in 0..4 {
                let gps = runs[k].1[vm] * host_s_ns;
                window_lags.push(((runs[k].0[vm] - runs[k - 1].0[vm]) - gps) / gps);
            }
        }
        let whole: f64 = (0..4).map(|vm| ((runs[20].0[vm] - runs[20].1[vm] * 20.0 * host_s_ns) / (runs[20].1[vm] * 20.0 * host_s_ns)).abs()).sum::<f64>() / 4.0;
        let windows: f64 = window_lags.iter().map(|l| l.abs()).sum::<f64>() / window_lags.len() as f64;
        let worst = window_lags.iter().fold(0.0f64, |m, l| m.max(l.abs()));
        // Measured: 2.4 % over the run, 30.7 % over 1 s windows, a VM 136 % off in its worst second
        // (session 8, before credit took Xen's active_sdom order: 1.7 %, 34 %, 105 %).
        assert!(whole <= 0.05, "whole run: {whole:.3}");
        assert!(windows > 0.25 && windows > 10.0 * whole, "1 s windows: {windows:.3} (whole {whole:.3})");
        assert!(worst > 0.9, "worst VM-second: {worst:.3}");
    }
}
