//! The reference's tensors: a dtype, a shape and one value per element.

use crate::dtype::DType;
use crate::numeric::{f16_to_f32, int_value};
use std::fmt;

/// One element: the bits of a fixed-width (or packed) element, or a string's bytes.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Word {
    /// The stored bit pattern, zero-extended (a packed sub-byte element is its code; complex64
    /// is the real part's bits in the low half, the imaginary part's in the high half).
    Bits(u64),
    /// A string's bytes.
    Bytes(Vec<u8>),
}

impl fmt::Debug for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Word::Bits(b) => write!(f, "{b:#x}"),
            Word::Bytes(b) => write!(f, "{:?}", String::from_utf8_lossy(b)),
        }
    }
}

/// How a tensor holds its elements: a [`Word`] each (any dtype, strings included), or the bare
/// bits as a `u64` each (fixed-width dtypes only), for tensors too large for a `Word` apiece.
pub trait Element: Clone + PartialEq + fmt::Debug {
    /// The element as a word.
    fn word(&self) -> Word;
    /// The element holding `w`.
    fn from_word(w: Word) -> Self;
    /// The bytes of a string element (0 for a fixed-width one).
    fn payload(&self) -> usize;
}

impl Element for Word {
    fn word(&self) -> Word {
        self.clone()
    }
    fn from_word(w: Word) -> Word {
        w
    }
    fn payload(&self) -> usize {
        match self {
            Word::Bytes(b) => b.len(),
            Word::Bits(_) => 0,
        }
    }
}

impl Element for u64 {
    fn word(&self) -> Word {
        Word::Bits(*self)
    }
    fn from_word(w: Word) -> u64 {
        match w {
            Word::Bits(b) => b,
            Word::Bytes(_) => panic!("a string element in a tensor of bits"),
        }
    }
    fn payload(&self) -> usize {
        0
    }
}

/// A tensor as the reference sees it.
#[derive(Clone, PartialEq)]
pub struct RTensor<E = Word> {
    /// The element type.
    pub dtype: DType,
    /// The dims; empty for a scalar.
    pub shape: Vec<usize>,
    /// The elements in row-major order.
    pub words: Vec<E>,
}

impl<E: Element> RTensor<E> {
    /// A tensor from its parts (the element count must match the shape).
    pub fn new(dtype: DType, shape: Vec<usize>, words: Vec<E>) -> RTensor<E> {
        assert_eq!(
            numel(&shape),
            words.len(),
            "shape {shape:?} and element count"
        );
        RTensor {
            dtype,
            shape,
            words,
        }
    }

    /// The rank.
    pub(crate) fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The element at `coords`.
    pub(crate) fn at(&self, coords: &[usize]) -> &E {
        &self.words[offset(coords, &self.shape)]
    }
}

impl RTensor {
    /// A tensor of fixed-width elements given as bit patterns.
    pub fn bits(dtype: DType, shape: &[usize], bits: &[u64]) -> RTensor {
        RTensor::new(
            dtype,
            shape.to_vec(),
            bits.iter().map(|&b| Word::Bits(b)).collect(),
        )
    }

    /// A float tensor of `shape` holding `v`.
    pub fn f32s(shape: &[usize], v: &[f32]) -> RTensor {
        let bits: Vec<u64> = v.iter().map(|x| u64::from(x.to_bits())).collect();
        RTensor::bits(DType::Float, shape, &bits)
    }

    /// An int64 tensor of `shape` holding `v`.
    pub fn i64s(shape: &[usize], v: &[i64]) -> RTensor {
        let bits: Vec<u64> = v.iter().map(|&x| x as u64).collect();
        RTensor::bits(DType::Int64, shape, &bits)
    }
}

/// An element as a readable value, for messages.
pub fn show(dtype: DType, w: &Word) -> String {
    let Word::Bits(b) = w else {
        return format!("{w:?}");
    };
    let b = *b;
    let float = |v: f64, nan: bool| {
        if nan {
            format!("NaN({b:#x})")
        } else {
            format!("{v:?}")
        }
    };
    match dtype {
        DType::Float => {
            let v = f32::from_bits(b as u32);
            float(f64::from(v), v.is_nan())
        }
        DType::Double => {
            let v = f64::from_bits(b);
            float(v, v.is_nan())
        }
        DType::Float16 => {
            let v = f16_to_f32(b as u16);
            float(f64::from(v), v.is_nan())
        }
        DType::Bfloat16 => {
            let v = f32::from_bits((b as u32) << 16);
            float(f64::from(v), v.is_nan())
        }
        DType::Bool => format!("{}", b != 0),
        d => match int_value(d, w) {
            Some(v) => v.to_string(),
            None => format!("{b:#x}"),
        },
    }
}

impl<E: Element> fmt::Debug for RTensor<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values: Vec<String> = self
            .words
            .iter()
            .map(|w| show(self.dtype, &w.word()))
            .collect();
        write!(f, "{}{:?} [{}]", self.dtype, self.shape, values.join(", "))
    }
}

// ---------------------------------------------------------------------------------------------
// Shapes and coordinates.

/// The element count of `shape`: 0 when any dim is 0 (whatever the others), else the product
/// (saturating: such a shape is refused by the size rule before anything is built).
pub(crate) fn numel(shape: &[usize]) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .unwrap_or(usize::MAX)
}

/// Row-major flat offset of `coords` in `shape`.
pub(crate) fn offset(coords: &[usize], shape: &[usize]) -> usize {
    assert_eq!(coords.len(), shape.len());
    let mut flat = 0;
    for (&c, &d) in coords.iter().zip(shape) {
        assert!(c < d, "coordinate {c} outside dim {d}");
        flat = flat * d + c;
    }
    flat
}

/// The coordinates of row-major offset `flat` in `shape`.
pub(crate) fn coords(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for i in (0..shape.len()).rev() {
        c[i] = flat % shape[i];
        flat /= shape[i];
    }
    c
}

/// Every coordinate tuple of `shape`, in row-major order.
pub(crate) fn positions(shape: &[usize]) -> impl Iterator<Item = Vec<usize>> + '_ {
    (0..numel(shape)).map(move |i| coords(i, shape))
}
