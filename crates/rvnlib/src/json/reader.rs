//! Decodes the payload into the model. Strict about shape: every property the
//! writer always writes must be present, nullable ones may be absent or
//! `null`, unknown properties are refused (irkit could not write them back),
//! numbers must be integers in `i32` range.

use super::error::{JsonError, MAX_DEPTH};
use crate::ir::*;
use crate::library::*;
use serde_json::{Map, Value};

/// A location in the JSON document, built on the stack and rendered only on error.
#[derive(Clone, Copy)]
pub(crate) struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    pub(crate) fn root() -> Self {
        Path {
            parent: None,
            segment: Segment::Root,
        }
    }
    fn key(&'a self, key: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            segment: Segment::Key(key),
        }
    }
    fn index(&'a self, index: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            segment: Segment::Index(index),
        }
    }
    fn render(&self) -> String {
        let mut segments = Vec::new();
        let mut current = Some(self);
        while let Some(p) = current {
            segments.push(p.segment);
            current = p.parent;
        }
        let mut out = String::from("$");
        for segment in segments.iter().rev() {
            match segment {
                Segment::Root => {}
                Segment::Key(k) => {
                    out.push('.');
                    out.push_str(k);
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }
    fn error(&self, message: impl Into<String>) -> JsonError {
        JsonError::Schema {
            path: self.render(),
            message: message.into(),
        }
    }
}

type Result<T> = std::result::Result<T, JsonError>;

/// An object being decoded: remembers which properties were consumed.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: &'a Path<'a>,
    used: [&'static str; 24],
    used_len: usize,
}

impl<'a> Obj<'a> {
    fn new(value: &'a Value, path: &'a Path<'a>, what: &str) -> Result<Self> {
        match value {
            Value::Object(map) => Ok(Obj {
                map,
                path,
                used: [""; 24],
                used_len: 0,
            }),
            _ => Err(path.error(format!("expected {what} object, found {}", kind_of(value)))),
        }
    }

    fn mark(&mut self, key: &'static str) {
        if self.used_len < self.used.len() {
            self.used[self.used_len] = key;
            self.used_len += 1;
        }
    }

    /// A present, non-null property.
    fn get(&mut self, key: &'static str) -> Result<&'a Value> {
        match self.map.get(key) {
            Some(Value::Null) => {
                self.mark(key);
                Err(self
                    .path
                    .error(format!("property `{key}` must not be null")))
            }
            Some(v) => {
                self.mark(key);
                Ok(v)
            }
            None => {
                let hint = crate::suggest::closest(key, self.map.keys().map(String::as_str))
                    .map(|k| format!("; `{k}` is present: did you mean `{key}`?"))
                    .unwrap_or_default();
                Err(self
                    .path
                    .error(format!("missing required property `{key}`{hint}")))
            }
        }
    }

    /// A property that may be absent or null.
    fn opt(&mut self, key: &'static str) -> Option<&'a Value> {
        match self.map.get(key) {
            Some(Value::Null) => {
                self.mark(key);
                None
            }
            Some(v) => {
                self.mark(key);
                Some(v)
            }
            None => None,
        }
    }

    fn string(&mut self, key: &'static str) -> Result<String> {
        let v = self.get(key)?;
        as_string(v, &self.path.key(key))
    }
    fn opt_string(&mut self, key: &'static str) -> Result<Option<String>> {
        match self.opt(key) {
            Some(v) => as_string(v, &self.path.key(key)).map(Some),
            None => Ok(None),
        }
    }
    fn int(&mut self, key: &'static str) -> Result<i32> {
        let v = self.get(key)?;
        as_int(v, &self.path.key(key))
    }
    fn opt_int(&mut self, key: &'static str) -> Result<Option<i32>> {
        match self.opt(key) {
            Some(v) => as_int(v, &self.path.key(key)).map(Some),
            None => Ok(None),
        }
    }
    fn bool(&mut self, key: &'static str) -> Result<bool> {
        let v = self.get(key)?;
        v.as_bool().ok_or_else(|| {
            self.path
                .key(key)
                .error(format!("expected a boolean, found {}", kind_of(v)))
        })
    }
    fn array(&mut self, key: &'static str) -> Result<&'a Vec<Value>> {
        let v = self.get(key)?;
        v.as_array().ok_or_else(|| {
            self.path
                .key(key)
                .error(format!("expected an array, found {}", kind_of(v)))
        })
    }
    fn ints(&mut self, key: &'static str) -> Result<Vec<i32>> {
        let items = self.array(key)?;
        let path = self.path.key(key);
        items
            .iter()
            .enumerate()
            .map(|(i, v)| as_int(v, &path.index(i)))
            .collect()
    }
    fn enumeration<T>(
        &mut self,
        key: &'static str,
        parse: fn(&str) -> Option<T>,
        names: &[&str],
        what: &str,
    ) -> Result<T> {
        let text = self.string(key)?;
        parse(&text).ok_or_else(|| {
            let hint = crate::suggest::hint(&text, names.iter().copied());
            self.path
                .key(key)
                .error(format!("`{text}` is not a member of {what}{hint}"))
        })
    }
    fn name(&mut self, key: &'static str, what: &str) -> Result<EnumName> {
        let text = self.string(key)?;
        EnumName::new(&text).ok_or_else(|| {
            self.path
                .key(key)
                .error(format!("`{text}` is not a {what} member name"))
        })
    }
    /// Accepts `key` only if it holds exactly `expected` (tolerated, not stored).
    fn tolerate(&mut self, key: &'static str, expected: &str) -> Result<()> {
        if let Some(v) = self.map.get(key) {
            self.mark(key);
            if v.as_str() != Some(expected) {
                return Err(self
                    .path
                    .key(key)
                    .error(format!("expected \"{expected}\" here")));
            }
        }
        Ok(())
    }
    /// Refuses properties that were not consumed.
    fn finish(self) -> Result<()> {
        if self.used_len == self.map.len() {
            return Ok(());
        }
        let used = &self.used[..self.used_len];
        let unknown = self
            .map
            .keys()
            .find(|k| !used.contains(&k.as_str()))
            .cloned()
            .unwrap_or_default();
        let hint = crate::suggest::hint(&unknown, used.iter().copied());
        Err(self.path.error(format!(
            "unknown property `{unknown}` (irkit reads only the schema it can write back){hint}"
        )))
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn as_string(v: &Value, path: &Path<'_>) -> Result<String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| path.error(format!("expected a string, found {}", kind_of(v))))
}

fn as_int(v: &Value, path: &Path<'_>) -> Result<i32> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| path.error(format!("`{n}` is not a 32-bit integer"))),
        _ => Err(path.error(format!("expected an integer, found {}", kind_of(v)))),
    }
}

fn list<'a, T>(
    items: &'a [Value],
    path: &Path<'_>,
    mut decode: impl FnMut(&'a Value, &Path<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        out.push(decode(item, &path.index(i))?);
    }
    Ok(out)
}

/// Decodes a whole library. `version` selects the struct shape (3: no `Key`).
pub(crate) fn read_library(value: &Value, version: i32) -> Result<CompiledLibrary> {
    let path = Path::root();
    let mut o = Obj::new(value, &path, "a library")?;
    let name = o.string("Name")?;
    let types_path = path.key("Types");
    let types = list(o.array("Types")?, &types_path, read_type)?;
    let ir_value = o.get("Ir")?;
    let ir = read_ir(ir_value, &path.key("Ir"), version)?;
    let source_hash = o.string("SourceHash")?;
    o.finish()?;
    Ok(CompiledLibrary {
        name,
        types,
        ir,
        source_hash,
    })
}

fn read_ir(value: &Value, path: &Path<'_>, version: i32) -> Result<LibraryIr> {
    let mut o = Obj::new(value, path, "an IR")?;
    let structs_path = path.key("Structs");
    let structs = list(o.array("Structs")?, &structs_path, |v, p| {
        read_struct(v, p, version)
    })?;
    let functions_path = path.key("Functions");
    let functions = list(o.array("Functions")?, &functions_path, read_function)?;
    o.finish()?;
    Ok(LibraryIr { structs, functions })
}

fn read_struct(value: &Value, path: &Path<'_>, version: i32) -> Result<LibraryIrStruct> {
    let mut o = Obj::new(value, path, "a struct")?;
    let key = if version >= 4 {
        Some(o.string("Key")?)
    } else {
        None
    };
    let name = o.string("Name")?;
    let fields_path = path.key("Fields");
    let fields = list(o.array("Fields")?, &fields_path, |v, p| {
        let mut f = Obj::new(v, p, "a field")?;
        let name = f.string("Name")?;
        let ty = read_ir_type(f.get("Type")?, &p.key("Type"), 0)?;
        f.finish()?;
        Ok(LibraryIrField { name, ty })
    })?;
    o.finish()?;
    Ok(LibraryIrStruct {
        key: key.unwrap_or_else(|| name.clone()),
        name,
        fields,
    })
}

fn read_variable(value: &Value, path: &Path<'_>) -> Result<LibraryIrVariable> {
    let mut o = Obj::new(value, path, "a variable")?;
    let name = o.string("Name")?;
    let ty = read_ir_type(o.get("Type")?, &path.key("Type"), 0)?;
    let by_reference = o.bool("ByReference")?;
    o.finish()?;
    Ok(LibraryIrVariable {
        name,
        ty,
        by_reference,
    })
}

fn read_function(value: &Value, path: &Path<'_>) -> Result<LibraryIrFunction> {
    let mut o = Obj::new(value, path, "a function")?;
    let key = o.string("Key")?;
    let name = o.string("Name")?;
    let return_type = read_ir_type(o.get("ReturnType")?, &path.key("ReturnType"), 0)?;
    let parameters_path = path.key("Parameters");
    let parameters = list(o.array("Parameters")?, &parameters_path, read_variable)?;
    let locals_path = path.key("Locals");
    let locals = list(o.array("Locals")?, &locals_path, read_variable)?;
    let values_path = path.key("Values");
    let values = list(o.array("Values")?, &values_path, |v, p| {
        let mut e = Obj::new(v, p, "a value")?;
        let id = e.int("Id")?;
        let ty = read_ir_type(e.get("Type")?, &p.key("Type"), 0)?;
        e.finish()?;
        Ok(LibraryIrValue { id, ty })
    })?;
    let value_count = o.int("ValueCount")?;
    let body = read_block(o.get("Body")?, &path.key("Body"), 0)?;
    o.finish()?;
    Ok(LibraryIrFunction {
        key,
        name,
        return_type,
        parameters,
        locals,
        values,
        value_count,
        body,
    })
}

fn read_ir_type(value: &Value, path: &Path<'_>, depth: usize) -> Result<LibraryIrTypeReference> {
    if depth > MAX_DEPTH {
        return Err(path.error("type nesting exceeds the depth limit"));
    }
    let mut o = Obj::new(value, path, "a type reference")?;
    let kind = o.enumeration(
        "Kind",
        IrTypeKind::from_name,
        IrTypeKind::NAMES,
        "IrTypeKind",
    )?;
    let component = o.enumeration(
        "Component",
        IrTypeKind::from_name,
        IrTypeKind::NAMES,
        "IrTypeKind",
    )?;
    let size = o.int("Size")?;
    let rows = o.int("Rows")?;
    let columns = o.int("Columns")?;
    let length = o.opt_int("Length")?;
    let element = match o.opt("Element") {
        Some(v) => Some(Box::new(read_ir_type(v, &path.key("Element"), depth + 1)?)),
        None => None,
    };
    let struct_key = o.opt_string("Struct")?;
    let dimension = o.enumeration(
        "Dimension",
        IrTextureDimension::from_name,
        IrTextureDimension::NAMES,
        "IrTextureDimension",
    )?;
    let sampled = match o.opt("Sampled") {
        Some(v) => Some(Box::new(read_ir_type(v, &path.key("Sampled"), depth + 1)?)),
        None => None,
    };
    let format = o.opt_string("Format")?;
    o.finish()?;
    Ok(LibraryIrTypeReference {
        kind,
        component,
        size,
        rows,
        columns,
        length,
        element,
        struct_key,
        dimension,
        sampled,
        format,
    })
}

/// A block in a property typed as the concrete block (no `op`, though a
/// redundant `"op":"block"` is tolerated the way the reference ignores it).
fn read_block(value: &Value, path: &Path<'_>, depth: usize) -> Result<LibraryIrBlock> {
    if depth > MAX_DEPTH {
        return Err(path.error("statement nesting exceeds the depth limit"));
    }
    let mut o = Obj::new(value, path, "a block")?;
    o.tolerate("op", "block")?;
    let block = read_block_body(&mut o, path, depth)?;
    o.finish()?;
    Ok(block)
}

fn read_block_body(o: &mut Obj<'_>, path: &Path<'_>, depth: usize) -> Result<LibraryIrBlock> {
    let statements_path = path.key("Statements");
    let statements = list(o.array("Statements")?, &statements_path, |v, p| {
        read_statement(v, p, depth + 1)
    })?;
    Ok(LibraryIrBlock { statements })
}

fn read_value(value: &Value, path: &Path<'_>) -> Result<LibraryValue> {
    let mut o = Obj::new(value, path, "a constant")?;
    let kind = o.string("Kind")?;
    let text = o.string("Text")?;
    o.finish()?;
    Ok(LibraryValue { kind, text })
}

fn read_chain(o: &mut Obj<'_>, path: &Path<'_>) -> Result<Vec<LibraryIrAccess>> {
    let chain_path = path.key("Chain");
    list(o.array("Chain")?, &chain_path, |v, p| {
        let mut a = Obj::new(v, p, "an access")?;
        let at = a.string("at")?;
        let access = match at.as_str() {
            "field" => LibraryIrAccess::Field {
                index: a.int("Index")?,
            },
            "index" => LibraryIrAccess::Index {
                index: a.int("Index")?,
            },
            "swizzle" => LibraryIrAccess::Swizzle {
                components: a.ints("Components")?,
            },
            other => {
                return Err(p.key("at").error(format!(
                    "unknown access `{other}` (expected field, index or swizzle)"
                )));
            }
        };
        a.finish()?;
        Ok(access)
    })
}

fn read_place(o: &mut Obj<'_>, path: &Path<'_>) -> Result<LibraryIrPlace> {
    let value = o.get("Place")?;
    let place_path = path.key("Place");
    let mut p = Obj::new(value, &place_path, "a place")?;
    let root = p.int("Root")?;
    let chain = read_chain(&mut p, &place_path)?;
    p.finish()?;
    Ok(LibraryIrPlace { root, chain })
}

fn read_statement(value: &Value, path: &Path<'_>, depth: usize) -> Result<LibraryIrStatement> {
    if depth > MAX_DEPTH {
        return Err(path.error("statement nesting exceeds the depth limit"));
    }
    let mut o = Obj::new(value, path, "a statement")?;
    let op = o.string("op")?;
    let Some(kind) = StatementKind::from_op(&op) else {
        let hint = crate::suggest::hint(&op, StatementKind::ALL.iter().map(|k| k.op()));
        return Err(path
            .key("op")
            .error(format!("unknown statement op `{op}`{hint}")));
    };
    let sub_block = |o: &mut Obj<'_>, key: &'static str| -> Result<LibraryIrBlock> {
        read_block(o.get(key)?, &path.key(key), depth + 1)
    };
    let statement = match kind {
        StatementKind::Block => LibraryIrStatement::Block(read_block_body(&mut o, path, depth)?),
        StatementKind::Constant => {
            let result = o.int("Result")?;
            let value = match o.opt("Value") {
                Some(v) => Some(read_value(v, &path.key("Value"))?),
                None => None,
            };
            LibraryIrStatement::Constant { result, value }
        }
        StatementKind::Load => LibraryIrStatement::Load {
            result: o.int("Result")?,
            place: read_place(&mut o, path)?,
        },
        StatementKind::Store => LibraryIrStatement::Store {
            place: read_place(&mut o, path)?,
            value: o.int("Value")?,
        },
        StatementKind::Unary => LibraryIrStatement::Unary {
            result: o.int("Result")?,
            op: o.enumeration("Op", IrUnaryOp::from_name, IrUnaryOp::NAMES, "IrUnaryOp")?,
            operand: o.int("Operand")?,
        },
        StatementKind::Binary => LibraryIrStatement::Binary {
            result: o.int("Result")?,
            op: o.enumeration("Op", IrBinaryOp::from_name, IrBinaryOp::NAMES, "IrBinaryOp")?,
            left: o.int("Left")?,
            right: o.int("Right")?,
        },
        StatementKind::Convert => LibraryIrStatement::Convert {
            result: o.int("Result")?,
            conversion_kind: o.enumeration(
                "ConversionKind",
                IrConversionKind::from_name,
                IrConversionKind::NAMES,
                "IrConversionKind",
            )?,
            operand: o.int("Operand")?,
        },
        StatementKind::Intrinsic => LibraryIrStatement::Intrinsic {
            result: o.opt_int("Result")?,
            intrinsic: o.enumeration(
                "Intrinsic",
                IrIntrinsic::from_name,
                IrIntrinsic::NAMES,
                "IrIntrinsic",
            )?,
            arguments: o.ints("Arguments")?,
        },
        StatementKind::Call => {
            let result = o.opt_int("Result")?;
            let function = o.string("Function")?;
            let arguments_path = path.key("Arguments");
            let arguments = list(o.array("Arguments")?, &arguments_path, |v, p| {
                let mut a = Obj::new(v, p, "an argument")?;
                let value = a.opt_int("Value")?;
                let reference = a.opt_int("Reference")?;
                a.finish()?;
                Ok(LibraryIrArgument { value, reference })
            })?;
            LibraryIrStatement::Call {
                result,
                function,
                arguments,
            }
        }
        StatementKind::Construct => LibraryIrStatement::Construct {
            result: o.int("Result")?,
            arguments: o.ints("Arguments")?,
        },
        StatementKind::Extract => LibraryIrStatement::Extract {
            result: o.int("Result")?,
            source: o.int("Source")?,
            chain: read_chain(&mut o, path)?,
        },
        StatementKind::Select => LibraryIrStatement::Select {
            result: o.int("Result")?,
            condition: o.int("Condition")?,
            when_true: o.int("WhenTrue")?,
            when_false: o.int("WhenFalse")?,
        },
        StatementKind::If => {
            let condition = o.int("Condition")?;
            let then = sub_block(&mut o, "Then")?;
            let otherwise = match o.opt("Else") {
                Some(v) => Some(read_block(v, &path.key("Else"), depth + 1)?),
                None => None,
            };
            LibraryIrStatement::If {
                condition,
                then,
                otherwise,
            }
        }
        StatementKind::Loop => {
            let condition = sub_block(&mut o, "Condition")?;
            let condition_value = o.int("ConditionValue")?;
            let body = sub_block(&mut o, "Body")?;
            let continuing = match o.opt("Continue") {
                Some(v) => Some(read_block(v, &path.key("Continue"), depth + 1)?),
                None => None,
            };
            let test_before_body = o.bool("TestBeforeBody")?;
            LibraryIrStatement::Loop {
                condition,
                condition_value,
                body,
                continuing,
                test_before_body,
            }
        }
        StatementKind::Return => LibraryIrStatement::Return {
            value: o.opt_int("Value")?,
        },
        StatementKind::Break => LibraryIrStatement::Break,
        StatementKind::Continue => LibraryIrStatement::Continue,
        StatementKind::Discard => LibraryIrStatement::Discard,
    };
    o.finish()?;
    Ok(statement)
}

fn read_type_ref(value: &Value, path: &Path<'_>, depth: usize) -> Result<LibraryTypeReference> {
    if depth > MAX_DEPTH {
        return Err(path.error("type nesting exceeds the depth limit"));
    }
    let mut o = Obj::new(value, path, "a type reference")?;
    let kind = o.enumeration(
        "Kind",
        LibraryTypeKind::from_name,
        LibraryTypeKind::NAMES,
        "LibraryTypeKind",
    )?;
    let special = o.name("Special", "SpecialType")?;
    let name = o.opt_string("Name")?;
    let element = match o.opt("Element") {
        Some(v) => Some(Box::new(read_type_ref(v, &path.key("Element"), depth + 1)?)),
        None => None,
    };
    let rank = o.int("Rank")?;
    let length = o.opt_int("Length")?;
    let writable = o.bool("Writable")?;
    let elements_path = path.key("Elements");
    let elements = list(o.array("Elements")?, &elements_path, |v, p| {
        read_type_ref(v, p, depth + 1)
    })?;
    let names_path = path.key("ElementNames");
    let element_names = list(o.array("ElementNames")?, &names_path, |v, p| match v {
        Value::Null => Ok(None),
        other => as_string(other, p).map(Some),
    })?;
    let arguments_path = path.key("TypeArguments");
    let type_arguments = list(o.array("TypeArguments")?, &arguments_path, |v, p| {
        read_type_ref(v, p, depth + 1)
    })?;
    o.finish()?;
    Ok(LibraryTypeReference {
        kind,
        special,
        name,
        element,
        rank,
        length,
        writable,
        elements,
        element_names,
        type_arguments,
    })
}

fn read_type_parameters(o: &mut Obj<'_>, path: &Path<'_>) -> Result<Vec<LibraryTypeParameter>> {
    let tp_path = path.key("TypeParameters");
    list(o.array("TypeParameters")?, &tp_path, |v, p| {
        let mut t = Obj::new(v, p, "a type parameter")?;
        let name = t.string("Name")?;
        let ordinal = t.int("Ordinal")?;
        let constraints_path = p.key("Constraints");
        let constraints = list(t.array("Constraints")?, &constraints_path, |v, p| {
            read_type_ref(v, p, 0)
        })?;
        t.finish()?;
        Ok(LibraryTypeParameter {
            name,
            ordinal,
            constraints,
        })
    })
}

fn read_type(value: &Value, path: &Path<'_>) -> Result<LibraryType> {
    let mut o = Obj::new(value, path, "a type")?;
    let namespace = o.string("Namespace")?;
    let name = o.string("Name")?;
    let containing_type = o.opt_string("ContainingType")?;
    let kind = o.enumeration("Kind", TypeKind::from_name, TypeKind::NAMES, "TypeKind")?;
    let base_type = match o.opt("BaseType") {
        Some(v) => Some(read_type_ref(v, &path.key("BaseType"), 0)?),
        None => None,
    };
    let interfaces_path = path.key("Interfaces");
    let interfaces = list(o.array("Interfaces")?, &interfaces_path, |v, p| {
        read_type_ref(v, p, 0)
    })?;
    let type_parameters = read_type_parameters(&mut o, path)?;
    let fields_path = path.key("Fields");
    let fields = list(o.array("Fields")?, &fields_path, |v, p| {
        let mut f = Obj::new(v, p, "a field")?;
        let field = LibraryField {
            name: f.string("Name")?,
            ty: read_type_ref(f.get("Type")?, &p.key("Type"), 0)?,
            is_static: f.bool("IsStatic")?,
            is_read_only: f.bool("IsReadOnly")?,
            is_const: f.bool("IsConst")?,
            is_permutation: f.bool("IsPermutation")?,
            is_value_parameter: f.bool("IsValueParameter")?,
            is_compose: f.bool("IsCompose")?,
            is_stream: f.bool("IsStream")?,
            declared_value: match f.opt("DeclaredValue") {
                Some(v) => Some(read_value(v, &p.key("DeclaredValue"))?),
                None => None,
            },
            resource_kind: f.name("ResourceKind", "ResourceKind")?,
            resource_set: f.name("ResourceSet", "ResourceSet")?,
            semantic_name: f.opt_string("SemanticName")?,
        };
        f.finish()?;
        Ok(field)
    })?;
    let methods_path = path.key("Methods");
    let methods = list(o.array("Methods")?, &methods_path, |v, p| {
        let mut m = Obj::new(v, p, "a method")?;
        let name = m.string("Name")?;
        let method_kind = m.name("MethodKind", "MethodKind")?;
        let return_type = read_type_ref(m.get("ReturnType")?, &p.key("ReturnType"), 0)?;
        let parameters_path = p.key("Parameters");
        let parameters = list(m.array("Parameters")?, &parameters_path, |v, p| {
            let mut a = Obj::new(v, p, "a parameter")?;
            let parameter = LibraryParameter {
                name: a.string("Name")?,
                ty: read_type_ref(a.get("Type")?, &p.key("Type"), 0)?,
                ordinal: a.int("Ordinal")?,
                has_default_value: a.bool("HasDefaultValue")?,
                default_value: match a.opt("DefaultValue") {
                    Some(v) => Some(read_value(v, &p.key("DefaultValue"))?),
                    None => None,
                },
                semantic_name: a.opt_string("SemanticName")?,
                ref_kind: a.enumeration(
                    "RefKind",
                    RefKind::from_name,
                    RefKind::NAMES,
                    "RefKind",
                )?,
            };
            a.finish()?;
            Ok(parameter)
        })?;
        let type_parameters = read_type_parameters(&mut m, p)?;
        let method = LibraryMethod {
            name,
            method_kind,
            return_type,
            parameters,
            type_parameters,
            is_static: m.bool("IsStatic")?,
            stage: m.enumeration(
                "Stage",
                ShaderStage::from_name,
                ShaderStage::NAMES,
                "ShaderStage",
            )?,
            semantic_name: m.opt_string("SemanticName")?,
            ir_function: m.opt_string("IrFunction")?,
        };
        m.finish()?;
        Ok(method)
    })?;
    let properties_path = path.key("Properties");
    let properties = list(o.array("Properties")?, &properties_path, |v, p| {
        let mut q = Obj::new(v, p, "a property")?;
        let property = LibraryProperty {
            name: q.string("Name")?,
            ty: read_type_ref(q.get("Type")?, &p.key("Type"), 0)?,
            has_getter: q.bool("HasGetter")?,
            has_setter: q.bool("HasSetter")?,
            is_static: q.bool("IsStatic")?,
            ir_getter: q.opt_string("IrGetter")?,
            ir_setter: q.opt_string("IrSetter")?,
        };
        q.finish()?;
        Ok(property)
    })?;
    let ir_struct = o.opt_string("IrStruct")?;
    let qualified = o.opt_string("QualifiedName")?;
    o.finish()?;
    let ty = LibraryType {
        namespace,
        name,
        containing_type,
        kind,
        base_type,
        interfaces,
        type_parameters,
        fields,
        methods,
        properties,
        ir_struct,
    };
    if let Some(qualified) = qualified {
        let computed = ty.qualified_name();
        if qualified != computed {
            return Err(path.key("QualifiedName").error(format!(
                "`{qualified}` disagrees with the name computed from Namespace/ContainingType/Name (`{computed}`)"
            )));
        }
    }
    Ok(ty)
}
