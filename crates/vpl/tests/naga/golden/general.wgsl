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
    var vpl_r0_: vec2<f32>;
    var vpl_r1_: vec4<f32>;
    var vpl_r2_: mat4x4<f32>;
    var vpl_r3_: VplRecord2_;
    var vpl_r4_: i32;
    var vpl_r5_: vec3<f32>;
    var vpl_r6_: VplRecord0_;

    let _e1 = vpl_vertex_s0_;
    vpl_r0_ = _e1;
    let _e4 = vpl_r0_;
    vpl_r1_ = vec4<f32>(_e4, 0f, 1f);
    let _e11 = vpl_uniform0_.m0_;
    let _e14 = vpl_uniform0_.m1_.m0_;
    let _e17 = vpl_uniform0_.m1_.m1_[0];
    let _e20 = vpl_uniform0_.m1_.m1_[1];
    let _e23 = vpl_uniform0_.m1_.m1_[2];
    let _e26 = vpl_uniform0_.m1_.m1_[3];
    let _e31 = vpl_uniform0_.m2_;
    let _e33 = vpl_uniform0_.m3_;
    vpl_r6_ = VplRecord0_(_e11, VplRecord1_(_e14, array<f32, 4>(_e17.x, _e20.x, _e23.x, _e26.x)), _e31, _e33);
    let _e37 = vpl_r6_;
    vpl_r2_ = _e37.m0_;
    let _e41 = vpl_r2_;
    let _e43 = vpl_r1_;
    vpl_r1_ = (_e41 * _e43);
    let _e47 = vpl_r1_;
    vpl_vertex_s1_ = _e47;
    let _e51 = vpl_uniform0_.m2_;
    vpl_r4_ = _e51;
    let _e55 = vpl_uniform0_.m3_;
    vpl_r5_ = _e55;
    let _e58 = vpl_r4_;
    let _e60 = vpl_r5_;
    vpl_r3_ = VplRecord2_(_e58, _e60);
    let _e64 = vpl_r3_;
    vpl_vertex_s2_ = _e64;
    vpl_vertex_s3_ = 1i;
    return;
}

fn vpl_fragment_f1_(vpl_p0_: vec4<f32>, vpl_p1_: f32) -> vec4<f32> {
    var vpl_p0_local: vec4<f32>;
    var vpl_p1_local: f32;
    var vpl_r0_1: vec4<f32>;
    var vpl_r1_1: f32;
    var vpl_r2_1: f32;

    vpl_p0_local = vpl_p0_;
    vpl_p1_local = vpl_p1_;
    let _e5 = vpl_p0_local;
    vpl_r0_1 = _e5;
    let _e8 = vpl_p1_local;
    vpl_r1_1 = _e8;
    let _e12 = vpl_uniform2_.value;
    vpl_r2_1 = _e12;
    let _e15 = vpl_r1_1;
    let _e17 = vpl_r2_1;
    vpl_r1_1 = (_e15 * _e17);
    let _e21 = vpl_r0_1;
    let _e23 = vpl_r1_1;
    vpl_r0_1 = (_e21 * _e23);
    let _e27 = vpl_r0_1;
    return _e27;
}

fn vpl_fragment_f0_() {
    var vpl_r0_2: i32;
    var vpl_r1_2: vec4<f32>;
    var vpl_r2_2: bool;
    var vpl_r3_1: VplRecord2_;
    var vpl_r4_1: f32;
    var vpl_r5_1: array<VplRecord1_, 2>;
    var vpl_r6_1: VplRecord1_;
    var vpl_block: i32;

    vpl_block = 0i;
    loop {
        let _e3 = vpl_block;
        switch _e3 {
            case 0: {
                let _e5 = vpl_fragment_s1_;
                vpl_r0_2 = _e5;
                let _e10 = vpl_r0_2;
                let _e13 = vpl_uniform1_.value[_e10].m0_;
                vpl_r1_2 = _e13;
                let _e18 = vpl_r0_2;
                let _e22 = vpl_uniform1_.value[_e18].m1_[2];
                vpl_r4_1 = _e22.x;
                let _e26 = vpl_r1_2;
                let _e28 = vpl_r4_1;
                let _e29 = vpl_fragment_f1_(_e26, _e28);
                vpl_r1_2 = _e29;
                let _e32 = vpl_fragment_s0_;
                vpl_r3_1 = _e32;
                let _e35 = vpl_r3_1;
                vpl_r0_2 = _e35.m0_;
                let _e39 = vpl_r0_2;
                vpl_r2_2 = (_e39 < 0i);
                let _e44 = vpl_r2_2;
                vpl_block = select(2i, 1i, _e44);
            }
            case 1: {
                discard;
            }
            case 2: {
                let _e53 = vpl_uniform1_.value[0].m0_;
                let _e56 = vpl_uniform1_.value[0].m1_[0];
                let _e59 = vpl_uniform1_.value[0].m1_[1];
                let _e62 = vpl_uniform1_.value[0].m1_[2];
                let _e65 = vpl_uniform1_.value[0].m1_[3];
                let _e71 = vpl_uniform1_.value[1].m0_;
                let _e74 = vpl_uniform1_.value[1].m1_[0];
                let _e77 = vpl_uniform1_.value[1].m1_[1];
                let _e80 = vpl_uniform1_.value[1].m1_[2];
                let _e83 = vpl_uniform1_.value[1].m1_[3];
                vpl_r5_1 = array<VplRecord1_, 2>(VplRecord1_(_e53, array<f32, 4>(_e56.x, _e59.x, _e62.x, _e65.x)), VplRecord1_(_e71, array<f32, 4>(_e74.x, _e77.x, _e80.x, _e83.x)));
                let _e90 = vpl_r5_1;
                vpl_r6_1 = _e90[0];
                let _e94 = vpl_r1_2;
                vpl_r5_1[1].m0_ = _e94;
                let _e101 = vpl_r5_1[1].m0_;
                vpl_r1_2 = _e101;
                let _e104 = vpl_r1_2;
                vpl_fragment_s2_ = _e104;
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
