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
    float2 _e1 = vpl_vertex_s0_;
    float4x4 _e7 = vpl_uniform0_.m0_;
    float4 _e10 = vpl_uniform0_.m1_.m0_;
    float4 _e13 = vpl_uniform0_.m1_.m1_[0];
    float4 _e16 = vpl_uniform0_.m1_.m1_[1];
    float4 _e19 = vpl_uniform0_.m1_.m1_[2];
    float4 _e22 = vpl_uniform0_.m1_.m1_[3];
    int _e27 = vpl_uniform0_.m2_;
    float3 _e29 = vpl_uniform0_.m3_;
    vpl_vertex_s1_ = mul(float4(_e1, 0.0, 1.0), ConstructVplRecord0_(_e7, ConstructVplRecord1_(_e10, Constructarray4_float_(_e13.x, _e16.x, _e19.x, _e22.x)), _e27, _e29).m0_);
    int _e35 = vpl_uniform0_.m2_;
    float3 _e37 = vpl_uniform0_.m3_;
    vpl_vertex_s2_ = ConstructVplRecord2_(_e35, _e37);
    vpl_vertex_s3_ = int(1);
    return;
}

float4 vpl_fragment_f1_(float4 vpl_p0_, float vpl_p1_)
{
    float _e4 = vpl_uniform2_.value;
    return (vpl_p0_ * (vpl_p1_ * _e4));
}

typedef VplRecord1_ ret_Constructarray2_VplRecord1__[2];
ret_Constructarray2_VplRecord1__ Constructarray2_VplRecord1__(VplRecord1_ arg0, VplRecord1_ arg1) {
    VplRecord1_ ret[2] = { arg0, arg1 };
    return ret;
}

void vpl_fragment_f0_()
{
    float4 vpl_r1_ = (float4)0;
    VplRecord1_ vpl_r5_[2] = (VplRecord1_[2])0;
    int vpl_block = (int)0;

    vpl_block = int(0);
    uint2 loop_bound = uint2(4294967295u, 4294967295u);
    while(true) {
        if (all(loop_bound == uint2(0u, 0u))) { break; }
        loop_bound -= uint2(loop_bound.y == 0u, 1u);
        int _e2 = vpl_block;
        bool should_continue = false;
        switch(_e2) {
            case 0: {
                int _e4 = vpl_fragment_s1_;
                float4 _e9 = vpl_uniform1_.value[_e4].m0_;
                float4 _e14 = vpl_uniform1_.value[_e4].m1_[2];
                const float4 _e16 = vpl_fragment_f1_(_e9, _e14.x);
                VplRecord2_ _e18 = vpl_fragment_s0_;
                vpl_r1_ = _e16;
                vpl_block = ((_e18.m0_ < int(0)) ? int(1) : int(2));
                break;
            }
            case 1: {
                discard;
            }
            case 2: {
                float4 _e28 = vpl_uniform1_.value[0].m0_;
                float4 _e31 = vpl_uniform1_.value[0].m1_[0];
                float4 _e34 = vpl_uniform1_.value[0].m1_[1];
                float4 _e37 = vpl_uniform1_.value[0].m1_[2];
                float4 _e40 = vpl_uniform1_.value[0].m1_[3];
                float4 _e46 = vpl_uniform1_.value[1].m0_;
                float4 _e49 = vpl_uniform1_.value[1].m1_[0];
                float4 _e52 = vpl_uniform1_.value[1].m1_[1];
                float4 _e55 = vpl_uniform1_.value[1].m1_[2];
                float4 _e58 = vpl_uniform1_.value[1].m1_[3];
                VplRecord1_ _e62[2] = Constructarray2_VplRecord1__(ConstructVplRecord1_(_e28, Constructarray4_float_(_e31.x, _e34.x, _e37.x, _e40.x)), ConstructVplRecord1_(_e46, Constructarray4_float_(_e49.x, _e52.x, _e55.x, _e58.x)));
                float4 _e64 = vpl_r1_;
                vpl_r5_ = _e62;
                vpl_r5_[1].m0_ = _e64;
                float4 _e70 = vpl_r5_[1].m0_;
                vpl_fragment_s2_ = _e70;
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
