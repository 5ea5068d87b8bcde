struct VplOutputvertex {
    @builtin(position) vpl_out2_0_: vec4<f32>,
    @location(0) vpl_out3_0_: vec2<f32>,
}

struct VplOutputfragment {
    @location(0) vpl_out1_0_: vec4<f32>,
}

@group(0) @binding(0) 
var vpl_texture0_: texture_2d<f32>;
@group(0) @binding(1) 
var vpl_sampler0_: sampler;
var<private> vpl_vertex_s0_: vec3<f32>;
var<private> vpl_vertex_s1_: vec2<f32>;
var<private> vpl_vertex_s2_: vec4<f32>;
var<private> vpl_vertex_s3_: vec2<f32>;
var<private> vpl_fragment_s0_: vec2<f32>;
var<private> vpl_fragment_s1_: vec4<f32>;

fn vpl_vertex_f0_() {
    let _e1 = vpl_vertex_s0_;
    vpl_vertex_s2_ = vec4<f32>(_e1, 1f);
    let _e6 = vpl_vertex_s1_;
    vpl_vertex_s3_ = _e6;
    return;
}

fn vpl_fragment_f0_() {
    let _e1 = vpl_fragment_s0_;
    let _e4 = textureSample(vpl_texture0_, vpl_sampler0_, _e1);
    vpl_fragment_s1_ = _e4;
    return;
}

@vertex 
fn vpl_vertex_main(@location(0) vpl_in0_0_: vec3<f32>, @location(1) vpl_in1_0_: vec2<f32>) -> VplOutputvertex {
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_s1_ = vpl_in1_0_;
    vpl_vertex_f0_();
    let _e5 = vpl_vertex_s2_;
    let _e7 = vpl_vertex_s3_;
    return VplOutputvertex(_e5, _e7);
}

@fragment 
fn vpl_fragment_main(@location(0) vpl_in0_0_1: vec2<f32>) -> VplOutputfragment {
    vpl_fragment_s0_ = vpl_in0_0_1;
    vpl_fragment_f0_();
    let _e3 = vpl_fragment_s1_;
    return VplOutputfragment(_e3);
}
