//! A node's attributes as the kernels read them: each `AttributeProto` becomes the
//! [`AttrValue`] of the type it declares, and a tensor-valued one stays encoded until a kernel asks
//! for it (Constant's `value`), when it is decoded under the case's limits.

use super::tensor::{tensor_from_proto, TensorContext};
use crate::ops::{AttrValue, Attrs, SpecError, TensorAttr};
use crate::pb::{attribute_proto::AttributeType, AttributeProto, NodeProto, TensorProto};
use crate::tensor::Tensor;
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

/// The attributes of `node`, in order; `model_dir` and `max_bytes` decode tensor values (external
/// data must lie inside the model's directory).
pub fn attrs_of<'a>(node: &'a NodeProto, model_dir: &'a Path, max_bytes: usize) -> Attrs<'a> {
    node.attribute.iter().fold(Attrs::new(), |attrs, a| {
        attrs.with(a.name.as_str(), value_of(a, model_dir, max_bytes))
    })
}

/// One attribute's value, of the type it declares.
pub fn value_of<'a>(a: &'a AttributeProto, model_dir: &'a Path, max_bytes: usize) -> AttrValue<'a> {
    if !a.ref_attr_name.is_empty() {
        return AttrValue::Ref(Cow::Borrowed(&a.ref_attr_name));
    }
    match AttributeType::try_from(a.r#type) {
        Ok(AttributeType::Int) => AttrValue::Int(a.i()),
        Ok(AttributeType::Ints) => AttrValue::Ints(Cow::Borrowed(&a.ints)),
        Ok(AttributeType::Float) => AttrValue::Float(a.f()),
        Ok(AttributeType::Floats) => AttrValue::Floats(Cow::Borrowed(&a.floats)),
        Ok(AttributeType::String) => AttrValue::Str(Cow::Borrowed(&a.s)),
        Ok(AttributeType::Strings) => AttrValue::Strings(Cow::Borrowed(&a.strings)),
        Ok(AttributeType::Tensor) => AttrValue::Tensor(Arc::new(EncodedTensor {
            proto: a.t.as_ref(),
            ctx: TensorContext {
                base_dir: model_dir,
                max_bytes,
            },
        })),
        Ok(t) => AttrValue::Other(Cow::Borrowed(t.as_str_name())),
        Err(_) => AttrValue::Other(Cow::Owned(format!("type {}", a.r#type))),
    }
}

/// A TENSOR attribute, decoded when read.
#[derive(Debug)]
struct EncodedTensor<'a> {
    /// `None`: the attribute declares a tensor and holds none.
    proto: Option<&'a TensorProto>,
    ctx: TensorContext<'a>,
}

impl TensorAttr for EncodedTensor<'_> {
    fn tensor(&self) -> Option<Result<Tensor, SpecError>> {
        let decoded = tensor_from_proto(self.proto?, &self.ctx).map_err(|e| {
            if e.is_unsupported() {
                SpecError::Unsupported(e.to_string())
            } else {
                SpecError::Violation(e.to_string())
            }
        });
        Some(decoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(name: &str, r#type: i32) -> AttributeProto {
        AttributeProto {
            name: name.into(),
            r#type,
            i: Some(3),
            f: Some(0.5),
            ..Default::default()
        }
    }

    #[test]
    fn each_value_takes_the_type_its_attribute_declares() {
        let dir = Path::new(".");
        let int = attr("axis", AttributeType::Int as i32);
        let float = attr("axis", AttributeType::Float as i32);
        let graph = attr("body", AttributeType::Graph as i32);
        let odd = attr("axis", 99);
        assert_eq!(value_of(&int, dir, 1), AttrValue::Int(3));
        assert_eq!(value_of(&float, dir, 1), AttrValue::Float(0.5));
        assert_eq!(value_of(&graph, dir, 1).type_name(), "GRAPH");
        assert_eq!(value_of(&odd, dir, 1).type_name(), "type 99");
        let reference = AttributeProto {
            ref_attr_name: "outer".into(),
            ..int.clone()
        };
        assert_eq!(value_of(&reference, dir, 1), AttrValue::Ref("outer".into()));
    }

    #[test]
    fn a_tensor_attribute_without_a_tensor_says_so_when_read() {
        let a = attr("value", AttributeType::Tensor as i32);
        let AttrValue::Tensor(t) = value_of(&a, Path::new("."), 1) else {
            panic!("not a tensor value");
        };
        assert!(t.tensor().is_none());
    }
}
