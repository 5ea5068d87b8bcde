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
    vec4 vpl_p0_local = vec4(0.0);
    float vpl_p1_local = 0.0;
    vec4 vpl_r0_1 = vec4(0.0);
    float vpl_r1_1 = 0.0;
    float vpl_r2_1 = 0.0;
    vpl_p0_local = vpl_p0_;
    vpl_p1_local = vpl_p1_;
    vec4 _e5 = vpl_p0_local;
    vpl_r0_1 = _e5;
    float _e8 = vpl_p1_local;
    vpl_r1_1 = _e8;
    float _e12 = _group_0_binding_2_fs.value;
    vpl_r2_1 = _e12;
    float _e15 = vpl_r1_1;
    float _e17 = vpl_r2_1;
    vpl_r1_1 = (_e15 * _e17);
    vec4 _e21 = vpl_r0_1;
    float _e23 = vpl_r1_1;
    vpl_r0_1 = (_e21 * _e23);
    vec4 _e27 = vpl_r0_1;
    return _e27;
}

void vpl_fragment_f0_() {
    int vpl_r0_2 = 0;
    vec4 vpl_r1_2 = vec4(0.0);
    bool vpl_r2_2 = false;
    VplRecord2_ vpl_r3_1 = VplRecord2_(0, vec3(0.0));
    float vpl_r4_1 = 0.0;
    VplRecord1_ vpl_r5_1[2] = VplRecord1_[2](VplRecord1_(vec4(0.0), float[4](0.0, 0.0, 0.0, 0.0)), VplRecord1_(vec4(0.0), float[4](0.0, 0.0, 0.0, 0.0)));
    VplRecord1_ vpl_r6_1 = VplRecord1_(vec4(0.0), float[4](0.0, 0.0, 0.0, 0.0));
    int vpl_block = 0;
    vpl_block = 0;
    while(true) {
        int _e3 = vpl_block;
        switch(_e3) {
            case 0: {
                int _e5 = vpl_fragment_s1_;
                vpl_r0_2 = _e5;
                int _e10 = vpl_r0_2;
                vec4 _e13 = _group_0_binding_1_fs.value[_e10].m0_;
                vpl_r1_2 = _e13;
                int _e18 = vpl_r0_2;
                vec4 _e22 = _group_0_binding_1_fs.value[_e18].m1_[2];
                vpl_r4_1 = _e22.x;
                vec4 _e26 = vpl_r1_2;
                float _e28 = vpl_r4_1;
                vec4 _e29 = vpl_fragment_f1_(_e26, _e28);
                vpl_r1_2 = _e29;
                VplRecord2_ _e32 = vpl_fragment_s0_;
                vpl_r3_1 = _e32;
                VplRecord2_ _e35 = vpl_r3_1;
                vpl_r0_2 = _e35.m0_;
                int _e39 = vpl_r0_2;
                vpl_r2_2 = (_e39 < 0);
                bool _e44 = vpl_r2_2;
                vpl_block = (_e44 ? 1 : 2);
                break;
            }
            case 1: {
                discard;
            }
            case 2: {
                vec4 _e53 = _group_0_binding_1_fs.value[0].m0_;
                vec4 _e56 = _group_0_binding_1_fs.value[0].m1_[0];
                vec4 _e59 = _group_0_binding_1_fs.value[0].m1_[1];
                vec4 _e62 = _group_0_binding_1_fs.value[0].m1_[2];
                vec4 _e65 = _group_0_binding_1_fs.value[0].m1_[3];
                vec4 _e71 = _group_0_binding_1_fs.value[1].m0_;
                vec4 _e74 = _group_0_binding_1_fs.value[1].m1_[0];
                vec4 _e77 = _group_0_binding_1_fs.value[1].m1_[1];
                vec4 _e80 = _group_0_binding_1_fs.value[1].m1_[2];
                vec4 _e83 = _group_0_binding_1_fs.value[1].m1_[3];
                vpl_r5_1 = VplRecord1_[2](VplRecord1_(_e53, float[4](_e56.x, _e59.x, _e62.x, _e65.x)), VplRecord1_(_e71, float[4](_e74.x, _e77.x, _e80.x, _e83.x)));
                VplRecord1_ _e90[2] = vpl_r5_1;
                vpl_r6_1 = _e90[0];
                vec4 _e94 = vpl_r1_2;
                vpl_r5_1[1].m0_ = _e94;
                vec4 _e101 = vpl_r5_1[1].m0_;
                vpl_r1_2 = _e101;
                vec4 _e104 = vpl_r1_2;
                vpl_fragment_s2_ = _e104;
                return;
            }
            default: {
                return;
            }
        }
    }
}

void main() {
    int vpl_in0_0_1 = _vs2fs_location0;
    vec3 vpl_in0_1_ = _vs2fs_location1;
    int vpl_in1_0_ = _vs2fs_location5;
    vpl_fragment_s0_.m0_ = vpl_in0_0_1;
    vpl_fragment_s0_.m1_ = vpl_in0_1_;
    vpl_fragment_s1_ = vpl_in1_0_;
    vpl_fragment_f0_();
    vec4 _e9 = vpl_fragment_s2_;
    VplOutputfragment _tmp_return = VplOutputfragment(_e9);
    _fs2p_location0 = _tmp_return.vpl_out2_0_;
    return;
}

