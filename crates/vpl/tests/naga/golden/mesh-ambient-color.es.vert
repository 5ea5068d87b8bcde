#version 300 es

precision highp float;
precision highp int;

struct VplHostRecord0_ {
    vec4 m0_;
    float m1_;
    uint pad0_;
    uint pad1_;
    uint pad2_;
};
struct VplOutputvertex {
    vec4 vpl_out1_0_;
};
vec3 vpl_vertex_s0_ = vec3(0.0);

vec4 vpl_vertex_s1_ = vec4(0.0);

layout(location = 0) in vec3 _p2vs_location0;

void vpl_vertex_f0_() {
    vec3 _e1 = vpl_vertex_s0_;
    vpl_vertex_s1_ = vec4(_e1, 1.0);
    return;
}

void main() {
    vec3 vpl_in0_0_ = _p2vs_location0;
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_f0_();
    vec4 _e3 = vpl_vertex_s1_;
    VplOutputvertex _tmp_return = VplOutputvertex(_e3);
    gl_Position = _tmp_return.vpl_out1_0_;
    return;
}

