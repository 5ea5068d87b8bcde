//! Headless OpenGL 4.2 core contexts on Mesa's EGL surfaceless platform.
//!
//! The EGL library is loaded once per process and the surfaceless display
//! is shared (EGL displays are per-platform singletons); it is initialized
//! once and never terminated, so concurrent contexts on other threads stay
//! valid. Each [`GlContext`] is made current on the thread that created it,
//! is not `Send`, and is destroyed (and released from the thread) on drop.
// EGL and OpenGL are C APIs: loading libEGL, creating the display and context and
// the `Send`/`Sync` promise for the shared display are FFI that Rust cannot check.
#![allow(unsafe_code)]

use khronos_egl as egl;
use std::sync::OnceLock;

/// `EGL_PLATFORM_SURFACELESS_MESA`.
pub const PLATFORM_SURFACELESS_MESA: egl::Enum = 0x31DD;

/// Why no context could be created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no headless OpenGL 4.2 core context: {0}")]
pub struct ContextError(pub String);

type Egl = egl::DynamicInstance<egl::EGL1_5>;

struct SharedDisplay {
    egl: Egl,
    display: egl::Display,
}

// SAFETY: the EGL instance is a table of function pointers into a library
// that stays loaded, and an EGL display handle is a process-wide value that
// EGL allows to be used from any thread.
unsafe impl Send for SharedDisplay {}
unsafe impl Sync for SharedDisplay {}

fn shared_display() -> Result<&'static SharedDisplay, ContextError> {
    static DISPLAY: OnceLock<Result<SharedDisplay, ContextError>> = OnceLock::new();
    DISPLAY
        .get_or_init(|| {
            // SAFETY: loading the system EGL library; it implements the EGL API.
            let egl = unsafe { Egl::load_required() }
                .map_err(|e| ContextError(format!("cannot load libEGL 1.5: {e}")))?;
            // SAFETY: the surfaceless platform takes no native display.
            let display = unsafe {
                egl.get_platform_display(
                    PLATFORM_SURFACELESS_MESA,
                    egl::DEFAULT_DISPLAY,
                    &[egl::ATTRIB_NONE],
                )
            }
            .map_err(|e| ContextError(format!("no EGL surfaceless display: {e}")))?;
            egl.initialize(display)
                .map_err(|e| ContextError(format!("eglInitialize failed: {e}")))?;
            Ok(SharedDisplay { egl, display })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// An OpenGL 4.2 (or later, compatible) core-profile context, current on
/// the creating thread, with no surface. Render into framebuffer objects.
pub struct GlContext {
    shared: &'static SharedDisplay,
    context: egl::Context,
    gl: glow::Context,
    // Not Send/Sync: the context is current on this thread only.
    _thread_bound: std::marker::PhantomData<*const ()>,
}

impl GlContext {
    /// Creates a 4.2 core context with a PBUFFER-capable config and makes
    /// it current on this thread without a surface.
    pub fn new() -> Result<Self, ContextError> {
        let shared = shared_display()?;
        let egl = &shared.egl;
        egl.bind_api(egl::OPENGL_API)
            .map_err(|e| ContextError(format!("eglBindAPI(OPENGL_API) failed: {e}")))?;
        let config_attributes = [
            egl::SURFACE_TYPE,
            egl::PBUFFER_BIT,
            egl::RENDERABLE_TYPE,
            egl::OPENGL_BIT,
            egl::RED_SIZE,
            8,
            egl::GREEN_SIZE,
            8,
            egl::BLUE_SIZE,
            8,
            egl::ALPHA_SIZE,
            8,
            egl::NONE,
        ];
        let config = egl
            .choose_first_config(shared.display, &config_attributes)
            .map_err(|e| ContextError(format!("eglChooseConfig failed: {e}")))?
            .ok_or_else(|| ContextError("no PBUFFER RGBA8 OpenGL config".into()))?;
        let context_attributes = [
            egl::CONTEXT_MAJOR_VERSION,
            4,
            egl::CONTEXT_MINOR_VERSION,
            2,
            egl::CONTEXT_OPENGL_PROFILE_MASK,
            egl::CONTEXT_OPENGL_CORE_PROFILE_BIT,
            egl::NONE,
        ];
        let context = egl
            .create_context(shared.display, config, None, &context_attributes)
            .map_err(|e| ContextError(format!("cannot create a 4.2 core context: {e}")))?;
        if let Err(e) = egl.make_current(shared.display, None, None, Some(context)) {
            let _ = egl.destroy_context(shared.display, context);
            return Err(ContextError(format!(
                "cannot make the context current without a surface: {e}"
            )));
        }
        // SAFETY: the context is current on this thread; the loader returns
        // entry points of the loaded EGL/GL implementation.
        let gl = unsafe {
            glow::Context::from_loader_function(|name| {
                egl.get_proc_address(name)
                    .map_or(std::ptr::null(), |f| f as *const std::ffi::c_void)
            })
        };
        let context = GlContext {
            shared,
            context,
            gl,
            _thread_bound: std::marker::PhantomData,
        };
        let version = context.gl_version();
        if version < (4, 2) {
            return Err(ContextError(format!(
                "the driver created OpenGL {}.{}, 4.2 core is required",
                version.0, version.1
            )));
        }
        Ok(context)
    }

    /// The GL function table.
    pub fn gl(&self) -> &glow::Context {
        &self.gl
    }

    /// `(major, minor)` of the current context.
    pub fn gl_version(&self) -> (u32, u32) {
        use glow::HasContext as _;
        let v = self.gl.version();
        (v.major, v.minor)
    }

    /// The renderer string (e.g. `llvmpipe (LLVM 19.1.7, 256 bits)`).
    pub fn renderer(&self) -> String {
        use glow::HasContext as _;
        // SAFETY: the context is current.
        unsafe { self.gl.get_parameter_string(glow::RENDERER) }
    }
}

impl Drop for GlContext {
    fn drop(&mut self) {
        let egl = &self.shared.egl;
        let _ = egl.make_current(self.shared.display, None, None, None);
        let _ = egl.destroy_context(self.shared.display, self.context);
        let _ = egl.release_thread();
    }
}
