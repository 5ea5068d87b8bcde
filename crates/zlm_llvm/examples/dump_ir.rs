//! Prints the lowered LLVM IR of a text module (`.zlt`), or with `--opt`
//! the IR after the convenience record's `default<O2>` pipeline:
//! `cargo run -p zlm_llvm --example dump_ir -- FILE.zlt [--opt]`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = args.first().ok_or("usage: dump_ir FILE.zlt [--opt]")?;
    let text = std::fs::read_to_string(file)?;
    let m = zlm::text::parse(&text)?;
    let checked = zlm::decode::from_model(&m, &[])?;
    let unit = zlm_llvm::lower(&checked, &zlm_llvm::Scope::Module)?;
    if args.iter().any(|a| a == "--opt") {
        let rec = zlm_llvm::TargetRecord::convenience("cc")?;
        print!("{}", zlm_llvm::backend::optimized_ir(&unit.ir, &rec)?);
    } else {
        print!("{}", unit.ir);
    }
    Ok(())
}
