//! `vmsched._core`: thin PyO3 bindings of `vmsched-core`.
//!
//! Everything crosses the boundary as JSON text (scenarios, results, the catalogue), so the
//! Python package owns the user-facing API (`python/vmsched`) and this crate stays a shim.
//!
//! Errors: a `ScenarioError` of the core becomes `vmsched.errors.ScenarioError(path, reason)`
//! (a `ValueError`), a `SimError` becomes `vmsched.errors.SimulationError(at_ns, message)`
//! (a `RuntimeError`). Both classes are defined in Python and looked up when raised.

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
    let sc = scenario::from_toml_str(text).map_err(|e| scenario_err(py, e))?;
    echo(py, &sc)
}

/// Parse and validate a JSON scenario; return the normalised scenario as JSON.
#[pyfunction]
fn validate_json(py: Python<'_>, text: &str) -> PyResult<String> {
    let sc = scenario::from_json_str(text).map_err(|e| scenario_err(py, e))?;
    echo(py, &sc)
}

/// The catalogue of schedulers and workloads: `{"schedulers": [...], "workloads": [...]}`.
#[pyfunction]
fn catalog_json() -> PyResult<String> {
    let v = serde_json::json!({
        "schedulers": vmsched_core::catalog::schedulers(),
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
        let sc = scenario::from_json_str(scenario_json).map_err(|e| scenario_err(py, e))?;
        let ov = Overrides { scheduler, seed, check };
        let inner = sim::Simulation::new(&sc, &ov).map_err(|e| scenario_err(py, e))?;
        Ok(Simulation { inner })
    }

    /// Advance simulated time to `t_ns` (clamped to the horizon). Releases the GIL.
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        let p = SimPtr(&mut self.inner);
        // SAFETY: see `SimPtr`.
        py.allow_threads(move || unsafe { p.get() }.run_until(t_ns)).map_err(|e| sim_err(py, e))
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

    /// The results so far, as the pretty JSON of `docs/results.md` (byte-stable).
    fn results_json(&mut self, py: Python<'_>) -> String {
        let p = SimPtr(&mut self.inner);
        // SAFETY: see `SimPtr`.
        py.allow_threads(move || sim::results_json(&unsafe { p.get() }.results()))
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
    m.add_function(wrap_pyfunction!(validate_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(catalog_json, m)?)?;
    m.add_class::<Simulation>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
