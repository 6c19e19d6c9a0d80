//! [`Tensor`] -> `TensorProto`: the inverse of [`super::tensor::tensor_from_proto`], for writing
//! pending expected outputs. Fixed-width data goes to `raw_data` (little-endian), strings to
//! `string_data`.

use crate::pb::TensorProto;
use crate::tensor::{Storage, Tensor};
use prost::Message;

/// The tensor as a `TensorProto` named `name`.
pub fn tensor_to_proto(t: &Tensor, name: &str) -> TensorProto {
    let mut p = TensorProto {
        name: name.to_string(),
        data_type: t.dtype().onnx_id(),
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        ..Default::default()
    };
    match t.storage() {
        Storage::W8(v) | Storage::Packed(v) => p.raw_data = v.clone().into(),
        Storage::W16(v) => p.raw_data = v.iter().flat_map(|w| w.to_le_bytes()).collect(),
        Storage::W32(v) => p.raw_data = v.iter().flat_map(|w| w.to_le_bytes()).collect(),
        Storage::W64(v) => p.raw_data = v.iter().flat_map(|w| w.to_le_bytes()).collect(),
        Storage::W128(v) => p.raw_data = v.iter().flat_map(|w| w.to_le_bytes()).collect(),
        Storage::Str(v) => p.string_data = v.clone(),
    }
    p
}

/// The tensor encoded as a `.pb` file's bytes.
pub fn encode_tensor(t: &Tensor, name: &str) -> Vec<u8> {
    tensor_to_proto(t, name).encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::tensor::{tensor_from_proto, TensorContext};
    use crate::tensor::DType;

    #[test]
    fn round_trips_through_the_loader() {
        let ctx = TensorContext {
            base_dir: std::path::Path::new("."),
            max_bytes: 1 << 20,
        };
        let tensors = [
            Tensor::from_elems(
                DType::Float,
                vec![2],
                vec![1.5f32.to_bits(), (-0.0f32).to_bits()],
            )
            .unwrap(),
            Tensor::from_elems(DType::Int64, vec![], vec![u64::MAX]).unwrap(),
            Tensor::from_elems(DType::String, vec![2], vec![b"a".to_vec(), vec![0xFF]]).unwrap(),
            Tensor::from_elems(DType::Complex128, vec![1], vec![7u128 << 64 | 3]).unwrap(),
            Tensor::new(DType::Int4, vec![3], Storage::Packed(vec![0x21, 0x03])).unwrap(),
            Tensor::from_elems(DType::Bool, vec![0, 2], Vec::<u8>::new()).unwrap(),
        ];
        for t in tensors {
            let p = tensor_to_proto(&t, "x");
            assert_eq!(tensor_from_proto(&p, &ctx).unwrap(), t);
        }
    }
}
