//! `CompiledLibrary`: the declaration half a consumer binds against, plus the
//! [`LibraryIr`] half it links.

use crate::ir::{LibraryIr, LibraryValue, wire_enum};
use sha2::{Digest as _, Sha256};

wire_enum! {
    /// What a declared type is.
    TypeKind {
        Error, Void, Scalar, Vector, Matrix, Resource, Struct, Shader, Protocol, Enum, Array,
        Tuple, TypeParameter,
    }
}

wire_enum! {
    /// What shape a [`LibraryTypeReference`] takes.
    LibraryTypeKind { Error, Primitive, BuiltIn, Named, Array, Tuple, TypeParameter, Buffer }
}

wire_enum! {
    /// The stage a method is an entry point for.
    ShaderStage { None, Vertex, Fragment, Geometry, Compute }
}

wire_enum! {
    /// Parameter direction.
    RefKind { None, InOut }
}

/// A member name of a compiler enum whose full member list irkit does not
/// restate (`SpecialType`, `MethodKind`, `ResourceKind`, `ResourceSet`): kept as
/// the identifier the file spells, so it round-trips exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EnumName(String);

impl EnumName {
    /// Accepts a C# identifier (ASCII letter or `_`, then letters, digits, `_`).
    pub fn new(text: &str) -> Option<Self> {
        let mut bytes = text.bytes();
        let first = bytes.next()?;
        let ok = (first.is_ascii_alphabetic() || first == b'_')
            && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
        ok.then(|| EnumName(text.to_string()))
    }

    /// The member name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A reference to a type from the declaration half.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryTypeReference {
    /// Shape of the reference.
    pub kind: LibraryTypeKind,
    /// `SpecialType` member for primitives and built-ins.
    pub special: EnumName,
    /// Qualified name of a declared type, or a type parameter's name.
    pub name: Option<String>,
    /// Element type of an array or buffer.
    pub element: Option<Box<LibraryTypeReference>>,
    /// Array rank.
    pub rank: i32,
    /// Array length.
    pub length: Option<i32>,
    /// True for a writable buffer.
    pub writable: bool,
    /// Tuple element types.
    pub elements: Vec<LibraryTypeReference>,
    /// Tuple element names (`None` for unnamed).
    pub element_names: Vec<Option<String>>,
    /// Type arguments of a constructed generic.
    pub type_arguments: Vec<LibraryTypeReference>,
}

impl LibraryTypeReference {
    /// A primitive identified by its `SpecialType` member name.
    pub fn primitive(special: &str) -> Self {
        LibraryTypeReference {
            kind: LibraryTypeKind::Primitive,
            special: EnumName::new(special).unwrap_or_else(|| EnumName("None".into())),
            name: None,
            element: None,
            rank: 0,
            length: None,
            writable: false,
            elements: Vec::new(),
            element_names: Vec::new(),
            type_arguments: Vec::new(),
        }
    }

    /// A declared type by qualified name.
    pub fn named(name: &str) -> Self {
        LibraryTypeReference {
            kind: LibraryTypeKind::Named,
            name: Some(name.to_string()),
            ..Self::primitive("None")
        }
    }
}

/// A generic parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryTypeParameter {
    /// Name.
    pub name: String,
    /// Position.
    pub ordinal: i32,
    /// `where` constraints.
    pub constraints: Vec<LibraryTypeReference>,
}

/// A field, constant, enum member or value type parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryField {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: LibraryTypeReference,
    /// `static`.
    pub is_static: bool,
    /// Read-only.
    pub is_read_only: bool,
    /// `const`.
    pub is_const: bool,
    /// Permutation key.
    pub is_permutation: bool,
    /// Value type parameter.
    pub is_value_parameter: bool,
    /// `compose` slot.
    pub is_compose: bool,
    /// `stream`.
    pub is_stream: bool,
    /// Declared or folded value.
    pub declared_value: Option<LibraryValue>,
    /// `ResourceKind` member.
    pub resource_kind: EnumName,
    /// `ResourceSet` member.
    pub resource_set: EnumName,
    /// Semantic.
    pub semantic_name: Option<String>,
}

/// A parameter of a method.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryParameter {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: LibraryTypeReference,
    /// Position.
    pub ordinal: i32,
    /// Has a default.
    pub has_default_value: bool,
    /// The default.
    pub default_value: Option<LibraryValue>,
    /// Semantic.
    pub semantic_name: Option<String>,
    /// Direction.
    pub ref_kind: RefKind,
}

/// A callable member.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryMethod {
    /// Name.
    pub name: String,
    /// `MethodKind` member.
    pub method_kind: EnumName,
    /// Return type.
    pub return_type: LibraryTypeReference,
    /// Parameters.
    pub parameters: Vec<LibraryParameter>,
    /// Generic parameters.
    pub type_parameters: Vec<LibraryTypeParameter>,
    /// `static`.
    pub is_static: bool,
    /// Entry-point stage.
    pub stage: ShaderStage,
    /// Semantic.
    pub semantic_name: Option<String>,
    /// Key of the IR function the body lowered to; `None` when there is nothing to link.
    pub ir_function: Option<String>,
}

/// A property with accessors.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryProperty {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: LibraryTypeReference,
    /// Has a getter.
    pub has_getter: bool,
    /// Has a setter.
    pub has_setter: bool,
    /// `static`.
    pub is_static: bool,
    /// Getter IR key.
    pub ir_getter: Option<String>,
    /// Setter IR key.
    pub ir_setter: Option<String>,
}

/// One declared type (nested types are flat).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LibraryType {
    /// Dotted namespace, empty for global.
    pub namespace: String,
    /// Simple name.
    pub name: String,
    /// Qualified name of the declaring type, for a nested type.
    pub containing_type: Option<String>,
    /// What kind of type.
    pub kind: TypeKind,
    /// Base type.
    pub base_type: Option<LibraryTypeReference>,
    /// Protocols.
    pub interfaces: Vec<LibraryTypeReference>,
    /// Generic parameters.
    pub type_parameters: Vec<LibraryTypeParameter>,
    /// Fields.
    pub fields: Vec<LibraryField>,
    /// Methods.
    pub methods: Vec<LibraryMethod>,
    /// Properties.
    pub properties: Vec<LibraryProperty>,
    /// Key of the IR struct this type lowered to.
    pub ir_struct: Option<String>,
}

impl LibraryType {
    /// Outer-qualified or namespace-qualified name, dot-joined. Written as the
    /// computed `QualifiedName` property.
    pub fn qualified_name(&self) -> String {
        match &self.containing_type {
            Some(outer) if !outer.is_empty() => format!("{outer}.{}", self.name),
            _ if !self.namespace.is_empty() => format!("{}.{}", self.namespace, self.name),
            _ => self.name.clone(),
        }
    }
}

/// A compiled Raven library: what a `.rvnlib` holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompiledLibrary {
    /// Assembly name of the compilation that produced it.
    pub name: String,
    /// Declared types.
    pub types: Vec<LibraryType>,
    /// The lowered IR.
    pub ir: LibraryIr,
    /// Lowercase hex SHA-256 of the sources joined with `\n`, or empty.
    pub source_hash: String,
}

impl CompiledLibrary {
    /// An empty library named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        CompiledLibrary {
            name: name.into(),
            types: Vec::new(),
            ir: LibraryIr::default(),
            source_hash: String::new(),
        }
    }

    /// The type with this qualified name.
    pub fn find_type(&self, qualified_name: &str) -> Option<&LibraryType> {
        self.types
            .iter()
            .find(|t| t.qualified_name() == qualified_name)
    }
}

/// The `SourceHash` construction: lowercase hex SHA-256 of all source texts
/// joined with `\n`; the empty string when the joined text is empty (no
/// source, or one empty source), as Raven's `LibraryBuilder` decides on the
/// joined length.
pub fn source_hash(sources: &[&str]) -> String {
    let joined_len =
        sources.iter().map(|s| s.len()).sum::<usize>() + sources.len().saturating_sub(1);
    if joined_len == 0 {
        return String::new();
    }
    let mut hasher = Sha256::new();
    for (i, source) in sources.iter().enumerate() {
        if i > 0 {
            hasher.update(b"\n");
        }
        hasher.update(source.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// The struct key a version-4 library gives a declared struct: `<library>::<struct>`.
pub fn struct_key(library: &str, name: &str) -> String {
    format!("{library}::{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Changed by issue 19: one empty source hashes to "" (Raven's
    /// `LibraryBuilder.cs` 228 tests the joined text's length), not SHA-256("").
    #[test]
    fn source_hash_is_empty_only_for_empty_joined_text() {
        assert_eq!(source_hash(&[]), "");
        assert_eq!(source_hash(&[""]), "");
        // Two empty sources join to "\n", which is text.
        assert_eq!(
            source_hash(&["", ""]),
            "01ba4719c80b6fe911b091a7c05124b64eeece964e09c058ef8f9805daca546b"
        );
        assert_eq!(source_hash(&["a", "b"]), source_hash(&["a\nb"]),);
    }
}
