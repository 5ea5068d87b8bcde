//! The `domain-nul-u64le-framed-parts-v1` construction ("Logical semantic
//! identities"): `F`, `S`, optionals and `H`.

use sha2::{Digest, Sha256};

/// A 32-byte identity or digest: raw SHA-256 output in digest order.
pub type Id = [u8; 32];

/// `F(P) = u64le(len(P)) || P`, appended to `out`.
pub fn frame_into(out: &mut Vec<u8>, part: &[u8]) {
    out.extend_from_slice(&(part.len() as u64).to_le_bytes());
    out.extend_from_slice(part);
}

/// `S(E0, ..., En) = u32le(n + 1) || F(E0) || ... || F(En)`; `S()` is four zero bytes.
pub fn seq<I, E>(elements: I) -> Vec<u8>
where
    I: IntoIterator<Item = E>,
    E: AsRef<[u8]>,
{
    let mut out = vec![0u8; 4];
    let mut n: u32 = 0;
    for e in elements {
        frame_into(&mut out, e.as_ref());
        n = n.wrapping_add(1);
    }
    out[..4].copy_from_slice(&n.to_le_bytes());
    out
}

/// `S` over borrowed elements, allocated once with the exact size.
pub fn seq_of(elements: &[&[u8]]) -> Vec<u8> {
    let len = 4 + elements.iter().map(|e| e.len() + 8).sum::<usize>();
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(&(elements.len() as u32).to_le_bytes());
    for e in elements {
        frame_into(&mut out, e);
    }
    out
}

/// A closed tag, flag word or semantic ordinal: `u32le`.
pub fn u32p(v: u32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

/// An optional: byte `00` when absent, byte `01` then the value when present.
pub fn opt(v: Option<&[u8]>) -> Vec<u8> {
    match v {
        None => vec![0],
        Some(p) => {
            let mut out = Vec::with_capacity(p.len() + 1);
            out.push(1);
            out.extend_from_slice(p);
            out
        }
    }
}

/// The exact preimage hashed by [`h`]: `D || 0x00 || F(P0) || ... || F(Pn)`.
pub fn preimage(domain: &str, parts: &[Vec<u8>]) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(domain.len() + 1 + parts.iter().map(|p| p.len() + 8).sum::<usize>());
    out.extend_from_slice(domain.as_bytes());
    out.push(0);
    for p in parts {
        frame_into(&mut out, p);
    }
    out
}

/// `H(D; P0, ..., Pn)`: SHA-256 over the domain, one zero byte and the framed parts.
pub fn h(domain: &str, parts: &[Vec<u8>]) -> Id {
    framed(domain, parts)
}

/// [`h`] over borrowed parts: no copy of a large part (an artifact payload,
/// an ancillary section body) is made to hash it.
pub fn h_slices(domain: &str, parts: &[&[u8]]) -> Id {
    framed(domain, parts)
}

/// The one framing of [`h`] and [`h_slices`]: each part preceded by its
/// length as a little-endian `u64`.
fn framed<P: AsRef<[u8]>>(domain: &str, parts: &[P]) -> Id {
    let mut hasher = Sha256::new();
    hasher.update(domain.as_bytes());
    hasher.update([0u8]);
    for p in parts {
        let p = p.as_ref();
        hasher.update((p.len() as u64).to_le_bytes());
        hasher.update(p);
    }
    hasher.finalize().into()
}

/// Plain SHA-256 (used by benchmarks as the baseline and by the artifact address).
pub fn sha256(bytes: &[u8]) -> Id {
    Sha256::digest(bytes).into()
}

/// A fast non-cryptographic hasher for in-memory lookup tables keyed by
/// already-validated data (the Fx multiply-rotate scheme). Iteration order of
/// these maps never reaches any output.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.hash = (self.hash.rotate_left(5) ^ w).wrapping_mul(FX_SEED);
    }
}

impl std::hash::Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.add(u64::from_le_bytes(a));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FastMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;

/// Lowercase hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Parses lowercase or uppercase hex of exactly 32 bytes.
pub fn id_from_hex(s: &str) -> Option<Id> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, chunk) in s.as_bytes().chunks(2).enumerate() {
        let hi = (chunk[0] as char).to_digit(16)?;
        let lo = (chunk[1] as char).to_digit(16)?;
        out[i] = (hi * 16 + lo) as u8;
    }
    Some(out)
}

/// Hash domains of schema 1.9 (table in "Logical semantic identities").
pub mod domain {
    pub const MODULE_NAMESPACE: &str = "zerglang.zlm1.module-namespace.v1";
    pub const DECLARATION_NOMINAL: &str = "zerglang.zlm1.declaration-nominal.v1";
    pub const TYPE_INSTANCE: &str = "zerglang.zlm1.type-instance.v1";
    pub const VARIANT: &str = "zerglang.zlm1.variant.v1";
    pub const FIELD: &str = "zerglang.zlm1.field.v1";
    pub const EFFECT_SET: &str = "zerglang.zlm1.effect-set.v1";
    pub const FUNCTION: &str = "zerglang.zlm1.function.v1";
    pub const CATALOG_FUNCTION: &str = "zerglang.zlm1.catalog-function.v1";
    pub const PARAMETER: &str = "zerglang.zlm1.parameter.v1";
    pub const LOCAL: &str = "zerglang.zlm1.local.v1";
    pub const CONSTANT: &str = "zerglang.zlm1.constant.v1";
    pub const FUNCTION_CONTRACT: &str = "zerglang.zlm1.function-contract.v1";
    pub const FUNCTION_BODY: &str = "zerglang.zlm1.function-body.v1";
    pub const DECLARATION_INTERFACE: &str = "zerglang.zlm1.declaration-interface.v1";
    pub const DECLARATION_DEFINITION: &str = "zerglang.zlm1.declaration-definition.v1";
    pub const MODULE_INTERFACE: &str = "zerglang.zlm1.module-interface.v1";
    pub const MODULE_CONTENT: &str = "zerglang.zlm1.module-content.v1";
    pub const ARTIFACT: &str = "zerglang.zlm1.artifact.v1";
    /// Project decision (docs/zlm/catalog.md): the catalog content identity.
    pub const CATALOG_CONTENT: &str = "zerglang.zlm1.catalog-content.v1";
}

/// The stable catalog ID `zerglang.selfhost-intrinsics/1`: the optional
/// catalog part of every catalog type instance, and the catalog named by
/// every catalog function signature.
pub const CATALOG_ID: &str = "zerglang.selfhost-intrinsics/1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_matches_the_definition() {
        assert_eq!(seq(Vec::<Vec<u8>>::new()), vec![0, 0, 0, 0]);
        let s = seq([b"ab".to_vec(), vec![]]);
        assert_eq!(
            s,
            [
                2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, b'a', b'b', 0, 0, 0, 0, 0, 0, 0, 0
            ]
        );
        assert_eq!(opt(None), vec![0]);
        assert_eq!(opt(Some(&[])), vec![1]);
        let pre = preimage("d", &[vec![7]]);
        assert_eq!(pre, [b'd', 0, 1, 0, 0, 0, 0, 0, 0, 0, 7]);
        assert_eq!(h("d", &[vec![7]]), sha256(&pre));
    }

    #[test]
    fn hex_round_trips() {
        let id = sha256(b"x");
        assert_eq!(id_from_hex(&to_hex(&id)), Some(id));
        assert_eq!(id_from_hex("zz"), None);
    }
}
