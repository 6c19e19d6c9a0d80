//! Loading: `model.onnx` and the `input_K.pb` / `output_K.pb` tensor files of a case, and the
//! `.npy` / `.npz` outputs of a runtime ([`npy`]).
//!
//! Files are opened without following symbolic links and must be regular files; decoding errors
//! name the file (relative to the case directory) and the tensor.

pub mod attrs;
pub mod external;
pub mod ir;
pub mod npy;
pub mod save;
mod scan;
// Tensors that share a file's buffer (`Tensor::from_shared`).
#[allow(unsafe_code)]
pub mod tensor;

use crate::pb::{ModelProto, TensorProto};
use crate::tensor::Tensor;
use prost::Message;
use std::io::Read;
use std::path::Path;
use tensor::{tensor_from_proto, TensorContext, TensorError};
use thiserror::Error;

/// Why a file of a case could not be loaded. `file` is the path shown to people (relative to the
/// case directory).
#[derive(Debug, Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is a symlink, FIFO, device or directory.
    #[error("{file}: not a regular file (symbolic links, FIFOs and devices are refused)")]
    NotRegular {
        /// The file.
        file: String,
    },
    /// The file is not a valid protobuf message of the expected kind.
    #[error("{file}: not a valid ONNX {what}: {detail}")]
    Decode {
        /// The file.
        file: String,
        /// "ModelProto" or "TensorProto".
        what: &'static str,
        /// The decoder's error, with a deep field path shortened.
        detail: String,
    },
    /// The file has no bytes at all.
    #[error("{file}: the file is empty")]
    Empty {
        /// The file.
        file: String,
    },
    /// The file is larger than any tensor it could hold under the limit.
    #[error("{file}: {size} bytes is larger than the {limit}-byte limit for a file (--max-tensor-bytes)")]
    TooBig {
        /// The file.
        file: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A field of a `.pb` tensor file is larger than any tensor under the limit needs.
    #[error("{file}: {field} takes {size} bytes, more than the {limit} bytes a tensor within the limit can need (--max-tensor-bytes)")]
    FieldTooBig {
        /// The file.
        file: String,
        /// The field (`raw_data`, `int32_data`, ...), or the part of the file.
        field: String,
        /// Its size in the file, key and length included.
        size: u64,
        /// The most it may take.
        limit: u64,
    },
    /// The case's time (`--timeout`) ran out while the file was read.
    #[error("{file}: {source}")]
    TimedOut {
        /// The file.
        file: String,
        /// The limit that ran out.
        source: crate::deadline::TimedOut,
    },
    /// The tensor in the file is malformed (or unsupported).
    #[error("{file}: tensor '{name}': {source}")]
    Tensor {
        /// The file.
        file: String,
        /// The tensor's name (may be empty).
        name: String,
        /// What is wrong.
        source: Box<TensorError>,
    },
    /// A `.npy` file, or an array of a `.npz` archive, is malformed or of a type not read.
    #[error("{file}: {}{source}", .array.as_ref().map_or(String::new(), |a| format!("array '{a}': ")))]
    Npy {
        /// The file (the `.npy`, or the `.npz` archive).
        file: String,
        /// The archive member's array name (without `.npy`); `None` for a `.npy` file.
        array: Option<String>,
        /// What is wrong.
        source: Box<npy::NpyError>,
    },
    /// An OpenVINO IR (`model.xml`, `model.bin`) is malformed, invalid or unsupported.
    #[error("{file}: {source}")]
    Ir {
        /// The file (`model.xml` or `model.bin`).
        file: String,
        /// What is wrong.
        source: Box<ir::IrError>,
    },
}

impl LoadError {
    /// The case's time ran out while `file` was read.
    pub(crate) fn timed_out(file: &str, source: crate::deadline::TimedOut) -> LoadError {
        LoadError::TimedOut {
            file: file.to_string(),
            source,
        }
    }

    /// Whether the file is valid but uses something the tool does not implement.
    pub fn is_unsupported(&self) -> bool {
        match self {
            LoadError::Tensor { source, .. } => source.is_unsupported(),
            LoadError::Ir { source, .. } => matches!(**source, ir::IrError::Unsupported(_)),
            _ => false,
        }
    }
}

/// The largest file read for a limit of `max_tensor_bytes`: generous enough for typed fields
/// (varints take up to 10 bytes per element) on top of the tensor's bytes.
pub fn file_limit(max_tensor_bytes: usize) -> u64 {
    (max_tensor_bytes as u64)
        .saturating_mul(10)
        .saturating_add(1 << 20)
}

/// Reads a regular file (never through a symbolic link) of at most `limit` bytes.
pub fn read_file(path: &Path, file: &str, limit: u64) -> Result<Vec<u8>, LoadError> {
    let (f, len) = open_regular(path, file, limit)?;
    let mut buf = Vec::with_capacity(len);
    // `take` bounds the read even if the file grows after the size check.
    f.take(limit)
        .read_to_end(&mut buf)
        .map_err(|source| LoadError::Io {
            file: file.to_string(),
            source,
        })?;
    Ok(buf)
}

/// A file's bytes after `pad` bytes of alignment.
struct Padded {
    buf: Vec<u8>,
    pad: usize,
}

impl AsRef<[u8]> for Padded {
    fn as_ref(&self) -> &[u8] {
        &self.buf[self.pad..]
    }
}

/// Opens a regular file (never through a symbolic link) of at most `limit` bytes; returns it
/// with its length.
fn open_regular(path: &Path, file: &str, limit: u64) -> Result<(std::fs::File, usize), LoadError> {
    let io = |source| LoadError::Io {
        file: file.to_string(),
        source,
    };
    let meta = std::fs::symlink_metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(LoadError::NotRegular {
            file: file.to_string(),
        });
    }
    let f = open_no_follow(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(LoadError::NotRegular {
            file: file.to_string(),
        });
    }
    if meta.len() > limit {
        return Err(LoadError::TooBig {
            file: file.to_string(),
            size: meta.len(),
            limit,
        });
    }
    Ok((f, usize::try_from(meta.len()).unwrap_or(0)))
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// Reads and decodes `model.onnx`.
pub fn load_model(path: &Path, file: &str, limit: u64) -> Result<ModelProto, LoadError> {
    load_model_with(path, file, limit, false).map(|(m, _)| m)
}

/// The decoder's message without its boilerplate prefix, and with a field path of many levels
/// (a deeply nested hostile message) cut to its two ends.
fn decode_detail(e: &prost::DecodeError) -> String {
    let text = e.to_string();
    let text = text
        .strip_prefix("failed to decode Protobuf message: ")
        .unwrap_or(&text);
    let parts: Vec<&str> = text.split(": ").collect();
    if parts.len() <= 6 {
        return text.to_string();
    }
    let n = parts.len();
    format!(
        "{}: ... ({} levels) ...: {}",
        parts[..2].join(": "),
        n - 4,
        parts[n - 2..].join(": ")
    )
}

/// Converts a tensor found in `file` (a model initializer, say), naming both on error.
pub fn convert_tensor(
    proto: &TensorProto,
    file: &str,
    ctx: &TensorContext<'_>,
) -> Result<Tensor, LoadError> {
    tensor_from_proto(proto, ctx).map_err(|source| LoadError::Tensor {
        file: file.to_string(),
        name: proto.name.clone(),
        source: Box::new(source),
    })
}

/// How a tensor's values were stored in its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StorageForm {
    /// `raw_data`, little-endian bytes.
    Raw,
    /// A typed field (`float_data`, `int32_data`, ...).
    Typed,
    /// External data.
    External,
    /// No data at all (an empty tensor).
    Empty,
}

impl StorageForm {
    /// The form of a proto's data.
    pub fn of(p: &TensorProto) -> StorageForm {
        if p.data_location == crate::pb::tensor_proto::DataLocation::External as i32 {
            StorageForm::External
        } else if !p.raw_data.is_empty() {
            StorageForm::Raw
        } else if p.float_data.is_empty()
            && p.int32_data.is_empty()
            && p.string_data.is_empty()
            && p.int64_data.is_empty()
            && p.double_data.is_empty()
            && p.uint64_data.is_empty()
        {
            StorageForm::Empty
        } else {
            StorageForm::Typed
        }
    }

    /// Where a tensor of `dtype` stored this way keeps its values, as the proto names it:
    /// `raw_data`, the typed field the dtype uses (`float_data`, `int64_data`, ...), `external
    /// data`, or `no data` for an empty tensor.
    pub fn field(self, dtype: crate::tensor::DType) -> &'static str {
        match self {
            StorageForm::Raw => "raw_data",
            StorageForm::Typed => tensor::typed_field_for(dtype),
            StorageForm::External => "external data",
            StorageForm::Empty => "no data",
        }
    }
}

/// A tensor file, loaded.
#[derive(Debug)]
pub struct LoadedTensor {
    /// The name stored in the file.
    pub name: String,
    /// The tensor.
    pub tensor: Tensor,
    /// How its values were stored.
    pub form: StorageForm,
    /// sha256 of the file, in hex, when asked for.
    pub sha256: Option<String>,
}

/// Hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// Hex sha256 of the file at `path`, read in blocks (never all at once: a model may be large).
pub fn sha256_file_hex(path: &Path) -> std::io::Result<String> {
    sha256_reader(&mut std::fs::File::open(path)?)
}

/// Hex sha256 of what `file` yields, read in blocks.
pub(crate) fn sha256_reader(file: &mut impl Read) -> std::io::Result<String> {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

/// Lower-case hex of a digest.
fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The model of a case directory, whichever format it is in: `model.onnx`, or else an OpenVINO
/// IR (`model.xml` + `model.bin`) read into the same [`ModelProto`] ([`ir`]). Also returns the
/// `(file, sha256)` of the files read when `digest` is set.
pub fn load_case_model(
    dir: &Path,
    limit: u64,
    max_tensor_bytes: usize,
    digest: bool,
) -> Result<(ModelProto, Vec<(String, String)>), LoadError> {
    if ir::format_of(dir) == Some(ir::ModelFormat::Ir) {
        let m = ir::load_ir(dir, limit, max_tensor_bytes, digest)?;
        return Ok((m.model, m.files));
    }
    let (model, sha) = load_model_with(&dir.join("model.onnx"), "model.onnx", limit, digest)?;
    Ok((
        model,
        sha.map(|s| ("model.onnx".to_string(), s))
            .into_iter()
            .collect(),
    ))
}

/// The file named in messages about a case's model: `model.onnx` or `model.xml`.
pub fn model_file_of(dir: &Path) -> &'static str {
    match ir::format_of(dir) {
        Some(ir::ModelFormat::Ir) => ir::XML_FILE,
        _ => "model.onnx",
    }
}

/// [`load_model`], also returning the file's sha256 when `digest` is set.
pub fn load_model_with(
    path: &Path,
    file: &str,
    limit: u64,
    digest: bool,
) -> Result<(ModelProto, Option<String>), LoadError> {
    let bytes = read_file(path, file, limit)?;
    if bytes.is_empty() {
        return Err(LoadError::Empty {
            file: file.to_string(),
        });
    }
    let sha = digest.then(|| sha256_hex(&bytes));
    let model = ModelProto::decode(bytes.as_slice()).map_err(|e| LoadError::Decode {
        file: file.to_string(),
        what: "ModelProto",
        detail: decode_detail(&e),
    })?;
    Ok((model, sha))
}

/// Reads a `.pb` tensor file, with its storage form and (when `digest` is set) its sha256.
/// External data is resolved against the file's own directory.
pub fn load_tensor_file_with(
    path: &Path,
    file: &str,
    max_bytes: usize,
    digest: bool,
) -> Result<LoadedTensor, LoadError> {
    let (bytes, sha256) = scan::read_tensor_fields(path, file, max_bytes, digest)?;
    crate::deadline::check().map_err(|e| LoadError::timed_out(file, e))?;
    // Decoded from `Bytes`, `raw_data` is a view of the same buffer, not a copy.
    let proto = TensorProto::decode(bytes).map_err(|e| LoadError::Decode {
        file: file.to_string(),
        what: "TensorProto",
        detail: decode_detail(&e),
    })?;
    let base_dir = path.parent().unwrap_or(Path::new("."));
    let ctx = TensorContext {
        base_dir,
        max_bytes,
    };
    let tensor = convert_tensor(&proto, file, &ctx)?;
    Ok(LoadedTensor {
        form: StorageForm::of(&proto),
        name: proto.name,
        tensor,
        sha256,
    })
}

/// Reads a `.pb` tensor file; returns the tensor's stored name and the tensor. External data is
/// resolved against the file's own directory.
pub fn load_tensor_file(
    path: &Path,
    file: &str,
    max_bytes: usize,
) -> Result<(String, Tensor), LoadError> {
    load_tensor_file_with(path, file, max_bytes, false).map(|l| (l.name, l.tensor))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::DType;

    fn proto(name: &str, dims: Vec<i64>, data_type: i32, raw: Vec<u8>) -> Vec<u8> {
        TensorProto {
            name: name.to_string(),
            dims,
            data_type,
            raw_data: raw.into(),
            ..Default::default()
        }
        .encode_to_vec()
    }

    #[test]
    fn a_raw_tensor_is_read_in_place_whatever_the_offset_of_its_bytes_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let values: Vec<i64> = vec![-3, 7, i64::MAX, 0, 12];
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        // Names of every length from 0 to 16 move the payload through every alignment.
        for len in 0..=16 {
            let path = dir.path().join(format!("t{len}.pb"));
            std::fs::write(&path, proto(&"n".repeat(len), vec![5], 7, raw.clone())).unwrap();
            let (name, t) = load_tensor_file(&path, "t.pb", 1 << 20).unwrap();
            assert_eq!(name.len(), len);
            assert!(t.is_shared(), "name length {len}");
            assert_eq!(t.dtype(), DType::Int64);
            assert_eq!(t.to_vec::<i64>().unwrap(), values);
        }
    }

    #[test]
    fn bool_bytes_other_than_0_and_1_are_copied_as_true() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.pb");
        std::fs::write(&path, proto("b", vec![3], 9, vec![0, 2, 1])).unwrap();
        let (_, t) = load_tensor_file(&path, "b.pb", 1 << 20).unwrap();
        assert!(!t.is_shared());
        assert_eq!(t.elems::<u8>().unwrap(), [0, 1, 1]);
        std::fs::write(&path, proto("b", vec![3], 9, vec![0, 1, 1])).unwrap();
        let (_, t) = load_tensor_file(&path, "b.pb", 1 << 20).unwrap();
        assert!(t.is_shared());
        assert_eq!(t.elems::<u8>().unwrap(), [0, 1, 1]);
    }
}
