//! The extension module `onnx_idx_check._native`: the thin layer between Python and the library.
//!
//! The Python package (`onnx_idx_check/`) turns numpy arrays into `(dtype, shape, words)`
//! triples, where `dtype` is the ONNX dtype id and `words` a flat numpy array of unsigned words
//! of the element's width (one byte per element for the packed sub-byte types, a list of
//! `bytes` for strings), and back. Every rule and every message is the library's: this module
//! only converts and releases the GIL while a kernel runs.

use numpy::{IntoPyArray, PyReadonlyArray1};
use onnx_idx_check::load::attrs::value_of;
use onnx_idx_check::ops::DEFAULT_MAX_OUTPUT_BYTES;
use onnx_idx_check::ops::{call_op, find_op, Attrs};
use onnx_idx_check::pb::AttributeProto;
use onnx_idx_check::report::human::{failure_details, Style};
use onnx_idx_check::report::Rerun;
use onnx_idx_check::tensor::{DType, Layout, Storage, Tensor};
use onnx_idx_check::{CheckError, CheckOptions};
use prost::Message;
use pyo3::create_exception;
use pyo3::exceptions::{PyMemoryError, PyNotImplementedError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Outputs written into warm memory: large blocks that numpy frees (an earlier output dropped)
/// are kept and lent to the next call's output, so that a call does not pay a page fault per
/// 4 KiB of output. The binary gets this from `keep_freed_memory`, which would change `malloc`
/// for the whole Python process.
#[global_allocator]
static ALLOC: onnx_idx_check::kernels::alloc::ReuseLargeAlloc =
    onnx_idx_check::kernels::alloc::ReuseLargeAlloc;

create_exception!(
    onnx_idx_check,
    SpecError,
    PyValueError,
    "The inputs or attributes break the operator's spec at this version (an out-of-range index, a \
     wrong shape, a dtype or attribute the version does not allow): a runtime must refuse them. \
     The message is the one `onnx-idx-check run` prints for such a case."
);
create_exception!(
    onnx_idx_check,
    UnsupportedError,
    PyNotImplementedError,
    "The spec allows these inputs, but onnx-idx-check does not evaluate them (the max of strings, \
     say): `run` skips such a case."
);
create_exception!(
    onnx_idx_check,
    OutputTooLargeError,
    PyMemoryError,
    "An output would be larger than `max_output_bytes` (4 GiB unless raised), or than this \
     machine can allocate; nothing was allocated."
);

/// A library error as the Python exception of its kind.
fn spec_error(e: onnx_idx_check::SpecError) -> PyErr {
    match e {
        onnx_idx_check::SpecError::Violation(m) => SpecError::new_err(m),
        // A decision of this project: still a SpecError to Python, its message naming the
        // decision.
        e @ onnx_idx_check::SpecError::Decision { .. } => SpecError::new_err(e.to_string()),
        onnx_idx_check::SpecError::Unsupported(m) => UnsupportedError::new_err(m),
        onnx_idx_check::SpecError::TooLarge(m) => OutputTooLargeError::new_err(m),
    }
}

/// The dtype with ONNX id `id`.
fn dtype_of(id: i32) -> PyResult<DType> {
    DType::from_onnx(id).ok_or_else(|| PyValueError::new_err(format!("unknown ONNX dtype id {id}")))
}

/// A copy of a flat numpy array of `T` words, made without the GIL.
fn words<T: numpy::Element + Copy + Sync>(
    py: Python<'_>,
    payload: &Bound<'_, PyAny>,
) -> PyResult<Vec<T>> {
    let array: PyReadonlyArray1<'_, T> = payload.extract()?;
    match array.as_slice() {
        Ok(s) => Ok(py.detach(|| s.to_vec())),
        // A strided view: numpy could not give one run of memory.
        Err(_) => Ok(array.as_array().iter().copied().collect()),
    }
}

/// A tensor that reads a flat numpy array of `T` words in place, or a copy of it where numpy's
/// memory is not one aligned run.
fn shared<T: numpy::Element + Copy + Sync>(
    py: Python<'_>,
    dtype: DType,
    shape: Vec<usize>,
    payload: &Bound<'_, PyAny>,
    wrap: fn(Vec<T>) -> Storage,
) -> PyResult<Tensor> {
    let array: PyReadonlyArray1<'_, T> = payload.extract()?;
    if let Ok(s) = array.as_slice() {
        // The tensor holds a reference to the array, so the memory outlives every use.
        let owner: Arc<dyn Any + Send + Sync> = Arc::new(payload.clone().unbind());
        // SAFETY: `s` is the array's memory, `s.len()` elements of the dtype's width, kept alive
        // by `owner`. Nothing in this module writes to it; like numpy's own functions, which also
        // release the GIL, the caller must not write to an input from another thread while the
        // call runs (the package's documentation says so).
        if let Ok(t) =
            unsafe { Tensor::from_shared(dtype, shape.clone(), s.as_ptr().cast(), owner) }
        {
            return Ok(t);
        }
    }
    Tensor::new(dtype, shape, wrap(words::<T>(py, payload)?))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Packs one code per byte (the low `bits` bits, as `ml_dtypes` stores them) into ONNX's
/// packed layout: first element in the least significant bits.
fn pack(codes: &[u8], bits: u32) -> PyResult<Vec<u8>> {
    let bits = bits as usize;
    let mut out = vec![0u8; (codes.len() * bits).div_ceil(8)];
    for (i, &c) in codes.iter().enumerate() {
        if usize::from(c) >> bits != 0 {
            return Err(PyValueError::new_err(format!(
                "element {i} has code {c:#04x}, which does not fit in {bits} bits"
            )));
        }
        let bit = i * bits;
        let word = u16::from(c) << (bit % 8);
        out[bit / 8] |= word as u8;
        if bit % 8 + bits > 8 {
            out[bit / 8 + 1] |= (word >> 8) as u8;
        }
    }
    Ok(out)
}

/// The inverse of [`pack`]: `count` codes of `bits` bits, one per byte.
fn unpack(bytes: &[u8], bits: u32, count: usize) -> Vec<u8> {
    let bits = bits as usize;
    let mask = (1u16 << bits) - 1;
    (0..count)
        .map(|i| {
            let bit = i * bits;
            let lo = u16::from(bytes[bit / 8]);
            let hi = bytes.get(bit / 8 + 1).map_or(0, |&b| u16::from(b));
            (((lo | hi << 8) >> (bit % 8)) & mask) as u8
        })
        .collect()
}

/// The tensor a `(dtype, shape, words)` triple describes.
fn tensor_of(
    py: Python<'_>,
    id: i32,
    shape: Vec<usize>,
    payload: &Bound<'_, PyAny>,
) -> PyResult<Tensor> {
    let dtype = dtype_of(id)?;
    let storage = match dtype.layout() {
        Layout::Bytes(1) => {
            if dtype == DType::Bool {
                let a: PyReadonlyArray1<'_, u8> = payload.extract()?;
                if a.as_array().iter().any(|&b| b > 1) {
                    return Err(PyValueError::new_err(
                        "a bool array holds bytes other than 0 and 1",
                    ));
                }
            }
            return shared::<u8>(py, dtype, shape, payload, Storage::W8);
        }
        Layout::Bytes(2) => return shared::<u16>(py, dtype, shape, payload, Storage::W16),
        Layout::Bytes(4) => return shared::<u32>(py, dtype, shape, payload, Storage::W32),
        Layout::Bytes(8) => return shared::<u64>(py, dtype, shape, payload, Storage::W64),
        // complex128: pairs of 64-bit words, real part first.
        Layout::Bytes(_) => Storage::W128(
            words::<u64>(py, payload)?
                .chunks_exact(2)
                .map(|c| u128::from(c[0]) | u128::from(c[1]) << 64)
                .collect(),
        ),
        Layout::Packed(bits) => Storage::Packed(pack(&words::<u8>(py, payload)?, bits)?),
        Layout::String => {
            let list = payload.cast::<PyList>()?;
            Storage::Str(
                list.iter()
                    .map(|s| s.extract::<Vec<u8>>())
                    .collect::<PyResult<_>>()?,
            )
        }
    };
    Tensor::new(dtype, shape, storage).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A tensor as a `(dtype, shape, words)` triple; the words are handed to numpy without a copy.
fn triple_of(py: Python<'_>, t: Tensor) -> PyResult<(i32, Vec<usize>, Py<PyAny>)> {
    let (dtype, shape, count) = (t.dtype(), t.shape().to_vec(), t.numel());
    let words = match t.into_storage() {
        Storage::W8(v) => v.into_pyarray(py).into_any(),
        Storage::W16(v) => v.into_pyarray(py).into_any(),
        Storage::W32(v) => v.into_pyarray(py).into_any(),
        Storage::W64(v) => v.into_pyarray(py).into_any(),
        Storage::W128(v) => v
            .iter()
            .flat_map(|&w| [w as u64, (w >> 64) as u64])
            .collect::<Vec<u64>>()
            .into_pyarray(py)
            .into_any(),
        Storage::Packed(v) => {
            let Layout::Packed(bits) = dtype.layout() else {
                unreachable!("packed storage holds a packed dtype")
            };
            unpack(&v, bits, count).into_pyarray(py).into_any()
        }
        Storage::Str(v) => PyList::new(py, v.iter().map(|s| PyBytes::new(py, s)))?.into_any(),
    };
    Ok((dtype.onnx_id(), shape, words.unbind()))
}

/// One attribute as given from Python.
enum AttrIn {
    Int(i64),
    Str(String),
    Proto(Box<AttributeProto>),
}

/// Evaluates operator `op_type` of `domain` at `opset` as a node with `outputs` outputs: the same
/// resolution, checks, kernel and messages as `onnx-idx-check run`. `attrs` are `(name, value)`
/// pairs, a value an `int`, a `str` or a serialized `onnx.AttributeProto` (`bytes`); `inputs` are
/// triples or `None` for an omitted optional input.
#[pyfunction]
#[pyo3(signature = (domain, op_type, opset, attrs, inputs, outputs = 1, max_bytes = DEFAULT_MAX_OUTPUT_BYTES))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn evaluate(
    py: Python<'_>,
    domain: &str,
    op_type: &str,
    opset: i64,
    attrs: Vec<(String, Bound<'_, PyAny>)>,
    inputs: Vec<Option<(i32, Vec<usize>, Bound<'_, PyAny>)>>,
    outputs: usize,
    max_bytes: usize,
) -> PyResult<Vec<(i32, Vec<usize>, Py<PyAny>)>> {
    let def = find_op(domain, op_type).ok_or_else(|| {
        PyValueError::new_err(format!(
            "onnx-idx-check has no operator {op_type} in domain '{domain}'"
        ))
    })?;
    let given = attrs
        .into_iter()
        .map(|(name, v)| {
            let value = if let Ok(s) = v.cast::<PyString>() {
                AttrIn::Str(s.extract::<String>()?)
            } else if let Ok(b) = v.cast::<PyBytes>() {
                AttrIn::Proto(Box::new(AttributeProto::decode(b.as_bytes()).map_err(|e| {
                    PyValueError::new_err(format!(
                        "attribute '{name}': not a serialized AttributeProto: {e}"
                    ))
                })?))
            } else {
                AttrIn::Int(v.extract::<i64>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "attribute '{name}' must be an int, a str or a serialized AttributeProto, not {}",
                        v.get_type().name().map_or_else(|_| "?".to_string(), |n| n.to_string())
                    ))
                })?)
            };
            Ok((name, value))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let tensors = inputs
        .into_iter()
        .map(|i| {
            i.map(|(id, shape, words)| tensor_of(py, id, shape, &words))
                .transpose()
        })
        .collect::<PyResult<Vec<_>>>()?;
    let results = py.detach(|| {
        let mut a = Attrs::new();
        for (name, value) in &given {
            a = match value {
                AttrIn::Int(i) => a.with_int(name, *i),
                AttrIn::Str(s) => a.with_str(name, s.as_str()),
                AttrIn::Proto(p) => a.with(
                    p.name.as_str(),
                    value_of(p, std::path::Path::new("."), max_bytes),
                ),
            };
        }
        let refs: Vec<Option<&Tensor>> = tensors.iter().map(Option::as_ref).collect();
        call_op(def, opset, a, &refs, outputs.max(1), max_bytes)
    });
    let results = results.map_err(spec_error)?;
    results.into_iter().map(|t| triple_of(py, t)).collect()
}

/// Runs the command line with `argv` (`argv[0]` the program name) and returns its exit status:
/// what the `onnx-idx-check` console script calls. `keep_freed_memory` sets the binary's memory
/// policy for the whole process (the console script's process is the command's own).
#[pyfunction]
#[pyo3(signature = (argv, keep_freed_memory = false))]
fn main(py: Python<'_>, argv: Vec<String>, keep_freed_memory: bool) -> u8 {
    py.detach(|| {
        if keep_freed_memory {
            onnx_idx_check::kernels::alloc::keep_freed_memory();
        }
        onnx_idx_check_cli::main(argv)
    })
}

/// What `check` returns: the JSON report, the failed cases' details as `run` prints them, and
/// whether the gate passed.
type Checked = (String, String, bool);

/// `onnx_idx_check.check()`: the pipeline of `run` on `paths`, with `run`'s options.
#[pyfunction]
#[pyo3(signature = (
    paths, *, actual = None, runtime = None, runtime_cmd = None, expectations = None,
    filter = Vec::new(), exclude = Vec::new(), jobs = None, rtol = None, atol = None,
    exact = false, timeout = None, repeat = None, max_tensor_bytes = None, fail_fast = false,
    deny_skip = false, min_cases = None, require_ops = Vec::new()
))]
#[allow(clippy::too_many_arguments)]
fn check(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    actual: Option<PathBuf>,
    runtime: Option<String>,
    runtime_cmd: Option<String>,
    expectations: Option<PathBuf>,
    filter: Vec<String>,
    exclude: Vec<String>,
    jobs: Option<usize>,
    rtol: Option<f64>,
    atol: Option<f64>,
    exact: bool,
    timeout: Option<f64>,
    repeat: Option<usize>,
    max_tensor_bytes: Option<usize>,
    fail_fast: bool,
    deny_skip: bool,
    min_cases: Option<usize>,
    require_ops: Vec<String>,
) -> PyResult<Checked> {
    let mut o = CheckOptions::default();
    if let Some(d) = actual {
        o = o.actual(d);
    }
    if let Some(r) = runtime {
        o = o.runtime(r);
    }
    if let Some(c) = runtime_cmd {
        o = o.runtime_cmd(c);
    }
    if let Some(e) = expectations {
        o = o.expectations(e);
    }
    for f in filter {
        o = o.filter(f);
    }
    for x in exclude {
        o = o.exclude(x);
    }
    if let Some(j) = jobs {
        o = o.jobs(j);
    }
    if exact {
        o = o.exact();
    } else if rtol.is_some() || atol.is_some() {
        let (r, a) = (o.tolerance.rtol, o.tolerance.atol);
        o = o.tolerance(rtol.unwrap_or(r), atol.unwrap_or(a));
    }
    if let Some(t) = timeout {
        let limit = Duration::try_from_secs_f64(t).map_err(|_| {
            PyValueError::new_err(format!("timeout must be a number of seconds >= 0, not {t}"))
        })?;
        o = o.timeout(Some(limit));
    }
    if let Some(n) = repeat {
        o = o.repeat(n);
    }
    if let Some(b) = max_tensor_bytes {
        o = o.max_tensor_bytes(b);
    }
    if let Some(n) = min_cases {
        o = o.min_cases(n);
    }
    for op in require_ops {
        o = o.require_op(op);
    }
    let o = o.fail_fast(fail_fast).deny_skip(deny_skip);
    let roots = paths.clone();
    let report = py.detach(|| onnx_idx_check::check(&paths, &o));
    let report = report.map_err(|e| match e {
        CheckError::InvalidOption { .. } => PyValueError::new_err(e.to_string()),
        other => PyRuntimeErrorLike::new_err(other.to_string()),
    })?;
    let rerun = Rerun {
        prefix: "onnx-idx-check run".to_string(),
        roots,
        suffix: String::new(),
    };
    let details = failure_details(&report.cases, Style { color: false }, &rerun);
    Ok((report.to_json(), details, report.passed()))
}

create_exception!(
    onnx_idx_check,
    CheckFailedToRun,
    pyo3::exceptions::PyRuntimeError,
    "A check could not run at all: no case under the paths, an unreadable expectations file, a \
     runtime under test that did not start. No verdict exists."
);
use CheckFailedToRun as PyRuntimeErrorLike;

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("SpecError", py.get_type::<SpecError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("OutputTooLargeError", py.get_type::<OutputTooLargeError>())?;
    m.add("CheckFailedToRun", py.get_type::<CheckFailedToRun>())?;
    m.add("DEFAULT_MAX_OUTPUT_BYTES", DEFAULT_MAX_OUTPUT_BYTES)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    Ok(())
}
