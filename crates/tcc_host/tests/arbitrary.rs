//! Arbitrary input never panics the readers: HTTP responses, percent
//! escapes, plain JSON conversion, tagged-value checks, provider TOML.

use proptest::prelude::*;
use std::sync::Arc;
use tcc_host::store::Store;

fn json_strategy() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null)),
        ".{0,8}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(".{0,4}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn postgres_url_checks_never_panic(s in "(postgres://)?.{0,40}(\\?schema=.{0,8})?") {
        let _ = tcc_host::store::pg::check_url(&s);
    }

    #[test]
    fn percent_decode_never_panics(s in ".{0,40}") {
        let _ = tcc_host::service::percent_decode(&s);
        let enc = tcc_host::service::percent_encode(&s);
        // A NUL is refused (the store cannot hold it); anything else round-trips.
        match tcc_host::service::percent_decode(&enc) {
            Ok(d) => prop_assert_eq!(d, s),
            Err(e) => prop_assert!(s.contains('\0'), "{e}"),
        }
    }

    #[test]
    fn plain_json_round_trips(j in json_strategy()) {
        let t = tcc_host::values::plain_to_tagged(&j).unwrap();
        prop_assert!(tcc_host::values::check_tagged(&t).is_ok());
        // Numbers compare by value (0 and 0.0 are one binary64).
        prop_assert_eq!(
            tcc_ir::to_canonical(&tcc_host::values::tagged_to_plain(&t)),
            tcc_ir::to_canonical(&j)
        );
    }

    #[test]
    fn tagged_check_never_panics(j in json_strategy()) {
        let _ = tcc_host::values::check_tagged(&j);
        let _ = tcc_host::values::tagged_to_plain(&j);
    }

    #[test]
    fn url_split_never_panics(s in ".{0,40}") {
        let _ = tcc_host::http::split_url(&s);
        let _ = tcc_host::http::split_url(&format!("http://{s}"));
    }
}

#[test]
fn provider_toml_never_panics() {
    let d = std::env::temp_dir().join(tcc_host::random_id("tcc-arb-"));
    std::fs::create_dir_all(&d).unwrap();
    let store: Arc<dyn Store> =
        Arc::new(tcc_host::store::sqlite::SqliteStore::open(&d.join("a.db")).unwrap());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(256));
    runner
        .run(&"[\\[\\]a-z=\"0-9 \n.*]{0,60}", |s| {
            let _ = tcc_host::providers::Providers::from_toml(&s, store.clone());
            Ok(())
        })
        .unwrap();
    drop(store);
    let _ = std::fs::remove_dir_all(&d);
}
