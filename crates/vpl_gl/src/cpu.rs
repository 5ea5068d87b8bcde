//! The harness's draw inputs and outputs in the CPU executor's shapes
//! (`vpl::exec`), so one setup draws on GL, Vulkan, WebGL and the CPU.

use crate::render::{AttributeValue, Image, MinFilter, Texture, Wrap};
use vpl::exec;

impl Texture {
    /// The same texture and sampler state for the CPU executor.
    pub fn to_cpu(&self) -> exec::Texture {
        exec::Texture {
            width: self.width,
            height: self.height,
            levels: self.levels.clone(),
            wrap: match self.wrap {
                Wrap::Repeat => exec::Wrap::Repeat,
                Wrap::ClampToEdge => exec::Wrap::ClampToEdge,
            },
            min_filter: match self.min_filter {
                MinFilter::Nearest => exec::MinFilter::Nearest,
                MinFilter::Linear => exec::MinFilter::Linear,
                MinFilter::NearestMipmapNearest => exec::MinFilter::NearestMipmapNearest,
            },
            mag_linear: self.mag_linear,
        }
    }
}

impl AttributeValue {
    /// The same attribute data for the CPU executor.
    pub fn to_cpu(&self) -> exec::Attribute {
        match self {
            AttributeValue::Constant(v) => exec::Attribute::Constant(*v),
            AttributeValue::PerVertex(v) => exec::Attribute::PerVertex(*v),
        }
    }
}

impl From<exec::Image> for Image {
    fn from(image: exec::Image) -> Self {
        Image {
            width: image.width,
            height: image.height,
            rgba: image.rgba,
        }
    }
}

impl From<&exec::Texture> for Texture {
    fn from(t: &exec::Texture) -> Self {
        Texture {
            width: t.width,
            height: t.height,
            levels: t.levels.clone(),
            wrap: match t.wrap {
                exec::Wrap::Repeat => Wrap::Repeat,
                exec::Wrap::ClampToEdge => Wrap::ClampToEdge,
            },
            min_filter: match t.min_filter {
                exec::MinFilter::Nearest => MinFilter::Nearest,
                exec::MinFilter::Linear => MinFilter::Linear,
                exec::MinFilter::NearestMipmapNearest => MinFilter::NearestMipmapNearest,
            },
            mag_linear: t.mag_linear,
        }
    }
}
