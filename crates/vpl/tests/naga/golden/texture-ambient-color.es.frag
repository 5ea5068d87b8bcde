#version 300 es

precision highp float;
precision highp int;

struct VplOutputfragment {
    vec4 vpl_out1_0_;
};
uniform highp sampler2D _group_0_binding_0_fs;

vec2 vpl_fragment_s0_ = vec2(0.0);

vec4 vpl_fragment_s1_ = vec4(0.0);

smooth in vec2 _vs2fs_location0;
layout(location = 0) out vec4 _fs2p_location0;

void vpl_fragment_f0_() {
    vec2 _e1 = vpl_fragment_s0_;
    vec4 _e4 = texture(_group_0_binding_0_fs, vec2(_e1));
    vpl_fragment_s1_ = _e4;
    return;
}

void main() {
    vec2 vpl_in0_0_ = _vs2fs_location0;
    vpl_fragment_s0_ = vpl_in0_0_;
    vpl_fragment_f0_();
    vec4 _e3 = vpl_fragment_s1_;
    VplOutputfragment _tmp_return = VplOutputfragment(_e3);
    _fs2p_location0 = _tmp_return.vpl_out1_0_;
    return;
}

