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
    var vpl_r0_: vec3<f32>;
    var vpl_r1_: vec4<f32>;

    let _e1 = vpl_vertex_s0_;
    vpl_r0_ = _e1;
    let _e4 = vpl_r0_;
    vpl_r1_ = vec4<f32>(_e4, 1f);
    let _e9 = vpl_r1_;
    vpl_vertex_s1_ = _e9;
    return;
}

fn vpl_fragment_f0_() {
    var vpl_r0_1: vec4<f32>;
    var vpl_r1_1: f32;

    let _e2 = vpl_uniform0_.m0_;
    vpl_r0_1 = _e2;
    let _e6 = vpl_uniform0_.m1_;
    vpl_r1_1 = _e6;
    let _e9 = vpl_r0_1;
    let _e11 = vpl_r1_1;
    vpl_r0_1 = (_e9 * _e11);
    let _e15 = vpl_r0_1;
    vpl_fragment_s0_ = _e15;
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
