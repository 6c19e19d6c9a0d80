//! Target `tensor_proto`: any bytes as a `.pb` tensor file.
//!
//! The bytes go through the same steps as a file's: protobuf decoding (bounded nesting), then
//! conversion under the storage rules (docs/semantics.md section 8), with external data resolved
//! against a directory that holds one small `data.bin`. Whatever the outcome, it must be a value:
//! an error with a message, or a tensor within the size limit that survives a round trip through
//! the writer of pending outputs bit for bit.

use crate::MAX_TENSOR_BYTES;
use onnx_idx_check::load::save::tensor_to_proto;
use onnx_idx_check::load::tensor::{tensor_from_proto, TensorContext};
use onnx_idx_check::pb::TensorProto;
use prost::Message;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Removes this process's scratch directory: for the replay tests, whose process would
/// otherwise leave it in the temporary directory. Checks after it fail.
pub fn remove_scratch() {
    let _ = std::fs::remove_dir_all(data_dir());
}

/// A directory with `data.bin` (64 bytes counting up from 0), for external data to find.
fn data_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("onnx-idx-check-fuzz-tensor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the fuzz data directory");
        std::fs::write(dir.join("data.bin"), (0u8..64).collect::<Vec<u8>>())
            .expect("write data.bin");
        dir
    })
}

/// Decodes and converts `bytes`; panics only if the loader misbehaves.
pub fn check(bytes: &[u8]) {
    let Ok(proto) = TensorProto::decode(bytes) else {
        return;
    };
    let ctx = TensorContext {
        base_dir: data_dir(),
        max_bytes: MAX_TENSOR_BYTES,
    };
    let tensor = match tensor_from_proto(&proto, &ctx) {
        Ok(t) => t,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "an error without a message");
            return;
        }
    };
    assert!(
        tensor.storage().byte_size() <= MAX_TENSOR_BYTES,
        "a {} tensor of shape {:?} beyond the limit of {MAX_TENSOR_BYTES} bytes",
        tensor.dtype(),
        tensor.shape()
    );
    let written = tensor_to_proto(&tensor, &proto.name);
    let reread = tensor_from_proto(&written, &ctx)
        .unwrap_or_else(|e| panic!("a tensor we wrote does not load back: {e}"));
    assert!(
        reread == tensor,
        "the round trip changed the tensor: {tensor:?} came back as {reread:?}"
    );
}
