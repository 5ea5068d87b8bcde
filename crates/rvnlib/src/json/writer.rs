//! Writes the library exactly as System.Text.Json does with the reference's
//! options: PascalCase properties in declaration order, string enums, null
//! properties omitted, discriminators first, the default (HTML-safe) escaper.

use crate::ir::*;
use crate::library::*;

/// A minimal JSON emitter reproducing System.Text.Json's compact and indented layouts.
pub(crate) struct Emitter {
    out: String,
    indented: bool,
    /// One entry per open container: how many items it holds so far.
    counts: Vec<usize>,
    after_key: bool,
}

impl Emitter {
    pub(crate) fn new(indented: bool) -> Self {
        Emitter {
            out: String::with_capacity(4096),
            indented,
            counts: Vec::new(),
            after_key: false,
        }
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }

    fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.counts.len() {
            self.out.push_str("  ");
        }
    }

    /// Separator and indentation before an item (a value in an array, or a key).
    fn before_item(&mut self) {
        if self.after_key {
            self.after_key = false;
            return;
        }
        if let Some(count) = self.counts.last_mut() {
            let first = *count == 0;
            *count += 1;
            if !first {
                self.out.push(',');
            }
            if self.indented {
                self.newline();
            }
        }
    }

    fn open(&mut self, bracket: char) {
        self.before_item();
        self.out.push(bracket);
        self.counts.push(0);
    }

    fn close(&mut self, bracket: char) {
        let count = self.counts.pop().unwrap_or(0);
        if self.indented && count > 0 {
            self.newline();
        }
        self.out.push(bracket);
    }

    pub(crate) fn begin_object(&mut self) {
        self.open('{');
    }
    pub(crate) fn end_object(&mut self) {
        self.close('}');
    }
    pub(crate) fn begin_array(&mut self) {
        self.open('[');
    }
    pub(crate) fn end_array(&mut self) {
        self.close(']');
    }

    pub(crate) fn key(&mut self, name: &str) {
        self.before_item();
        escape_into(&mut self.out, name);
        self.out.push(':');
        if self.indented {
            self.out.push(' ');
        }
        self.after_key = true;
    }

    pub(crate) fn string(&mut self, value: &str) {
        self.before_item();
        escape_into(&mut self.out, value);
    }

    pub(crate) fn int(&mut self, value: i32) {
        self.before_item();
        self.out.push_str(&value.to_string());
    }

    pub(crate) fn bool(&mut self, value: bool) {
        self.before_item();
        self.out.push_str(if value { "true" } else { "false" });
    }

    pub(crate) fn null(&mut self) {
        self.before_item();
        self.out.push_str("null");
    }

    fn prop_str(&mut self, key: &str, value: &str) {
        self.key(key);
        self.string(value);
    }
    fn prop_opt_str(&mut self, key: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.prop_str(key, value);
        }
    }
    fn prop_int(&mut self, key: &str, value: i32) {
        self.key(key);
        self.int(value);
    }
    fn prop_opt_int(&mut self, key: &str, value: Option<i32>) {
        if let Some(value) = value {
            self.prop_int(key, value);
        }
    }
    fn prop_bool(&mut self, key: &str, value: bool) {
        self.key(key);
        self.bool(value);
    }
    fn prop_ints(&mut self, key: &str, values: &[i32]) {
        self.key(key);
        self.begin_array();
        for &v in values {
            self.int(v);
        }
        self.end_array();
    }
}

/// Writes `text` as a JSON string with System.Text.Json's default encoder:
/// printable ASCII except `"`, `&`, `'`, `+`, `<`, `>` and `` ` `` passes through,
/// `\\`, `\b`, `\t`, `\n`, `\f`, `\r` use short escapes, everything else is
/// `\uXXXX` (upper-case hex, UTF-16 surrogate pairs above the BMP).
pub(crate) fn escape_into(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '"' | '&' | '\'' | '+' | '<' | '>' | '`' => push_u_escape(out, c as u32),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    push_u_escape(out, u32::from(*unit));
                }
            }
        }
    }
    out.push('"');
}

fn push_u_escape(out: &mut String, unit: u32) {
    use std::fmt::Write as _;
    let _ = write!(out, "\\u{unit:04X}");
}

/// Serialises a whole library.
pub(crate) fn write_library(e: &mut Emitter, library: &CompiledLibrary, version: i32) {
    e.begin_object();
    e.prop_str("Name", &library.name);
    e.key("Types");
    e.begin_array();
    for ty in &library.types {
        write_type(e, ty);
    }
    e.end_array();
    e.key("Ir");
    write_ir(e, &library.ir, version);
    e.prop_str("SourceHash", &library.source_hash);
    e.end_object();
}

fn write_ir(e: &mut Emitter, ir: &LibraryIr, version: i32) {
    e.begin_object();
    e.key("Structs");
    e.begin_array();
    for s in &ir.structs {
        e.begin_object();
        if version >= 4 {
            e.prop_str("Key", &s.key);
        }
        e.prop_str("Name", &s.name);
        e.key("Fields");
        e.begin_array();
        for f in &s.fields {
            e.begin_object();
            e.prop_str("Name", &f.name);
            e.key("Type");
            write_ir_type(e, &f.ty);
            e.end_object();
        }
        e.end_array();
        e.end_object();
    }
    e.end_array();
    e.key("Functions");
    e.begin_array();
    for f in &ir.functions {
        write_function(e, f);
    }
    e.end_array();
    e.end_object();
}

fn write_variables(e: &mut Emitter, key: &str, variables: &[LibraryIrVariable]) {
    e.key(key);
    e.begin_array();
    for v in variables {
        e.begin_object();
        e.prop_str("Name", &v.name);
        e.key("Type");
        write_ir_type(e, &v.ty);
        e.prop_bool("ByReference", v.by_reference);
        e.end_object();
    }
    e.end_array();
}

fn write_function(e: &mut Emitter, f: &LibraryIrFunction) {
    e.begin_object();
    e.prop_str("Key", &f.key);
    e.prop_str("Name", &f.name);
    e.key("ReturnType");
    write_ir_type(e, &f.return_type);
    write_variables(e, "Parameters", &f.parameters);
    write_variables(e, "Locals", &f.locals);
    e.key("Values");
    e.begin_array();
    for v in &f.values {
        e.begin_object();
        e.prop_int("Id", v.id);
        e.key("Type");
        write_ir_type(e, &v.ty);
        e.end_object();
    }
    e.end_array();
    e.prop_int("ValueCount", f.value_count);
    e.key("Body");
    write_block(e, &f.body, false);
    e.end_object();
}

pub(crate) fn write_ir_type(e: &mut Emitter, t: &LibraryIrTypeReference) {
    e.begin_object();
    e.prop_str("Kind", t.kind.name());
    e.prop_str("Component", t.component.name());
    e.prop_int("Size", t.size);
    e.prop_int("Rows", t.rows);
    e.prop_int("Columns", t.columns);
    e.prop_opt_int("Length", t.length);
    if let Some(element) = &t.element {
        e.key("Element");
        write_ir_type(e, element);
    }
    e.prop_opt_str("Struct", t.struct_key.as_deref());
    e.prop_str("Dimension", t.dimension.name());
    if let Some(sampled) = &t.sampled {
        e.key("Sampled");
        write_ir_type(e, sampled);
    }
    e.prop_opt_str("Format", t.format.as_deref());
    e.end_object();
}

/// A block: as a `Statements` element it carries `"op":"block"`; in a property
/// declared as the concrete block type (`Body`, `Then`, …) it does not.
fn write_block(e: &mut Emitter, block: &LibraryIrBlock, with_op: bool) {
    e.begin_object();
    if with_op {
        e.prop_str("op", "block");
    }
    e.key("Statements");
    e.begin_array();
    for s in &block.statements {
        write_statement(e, s);
    }
    e.end_array();
    e.end_object();
}

fn write_value(e: &mut Emitter, key: &str, value: &LibraryValue) {
    e.key(key);
    e.begin_object();
    e.prop_str("Kind", &value.kind);
    e.prop_str("Text", &value.text);
    e.end_object();
}

fn write_place(e: &mut Emitter, place: &LibraryIrPlace) {
    e.key("Place");
    e.begin_object();
    e.prop_int("Root", place.root);
    write_chain(e, &place.chain);
    e.end_object();
}

fn write_chain(e: &mut Emitter, chain: &[LibraryIrAccess]) {
    e.key("Chain");
    e.begin_array();
    for access in chain {
        e.begin_object();
        match access {
            LibraryIrAccess::Field { index } => {
                e.prop_str("at", "field");
                e.prop_int("Index", *index);
            }
            LibraryIrAccess::Index { index } => {
                e.prop_str("at", "index");
                e.prop_int("Index", *index);
            }
            LibraryIrAccess::Swizzle { components } => {
                e.prop_str("at", "swizzle");
                e.prop_ints("Components", components);
            }
        }
        e.end_object();
    }
    e.end_array();
}

fn write_statement(e: &mut Emitter, s: &LibraryIrStatement) {
    if let LibraryIrStatement::Block(block) = s {
        write_block(e, block, true);
        return;
    }
    e.begin_object();
    e.prop_str("op", s.kind().op());
    match s {
        LibraryIrStatement::Block(_) => {}
        LibraryIrStatement::Constant { result, value } => {
            e.prop_int("Result", *result);
            if let Some(value) = value {
                write_value(e, "Value", value);
            }
        }
        LibraryIrStatement::Load { result, place } => {
            e.prop_int("Result", *result);
            write_place(e, place);
        }
        LibraryIrStatement::Store { place, value } => {
            write_place(e, place);
            e.prop_int("Value", *value);
        }
        LibraryIrStatement::Unary {
            result,
            op,
            operand,
        } => {
            e.prop_int("Result", *result);
            e.prop_str("Op", op.name());
            e.prop_int("Operand", *operand);
        }
        LibraryIrStatement::Binary {
            result,
            op,
            left,
            right,
        } => {
            e.prop_int("Result", *result);
            e.prop_str("Op", op.name());
            e.prop_int("Left", *left);
            e.prop_int("Right", *right);
        }
        LibraryIrStatement::Convert {
            result,
            conversion_kind,
            operand,
        } => {
            e.prop_int("Result", *result);
            e.prop_str("ConversionKind", conversion_kind.name());
            e.prop_int("Operand", *operand);
        }
        LibraryIrStatement::Intrinsic {
            result,
            intrinsic,
            arguments,
        } => {
            e.prop_opt_int("Result", *result);
            e.prop_str("Intrinsic", intrinsic.name());
            e.prop_ints("Arguments", arguments);
        }
        LibraryIrStatement::Call {
            result,
            function,
            arguments,
        } => {
            e.prop_opt_int("Result", *result);
            e.prop_str("Function", function);
            e.key("Arguments");
            e.begin_array();
            for a in arguments {
                e.begin_object();
                e.prop_opt_int("Value", a.value);
                e.prop_opt_int("Reference", a.reference);
                e.end_object();
            }
            e.end_array();
        }
        LibraryIrStatement::Construct { result, arguments } => {
            e.prop_int("Result", *result);
            e.prop_ints("Arguments", arguments);
        }
        LibraryIrStatement::Extract {
            result,
            source,
            chain,
        } => {
            e.prop_int("Result", *result);
            e.prop_int("Source", *source);
            write_chain(e, chain);
        }
        LibraryIrStatement::Select {
            result,
            condition,
            when_true,
            when_false,
        } => {
            e.prop_int("Result", *result);
            e.prop_int("Condition", *condition);
            e.prop_int("WhenTrue", *when_true);
            e.prop_int("WhenFalse", *when_false);
        }
        LibraryIrStatement::If {
            condition,
            then,
            otherwise,
        } => {
            e.prop_int("Condition", *condition);
            e.key("Then");
            write_block(e, then, false);
            if let Some(otherwise) = otherwise {
                e.key("Else");
                write_block(e, otherwise, false);
            }
        }
        LibraryIrStatement::Loop {
            condition,
            condition_value,
            body,
            continuing,
            test_before_body,
        } => {
            e.key("Condition");
            write_block(e, condition, false);
            e.prop_int("ConditionValue", *condition_value);
            e.key("Body");
            write_block(e, body, false);
            if let Some(continuing) = continuing {
                e.key("Continue");
                write_block(e, continuing, false);
            }
            e.prop_bool("TestBeforeBody", *test_before_body);
        }
        LibraryIrStatement::Return { value } => e.prop_opt_int("Value", *value),
        LibraryIrStatement::Break | LibraryIrStatement::Continue | LibraryIrStatement::Discard => {}
    }
    e.end_object();
}

fn write_type_ref(e: &mut Emitter, t: &LibraryTypeReference) {
    e.begin_object();
    e.prop_str("Kind", t.kind.name());
    e.prop_str("Special", t.special.as_str());
    e.prop_opt_str("Name", t.name.as_deref());
    if let Some(element) = &t.element {
        e.key("Element");
        write_type_ref(e, element);
    }
    e.prop_int("Rank", t.rank);
    e.prop_opt_int("Length", t.length);
    e.prop_bool("Writable", t.writable);
    e.key("Elements");
    e.begin_array();
    for element in &t.elements {
        write_type_ref(e, element);
    }
    e.end_array();
    e.key("ElementNames");
    e.begin_array();
    for name in &t.element_names {
        match name {
            Some(name) => e.string(name),
            None => e.null(),
        }
    }
    e.end_array();
    e.key("TypeArguments");
    e.begin_array();
    for argument in &t.type_arguments {
        write_type_ref(e, argument);
    }
    e.end_array();
    e.end_object();
}

fn write_type_ref_prop(e: &mut Emitter, key: &str, t: &LibraryTypeReference) {
    e.key(key);
    write_type_ref(e, t);
}

fn write_type_parameters(e: &mut Emitter, parameters: &[LibraryTypeParameter]) {
    e.key("TypeParameters");
    e.begin_array();
    for p in parameters {
        e.begin_object();
        e.prop_str("Name", &p.name);
        e.prop_int("Ordinal", p.ordinal);
        e.key("Constraints");
        e.begin_array();
        for c in &p.constraints {
            write_type_ref(e, c);
        }
        e.end_array();
        e.end_object();
    }
    e.end_array();
}

fn write_type(e: &mut Emitter, t: &LibraryType) {
    e.begin_object();
    e.prop_str("Namespace", &t.namespace);
    e.prop_str("Name", &t.name);
    e.prop_opt_str("ContainingType", t.containing_type.as_deref());
    e.prop_str("Kind", t.kind.name());
    if let Some(base) = &t.base_type {
        write_type_ref_prop(e, "BaseType", base);
    }
    e.key("Interfaces");
    e.begin_array();
    for i in &t.interfaces {
        write_type_ref(e, i);
    }
    e.end_array();
    write_type_parameters(e, &t.type_parameters);
    e.key("Fields");
    e.begin_array();
    for f in &t.fields {
        e.begin_object();
        e.prop_str("Name", &f.name);
        write_type_ref_prop(e, "Type", &f.ty);
        e.prop_bool("IsStatic", f.is_static);
        e.prop_bool("IsReadOnly", f.is_read_only);
        e.prop_bool("IsConst", f.is_const);
        e.prop_bool("IsPermutation", f.is_permutation);
        e.prop_bool("IsValueParameter", f.is_value_parameter);
        e.prop_bool("IsCompose", f.is_compose);
        e.prop_bool("IsStream", f.is_stream);
        if let Some(v) = &f.declared_value {
            write_value(e, "DeclaredValue", v);
        }
        e.prop_str("ResourceKind", f.resource_kind.as_str());
        e.prop_str("ResourceSet", f.resource_set.as_str());
        e.prop_opt_str("SemanticName", f.semantic_name.as_deref());
        e.end_object();
    }
    e.end_array();
    e.key("Methods");
    e.begin_array();
    for m in &t.methods {
        e.begin_object();
        e.prop_str("Name", &m.name);
        e.prop_str("MethodKind", m.method_kind.as_str());
        write_type_ref_prop(e, "ReturnType", &m.return_type);
        e.key("Parameters");
        e.begin_array();
        for p in &m.parameters {
            e.begin_object();
            e.prop_str("Name", &p.name);
            write_type_ref_prop(e, "Type", &p.ty);
            e.prop_int("Ordinal", p.ordinal);
            e.prop_bool("HasDefaultValue", p.has_default_value);
            if let Some(v) = &p.default_value {
                write_value(e, "DefaultValue", v);
            }
            e.prop_opt_str("SemanticName", p.semantic_name.as_deref());
            e.prop_str("RefKind", p.ref_kind.name());
            e.end_object();
        }
        e.end_array();
        write_type_parameters(e, &m.type_parameters);
        e.prop_bool("IsStatic", m.is_static);
        e.prop_str("Stage", m.stage.name());
        e.prop_opt_str("SemanticName", m.semantic_name.as_deref());
        e.prop_opt_str("IrFunction", m.ir_function.as_deref());
        e.end_object();
    }
    e.end_array();
    e.key("Properties");
    e.begin_array();
    for p in &t.properties {
        e.begin_object();
        e.prop_str("Name", &p.name);
        write_type_ref_prop(e, "Type", &p.ty);
        e.prop_bool("HasGetter", p.has_getter);
        e.prop_bool("HasSetter", p.has_setter);
        e.prop_bool("IsStatic", p.is_static);
        e.prop_opt_str("IrGetter", p.ir_getter.as_deref());
        e.prop_opt_str("IrSetter", p.ir_setter.as_deref());
        e.end_object();
    }
    e.end_array();
    e.prop_opt_str("IrStruct", t.ir_struct.as_deref());
    e.prop_str("QualifiedName", &t.qualified_name());
    e.end_object();
}
