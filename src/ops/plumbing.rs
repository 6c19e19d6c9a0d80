//! Graph plumbing that official test models use around the operators under test (D15):
//! Constant (<https://onnx.ai/onnx/operators/onnx__Constant.html>) and Identity
//! (<https://onnx.ai/onnx/operators/onnx__Identity.html>).
//!
//! Their versions only widen types or add value attributes, so one kernel serves all of them.

use super::{
    AttrSpec, AttrValue, Constraint, Evaluated, Indexing, InputSpec, Invocation, OpDef, OpVersion,
    Role, SpecError,
};
use crate::load::tensor::{tensor_from_proto, TensorContext};
use crate::pb::attribute_proto::AttributeType;
use crate::spec_err;
use crate::tensor::{DType, DTypeSet, Tensor};

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
    let Some((_, AttrValue::Proto(a))) = inv.attrs.get(0) else {
        return Err(spec_err!(
            "Constant's value attribute must come from a node"
        ));
    };
    let want = match a.name.as_str() {
        "value" => AttributeType::Tensor,
        "sparse_value" => AttributeType::SparseTensor,
        "value_float" => AttributeType::Float,
        "value_floats" => AttributeType::Floats,
        "value_int" => AttributeType::Int,
        "value_ints" => AttributeType::Ints,
        "value_string" => AttributeType::String,
        _ => AttributeType::Strings,
    };
    if a.r#type != want as i32 {
        return Err(spec_err!(
            "attribute '{}' must be {}",
            a.name,
            want.as_str_name()
        ));
    }
    let scalar = |dtype, words| Tensor::new(dtype, vec![], words);
    let list = |dtype, n: usize, words| Tensor::new(dtype, vec![n], words);
    let t = match a.name.as_str() {
        "value" => {
            let proto =
                a.t.as_ref()
                    .ok_or_else(|| spec_err!("attribute 'value' holds no tensor"))?;
            let ctx = TensorContext {
                base_dir: inv.model_dir,
                max_bytes: inv.max_bytes,
            };
            return tensor_from_proto(proto, &ctx)
                .map(Evaluated::moved)
                .map_err(|e| {
                    if e.is_unsupported() {
                        SpecError::Unsupported(format!("Constant value: {e}"))
                    } else {
                        spec_err!("Constant value: {e}")
                    }
                });
        }
        "sparse_value" => {
            return Err(SpecError::Unsupported(
                "Constant with a sparse_value is not supported".into(),
            ))
        }
        "value_float" => scalar(
            DType::Float,
            crate::tensor::Storage::W32(vec![a.f.to_bits()]),
        ),
        "value_floats" => list(
            DType::Float,
            a.floats.len(),
            crate::tensor::Storage::W32(a.floats.iter().map(|f| f.to_bits()).collect()),
        ),
        "value_int" => scalar(DType::Int64, crate::tensor::Storage::W64(vec![a.i as u64])),
        "value_ints" => list(
            DType::Int64,
            a.ints.len(),
            crate::tensor::Storage::W64(a.ints.iter().map(|&i| i as u64).collect()),
        ),
        "value_string" => scalar(
            DType::String,
            crate::tensor::Storage::Str(vec![a.s.clone()]),
        ),
        "value_strings" => list(
            DType::String,
            a.strings.len(),
            crate::tensor::Storage::Str(a.strings.clone()),
        ),
        other => {
            return Err(spec_err!(
                "attribute '{other}' is not a Constant value attribute"
            ))
        }
    }
    .map_err(|e| spec_err!("Constant: {e}"))?;
    Ok(Evaluated::moved(t))
}
