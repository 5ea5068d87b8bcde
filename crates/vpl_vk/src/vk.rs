//! Every Vulkan call of the harness.
//!
//! `unsafe` is unavoidable here: ash exposes the Vulkan C API directly, and
//! every call's validity (live handles, matching devices, synchronised
//! access, correct structure chains) is the caller's responsibility. It
//! is confined to this module. The discipline: each object is created and
//! recorded in a [`Frame`] that destroys it on drop (after the queue is
//! idle), handles never leave the module, and every draw is submitted and
//! waited for before its objects go.
#![allow(unsafe_code)]

use crate::error::VkError;
use crate::program::{Resource, VkProgram};
use crate::request::RenderRequest;
use crate::uniforms::UniformData;
use ash::vk;
use std::borrow::Cow;
use std::ffi::CString;
use vpl_gl::{AttributeValue, Image, MinFilter, Texture, Wrap};

fn err(what: &str) -> impl Fn(vk::Result) -> VkError + '_ {
    move |e| VkError::Vulkan(format!("{what}: {e}"))
}

/// A Vulkan instance and device (the first with a graphics queue,
/// preferring a CPU implementation such as lavapipe).
pub struct VkContext {
    _entry: ash::Entry,
    instance: ash::Instance,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    queue: vk::Queue,
    family: u32,
    memory: vk::PhysicalDeviceMemoryProperties,
    /// The device's name.
    pub device_name: String,
}

impl VkContext {
    /// Loads the Vulkan loader and creates a headless device.
    pub fn new() -> Result<Self, VkError> {
        // SAFETY: loading the system loader library runs its initialisers;
        // libvulkan's are sound to run once per process load.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| VkError::Unavailable(format!("no Vulkan loader: {e}")))?;
        let name = CString::new("irkit vpl_vk").map_err(|_| VkError::Vulkan("name".into()))?;
        let app = vk::ApplicationInfo::default()
            .application_name(&name)
            .api_version(vk::make_api_version(0, 1, 1, 0));
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: the create info and what it points to outlive the call.
        let instance = unsafe { entry.create_instance(&info, None) }
            .map_err(|e| VkError::Unavailable(format!("no Vulkan instance: {e}")))?;
        match Self::with_instance(entry, instance) {
            Ok(c) => Ok(c),
            Err(failed) => {
                let (instance, e) = *failed;
                // SAFETY: nothing was created from the instance.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    fn with_instance(
        entry: ash::Entry,
        instance: ash::Instance,
    ) -> Result<Self, Box<(ash::Instance, VkError)>> {
        // SAFETY: the instance is live; the queried handles belong to it.
        unsafe {
            let devices = match instance.enumerate_physical_devices() {
                Ok(d) => d,
                Err(e) => return Err(Box::new((instance, VkError::Unavailable(format!("{e}"))))),
            };
            let mut candidates: Vec<(vk::PhysicalDevice, u32, bool, String)> = Vec::new();
            for pd in devices {
                let props = instance.get_physical_device_properties(pd);
                if props.api_version < vk::make_api_version(0, 1, 1, 0) {
                    continue;
                }
                let families = instance.get_physical_device_queue_family_properties(pd);
                let Some(family) = families
                    .iter()
                    .position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS))
                else {
                    continue;
                };
                let name = props
                    .device_name_as_c_str()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let cpu = props.device_type == vk::PhysicalDeviceType::CPU;
                candidates.push((pd, family as u32, cpu, name));
            }
            candidates.sort_by_key(|c| !c.2);
            let Some((physical, family, _, device_name)) = candidates.into_iter().next() else {
                return Err(Box::new((
                    instance,
                    VkError::Unavailable("no Vulkan 1.1 device with a graphics queue".into()),
                )));
            };
            let priorities = [1.0f32];
            let queues = [vk::DeviceQueueCreateInfo::default()
                .queue_family_index(family)
                .queue_priorities(&priorities)];
            let info = vk::DeviceCreateInfo::default().queue_create_infos(&queues);
            let device = match instance.create_device(physical, &info, None) {
                Ok(d) => d,
                Err(e) => {
                    return Err(Box::new((
                        instance,
                        VkError::Unavailable(format!("device: {e}")),
                    )));
                }
            };
            let queue = device.get_device_queue(family, 0);
            let memory = instance.get_physical_device_memory_properties(physical);
            Ok(VkContext {
                _entry: entry,
                instance,
                physical,
                device,
                queue,
                family,
                memory,
                device_name,
            })
        }
    }

    fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Result<u32, VkError> {
        (0..self.memory.memory_type_count)
            .find(|&i| {
                bits & (1 << i) != 0
                    && self.memory.memory_types[i as usize]
                        .property_flags
                        .contains(flags)
            })
            .ok_or_else(|| VkError::Vulkan(format!("no memory type with {flags:?}")))
    }
}

impl Drop for VkContext {
    fn drop(&mut self) {
        // SAFETY: every object of the device was destroyed by its frame.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
        let _ = self.physical;
    }
}

/// The objects of one draw, destroyed in reverse order on drop.
struct Frame<'c> {
    cx: &'c VkContext,
    buffers: Vec<(vk::Buffer, vk::DeviceMemory)>,
    images: Vec<(vk::Image, vk::DeviceMemory)>,
    views: Vec<vk::ImageView>,
    samplers: Vec<vk::Sampler>,
    modules: Vec<vk::ShaderModule>,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    pools: Vec<vk::DescriptorPool>,
    pipeline_layouts: Vec<vk::PipelineLayout>,
    render_passes: Vec<vk::RenderPass>,
    framebuffers: Vec<vk::Framebuffer>,
    pipelines: Vec<vk::Pipeline>,
    command_pools: Vec<vk::CommandPool>,
    fences: Vec<vk::Fence>,
}

impl Drop for Frame<'_> {
    fn drop(&mut self) {
        let d = &self.cx.device;
        // SAFETY: the queue is idle (every submission was waited for or
        // never made); all objects were created on this device.
        unsafe {
            let _ = d.queue_wait_idle(self.cx.queue);
            for f in self.fences.drain(..) {
                d.destroy_fence(f, None);
            }
            for p in self.command_pools.drain(..) {
                d.destroy_command_pool(p, None);
            }
            for p in self.pipelines.drain(..) {
                d.destroy_pipeline(p, None);
            }
            for f in self.framebuffers.drain(..) {
                d.destroy_framebuffer(f, None);
            }
            for r in self.render_passes.drain(..) {
                d.destroy_render_pass(r, None);
            }
            for l in self.pipeline_layouts.drain(..) {
                d.destroy_pipeline_layout(l, None);
            }
            for p in self.pools.drain(..) {
                d.destroy_descriptor_pool(p, None);
            }
            for l in self.set_layouts.drain(..) {
                d.destroy_descriptor_set_layout(l, None);
            }
            for m in self.modules.drain(..) {
                d.destroy_shader_module(m, None);
            }
            for s in self.samplers.drain(..) {
                d.destroy_sampler(s, None);
            }
            for v in self.views.drain(..) {
                d.destroy_image_view(v, None);
            }
            for (i, m) in self.images.drain(..) {
                d.destroy_image(i, None);
                d.free_memory(m, None);
            }
            for (b, m) in self.buffers.drain(..) {
                d.destroy_buffer(b, None);
                d.free_memory(m, None);
            }
        }
    }
}

impl<'c> Frame<'c> {
    fn new(cx: &'c VkContext) -> Self {
        Frame {
            cx,
            buffers: Vec::new(),
            images: Vec::new(),
            views: Vec::new(),
            samplers: Vec::new(),
            modules: Vec::new(),
            set_layouts: Vec::new(),
            pools: Vec::new(),
            pipeline_layouts: Vec::new(),
            render_passes: Vec::new(),
            framebuffers: Vec::new(),
            pipelines: Vec::new(),
            command_pools: Vec::new(),
            fences: Vec::new(),
        }
    }

    /// Device memory for `req`, of the first memory type that has one of
    /// the property sets in `preferred` (tried in order). The caller binds
    /// it and records it with its resource, which frees it on drop.
    fn memory(
        &self,
        req: vk::MemoryRequirements,
        preferred: &[vk::MemoryPropertyFlags],
    ) -> Result<vk::DeviceMemory, VkError> {
        let mut kind = Err(VkError::Vulkan("no memory type".into()));
        for &flags in preferred {
            kind = self.cx.memory_type(req.memory_type_bits, flags);
            if kind.is_ok() {
                break;
            }
        }
        let kind = kind?;
        // SAFETY: a valid allocate info on this device.
        unsafe {
            self.cx.device.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(kind),
                None,
            )
        }
        .map_err(err("memory"))
    }

    /// A host-visible, coherent buffer holding `data` (at least 16 bytes).
    fn buffer(&mut self, usage: vk::BufferUsageFlags, data: &[u8]) -> Result<vk::Buffer, VkError> {
        let d = &self.cx.device;
        let size = data.len().max(16) as u64;
        // SAFETY: valid create infos; memory is bound once, mapped within
        // its size and unmapped before use by the device.
        unsafe {
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(size)
                        .usage(usage)
                        .sharing_mode(vk::SharingMode::EXCLUSIVE),
                    None,
                )
                .map_err(err("buffer"))?;
            let memory = match self.memory(
                d.get_buffer_memory_requirements(buffer),
                &[vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT],
            ) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    return Err(e);
                }
            };
            self.buffers.push((buffer, memory));
            d.bind_buffer_memory(buffer, memory, 0)
                .map_err(err("bind buffer"))?;
            let ptr = d
                .map_memory(memory, 0, size, vk::MemoryMapFlags::empty())
                .map_err(err("map"))? as *mut u8;
            std::ptr::write_bytes(ptr, 0, size as usize);
            std::ptr::copy_nonoverlapping(data.as_ptr(), ptr, data.len());
            d.unmap_memory(memory);
            Ok(buffer)
        }
    }

    fn read_buffer(&self, buffer: vk::Buffer, len: usize) -> Result<Vec<u8>, VkError> {
        let d = &self.cx.device;
        let memory = self
            .buffers
            .iter()
            .find(|(b, _)| *b == buffer)
            .map(|(_, m)| *m)
            .ok_or_else(|| VkError::Vulkan("unknown buffer".into()))?;
        // SAFETY: the device finished writing (queue idle); `len` is within
        // the buffer's size.
        unsafe {
            let ptr = d
                .map_memory(memory, 0, len as u64, vk::MemoryMapFlags::empty())
                .map_err(err("map"))? as *const u8;
            let out = std::slice::from_raw_parts(ptr, len).to_vec();
            d.unmap_memory(memory);
            Ok(out)
        }
    }

    fn image(
        &mut self,
        width: u32,
        height: u32,
        levels: u32,
        usage: vk::ImageUsageFlags,
    ) -> Result<(vk::Image, vk::ImageView), VkError> {
        let d = &self.cx.device;
        // SAFETY: valid create infos; memory bound once.
        unsafe {
            let image = d
                .create_image(
                    &vk::ImageCreateInfo::default()
                        .image_type(vk::ImageType::TYPE_2D)
                        .format(vk::Format::R8G8B8A8_UNORM)
                        .extent(vk::Extent3D {
                            width,
                            height,
                            depth: 1,
                        })
                        .mip_levels(levels)
                        .array_layers(1)
                        .samples(vk::SampleCountFlags::TYPE_1)
                        .tiling(vk::ImageTiling::OPTIMAL)
                        .usage(usage)
                        .sharing_mode(vk::SharingMode::EXCLUSIVE)
                        .initial_layout(vk::ImageLayout::UNDEFINED),
                    None,
                )
                .map_err(err("image"))?;
            let memory = match self.memory(
                d.get_image_memory_requirements(image),
                &[
                    vk::MemoryPropertyFlags::DEVICE_LOCAL,
                    vk::MemoryPropertyFlags::empty(),
                ],
            ) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_image(image, None);
                    return Err(e);
                }
            };
            self.images.push((image, memory));
            d.bind_image_memory(image, memory, 0)
                .map_err(err("bind image"))?;
            let view = d
                .create_image_view(
                    &vk::ImageViewCreateInfo::default()
                        .image(image)
                        .view_type(vk::ImageViewType::TYPE_2D)
                        .format(vk::Format::R8G8B8A8_UNORM)
                        .subresource_range(range(0, levels)),
                    None,
                )
                .map_err(err("image view"))?;
            self.views.push(view);
            Ok((image, view))
        }
    }
}

/// The request's texture bound to sampler `name`, or the checkerboard
/// default.
fn texture_named<'r>(request: &'r RenderRequest, name: &str) -> Cow<'r, Texture> {
    request
        .textures
        .iter()
        .find(|(n, _)| n == name)
        .map_or_else(
            || Cow::Owned(Texture::checkerboard()),
            |(_, t)| Cow::Borrowed(t),
        )
}

/// A buffer ↔ image copy of mip level `level` (`width` × `height`).
fn copy_region(level: u32, width: u32, height: u32) -> vk::BufferImageCopy {
    vk::BufferImageCopy::default()
        .image_subresource(vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: level,
            base_array_layer: 0,
            layer_count: 1,
        })
        .image_extent(vk::Extent3D {
            width,
            height,
            depth: 1,
        })
}

fn range(base: u32, levels: u32) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: base,
        level_count: levels,
        base_array_layer: 0,
        layer_count: 1,
    }
}

fn barrier(
    image: vk::Image,
    from: vk::ImageLayout,
    to: vk::ImageLayout,
    src: vk::AccessFlags,
    dst: vk::AccessFlags,
    levels: u32,
) -> vk::ImageMemoryBarrier<'static> {
    vk::ImageMemoryBarrier::default()
        .old_layout(from)
        .new_layout(to)
        .src_access_mask(src)
        .dst_access_mask(dst)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(range(0, levels))
}

/// Draws `request` with `program` and reads the framebuffer back (rows
/// top-down).
pub fn render(
    cx: &VkContext,
    program: &VkProgram,
    uniforms: &UniformData,
    request: &RenderRequest,
) -> Result<Image, VkError> {
    let (w, h) = (request.width, request.height);
    if w == 0 || h == 0 || w > vpl_gl::render::MAX_SIZE || h > vpl_gl::render::MAX_SIZE {
        return Err(VkError::Request(format!("framebuffer size {w}x{h}")));
    }
    if program.color_location >= 8 {
        return Err(VkError::Request(format!(
            "primary output location {} is beyond 8 attachments",
            program.color_location
        )));
    }
    let d = &cx.device;
    let mut frame = Frame::new(cx);
    // Vertex data: the quad at location 0, texture coordinates at 1, and
    // the request's attributes; four vertices of a triangle strip.
    let [x0, y0, x1, y1] = request.quad;
    let mut per_location: Vec<(u32, [[f32; 4]; 4])> = vec![
        (
            0,
            [
                [x0, y0, 0.0, 1.0],
                [x1, y0, 0.0, 1.0],
                [x0, y1, 0.0, 1.0],
                [x1, y1, 0.0, 1.0],
            ],
        ),
        (
            1,
            [
                [0.0, 0.0, 0.0, 1.0],
                [1.0, 0.0, 0.0, 1.0],
                [0.0, 1.0, 0.0, 1.0],
                [1.0, 1.0, 0.0, 1.0],
            ],
        ),
    ];
    for (loc, value) in &request.attributes {
        per_location.retain(|(l, _)| l != loc);
        per_location.push((
            *loc,
            match value {
                AttributeValue::Constant(v) => [*v; 4],
                AttributeValue::PerVertex(v) => *v,
            },
        ));
    }
    let mut vertex_buffers = Vec::new();
    let mut bindings = Vec::new();
    let mut attributes = Vec::new();
    for input in &program.inputs {
        for l in input.location..input.location + input.locations {
            let data = per_location
                .iter()
                .find(|(loc, _)| *loc == l)
                .map(|(_, d)| *d)
                .unwrap_or([[0.0, 0.0, 0.0, 1.0]; 4]);
            let bytes: Vec<u8> = data
                .iter()
                .flat_map(|v| {
                    v.iter().flat_map(|c| {
                        if input.integer {
                            (*c as i32).to_le_bytes()
                        } else {
                            c.to_le_bytes()
                        }
                    })
                })
                .collect();
            let binding = bindings.len() as u32;
            vertex_buffers.push(frame.buffer(vk::BufferUsageFlags::VERTEX_BUFFER, &bytes)?);
            bindings.push(
                vk::VertexInputBindingDescription::default()
                    .binding(binding)
                    .stride(16)
                    .input_rate(vk::VertexInputRate::VERTEX),
            );
            attributes.push(
                vk::VertexInputAttributeDescription::default()
                    .location(l)
                    .binding(binding)
                    .format(if input.integer {
                        vk::Format::R32G32B32A32_SINT
                    } else {
                        vk::Format::R32G32B32A32_SFLOAT
                    })
                    .offset(0),
            );
        }
    }

    // Target image and readback buffer.
    let (target, target_view) = frame.image(
        w,
        h,
        1,
        vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC,
    )?;
    let readback = frame.buffer(
        vk::BufferUsageFlags::TRANSFER_DST,
        &vec![0u8; (w * h * 4) as usize],
    )?;

    // Descriptors.
    let mut layout_bindings = Vec::new();
    for r in &program.resources {
        let (binding, kind) = match r {
            Resource::UniformBuffer { binding, .. } => {
                (*binding, vk::DescriptorType::UNIFORM_BUFFER)
            }
            Resource::Texture { binding, .. } => (*binding, vk::DescriptorType::SAMPLED_IMAGE),
            Resource::Sampler { binding, .. } => (*binding, vk::DescriptorType::SAMPLER),
        };
        layout_bindings.push(
            vk::DescriptorSetLayoutBinding::default()
                .binding(binding)
                .descriptor_type(kind)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::ALL_GRAPHICS),
        );
    }

    // SAFETY: from here on every call uses objects created above on this
    // device and recorded in `frame`; the command buffer is recorded,
    // submitted once and waited for before `frame` drops.
    unsafe {
        let command_pool = d
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(cx.family),
                None,
            )
            .map_err(err("command pool"))?;
        frame.command_pools.push(command_pool);
        let cmd = d
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(command_pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )
            .map_err(err("command buffer"))?[0];
        d.begin_command_buffer(
            cmd,
            &vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
        )
        .map_err(err("begin"))?;

        // Textures: staging copies of every level, then shader-readable.
        let mut image_infos: Vec<(u32, vk::DescriptorImageInfo)> = Vec::new();
        let mut sampler_infos: Vec<(u32, vk::DescriptorImageInfo)> = Vec::new();
        for r in &program.resources {
            match r {
                Resource::Texture { name, binding } => {
                    let texture = texture_named(request, name);
                    let levels = texture.levels.len().max(1) as u32;
                    let (image, view) = frame.image(
                        texture.width,
                        texture.height,
                        levels,
                        vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST,
                    )?;
                    d.cmd_pipeline_barrier(
                        cmd,
                        vk::PipelineStageFlags::TOP_OF_PIPE,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::DependencyFlags::empty(),
                        &[],
                        &[],
                        &[barrier(
                            image,
                            vk::ImageLayout::UNDEFINED,
                            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                            vk::AccessFlags::empty(),
                            vk::AccessFlags::TRANSFER_WRITE,
                            levels,
                        )],
                    );
                    for (level, pixels) in texture.levels.iter().enumerate() {
                        let lw = (texture.width >> level).max(1);
                        let lh = (texture.height >> level).max(1);
                        if pixels.len() != (lw * lh * 4) as usize {
                            return Err(VkError::Request(format!(
                                "texture {name:?} level {level} has {} bytes, {lw}x{lh} RGBA8 needs {}",
                                pixels.len(),
                                lw * lh * 4
                            )));
                        }
                        let staging = frame.buffer(vk::BufferUsageFlags::TRANSFER_SRC, pixels)?;
                        d.cmd_copy_buffer_to_image(
                            cmd,
                            staging,
                            image,
                            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                            &[copy_region(level as u32, lw, lh)],
                        );
                    }
                    d.cmd_pipeline_barrier(
                        cmd,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::PipelineStageFlags::VERTEX_SHADER
                            | vk::PipelineStageFlags::FRAGMENT_SHADER,
                        vk::DependencyFlags::empty(),
                        &[],
                        &[],
                        &[barrier(
                            image,
                            vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                            vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                            vk::AccessFlags::TRANSFER_WRITE,
                            vk::AccessFlags::SHADER_READ,
                            levels,
                        )],
                    );
                    image_infos.push((
                        *binding,
                        vk::DescriptorImageInfo::default()
                            .image_view(view)
                            .image_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL),
                    ));
                }
                Resource::Sampler { name, binding } => {
                    let texture = texture_named(request, name);
                    let address = match texture.wrap {
                        Wrap::Repeat => vk::SamplerAddressMode::REPEAT,
                        Wrap::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
                    };
                    // GL's NEAREST/LINEAR minification reads the base level
                    // only: max LOD 0.
                    let (min, max_lod) = match texture.min_filter {
                        MinFilter::Nearest => (vk::Filter::NEAREST, 0.0),
                        MinFilter::Linear => (vk::Filter::LINEAR, 0.0),
                        MinFilter::NearestMipmapNearest => (
                            vk::Filter::NEAREST,
                            texture.levels.len().saturating_sub(1) as f32,
                        ),
                    };
                    let mag = if texture.mag_linear {
                        vk::Filter::LINEAR
                    } else {
                        vk::Filter::NEAREST
                    };
                    let sampler = d
                        .create_sampler(
                            &vk::SamplerCreateInfo::default()
                                .mag_filter(mag)
                                .min_filter(min)
                                .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
                                .address_mode_u(address)
                                .address_mode_v(address)
                                .address_mode_w(address)
                                .min_lod(0.0)
                                .max_lod(max_lod),
                            None,
                        )
                        .map_err(err("sampler"))?;
                    frame.samplers.push(sampler);
                    sampler_infos.push((
                        *binding,
                        vk::DescriptorImageInfo::default().sampler(sampler),
                    ));
                }
                Resource::UniformBuffer { .. } => {}
            }
        }
        let mut buffer_infos: Vec<(u32, vk::DescriptorBufferInfo)> = Vec::new();
        for (binding, bytes) in &uniforms.buffers {
            let buffer = frame.buffer(vk::BufferUsageFlags::UNIFORM_BUFFER, bytes)?;
            buffer_infos.push((
                *binding,
                vk::DescriptorBufferInfo::default()
                    .buffer(buffer)
                    .offset(0)
                    .range(vk::WHOLE_SIZE),
            ));
        }

        let set_layout = d
            .create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings),
                None,
            )
            .map_err(err("set layout"))?;
        frame.set_layouts.push(set_layout);
        let set_layouts = [set_layout];
        let pipeline_layout = d
            .create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts),
                None,
            )
            .map_err(err("pipeline layout"))?;
        frame.pipeline_layouts.push(pipeline_layout);
        let mut set = None;
        if !layout_bindings.is_empty() {
            let sizes: Vec<vk::DescriptorPoolSize> = layout_bindings
                .iter()
                .map(|b| vk::DescriptorPoolSize {
                    ty: b.descriptor_type,
                    descriptor_count: 1,
                })
                .collect();
            let pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(err("descriptor pool"))?;
            frame.pools.push(pool);
            let s = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(pool)
                        .set_layouts(&set_layouts),
                )
                .map_err(err("descriptor set"))?[0];
            let write = |binding: u32, kind| {
                vk::WriteDescriptorSet::default()
                    .dst_set(s)
                    .dst_binding(binding)
                    .descriptor_type(kind)
            };
            let mut writes = Vec::new();
            for (binding, info) in &buffer_infos {
                writes.push(
                    write(*binding, vk::DescriptorType::UNIFORM_BUFFER)
                        .buffer_info(std::slice::from_ref(info)),
                );
            }
            for (kind, infos) in [
                (vk::DescriptorType::SAMPLED_IMAGE, &image_infos),
                (vk::DescriptorType::SAMPLER, &sampler_infos),
            ] {
                for (binding, info) in infos {
                    writes.push(write(*binding, kind).image_info(std::slice::from_ref(info)));
                }
            }
            d.update_descriptor_sets(&writes, &[]);
            set = Some(s);
        }

        // Render pass: one attachment at the primary output's location.
        let attachment = [vk::AttachmentDescription::default()
            .format(vk::Format::R8G8B8A8_UNORM)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .final_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)];
        let mut refs = vec![
            vk::AttachmentReference {
                attachment: vk::ATTACHMENT_UNUSED,
                layout: vk::ImageLayout::UNDEFINED,
            };
            program.color_location as usize + 1
        ];
        refs[program.color_location as usize] = vk::AttachmentReference {
            attachment: 0,
            layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
        };
        let subpass = [vk::SubpassDescription::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&refs)];
        let render_pass = d
            .create_render_pass(
                &vk::RenderPassCreateInfo::default()
                    .attachments(&attachment)
                    .subpasses(&subpass),
                None,
            )
            .map_err(err("render pass"))?;
        frame.render_passes.push(render_pass);
        let views = [target_view];
        let framebuffer = d
            .create_framebuffer(
                &vk::FramebufferCreateInfo::default()
                    .render_pass(render_pass)
                    .attachments(&views)
                    .width(w)
                    .height(h)
                    .layers(1),
                None,
            )
            .map_err(err("framebuffer"))?;
        frame.framebuffers.push(framebuffer);

        // Pipeline.
        let module = d
            .create_shader_module(
                &vk::ShaderModuleCreateInfo::default().code(&program.words),
                None,
            )
            .map_err(err("shader module"))?;
        frame.modules.push(module);
        let vertex_name = CString::new(program.vertex_entry.as_str())
            .map_err(|_| VkError::Reflection("entry name".into()))?;
        let fragment_name = CString::new(program.fragment_entry.as_str())
            .map_err(|_| VkError::Reflection("entry name".into()))?;
        let stages = [
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::VERTEX)
                .module(module)
                .name(&vertex_name),
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::FRAGMENT)
                .module(module)
                .name(&fragment_name),
        ];
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
            .vertex_binding_descriptions(&bindings)
            .vertex_attribute_descriptions(&attributes);
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
            .topology(vk::PrimitiveTopology::TRIANGLE_STRIP);
        let viewports = [vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: w as f32,
            height: h as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        }];
        let scissors = [vk::Rect2D {
            offset: vk::Offset2D { x: 0, y: 0 },
            extent: vk::Extent2D {
                width: w,
                height: h,
            },
        }];
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewports(&viewports)
            .scissors(&scissors);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            .cull_mode(vk::CullModeFlags::NONE)
            .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
            .line_width(1.0);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let blend_attachments = vec![
            vk::PipelineColorBlendAttachmentState::default()
                .color_write_mask(vk::ColorComponentFlags::RGBA);
            refs.len()
        ];
        let blend =
            vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
        let info = [vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .color_blend_state(&blend)
            .layout(pipeline_layout)
            .render_pass(render_pass)
            .subpass(0)];
        let pipeline = d
            .create_graphics_pipelines(vk::PipelineCache::null(), &info, None)
            .map_err(|(_, e)| err("pipeline")(e))?[0];
        frame.pipelines.push(pipeline);

        let [r, g, b, a] = request.clear;
        let clear = [vk::ClearValue {
            color: vk::ClearColorValue {
                float32: [r, g, b, a],
            },
        }];
        d.cmd_begin_render_pass(
            cmd,
            &vk::RenderPassBeginInfo::default()
                .render_pass(render_pass)
                .framebuffer(framebuffer)
                .render_area(scissors[0])
                .clear_values(&clear),
            vk::SubpassContents::INLINE,
        );
        d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, pipeline);
        if let Some(s) = set {
            d.cmd_bind_descriptor_sets(
                cmd,
                vk::PipelineBindPoint::GRAPHICS,
                pipeline_layout,
                0,
                &[s],
                &[],
            );
        }
        if !vertex_buffers.is_empty() {
            let offsets = vec![0u64; vertex_buffers.len()];
            d.cmd_bind_vertex_buffers(cmd, 0, &vertex_buffers, &offsets);
        }
        d.cmd_draw(cmd, 4, 1, 0, 0);
        d.cmd_end_render_pass(cmd);
        d.cmd_copy_image_to_buffer(
            cmd,
            target,
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
            readback,
            &[copy_region(0, w, h)],
        );
        d.end_command_buffer(cmd).map_err(err("end"))?;
        let fence = d
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .map_err(err("fence"))?;
        frame.fences.push(fence);
        let cmds = [cmd];
        d.queue_submit(
            cx.queue,
            &[vk::SubmitInfo::default().command_buffers(&cmds)],
            fence,
        )
        .map_err(err("submit"))?;
        d.wait_for_fences(&[fence], true, u64::MAX)
            .map_err(err("wait"))?;
    }
    // Vulkan's framebuffer row 0 is the top (the SPIR-V target flips clip
    // y), so the rows are already top-down.
    let rgba = frame.read_buffer(readback, (w * h * 4) as usize)?;
    Ok(Image {
        width: w,
        height: h,
        rgba,
    })
}
