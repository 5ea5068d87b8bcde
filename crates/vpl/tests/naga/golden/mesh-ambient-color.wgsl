struct VplHostRecord0_ {
    m0_: vec4<f32>,
    m1_: f32,
    pad0_: u32,
    pad1_: u32,
    pad2_: u32,
}

struct VplOutputvertex {
    @builtin(position) vpl_out1_0_: vec4<f32>,
}

struct VplOutputfragment {
    @location(0) vpl_out0_0_: vec4<f32>,
}

@group(0) @binding(0) 
var<uniform> vpl_uniform0_: VplHostRecord0_;
var<private> vpl_vertex_s0_: vec3<f32>;
var<private> vpl_vertex_s1_: vec4<f32>;
var<private> vpl_fragment_s0_: vec4<f32>;

fn vpl_vertex_f0_() {
    let _e1 = vpl_vertex_s0_;
    vpl_vertex_s1_ = vec4<f32>(_e1, 1f);
    return;
}

fn vpl_fragment_f0_() {
    let _e2 = vpl_uniform0_.m0_;
    let _e4 = vpl_uniform0_.m1_;
    vpl_fragment_s0_ = (_e2 * _e4);
    return;
}

@vertex 
fn vpl_vertex_main(@location(0) vpl_in0_0_: vec3<f32>) -> VplOutputvertex {
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_f0_();
    let _e3 = vpl_vertex_s1_;
    return VplOutputvertex(_e3);
}

@fragment 
fn vpl_fragment_main() -> VplOutputfragment {
    vpl_fragment_f0_();
    let _e1 = vpl_fragment_s0_;
    return VplOutputfragment(_e1);
}
