struct VplOutputvertex {
    float4 vpl_out2_0_ : SV_Position;
    float2 vpl_out3_0_ : LOC0;
};

struct VplOutputfragment {
    float4 vpl_out1_0_ : SV_Target0;
};

Texture2D<float4> vpl_texture0_ : register(t0);
SamplerState nagaSamplerHeap[2048]: register(s0, space0);
SamplerComparisonState nagaComparisonSamplerHeap[2048]: register(s0, space1);
StructuredBuffer<uint> nagaGroup0SamplerIndexArray : register(t0, space255);
static const SamplerState vpl_sampler0_ = nagaSamplerHeap[nagaGroup0SamplerIndexArray[1]];
static float3 vpl_vertex_s0_ = (float3)0;
static float2 vpl_vertex_s1_ = (float2)0;
static float4 vpl_vertex_s2_ = (float4)0;
static float2 vpl_vertex_s3_ = (float2)0;
static float2 vpl_fragment_s0_ = (float2)0;
static float4 vpl_fragment_s1_ = (float4)0;

struct VertexOutput_vpl_vertex_main {
    float2 vpl_out3_0_ : LOC0;
    float4 vpl_out2_0_ : SV_Position;
};

struct FragmentInput_vpl_fragment_main {
    float2 vpl_in0_0_2 : LOC0;
};

void vpl_vertex_f0_()
{
    float3 _e1 = vpl_vertex_s0_;
    vpl_vertex_s2_ = float4(_e1, 1.0);
    float2 _e6 = vpl_vertex_s1_;
    vpl_vertex_s3_ = _e6;
    return;
}

void vpl_fragment_f0_()
{
    float2 _e1 = vpl_fragment_s0_;
    float4 _e4 = vpl_texture0_.Sample(vpl_sampler0_, _e1);
    vpl_fragment_s1_ = _e4;
    return;
}

VplOutputvertex ConstructVplOutputvertex(float4 arg0, float2 arg1) {
    VplOutputvertex ret = (VplOutputvertex)0;
    ret.vpl_out2_0_ = arg0;
    ret.vpl_out3_0_ = arg1;
    return ret;
}

VertexOutput_vpl_vertex_main vpl_vertex_main(float3 vpl_in0_0_ : LOC0, float2 vpl_in1_0_ : LOC1)
{
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_s1_ = vpl_in1_0_;
    vpl_vertex_f0_();
    float4 _e5 = vpl_vertex_s2_;
    float2 _e7 = vpl_vertex_s3_;
    const VplOutputvertex vploutputvertex = ConstructVplOutputvertex(_e5, _e7);
    const VertexOutput_vpl_vertex_main vploutputvertex_1 = { vploutputvertex.vpl_out3_0_, vploutputvertex.vpl_out2_0_ };
    return vploutputvertex_1;
}

VplOutputfragment ConstructVplOutputfragment(float4 arg0) {
    VplOutputfragment ret = (VplOutputfragment)0;
    ret.vpl_out1_0_ = arg0;
    return ret;
}

VplOutputfragment vpl_fragment_main(FragmentInput_vpl_fragment_main fragmentinput_vpl_fragment_main)
{
    float2 vpl_in0_0_1 = fragmentinput_vpl_fragment_main.vpl_in0_0_2;
    vpl_fragment_s0_ = vpl_in0_0_1;
    vpl_fragment_f0_();
    float4 _e3 = vpl_fragment_s1_;
    const VplOutputfragment vploutputfragment = ConstructVplOutputfragment(_e3);
    return vploutputfragment;
}
