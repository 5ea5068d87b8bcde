//! The checked projection of the located sections to a logical module, one
//! step per section in table order: the header names, imports, type
//! instances, declarations (with fields and variants), effect sets,
//! functions (with parameters, locals and contracts), then the bodies in
//! three passes (record ownership, owned paths, and the paths' types, loans,
//! operations, blocks and cleanup edges). Every reference and range is
//! resolved against its table and owner; record fields are read at the
//! offsets [`crate::layout::field`] names.

use super::reader::{Reader, Rec, read_u32, read_u64};
use crate::error::{Error, Result, code};
use crate::hash::{FastMap, Id};
use crate::ids;
use crate::layout::{NONE, Section, field, header};
use crate::model::*;
use crate::names::{self, Rule};

/// The body-operation count from which decoding uses two threads (below
/// it, starting a thread costs more than it saves).
pub const PARALLEL_MIN_OPS: u64 = 4096;

/// The table ranges of one function's body records.
struct FnRanges {
    ops: std::ops::Range<u64>,
    blocks: std::ops::Range<u64>,
    paths: std::ops::Range<u64>,
    loans: std::ops::Range<u64>,
    edges: std::ops::Range<u64>,
    receiver: ReceiverKind,
}

/// Which function (by record index) owns each body record, and its key.
struct Owners {
    ops: Vec<Option<(usize, OpRef)>>,
    paths: Vec<Option<(usize, PathKey)>>,
    blocks: Vec<Option<(usize, u32)>>,
    edges: Vec<Option<(usize, u32)>>,
    loans: Vec<Option<(usize, u32)>>,
}

/// The projection in progress.
struct Projection<'r, 'b> {
    reader: &'r Reader<'b>,
    two: bool,
    hasher: ids::Hasher,
    package: String,
    name: String,
    imports: Vec<Import>,
    /// Nominal IDs: the imports, then the local declarations.
    nominals: Vec<Id>,
    types: Vec<Type>,
    decls: Vec<Declaration>,
    /// Owning declaration of each function record.
    fn_owner: Vec<Option<usize>>,
    /// Every one of the 128 effect sets by its digest.
    effect_digests: FastMap<Id, Vec<Effect>>,
    fn_ranges: Vec<FnRanges>,
    functions: Vec<(usize, Function)>,
    owners: Owners,
    /// Every constant record that decodes without error, by table index
    /// (`None` for one that rejects): read in table order once before the
    /// bodies, so a constant operand indexes this dense list instead of
    /// reaching into the constant table and pool at a random record (the
    /// table is ordered by constant ID, not by use). An operand naming a
    /// `None` entry or an index outside the table takes
    /// [`Projection::constant`], which reports exactly its error.
    constants: Vec<Option<Constant>>,
}

/// Projects the located sections of `reader` to a logical module; with
/// `two`, long operation ranges are decoded on two threads.
pub(crate) fn project(reader: &Reader, two: bool) -> Result<Module> {
    let bytes = reader.bytes;
    let profile = NumericProfile::from_tag(read_u32(bytes, header::PROFILE))
        .ok_or_else(|| Error::at(code::TAG, header::PROFILE as u64, "unknown numeric profile"))?;
    let mode = VerificationMode::from_tag(read_u32(bytes, header::MODE))
        .ok_or_else(|| Error::at(code::TAG, header::MODE as u64, "unknown verification mode"))?;
    let name = header_string(reader, header::MODULE_NAME, "module name")?;
    let package = header_string(reader, header::PACKAGE_NAME, "package name")?;
    let count = |s: Section| reader.count(s) as usize;
    let mut projection = Projection {
        reader,
        two,
        hasher: ids::Hasher::new(false),
        package,
        name,
        imports: Vec::new(),
        nominals: Vec::new(),
        types: Vec::new(),
        decls: Vec::new(),
        fn_owner: vec![None; count(Section::Functions)],
        effect_digests: FastMap::default(),
        fn_ranges: Vec::new(),
        functions: Vec::new(),
        owners: Owners {
            ops: vec![None; count(Section::Ops)],
            paths: vec![None; count(Section::Paths)],
            blocks: vec![None; count(Section::Blocks)],
            edges: vec![None; count(Section::Edges)],
            loans: vec![None; count(Section::Loans)],
        },
        constants: Vec::new(),
    };
    projection.imports()?;
    projection.types()?;
    projection.declarations()?;
    projection.effect_sets();
    projection.functions()?;
    projection.claim_body_records()?;
    projection.owned_paths()?;
    projection.constants = (0..reader.count(Section::Constants))
        .map(|index| {
            let index = u32::try_from(index).ok()?;
            projection.constant(index, 0).ok()
        })
        .collect();
    projection.bodies()?;
    let Projection {
        package,
        name,
        imports,
        mut decls,
        functions,
        ..
    } = projection;
    for (decl, function) in functions {
        decls[decl].functions.push(function);
    }
    Ok(Module {
        package,
        name,
        profile,
        mode,
        imports,
        declarations: decls,
    })
}

/// The header string whose offset and length words are at `at`.
fn header_string(reader: &Reader, at: usize, what: &str) -> Result<String> {
    let bytes = reader.bytes;
    let name = reader.string(
        read_u32(bytes, at),
        read_u32(bytes, at + 4),
        at as u64,
        what,
    )?;
    spelled(name, Rule::Dotted, at as u64, what)
}

/// `name` when it follows `rule` (`crate::names`), else the rejection at
/// `at`, the string reference of the record that carries it.
fn spelled(name: String, rule: Rule, at: u64, what: &str) -> Result<String> {
    match names::check(&name, rule, &what) {
        Ok(()) => Ok(name),
        Err(mut e) => {
            e.offset = Some(at);
            Err(e)
        }
    }
}

/// The string at `field` of `rec`, checked against `rule`.
fn name_at(reader: &Reader, rec: &Rec, field: usize, rule: Rule, what: &str) -> Result<String> {
    spelled(
        reader.string_at(rec, field, what)?,
        rule,
        rec.at(field),
        what,
    )
}

impl Projection<'_, '_> {
    /// Imports, each resolved to the declaration kind its nominal ID commits.
    fn imports(&mut self) -> Result<()> {
        let reader = self.reader;
        for index in 0..reader.count(Section::Imports) {
            let rec = reader.rec(Section::Imports, index);
            let nominal = rec.id(field::import::NOMINAL);
            let module = name_at(
                reader,
                &rec,
                field::import::MODULE_NAME,
                Rule::Dotted,
                "import module",
            )?;
            let decl_name = name_at(
                reader,
                &rec,
                field::import::DECL_NAME,
                Rule::Identifier,
                "import declaration",
            )?;
            let namespace = self.hasher.namespace(&self.package, &module);
            let kind = DeclKind::ALL
                .iter()
                .copied()
                .find(|kind| self.hasher.nominal(&namespace, *kind, &decl_name) == nominal)
                .ok_or_else(|| Error::at(code::ID, rec.offset, format!("import {module}.{decl_name}: nominal ID does not match its module and declaration names")))?;
            self.imports.push(Import {
                module,
                name: decl_name,
                kind,
                interface: rec.id(field::import::INTERFACE),
                copy: false,
            });
            self.nominals.push(nominal);
        }
        for index in 0..reader.count(Section::Decls) {
            self.nominals
                .push(reader.rec(Section::Decls, index).id(field::decl::NOMINAL));
        }
        Ok(())
    }

    /// Type instances (children strictly precede parents). A nominal
    /// instance of an import carries the import's Copy flag.
    fn types(&mut self) -> Result<()> {
        let reader = self.reader;
        for index in 0..reader.count(Section::Types) {
            let rec = reader.rec(Section::Types, index);
            let kind = rec.word(field::type_instance::KIND);
            let children = reader.range_at(
                &rec,
                field::type_instance::CHILDREN,
                Section::TypeChildren,
                "type children",
            )?;
            let mut kids = Vec::new();
            for child in children {
                let at = reader.start(Section::TypeChildren) + 4 * child;
                let child_index = read_u32(reader.bytes, at as usize);
                if u64::from(child_index) >= index {
                    return Err(Error::at(
                        code::NONCANONICAL,
                        at,
                        format!("type {index} child {child_index} does not precede its parent"),
                    ));
                }
                kids.push(self.types[child_index as usize].clone());
            }
            let ty = match (kind, kids.len()) {
                (0, 0) => Type::Scalar(
                    ScalarKind::from_tag(rec.word(field::type_instance::SCALAR)).ok_or_else(
                        || {
                            Error::at(
                                code::TAG,
                                rec.at(field::type_instance::SCALAR),
                                "unknown scalar kind",
                            )
                        },
                    )?,
                ),
                (1, 0) => Type::Unit,
                (2, 0) => Type::Never,
                (3, 0) => {
                    let nominal = rec.word(field::type_instance::NOMINAL);
                    let at = rec.at(field::type_instance::NOMINAL);
                    let slot = self.nominal_index(nominal, at)?;
                    if usize::try_from(nominal).is_ok_and(|n| n < self.imports.len()) {
                        self.imports[slot].copy = rec.word(field::type_instance::FLAGS) & 1 == 1;
                    }
                    Type::Nominal(self.nominals[slot])
                }
                (4, 2) => Type::Result(Box::new(kids[0].clone()), Box::new(kids[1].clone())),
                (5, 0) => Type::ArrayByte,
                (6, 0) => Type::SliceByte,
                (7, 1) => Type::Ref(Box::new(kids[0].clone())),
                (8, 1) => Type::Mut(Box::new(kids[0].clone())),
                (9, 0) => Type::AllocatorBytesError,
                _ => {
                    return Err(Error::at(
                        code::TAG,
                        rec.at(field::type_instance::KIND),
                        format!(
                            "type kind {kind} with {} children is not admitted",
                            kids.len()
                        ),
                    ));
                }
            };
            if ty.depth() > crate::validate::MAX_TYPE_DEPTH {
                return Err(Error::at(
                    code::LIMIT,
                    rec.offset,
                    "type nesting exceeds the documented limit",
                ));
            }
            self.types.push(ty);
        }
        Ok(())
    }

    /// A reference into the combined import-then-declaration nominal table.
    fn nominal_index(&self, reference: u32, at: u64) -> Result<usize> {
        let total = self.nominals.len();
        let reference = reference as usize;
        if reference < total {
            Ok(reference)
        } else {
            Err(Error::at(
                code::REF,
                at,
                format!(
                    "nominal declaration reference {reference} is outside the {total} imports and declarations"
                ),
            ))
        }
    }

    /// The type-instance table entry `index`.
    #[inline]
    fn ty(&self, index: u32, at: u64) -> Result<Type> {
        // A scalar (every operation result and constant of a typical body)
        // is copied inline, not through `Type::clone`'s out-of-line match.
        match self.ty_ref(index, at)? {
            Type::Scalar(kind) => Ok(Type::Scalar(*kind)),
            other => Ok(other.clone()),
        }
    }

    /// The type-instance table entry `index`, borrowed.
    #[inline]
    fn ty_ref(&self, index: u32, at: u64) -> Result<&Type> {
        self.types.get(index as usize).ok_or_else(|| {
            Error::at(
                code::REF,
                at,
                format!("type reference {index} is outside the type table"),
            )
        })
    }

    /// The type whose table index is the word at `at_field` of `rec`.
    fn ty_at(&self, rec: &Rec, at_field: usize) -> Result<Type> {
        self.ty(rec.word(at_field), rec.at(at_field))
    }

    /// The semantic-symbol table entry `index`.
    fn symbol(&self, index: u32, at: u64) -> Result<Id> {
        let reader = self.reader;
        reader.index(Section::Symbols, index, at, "semantic-symbol reference")?;
        Ok(reader
            .rec(Section::Symbols, u64::from(index))
            .id(field::symbol::ID))
    }

    /// Field record `index`, which must name its owner (`owner_kind` 0: a
    /// declaration, 1: a variant) and owner index.
    fn field_record(&self, index: u64, owner_kind: u32, owner: u64) -> Result<Field> {
        let reader = self.reader;
        let rec = reader.rec(Section::Fields, index);
        if rec.word(field::field_record::OWNER_KIND) != owner_kind
            || u64::from(rec.word(field::field_record::OWNER)) != owner
        {
            return Err(Error::at(
                code::REF,
                rec.at(field::field_record::OWNER_KIND),
                format!("field {index} does not name its owning range's owner"),
            ));
        }
        Ok(Field {
            ordinal: rec.word(field::field_record::ORDINAL),
            name: name_at(
                reader,
                &rec,
                field::field_record::NAME,
                Rule::Identifier,
                "field",
            )?,
            visibility: Visibility::from_tag(rec.word(field::field_record::VISIBILITY))
                .ok_or_else(|| {
                    Error::at(
                        code::TAG,
                        rec.at(field::field_record::VISIBILITY),
                        "unknown visibility",
                    )
                })?,
            mutability: Mutability::from_tag(rec.word(field::field_record::MUTABILITY))
                .ok_or_else(|| {
                    Error::at(
                        code::TAG,
                        rec.at(field::field_record::MUTABILITY),
                        "unknown mutability",
                    )
                })?,
            ty: self.ty_at(&rec, field::field_record::TYPE)?,
        })
    }

    /// Declarations with their fields and variants; records which
    /// declaration owns each function record.
    fn declarations(&mut self) -> Result<()> {
        let reader = self.reader;
        for decl_index in 0..reader.count(Section::Decls) {
            let rec = reader.rec(Section::Decls, decl_index);
            let kind_tag = rec.word(field::decl::KIND);
            let kind = DeclKind::from_tag(kind_tag).ok_or_else(|| {
                Error::at(
                    code::TAG,
                    rec.at(field::decl::KIND),
                    reject_decl_kind(kind_tag),
                )
            })?;
            let visibility =
                Visibility::from_tag(rec.word(field::decl::VISIBILITY)).ok_or_else(|| {
                    Error::at(
                        code::TAG,
                        rec.at(field::decl::VISIBILITY),
                        "unknown visibility",
                    )
                })?;
            let decl_name = name_at(
                reader,
                &rec,
                field::decl::NAME,
                Rule::Identifier,
                "declaration",
            )?;
            let mut fields = Vec::new();
            for index in reader.range_at(
                &rec,
                field::decl::FIELDS,
                Section::Fields,
                "declaration fields",
            )? {
                fields.push(self.field_record(index, 0, decl_index)?);
            }
            let mut variants = Vec::new();
            for variant_index in reader.range_at(
                &rec,
                field::decl::VARIANTS,
                Section::Variants,
                "declaration variants",
            )? {
                variants.push(self.variant(variant_index, decl_index)?);
            }
            for function in reader.range_at(
                &rec,
                field::decl::FUNCTIONS,
                Section::Functions,
                "declaration functions",
            )? {
                if self.fn_owner[function as usize]
                    .replace(decl_index as usize)
                    .is_some()
                {
                    return Err(Error::at(
                        code::DUPLICATE,
                        rec.at(field::decl::FUNCTIONS),
                        format!("function {function} belongs to two declaration ranges"),
                    ));
                }
            }
            let namespace = self.hasher.namespace(&self.package, &self.name);
            if self.hasher.nominal(&namespace, kind, &decl_name) != rec.id(field::decl::NOMINAL) {
                return Err(Error::at(
                    code::ID,
                    rec.offset,
                    format!(
                        "declaration {decl_name}: carried nominal ID differs from the recomputed one"
                    ),
                ));
            }
            self.decls.push(Declaration {
                kind,
                name: decl_name,
                visibility,
                fields,
                variants,
                functions: Vec::new(),
            });
        }
        Ok(())
    }

    /// Variant record `index` of declaration `decl_index`, with its payload fields.
    fn variant(&self, index: u64, decl_index: u64) -> Result<Variant> {
        let reader = self.reader;
        let rec = reader.rec(Section::Variants, index);
        if u64::from(rec.word(field::variant::DECL)) != decl_index {
            return Err(Error::at(
                code::REF,
                rec.at(field::variant::DECL),
                format!("variant {index} does not name its owning declaration"),
            ));
        }
        let mut payload = Vec::new();
        for field_index in reader.range_at(
            &rec,
            field::variant::FIELDS,
            Section::Fields,
            "payload fields",
        )? {
            payload.push(self.field_record(field_index, 1, index)?);
        }
        Ok(Variant {
            tag: rec.word(field::variant::TAG),
            name: name_at(
                reader,
                &rec,
                field::variant::NAME,
                Rule::Identifier,
                "variant",
            )?,
            fields: payload,
        })
    }

    /// The digests of all 128 effect sets (effect-set records are resolved
    /// by reference; an operation's effect auxiliary names a digest).
    fn effect_sets(&mut self) {
        for mask in 0u32..128 {
            let set: Vec<Effect> = Effect::ALL
                .iter()
                .copied()
                .filter(|effect| mask & (1 << effect.tag()) != 0)
                .collect();
            self.effect_digests.insert(self.hasher.effects(&set), set);
        }
    }

    /// Effect-set record `index`: its tags.
    fn effect_set(&self, index: u32, at: u64) -> Result<Vec<Effect>> {
        let reader = self.reader;
        let index = reader.index(Section::EffectSets, index, at, "effect set")?;
        let rec = reader.rec(Section::EffectSets, index);
        let mut out = Vec::new();
        for tag_index in reader.range_at(
            &rec,
            field::effect_set::TAGS,
            Section::EffectTags,
            "effect tags",
        )? {
            let at = reader.start(Section::EffectTags) + 4 * tag_index;
            let tag = read_u32(reader.bytes, at as usize);
            out.push(
                Effect::from_tag(tag)
                    .ok_or_else(|| Error::at(code::TAG, at, format!("unknown effect tag {tag}")))?,
            );
        }
        Ok(out)
    }

    /// Constant record `index` with its canonical payload.
    fn constant(&self, index: u32, at: u64) -> Result<Constant> {
        let reader = self.reader;
        let index = reader.index(Section::Constants, index, at, "constant")?;
        let rec = reader.rec(Section::Constants, index);
        let kind = match self.ty_ref(
            rec.word(field::constant::TYPE),
            rec.at(field::constant::TYPE),
        )? {
            &Type::Scalar(kind) if kind != ScalarKind::Index => kind,
            _ => {
                return Err(Error::at(
                    code::MODEL,
                    rec.at(field::constant::TYPE),
                    "constants are admitted only for closed scalar types other than Index",
                ));
            }
        };
        let offset = read_u64(rec.bytes, field::constant::PAYLOAD_OFFSET);
        let len = read_u64(rec.bytes, field::constant::PAYLOAD_LEN);
        let end = offset
            .checked_add(len)
            .filter(|&end| end <= reader.count(Section::ConstantBytes));
        let end = end.ok_or_else(|| {
            Error::at(
                code::REF,
                rec.at(field::constant::PAYLOAD_OFFSET),
                "constant payload outside the constant pool",
            )
        })?;
        if Some(len as usize) != kind.constant_width() {
            return Err(Error::at(
                code::MODEL,
                rec.at(field::constant::PAYLOAD_LEN),
                match kind.constant_width() {
                    Some(width) => {
                        format!("{} constant payload must be {width} bytes", kind.text())
                    }
                    None => format!("{} has no constant payload", kind.text()),
                },
            ));
        }
        let start = reader.start(Section::ConstantBytes) + offset;
        // At most 8 little-endian bytes (the width checked above), read
        // without a copy call or an allocation per operand.
        let bits = reader.bytes[start as usize..(start + (end - offset)) as usize]
            .iter()
            .enumerate()
            .fold(0u64, |bits, (i, &byte)| bits | u64::from(byte) << (8 * i));
        let constant = Constant { kind, bits };
        if !constant.is_canonical() {
            return Err(Error::at(
                code::MODEL,
                start,
                "noncanonical constant payload",
            ));
        }
        Ok(constant)
    }

    /// Function records: signature, parameters, locals, contracts and the
    /// ranges of their body records.
    fn functions(&mut self) -> Result<()> {
        let reader = self.reader;
        for fn_index in 0..reader.count(Section::Functions) {
            let rec = reader.rec(Section::Functions, fn_index);
            let decl = self.fn_owner[fn_index as usize].ok_or_else(|| {
                Error::at(
                    code::NONCANONICAL,
                    rec.offset,
                    format!("function {fn_index} belongs to no declaration"),
                )
            })?;
            if rec.word(field::function::DECL) as usize != decl {
                return Err(Error::at(
                    code::REF,
                    rec.at(field::function::DECL),
                    "function does not name its owning declaration",
                ));
            }
            let callable =
                CallableKind::from_tag(rec.word(field::function::CALLABLE)).ok_or_else(|| {
                    Error::at(
                        code::TAG,
                        rec.at(field::function::CALLABLE),
                        "unknown callable kind",
                    )
                })?;
            let receiver =
                ReceiverKind::from_tag(rec.word(field::function::RECEIVER)).ok_or_else(|| {
                    Error::at(
                        code::TAG,
                        rec.at(field::function::RECEIVER),
                        "unknown receiver kind",
                    )
                })?;
            let fn_name = name_at(
                reader,
                &rec,
                field::function::NAME,
                match callable {
                    CallableKind::Message => Rule::Message,
                    CallableKind::Initializer => Rule::Identifier,
                },
                "message",
            )?;
            let mut params = Vec::new();
            for index in
                reader.range_at(&rec, field::function::PARAMS, Section::Params, "parameters")?
            {
                params.push(self.binding(Section::Params, index, fn_index)?);
            }
            let mut locals = Vec::new();
            for index in
                reader.range_at(&rec, field::function::LOCALS, Section::Locals, "locals")?
            {
                locals.push(self.binding(Section::Locals, index, fn_index)?);
            }
            let blocks =
                reader.range_at(&rec, field::function::BLOCKS, Section::Blocks, "blocks")?;
            let result = self.ty_at(&rec, field::function::RESULT)?;
            let effects = self.effect_set(
                rec.word(field::function::EFFECTS),
                rec.at(field::function::EFFECTS),
            )?;
            let paths =
                reader.range_at(&rec, field::function::PATHS, Section::Paths, "owned paths")?;
            let loans = reader.range_at(&rec, field::function::LOANS, Section::Loans, "loans")?;
            let edges = reader.range_at(
                &rec,
                field::function::EDGES,
                Section::Edges,
                "cleanup edges",
            )?;
            let ops =
                reader.range_at(&rec, field::function::OPS, Section::Ops, "body operations")?;
            let visibility = Visibility::from_tag(rec.word(field::function::VISIBILITY))
                .ok_or_else(|| {
                    Error::at(
                        code::TAG,
                        rec.at(field::function::VISIBILITY),
                        "unknown visibility",
                    )
                })?;
            let requires = self.contracts(&rec, field::function::REQUIRES)?;
            let ensures = self.contracts(&rec, field::function::ENSURES)?;
            self.fn_ranges.push(FnRanges {
                ops,
                blocks,
                paths,
                loans,
                edges,
                receiver,
            });
            self.functions.push((
                decl,
                Function {
                    callable,
                    receiver,
                    name: fn_name,
                    visibility,
                    params,
                    result,
                    effects,
                    requires,
                    ensures,
                    body: Body {
                        locals,
                        ..Body::default()
                    },
                },
            ));
        }
        Ok(())
    }

    /// Parameter or local record `index` of function record `fn_index`.
    fn binding(&self, section: Section, index: u64, fn_index: u64) -> Result<Param> {
        let reader = self.reader;
        let rec = reader.rec(section, index);
        if u64::from(rec.word(field::binding::FUNCTION)) != fn_index {
            return Err(Error::at(
                code::REF,
                rec.at(field::binding::FUNCTION),
                format!("{} does not name its owning function", section.name()),
            ));
        }
        Ok(Param {
            ordinal: rec.word(field::binding::ORDINAL),
            name: name_at(
                reader,
                &rec,
                field::binding::NAME,
                Rule::Identifier,
                section.name(),
            )?,
            ty: self.ty_at(&rec, field::binding::TYPE)?,
        })
    }

    /// The contract expressions whose operation range begins at `at_field`
    /// of function record `rec`: operations up to each root bit form one
    /// expression.
    fn contracts(&self, rec: &Rec, at_field: usize) -> Result<Vec<Expr>> {
        let reader = self.reader;
        let mut out = Vec::new();
        let mut current = Vec::new();
        for op_index in
            reader.range_at(rec, at_field, Section::ContractOps, "contract operations")?
        {
            let op = reader.rec(Section::ContractOps, op_index);
            let mut operands = Vec::new();
            for operand_index in reader.range_at(
                &op,
                field::contract_op::OPERANDS,
                Section::Operands,
                "contract operands",
            )? {
                let operand = reader.rec(Section::Operands, operand_index);
                let kind = operand.word(field::operand::KIND);
                let index = operand.word(field::operand::INDEX);
                operands.push(match kind {
                    2 => ContractOperand::Const(
                        self.constant(index, operand.at(field::operand::INDEX))?,
                    ),
                    4 => ContractOperand::Receiver,
                    5 => ContractOperand::Param(index),
                    6 => ContractOperand::Result,
                    7 => ContractOperand::Value(index),
                    _ => {
                        return Err(Error::at(
                            code::TAG,
                            operand.at(field::operand::KIND),
                            format!("operand kind {kind} is not admitted in a contract"),
                        ));
                    }
                });
            }
            let reference = op.id(field::contract_op::REFERENCE);
            let flags = op.word(field::contract_op::FLAGS);
            if flags > 1 {
                return Err(Error::at(
                    code::TAG,
                    op.at(field::contract_op::FLAGS),
                    "contract flags admit only the root bit",
                ));
            }
            current.push(ContractOp {
                tag: op.word(field::contract_op::TAG),
                result: self.ty_at(&op, field::contract_op::RESULT)?,
                operands,
                aux0: op.word(field::contract_op::AUX0),
                aux1: op.word(field::contract_op::AUX1),
                reference: (reference != [0u8; 32]).then_some(reference),
            });
            if flags == 1 {
                out.push(Expr {
                    ops: std::mem::take(&mut current),
                });
            }
        }
        if !current.is_empty() {
            return Err(Error::at(
                code::SHAPE,
                rec.at(at_field),
                "the last contract expression has no root bit",
            ));
        }
        Ok(out)
    }

    /// Body pass 1: which function owns each block, cleanup edge, flow and
    /// recipe operation, and loan.
    fn claim_body_records(&mut self) -> Result<()> {
        let reader = self.reader;
        for (fn_index, ranges) in self.fn_ranges.iter().enumerate() {
            for block_index in ranges.blocks.clone() {
                let rec = reader.rec(Section::Blocks, block_index);
                if rec.word(field::block::FUNCTION) as usize != fn_index {
                    return Err(Error::at(
                        code::REF,
                        rec.at(field::block::FUNCTION),
                        "block does not name its owning function",
                    ));
                }
                let id = rec.word(field::block::ID);
                self.owners.blocks[block_index as usize] = Some((fn_index, id));
                let ops =
                    reader.range_at(&rec, field::block::OPS, Section::Ops, "block operations")?;
                if ops.start < ranges.ops.start || ops.end > ranges.ops.end {
                    return Err(Error::at(
                        code::REF,
                        rec.at(field::block::OPS),
                        "block operations lie outside the function body range",
                    ));
                }
                for (ordinal, op_index) in ops.enumerate() {
                    claim(
                        &mut self.owners.ops,
                        op_index,
                        (
                            fn_index,
                            OpRef::Flow {
                                block: id,
                                ordinal: ordinal as u32,
                            },
                        ),
                        rec.offset,
                    )?;
                }
            }
            for edge_index in ranges.edges.clone() {
                let rec = reader.rec(Section::Edges, edge_index);
                if rec.word(field::edge::FUNCTION) as usize != fn_index {
                    return Err(Error::at(
                        code::REF,
                        rec.at(field::edge::FUNCTION),
                        "cleanup edge does not name its owning function",
                    ));
                }
                let id = rec.word(field::edge::ID);
                self.owners.edges[edge_index as usize] = Some((fn_index, id));
                let drops = reader.range_at(
                    &rec,
                    field::edge::DROPS,
                    Section::DropRefs,
                    "drop references",
                )?;
                for (ordinal, drop_index) in drops.enumerate() {
                    let at = reader.start(Section::DropRefs) + 4 * drop_index;
                    let op_index = reader.index(
                        Section::Ops,
                        read_u32(reader.bytes, at as usize),
                        at,
                        "drop reference",
                    )?;
                    if !ranges.ops.contains(&op_index) {
                        return Err(Error::at(
                            code::REF,
                            at,
                            "drop reference names an operation of another function",
                        ));
                    }
                    claim(
                        &mut self.owners.ops,
                        op_index,
                        (
                            fn_index,
                            OpRef::Recipe {
                                edge: id,
                                ordinal: ordinal as u32,
                            },
                        ),
                        at,
                    )?;
                }
            }
            for loan_index in ranges.loans.clone() {
                let rec = reader.rec(Section::Loans, loan_index);
                if rec.word(field::loan::FUNCTION) as usize != fn_index {
                    return Err(Error::at(
                        code::REF,
                        rec.at(field::loan::FUNCTION),
                        "loan does not name its owning function",
                    ));
                }
                self.owners.loans[loan_index as usize] =
                    Some((fn_index, rec.word(field::loan::ID)));
            }
        }
        Ok(())
    }

    /// Operation record `index` as an operation of function `fn_index`
    /// (a flow operation when `flow_only`).
    fn op_ref(&self, fn_index: usize, index: u32, at: u64, flow_only: bool) -> Result<OpRef> {
        let slot = self.reader.index(Section::Ops, index, at, "operation")?;
        match self.owners.ops[slot as usize] {
            Some((owner, op))
                if owner == fn_index && (!flow_only || matches!(op, OpRef::Flow { .. })) =>
            {
                Ok(op)
            }
            _ => Err(Error::at(
                code::REF,
                at,
                format!(
                    "operation {index} is not a {}operation of this function",
                    if flow_only { "flow " } else { "" }
                ),
            )),
        }
    }

    /// The dense ID of record `index` of `section` (blocks, edges, loans),
    /// which must belong to function `fn_index`.
    fn owned_id(&self, section: Section, fn_index: usize, index: u32, at: u64) -> Result<u32> {
        let slot = self.reader.index(section, index, at, section.name())?;
        let table = match section {
            Section::Blocks => &self.owners.blocks,
            Section::Edges => &self.owners.edges,
            _ => &self.owners.loans,
        };
        match table[slot as usize] {
            Some((owner, id)) if owner == fn_index => Ok(id),
            _ => Err(Error::at(
                code::REF,
                at,
                format!("{} {index} belongs to another function", section.name()),
            )),
        }
    }

    /// Body pass 2: every owned path's key (parents precede children).
    fn owned_paths(&mut self) -> Result<()> {
        let reader = self.reader;
        for (fn_index, ranges) in self.fn_ranges.iter().enumerate() {
            for path_index in ranges.paths.clone() {
                let rec = reader.rec(Section::Paths, path_index);
                if rec.word(field::path::FUNCTION) as usize != fn_index {
                    return Err(Error::at(
                        code::REF,
                        rec.at(field::path::FUNCTION),
                        "owned path does not name its owning function",
                    ));
                }
                let kind = rec.word(field::path::PLACE_KIND);
                let place = rec.word(field::path::PLACE);
                let parent = rec.word(field::path::PARENT);
                let key = match kind {
                    0 => {
                        let runtime_receiver = matches!(
                            ranges.receiver,
                            ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
                        );
                        let root = match (runtime_receiver, place) {
                            (true, 0) => Root::Receiver,
                            (true, slot) => Root::Param(slot - 1),
                            (false, slot) => Root::Param(slot),
                        };
                        PathKey {
                            root,
                            fields: Vec::new(),
                        }
                    }
                    1 => PathKey {
                        root: Root::Local(place),
                        fields: Vec::new(),
                    },
                    2 => {
                        if parent == NONE
                            || u64::from(parent) >= path_index
                            || u64::from(parent) < ranges.paths.start
                        {
                            return Err(Error::at(
                                code::REF,
                                rec.at(field::path::PARENT),
                                "a field path's parent must precede it in the same function",
                            ));
                        }
                        let mut key = self.owners.paths[parent as usize]
                            .clone()
                            .map(|(_, key)| key)
                            .ok_or_else(|| {
                                Error::at(
                                    code::REF,
                                    rec.at(field::path::PARENT),
                                    "unresolved parent path",
                                )
                            })?;
                        key.fields
                            .push(self.symbol(place, rec.at(field::path::PLACE))?);
                        key
                    }
                    3 => PathKey {
                        root: Root::Temp(self.op_ref(
                            fn_index,
                            place,
                            rec.at(field::path::PLACE),
                            true,
                        )?),
                        fields: Vec::new(),
                    },
                    _ => {
                        return Err(Error::at(
                            code::TAG,
                            rec.at(field::path::PLACE_KIND),
                            format!("unknown place kind {kind}"),
                        ));
                    }
                };
                if kind != 2 && parent != NONE {
                    return Err(Error::at(
                        code::REF,
                        rec.at(field::path::PARENT),
                        "a root path has parent NONE",
                    ));
                }
                self.owners.paths[path_index as usize] = Some((fn_index, key));
            }
        }
        Ok(())
    }

    /// Owned-path record `index` of function `fn_index`: its key.
    fn path_ref(&self, fn_index: usize, index: u32, at: u64) -> Result<PathKey> {
        let slot = self.reader.index(Section::Paths, index, at, "owned path")?;
        match &self.owners.paths[slot as usize] {
            Some((owner, key)) if *owner == fn_index => Ok(key.clone()),
            _ => Err(Error::at(
                code::REF,
                at,
                format!("owned path {index} belongs to another function"),
            )),
        }
    }

    /// Body pass 3: the owned paths' types, loans, blocks with their
    /// operations, and cleanup edges with their recipes.
    fn bodies(&mut self) -> Result<()> {
        for fn_index in 0..self.fn_ranges.len() {
            let mut body = std::mem::take(&mut self.functions[fn_index].1.body);
            self.body(fn_index, &mut body)?;
            self.functions[fn_index].1.body = body;
        }
        Ok(())
    }

    fn body(&self, fn_index: usize, body: &mut Body) -> Result<()> {
        let reader = self.reader;
        let ranges = &self.fn_ranges[fn_index];
        for path_index in ranges.paths.clone() {
            let rec = reader.rec(Section::Paths, path_index);
            let key = self.owners.paths[path_index as usize]
                .clone()
                .map(|(_, key)| key)
                .unwrap_or(PathKey {
                    root: Root::Receiver,
                    fields: Vec::new(),
                });
            body.paths.push(OwnedPath {
                key,
                ty: self.ty_at(&rec, field::path::TYPE)?,
            });
        }
        for loan_index in ranges.loans.clone() {
            body.loans.push(self.loan(fn_index, loan_index)?);
        }
        let decode_op = |op_index: u64| self.op(fn_index, op_index);
        for block_index in ranges.blocks.clone() {
            let rec = reader.rec(Section::Blocks, block_index);
            // Inside the operation table and the function's range (pass 1).
            let first = u64::from(rec.word(field::block::OPS));
            let end = first + u64::from(rec.next_word(field::block::OPS));
            let ops = decode_ops(&decode_op, first, end, self.two)?;
            body.blocks.push(Block {
                id: rec.word(field::block::ID),
                ops,
            });
        }
        for edge_index in ranges.edges.clone() {
            let rec = reader.rec(Section::Edges, edge_index);
            let mut drops = Vec::new();
            let first = u64::from(rec.word(field::edge::DROPS));
            for drop_index in first..first + u64::from(rec.next_word(field::edge::DROPS)) {
                let op_index = read_u32(
                    reader.bytes,
                    (reader.start(Section::DropRefs) + 4 * drop_index) as usize,
                );
                drops.push(self.op(fn_index, u64::from(op_index))?);
            }
            let successor = rec.word(field::edge::SUCCESSOR);
            body.edges.push(CleanupEdge {
                id: rec.word(field::edge::ID),
                kind: EdgeKind::from_tag(rec.word(field::edge::KIND)).ok_or_else(|| {
                    Error::at(
                        code::TAG,
                        rec.at(field::edge::KIND),
                        "unknown cleanup-edge kind",
                    )
                })?,
                source: self.owned_id(
                    Section::Blocks,
                    fn_index,
                    rec.word(field::edge::SOURCE),
                    rec.at(field::edge::SOURCE),
                )?,
                successor: if successor == NONE {
                    None
                } else {
                    Some(self.owned_id(
                        Section::Blocks,
                        fn_index,
                        successor,
                        rec.at(field::edge::SUCCESSOR),
                    )?)
                },
                drops,
            });
        }
        Ok(())
    }

    /// Loan record `index` of function `fn_index`.
    fn loan(&self, fn_index: usize, index: u64) -> Result<Loan> {
        let rec = self.reader.rec(Section::Loans, index);
        let optional_op = |at_field: usize| -> Result<Option<OpRef>> {
            let word = rec.word(at_field);
            if word == NONE {
                Ok(None)
            } else {
                self.op_ref(fn_index, word, rec.at(at_field), true)
                    .map(Some)
            }
        };
        let parent = rec.word(field::loan::PARENT);
        Ok(Loan {
            id: rec.word(field::loan::ID),
            kind: LoanKind::from_tag(rec.word(field::loan::KIND)).ok_or_else(|| {
                Error::at(code::TAG, rec.at(field::loan::KIND), "unknown loan kind")
            })?,
            origin: self.path_ref(
                fn_index,
                rec.word(field::loan::ORIGIN),
                rec.at(field::loan::ORIGIN),
            )?,
            parent: if parent == NONE {
                None
            } else {
                Some(self.owned_id(
                    Section::Loans,
                    fn_index,
                    parent,
                    rec.at(field::loan::PARENT),
                )?)
            },
            borrowed: self.ty_at(&rec, field::loan::BORROWED)?,
            creation: optional_op(field::loan::CREATION)?,
            last_use: optional_op(field::loan::LAST_USE)?,
        })
    }

    /// Typed-operation record `index` of function `fn_index`.
    fn op(&self, fn_index: usize, index: u64) -> Result<Op> {
        let reader = self.reader;
        let rec = reader.rec(Section::Ops, index);
        let tag = rec.word(field::op::TAG);
        let (aux0_kind, aux1_kind) = crate::validate::aux_kinds(tag).ok_or_else(|| {
            Error::at(
                code::TAG,
                rec.at(field::op::TAG),
                format!("typed-operation tag {tag} is not canonical in schema 1.9"),
            )
        })?;
        let result = if rec.word(field::op::RESULT) == NONE {
            None
        } else {
            Some(self.ty_at(&rec, field::op::RESULT)?)
        };
        let range = reader.range_at(&rec, field::op::OPERANDS, Section::Operands, "operands")?;
        // The range is inside the operand table, so its length is bounded by the input.
        let mut operands = Vec::with_capacity((range.end - range.start) as usize);
        for operand_index in range {
            let operand = reader.rec(Section::Operands, operand_index);
            let kind = operand.word(field::operand::KIND);
            let index = operand.word(field::operand::INDEX);
            let at = operand.at(field::operand::INDEX);
            operands.push(match kind {
                0 => Operand::Value(self.op_ref(fn_index, index, at, true)?),
                1 => Operand::Place(self.path_ref(fn_index, index, at)?),
                2 => Operand::Const(match self.constants.get(index as usize) {
                    Some(Some(constant)) => constant.clone(),
                    _ => self.constant(index, at)?,
                }),
                3 => Operand::Block(self.owned_id(Section::Blocks, fn_index, index, at)?),
                _ => {
                    return Err(Error::at(
                        code::TAG,
                        operand.at(field::operand::KIND),
                        format!("body operand kind {kind} is not admitted"),
                    ));
                }
            });
        }
        Ok(Op {
            tag,
            result,
            operands,
            aux0: self.aux(fn_index, aux0_kind, &rec, field::op::AUX0)?,
            aux1: self.aux(fn_index, aux1_kind, &rec, field::op::AUX1)?,
        })
    }

    /// The auxiliary of logical `kind` (see `validate::aux_kinds`) whose
    /// word is at `at_field` of operation record `rec`.
    fn aux(&self, fn_index: usize, kind: u32, rec: &Rec, at_field: usize) -> Result<Aux> {
        let word = rec.word(at_field);
        let at = rec.at(at_field);
        Ok(match kind {
            0 => {
                if word != 0 {
                    return Err(Error::at(code::TAG, at, "absent auxiliary must be zero"));
                }
                Aux::None
            }
            1 => Aux::Lit(word),
            2 => Aux::Type(self.ty(word, at)?),
            3 => Aux::Decl(self.symbol(word, at)?),
            4 => Aux::Field(self.symbol(word, at)?),
            5 => Aux::Func(self.symbol(word, at)?),
            6 => Aux::CatalogFunc(self.symbol(word, at)?),
            7 => {
                let digest = self.symbol(word, at)?;
                Aux::Effects(self.effect_digests.get(&digest).cloned().ok_or_else(|| {
                    Error::at(code::REF, at, "symbol is not an effect-set digest")
                })?)
            }
            8 => Aux::Loan(self.owned_id(Section::Loans, fn_index, word, at)?),
            9 => Aux::Path(self.path_ref(fn_index, word, at)?),
            10 => Aux::Edge(self.owned_id(Section::Edges, fn_index, word, at)?),
            11 => Aux::Op(self.op_ref(fn_index, word, at, false)?),
            12 => Aux::Block(self.owned_id(Section::Blocks, fn_index, word, at)?),
            _ => Aux::Variant(self.symbol(word, at)?),
        })
    }
}

/// Records that function-and-key `owner` owns operation record `index`.
fn claim(
    owners: &mut [Option<(usize, OpRef)>],
    index: u64,
    owner: (usize, OpRef),
    at: u64,
) -> Result<()> {
    let slot = &mut owners[index as usize];
    if slot.is_some() {
        return Err(Error::at(
            code::DUPLICATE,
            at,
            format!("typed operation {index} belongs to two ranges"),
        ));
    }
    *slot = Some(owner);
    Ok(())
}

/// Decodes the operations `start..end` (a range already checked against the
/// operation table) in order. With `two`, a long range is split in halves,
/// the second decoded on another thread; the first error in operation order
/// is reported, as in the sequential loop.
fn decode_ops<F>(decode_op: &F, start: u64, end: u64, two: bool) -> Result<Vec<Op>>
where
    F: Fn(u64) -> Result<Op> + Sync,
{
    let mut ops = Vec::with_capacity((end - start) as usize);
    if !two || end - start < PARALLEL_MIN_OPS {
        for op_index in start..end {
            ops.push(decode_op(op_index)?);
        }
        return Ok(ops);
    }
    let mid = start + (end - start) / 2;
    let second_half = || -> Result<Vec<Op>> {
        let mut decoded = Vec::with_capacity((end - mid) as usize);
        for op_index in mid..end {
            decoded.push(decode_op(op_index)?);
        }
        Ok(decoded)
    };
    let second = std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .spawn_scoped(scope, second_half)
            .ok();
        let first = (start..mid).try_for_each(|op_index| {
            ops.push(decode_op(op_index)?);
            Ok(())
        });
        // Without a thread (the OS refused one), the second half runs here.
        let second = match worker.map(|w| w.join()) {
            Some(Ok(decoded)) => decoded,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => first.clone().and_then(|()| second_half()),
        };
        first.and(second)
    })?;
    ops.extend(second);
    Ok(ops)
}

/// Why declaration-kind tag `tag` is not admitted (zlm1-core0-artifacts.md:
/// value zero, class one, enum two, error three, intrinsic four; only value,
/// enum and error rows are local declarations in this profile).
fn reject_decl_kind(tag: u32) -> String {
    match tag {
        1 => "declaration kind 1 (class) rejects: this profile has no class allocation, \
              base or dispatch representation"
            .into(),
        4 => "declaration kind 4 (intrinsic) rejects: catalog intrinsics are authenticated \
              catalog entries, never local declarations"
            .into(),
        _ => format!("declaration kind {tag} is not admitted in schema 1.9"),
    }
}
