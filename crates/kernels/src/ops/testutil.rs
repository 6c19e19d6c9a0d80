//! Helpers for the kernels' unit tests: build tensors and nodes, run one op version.

use super::{invoke, resolve, AttrValue, Attrs, Invocation, Resolution, SpecError};
use crate::tensor::{DType, Tensor};

/// A float tensor.
pub fn f32s(shape: &[usize], v: &[f32]) -> Tensor {
    Tensor::from_elems(
        DType::Float,
        shape.to_vec(),
        v.iter().map(|x| x.to_bits()).collect(),
    )
    .unwrap()
}

/// An int64 tensor.
pub fn i64s(shape: &[usize], v: &[i64]) -> Tensor {
    Tensor::from_elems(
        DType::Int64,
        shape.to_vec(),
        v.iter().map(|&x| x as u64).collect(),
    )
    .unwrap()
}

/// An int32 tensor.
pub fn i32s(shape: &[usize], v: &[i32]) -> Tensor {
    Tensor::from_elems(
        DType::Int32,
        shape.to_vec(),
        v.iter().map(|&x| x as u32).collect(),
    )
    .unwrap()
}

/// One attribute of a node: its name and value.
pub type Attr = (String, AttrValue<'static>);

/// An INT attribute.
pub fn int_attr(name: &str, i: i64) -> Attr {
    (name.into(), AttrValue::Int(i))
}

/// A STRING attribute.
pub fn str_attr(name: &str, s: &str) -> Attr {
    (name.into(), AttrValue::Str(s.as_bytes().to_vec().into()))
}

/// Attributes as a node gives them, in order.
pub fn attrs_of(attrs: Vec<Attr>) -> Attrs<'static> {
    attrs
        .into_iter()
        .fold(Attrs::new(), |a, (name, value)| a.with(name, value))
}

/// Runs `op` of the default domain at `opset` on `inputs`.
pub fn run(
    op: &str,
    opset: i64,
    attrs: Vec<Attr>,
    inputs: &[&Tensor],
) -> Result<Tensor, SpecError> {
    run_limited(op, opset, attrs, inputs, 1 << 30)
}

/// [`run`] with an output size limit.
pub fn run_limited(
    op: &str,
    opset: i64,
    attrs: Vec<Attr>,
    inputs: &[&Tensor],
    max_bytes: usize,
) -> Result<Tensor, SpecError> {
    run_in("", op, opset, attrs, inputs, max_bytes)
}

/// Runs `op` of `domain` at `opset` on `inputs`, with an output size limit.
pub fn run_in(
    domain: &str,
    op: &str,
    opset: i64,
    attrs: Vec<Attr>,
    inputs: &[&Tensor],
    max_bytes: usize,
) -> Result<Tensor, SpecError> {
    let Resolution::Found(def, version) = resolve(domain, op, opset) else {
        panic!("{op} does not resolve at opset {opset}");
    };
    let inv = Invocation {
        def,
        version,
        attrs: attrs_of(attrs),
        inputs: inputs.iter().map(|t| Some(*t)).collect(),
        outputs: 1,
        max_bytes,
    };
    invoke(&inv).map(|mut e| e.outputs.remove(0).tensor)
}

/// The error message of a run that must fail.
pub fn err(r: Result<Tensor, SpecError>) -> String {
    match r {
        Ok(t) => panic!("expected an error, got {t:?}"),
        Err(e) => e.to_string(),
    }
}

/// Runs `f` on a fresh rayon pool of `threads` threads (the kernels' parallelism follows it).
pub fn under<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}
