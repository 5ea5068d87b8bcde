#version 300 es

precision highp float;
precision highp int;

struct VplHostRecord1_ {
    vec4 m0_;
    vec4 m1_[4];
};
struct VplHostRecord0_ {
    mat4x4 m0_;
    VplHostRecord1_ m1_;
    int m2_;
    uint pad0_;
    uint pad1_;
    uint pad2_;
    vec3 m3_;
    uint pad3_;
};
struct VplUniform1_ {
    VplHostRecord1_ value[2];
};
struct VplUniform2_ {
    float value;
    uint pad0_;
    uint pad1_;
    uint pad2_;
};
struct VplRecord2_ {
    int m0_;
    vec3 m1_;
};
struct VplRecord1_ {
    vec4 m0_;
    float m1_[4];
};
struct VplRecord0_ {
    mat4x4 m0_;
    VplRecord1_ m1_;
    int m2_;
    vec3 m3_;
};
struct VplOutputvertex {
    vec4 vpl_out1_0_;
    int vpl_out2_0_;
    vec3 vpl_out2_1_;
    int vpl_out3_0_;
};
struct VplOutputfragment {
    vec4 vpl_out2_0_;
};
layout(std140) uniform VplHostRecord0_block_0Vertex { VplHostRecord0_ _group_0_binding_0_vs; };

vec2 vpl_vertex_s0_ = vec2(0.0);

vec4 vpl_vertex_s1_ = vec4(0.0);

VplRecord2_ vpl_vertex_s2_ = VplRecord2_(0, vec3(0.0));

int vpl_vertex_s3_ = 0;

layout(location = 0) in vec2 _p2vs_location0;
flat out int _vs2fs_location0;
smooth out vec3 _vs2fs_location1;
flat out int _vs2fs_location5;

void vpl_vertex_f0_() {
    vec2 vpl_r0_ = vec2(0.0);
    vec4 vpl_r1_ = vec4(0.0);
    mat4x4 vpl_r2_ = mat4x4(0.0);
    VplRecord2_ vpl_r3_ = VplRecord2_(0, vec3(0.0));
    int vpl_r4_ = 0;
    vec3 vpl_r5_ = vec3(0.0);
    VplRecord0_ vpl_r6_ = VplRecord0_(mat4x4(0.0), VplRecord1_(vec4(0.0), float[4](0.0, 0.0, 0.0, 0.0)), 0, vec3(0.0));
    vec2 _e1 = vpl_vertex_s0_;
    vpl_r0_ = _e1;
    vec2 _e4 = vpl_r0_;
    vpl_r1_ = vec4(_e4, 0.0, 1.0);
    mat4x4 _e11 = _group_0_binding_0_vs.m0_;
    vec4 _e14 = _group_0_binding_0_vs.m1_.m0_;
    vec4 _e17 = _group_0_binding_0_vs.m1_.m1_[0];
    vec4 _e20 = _group_0_binding_0_vs.m1_.m1_[1];
    vec4 _e23 = _group_0_binding_0_vs.m1_.m1_[2];
    vec4 _e26 = _group_0_binding_0_vs.m1_.m1_[3];
    int _e31 = _group_0_binding_0_vs.m2_;
    vec3 _e33 = _group_0_binding_0_vs.m3_;
    vpl_r6_ = VplRecord0_(_e11, VplRecord1_(_e14, float[4](_e17.x, _e20.x, _e23.x, _e26.x)), _e31, _e33);
    VplRecord0_ _e37 = vpl_r6_;
    vpl_r2_ = _e37.m0_;
    mat4x4 _e41 = vpl_r2_;
    vec4 _e43 = vpl_r1_;
    vpl_r1_ = (_e41 * _e43);
    vec4 _e47 = vpl_r1_;
    vpl_vertex_s1_ = _e47;
    int _e51 = _group_0_binding_0_vs.m2_;
    vpl_r4_ = _e51;
    vec3 _e55 = _group_0_binding_0_vs.m3_;
    vpl_r5_ = _e55;
    int _e58 = vpl_r4_;
    vec3 _e60 = vpl_r5_;
    vpl_r3_ = VplRecord2_(_e58, _e60);
    VplRecord2_ _e64 = vpl_r3_;
    vpl_vertex_s2_ = _e64;
    vpl_vertex_s3_ = 1;
    return;
}

void main() {
    vec2 vpl_in0_0_ = _p2vs_location0;
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_f0_();
    vec4 _e3 = vpl_vertex_s1_;
    int _e6 = vpl_vertex_s2_.m0_;
    vec3 _e9 = vpl_vertex_s2_.m1_;
    int _e11 = vpl_vertex_s3_;
    VplOutputvertex _tmp_return = VplOutputvertex(_e3, _e6, _e9, _e11);
    gl_Position = _tmp_return.vpl_out1_0_;
    _vs2fs_location0 = _tmp_return.vpl_out2_0_;
    _vs2fs_location1 = _tmp_return.vpl_out2_1_;
    _vs2fs_location5 = _tmp_return.vpl_out3_0_;
    return;
}

