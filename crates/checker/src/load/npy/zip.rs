//! Just enough of the zip format for `.npz`: the central directory (with ZIP64), stored and
//! deflated members, CRC-32 checked. Written here rather than taken from the `zip` crate, whose
//! current versions need a newer Rust than this crate's 1.85 and bring writers, encryption and
//! other codecs along; inflating is `miniz_oxide`'s.

use super::{Member, NpyError};

const EOCD: u32 = 0x0605_4b50;
const EOCD64: u32 = 0x0606_4b50;
const EOCD64_LOCATOR: u32 = 0x0706_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const LOCAL: u32 = 0x0403_4b50;

fn bad(what: impl Into<String>) -> NpyError {
    NpyError::Zip(what.into())
}

/// A bounds-checked little-endian reader over part of the archive.
struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn at(b: &'a [u8], pos: u64, what: &str) -> Result<Self, NpyError> {
        let pos = usize::try_from(pos)
            .ok()
            .filter(|&p| p <= b.len())
            .ok_or_else(|| bad(format!("{what} at offset {pos} lies past the end")))?;
        Ok(Cursor { b, pos })
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], NpyError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| bad("a record runs past the end of the archive"))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u16(&mut self) -> Result<u16, NpyError> {
        let s = self.take(2)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }
    fn u32(&mut self) -> Result<u32, NpyError> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self) -> Result<u64, NpyError> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_le_bytes(a))
    }
}

/// The members listed in the central directory.
pub(super) fn central_directory(b: &[u8]) -> Result<Vec<Member>, NpyError> {
    // The end record is 22 bytes plus a comment of at most 65535.
    if b.len() < 22 {
        return Err(bad("too short for an end of central directory record"));
    }
    let lowest = b.len().saturating_sub(22 + 0xFFFF);
    let eocd = (lowest..=b.len() - 22)
        .rev()
        .find(|&p| b[p..p + 4] == EOCD.to_le_bytes())
        .ok_or_else(|| bad("no end of central directory record"))?;
    let mut c = Cursor::at(b, eocd as u64 + 4, "the end record")?;
    let (disk, cd_disk) = (c.u16()?, c.u16()?);
    let (_, mut entries) = (c.u16()?, u64::from(c.u16()?));
    let mut cd_size = u64::from(c.u32()?);
    let mut cd_offset = u64::from(c.u32()?);
    if disk != 0 && disk != 0xFFFF || cd_disk != 0 && cd_disk != 0xFFFF {
        return Err(bad("multi-disk archives are not read"));
    }
    let mut records = eocd;
    if entries == 0xFFFF || cd_size == 0xFFFF_FFFF || cd_offset == 0xFFFF_FFFF {
        // ZIP64: the locator sits right before the end record.
        let loc = eocd
            .checked_sub(20)
            .ok_or_else(|| bad("ZIP64 values without a ZIP64 end record locator"))?;
        let mut l = Cursor::at(b, loc as u64, "the ZIP64 locator")?;
        if l.u32()? != EOCD64_LOCATOR {
            return Err(bad("ZIP64 values without a ZIP64 end record locator"));
        }
        l.u32()?;
        let at = l.u64()?;
        records = usize::try_from(at)
            .ok()
            .filter(|&a| a <= loc)
            .ok_or_else(|| bad("the ZIP64 end record lies after its locator"))?;
        let mut e = Cursor::at(b, at, "the ZIP64 end record")?;
        if e.u32()? != EOCD64 {
            return Err(bad(
                "the ZIP64 locator does not point at a ZIP64 end record",
            ));
        }
        e.take(8 + 2 + 2 + 4 + 4 + 8)?;
        entries = e.u64()?;
        cd_size = e.u64()?;
        cd_offset = e.u64()?;
    }
    // The directory ends where the end records begin.
    let end = cd_offset
        .checked_add(cd_size)
        .filter(|&e| e <= records as u64)
        .ok_or_else(|| bad("the central directory overlaps the end records or lies past them"))?;
    // Each entry takes at least 46 bytes: a count beyond that is a lie, not an allocation.
    if entries > cd_size / 46 {
        return Err(bad(format!(
            "{entries} entries do not fit in a central directory of {cd_size} bytes"
        )));
    }
    let mut c = Cursor::at(&b[..end as usize], cd_offset, "the central directory")?;
    let mut members: Vec<Member> = Vec::with_capacity(entries as usize);
    for _ in 0..entries {
        if c.u32()? != CENTRAL {
            return Err(bad("a central directory entry has the wrong signature"));
        }
        c.take(4)?; // versions
        let flags = c.u16()?;
        let method = c.u16()?;
        c.take(4)?; // time, date
        let crc = c.u32()?;
        let mut compressed = u64::from(c.u32()?);
        let mut size = u64::from(c.u32()?);
        let (name_len, extra_len, comment_len) = (c.u16()?, c.u16()?, c.u16()?);
        c.take(2 + 2 + 4)?; // disk, attributes
        let mut offset = u64::from(c.u32()?);
        let name = c.take(name_len.into())?;
        let name = String::from_utf8_lossy(name).into_owned();
        let extra = c.take(extra_len.into())?;
        c.take(comment_len.into())?;
        if flags & 1 != 0 {
            return Err(bad(format!("member '{name}' is encrypted")));
        }
        // The ZIP64 extra field holds, in this order, the values whose 32-bit field is full.
        let mut x = Cursor { b: extra, pos: 0 };
        while x.pos + 4 <= extra.len() {
            let (id, len) = (x.u16()?, x.u16()?);
            let body = x.take(len.into())?;
            if id == 1 {
                let mut z = Cursor { b: body, pos: 0 };
                for field in [&mut size, &mut compressed, &mut offset] {
                    if *field == 0xFFFF_FFFF {
                        *field = z.u64()?;
                    }
                }
            }
        }
        if members.iter().any(|m| m.name == name) {
            return Err(bad(format!("two members are named '{name}'")));
        }
        members.push(Member {
            name,
            method,
            crc,
            compressed,
            size,
            offset,
        });
    }
    Ok(members)
}

/// The member's bytes, inflated no further than its declared size, which may not exceed
/// `limit`; the CRC-32 must match.
pub(super) fn extract(b: &[u8], m: &Member, limit: u64) -> Result<Vec<u8>, NpyError> {
    let member = |what: String| NpyError::Member {
        member: m.name.clone(),
        what,
    };
    if m.size > limit {
        return Err(member(format!(
            "declares {} bytes uncompressed, more than the {limit}-byte limit (--max-tensor-bytes)",
            m.size
        )));
    }
    let mut c = Cursor::at(b, m.offset, "a local header")?;
    if c.u32()? != LOCAL {
        return Err(member(
            "has no local header where the directory says".into(),
        ));
    }
    c.take(22)?;
    let (name_len, extra_len) = (c.u16()?, c.u16()?);
    if c.take(name_len.into())? != m.name.as_bytes() {
        return Err(member("has another name in its local header".into()));
    }
    c.take(extra_len.into())?;
    let data = usize::try_from(m.compressed)
        .ok()
        .and_then(|n| c.take(n).ok())
        .ok_or_else(|| member("runs past the end of the archive".into()))?;
    // `size <= limit`, and the limit came from a usize.
    let size = m.size as usize;
    let out = match m.method {
        0 => {
            if data.len() != size {
                return Err(member(format!(
                    "is stored with {} bytes but declares {size}",
                    data.len()
                )));
            }
            data.to_vec()
        }
        8 => {
            // The output grows with what is actually inflated, never past the declared size:
            // a bomb stops there.
            let out = miniz_oxide::inflate::decompress_to_vec_with_limit(data, size).map_err(
                |e| match e.status {
                    miniz_oxide::inflate::TINFLStatus::HasMoreOutput => member(format!(
                        "inflates to more than the {size} bytes it declares"
                    )),
                    _ => member("is not valid deflate data".to_string()),
                },
            )?;
            if out.len() != size {
                return Err(member(format!(
                    "inflates to {} bytes but declares {size}",
                    out.len()
                )));
            }
            out
        }
        other => {
            return Err(member(format!(
                "uses compression method {other}; only stored (0) and deflate (8) are read"
            )))
        }
    };
    let crc = crc32(&out);
    if crc != m.crc {
        return Err(member(format!(
            "has CRC-32 {crc:08x}, the directory says {:08x}",
            m.crc
        )));
    }
    Ok(out)
}

/// The CRC-32 (IEEE, as zip uses) of every byte value, computed at compile time.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (crc & 1).wrapping_neg());
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// CRC-32 (IEEE), a byte at a time: a few lines instead of a crate.
pub(super) fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc = (crc >> 8) ^ CRC_TABLE[((crc ^ u32::from(byte)) & 0xFF) as usize];
    }
    !crc
}
