//! Conversions between the library's tensors and the naive reference's
//! ([`onnx_idx_check_reference`], a dev-dependency), which shares no types with the library:
//! dtypes by their ONNX ids, elements by their stored bits.

use onnx_idx_check::tensor::{Layout, Storage, Tensor};
use onnx_idx_check::DType;
use onnx_idx_check_reference::{self as reference, RTensor, Word};

/// The reference's dtype for the tool's `d`.
pub fn dtype(d: DType) -> reference::DType {
    reference::DType::from_onnx_id(d.onnx_id())
        .unwrap_or_else(|| panic!("the reference has no dtype {d}"))
}

/// The tool's dtype for the reference's `d`.
pub fn tool_dtype(d: reference::DType) -> DType {
    DType::from_onnx(d.onnx_id()).unwrap_or_else(|| panic!("the tool has no dtype {d}"))
}

/// Bit `pos` of LSB-first packed `bytes` (a 6-bit code may span two bytes).
fn bit(bytes: &[u8], pos: usize) -> u64 {
    u64::from((bytes[pos / 8] >> (pos % 8)) & 1)
}

/// Reads a tool tensor (complex128 is not modelled).
pub fn from_tensor(t: &Tensor) -> RTensor {
    let n = t.numel();
    let words: Vec<Word> = match (t.storage(), t.dtype().layout()) {
        (Storage::W8(v), _) => v.iter().map(|&x| Word::Bits(u64::from(x))).collect(),
        (Storage::W16(v), _) => v.iter().map(|&x| Word::Bits(u64::from(x))).collect(),
        (Storage::W32(v), _) => v.iter().map(|&x| Word::Bits(u64::from(x))).collect(),
        (Storage::W64(v), _) => v.iter().map(|&x| Word::Bits(x)).collect(),
        (Storage::Packed(bytes), Layout::Packed(bits)) => {
            let bits = bits as usize;
            (0..n)
                .map(|i| Word::Bits((0..bits).map(|j| bit(bytes, i * bits + j) << j).sum()))
                .collect()
        }
        (Storage::Str(v), _) => v.iter().cloned().map(Word::Bytes).collect(),
        _ => panic!("the reference does not model {}", t.dtype()),
    };
    RTensor::new(dtype(t.dtype()), t.shape().to_vec(), words)
}

/// Builds the tool tensor holding `r`'s elements.
pub fn to_tensor(r: &RTensor) -> Tensor {
    let d = tool_dtype(r.dtype);
    let bits = |w: &Word| match w {
        Word::Bits(b) => *b,
        Word::Bytes(_) => panic!("a string element in a {d} tensor"),
    };
    let storage = match d.layout() {
        Layout::Bytes(1) => Storage::W8(r.words.iter().map(|w| bits(w) as u8).collect()),
        Layout::Bytes(2) => Storage::W16(r.words.iter().map(|w| bits(w) as u16).collect()),
        Layout::Bytes(4) => Storage::W32(r.words.iter().map(|w| bits(w) as u32).collect()),
        Layout::Bytes(8) => Storage::W64(r.words.iter().map(bits).collect()),
        Layout::Bytes(w) => panic!("the reference does not model {w}-byte elements"),
        Layout::Packed(b) => {
            let b = b as usize;
            let mut bytes = vec![0u8; (r.words.len() * b).div_ceil(8)];
            for (i, w) in r.words.iter().enumerate() {
                for j in 0..b {
                    let pos = i * b + j;
                    bytes[pos / 8] |= (((bits(w) >> j) & 1) as u8) << (pos % 8);
                }
            }
            Storage::Packed(bytes)
        }
        Layout::String => Storage::Str(
            r.words
                .iter()
                .map(|w| match w {
                    Word::Bytes(b) => b.clone(),
                    Word::Bits(_) => panic!("a fixed-width element in a string tensor"),
                })
                .collect(),
        ),
    };
    Tensor::new(d, r.shape.clone(), storage).expect("a consistent tensor")
}
