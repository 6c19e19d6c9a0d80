//! Helpers for the kernels' unit tests: build tensors and nodes, run one op version.

use super::{invoke, resolve, Attrs, Invocation, Resolution, SpecError};
use crate::pb::{attribute_proto::AttributeType, AttributeProto, NodeProto};
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

/// An INT attribute.
pub fn int_attr(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i,
        ..Default::default()
    }
}

/// A STRING attribute.
pub fn str_attr(name: &str, s: &str) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::String as i32,
        s: s.as_bytes().to_vec(),
        ..Default::default()
    }
}

/// Runs `op` of the default domain at `opset` on `inputs`.
pub fn run(
    op: &str,
    opset: i64,
    attrs: Vec<AttributeProto>,
    inputs: &[&Tensor],
) -> Result<Tensor, SpecError> {
    run_limited(op, opset, attrs, inputs, 1 << 30)
}

/// [`run`] with an output size limit.
pub fn run_limited(
    op: &str,
    opset: i64,
    attrs: Vec<AttributeProto>,
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
    attrs: Vec<AttributeProto>,
    inputs: &[&Tensor],
    max_bytes: usize,
) -> Result<Tensor, SpecError> {
    let Resolution::Found(def, version) = resolve(domain, op, opset) else {
        panic!("{op} does not resolve at opset {opset}");
    };
    let node = NodeProto {
        op_type: op.into(),
        domain: domain.into(),
        input: (0..inputs.len()).map(|i| format!("in{i}")).collect(),
        output: vec!["out".into()],
        attribute: attrs,
        ..Default::default()
    };
    let inv = Invocation {
        def,
        version,
        attrs: Attrs::of_node(&node),
        inputs: inputs.iter().map(|t| Some(*t)).collect(),
        outputs: node.output.len(),
        max_bytes,
        model_dir: std::path::Path::new("."),
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
