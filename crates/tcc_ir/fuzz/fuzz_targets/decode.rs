//! Arbitrary bytes through the decoder, validator and encoder.
//!
//! Invariants checked: no panic anywhere; whatever decodes re-encodes to
//! canonical bytes that decode to the same artifact and re-encode
//! identically; the hash of the decoded artifact equals the hash of its
//! re-decoded canonical form.
//!
//! Run: `cd crates/tcc_ir/fuzz && cargo fuzz run -s none decode corpus/decode seeds/decode -- -max_total_time=60`

#![no_main]

use libfuzzer_sys::fuzz_target;
use tcc_ir::{FeatureSet, compute_hash, decode_artifact, encode_artifact, validate_all};

fuzz_target!(|data: &[u8]| {
    let Ok(artifact) = decode_artifact(data) else {
        return;
    };
    let engine = FeatureSet::all_engine_features();
    let host = FeatureSet::all_host_capabilities();
    let _ = validate_all(&artifact, &engine, &host);
    let canonical = encode_artifact(&artifact);
    let again = decode_artifact(&canonical).expect("canonical encoding must decode");
    assert_eq!(again, artifact, "decode(encode(a)) != a");
    assert_eq!(encode_artifact(&again), canonical, "encoding is not stable");
    assert_eq!(compute_hash(&again), compute_hash(&artifact));
});
