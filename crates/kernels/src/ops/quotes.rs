//! The operator's own text, version by version, as a bug report quotes it: the definition
//! and the sentences about the index range and errors, verbatim (`...` marks what is left out).
//! ONNX's come from `onnx.defs.get_schema(op, version)` of onnx 1.23.2 (the `doc`, then the
//! index input's description); OpenVINO's Gather from its operation specs (`gather-1.rst`,
//! `gather-7.rst`, `gather-8.rst`); the `com.microsoft` backward ops from onnxruntime's
//! `training_op_defs.cc`, whose doc is only the op's name, so the index input's description.

use super::{OpDef, OpVersion};

/// A version's own text and where it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quote {
    /// Where the text is from, for a reader who wants to check it.
    pub source: &'static str,
    /// The text, verbatim, `...` between the parts taken.
    pub text: &'static str,
}

/// The quote of `v`, `None` for graph plumbing and for the deprecated Scatter-11.
pub fn quote(def: &OpDef, v: &OpVersion) -> Option<Quote> {
    let source = match def.domain {
        "" => "onnx 1.23.2, onnx.defs.get_schema(op, version): doc and input descriptions",
        "org.openvinotoolkit" => "OpenVINO's operation specification (docs/articles_en/documentation/openvino-ir-format/operation-sets/operation-specs/movement/gather-N.rst)",
        "com.microsoft" => "onnxruntime's training op schema (orttraining/orttraining/core/graph/training_op_defs.cc), input description",
        _ => return None,
    };
    let text = match (def.domain, def.op_type, v.since) {
        ("", "Gather", 1) => "Given `data` tensor of rank r >= 1, and `indices` tensor of rank q, gather\nentries of the axis dimension of `data` (by default outer-most one as axis=0) indexed by `indices`, and concatenates\nthem in an output tensor of rank q + (r - 1).\n...\n`indices`: Tensor of int32/int64 indices, of any rank q. All index values are expected to be within bounds. It is an error if any of the index values are out of bounds.",
        ("", "Gather", 11) => "Given `data` tensor of rank r >= 1, and `indices` tensor of rank q, gather\nentries of the axis dimension of `data` (by default outer-most one as axis=0) indexed by `indices`, and concatenates\nthem in an output tensor of rank q + (r - 1).\n...\n`indices`: Tensor of int32/int64 indices, of any rank q. All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "Gather", 13) => "Given `data` tensor of rank r >= 1, and `indices` tensor of rank q, gather\nentries of the axis dimension of `data` (by default outer-most one as axis=0) indexed by `indices`, and concatenates\nthem in an output tensor of rank q + (r - 1).\n...\n`indices`: Tensor of int32/int64 indices, of any rank q. All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "GatherElements", 11) => "GatherElements takes two inputs `data` and `indices` of the same rank r >= 1\nand an optional attribute `axis` that identifies an axis of `data`\n(by default, the outer-most axis, that is axis 0). It is an indexing operation\nthat produces its output by indexing into the input data tensor at index\npositions determined by elements of the `indices` tensor.\nIts output shape is the same as the shape of `indices` and consists of one value\n(gathered from the `data`) for each element in `indices`.\n...\n`indices`: Tensor of int32/int64 indices, with the same rank r as the input. All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "GatherElements", 13) => "GatherElements takes two inputs `data` and `indices` of the same rank r >= 1\nand an optional attribute `axis` that identifies an axis of `data`\n(by default, the outer-most axis, that is axis 0). It is an indexing operation\nthat produces its output by indexing into the input data tensor at index\npositions determined by elements of the `indices` tensor.\nIts output shape is the same as the shape of `indices` and consists of one value\n(gathered from the `data`) for each element in `indices`.\n...\n`indices`: Tensor of int32/int64 indices, with the same rank r as the input. All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "GatherND", 11) => "Given `data` tensor of rank `r` >= 1, and `indices` tensor of rank `q` >= 1, this operator gathers\nslices of `data` into an output tensor of rank `q + r - indices_shape[-1] - 1`.\n...\n2) The `indices_shape[-1]` should have a value between 1 (inclusive) and rank `r` (inclusive)\n...\n`indices`: Tensor of rank q >= 1. All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "GatherND", 12) => "Given `data` tensor of rank `r` >= 1, `indices` tensor of rank `q` >= 1, and `batch_dims` integer `b`, this operator gathers\nslices of `data` into an output tensor of rank `q + r - indices_shape[-1] - 1 - b`.\n...\n4) The `indices_shape[-1]` should have a value between 1 (inclusive) and rank `r-b` (inclusive)\n...\n2) The first `b` dimensions of the shape of `indices` tensor and `data` tensor must be equal.\n...\n`indices`: Tensor of rank q >= 1. All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "GatherND", 13) => "Given `data` tensor of rank `r` >= 1, `indices` tensor of rank `q` >= 1, and `batch_dims` integer `b`, this operator gathers\nslices of `data` into an output tensor of rank `q + r - indices_shape[-1] - 1 - b`.\n...\n4) The `indices_shape[-1]` should have a value between 1 (inclusive) and rank `r-b` (inclusive)\n...\n2) The first `b` dimensions of the shape of `indices` tensor and `data` tensor must be equal.\n...\n`indices`: Tensor of rank q >= 1. All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "Scatter", 9) => "Given `data`, `updates` and `indices` input tensors of rank r >= 1, write the values provided by `updates`\ninto the first input, `data`, along `axis` dimension of `data` (by default outer-most one as axis=0) at corresponding `indices`.\nFor each entry in `updates`, the target index in `data` is specified by corresponding entry in `indices`\nfor dimension = axis, and index in source for dimension != axis. For instance, in a 2-D tensor case,\ndata[indices[i][j]][j] = updates[i][j] if axis = 0, or data[i][indices[i][j]] = updates[i][j] if axis = 1,\nwhere i and j are loop counters from 0 up to the respective size in `updates` - 1.\n...\n`indices`: Tensor of int32/int64 indices, of r >= 1 (same rank as input).",
        ("", "ScatterElements", 11) => "ScatterElements takes three inputs `data`, `updates`, and `indices` of the same\nrank r >= 1 and an optional attribute axis that identifies an axis of `data`\n(by default, the outer-most axis, that is axis 0). The output of the operation\nis produced by creating a copy of the input `data`, and then updating its value\nto values specified by `updates` at specific index positions specified by\n`indices`. Its output shape is the same as the shape of `data`.\n...\n`indices`: Tensor of int32/int64 indices, of r >= 1 (same rank as input). All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "ScatterElements", 13) => "ScatterElements takes three inputs `data`, `updates`, and `indices` of the same\nrank r >= 1 and an optional attribute axis that identifies an axis of `data`\n(by default, the outer-most axis, that is axis 0). The output of the operation\nis produced by creating a copy of the input `data`, and then updating its value\nto values specified by `updates` at specific index positions specified by\n`indices`. Its output shape is the same as the shape of `data`.\n...\n`indices`: Tensor of int32/int64 indices, of r >= 1 (same rank as input). All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "ScatterElements", 16) => "ScatterElements takes three inputs `data`, `updates`, and `indices` of the same\nrank r >= 1 and an optional attribute axis that identifies an axis of `data`\n(by default, the outer-most axis, that is axis 0). The output of the operation\nis produced by creating a copy of the input `data`, and then updating its value\nto values specified by `updates` at specific index positions specified by\n`indices`. Its output shape is the same as the shape of `data`.\n...\nIn cases where `reduction` is set to \"none\", indices should not have duplicate entries: that is, if idx1 != idx2,\nthen indices[idx1] != indices[idx2].\n...\n`indices`: Tensor of int32/int64 indices, of r >= 1 (same rank as input). All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "ScatterElements", 18) => "ScatterElements takes three inputs `data`, `updates`, and `indices` of the same\nrank r >= 1 and an optional attribute axis that identifies an axis of `data`\n(by default, the outer-most axis, that is axis 0). The output of the operation\nis produced by creating a copy of the input `data`, and then updating its value\nto values specified by `updates` at specific index positions specified by\n`indices`. Its output shape is the same as the shape of `data`.\n...\nIn cases where `reduction` is set to \"none\", indices should not have duplicate entries: that is, if idx1 != idx2,\nthen indices[idx1] != indices[idx2].\n...\n`indices`: Tensor of int32/int64 indices, of r >= 1 (same rank as input). All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        ("", "ScatterND", 11) => "ScatterND takes three inputs `data` tensor of rank r >= 1, `indices` tensor of rank q >= 1,\nand `updates` tensor of rank q + r - indices.shape[-1] - 1. The output of the operation\nis produced by creating a copy of the input `data`, and then updating its value to values\nspecified by `updates` at specific index positions specified by `indices`. Its output shape\nis the same as the shape of `data`. Note that `indices` should not have duplicate entries.\nThat is, two or more `updates` for the same index-location is not supported.\n...\nIndex values are allowed to be negative, as per the usual\nconvention for counting backwards from the end, but are expected in the valid range.\n...\nThe order of iteration in the above loop is not specified.",
        ("", "ScatterND", 13) => "ScatterND takes three inputs `data` tensor of rank r >= 1, `indices` tensor of rank q >= 1,\nand `updates` tensor of rank q + r - indices.shape[-1] - 1. The output of the operation\nis produced by creating a copy of the input `data`, and then updating its value to values\nspecified by `updates` at specific index positions specified by `indices`. Its output shape\nis the same as the shape of `data`. Note that `indices` should not have duplicate entries.\nThat is, two or more `updates` for the same index-location is not supported.\n...\nIndex values are allowed to be negative, as per the usual\nconvention for counting backwards from the end, but are expected in the valid range.\n...\nThe order of iteration in the above loop is not specified.",
        ("", "ScatterND", 16) => "ScatterND takes three inputs `data` tensor of rank r >= 1, `indices` tensor of rank q >= 1,\nand `updates` tensor of rank q + r - indices.shape[-1] - 1. The output of the operation\nis produced by creating a copy of the input `data`, and then updating its value to values\nspecified by `updates` at specific index positions specified by `indices`. Its output shape\nis the same as the shape of `data`.\n...\nIndex values are allowed to be negative, as per the usual\nconvention for counting backwards from the end, but are expected in the valid range.\n...\nThe order of iteration in the above loop is not specified.",
        ("", "ScatterND", 18) => "ScatterND takes three inputs `data` tensor of rank r >= 1, `indices` tensor of rank q >= 1,\nand `updates` tensor of rank q + r - indices.shape[-1] - 1. The output of the operation\nis produced by creating a copy of the input `data`, and then updating its value to values\nspecified by `updates` at specific index positions specified by `indices`. Its output shape\nis the same as the shape of `data`.\n...\nIndex values are allowed to be negative, as per the usual\nconvention for counting backwards from the end, but are expected in the valid range.\n...\nThe order of iteration in the above loop is not specified.",
        ("", "TensorScatter", 24) => "TensorScatter is a generic tensor update operation, motivated by the requirements for KV cache updates for Attention\nops commonly found in LLMs. It is a functional operation that models an in-place update to a KV cache buffer.\n...\nThe optional `write_indices` input indicates the write index for each sample in the batch, assumed to be zero\nif not provided. When the `mode` attribute is set to \"circular\", the write index is modulo max_sequence_length.\nThe operation can be described using the following pseudocode:\n...\n`write_indices`: Write indices for the incoming update tensor in the cache. Shape is `(batch_size,)`. Assumed to be all zeros if not provided.",
        ("org.openvinotoolkit", "Gather", 1) => "*Gather* operation takes slices of data in the first input tensor according\nto the indices specified in the second input tensor and axis from the third input.\n...\nTensor with indices to gather. The values for indices are in the range ``[0, input1[axis] - 1]``.",
        ("org.openvinotoolkit", "Gather", 7) => "*Gather* operation takes slices of data of the first input tensor according to the indices\n specified with the second input tensor and axis from the third input. Semantics of this operation is identical to\nTensorFlow `Gather <https://www.tensorflow.org/api_docs/python/tf/gather>`__ operation.\n...\n``indices`` tensor of type *T_IND* with indices to gather. 0D tensor (scalar) for indices is also allowed.\n  The values for indices are in the range ``[0, data[axis] - 1]``.",
        ("org.openvinotoolkit", "Gather", 8) => "*Gather* operation takes slices of data of the first input tensor according to the indices\nspecified with the second input tensor and axis from the third input. Semantics of this operation is identical to\nTensorFlow `Gather <https://www.tensorflow.org/api_docs/python/tf/gather>`__ operation but also includes\nsupport of negative indices.\n...\nAllowed values for indices are in the range ``[-data.shape[axis], data.shape[axis] - 1]``. If index value exceed allowed\nrange output data for corresponding index will be filled with zeros (Example 7).",
        ("com.microsoft", "GatherGrad", 1) => "`indices`: Tensor of int32/int64 indices, of any rank q.",
        ("com.microsoft", "GatherElementsGrad", 1) => "`indices`: Tensor of int32/int64 indices, of r >= 1 (same rank as input). All index values are expected to be within bounds [-s, s-1] along axis of size s. It is an error if any of the index values are out of bounds.",
        _ => return None,
    };
    Some(Quote { source, text })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_live_indexing_version_has_its_own_text() {
        for def in crate::ops::REGISTRY.iter().filter(|d| !d.plumbing) {
            for v in def.versions.iter().filter(|v| !v.deprecated) {
                let q = quote(def, v).unwrap_or_else(|| panic!("{}", def.version_name(v)));
                assert!(q.text.len() > 40, "{}", def.version_name(v));
            }
        }
    }

    #[test]
    fn a_version_quotes_its_own_index_rule() {
        let find = |op: &str, since: i64| {
            let def = crate::ops::REGISTRY
                .iter()
                .find(|d| d.domain.is_empty() && d.op_type == op)
                .unwrap();
            quote(def, def.versions.iter().find(|v| v.since == since).unwrap()).unwrap()
        };
        // Gather-1 defines no bounds; Gather-11 does (onnx PR #2260).
        assert!(find("Gather", 1).text.ends_with("All index values are expected to be within bounds. It is an error if any of the index values are out of bounds."));
        assert!(find("Gather", 11).text.contains("within bounds [-s, s-1]"));
        // Scatter-9 says nothing about the range at all.
        assert!(find("Scatter", 9)
            .text
            .ends_with("of r >= 1 (same rank as input)."));
    }
}
