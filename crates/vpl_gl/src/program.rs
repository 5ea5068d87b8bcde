//! Compiling and linking a [`ProgramArtifact`] on the driver, and the
//! driver's own reflection queries.
// OpenGL is a C API: every glow call (compile, link, reflection queries) is FFI.
#![allow(unsafe_code)]

use crate::GlContext;
use glow::HasContext as _;
use vpl::backends::glsl::ProgramArtifact;

/// A driver compile or link failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlError {
    /// A shader did not compile.
    #[error("the driver rejected the {stage} shader:\n{log}")]
    Compile {
        /// `vertex` or `fragment`.
        stage: &'static str,
        /// The driver's info log.
        log: String,
    },
    /// The program did not link.
    #[error("the driver could not link the program:\n{log}")]
    Link {
        /// The driver's info log.
        log: String,
    },
    /// Fragment invocations that the driver neither finished nor discarded:
    /// their pixels were never written (Mesa's llvmpipe, for one, cuts a
    /// loop off after 65 535 iterations and masks the invocation; a GPU
    /// driver resets a context whose draw runs too long).
    #[error(
        "the draw was lost: {lost} of {passed} fragment invocations did not finish \
         (the driver `{renderer}` cut them off: a loop ran past its limit or the draw timed out); \
         the image would be wrong, so none is written"
    )]
    Lost {
        /// Invocations that passed the draw but never reached the end of `main`.
        lost: u64,
        /// Invocations that were not discarded.
        passed: u64,
        /// `GL_RENDERER`.
        renderer: String,
    },
    /// The context was lost during the draw (`GL_CONTEXT_LOST`: a GPU
    /// driver resets a context whose draw runs too long).
    #[error("the draw was lost: the driver reset the OpenGL context (GL error 0x{0:x})")]
    Reset(u32),
    /// Any other GL failure (object creation, framebuffer, GL error).
    #[error("OpenGL: {0}")]
    Other(String),
}

/// The atomic counter binding the completion probe counts on.
pub(crate) const COMPLETION_BINDING: u32 = 0;

/// The fragment code with a completion probe. A function whose blocks
/// branch is emitted as a dispatch loop (`for (;;) { switch ... }`) that
/// only a `return` or `discard` leaves, so reaching the statement after
/// that loop means the driver cut the loop off (Mesa's llvmpipe stops a
/// loop after 65 535 iterations and carries on after it, leaving the
/// outputs unwritten). The probe marks that in a flag, and `main`
/// increments an atomic counter when the entry function returned without
/// the flag. The draw compares the counter with the samples that passed
/// (an occlusion query): the difference are invocations that neither
/// finished nor were discarded. The probe touches no colour, so the
/// pixels are those of the artifact's own code. Code that does not have the
/// backend's shape (`#version` first, `void main() {` ... `}` last) is
/// returned unchanged and the draw runs without the probe.
pub(crate) fn completion_probe(code: &str) -> String {
    let lines: Vec<&str> = code.lines().collect();
    let Some(main_at) = lines.iter().rposition(|l| *l == "void main() {") else {
        return code.to_string();
    };
    let main_close = lines.len() - 1;
    if !lines.first().is_some_and(|l| l.starts_with("#version")) || lines[main_close] != "}" {
        return code.to_string();
    }
    let mut probed = String::with_capacity(code.len() + 512);
    let mut in_loop = false;
    for (index, line) in lines.iter().enumerate() {
        if index == main_close && main_at < main_close {
            probed.push_str("    if (!vpl_harness_cut) {\n");
            probed.push_str("        atomicCounterIncrement(vpl_harness_completed);\n");
            probed.push_str("    }\n");
        }
        if *line == "    for (;;) {" {
            // A loop condition the compiler cannot fold keeps the code after
            // the loop reachable (the harness sets the uniform to true).
            probed.push_str("    for (; vpl_harness_go;) {\n");
        } else {
            probed.push_str(line);
            probed.push('\n');
        }
        if index == 0 {
            probed.push_str(&format!(
                "layout(binding = {COMPLETION_BINDING}, offset = 0) uniform atomic_uint vpl_harness_completed;\n\
                 uniform bool vpl_harness_go;\n\
                 bool vpl_harness_cut = false;\n"
            ));
        }
        if *line == "    for (;;) {" {
            in_loop = true;
        } else if in_loop && *line == "    }" {
            in_loop = false;
            probed.push_str("    vpl_harness_cut = true;\n");
        }
    }
    probed
}

/// Whether `code` carries the completion probe.
pub(crate) fn has_completion_probe(code: &str) -> bool {
    code.contains("vpl_harness_completed")
}

/// A linked program object, deleted on drop.
pub struct LinkedProgram<'c> {
    pub(crate) context: &'c GlContext,
    pub(crate) program: glow::Program,
    /// Whether the fragment code carries the completion probe.
    pub(crate) probed: bool,
}

impl<'c> LinkedProgram<'c> {
    /// Compiles both code strings (uploaded with their explicit lengths),
    /// binds the primary fragment output to its resolved location before
    /// linking, and links.
    pub fn build(context: &'c GlContext, artifact: &ProgramArtifact) -> Result<Self, GlError> {
        let gl = context.gl();
        let fragment_code = completion_probe(artifact.fragment_code());
        // SAFETY: the context is current on this thread; every object
        // created here is deleted before returning or by `Drop`.
        unsafe {
            let program = gl.create_program().map_err(GlError::Other)?;
            let mut shaders = Vec::new();
            let mut failure = None;
            for (kind, stage, code) in [
                (glow::VERTEX_SHADER, "vertex", artifact.vertex_code()),
                (glow::FRAGMENT_SHADER, "fragment", fragment_code.as_str()),
            ] {
                let shader = match gl.create_shader(kind) {
                    Ok(s) => s,
                    Err(e) => {
                        failure = Some(GlError::Other(e));
                        break;
                    }
                };
                gl.shader_source(shader, code);
                gl.compile_shader(shader);
                shaders.push(shader);
                if !gl.get_shader_compile_status(shader) {
                    failure = Some(GlError::Compile {
                        stage,
                        log: gl.get_shader_info_log(shader),
                    });
                    break;
                }
                gl.attach_shader(program, shader);
            }
            if failure.is_none() {
                if artifact.fragment_color_location() >= 0 {
                    gl.bind_frag_data_location(
                        program,
                        artifact.fragment_color_location() as u32,
                        artifact.fragment_color_output(),
                    );
                }
                gl.link_program(program);
                if !gl.get_program_link_status(program) {
                    failure = Some(GlError::Link {
                        log: gl.get_program_info_log(program),
                    });
                }
            }
            for shader in shaders {
                gl.detach_shader(program, shader);
                gl.delete_shader(shader);
            }
            if let Some(e) = failure {
                gl.delete_program(program);
                return Err(e);
            }
            Ok(LinkedProgram {
                context,
                program,
                probed: has_completion_probe(&fragment_code),
            })
        }
    }

    /// The raw program object.
    pub fn raw(&self) -> glow::Program {
        self.program
    }

    /// `glGetAttribLocation`; `None` when the attribute is not active.
    pub fn attribute_location(&self, name: &str) -> Option<u32> {
        // SAFETY: current context, live program.
        unsafe { self.context.gl().get_attrib_location(self.program, name) }
    }

    /// `glGetFragDataLocation`; -1 when unknown.
    pub fn frag_data_location(&self, name: &str) -> i32 {
        // SAFETY: current context, live program.
        unsafe { self.context.gl().get_frag_data_location(self.program, name) }
    }

    /// `GL_UNIFORM_BLOCK_DATA_SIZE` of an active block.
    pub fn uniform_block_size(&self, block: &str) -> Option<u64> {
        self.block_parameter(block, glow::UNIFORM_BLOCK_DATA_SIZE)
            .map(|v| v as u64)
    }

    /// `GL_UNIFORM_BLOCK_BINDING` of an active block.
    pub fn uniform_block_binding(&self, block: &str) -> Option<i32> {
        self.block_parameter(block, glow::UNIFORM_BLOCK_BINDING)
    }

    fn block_parameter(&self, block: &str, parameter: u32) -> Option<i32> {
        let gl = self.context.gl();
        // SAFETY: current context, live program; the index comes from GL.
        unsafe {
            let index = gl.get_uniform_block_index(self.program, block)?;
            Some(gl.get_active_uniform_block_parameter_i32(self.program, index, parameter))
        }
    }

    /// `GL_UNIFORM_OFFSET` of an active block member (e.g.
    /// `vpl_Block0.vpl_m1`, or `vpl_Block0.vpl_m2[0]` for arrays).
    pub fn uniform_offset(&self, name: &str) -> Option<i32> {
        let gl = self.context.gl();
        // SAFETY: current context, live program; the index comes from GL.
        unsafe {
            let indices = gl.get_uniform_indices(self.program, &[name]);
            let index = indices.first().copied().flatten()?;
            gl.get_active_uniforms_parameter(self.program, &[index], glow::UNIFORM_OFFSET)
                .first()
                .copied()
        }
    }

    /// `glGetUniformLocation`.
    pub fn uniform_location(&self, name: &str) -> Option<glow::UniformLocation> {
        // SAFETY: current context, live program.
        unsafe { self.context.gl().get_uniform_location(self.program, name) }
    }
}

impl Drop for LinkedProgram<'_> {
    fn drop(&mut self) {
        // SAFETY: the context outlives this program and is current.
        unsafe { self.context.gl().delete_program(self.program) }
    }
}
