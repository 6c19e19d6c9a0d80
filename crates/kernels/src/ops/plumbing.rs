//! Graph plumbing that official test models use around the operators under test (D15):
//! Constant (<https://onnx.ai/onnx/operators/onnx__Constant.html>) and Identity
//! (<https://onnx.ai/onnx/operators/onnx__Identity.html>).
//!
//! Their versions only widen types or add value attributes, so one kernel serves all of them.

use super::{
    AttrSpec, AttrValue, Constraint, Evaluated, Indexing, InputSpec, Invocation, OpDef, OpVersion,
    Role, SpecError,
};
use crate::spec_err;
use crate::tensor::{DType, DTypeSet, Storage, Tensor};

const ANY: DTypeSet = DTypeSet::of(&DType::ALL);

const CONSTANT_ATTRS: &[AttrSpec] = &[
    AttrSpec::any("value"),
    AttrSpec::any("sparse_value"),
    AttrSpec::any("value_float"),
    AttrSpec::any("value_floats"),
    AttrSpec::any("value_int"),
    AttrSpec::any("value_ints"),
    AttrSpec::any("value_string"),
    AttrSpec::any("value_strings"),
];

/// Plumbing ops take any dtype.
const CONSTRAINTS: &[Constraint] = &[
    Constraint {
        name: "T",
        dtypes: ANY,
    },
    Constraint {
        name: "V",
        dtypes: ANY,
    },
];

macro_rules! versions {
    ($attrs:expr, $inputs:expr, $eval:expr; $($since:literal),*) => {
        &[$(OpVersion {
            negatives: false,
            ..OpVersion::base($since, $attrs, $inputs, CONSTRAINTS, $eval)
        }),*]
    };
}

/// Constant: every version since 1 (value attributes added at 11 and 12 are accepted at all).
pub(crate) static CONSTANT: OpDef = OpDef {
    domain: "",
    op_type: "Constant",
    spec: "https://onnx.ai/onnx/operators/onnx__Constant.html",
    plumbing: true,
    context: false,
    gathers: false,
    indexing: Indexing::None,
    provenance: None,
    versions: versions!(CONSTANT_ATTRS, &[], constant; 1, 9, 11, 12, 13, 19, 21, 23, 24, 25),
};

/// Identity: every version since 1.
pub(crate) static IDENTITY: OpDef = OpDef {
    domain: "",
    op_type: "Identity",
    spec: "https://onnx.ai/onnx/operators/onnx__Identity.html",
    plumbing: true,
    context: false,
    gathers: false,
    indexing: Indexing::None,
    provenance: None,
    versions: versions!(&[], &[InputSpec::required("input", "V", Role::Value)], identity; 1, 13, 14, 16, 19, 21, 23, 24, 25),
};

fn identity(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    Ok(Evaluated::moved(inv.input(0)?.clone()))
}

fn constant(inv: &Invocation<'_>) -> Result<Evaluated, SpecError> {
    if inv.attrs.count() != 1 {
        return Err(spec_err!(
            "Constant needs exactly one value attribute, the node has {}",
            inv.attrs.count()
        ));
    }
    let Some((name, value)) = inv.attrs.get(0) else {
        return Err(spec_err!("Constant needs exactly one value attribute"));
    };
    let want = match name {
        "value" => "TENSOR",
        "sparse_value" => "SPARSE_TENSOR",
        "value_float" => "FLOAT",
        "value_floats" => "FLOATS",
        "value_int" => "INT",
        "value_ints" => "INTS",
        "value_string" => "STRING",
        _ => "STRINGS",
    };
    if value.type_name() != want {
        return Err(spec_err!("attribute '{name}' must be {want}"));
    }
    let scalar = |dtype, words| Tensor::new(dtype, vec![], words);
    let list = |dtype, n: usize, words| Tensor::new(dtype, vec![n], words);
    let t = match value {
        AttrValue::Tensor(encoded) => {
            let decoded = encoded
                .tensor()
                .ok_or_else(|| spec_err!("attribute 'value' holds no tensor"))?;
            return decoded.map(Evaluated::moved).map_err(|e| match e {
                SpecError::Unsupported(m) => SpecError::Unsupported(format!("Constant value: {m}")),
                other => spec_err!("Constant value: {other}"),
            });
        }
        _ if name == "sparse_value" => {
            return Err(SpecError::Unsupported(
                "Constant with a sparse_value is not supported".into(),
            ))
        }
        AttrValue::Float(f) => scalar(DType::Float, Storage::W32(vec![f.to_bits()])),
        AttrValue::Floats(v) => list(
            DType::Float,
            v.len(),
            Storage::W32(v.iter().map(|f| f.to_bits()).collect()),
        ),
        AttrValue::Int(i) => scalar(DType::Int64, Storage::W64(vec![*i as u64])),
        AttrValue::Ints(v) => list(
            DType::Int64,
            v.len(),
            Storage::W64(v.iter().map(|&i| i as u64).collect()),
        ),
        AttrValue::Str(s) => scalar(DType::String, Storage::Str(vec![s.to_vec()])),
        AttrValue::Strings(v) if name == "value_strings" => {
            list(DType::String, v.len(), Storage::Str(v.to_vec()))
        }
        _ => {
            return Err(spec_err!(
                "attribute '{name}' is not a Constant value attribute"
            ))
        }
    }
    .map_err(|e| spec_err!("Constant: {e}"))?;
    Ok(Evaluated::moved(t))
}
