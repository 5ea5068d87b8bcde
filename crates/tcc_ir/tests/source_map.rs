//! The decoder's source map points at the parts it names, whatever the layout.

use tcc_ir::decode_artifact_with_map;

#[test]
fn offsets_point_at_instructions_functions_and_envelope_values() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/tcc");
    for name in ["control.json", "compute.json", "first-example.json"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let (artifact, map) = decode_artifact_with_map(&bytes).unwrap();
        assert_eq!(map.functions.len(), artifact.program.functions.len());
        for (f, fm) in artifact.program.functions.iter().zip(&map.functions) {
            assert_eq!(bytes[fm.start], b'{', "{name}");
            assert_eq!(bytes[fm.spans], b'[', "{name}");
            assert_eq!(fm.instructions.len(), f.instructions.len());
            for (ins, &at) in f.instructions.iter().zip(&fm.instructions) {
                assert_eq!(bytes[at], b'{', "{name}");
                // The op named at that offset is the decoded op.
                let end = at + bytes[at..].iter().position(|&b| b == b'}').unwrap();
                let text = std::str::from_utf8(&bytes[at..end]).unwrap();
                assert!(
                    text.contains(&format!("\"{}\"", ins.name())),
                    "{name}: {text}"
                );
            }
        }
        let at = map.envelope_field("frontend_id").unwrap();
        let quoted = format!("\"{}\"", artifact.envelope.frontend_id);
        assert!(bytes[at..].starts_with(quoted.as_bytes()), "{name}");
        for (i, feature) in artifact
            .envelope
            .required_engine_features
            .iter()
            .enumerate()
        {
            let quoted = format!("\"{feature}\"");
            assert!(bytes[map.engine_features[i]..].starts_with(quoted.as_bytes()));
        }
        for (i, cap) in artifact
            .envelope
            .required_host_capabilities
            .iter()
            .enumerate()
        {
            let quoted = format!("\"{cap}\"");
            assert!(bytes[map.host_capabilities[i]..].starts_with(quoted.as_bytes()));
        }
        let entry = artifact.program.entry.to_string();
        assert!(bytes[map.entry..].starts_with(entry.as_bytes()));
        assert_eq!(
            map.instruction(0, Some(u32::MAX)),
            Some(map.functions[0].start)
        );
        assert_eq!(map.instruction(usize::MAX, None), None);
    }
}
