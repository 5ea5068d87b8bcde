//! LLVM itself: target initialization, parsing and verifying the lowered
//! IR, the optimization pipeline, object emission.

use crate::error::LlvmError;
pub use crate::llvm_init::init;
use crate::target::TargetRecord;
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{FileType, Target, TargetMachine, TargetTriple};

/// Parses and verifies `ir` in `ctx`.
pub(crate) fn parse<'ctx>(ctx: &'ctx Context, ir: &str) -> Result<Module<'ctx>, LlvmError> {
    let buf = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "zlm");
    let module = ctx
        .create_module_from_ir(buf)
        .map_err(|e| LlvmError::Backend(e.to_string()))?;
    module
        .verify()
        .map_err(|e| LlvmError::Backend(e.to_string()))?;
    Ok(module)
}

/// Runs LLVM's module verifier on lowered IR (every lowered module must
/// pass; tests call this on each one, and a debug build's lowering does).
pub fn verify(ir: &str) -> Result<(), LlvmError> {
    let ctx = Context::create();
    parse(&ctx, ir).map(|_| ())
}

/// The target machine a record describes (nothing from the host).
pub(crate) fn machine(record: &TargetRecord) -> Result<TargetMachine, LlvmError> {
    init();
    record.check()?;
    let triple = TargetTriple::create(&record.triple);
    let target = Target::from_triple(&triple)
        .map_err(|e| LlvmError::Record(format!("triple {}: {e}", record.triple)))?;
    let (opt, _) = record.opt_level()?;
    target
        .create_target_machine(
            &triple,
            &record.cpu,
            &record.features,
            opt,
            record.reloc()?,
            record.code_model_value()?,
        )
        .ok_or_else(|| LlvmError::Record(format!("no target machine for {}", record.triple)))
}

/// Runs the record's optimization pipeline over `module` for `tm`.
pub(crate) fn optimize(
    module: &Module<'_>,
    tm: &TargetMachine,
    level: &str,
) -> Result<(), LlvmError> {
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    module
        .run_passes(
            &format!("default<{level}>"),
            tm,
            PassBuilderOptions::create(),
        )
        .map_err(|e| LlvmError::Backend(e.to_string()))
}

/// An object file for `ir` under `record`.
pub fn object(ir: &str, record: &TargetRecord) -> Result<Vec<u8>, LlvmError> {
    let tm = machine(record)?;
    let ctx = Context::create();
    let module = parse(&ctx, ir)?;
    let (_, level) = record.opt_level()?;
    optimize(&module, &tm, level)?;
    let buf = tm
        .write_to_memory_buffer(&module, FileType::Object)
        .map_err(|e| LlvmError::Backend(e.to_string()))?;
    Ok(buf.as_slice().to_vec())
}

/// The optimized IR text under `record` (for inspection).
pub fn optimized_ir(ir: &str, record: &TargetRecord) -> Result<String, LlvmError> {
    let tm = machine(record)?;
    let ctx = Context::create();
    let module = parse(&ctx, ir)?;
    let (_, level) = record.opt_level()?;
    optimize(&module, &tm, level)?;
    Ok(module.print_to_string().to_string())
}
