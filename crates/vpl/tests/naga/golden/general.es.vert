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
    vec2 _e1 = vpl_vertex_s0_;
    mat4x4 _e7 = _group_0_binding_0_vs.m0_;
    vec4 _e10 = _group_0_binding_0_vs.m1_.m0_;
    vec4 _e13 = _group_0_binding_0_vs.m1_.m1_[0];
    vec4 _e16 = _group_0_binding_0_vs.m1_.m1_[1];
    vec4 _e19 = _group_0_binding_0_vs.m1_.m1_[2];
    vec4 _e22 = _group_0_binding_0_vs.m1_.m1_[3];
    int _e27 = _group_0_binding_0_vs.m2_;
    vec3 _e29 = _group_0_binding_0_vs.m3_;
    vpl_vertex_s1_ = (VplRecord0_(_e7, VplRecord1_(_e10, float[4](_e13.x, _e16.x, _e19.x, _e22.x)), _e27, _e29).m0_ * vec4(_e1, 0.0, 1.0));
    int _e35 = _group_0_binding_0_vs.m2_;
    vec3 _e37 = _group_0_binding_0_vs.m3_;
    vpl_vertex_s2_ = VplRecord2_(_e35, _e37);
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

