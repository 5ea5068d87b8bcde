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
struct VplOutputfragment {
    vec4 vpl_out2_0_;
};
layout(std140) uniform VplUniform1_block_0Fragment { VplUniform1_ _group_0_binding_1_fs; };

layout(std140) uniform VplUniform2_block_1Fragment { VplUniform2_ _group_0_binding_2_fs; };

VplRecord2_ vpl_fragment_s0_ = VplRecord2_(0, vec3(0.0));

int vpl_fragment_s1_ = 0;

vec4 vpl_fragment_s2_ = vec4(0.0);

flat in int _vs2fs_location0;
smooth in vec3 _vs2fs_location1;
flat in int _vs2fs_location5;
layout(location = 0) out vec4 _fs2p_location0;

vec4 vpl_fragment_f1_(vec4 vpl_p0_, float vpl_p1_) {
    float _e4 = _group_0_binding_2_fs.value;
    return (vpl_p0_ * (vpl_p1_ * _e4));
}

void vpl_fragment_f0_() {
    vec4 vpl_r1_ = vec4(0.0);
    VplRecord1_ vpl_r5_[2] = VplRecord1_[2](VplRecord1_(vec4(0.0), float[4](0.0, 0.0, 0.0, 0.0)), VplRecord1_(vec4(0.0), float[4](0.0, 0.0, 0.0, 0.0)));
    int vpl_block = 0;
    vpl_block = 0;
    while(true) {
        int _e2 = vpl_block;
        switch(_e2) {
            case 0: {
                int _e4 = vpl_fragment_s1_;
                vec4 _e9 = _group_0_binding_1_fs.value[_e4].m0_;
                vec4 _e14 = _group_0_binding_1_fs.value[_e4].m1_[2];
                vec4 _e16 = vpl_fragment_f1_(_e9, _e14.x);
                VplRecord2_ _e18 = vpl_fragment_s0_;
                vpl_r1_ = _e16;
                vpl_block = ((_e18.m0_ < 0) ? 1 : 2);
                break;
            }
            case 1: {
                discard;
            }
            case 2: {
                vec4 _e28 = _group_0_binding_1_fs.value[0].m0_;
                vec4 _e31 = _group_0_binding_1_fs.value[0].m1_[0];
                vec4 _e34 = _group_0_binding_1_fs.value[0].m1_[1];
                vec4 _e37 = _group_0_binding_1_fs.value[0].m1_[2];
                vec4 _e40 = _group_0_binding_1_fs.value[0].m1_[3];
                vec4 _e46 = _group_0_binding_1_fs.value[1].m0_;
                vec4 _e49 = _group_0_binding_1_fs.value[1].m1_[0];
                vec4 _e52 = _group_0_binding_1_fs.value[1].m1_[1];
                vec4 _e55 = _group_0_binding_1_fs.value[1].m1_[2];
                vec4 _e58 = _group_0_binding_1_fs.value[1].m1_[3];
                VplRecord1_ _e62[2] = VplRecord1_[2](VplRecord1_(_e28, float[4](_e31.x, _e34.x, _e37.x, _e40.x)), VplRecord1_(_e46, float[4](_e49.x, _e52.x, _e55.x, _e58.x)));
                vec4 _e64 = vpl_r1_;
                vpl_r5_ = _e62;
                vpl_r5_[1].m0_ = _e64;
                vec4 _e70 = vpl_r5_[1].m0_;
                vpl_fragment_s2_ = _e70;
                return;
            }
            default: {
                return;
            }
        }
    }
}

void main() {
    int vpl_in0_0_ = _vs2fs_location0;
    vec3 vpl_in0_1_ = _vs2fs_location1;
    int vpl_in1_0_ = _vs2fs_location5;
    vpl_fragment_s0_.m0_ = vpl_in0_0_;
    vpl_fragment_s0_.m1_ = vpl_in0_1_;
    vpl_fragment_s1_ = vpl_in1_0_;
    vpl_fragment_f0_();
    vec4 _e9 = vpl_fragment_s2_;
    VplOutputfragment _tmp_return = VplOutputfragment(_e9);
    _fs2p_location0 = _tmp_return.vpl_out2_0_;
    return;
}

