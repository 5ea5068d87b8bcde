//! Query strings of the dashboard's JSON routes.

/// Splits `a=b&c=d` into decoded pairs (`%XX` escapes, `+` as a space);
/// `None` for a malformed escape or a value that is not UTF-8.
pub fn pairs(q: &str) -> Option<Vec<(String, String)>> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Some((decode(k)?, decode(v)?))
        })
        .collect()
}

fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                out.push(u8::from_str_radix(s.get(i + 1..i + 3)?, 16).ok()?);
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
    String::from_utf8(out).ok()
}

/// The value of `key`, if given and not empty.
pub fn get<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_and_empty_values() {
        let p = pairs("status=suspended&q=e-01%3Ax&program=&x+y=a+b").unwrap();
        assert_eq!(get(&p, "status"), Some("suspended"));
        assert_eq!(get(&p, "q"), Some("e-01:x"));
        assert_eq!(get(&p, "program"), None);
        assert_eq!(get(&p, "x y"), Some("a b"));
        assert!(pairs("q=%zz").is_none());
        assert!(pairs("q=%ff").is_none());
        assert!(pairs("q=%4").is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_query_strings_never_panic(q in ".{0,64}") {
            let _ = pairs(&q);
        }
    }
}
