//! Percent-encoding of path segments and query values: the service's
//! routes and the namespace guard read paths the same way.

use crate::api_error::ApiError;

/// Decodes `%XX` escapes of a path segment or query value.
pub fn percent_decode(s: &str) -> Result<String, ApiError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = s
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| ApiError::BadRequest("malformed percent escape".into()))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    let text =
        String::from_utf8(out).map_err(|_| ApiError::BadRequest("path is not UTF-8".into()))?;
    crate::storable::check("a path segment or query value", &text).map_err(ApiError::BadRequest)?;
    Ok(text)
}

/// Encodes a path segment.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
