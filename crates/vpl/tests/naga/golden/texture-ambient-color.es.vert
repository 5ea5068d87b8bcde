#version 300 es

precision highp float;
precision highp int;

struct VplOutputvertex {
    vec4 vpl_out2_0_;
    vec2 vpl_out3_0_;
};
vec3 vpl_vertex_s0_ = vec3(0.0);

vec2 vpl_vertex_s1_ = vec2(0.0);

vec4 vpl_vertex_s2_ = vec4(0.0);

vec2 vpl_vertex_s3_ = vec2(0.0);

layout(location = 0) in vec3 _p2vs_location0;
layout(location = 1) in vec2 _p2vs_location1;
smooth out vec2 _vs2fs_location0;

void vpl_vertex_f0_() {
    vec3 _e1 = vpl_vertex_s0_;
    vpl_vertex_s2_ = vec4(_e1, 1.0);
    vec2 _e6 = vpl_vertex_s1_;
    vpl_vertex_s3_ = _e6;
    return;
}

void main() {
    vec3 vpl_in0_0_ = _p2vs_location0;
    vec2 vpl_in1_0_ = _p2vs_location1;
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_s1_ = vpl_in1_0_;
    vpl_vertex_f0_();
    vec4 _e5 = vpl_vertex_s2_;
    vec2 _e7 = vpl_vertex_s3_;
    VplOutputvertex _tmp_return = VplOutputvertex(_e5, _e7);
    gl_Position = _tmp_return.vpl_out2_0_;
    _vs2fs_location0 = _tmp_return.vpl_out3_0_;
    return;
}

