//! The exact schema-1.9 byte layout: header offsets, record sizes and the
//! section order.

/// `NONE` in an unsigned 32-bit reference.
pub const NONE: u32 = 0xffff_ffff;
/// Header size.
pub const HEADER_BYTES: usize = 256;
/// Magic.
pub const MAGIC: &[u8; 4] = b"ZLM1";
/// Schema major.
pub const MAJOR: u16 = 1;
/// Schema minor (the only one with a byte layout).
pub const MINOR: u16 = 9;

/// Sections after the header, in their exact order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    Strings,
    Imports,
    Types,
    TypeChildren,
    Decls,
    Fields,
    Variants,
    Functions,
    Params,
    Locals,
    Blocks,
    EffectSets,
    EffectTags,
    Paths,
    Loans,
    Edges,
    DropRefs,
    Constants,
    ConstantBytes,
    Operands,
    Symbols,
    ContractOps,
    Ops,
}

impl Section {
    /// Every section in order.
    pub const ALL: [Section; 23] = [
        Section::Strings,
        Section::Imports,
        Section::Types,
        Section::TypeChildren,
        Section::Decls,
        Section::Fields,
        Section::Variants,
        Section::Functions,
        Section::Params,
        Section::Locals,
        Section::Blocks,
        Section::EffectSets,
        Section::EffectTags,
        Section::Paths,
        Section::Loans,
        Section::Edges,
        Section::DropRefs,
        Section::Constants,
        Section::ConstantBytes,
        Section::Operands,
        Section::Symbols,
        Section::ContractOps,
        Section::Ops,
    ];
    /// Record size in bytes (1 for the two byte pools).
    pub fn record_size(self) -> u64 {
        use Section::*;
        match self {
            Strings | ConstantBytes => 1,
            Imports | Types | Decls => 80,
            TypeChildren | EffectTags | DropRefs => 4,
            Fields => 72,
            Variants | Params | Locals | ContractOps => 64,
            Functions => 176,
            Blocks | Paths | Edges | Symbols | Ops => 32,
            EffectSets | Operands => 16,
            Loans => 40,
            Constants => 56,
        }
    }
    /// Header offset of this section's count (u32), or of the pool byte
    /// length (u64) for the two pools.
    pub fn count_offset(self) -> usize {
        use Section::*;
        match self {
            Strings => 176,
            ConstantBytes => 184,
            Imports => 96,
            Types => 100,
            TypeChildren => 104,
            Decls => 108,
            Fields => 112,
            Variants => 116,
            Functions => 120,
            Params => 124,
            Locals => 128,
            Blocks => 132,
            EffectSets => 136,
            EffectTags => 140,
            Paths => 144,
            Loans => 148,
            Edges => 152,
            DropRefs => 156,
            Constants => 160,
            Operands => 164,
            Ops => 168,
            ContractOps => 172,
            Symbols => 208,
        }
    }
    /// Human name.
    pub fn name(self) -> &'static str {
        use Section::*;
        match self {
            Strings => "string pool",
            Imports => "import",
            Types => "type-instance",
            TypeChildren => "type-child reference",
            Decls => "declaration",
            Fields => "field",
            Variants => "variant",
            Functions => "function",
            Params => "parameter",
            Locals => "local",
            Blocks => "block",
            EffectSets => "effect-set",
            EffectTags => "effect tag",
            Paths => "owned-path",
            Loans => "lexical-loan",
            Edges => "cleanup-edge",
            DropRefs => "drop-operation reference",
            Constants => "constant",
            ConstantBytes => "constant pool",
            Operands => "operand",
            Symbols => "semantic-symbol reference",
            ContractOps => "contract-operation",
            Ops => "typed-operation",
        }
    }
    /// Byte ranges inside one record that hold a carried 32-byte identity.
    pub fn id_fields(self) -> &'static [(u64, u64)] {
        use Section::*;
        match self {
            Imports => &[(0, 32), (48, 80)],
            Types | Decls | Fields | Variants | Params | Locals | Constants => &[(0, 32)],
            Functions => &[(0, 32), (144, 176)],
            _ => &[],
        }
    }
}

/// Header field offsets.
pub mod header {
    pub const MAGIC: usize = 0;
    pub const MAJOR: usize = 4;
    pub const MINOR: usize = 6;
    pub const HEADER_BYTES: usize = 8;
    pub const FLAGS: usize = 12;
    pub const PROFILE: usize = 16;
    pub const MODE: usize = 20;
    pub const CATALOG: usize = 24;
    pub const CONTENT: usize = 56;
    pub const MODULE_NAME: usize = 88;
    pub const MODULE_BYTES: usize = 192;
    pub const PACKAGE_NAME: usize = 200;
    pub const RESERVED: usize = 212;
}

/// Where a byte offset lies: section, record index and offset inside the record.
pub fn locate(starts: &[(Section, u64, u64)], offset: u64) -> String {
    if offset < HEADER_BYTES as u64 {
        return format!("header byte {offset}");
    }
    for &(s, start, len) in starts {
        if offset >= start && offset < start + len {
            let size = s.record_size();
            let rel = offset - start;
            return if size == 1 {
                format!("{} byte {rel}", s.name())
            } else {
                format!("{} record {} byte {}", s.name(), rel / size, rel % size)
            };
        }
    }
    format!("byte {offset} beyond the last section")
}

/// Byte offsets of the fields inside one record of each section (the record
/// tables of zlm1-core0-artifacts.md). A string slice or a table range is two
/// u32 words, offset/start then length/count; its constant names the first.
pub mod field {
    /// Import record (80 bytes).
    pub mod import {
        pub const NOMINAL: usize = 0;
        pub const MODULE_NAME: usize = 32;
        pub const DECL_NAME: usize = 40;
        pub const INTERFACE: usize = 48;
    }
    /// Type-instance record (80 bytes).
    pub mod type_instance {
        pub const KIND: usize = 32;
        pub const SCALAR: usize = 36;
        pub const NOMINAL: usize = 40;
        pub const CHILDREN: usize = 44;
        pub const FLAGS: usize = 52;
    }
    /// Declaration record (80 bytes).
    pub mod decl {
        pub const NOMINAL: usize = 0;
        pub const KIND: usize = 32;
        pub const VISIBILITY: usize = 36;
        pub const NAME: usize = 44;
        pub const FIELDS: usize = 52;
        pub const VARIANTS: usize = 60;
        pub const FUNCTIONS: usize = 68;
    }
    /// Field record (72 bytes): an ordinary or variant-payload field.
    pub mod field_record {
        pub const OWNER_KIND: usize = 32;
        pub const OWNER: usize = 36;
        pub const ORDINAL: usize = 40;
        pub const NAME: usize = 44;
        pub const VISIBILITY: usize = 52;
        pub const MUTABILITY: usize = 56;
        pub const TYPE: usize = 60;
    }
    /// Variant record (64 bytes).
    pub mod variant {
        pub const DECL: usize = 32;
        pub const TAG: usize = 36;
        pub const NAME: usize = 40;
        pub const FIELDS: usize = 48;
    }
    /// Function record (176 bytes).
    pub mod function {
        pub const DECL: usize = 32;
        pub const CALLABLE: usize = 36;
        pub const RECEIVER: usize = 40;
        pub const NAME: usize = 48;
        pub const PARAMS: usize = 56;
        pub const LOCALS: usize = 64;
        pub const BLOCKS: usize = 72;
        pub const RESULT: usize = 80;
        pub const EFFECTS: usize = 84;
        pub const PATHS: usize = 88;
        pub const LOANS: usize = 96;
        pub const EDGES: usize = 104;
        pub const OPS: usize = 112;
        pub const VISIBILITY: usize = 124;
        pub const REQUIRES: usize = 128;
        pub const ENSURES: usize = 136;
    }
    /// Parameter and local records (64 bytes each).
    pub mod binding {
        pub const FUNCTION: usize = 32;
        pub const ORDINAL: usize = 36;
        pub const NAME: usize = 40;
        pub const TYPE: usize = 48;
    }
    /// Block record (32 bytes).
    pub mod block {
        pub const FUNCTION: usize = 0;
        pub const ID: usize = 4;
        pub const OPS: usize = 8;
    }
    /// Effect-set record (16 bytes).
    pub mod effect_set {
        pub const TAGS: usize = 0;
    }
    /// Owned-path record (32 bytes).
    pub mod path {
        pub const FUNCTION: usize = 0;
        pub const PLACE_KIND: usize = 4;
        pub const PLACE: usize = 8;
        pub const PARENT: usize = 12;
        pub const TYPE: usize = 16;
    }
    /// Lexical-loan record (40 bytes).
    pub mod loan {
        pub const FUNCTION: usize = 0;
        pub const ID: usize = 4;
        pub const KIND: usize = 8;
        pub const ORIGIN: usize = 12;
        pub const PARENT: usize = 16;
        pub const BORROWED: usize = 20;
        pub const CREATION: usize = 24;
        pub const LAST_USE: usize = 28;
    }
    /// Cleanup-edge record (32 bytes).
    pub mod edge {
        pub const FUNCTION: usize = 0;
        pub const ID: usize = 4;
        pub const SOURCE: usize = 8;
        pub const SUCCESSOR: usize = 12;
        pub const KIND: usize = 16;
        pub const DROPS: usize = 20;
    }
    /// Constant record (56 bytes); the payload slice is two u64 words.
    pub mod constant {
        pub const TYPE: usize = 32;
        pub const PAYLOAD_OFFSET: usize = 40;
        pub const PAYLOAD_LEN: usize = 48;
    }
    /// Operand record (16 bytes).
    pub mod operand {
        pub const KIND: usize = 0;
        pub const INDEX: usize = 4;
    }
    /// Semantic-symbol record (32 bytes).
    pub mod symbol {
        pub const ID: usize = 0;
    }
    /// Contract-operation record (64 bytes).
    pub mod contract_op {
        pub const TAG: usize = 0;
        pub const RESULT: usize = 4;
        pub const OPERANDS: usize = 8;
        pub const AUX0: usize = 16;
        pub const AUX1: usize = 20;
        pub const REFERENCE: usize = 24;
        pub const FLAGS: usize = 56;
    }
    /// Typed-operation record (32 bytes).
    pub mod op {
        pub const TAG: usize = 0;
        pub const RESULT: usize = 4;
        pub const OPERANDS: usize = 8;
        pub const AUX0: usize = 16;
        pub const AUX1: usize = 20;
    }
}
