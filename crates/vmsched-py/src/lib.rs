//! `vmsched._core`: thin PyO3 bindings of `vmsched-core`.
//!
//! Everything crosses the boundary as JSON text (scenarios, results, the catalogue), so the
//! Python package owns the user-facing API (`python/vmsched`) and this crate stays a shim.
//!
//! Errors: a `ScenarioError` of the core becomes `vmsched.errors.ScenarioError(path, reason)`
//! (a `ValueError`), a `SimError` becomes `vmsched.errors.SimulationError(at_ns, message)`
//! (a `RuntimeError`), a Rust panic (a bug in the core) becomes
//! `vmsched.errors.InternalError(message)`. The classes are defined in Python and looked up
//! when raised.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use vmsched_core::scenario::{self, Scenario, ScenarioError};
use vmsched_core::sim::{self, Overrides, SimError};

/// Build a Python exception instance from `vmsched.errors.<class>(*args)`.
fn py_error<'py, A>(py: Python<'py>, class: &str, args: A) -> PyErr
where
    A: IntoPyObject<'py, Target = pyo3::types::PyTuple>,
{
    let built = py
        .import("vmsched.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1(args));
    match built {
        Ok(obj) => PyErr::from_value(obj),
        Err(e) => e,
    }
}

thread_local! {
    /// Message and location of the last Rust panic on this thread (set by our panic hook).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Replace the default panic hook (which prints a multi-line report to stderr) with one that
/// records the message and location; `guard` turns the panic into `vmsched.errors.InternalError`.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        panic::set_hook(Box::new(|info| {
            let p = info.payload();
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            let loc = info
                .location()
                .map(|l| format!(" (at {}:{}:{})", l.file(), l.line(), l.column()))
                .unwrap_or_default();
            LAST_PANIC.with(|c| *c.borrow_mut() = Some(format!("{msg}{loc}")));
        }));
    });
}

/// Run `f`, turning a Rust panic into an `Err(message)`.
fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|_| {
        LAST_PANIC.with(|c| c.borrow_mut().take()).unwrap_or_else(|| "panic".to_string())
    })
}

fn internal_err(py: Python<'_>, msg: String) -> PyErr {
    py_error(py, "InternalError", (msg,))
}

fn scenario_err(py: Python<'_>, e: ScenarioError) -> PyErr {
    py_error(py, "ScenarioError", (e.path, e.reason))
}

fn sim_err(py: Python<'_>, e: SimError) -> PyErr {
    py_error(py, "SimulationError", (e.at_ns, e.message))
}

fn echo(py: Python<'_>, sc: &Scenario) -> PyResult<String> {
    serde_json::to_string(sc).map_err(|e| {
        let _ = py;
        PyRuntimeError::new_err(format!("cannot serialise scenario: {e}"))
    })
}

/// Parse and validate a TOML scenario; return the normalised scenario (defaults filled) as JSON.
#[pyfunction]
fn validate_toml(py: Python<'_>, text: &str) -> PyResult<String> {
    let sc = catch(|| scenario::from_toml_str(text))
        .map_err(|m| internal_err(py, m))?
        .map_err(|e| scenario_err(py, e))?;
    echo(py, &sc)
}

/// Parse and validate a JSON scenario; return the normalised scenario as JSON.
#[pyfunction]
fn validate_json(py: Python<'_>, text: &str) -> PyResult<String> {
    let sc = catch(|| scenario::from_json_str(text))
        .map_err(|m| internal_err(py, m))?
        .map_err(|e| scenario_err(py, e))?;
    echo(py, &sc)
}

/// The catalogue: `{"schedulers": [...], "controllers": [...], "workloads": [...]}`.
#[pyfunction]
fn catalog_json() -> PyResult<String> {
    let v = serde_json::json!({
        "schedulers": vmsched_core::catalog::schedulers(),
        "controllers": vmsched_core::catalog::controllers(),
        "workloads": vmsched_core::catalog::workloads(),
    });
    serde_json::to_string(&v).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// One simulation run, advanced in steps with `run_until`.
///
/// `unsendable`: the core's `Simulation` holds trait objects that are not `Send`, so the
/// object stays on the Python thread that created it (PyO3 raises if another thread uses it).
#[pyclass(module = "vmsched._core", unsendable)]
struct Simulation {
    inner: sim::Simulation,
    /// Set after a panic inside the core: the state may be inconsistent, refuse to go on.
    poisoned: Option<String>,
}

/// A pointer to a `Simulation` that may cross the `allow_threads` boundary.
///
/// Safety: `allow_threads` runs its closure synchronously on the *current* thread and only
/// releases the GIL meanwhile. The pointer comes from `&mut self` (or `&self`) of an
/// `unsendable` pyclass, whose borrow is held for the whole call and which PyO3 lets only its
/// owning thread touch, so nothing else can access the simulation (or any `Rc` it owns) while
/// the closure runs.
struct SimPtr(*mut sim::Simulation);
unsafe impl Send for SimPtr {}

impl SimPtr {
    /// Safety: see the type's documentation.
    unsafe fn get(&self) -> &mut sim::Simulation {
        &mut *self.0
    }
}

impl Simulation {
    fn check_poisoned(&self, py: Python<'_>) -> PyResult<()> {
        match &self.poisoned {
            Some(m) => Err(internal_err(py, format!("simulation unusable after an earlier panic: {m}"))),
            None => Ok(()),
        }
    }
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (scenario_json, scheduler=None, seed=None, check=false))]
    fn new(
        py: Python<'_>,
        scenario_json: &str,
        scheduler: Option<String>,
        seed: Option<u64>,
        check: bool,
    ) -> PyResult<Self> {
        let sc = catch(|| scenario::from_json_str(scenario_json))
            .map_err(|m| internal_err(py, m))?
            .map_err(|e| scenario_err(py, e))?;
        let ov = Overrides { scheduler, seed, check };
        let inner = catch(|| sim::Simulation::new(&sc, &ov))
            .map_err(|m| internal_err(py, m))?
            .map_err(|e| scenario_err(py, e))?;
        Ok(Simulation { inner, poisoned: None })
    }

    /// Advance simulated time to `t_ns` (clamped to the horizon). Releases the GIL.
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        self.check_poisoned(py)?;
        let p = SimPtr(&mut self.inner);
        // SAFETY: see `SimPtr`.
        let r = py.allow_threads(move || catch(|| unsafe { p.get() }.run_until(t_ns)));
        match r {
            Ok(r) => r.map_err(|e| sim_err(py, e)),
            Err(m) => {
                self.poisoned = Some(m.clone());
                Err(internal_err(py, m))
            }
        }
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }

    #[getter]
    fn horizon_ns(&self) -> u64 {
        self.inner.horizon_ns()
    }

    #[getter]
    fn done(&self) -> bool {
        self.inner.is_done()
    }

    #[getter]
    fn events(&self) -> u64 {
        self.inner.events_processed()
    }

    /// What a controller sees now (`controllers::HostStats`), as JSON.
    fn stats_json(&self, py: Python<'_>) -> PyResult<String> {
        self.check_poisoned(py)?;
        let s = catch(|| serde_json::to_string(&self.inner.stats()).expect("stats serialise")).map_err(|m| internal_err(py, m))?;
        Ok(s)
    }

    /// Apply a JSON list of actions from controller `by`. An invalid action raises
    /// `ScenarioError` naming it (`actions[1].pcpus`) and none is applied.
    fn apply_json(&mut self, py: Python<'_>, by: &str, actions_json: &str) -> PyResult<()> {
        self.check_poisoned(py)?;
        let mut de = serde_json::Deserializer::from_str(actions_json);
        let actions: Vec<vmsched_core::controllers::Action> = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { "actions".to_string() } else { format!("actions{}", if path.starts_with('[') { path } else { format!(".{path}") }) };
            scenario_err(py, ScenarioError::new(path, e.into_inner().to_string()))
        })?;
        match catch(|| self.inner.apply(by, &actions)) {
            Ok(r) => r.map_err(|e| scenario_err(py, e)),
            Err(m) => {
                self.poisoned = Some(m.clone());
                Err(internal_err(py, m))
            }
        }
    }

    /// Record a timeline trace of `[from_ns, until_ns)` (`vmsched_core::trace`) from now on.
    /// A bad window or cap raises `ScenarioError` naming it.
    fn enable_trace(&mut self, py: Python<'_>, from_ns: u64, until_ns: u64, max_slices: usize) -> PyResult<()> {
        self.check_poisoned(py)?;
        self.inner.enable_trace(from_ns, until_ns, max_slices).map_err(|e| scenario_err(py, e))
    }

    /// The trace so far as Chrome Trace Event JSON, or None if no trace is on.
    fn trace_json(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.check_poisoned(py)?;
        catch(|| self.inner.trace_json()).map_err(|m| internal_err(py, m))
    }

    /// When the trace's slice cap stopped its recording (ns), or None.
    #[getter]
    fn trace_truncated_at_ns(&self) -> Option<u64> {
        self.inner.trace_truncated_at_ns()
    }

    /// The results so far, as the pretty JSON of `docs/results.md` (byte-stable).
    fn results_json(&mut self, py: Python<'_>) -> PyResult<String> {
        self.check_poisoned(py)?;
        let p = SimPtr(&mut self.inner);
        // SAFETY: see `SimPtr`.
        py.allow_threads(move || catch(|| sim::results_json(&unsafe { p.get() }.results())))
            .map_err(|m| internal_err(py, m))
    }

    fn __repr__(&self) -> String {
        format!(
            "<vmsched._core.Simulation now_ns={} horizon_ns={} events={}>",
            self.inner.now_ns(),
            self.inner.horizon_ns(),
            self.inner.events_processed()
        )
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add_function(wrap_pyfunction!(validate_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(catalog_json, m)?)?;
    m.add_class::<Simulation>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
