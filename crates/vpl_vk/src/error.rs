//! The harness's error type.

/// Why a Vulkan render failed.
#[derive(Debug, thiserror::Error)]
pub enum VkError {
    /// No loader, instance or suitable device (tests skip on this one).
    #[error("no Vulkan device: {0}")]
    Unavailable(String),
    /// The SPIR-V target refused the module.
    #[error(transparent)]
    Target(vpl::backends::naga_targets::LowerError),
    /// The reflection document lacks what the harness needs.
    #[error("unexpected SPIR-V reflection: {0}")]
    Reflection(String),
    /// The request cannot be drawn (size, texture data).
    #[error("bad render request: {0}")]
    Request(String),
    /// A Vulkan call failed.
    #[error("Vulkan: {0}")]
    Vulkan(String),
}
