struct VplHostRecord1_ {
    float4 m0_;
    float4 m1_[4];
};

struct VplHostRecord0_ {
    row_major float4x4 m0_;
    VplHostRecord1_ m1_;
    int m2_;
    uint pad0_;
    uint pad1_;
    uint pad2_;
    float3 m3_;
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
    int _pad1_0;
    int _pad1_1;
    int _pad1_2;
    float3 m1_;
    int _end_pad_0;
};

struct VplRecord1_ {
    float4 m0_;
    float m1_[4];
};

struct VplRecord0_ {
    row_major float4x4 m0_;
    VplRecord1_ m1_;
    int m2_;
    int _pad3_0;
    int _pad3_1;
    int _pad3_2;
    float3 m3_;
    int _end_pad_0;
};

struct VplOutputvertex {
    float4 vpl_out1_0_ : SV_Position;
    nointerpolation int vpl_out2_0_ : LOC0;
    float3 vpl_out2_1_ : LOC1;
    nointerpolation int vpl_out3_0_ : LOC5;
};

struct VplOutputfragment {
    float4 vpl_out2_0_ : SV_Target0;
};

cbuffer vpl_uniform0_ : register(b0) { VplHostRecord0_ vpl_uniform0_; }
cbuffer vpl_uniform1_ : register(b1) { VplUniform1_ vpl_uniform1_; }
cbuffer vpl_uniform2_ : register(b2) { VplUniform2_ vpl_uniform2_; }
static float2 vpl_vertex_s0_ = (float2)0;
static float4 vpl_vertex_s1_ = (float4)0;
static VplRecord2_ vpl_vertex_s2_ = (VplRecord2_)0;
static int vpl_vertex_s3_ = (int)0;
static VplRecord2_ vpl_fragment_s0_ = (VplRecord2_)0;
static int vpl_fragment_s1_ = (int)0;
static float4 vpl_fragment_s2_ = (float4)0;

struct VertexOutput_vpl_vertex_main {
    nointerpolation int vpl_out2_0_ : LOC0;
    float3 vpl_out2_1_ : LOC1;
    nointerpolation int vpl_out3_0_ : LOC5;
    float4 vpl_out1_0_ : SV_Position;
};

struct FragmentInput_vpl_fragment_main {
    nointerpolation int vpl_in0_0_2 : LOC0;
    float3 vpl_in0_1_1 : LOC1;
    nointerpolation int vpl_in1_0_1 : LOC5;
};

typedef float ret_Constructarray4_float_[4];
ret_Constructarray4_float_ Constructarray4_float_(float arg0, float arg1, float arg2, float arg3) {
    float ret[4] = { arg0, arg1, arg2, arg3 };
    return ret;
}

VplRecord1_ ConstructVplRecord1_(float4 arg0, float arg1[4]) {
    VplRecord1_ ret = (VplRecord1_)0;
    ret.m0_ = arg0;
    ret.m1_ = arg1;
    return ret;
}

VplRecord0_ ConstructVplRecord0_(float4x4 arg0, VplRecord1_ arg1, int arg2, float3 arg3) {
    VplRecord0_ ret = (VplRecord0_)0;
    ret.m0_ = arg0;
    ret.m1_ = arg1;
    ret.m2_ = arg2;
    ret.m3_ = arg3;
    return ret;
}

VplRecord2_ ConstructVplRecord2_(int arg0, float3 arg1) {
    VplRecord2_ ret = (VplRecord2_)0;
    ret.m0_ = arg0;
    ret.m1_ = arg1;
    return ret;
}

void vpl_vertex_f0_()
{
    float2 vpl_r0_ = (float2)0;
    float4 vpl_r1_ = (float4)0;
    float4x4 vpl_r2_ = (float4x4)0;
    VplRecord2_ vpl_r3_ = (VplRecord2_)0;
    int vpl_r4_ = (int)0;
    float3 vpl_r5_ = (float3)0;
    VplRecord0_ vpl_r6_ = (VplRecord0_)0;

    float2 _e1 = vpl_vertex_s0_;
    vpl_r0_ = _e1;
    float2 _e4 = vpl_r0_;
    vpl_r1_ = float4(_e4, 0.0, 1.0);
    float4x4 _e11 = vpl_uniform0_.m0_;
    float4 _e14 = vpl_uniform0_.m1_.m0_;
    float4 _e17 = vpl_uniform0_.m1_.m1_[0];
    float4 _e20 = vpl_uniform0_.m1_.m1_[1];
    float4 _e23 = vpl_uniform0_.m1_.m1_[2];
    float4 _e26 = vpl_uniform0_.m1_.m1_[3];
    int _e31 = vpl_uniform0_.m2_;
    float3 _e33 = vpl_uniform0_.m3_;
    vpl_r6_ = ConstructVplRecord0_(_e11, ConstructVplRecord1_(_e14, Constructarray4_float_(_e17.x, _e20.x, _e23.x, _e26.x)), _e31, _e33);
    VplRecord0_ _e37 = vpl_r6_;
    vpl_r2_ = _e37.m0_;
    float4x4 _e41 = vpl_r2_;
    float4 _e43 = vpl_r1_;
    vpl_r1_ = mul(_e43, _e41);
    float4 _e47 = vpl_r1_;
    vpl_vertex_s1_ = _e47;
    int _e51 = vpl_uniform0_.m2_;
    vpl_r4_ = _e51;
    float3 _e55 = vpl_uniform0_.m3_;
    vpl_r5_ = _e55;
    int _e58 = vpl_r4_;
    float3 _e60 = vpl_r5_;
    vpl_r3_ = ConstructVplRecord2_(_e58, _e60);
    VplRecord2_ _e64 = vpl_r3_;
    vpl_vertex_s2_ = _e64;
    vpl_vertex_s3_ = int(1);
    return;
}

float4 vpl_fragment_f1_(float4 vpl_p0_, float vpl_p1_)
{
    float4 vpl_p0_local = (float4)0;
    float vpl_p1_local = (float)0;
    float4 vpl_r0_1 = (float4)0;
    float vpl_r1_1 = (float)0;
    float vpl_r2_1 = (float)0;

    vpl_p0_local = vpl_p0_;
    vpl_p1_local = vpl_p1_;
    float4 _e5 = vpl_p0_local;
    vpl_r0_1 = _e5;
    float _e8 = vpl_p1_local;
    vpl_r1_1 = _e8;
    float _e12 = vpl_uniform2_.value;
    vpl_r2_1 = _e12;
    float _e15 = vpl_r1_1;
    float _e17 = vpl_r2_1;
    vpl_r1_1 = (_e15 * _e17);
    float4 _e21 = vpl_r0_1;
    float _e23 = vpl_r1_1;
    vpl_r0_1 = (_e21 * _e23);
    float4 _e27 = vpl_r0_1;
    return _e27;
}

typedef VplRecord1_ ret_Constructarray2_VplRecord1__[2];
ret_Constructarray2_VplRecord1__ Constructarray2_VplRecord1__(VplRecord1_ arg0, VplRecord1_ arg1) {
    VplRecord1_ ret[2] = { arg0, arg1 };
    return ret;
}

void vpl_fragment_f0_()
{
    int vpl_r0_2 = (int)0;
    float4 vpl_r1_2 = (float4)0;
    bool vpl_r2_2 = (bool)0;
    VplRecord2_ vpl_r3_1 = (VplRecord2_)0;
    float vpl_r4_1 = (float)0;
    VplRecord1_ vpl_r5_1[2] = (VplRecord1_[2])0;
    VplRecord1_ vpl_r6_1 = (VplRecord1_)0;
    int vpl_block = (int)0;

    vpl_block = int(0);
    uint2 loop_bound = uint2(4294967295u, 4294967295u);
    while(true) {
        if (all(loop_bound == uint2(0u, 0u))) { break; }
        loop_bound -= uint2(loop_bound.y == 0u, 1u);
        int _e3 = vpl_block;
        bool should_continue = false;
        switch(_e3) {
            case 0: {
                int _e5 = vpl_fragment_s1_;
                vpl_r0_2 = _e5;
                int _e10 = vpl_r0_2;
                float4 _e13 = vpl_uniform1_.value[_e10].m0_;
                vpl_r1_2 = _e13;
                int _e18 = vpl_r0_2;
                float4 _e22 = vpl_uniform1_.value[_e18].m1_[2];
                vpl_r4_1 = _e22.x;
                float4 _e26 = vpl_r1_2;
                float _e28 = vpl_r4_1;
                const float4 _e29 = vpl_fragment_f1_(_e26, _e28);
                vpl_r1_2 = _e29;
                VplRecord2_ _e32 = vpl_fragment_s0_;
                vpl_r3_1 = _e32;
                VplRecord2_ _e35 = vpl_r3_1;
                vpl_r0_2 = _e35.m0_;
                int _e39 = vpl_r0_2;
                vpl_r2_2 = (_e39 < int(0));
                bool _e44 = vpl_r2_2;
                vpl_block = (_e44 ? int(1) : int(2));
                break;
            }
            case 1: {
                discard;
            }
            case 2: {
                float4 _e53 = vpl_uniform1_.value[0].m0_;
                float4 _e56 = vpl_uniform1_.value[0].m1_[0];
                float4 _e59 = vpl_uniform1_.value[0].m1_[1];
                float4 _e62 = vpl_uniform1_.value[0].m1_[2];
                float4 _e65 = vpl_uniform1_.value[0].m1_[3];
                float4 _e71 = vpl_uniform1_.value[1].m0_;
                float4 _e74 = vpl_uniform1_.value[1].m1_[0];
                float4 _e77 = vpl_uniform1_.value[1].m1_[1];
                float4 _e80 = vpl_uniform1_.value[1].m1_[2];
                float4 _e83 = vpl_uniform1_.value[1].m1_[3];
                vpl_r5_1 = Constructarray2_VplRecord1__(ConstructVplRecord1_(_e53, Constructarray4_float_(_e56.x, _e59.x, _e62.x, _e65.x)), ConstructVplRecord1_(_e71, Constructarray4_float_(_e74.x, _e77.x, _e80.x, _e83.x)));
                VplRecord1_ _e90[2] = vpl_r5_1;
                vpl_r6_1 = _e90[0];
                float4 _e94 = vpl_r1_2;
                vpl_r5_1[1].m0_ = _e94;
                float4 _e101 = vpl_r5_1[1].m0_;
                vpl_r1_2 = _e101;
                float4 _e104 = vpl_r1_2;
                vpl_fragment_s2_ = _e104;
                return;
            }
            default: {
                return;
            }
        }
    }
}

VplOutputvertex ConstructVplOutputvertex(float4 arg0, int arg1, float3 arg2, int arg3) {
    VplOutputvertex ret = (VplOutputvertex)0;
    ret.vpl_out1_0_ = arg0;
    ret.vpl_out2_0_ = arg1;
    ret.vpl_out2_1_ = arg2;
    ret.vpl_out3_0_ = arg3;
    return ret;
}

VertexOutput_vpl_vertex_main vpl_vertex_main(float2 vpl_in0_0_ : LOC0)
{
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_f0_();
    float4 _e3 = vpl_vertex_s1_;
    int _e6 = vpl_vertex_s2_.m0_;
    float3 _e9 = vpl_vertex_s2_.m1_;
    int _e11 = vpl_vertex_s3_;
    const VplOutputvertex vploutputvertex = ConstructVplOutputvertex(_e3, _e6, _e9, _e11);
    const VertexOutput_vpl_vertex_main vploutputvertex_1 = { vploutputvertex.vpl_out2_0_, vploutputvertex.vpl_out2_1_, vploutputvertex.vpl_out3_0_, vploutputvertex.vpl_out1_0_ };
    return vploutputvertex_1;
}

VplOutputfragment ConstructVplOutputfragment(float4 arg0) {
    VplOutputfragment ret = (VplOutputfragment)0;
    ret.vpl_out2_0_ = arg0;
    return ret;
}

VplOutputfragment vpl_fragment_main(FragmentInput_vpl_fragment_main fragmentinput_vpl_fragment_main)
{
    int vpl_in0_0_1 = fragmentinput_vpl_fragment_main.vpl_in0_0_2;
    float3 vpl_in0_1_ = fragmentinput_vpl_fragment_main.vpl_in0_1_1;
    int vpl_in1_0_ = fragmentinput_vpl_fragment_main.vpl_in1_0_1;
    vpl_fragment_s0_.m0_ = vpl_in0_0_1;
    vpl_fragment_s0_.m1_ = vpl_in0_1_;
    vpl_fragment_s1_ = vpl_in1_0_;
    vpl_fragment_f0_();
    float4 _e9 = vpl_fragment_s2_;
    const VplOutputfragment vploutputfragment = ConstructVplOutputfragment(_e9);
    return vploutputfragment;
}
