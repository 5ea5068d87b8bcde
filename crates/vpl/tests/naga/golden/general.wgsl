struct VplHostRecord1_ {
    m0_: vec4<f32>,
    m1_: array<vec4<f32>, 4>,
}

struct VplHostRecord0_ {
    m0_: mat4x4<f32>,
    m1_: VplHostRecord1_,
    m2_: i32,
    pad0_: u32,
    pad1_: u32,
    pad2_: u32,
    m3_: vec3<f32>,
    pad3_: u32,
}

struct VplUniform1_ {
    value: array<VplHostRecord1_, 2>,
}

struct VplUniform2_ {
    value: f32,
    pad0_: u32,
    pad1_: u32,
    pad2_: u32,
}

struct VplRecord2_ {
    m0_: i32,
    m1_: vec3<f32>,
}

struct VplRecord1_ {
    m0_: vec4<f32>,
    m1_: array<f32, 4>,
}

struct VplRecord0_ {
    m0_: mat4x4<f32>,
    m1_: VplRecord1_,
    m2_: i32,
    m3_: vec3<f32>,
}

struct VplOutputvertex {
    @builtin(position) vpl_out1_0_: vec4<f32>,
    @location(0) @interpolate(flat) vpl_out2_0_: i32,
    @location(1) vpl_out2_1_: vec3<f32>,
    @location(5) @interpolate(flat) vpl_out3_0_: i32,
}

struct VplOutputfragment {
    @location(0) vpl_out2_0_: vec4<f32>,
}

@group(0) @binding(0) 
var<uniform> vpl_uniform0_: VplHostRecord0_;
@group(0) @binding(1) 
var<uniform> vpl_uniform1_: VplUniform1_;
@group(0) @binding(2) 
var<uniform> vpl_uniform2_: VplUniform2_;
var<private> vpl_vertex_s0_: vec2<f32>;
var<private> vpl_vertex_s1_: vec4<f32>;
var<private> vpl_vertex_s2_: VplRecord2_;
var<private> vpl_vertex_s3_: i32;
var<private> vpl_fragment_s0_: VplRecord2_;
var<private> vpl_fragment_s1_: i32;
var<private> vpl_fragment_s2_: vec4<f32>;

fn vpl_vertex_f0_() {
    let _e1 = vpl_vertex_s0_;
    let _e7 = vpl_uniform0_.m0_;
    let _e10 = vpl_uniform0_.m1_.m0_;
    let _e13 = vpl_uniform0_.m1_.m1_[0];
    let _e16 = vpl_uniform0_.m1_.m1_[1];
    let _e19 = vpl_uniform0_.m1_.m1_[2];
    let _e22 = vpl_uniform0_.m1_.m1_[3];
    let _e27 = vpl_uniform0_.m2_;
    let _e29 = vpl_uniform0_.m3_;
    vpl_vertex_s1_ = (VplRecord0_(_e7, VplRecord1_(_e10, array<f32, 4>(_e13.x, _e16.x, _e19.x, _e22.x)), _e27, _e29).m0_ * vec4<f32>(_e1, 0f, 1f));
    let _e35 = vpl_uniform0_.m2_;
    let _e37 = vpl_uniform0_.m3_;
    vpl_vertex_s2_ = VplRecord2_(_e35, _e37);
    vpl_vertex_s3_ = 1i;
    return;
}

fn vpl_fragment_f1_(vpl_p0_: vec4<f32>, vpl_p1_: f32) -> vec4<f32> {
    let _e4 = vpl_uniform2_.value;
    return (vpl_p0_ * (vpl_p1_ * _e4));
}

fn vpl_fragment_f0_() {
    var vpl_r1_: vec4<f32>;
    var vpl_r5_: array<VplRecord1_, 2>;
    var vpl_block: i32;

    vpl_block = 0i;
    loop {
        let _e2 = vpl_block;
        switch _e2 {
            case 0: {
                let _e4 = vpl_fragment_s1_;
                let _e9 = vpl_uniform1_.value[_e4].m0_;
                let _e14 = vpl_uniform1_.value[_e4].m1_[2];
                let _e16 = vpl_fragment_f1_(_e9, _e14.x);
                let _e18 = vpl_fragment_s0_;
                vpl_r1_ = _e16;
                vpl_block = select(2i, 1i, (_e18.m0_ < 0i));
            }
            case 1: {
                discard;
            }
            case 2: {
                let _e28 = vpl_uniform1_.value[0].m0_;
                let _e31 = vpl_uniform1_.value[0].m1_[0];
                let _e34 = vpl_uniform1_.value[0].m1_[1];
                let _e37 = vpl_uniform1_.value[0].m1_[2];
                let _e40 = vpl_uniform1_.value[0].m1_[3];
                let _e46 = vpl_uniform1_.value[1].m0_;
                let _e49 = vpl_uniform1_.value[1].m1_[0];
                let _e52 = vpl_uniform1_.value[1].m1_[1];
                let _e55 = vpl_uniform1_.value[1].m1_[2];
                let _e58 = vpl_uniform1_.value[1].m1_[3];
                let _e62 = array<VplRecord1_, 2>(VplRecord1_(_e28, array<f32, 4>(_e31.x, _e34.x, _e37.x, _e40.x)), VplRecord1_(_e46, array<f32, 4>(_e49.x, _e52.x, _e55.x, _e58.x)));
                let _e64 = vpl_r1_;
                vpl_r5_ = _e62;
                vpl_r5_[1].m0_ = _e64;
                let _e70 = vpl_r5_[1].m0_;
                vpl_fragment_s2_ = _e70;
                return;
            }
            default: {
                return;
            }
        }
    }
}

@vertex 
fn vpl_vertex_main(@location(0) vpl_in0_0_: vec2<f32>) -> VplOutputvertex {
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_f0_();
    let _e3 = vpl_vertex_s1_;
    let _e6 = vpl_vertex_s2_.m0_;
    let _e9 = vpl_vertex_s2_.m1_;
    let _e11 = vpl_vertex_s3_;
    return VplOutputvertex(_e3, _e6, _e9, _e11);
}

@fragment 
fn vpl_fragment_main(@location(0) @interpolate(flat) vpl_in0_0_1: i32, @location(1) vpl_in0_1_: vec3<f32>, @location(5) @interpolate(flat) vpl_in1_0_: i32) -> VplOutputfragment {
    vpl_fragment_s0_.m0_ = vpl_in0_0_1;
    vpl_fragment_s0_.m1_ = vpl_in0_1_;
    vpl_fragment_s1_ = vpl_in1_0_;
    vpl_fragment_f0_();
    let _e9 = vpl_fragment_s2_;
    return VplOutputfragment(_e9);
}
