//! The identity hasher: the domain-framed hash of every identity part, the
//! memo of type-instance, effect-set and constant IDs, and the optional
//! golden-vector trace ([`Fact`]).

use crate::error::{Error, Result, code};
use crate::hash::FastMap;
use crate::hash::{Id, domain, h, opt, preimage, seq, to_hex, u32p};
use crate::model::*;

/// One recorded identity: the golden-vector view of a hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// Which fact, e.g. `field Point.x`.
    pub fact: String,
    /// ASCII hash domain.
    pub domain: &'static str,
    /// Top-level parts before F-framing.
    pub parts: Vec<Vec<u8>>,
    /// Digest.
    pub digest: Id,
}

impl Fact {
    /// The exact hashed preimage (domain, nul, framed parts).
    pub fn preimage(&self) -> Vec<u8> {
        preimage(self.domain, &self.parts)
    }
    /// One JSON object (no trailing newline): fact, domain, parts (hex),
    /// optionally the framed preimage, and digest.
    pub fn to_json(&self, with_preimage: bool) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|p| format!("\"{}\"", to_hex(p)))
            .collect();
        let pre = if with_preimage {
            format!(", \"preimage\": \"{}\"", to_hex(&self.preimage()))
        } else {
            String::new()
        };
        format!(
            "{{\"fact\": {}, \"domain\": \"{}\", \"parts\": [{}]{}, \"digest\": \"{}\"}}",
            json_string(&self.fact),
            self.domain,
            parts.join(", "),
            pre,
            to_hex(&self.digest)
        )
    }
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            character if (character as u32) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", character as u32))
            }
            character => out.push(character),
        }
    }
    out.push('"');
    out
}

/// Hashes identities, memoizing type-instance IDs and optionally recording
/// every hash as a [`Fact`].
pub struct Hasher {
    pub(crate) types: FastMap<Type, Id>,
    pub(crate) constants: FastMap<Constant, Id>,
    pub(crate) effect_sets: FastMap<Vec<Effect>, Id>,
    /// SHA-256 state after `domain || 0 || F(type-instance ID)` of a constant,
    /// per scalar tag: every constant of one type shares that 66-byte prefix,
    /// so continuing a copy of the state is exactly the same hash and skips
    /// the first compression.
    pub(crate) constant_prefix: Vec<Option<sha2::Sha256>>,
    /// Scalar type-instance IDs by scalar tag (the common case, no map lookup).
    pub(crate) scalar_ids: Vec<Option<Id>>,
    /// Recorded facts, when tracing.
    pub trace: Option<Vec<Fact>>,
    /// Constant IDs another thread may hand over (see [`Hasher::receive_constants`]).
    /// (In a mutex only so that a hasher stays `Sync`; one thread uses it.)
    pub(crate) incoming: Option<std::sync::Mutex<std::sync::mpsc::Receiver<FastMap<Constant, Id>>>>,
}

impl Hasher {
    /// A hasher; `trace` records every computed identity.
    pub fn new(trace: bool) -> Self {
        Hasher {
            types: FastMap::default(),
            constants: FastMap::default(),
            effect_sets: FastMap::default(),
            constant_prefix: Vec::new(),
            scalar_ids: Vec::new(),
            trace: trace.then(Vec::new),
            incoming: None,
        }
    }

    /// Accepts memoized constant IDs computed by another thread: on a memo
    /// miss, a map already sent is merged before hashing the constant
    /// (never waiting for one). The IDs are the same either way.
    pub fn receive_constants(
        &mut self,
        receiver: std::sync::mpsc::Receiver<FastMap<Constant, Id>>,
    ) {
        self.incoming = Some(std::sync::Mutex::new(receiver));
    }

    /// Hashes every constant operand of every body of `module` into the memo,
    /// skipping any without a canonical payload (the ordered body pass meets
    /// that error at its place).
    pub fn hash_body_constants(&mut self, module: &Module) {
        for function in module.declarations.iter().flat_map(|d| &d.functions) {
            let ops = function.body.blocks.iter().flat_map(|b| &b.ops);
            for op in ops.chain(function.body.edges.iter().flat_map(|e| &e.drops)) {
                for operand in &op.operands {
                    if let Operand::Const(constant) = operand {
                        let _ = self.constant(constant);
                    }
                }
            }
        }
    }

    /// The memoized constant IDs.
    pub fn constant_ids(&self) -> &FastMap<Constant, Id> {
        &self.constants
    }

    /// Takes the memoized constant IDs.
    pub fn take_constant_ids(&mut self) -> FastMap<Constant, Id> {
        std::mem::take(&mut self.constants)
    }

    pub(crate) fn hash(
        &mut self,
        what: impl FnOnce() -> String,
        dom: &'static str,
        parts: Vec<Vec<u8>>,
    ) -> Id {
        let digest = h(dom, &parts);
        if let Some(trace) = &mut self.trace {
            trace.push(Fact {
                fact: what(),
                domain: dom,
                parts,
                digest,
            });
        }
        digest
    }

    /// Reserves room for `count` more memoized constants (a decoder knows the
    /// constant-table size, bounded by its input; growing the map step by
    /// step rehashes and touches fresh pages several times).
    pub fn reserve_constants(&mut self, count: usize) {
        self.constants.reserve(count);
    }

    /// Module-namespace ID.
    pub fn namespace(&mut self, package: &str, module: &str) -> Id {
        self.hash(
            || format!("module namespace {package}/{module}"),
            domain::MODULE_NAMESPACE,
            vec![package.as_bytes().to_vec(), module.as_bytes().to_vec()],
        )
    }

    /// Declaration-nominal ID.
    pub fn nominal(&mut self, namespace: &Id, kind: DeclKind, name: &str) -> Id {
        self.hash(
            || format!("declaration {name}"),
            domain::DECLARATION_NOMINAL,
            vec![
                namespace.to_vec(),
                u32p(kind.tag()),
                name.as_bytes().to_vec(),
            ],
        )
    }

    /// Type-instance ID (memoized; a known scalar without a call).
    #[inline]
    pub fn type_id(&mut self, ty: &Type) -> Id {
        if let Type::Scalar(scalar_kind) = ty
            && let Some(Some(id)) = self.scalar_ids.get(scalar_kind.tag() as usize)
        {
            return *id;
        }
        self.type_id_slow(ty)
    }

    fn type_id_slow(&mut self, ty: &Type) -> Id {
        if let Some(id) = self.types.get(ty) {
            return *id;
        }
        let children: Vec<Vec<u8>> = ty
            .children()
            .into_iter()
            .map(|c| self.type_id(c).to_vec())
            .collect();
        let catalog = match ty {
            Type::Scalar(_) | Type::Nominal(_) => None,
            _ => Some(crate::hash::CATALOG_ID.as_bytes()),
        };
        let scalar = match ty {
            Type::Scalar(scalar_kind) => Some(scalar_kind.tag().to_le_bytes()),
            _ => None,
        };
        let nominal = match ty {
            Type::Nominal(id) => Some(*id),
            _ => None,
        };
        let parts = vec![
            opt(catalog),
            u32p(ty.kind()),
            opt(scalar.as_ref().map(|s| &s[..])),
            opt(nominal.as_ref().map(|n| &n[..])),
            seq(children),
        ];
        let id = self.hash(|| format!("type {ty}"), domain::TYPE_INSTANCE, parts);
        if let Type::Scalar(scalar_kind) = ty {
            let slot = scalar_kind.tag() as usize;
            if self.scalar_ids.len() <= slot {
                self.scalar_ids.resize(slot + 1, None);
            }
            self.scalar_ids[slot] = Some(id);
        }
        self.types.insert(ty.clone(), id);
        id
    }

    /// Effect-set digest (tags must already be unique and ascending).
    pub fn effects(&mut self, effects: &[Effect]) -> Id {
        if let Some(id) = self.effect_sets.get(effects) {
            return *id;
        }
        let id = self.effects_uncached(effects);
        self.effect_sets.insert(effects.to_vec(), id);
        id
    }

    fn effects_uncached(&mut self, effects: &[Effect]) -> Id {
        let tags: Vec<Vec<u8>> = effects.iter().map(|e| u32p(e.tag())).collect();
        self.hash(
            || {
                format!(
                    "effect set [{}]",
                    effects
                        .iter()
                        .map(|e| e.text())
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            },
            domain::EFFECT_SET,
            vec![seq(tags)],
        )
    }

    /// Constant ID.
    #[inline]
    pub fn constant(&mut self, constant: &Constant) -> Result<Id> {
        // Tracing records every use (the golden `ids` listing); otherwise memoized.
        if self.trace.is_none()
            && let Some(id) = self.constants.get(constant)
        {
            return Ok(*id);
        }
        self.constant_new(constant)
    }

    fn constant_new(&mut self, constant: &Constant) -> Result<Id> {
        let received = self
            .incoming
            .as_ref()
            .and_then(|rx| rx.lock().ok()?.try_recv().ok());
        if let Some(mut map) = received {
            self.incoming = None;
            for (key, value) in self.constants.drain() {
                map.entry(key).or_insert(value);
            }
            self.constants = map;
            if let Some(id) = self.constants.get(constant) {
                return Ok(*id);
            }
        }
        let (payload, width) = constant.payload_bytes().ok_or_else(|| {
            Error::new(
                code::MODEL,
                format!(
                    "constant c:{}:{} has no canonical payload",
                    constant.kind.text(),
                    constant.bits
                ),
            )
        })?;
        let ty = self.type_id(&Type::Scalar(constant.kind));
        let id = if self.trace.is_some() {
            self.hash(
                || format!("constant {}:{}", constant.bits, constant.kind.text()),
                domain::CONSTANT,
                vec![ty.to_vec(), payload[..width].to_vec()],
            )
        } else {
            use sha2::Digest as _;
            let slot = constant.kind.tag() as usize;
            if self.constant_prefix.len() <= slot {
                self.constant_prefix.resize(slot + 1, None);
            }
            let prefix = self.constant_prefix[slot].get_or_insert_with(|| {
                let mut sha = sha2::Sha256::new();
                sha.update(domain::CONSTANT.as_bytes());
                sha.update([0u8]);
                sha.update(32u64.to_le_bytes());
                sha.update(ty);
                sha
            });
            let mut sha = prefix.clone();
            sha.update((width as u64).to_le_bytes());
            sha.update(&payload[..width]);
            sha.finalize().into()
        };
        self.constants.insert(constant.clone(), id);
        Ok(id)
    }

    pub(crate) fn param_sig(&mut self, ordinal: u32, name: &str, ty: &Type, flags: u32) -> Vec<u8> {
        let type_id = self.type_id(ty);
        seq([
            u32p(ordinal),
            name.as_bytes().to_vec(),
            type_id.to_vec(),
            u32p(flags),
        ])
    }
}
