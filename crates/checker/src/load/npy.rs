//! NumPy's `.npy` files (format versions 1.0, 2.0 and 3.0) and `.npz` archives of them, read
//! strictly into [`Tensor`]s: the outputs that tract- and numpy-based runtimes write.
//!
//! Nothing is allocated on the strength of what a header claims: the shape's byte count is checked
//! (with overflow checks) against the bytes actually present and against `--max-tensor-bytes`
//! before any buffer is made, and an archive member is inflated no further than its declared size
//! and the limit. Object arrays (pickled Python objects) are refused, never unpickled.
//!
//! numpy has no bfloat16, float8 or sub-byte types; the caller says which type it expects
//! (`want`), and a file of that type's bit-pattern type (docs/runtime-protocol.md, "`.npy` files
//! of types numpy lacks") is reinterpreted as it. `fortran_order: True` arrays are transposed to
//! row-major order.

// tidy: long file: one concern, the .npy reader; more than half of it is its tests of hostile headers.

use super::{read_file, sha256_hex, LoadError};
use crate::tensor::value::set_packed;
use crate::tensor::{byte_len, numel, DType, Layout, Storage, Tensor};
use std::io::Read;
use std::path::Path;
use thiserror::Error;

/// Room for the header on top of the array's bytes (numpy itself reads headers of at most 10000
/// bytes unless told otherwise): a file (or an archive member) may be this
/// much larger than `--max-tensor-bytes`.
const HEADER_SLACK: u64 = 1 << 16;

/// The largest `.npy` file or `.npz` member read for a limit of `max_tensor_bytes`: the array's
/// bytes are stored as they are, so only the header needs room beyond the limit.
pub fn npy_limit(max_tensor_bytes: usize) -> u64 {
    (max_tensor_bytes as u64).saturating_add(HEADER_SLACK)
}

/// Why a `.npy` array (alone or in a `.npz` archive) could not become a tensor.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum NpyError {
    /// The file does not start with `\x93NUMPY`.
    #[error("not a .npy file (it does not start with the magic string \\x93NUMPY)")]
    BadMagic,
    /// A format version other than 1.0, 2.0 and 3.0.
    #[error(".npy format version {0}.{1} is not 1.0, 2.0 or 3.0")]
    Version(u8, u8),
    /// The file ends inside its preamble or header.
    #[error("the file ends inside the header ({needed} bytes needed, {actual} present)")]
    TruncatedHeader {
        /// Bytes the header needs.
        needed: u64,
        /// Bytes present.
        actual: u64,
    },
    /// The header is not the dict numpy writes.
    #[error("malformed header: {0}")]
    Header(String),
    /// A `descr` that is not one of the element types read here.
    #[error("descr '{descr}' is not supported: {why}")]
    Descr {
        /// The descr as written.
        descr: String,
        /// Why.
        why: &'static str,
    },
    /// An object array: its elements are pickled Python objects.
    #[error("descr '{0}' is an object array (pickled Python objects), which is refused: it is never unpickled")]
    Object(String),
    /// A structured (record) dtype.
    #[error("structured dtypes (a list as 'descr') are not supported")]
    Structured,
    /// The shape's element count or byte size overflows.
    #[error("shape {} of descr '{descr}' describes more bytes than can be addressed", crate::tensor::shape_text(.shape))]
    Overflow {
        /// The shape.
        shape: Vec<usize>,
        /// The descr.
        descr: String,
    },
    /// The tensor would exceed the limit.
    #[error("{dtype} array of shape {} would take {bytes} bytes, more than the limit of {limit} bytes (--max-tensor-bytes)", crate::tensor::shape_text(.shape))]
    TooLarge {
        /// The tensor's dtype.
        dtype: DType,
        /// The shape.
        shape: Vec<usize>,
        /// Bytes it would take.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The data after the header is not exactly what the shape needs.
    #[error("descr '{descr}' of shape {} needs {needed} bytes of data after the header, the file has {actual}", crate::tensor::shape_text(.shape))]
    DataSize {
        /// The descr.
        descr: String,
        /// The shape.
        shape: Vec<usize>,
        /// Bytes needed.
        needed: usize,
        /// Bytes present.
        actual: usize,
    },
    /// An element's bytes are not a value of its type.
    #[error("element {index}: {what}")]
    Value {
        /// Flat (row-major) position.
        index: usize,
        /// What is wrong.
        what: String,
    },
    /// The `.npz` archive is not a zip file read here.
    #[error("not a valid .npz (zip) archive: {0}")]
    Zip(String),
    /// An archive member is larger than the limit, or inflates to more than it declares.
    #[error("member '{member}' {what}")]
    Member {
        /// The member's name.
        member: String,
        /// What is wrong.
        what: String,
    },
}

/// The element types of a `descr`: byte order, kind and item size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Descr {
    big_endian: bool,
    kind: u8,
    size: usize,
}

/// The parsed header: what numpy's `_read_array_header` accepts, and nothing else.
#[derive(Debug, PartialEq, Eq)]
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// Converts the bytes of a `.npy` file into a tensor. `want` is the dtype the output is expected
/// to have, when known: a file of its bit-pattern type (`<u2` for bfloat16, `|u1` for the float8
/// types, `|i1` for int4 and int2, `|u1` for the other sub-byte types, or numpy's void `<V2`,
/// `|V1` of the same width as ml_dtypes arrays are written) is reinterpreted as `want`; any other
/// file keeps its own type.
pub fn tensor_from_npy(
    bytes: &[u8],
    want: Option<DType>,
    max_bytes: usize,
) -> Result<Tensor, NpyError> {
    let plan = Plan::new(bytes, bytes.len() as u64, want, max_bytes)?;
    let data = &bytes[plan.data_at..];
    plan.decode(data)
}

/// A `.npy` file's header, checked against the limit and the file's size: all that is known
/// before the array's bytes are read.
struct Plan {
    header: Header,
    descr: Descr,
    /// The dtype the tensor will have.
    dtype: DType,
    /// `Some(want)` when the array holds the bit patterns of `want`, a type numpy lacks.
    pattern: Option<DType>,
    /// Where the array's bytes start in the file.
    data_at: usize,
}

impl Plan {
    /// Reads the header from `head` (the file's first bytes, the whole header at least when the
    /// file has one) of a file of `file_len` bytes.
    fn new(
        head: &[u8],
        file_len: u64,
        want: Option<DType>,
        max_bytes: usize,
    ) -> Result<Plan, NpyError> {
        let (header, data) = split_header(head).map_err(|e| match e {
            NpyError::TruncatedHeader { needed, .. } => NpyError::TruncatedHeader {
                needed,
                actual: file_len,
            },
            e => e,
        })?;
        let data_at = head.len() - data.len();
        let descr_text = header.descr.clone();
        let descr = parse_descr(&descr_text)?;
        let shape = &header.shape;
        let overflow = || NpyError::Overflow {
            shape: shape.clone(),
            descr: descr_text.clone(),
        };
        let n = numel(shape).ok_or_else(overflow)?;
        let needed = n.checked_mul(descr.size).ok_or_else(overflow)?;
        let pattern = want.filter(|&w| is_bit_pattern(w, &descr));
        let dtype = match pattern {
            Some(w) => w,
            None => plain_dtype(&descr, &descr_text)?,
        };
        let bytes_out = byte_len(dtype, n).ok_or_else(overflow)?;
        if bytes_out > max_bytes {
            return Err(NpyError::TooLarge {
                dtype,
                shape: shape.clone(),
                bytes: bytes_out,
                limit: max_bytes,
            });
        }
        let present = file_len.saturating_sub(data_at as u64);
        if present != needed as u64 {
            return Err(NpyError::DataSize {
                descr: descr_text,
                shape: shape.clone(),
                needed,
                actual: usize::try_from(present).unwrap_or(usize::MAX),
            });
        }
        Ok(Plan {
            header,
            descr,
            dtype,
            pattern,
            data_at,
        })
    }

    /// The tensor of the array's bytes `data`, as a view of `data` when they already are the
    /// tensor's little-endian, row-major words.
    fn decode_shared(self, data: bytes::Bytes) -> Result<Tensor, NpyError> {
        let row_major = !self.header.fortran_order || self.header.shape.len() <= 1;
        let little = !self.descr.big_endian || self.descr.size == 1;
        if self.pattern.is_none() && row_major && little {
            if let Some(t) = super::tensor::shared_raw(self.dtype, &self.header.shape, &data) {
                return Ok(t);
            }
        }
        self.decode(&data)
    }

    /// The tensor of the array's bytes `data`, copied into it.
    fn decode(self, data: &[u8]) -> Result<Tensor, NpyError> {
        let Plan {
            header,
            descr,
            dtype,
            pattern,
            ..
        } = self;
        let shape = header.shape;
        let transposed;
        let data = if header.fortran_order && shape.len() > 1 {
            transposed = fortran_to_c(data, &shape, descr.size);
            &transposed[..]
        } else {
            data
        };
        match pattern {
            Some(w) => reinterpret(w, &descr, shape, data),
            None => decode(dtype, &descr, shape, data),
        }
    }
}

/// Splits a `.npy` file into its parsed header and the array's bytes.
fn split_header(bytes: &[u8]) -> Result<(Header, &[u8]), NpyError> {
    let truncated = |needed: u64| NpyError::TruncatedHeader {
        needed,
        actual: bytes.len() as u64,
    };
    if bytes.len() < 6 || &bytes[..6] != b"\x93NUMPY" {
        return Err(NpyError::BadMagic);
    }
    let (major, minor) = match bytes.get(6..8) {
        Some(&[a, b]) => (a, b),
        _ => return Err(truncated(8)),
    };
    let (len_size, utf8) = match (major, minor) {
        (1, 0) => (2usize, false),
        (2, 0) => (4, false),
        (3, 0) => (4, true),
        _ => return Err(NpyError::Version(major, minor)),
    };
    let start = 8 + len_size;
    let len_bytes = bytes.get(8..start).ok_or_else(|| truncated(start as u64))?;
    let header_len = len_bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    let end = start as u64 + header_len;
    if end > bytes.len() as u64 {
        return Err(truncated(end));
    }
    let end = end as usize;
    let text = &bytes[start..end];
    let text = if utf8 {
        std::str::from_utf8(text)
            .map_err(|e| NpyError::Header(format!("not UTF-8 (format 3.0): {e}")))?
    } else {
        // Latin-1 (formats 1.0 and 2.0): everything numpy writes there is ASCII.
        std::str::from_utf8(text)
            .ok()
            .filter(|t| t.is_ascii())
            .ok_or_else(|| NpyError::Header("holds bytes that are not ASCII".into()))?
    };
    Ok((parse_header(text)?, &bytes[end..]))
}

/// Parses the header dict, e.g. `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }`.
fn parse_header(text: &str) -> Result<Header, NpyError> {
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
    };
    p.expect(b'{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        p.skip_ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.expect(b':')?;
        let dup = || NpyError::Header(format!("key '{key}' appears twice"));
        match key.as_str() {
            "descr" => {
                p.skip_ws();
                if p.peek() == Some(b'[') {
                    return Err(NpyError::Structured);
                }
                if descr.replace(p.string()?).is_some() {
                    return Err(dup());
                }
            }
            "fortran_order" => {
                if fortran.replace(p.boolean()?).is_some() {
                    return Err(dup());
                }
            }
            "shape" => {
                if shape.replace(p.tuple()?).is_some() {
                    return Err(dup());
                }
            }
            other => {
                return Err(NpyError::Header(format!(
                "unexpected key '{other}' (only 'descr', 'fortran_order' and 'shape' may appear)"
            )))
            }
        }
        p.skip_ws();
        if !p.eat(b',') {
            p.expect(b'}')?;
            break;
        }
    }
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(NpyError::Header(format!(
            "unexpected text after the dict at byte {}",
            p.pos
        )));
    }
    let missing = |k: &str| NpyError::Header(format!("key '{k}' is missing"));
    Ok(Header {
        descr: descr.ok_or_else(|| missing("descr"))?,
        fortran_order: fortran.ok_or_else(|| missing("fortran_order"))?,
        shape: shape.ok_or_else(|| missing("shape"))?,
    })
}

/// A cursor over the header's ASCII text: the few Python literals a header holds.
struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn error(&self, wanted: &str) -> NpyError {
        let found = match self.peek() {
            Some(c) => format!("'{}'", c as char),
            None => "the end".to_string(),
        };
        NpyError::Header(format!(
            "expected {wanted} at byte {}, found {found}",
            self.pos
        ))
    }

    fn expect(&mut self, c: u8) -> Result<(), NpyError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("'{}'", c as char)))
        }
    }

    /// A quoted string without escapes (no key or descr numpy reads needs one).
    fn string(&mut self) -> Result<String, NpyError> {
        self.skip_ws();
        let quote = match self.peek() {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(self.error("a quoted string")),
        };
        let start = self.pos + 1;
        let len = self.s[start..]
            .iter()
            .position(|&c| c == quote)
            .ok_or_else(|| NpyError::Header("unterminated string".into()))?;
        let text = &self.s[start..start + len];
        if text.contains(&b'\\') {
            return Err(NpyError::Header("escapes in strings are not read".into()));
        }
        self.pos = start + len + 1;
        Ok(String::from_utf8_lossy(text).into_owned())
    }

    fn word(&mut self) -> &[u8] {
        self.skip_ws();
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.pos += 1;
        }
        &self.s[start..self.pos]
    }

    fn boolean(&mut self) -> Result<bool, NpyError> {
        let at = self.pos;
        match self.word() {
            b"True" => Ok(true),
            b"False" => Ok(false),
            _ => {
                self.pos = at;
                self.skip_ws();
                Err(self.error("True or False"))
            }
        }
    }

    /// A tuple of non-negative integers: `()`, `(3,)`, `(2, 3)`.
    fn tuple(&mut self) -> Result<Vec<usize>, NpyError> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            if self.eat(b')') {
                // `(3)` is an integer in Python, not a tuple.
                return Ok(dims);
            }
            self.skip_ws();
            let at = self.pos;
            let word = self.word();
            if word.is_empty() || !word.iter().all(u8::is_ascii_digit) {
                self.pos = at;
                return Err(self.error("a non-negative integer dimension"));
            }
            let text = String::from_utf8_lossy(word).into_owned();
            let d = text
                .parse::<usize>()
                .map_err(|_| NpyError::Header(format!("dimension {text} is too large")))?;
            dims.push(d);
            if !self.eat(b',') {
                if dims.len() == 1 {
                    return Err(NpyError::Header(
                        "'shape' is not a tuple ('(n)' lacks the comma of '(n,)')".into(),
                    ));
                }
                self.expect(b')')?;
                return Ok(dims);
            }
        }
    }
}

/// Parses a simple descr: byte order (`<`, `>`, `|`), kind and item size.
fn parse_descr(text: &str) -> Result<Descr, NpyError> {
    let bad = |why| NpyError::Descr {
        descr: text.to_string(),
        why,
    };
    let b = text.as_bytes();
    let (order, rest) = match b.first() {
        Some(&o @ (b'<' | b'>' | b'|' | b'=')) => (o, &b[1..]),
        _ => (b'|', b),
    };
    let Some((&kind, digits)) = rest.split_first() else {
        return Err(bad("it is empty"));
    };
    if kind == b'O' {
        return Err(NpyError::Object(text.to_string()));
    }
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(bad("not a byte order, a type letter and an item size"));
    }
    let size = std::str::from_utf8(digits)
        .ok()
        .and_then(|d| d.parse::<usize>().ok())
        .ok_or_else(|| bad("the item size is too large"))?;
    let kind = if kind == b'a' { b'S' } else { kind };
    // A `U` item is that many UTF-32 code points.
    let size = if kind == b'U' {
        size.checked_mul(4)
            .ok_or_else(|| bad("the item size is too large"))?
    } else {
        size
    };
    if !matches!(kind, b'f' | b'i' | b'u' | b'b' | b'c' | b'U' | b'S' | b'V') {
        return Err(bad("only bool, integer, float, complex, 'U', 'S' and void ('V', for bit patterns) arrays are read"));
    }
    // `=` is native order; numpy writes `<` or `>` instead, but a hand-made file may say `=`.
    let big_endian = order == b'>' || (order == b'=' && cfg!(target_endian = "big"));
    Ok(Descr {
        big_endian,
        kind,
        size,
    })
}

/// The dtype of a descr read as itself.
fn plain_dtype(d: &Descr, text: &str) -> Result<DType, NpyError> {
    use DType::*;
    Ok(match (d.kind, d.size) {
        (b'f', 2) => Float16,
        (b'f', 4) => Float,
        (b'f', 8) => Double,
        (b'i', 1) => Int8,
        (b'i', 2) => Int16,
        (b'i', 4) => Int32,
        (b'i', 8) => Int64,
        (b'u', 1) => Uint8,
        (b'u', 2) => Uint16,
        (b'u', 4) => Uint32,
        (b'u', 8) => Uint64,
        (b'b', 1) => Bool,
        (b'c', 8) => Complex64,
        (b'c', 16) => Complex128,
        (b'U' | b'S', _) => String,
        (b'V', _) | (b'f', 1) => {
            return Err(NpyError::Descr {
                descr: text.to_string(),
                why: "raw bytes stand only for the bit patterns of a type numpy lacks (bfloat16, float8, int4, ...), and this output is not expected to be one",
            })
        }
        _ => {
            return Err(NpyError::Descr {
                descr: text.to_string(),
                why: "no ONNX element type has this kind and width",
            })
        }
    })
}

/// Whether a file of `d` holds the bit patterns of `want`, a type numpy lacks.
fn is_bit_pattern(want: DType, d: &Descr) -> bool {
    use DType::*;
    // Void bytes have no byte order: only a 1-byte or a little-endian (as ml_dtypes writes) void.
    let void = |w: usize| d.kind == b'V' && d.size == w && (w == 1 || !d.big_endian);
    match want {
        Bfloat16 => (d.kind == b'u' && d.size == 2) || void(2),
        // ml_dtypes' float8e5m2 has the type letter 'f': numpy writes it as '<f1'.
        Float8E4M3Fn | Float8E4M3Fnuz | Float8E5M2 | Float8E5M2Fnuz | Float8E8M0 => {
            d.size == 1 && matches!(d.kind, b'u' | b'V' | b'f')
        }
        Int4 | Int2 => d.size == 1 && matches!(d.kind, b'i' | b'V'),
        Uint4 | Uint2 | Float4E2M1 | Float6E2M3 | Float6E3M2 => {
            d.size == 1 && matches!(d.kind, b'u' | b'V')
        }
        _ => false,
    }
}

/// Reorders column-major element bytes into row-major order.
fn fortran_to_c(data: &[u8], shape: &[usize], item: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    if item == 0 || data.is_empty() {
        return data.to_vec();
    }
    // Column-major strides, in elements; the shape's byte size was checked already.
    let mut fstrides = Vec::with_capacity(shape.len());
    let mut acc = 1usize;
    for &d in shape {
        fstrides.push(acc);
        acc = acc.saturating_mul(d);
    }
    let mut idx = vec![0usize; shape.len()];
    let mut offset = 0usize;
    let n = data.len() / item;
    for _ in 0..n {
        out.extend_from_slice(&data[offset * item..(offset + 1) * item]);
        // Advance the row-major odometer, keeping the column-major offset in step.
        for ax in (0..shape.len()).rev() {
            idx[ax] += 1;
            offset += fstrides[ax];
            if idx[ax] < shape[ax] {
                break;
            }
            offset -= fstrides[ax] * shape[ax];
            idx[ax] = 0;
        }
    }
    out
}

/// `data` in little-endian order: a copy with each `unit`-byte word swapped when the file is
/// big-endian, else `data` itself.
fn little_endian<'a>(data: &'a [u8], d: &Descr, unit: usize) -> std::borrow::Cow<'a, [u8]> {
    if d.big_endian && unit > 1 {
        let mut v = data.to_vec();
        v.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
        std::borrow::Cow::Owned(v)
    } else {
        std::borrow::Cow::Borrowed(data)
    }
}

/// Decodes an array read as its own type.
fn decode(dtype: DType, d: &Descr, shape: Vec<usize>, data: &[u8]) -> Result<Tensor, NpyError> {
    let value = |index, what: String| NpyError::Value { index, what };
    if dtype == DType::String {
        // `n` string slots were checked against the limit (`byte_len`) by the caller.
        let n = numel(&shape).unwrap_or(0);
        let mut strings = Vec::with_capacity(n);
        for i in 0..n {
            let item = &data[i * d.size..(i + 1) * d.size];
            let s = if d.kind == b'U' {
                utf32_to_utf8(item, d.big_endian).map_err(|w| value(i, w))?
            } else {
                // numpy drops the trailing NULs of `S` items.
                let end = item.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                item[..end].to_vec()
            };
            strings.push(s);
        }
        return Tensor::new(dtype, shape, Storage::Str(strings))
            .map_err(|e| value(0, e.to_string()));
    }
    // A complex number's parts are swapped each on its own.
    let unit = if d.kind == b'c' { d.size / 2 } else { d.size };
    let le = little_endian(data, d, unit);
    if dtype == DType::Bool {
        if let Some(i) = le.iter().position(|&b| b > 1) {
            return Err(value(i, format!("bool byte {} is not 0 or 1", le[i])));
        }
    }
    Tensor::from_le_bytes(dtype, shape, &le).map_err(|e| value(0, e.to_string()))
}

/// A `U` item (UTF-32 code points, trailing NULs dropped as numpy does) as UTF-8.
fn utf32_to_utf8(item: &[u8], big_endian: bool) -> Result<Vec<u8>, String> {
    let mut out = String::new();
    let points: Vec<u32> = item
        .chunks_exact(4)
        .map(|c| {
            let a = [c[0], c[1], c[2], c[3]];
            if big_endian {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }
        })
        .collect();
    let end = points.iter().rposition(|&p| p != 0).map_or(0, |p| p + 1);
    for &p in &points[..end] {
        let c = char::from_u32(p)
            .ok_or_else(|| format!("code point {p:#x} is not a Unicode scalar value"))?;
        out.push(c);
    }
    Ok(out.into_bytes())
}

/// Reinterprets bit patterns as `want`, a type numpy lacks.
fn reinterpret(want: DType, d: &Descr, shape: Vec<usize>, data: &[u8]) -> Result<Tensor, NpyError> {
    let to_err = |e: crate::ShapeError| NpyError::Value {
        index: 0,
        what: e.to_string(),
    };
    let Layout::Packed(bits) = want.layout() else {
        // bfloat16 and the float8 types: the words as they are (bfloat16 swapped if big-endian).
        let le = little_endian(data, d, d.size);
        return Tensor::from_le_bytes(want, shape, &le).map_err(to_err);
    };
    let n = data.len();
    let mut packed = vec![0u8; byte_len(want, n).unwrap_or(0)];
    let limit = 1i32 << bits;
    for (i, &b) in data.iter().enumerate() {
        // `|i1`: one signed value per byte; `|u1` and void: one code per byte.
        let code = if d.kind == b'i' {
            let v = i32::from(b as i8);
            if v < -(limit / 2) || v >= limit / 2 {
                return Err(NpyError::Value {
                    index: i,
                    what: format!("{v} does not fit in {want}"),
                });
            }
            (v & (limit - 1)) as u32
        } else {
            if i32::from(b) >= limit {
                return Err(NpyError::Value {
                    index: i,
                    what: format!("code {b:#04x} does not fit in the {bits} bits of {want}"),
                });
            }
            u32::from(b)
        };
        set_packed(&mut packed, i, bits, code);
    }
    Tensor::new(want, shape, Storage::Packed(packed)).map_err(to_err)
}

/// Reads a `.npy` file (never through a symbolic link; regular files only) as a tensor; see
/// [`tensor_from_npy`] for `want`. Also returns the file's sha256 when `digest` is set.
pub fn load_npy_file(
    path: &Path,
    file: &str,
    want: Option<DType>,
    max_bytes: usize,
    digest: bool,
) -> Result<(Tensor, Option<String>), LoadError> {
    let io = |source| LoadError::Io {
        file: file.to_string(),
        source,
    };
    let (f, len) = super::open_regular(path, file, npy_limit(max_bytes))?;
    if len == 0 {
        return Err(LoadError::Empty {
            file: file.to_string(),
        });
    }
    // The header first: the limit and the file's size are checked before the array is read.
    let mut head = Vec::new();
    (&f).take(12 + HEADER_SLACK)
        .read_to_end(&mut head)
        .map_err(io)?;
    let plan =
        Plan::new(&head, len as u64, want, max_bytes).map_err(|e| npy_error(file, None, e))?;
    crate::deadline::check().map_err(|e| LoadError::timed_out(file, e))?;
    // The array is read after `data_at` bytes of header, at a 16-byte boundary, so that the
    // tensor can be a view of it.
    const ALIGN: usize = 16;
    let data_len = len - plan.data_at;
    let mut buf: Vec<u8> = Vec::with_capacity(data_len + ALIGN);
    let pad = (ALIGN - buf.as_ptr() as usize % ALIGN) % ALIGN;
    buf.resize(pad, 0);
    let from_head = head.len().min(len).saturating_sub(plan.data_at);
    buf.extend_from_slice(&head[plan.data_at..plan.data_at + from_head]);
    (&f).take((data_len - from_head) as u64)
        .read_to_end(&mut buf)
        .map_err(io)?;
    if buf.len() - pad != data_len {
        return Err(io(std::io::Error::other(
            "the file changed while it was read",
        )));
    }
    let sha = if digest {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        h.update(&head[..plan.data_at]);
        h.update(&buf[pad..]);
        Some(super::hex(&h.finalize()))
    } else {
        None
    };
    let data = bytes::Bytes::from_owner(super::Padded { buf, pad });
    let t = plan
        .decode_shared(data)
        .map_err(|e| npy_error(file, None, e))?;
    Ok((t, sha))
}

fn npy_error(file: &str, array: Option<&str>, e: NpyError) -> LoadError {
    LoadError::Npy {
        file: file.to_string(),
        array: array.map(str::to_string),
        source: Box::new(e),
    }
}

/// A `.npz` archive, read and its central directory parsed; members are inflated on demand.
#[derive(Debug)]
pub struct Npz {
    file: String,
    bytes: Vec<u8>,
    members: Vec<Member>,
    max_bytes: usize,
    sha256: Option<String>,
}

/// One member as the central directory describes it.
#[derive(Clone, Debug)]
struct Member {
    name: String,
    method: u16,
    crc: u32,
    compressed: u64,
    size: u64,
    offset: u64,
}

impl Npz {
    /// Reads an archive (never through a symbolic link; regular files only) of at most
    /// [`crate::load::file_limit`] bytes and parses its central directory.
    pub fn open(path: &Path, file: &str, max_bytes: usize, digest: bool) -> Result<Npz, LoadError> {
        let bytes = read_file(path, file, super::file_limit(max_bytes))?;
        if bytes.is_empty() {
            return Err(LoadError::Empty {
                file: file.to_string(),
            });
        }
        Npz::from_bytes(bytes, file, max_bytes, digest)
    }

    /// Parses an archive already in memory; `file` is the name shown in errors.
    pub fn from_bytes(
        bytes: Vec<u8>,
        file: &str,
        max_bytes: usize,
        digest: bool,
    ) -> Result<Npz, LoadError> {
        let members = zip::central_directory(&bytes).map_err(|e| npy_error(file, None, e))?;
        Ok(Npz {
            file: file.to_string(),
            sha256: digest.then(|| sha256_hex(&bytes)),
            bytes,
            members,
            max_bytes,
        })
    }

    /// The archive's sha256, when asked for at opening.
    pub fn sha256(&self) -> Option<&str> {
        self.sha256.as_deref()
    }

    /// The first of `arrays` (names without `.npy`) the archive holds, without reading it.
    pub fn holds(&self, arrays: &[&str]) -> Option<String> {
        arrays.iter().find_map(|a| {
            let wanted = format!("{a}.npy");
            self.members
                .iter()
                .any(|m| m.name == wanted)
                .then(|| a.to_string())
        })
    }

    /// The first array found of `arrays` (names without `.npy`), as `(name, tensor)`; `None`
    /// when the archive holds none of them. Two of them present (different names for one
    /// output) is an error: which one is meant would be a guess.
    pub fn tensor(
        &self,
        arrays: &[&str],
        want: Option<DType>,
    ) -> Result<Option<(String, Tensor)>, LoadError> {
        let mut found: Vec<&Member> = Vec::new();
        for a in arrays {
            let wanted = format!("{a}.npy");
            if let Some(m) = self.members.iter().find(|m| m.name == wanted) {
                if !found.iter().any(|f| f.name == m.name) {
                    found.push(m);
                }
            }
        }
        let member = match found.as_slice() {
            [] => return Ok(None),
            [m] => *m,
            [a, b, ..] => {
                return Err(npy_error(
                    &self.file,
                    None,
                    NpyError::Zip(format!(
                        "both '{}' and '{}' hold this output: which one is meant is ambiguous",
                        a.name, b.name
                    )),
                ))
            }
        };
        let array = member.name.trim_end_matches(".npy").to_string();
        let bytes = zip::extract(&self.bytes, member, npy_limit(self.max_bytes))
            .map_err(|e| npy_error(&self.file, Some(&array), e))?;
        let t = tensor_from_npy(&bytes, want, self.max_bytes)
            .map_err(|e| npy_error(&self.file, Some(&array), e))?;
        Ok(Some((array, t)))
    }
}

mod zip;

#[cfg(test)]
mod tests {
    //! Expected values come from `tests/fixtures/npy/expected.json`, written by numpy and
    //! ml_dtypes (`tests/fixtures/npy/make.py`); hostile files are made here by hand.

    use super::*;
    use crate::tensor::value::packed_code;
    use serde_json::Value;
    use std::path::PathBuf;

    fn dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/npy")
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(dir().join(name)).unwrap()
    }

    fn expected() -> serde_json::Map<String, Value> {
        let text = std::fs::read_to_string(dir().join("expected.json")).unwrap();
        serde_json::from_str::<Value>(&text)
            .unwrap()
            .as_object()
            .unwrap()
            .clone()
    }

    fn dtype_named(name: &str) -> DType {
        DType::ALL
            .iter()
            .copied()
            .find(|d| d.name() == name)
            .unwrap_or_else(|| panic!("no dtype {name}"))
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Checks a tensor against what numpy says the array holds.
    fn check(name: &str, t: &Tensor, e: &Value) {
        let dtype = dtype_named(e["dtype"].as_str().unwrap());
        assert_eq!(t.dtype(), dtype, "{name}");
        let shape: Vec<usize> = e["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(t.shape(), shape, "{name}");
        if let Some(le) = e.get("le_hex") {
            assert_eq!(
                t.to_le_bytes().unwrap(),
                hex(le.as_str().unwrap()),
                "{name}"
            );
        } else if let Some(strings) = e.get("strings_hex") {
            let want: Vec<Vec<u8>> = strings
                .as_array()
                .unwrap()
                .iter()
                .map(|s| hex(s.as_str().unwrap()))
                .collect();
            assert_eq!(t.elems::<Vec<u8>>().unwrap(), want, "{name}");
        } else {
            let Layout::Packed(bits) = dtype.layout() else {
                panic!("{name}: codes for a dtype that is not packed")
            };
            let Storage::Packed(bytes) = t.storage() else {
                panic!("{name}: not packed")
            };
            let codes: Vec<u32> = (0..t.numel())
                .map(|i| packed_code(bytes, i, bits).unwrap())
                .collect();
            let want: Vec<u32> = e["codes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(codes, want, "{name}");
        }
    }

    #[test]
    fn every_npy_fixture_reads_as_numpy_wrote_it() {
        let mut seen = 0;
        for (name, e) in expected() {
            if !name.ends_with(".npy") {
                continue;
            }
            let want = e.get("want").and_then(Value::as_str).map(dtype_named);
            let got = tensor_from_npy(&fixture(&name), want, 1 << 20);
            if let Some(err) = e.get("error") {
                let msg = got.unwrap_err().to_string();
                assert!(msg.contains(err.as_str().unwrap()), "{name}: {msg}");
            } else if e["dtype"].is_null() {
                assert!(
                    matches!(got, Err(NpyError::Value { .. })),
                    "{name}: {got:?}"
                );
            } else {
                check(
                    &name,
                    &got.unwrap_or_else(|err| panic!("{name}: {err}")),
                    &e,
                );
            }
            seen += 1;
        }
        assert!(seen >= 40, "{seen}");
    }

    #[test]
    fn headers_parse_strictly() {
        let h = parse_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }    \n")
            .unwrap();
        assert_eq!(
            h,
            Header {
                descr: "<f4".into(),
                fortran_order: false,
                shape: vec![3, 4]
            }
        );
        let h =
            parse_header("{\"shape\": (), \"fortran_order\": True, \"descr\": \"|u1\"}").unwrap();
        assert_eq!((h.shape, h.fortran_order), (vec![], true));
        assert_eq!(
            parse_header("{'descr': '<f4', 'fortran_order': False, 'shape': (5,)}")
                .unwrap()
                .shape,
            [5]
        );
        for (bad, why) in [
            (
                "{'descr': '<f4', 'fortran_order': False}",
                "'shape' is missing",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (5)}",
                "not a tuple",
            ),
            (
                "{'descr': '<f4', 'fortran_order': 0, 'shape': (5,)}",
                "True or False",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
                "non-negative",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
                "too large",
            ),
            (
                "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
                "twice",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}",
                "unexpected key",
            ),
            (
                "{'descr': '<f4', 'fortran_order': False, 'shape': ()} junk",
                "after the dict",
            ),
            ("{'descr': '<f4", "unterminated"),
            ("", "expected '{'"),
        ] {
            let msg = parse_header(bad).unwrap_err().to_string();
            assert!(msg.contains(why), "{bad}: {msg}");
        }
        assert_eq!(
            parse_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}"),
            Err(NpyError::Structured)
        );
    }

    /// A version 1.0 file with `header` (padded as numpy does) and `data`.
    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_string();
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn dict(descr: &str, shape: &str) -> String {
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}")
    }

    #[test]
    fn every_descr_maps_to_its_dtype() {
        use DType::*;
        for (descr, dtype, size) in [
            ("<f2", Float16, 2),
            ("<f4", Float, 4),
            ("<f8", Double, 8),
            ("|i1", Int8, 1),
            ("<i2", Int16, 2),
            ("<i4", Int32, 4),
            ("<i8", Int64, 8),
            ("|u1", Uint8, 1),
            ("<u2", Uint16, 2),
            ("<u4", Uint32, 4),
            ("<u8", Uint64, 8),
            ("|b1", Bool, 1),
            ("<c8", Complex64, 8),
            ("<c16", Complex128, 16),
            (">f4", Float, 4),
            (">c16", Complex128, 16),
            ("<U3", String, 12),
            ("|S3", String, 3),
        ] {
            let t = tensor_from_npy(&npy(&dict(descr, "(2,)"), &vec![0; 2 * size]), None, 1024)
                .unwrap_or_else(|e| panic!("{descr}: {e}"));
            assert_eq!((t.dtype(), t.shape()), (dtype, &[2][..]), "{descr}");
        }
        for descr in [
            "<f16", "<i16", "<M8[ns]", "<m8", "<V4", "|V2", "<f1", "x", "<",
        ] {
            let got = tensor_from_npy(&npy(&dict(descr, "(1,)"), &[0; 16]), None, 1024);
            assert!(
                matches!(got, Err(NpyError::Descr { .. })),
                "{descr}: {got:?}"
            );
        }
    }

    #[test]
    fn object_arrays_are_refused_without_unpickling() {
        let got = tensor_from_npy(&fixture("object.npy"), None, 1 << 20);
        assert_eq!(got, Err(NpyError::Object("|O".into())));
        assert!(got.unwrap_err().to_string().contains("never unpickled"));
    }

    #[test]
    fn version_2_and_3_headers_and_bad_versions() {
        let v1 = npy(&dict("<i4", "(1,)"), &[7, 0, 0, 0]);
        let h = &v1[10..];
        for major in [2u8, 3] {
            let mut f = vec![0x93, b'N', b'U', b'M', b'P', b'Y', major, 0];
            f.extend_from_slice(&(h.len() as u32 - 4).to_le_bytes());
            f.extend_from_slice(h);
            let t = tensor_from_npy(&f, None, 1024).unwrap();
            assert_eq!(t.to_vec::<i32>().unwrap(), [7]);
        }
        let mut f = v1.clone();
        f[6] = 4;
        assert_eq!(
            tensor_from_npy(&f, None, 1024),
            Err(NpyError::Version(4, 0))
        );
        f[6] = 1;
        f[7] = 1;
        assert_eq!(
            tensor_from_npy(&f, None, 1024),
            Err(NpyError::Version(1, 1))
        );
    }

    #[test]
    fn bad_magic_and_truncated_files_are_refused() {
        assert_eq!(
            tensor_from_npy(b"PK\x03\x04", None, 1024),
            Err(NpyError::BadMagic)
        );
        assert_eq!(tensor_from_npy(b"", None, 1024), Err(NpyError::BadMagic));
        let f = fixture("le_f4.npy");
        for cut in [7, 9, 60, f.len() - 1] {
            let got = tensor_from_npy(&f[..cut], None, 1024);
            assert!(
                matches!(
                    got,
                    Err(NpyError::TruncatedHeader { .. } | NpyError::DataSize { .. })
                ),
                "{cut}: {got:?}"
            );
        }
        let mut long = f.clone();
        long.push(0);
        let msg = tensor_from_npy(&long, None, 1024).unwrap_err().to_string();
        assert!(
            msg.contains("needs 24 bytes of data after the header, the file has 25"),
            "{msg}"
        );
        // A version 2.0 header length of 4 GiB in a 100-byte file.
        let mut f = b"\x93NUMPY\x02\x00\xff\xff\xff\xff".to_vec();
        f.resize(100, b' ');
        assert!(matches!(
            tensor_from_npy(&f, None, 1024),
            Err(NpyError::TruncatedHeader {
                needed: 4_294_967_307,
                actual: 100
            })
        ));
    }

    #[test]
    fn huge_and_overflowing_shapes_allocate_nothing() {
        // A claimed 2^60 floats in a file of a few bytes: refused on size, not allocated.
        let got = tensor_from_npy(
            &npy(&dict("<f4", "(1152921504606846976,)"), &[0; 4]),
            None,
            usize::MAX,
        );
        assert!(
            matches!(
                got,
                Err(NpyError::Overflow { .. } | NpyError::DataSize { .. })
            ),
            "{got:?}"
        );
        let got = tensor_from_npy(
            &npy(&dict("<f4", "(1073741824, 1073741824)"), &[0; 4]),
            None,
            usize::MAX,
        );
        assert!(
            matches!(
                got,
                Err(NpyError::DataSize { .. } | NpyError::Overflow { .. })
            ),
            "{got:?}"
        );
        let got = tensor_from_npy(
            &npy(&dict("<f8", "(4294967296, 4294967296, 4294967296)"), &[]),
            None,
            usize::MAX,
        );
        assert!(matches!(got, Err(NpyError::Overflow { .. })), "{got:?}");
        // A zero dim does not rescue an overflowing product.
        let got = tensor_from_npy(
            &npy(&dict("|u1", "(4294967296, 4294967296, 4294967296, 0)"), &[]),
            None,
            usize::MAX,
        );
        assert!(matches!(got, Err(NpyError::Overflow { .. })), "{got:?}");
        let got = tensor_from_npy(
            &npy(&dict("<U1000000000000", "(1000000000,)"), &[]),
            None,
            usize::MAX,
        );
        assert!(matches!(got, Err(NpyError::Overflow { .. })), "{got:?}");
        // Within the address space but over --max-tensor-bytes.
        let got = tensor_from_npy(&npy(&dict("<f4", "(100,)"), &[0; 400]), None, 399);
        assert!(
            matches!(
                got,
                Err(NpyError::TooLarge {
                    bytes: 400,
                    limit: 399,
                    ..
                })
            ),
            "{got:?}"
        );
    }

    #[test]
    fn fortran_order_is_transposed_to_row_major() {
        // numpy: np.asfortranarray(np.arange(6).reshape(2, 3)) stores 0 3 1 4 2 5.
        let data: Vec<u8> = [0u8, 3, 1, 4, 2, 5].to_vec();
        let f = npy(
            "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }",
            &data,
        );
        let t = tensor_from_npy(&f, None, 1024).unwrap();
        assert_eq!(t.to_vec::<u8>().unwrap(), [0, 1, 2, 3, 4, 5]);
        assert_eq!(
            fortran_to_c(&[0, 3, 1, 4, 2, 5], &[2, 3], 1),
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!(fortran_to_c(&[], &[0, 3], 4), Vec::<u8>::new());
    }

    #[test]
    fn bit_patterns_become_the_wanted_type() {
        use DType::*;
        // bfloat16 1.0 is 0x3f80; as <u2 and as ml_dtypes' <V2.
        for descr in ["<u2", "<V2", "|V2"] {
            let t = tensor_from_npy(
                &npy(&dict(descr, "(1,)"), &[0x80, 0x3f]),
                Some(Bfloat16),
                64,
            )
            .unwrap();
            assert_eq!(
                t.to_vec::<half::bf16>().unwrap(),
                [half::bf16::ONE],
                "{descr}"
            );
        }
        let t = tensor_from_npy(
            &npy(&dict(">u2", "(1,)"), &[0x3f, 0x80]),
            Some(Bfloat16),
            64,
        )
        .unwrap();
        assert_eq!(t.to_vec::<half::bf16>().unwrap(), [half::bf16::ONE]);
        // A big-endian void has no order to undo: not a bit-pattern file.
        assert!(tensor_from_npy(
            &npy(&dict(">V2", "(1,)"), &[0x3f, 0x80]),
            Some(Bfloat16),
            64
        )
        .is_err());
        // Without the wanted type the file keeps its own.
        let t = tensor_from_npy(&npy(&dict("<u2", "(1,)"), &[0x80, 0x3f]), None, 64).unwrap();
        assert_eq!(t.dtype(), Uint16);
        let t = tensor_from_npy(&npy(&dict("<f4", "(1,)"), &[0; 4]), Some(Bfloat16), 64).unwrap();
        assert_eq!(t.dtype(), Float);
        for want in [
            Float8E4M3Fn,
            Float8E4M3Fnuz,
            Float8E5M2,
            Float8E5M2Fnuz,
            Float8E8M0,
        ] {
            for descr in ["|u1", "|V1", "<V1", "<f1"] {
                let t = tensor_from_npy(&npy(&dict(descr, "(2,)"), &[0x38, 0xc0]), Some(want), 64)
                    .unwrap();
                assert_eq!(
                    (t.dtype(), t.to_le_bytes().unwrap()),
                    (want, vec![0x38, 0xc0])
                );
            }
            // |i1 is not float8's bit-pattern type: an int8 tensor, which the comparison reports.
            let t = tensor_from_npy(&npy(&dict("|i1", "(1,)"), &[1]), Some(want), 64).unwrap();
            assert_eq!(t.dtype(), Int8);
        }
        // int4: one signed value per byte; int2 likewise, with its narrower range.
        let t =
            tensor_from_npy(&npy(&dict("|i1", "(3,)"), &[0xf8, 0xff, 7]), Some(Int4), 64).unwrap();
        assert_eq!(t.storage(), &Storage::Packed(vec![0xf8, 0x07]));
        let t =
            tensor_from_npy(&npy(&dict("|i1", "(3,)"), &[0xfe, 1, 0xff]), Some(Int2), 64).unwrap();
        assert_eq!(t.storage(), &Storage::Packed(vec![0b11_01_10]));
        let got = tensor_from_npy(&npy(&dict("|i1", "(2,)"), &[0, 2]), Some(Int2), 64);
        assert_eq!(
            got.unwrap_err().to_string(),
            "element 1: 2 does not fit in int2"
        );
        // Codes: uint4, float4e2m1, float6 (four codes in three bytes).
        let t = tensor_from_npy(&npy(&dict("|u1", "(2,)"), &[0xf, 0x1]), Some(Uint4), 64).unwrap();
        assert_eq!(t.storage(), &Storage::Packed(vec![0x1f]));
        let t = tensor_from_npy(&npy(&dict("|V1", "(1,)"), &[0xc]), Some(Float4E2M1), 64).unwrap();
        assert_eq!(t.storage(), &Storage::Packed(vec![0xc]));
        let t = tensor_from_npy(
            &npy(&dict("|u1", "(4,)"), &[63, 0, 63, 0]),
            Some(Float6E2M3),
            64,
        )
        .unwrap();
        assert_eq!(t.storage(), &Storage::Packed(vec![0x3f, 0xf0, 0x03]));
        let got = tensor_from_npy(&npy(&dict("|u1", "(1,)"), &[0x10]), Some(Uint4), 64);
        assert!(
            matches!(got, Err(NpyError::Value { index: 0, .. })),
            "{got:?}"
        );
    }

    #[test]
    fn bad_element_values_are_named() {
        let got = tensor_from_npy(&npy(&dict("|b1", "(2,)"), &[1, 2]), None, 64);
        assert_eq!(
            got.unwrap_err().to_string(),
            "element 1: bool byte 2 is not 0 or 1"
        );
        // A UTF-16 surrogate is no Unicode scalar value.
        let got = tensor_from_npy(&npy(&dict("<U1", "(1,)"), &[0x00, 0xd8, 0, 0]), None, 64);
        assert!(got.unwrap_err().to_string().contains("0xd800"));
    }

    /// A stored zip of one member, as Python's zipfile writes it (no ZIP64).
    fn stored_zip(name: &str, data: &[u8]) -> Vec<u8> {
        let crc = zip::crc32(data);
        let len = data.len() as u32;
        let mut z = Vec::new();
        z.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        z.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0]);
        for v in [crc, len, len] {
            z.extend_from_slice(&v.to_le_bytes());
        }
        z.extend_from_slice(&(name.len() as u16).to_le_bytes());
        z.extend_from_slice(&[0, 0]);
        z.extend_from_slice(name.as_bytes());
        z.extend_from_slice(data);
        let cd = z.len() as u32;
        z.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        z.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0]);
        for v in [crc, len, len] {
            z.extend_from_slice(&v.to_le_bytes());
        }
        z.extend_from_slice(&(name.len() as u16).to_le_bytes());
        z.extend_from_slice(&[0; 12]);
        z.extend_from_slice(&0u32.to_le_bytes());
        z.extend_from_slice(name.as_bytes());
        let cd_size = z.len() as u32 - cd;
        z.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        z.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
        z.extend_from_slice(&cd_size.to_le_bytes());
        z.extend_from_slice(&cd.to_le_bytes());
        z.extend_from_slice(&[0, 0]);
        z
    }

    fn npz(bytes: Vec<u8>, max: usize) -> Result<Npz, LoadError> {
        Npz::from_bytes(bytes, "outputs.npz", max, false)
    }

    #[test]
    fn npz_stored_compressed_and_zip64_read_as_numpy_wrote_them() {
        let e = expected();
        for name in ["stored.npz", "compressed.npz", "zip64.npz"] {
            let a = npz(fixture(name), 1 << 20).unwrap();
            let member = e[name]["member"].as_str().unwrap();
            let (array, t) = a.tensor(&["output_0", member], None).unwrap().unwrap();
            assert_eq!(array, member);
            check(name, &t, &e[name]);
            assert!(a.tensor(&["absent"], None).unwrap().is_none());
        }
        // Two names for one output, both present.
        let a = npz(fixture("stored.npz"), 1 << 20).unwrap();
        let msg = a
            .tensor(&["output_0", "extra"], None)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("ambiguous"), "{msg}");
        assert_eq!(zip::crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn npz_members_are_inflated_no_further_than_the_limit() {
        // A million zero bytes in a kilobyte: over a 1000-byte limit, refused on the declared
        // size before inflating.
        let bomb = fixture("zeros.npz");
        assert!(bomb.len() < 10_000);
        let a = npz(bomb.clone(), 1000).unwrap();
        let msg = a.tensor(&["output_0"], None).unwrap_err().to_string();
        assert!(msg.contains("array 'output_0': member 'output_0.npy' declares 1000128 bytes uncompressed, more than the"), "{msg}");
        // The same member lying about its size: inflation stops at the declared size.
        let mut lying = bomb.clone();
        let cd = lying
            .windows(4)
            .rposition(|w| w == 0x0201_4b50u32.to_le_bytes())
            .unwrap();
        lying[cd + 24..cd + 28].copy_from_slice(&500u32.to_le_bytes());
        let a = npz(lying, 1000).unwrap();
        let msg = a.tensor(&["output_0"], None).unwrap_err().to_string();
        assert!(
            msg.contains("inflates to more than the 500 bytes it declares"),
            "{msg}"
        );
        let good = npz(bomb, 1 << 30).unwrap();
        assert_eq!(
            good.tensor(&["output_0"], None).unwrap().unwrap().1.numel(),
            1_000_000
        );
        // A ZIP64 central directory entry claiming 2^64 - 1 bytes.
        let mut huge = fixture("zip64.npz");
        let cd = huge
            .windows(4)
            .rposition(|w| w == 0x0201_4b50u32.to_le_bytes())
            .unwrap();
        let at = cd + 46 + "output_0.npy".len() + 4;
        huge[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let msg = npz(huge, 1 << 30)
            .unwrap()
            .tensor(&["output_0"], None)
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains(&format!("declares {} bytes", u64::MAX)),
            "{msg}"
        );
    }

    #[test]
    fn malformed_archives_are_refused() {
        let member = npy(&dict("<i4", "(1,)"), &[5, 0, 0, 0]);
        let good = stored_zip("output_0.npy", &member);
        let t = npz(good.clone(), 1024)
            .unwrap()
            .tensor(&["output_0"], None)
            .unwrap()
            .unwrap()
            .1;
        assert_eq!(t.to_vec::<i32>().unwrap(), [5]);
        for (what, bytes) in [
            ("empty", Vec::new()),
            ("no end record", good[..good.len() - 22].to_vec()),
            ("cut inside the directory", {
                let mut b = good.clone();
                let n = b.len();
                b.drain(n - 40..n - 22);
                b
            }),
        ] {
            assert!(npz(bytes, 1024).is_err(), "{what}");
        }
        // A corrupted byte of stored data: the CRC says so.
        let mut bad_crc = good.clone();
        bad_crc[30 + 12 + member.len() - 1] ^= 1;
        let msg = npz(bad_crc, 1024)
            .unwrap()
            .tensor(&["output_0"], None)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("CRC-32"), "{msg}");
        // A member that is not a .npy: the array is named.
        let junk = stored_zip("output_0.npy", b"not numpy");
        let msg = npz(junk, 1024)
            .unwrap()
            .tensor(&["output_0"], None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            "outputs.npz: array 'output_0': not a .npy file (it does not start with the magic string \\x93NUMPY)"
        );
        // An entry count the directory cannot hold is not allocated.
        let mut many = good.clone();
        let n = many.len();
        many[n - 12..n - 10].copy_from_slice(&0xfffeu16.to_le_bytes());
        let msg = npz(many, 1024).unwrap_err().to_string();
        assert!(msg.contains("entries do not fit"), "{msg}");
        // Encrypted and unknown methods.
        let mut enc = good.clone();
        let cd = enc
            .windows(4)
            .rposition(|w| w == 0x0201_4b50u32.to_le_bytes())
            .unwrap();
        enc[cd + 8] = 1;
        assert!(npz(enc, 1024)
            .unwrap_err()
            .to_string()
            .contains("encrypted"));
        let mut method = good;
        method[cd + 10] = 12;
        let msg = npz(method, 1024)
            .unwrap()
            .tensor(&["output_0"], None)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("compression method 12"), "{msg}");
    }

    #[test]
    fn npy_files_are_read_in_place_when_their_bytes_are_the_words() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let load = |bytes: Vec<u8>, max: usize| {
            std::fs::write(&path, bytes).unwrap();
            load_npy_file(&path, "a.npy", None, max, true).map(|(t, sha)| (t, sha.unwrap()))
        };
        let le: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let bytes = npy(&dict("<f4", "(2,)"), &le);
        let (t, sha) = load(bytes.clone(), 1 << 20).unwrap();
        assert!(t.is_shared());
        assert_eq!(t.to_vec::<f32>().unwrap(), [1.5, -2.0]);
        assert_eq!(sha, sha256_hex(&bytes));
        // Big-endian words need a swap: a copy, with the same values.
        let be: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        let (t, _) = load(npy(&dict(">f4", "(2,)"), &be), 1 << 20).unwrap();
        assert!(!t.is_shared());
        assert_eq!(t.to_vec::<f32>().unwrap(), [1.5, -2.0]);
        // The header alone decides a refusal: over the limit, or short of its data.
        let e = load(npy(&dict("<f4", "(2,)"), &le), 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than the limit of 4 bytes"), "{e}");
        let e = load(npy(&dict("<f4", "(3,)"), &le), 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("needs 12 bytes of data after the header, the file has 8"),
            "{e}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_and_empty_files_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real.npy");
        std::fs::write(&real, npy(&dict("|u1", "(1,)"), &[1])).unwrap();
        let link = tmp.path().join("output_0.npy");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = load_npy_file(&link, "output_0.npy", None, 1024, false).unwrap_err();
        assert!(matches!(err, LoadError::NotRegular { .. }), "{err}");
        let (t, sha) = load_npy_file(&real, "real.npy", None, 1024, true).unwrap();
        assert_eq!((t.numel(), sha.map(|s| s.len())), (1, Some(64)));
        let empty = tmp.path().join("empty.npz");
        std::fs::write(&empty, b"").unwrap();
        let err = Npz::open(&empty, "empty.npz", 1024, false).unwrap_err();
        assert!(matches!(err, LoadError::Empty { .. }), "{err}");
        let link = tmp.path().join("outputs.npz");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = Npz::open(&link, "outputs.npz", 1024, false).unwrap_err();
        assert!(matches!(err, LoadError::NotRegular { .. }), "{err}");
        // The file over the limit is not read at all.
        let big = tmp.path().join("big.npy");
        std::fs::write(&big, vec![0u8; 2 << 20]).unwrap();
        let err = load_npy_file(&big, "big.npy", None, 1024, false).unwrap_err();
        assert!(matches!(err, LoadError::TooBig { .. }), "{err}");
    }
}
