//! Reading a `.pb` tensor file without reading what it merely claims: the top-level fields of the
//! serialized `TensorProto` are stepped over on disk first, each known field's size is checked
//! against what a tensor under `--max-tensor-bytes` can need, and only then are the known fields
//! read. A field the decoder would skip anyway (an unknown field number) is never read into
//! memory, however large it says it is.

use super::{open_regular, LoadError};
use crate::tensor::{DType, Layout};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

/// Room for the fields that hold no elements (name, dims, doc_string, external data locations,
/// ...) together, and for the keys and lengths of the data fields.
pub(crate) const FIELD_SLACK: u64 = 1 << 20;

/// How many fields are stepped over between two looks at the case's deadline.
const FIELDS_PER_DEADLINE_CHECK: u64 = 1 << 16;

/// How much of a kept field is read between two looks at the case's deadline.
const READ_CHUNK: u64 = 16 << 20;

/// The `TensorProto` fields that hold elements, by number: the tensor's bytes are counted
/// against the limit through these.
const DATA_FIELDS: [(u64, &str); 7] = [
    (4, "float_data"),
    (5, "int32_data"),
    (6, "string_data"),
    (7, "int64_data"),
    (9, "raw_data"),
    (10, "double_data"),
    (11, "uint64_data"),
];

/// The other `TensorProto` fields (dims, data_type, segment, name, doc_string, external_data,
/// data_location, metadata_props).
const META_FIELDS: [u64; 8] = [1, 2, 3, 8, 12, 13, 14, 16];

/// One top-level field as found on disk.
struct Head {
    number: u64,
    /// The varint's value for wire type 0.
    value: u64,
    /// The key and the length (wire type 2) or the value (other wire types), as in the file.
    bytes: [u8; 20],
    len: usize,
    /// Bytes after `bytes` that belong to the field (the payload of wire type 2).
    body: u64,
}

/// Reads one varint into `out`; `None` at a clean end of file before its first byte, an error
/// when the file ends inside it or it runs past 10 bytes.
fn varint(r: &mut impl BufRead, out: &mut Vec<u8>) -> std::io::Result<Option<Result<u64, ()>>> {
    let mut value = 0u64;
    for i in 0..10 {
        let mut b = [0u8];
        if r.read(&mut b)? == 0 {
            return Ok(if i == 0 { None } else { Some(Err(())) });
        }
        out.push(b[0]);
        value |= u64::from(b[0] & 0x7f) << (7 * i);
        if b[0] < 0x80 {
            return Ok(Some(Ok(value)));
        }
    }
    Ok(Some(Err(())))
}

/// Steps through the top-level fields of `r` (a file of `len` bytes), calling `visit` on each
/// field's head with the reader placed at its body. `visit` reads or skips the body itself.
/// Returns the offset where the fields stop being readable (`len` when all are).
fn walk(
    r: &mut BufReader<&File>,
    len: u64,
    file: &str,
    mut visit: impl FnMut(&Head, &mut BufReader<&File>) -> Result<(), LoadError>,
) -> Result<u64, LoadError> {
    let io = |source| LoadError::Io {
        file: file.to_string(),
        source,
    };
    let mut at = 0u64;
    let mut count = 0u64;
    loop {
        count += 1;
        if count % FIELDS_PER_DEADLINE_CHECK == 0 {
            crate::deadline::check().map_err(|e| LoadError::timed_out(file, e))?;
        }
        let mut bytes = Vec::with_capacity(20);
        let key = match varint(r, &mut bytes).map_err(io)? {
            None => return Ok(at),
            Some(Ok(k)) => k,
            Some(Err(())) => return Ok(at),
        };
        let (number, wire) = (key >> 3, key & 7);
        let mut value = 0;
        let body = match wire {
            0 => match varint(r, &mut bytes).map_err(io)? {
                Some(Ok(v)) => {
                    value = v;
                    0
                }
                _ => return Ok(at),
            },
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                let mut fixed = [0u8; 8];
                if r.read_exact(&mut fixed[..n]).is_err() {
                    return Ok(at);
                }
                bytes.extend_from_slice(&fixed[..n]);
                0
            }
            2 => match varint(r, &mut bytes).map_err(io)? {
                Some(Ok(v)) => v,
                _ => return Ok(at),
            },
            _ => return Ok(at),
        };
        let end = at + bytes.len() as u64;
        if number == 0 || body > len.saturating_sub(end) {
            return Ok(at);
        }
        let mut head = Head {
            number,
            value,
            bytes: [0; 20],
            len: bytes.len(),
            body,
        };
        head.bytes[..bytes.len()].copy_from_slice(&bytes);
        visit(&head, r)?;
        at = end + body;
    }
}

/// What pass one learned of the file.
#[derive(Default)]
struct Census {
    dtype: Option<i32>,
    /// Bytes (keys and lengths included) of each data field, in [`DATA_FIELDS`] order.
    data: [u64; 7],
    meta: u64,
    /// Where the last `raw_data` payload will start in the kept bytes.
    raw_at: Option<u64>,
    kept: u64,
}

/// The most bytes field `name` can take in a file whose tensor is of `dtype` and within
/// `max_bytes`: every element written as its field writes it, with a key per value (the
/// unpacked form, larger than the packed one).
fn budget(name: &str, dtype: Option<DType>, max_bytes: u64) -> u64 {
    let Some(dtype) = dtype else {
        return FIELD_SLACK;
    };
    let bits: u64 = match dtype.layout() {
        Layout::Bytes(w) => 8 * w as u64,
        Layout::Packed(b) => u64::from(b),
        Layout::String => 8 * std::mem::size_of::<Vec<u8>>() as u64,
    };
    let elements = max_bytes.saturating_mul(8) / bits.max(1);
    let values = if matches!(dtype, DType::Complex64 | DType::Complex128) {
        elements.saturating_mul(2)
    } else {
        elements
    };
    let typed = super::tensor::typed_field_for(dtype);
    let need = match name {
        "raw_data" if dtype != DType::String => max_bytes,
        // A key and a fixed-size value.
        "float_data" if typed == name => values.saturating_mul(5),
        "double_data" if typed == name => values.saturating_mul(9),
        // A key and a varint of up to 10 bytes (a negative int32 takes 10).
        "int32_data" | "int64_data" | "uint64_data" if typed == name => values.saturating_mul(11),
        // A key and a length per string, and the strings' bytes, which the limit also bounds.
        "string_data" if typed == name => values.saturating_mul(11).saturating_add(max_bytes),
        _ => 0,
    };
    need.saturating_add(FIELD_SLACK)
}

/// Reads a `.pb` tensor file (never through a symbolic link; regular files only), keeping only
/// the `TensorProto`'s own fields, after checking each against what a tensor of at most
/// `max_bytes` can need; a field too large is refused before anything is read. The payload of
/// `raw_data` is placed at a 16-byte boundary, so that the tensor can read its elements in
/// place. Bytes that are not a readable field at the end of the file are kept as they are (the
/// decoder then says what is wrong), up to [`FIELD_SLACK`]. Also returns the whole file's sha256
/// when `digest` is set.
pub(crate) fn read_tensor_fields(
    path: &std::path::Path,
    file: &str,
    max_bytes: usize,
    digest: bool,
) -> Result<(bytes::Bytes, Option<String>), LoadError> {
    let io = |source| LoadError::Io {
        file: file.to_string(),
        source,
    };
    let (f, _) = open_regular(path, file, u64::MAX)?;
    let len = f.metadata().map_err(io)?.len();
    if len == 0 {
        return Err(LoadError::Empty {
            file: file.to_string(),
        });
    }
    let max = max_bytes as u64;
    let is_data = |n: u64| DATA_FIELDS.iter().position(|&(d, _)| d == n);
    let known = |n: u64| is_data(n).is_some() || META_FIELDS.contains(&n);

    // Pass one: sizes only, nothing read but keys and lengths.
    let mut c = Census::default();
    let mut r = BufReader::with_capacity(1 << 16, &f);
    let tail = walk(&mut r, len, file, |h, r| {
        let size = h.len as u64 + h.body;
        if known(h.number) {
            if h.number == 2 {
                c.dtype = Some(h.value as i32);
            }
            match is_data(h.number) {
                Some(i) => {
                    if h.number == 9 {
                        c.raw_at = Some(c.kept + h.len as u64);
                    }
                    c.data[i] += size;
                }
                None => c.meta += size,
            }
            c.kept += size;
        }
        r.seek_relative(h.body as i64).map_err(io)
    })?;
    let too_big = |field: &str, size: u64, limit: u64| LoadError::FieldTooBig {
        file: file.to_string(),
        field: field.to_string(),
        size,
        limit,
    };
    let rest = len - tail;
    if rest > FIELD_SLACK {
        return Err(too_big(
            "the unreadable rest of the file",
            rest,
            FIELD_SLACK,
        ));
    }
    if c.meta > FIELD_SLACK {
        return Err(too_big(
            "the fields other than the data",
            c.meta,
            FIELD_SLACK,
        ));
    }
    let dtype = c.dtype.and_then(DType::from_onnx);
    for (i, &(_, name)) in DATA_FIELDS.iter().enumerate() {
        let limit = budget(name, dtype, max);
        if c.data[i] > limit {
            return Err(too_big(name, c.data[i], limit));
        }
    }

    // Pass two: the known fields (and an unreadable rest), into one aligned buffer.
    const ALIGN: usize = 16;
    let total = c.kept + rest;
    let capacity = usize::try_from(total).map_err(|_| too_big("the fields", total, total))?;
    let mut buf: Vec<u8> = Vec::with_capacity(capacity + ALIGN);
    let payload = c.raw_at.unwrap_or(0) as usize;
    let pad = (ALIGN - (buf.as_ptr() as usize + payload) % ALIGN) % ALIGN;
    buf.resize(pad, 0);
    r.seek(SeekFrom::Start(0)).map_err(io)?;
    let changed = || LoadError::Io {
        file: file.to_string(),
        source: std::io::Error::other("the file changed while it was read"),
    };
    let tail2 = walk(&mut r, len, file, |h, r| {
        if !known(h.number) {
            return r.seek_relative(h.body as i64).map_err(io);
        }
        if (buf.len() - pad) as u64 + h.len as u64 + h.body > c.kept {
            return Err(changed());
        }
        buf.extend_from_slice(&h.bytes[..h.len]);
        let mut left = h.body;
        while left > 0 {
            let n = left.min(READ_CHUNK);
            let got = r.by_ref().take(n).read_to_end(&mut buf).map_err(io)? as u64;
            if got != n {
                return Err(changed());
            }
            left -= n;
            if left > 0 {
                crate::deadline::check().map_err(|e| LoadError::timed_out(file, e))?;
            }
        }
        Ok(())
    })?;
    if tail2 != tail || (buf.len() - pad) as u64 != c.kept {
        return Err(changed());
    }
    // The walk may have read into the rest before it found it unreadable.
    r.seek(SeekFrom::Start(tail)).map_err(io)?;
    r.by_ref().take(rest).read_to_end(&mut buf).map_err(io)?;
    let sha = if digest {
        r.seek(SeekFrom::Start(0)).map_err(io)?;
        Some(super::sha256_reader(&mut r).map_err(io)?)
    } else {
        None
    };
    Ok((bytes::Bytes::from_owner(super::Padded { buf, pad }), sha))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pb::TensorProto;
    use prost::Message;

    /// A float tensor [2] with a field number 1000 of `junk` bytes after it.
    fn with_unknown(junk: usize) -> Vec<u8> {
        let mut bytes = TensorProto {
            name: "x".into(),
            dims: vec![2],
            data_type: 1,
            raw_data: vec![0, 0, 0x80, 0x3f, 0, 0, 0, 0x40].into(),
            ..Default::default()
        }
        .encode_to_vec();
        // Key of field 1000, wire type 2: (1000 << 3) | 2 = 8002 = 0xc2 0x3e.
        bytes.extend_from_slice(&[0xc2, 0x3e]);
        let mut n = junk as u64;
        while n >= 0x80 {
            bytes.push((n as u8) | 0x80);
            n >>= 7;
        }
        bytes.push(n as u8);
        bytes.resize(bytes.len() + junk, 7);
        bytes
    }

    fn read(bytes: &[u8], max: usize) -> Result<TensorProto, LoadError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.pb");
        std::fs::write(&path, bytes).unwrap();
        let (b, sha) = read_tensor_fields(&path, "t.pb", max, true)?;
        assert_eq!(sha.unwrap(), super::super::sha256_hex(bytes));
        Ok(TensorProto::decode(b).unwrap())
    }

    #[test]
    fn unknown_fields_are_left_out_whatever_their_size() {
        let small = with_unknown(3);
        let big = with_unknown(5 << 20);
        for bytes in [&small, &big] {
            let t = read(bytes, 16).unwrap();
            assert_eq!((t.name.as_str(), t.dims.as_slice()), ("x", &[2i64][..]));
            assert_eq!(&t.raw_data[..], &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]);
        }
    }

    #[test]
    fn a_data_field_larger_than_a_tensor_under_the_limit_is_refused() {
        // 3 MiB of raw_data: a key, a 4-byte length and the bytes.
        let t = TensorProto {
            dims: vec![4],
            data_type: 1,
            raw_data: vec![0u8; 3 << 20].into(),
            ..Default::default()
        };
        let e = read(&t.encode_to_vec(), 1 << 20).unwrap_err().to_string();
        assert_eq!(
            e,
            "t.pb: raw_data takes 3145733 bytes, more than the 2097152 bytes a tensor within the \
             limit can need (--max-tensor-bytes)"
        );
        // Under a limit it fits, it is read (the converter then judges its size).
        assert_eq!(
            read(&t.encode_to_vec(), 3 << 20).unwrap().raw_data.len(),
            3 << 20
        );
        // int8 in int32_data: up to 11 bytes per element (a key and a 10-byte varint).
        let t = TensorProto {
            dims: vec![1000],
            data_type: 3,
            int32_data: vec![-1; 1000],
            ..Default::default()
        };
        let bytes = t.encode_to_vec();
        assert!(bytes.len() > 10_000, "{}", bytes.len());
        assert_eq!(read(&bytes, 1000).unwrap().int32_data.len(), 1000);
    }

    #[test]
    fn the_budget_follows_the_field_of_the_dtype() {
        let m = 1u64 << 20;
        assert_eq!(budget("raw_data", Some(DType::Float), m), m + FIELD_SLACK);
        assert_eq!(
            budget("float_data", Some(DType::Float), m),
            m / 4 * 5 + FIELD_SLACK
        );
        assert_eq!(
            budget("float_data", Some(DType::Complex64), m),
            m / 4 * 5 + FIELD_SLACK
        );
        assert_eq!(
            budget("int32_data", Some(DType::Int8), m),
            m * 11 + FIELD_SLACK
        );
        assert_eq!(budget("int32_data", Some(DType::Float), m), FIELD_SLACK);
        assert_eq!(
            budget("int64_data", Some(DType::Int64), m),
            m / 8 * 11 + FIELD_SLACK
        );
        assert_eq!(budget("raw_data", None, m), FIELD_SLACK);
    }

    #[test]
    fn an_unreadable_rest_is_kept_for_the_decoder_to_name() {
        let mut bytes = with_unknown(3);
        bytes.extend_from_slice(&[0x0f, 0xff]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.pb");
        std::fs::write(&path, &bytes).unwrap();
        let (b, _) = read_tensor_fields(&path, "t.pb", 16, false).unwrap();
        assert!(b.ends_with(&[0x0f, 0xff]));
        assert!(TensorProto::decode(b).is_err());
    }
}
