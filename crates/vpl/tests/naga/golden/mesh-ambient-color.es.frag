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
struct VplOutputfragment {
    vec4 vpl_out0_0_;
};
layout(std140) uniform VplHostRecord0_block_0Fragment { VplHostRecord0_ _group_0_binding_0_fs; };

vec4 vpl_fragment_s0_ = vec4(0.0);

layout(location = 0) out vec4 _fs2p_location0;

void vpl_fragment_f0_() {
    vec4 _e2 = _group_0_binding_0_fs.m0_;
    float _e4 = _group_0_binding_0_fs.m1_;
    vpl_fragment_s0_ = (_e2 * _e4);
    return;
}

void main() {
    vpl_fragment_f0_();
    vec4 _e1 = vpl_fragment_s0_;
    VplOutputfragment _tmp_return = VplOutputfragment(_e1);
    _fs2p_location0 = _tmp_return.vpl_out0_0_;
    return;
}

