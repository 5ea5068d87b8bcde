//! The ZLM text form (docs/zlm/text.md).

use crate::hash::to_hex;
use crate::model::Type;

/// Spelling of a type without name resolution (nominals print as `#hex`).
pub fn type_text_raw(t: &Type) -> String {
    match t {
        Type::Scalar(k) => k.text().to_string(),
        Type::Unit => "Unit".into(),
        Type::Never => "Never".into(),
        Type::Nominal(id) => format!("#{}", to_hex(id)),
        Type::Result(a, b) => format!("Result<{}, {}>", type_text_raw(a), type_text_raw(b)),
        Type::ArrayByte => "Array<Byte>".into(),
        Type::SliceByte => "Slice<Byte>".into(),
        Type::Ref(a) => format!("Ref<{}>", type_text_raw(a)),
        Type::Mut(a) => format!("Mut<{}>", type_text_raw(a)),
        Type::AllocatorBytesError => "Allocator<BytesError>".into(),
    }
}
