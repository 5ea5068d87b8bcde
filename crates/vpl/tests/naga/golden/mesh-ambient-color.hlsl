struct VplHostRecord0_ {
    float4 m0_;
    float m1_;
    uint pad0_;
    uint pad1_;
    uint pad2_;
};

struct VplOutputvertex {
    float4 vpl_out1_0_ : SV_Position;
};

struct VplOutputfragment {
    float4 vpl_out0_0_ : SV_Target0;
};

cbuffer vpl_uniform0_ : register(b0) { VplHostRecord0_ vpl_uniform0_; }
static float3 vpl_vertex_s0_ = (float3)0;
static float4 vpl_vertex_s1_ = (float4)0;
static float4 vpl_fragment_s0_ = (float4)0;

struct VertexOutput_vpl_vertex_main {
    float4 vpl_out1_0_ : SV_Position;
};

void vpl_vertex_f0_()
{
    float3 _e1 = vpl_vertex_s0_;
    vpl_vertex_s1_ = float4(_e1, 1.0);
    return;
}

void vpl_fragment_f0_()
{
    float4 _e2 = vpl_uniform0_.m0_;
    float _e4 = vpl_uniform0_.m1_;
    vpl_fragment_s0_ = (_e2 * _e4);
    return;
}

VplOutputvertex ConstructVplOutputvertex(float4 arg0) {
    VplOutputvertex ret = (VplOutputvertex)0;
    ret.vpl_out1_0_ = arg0;
    return ret;
}

VertexOutput_vpl_vertex_main vpl_vertex_main(float3 vpl_in0_0_ : LOC0)
{
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_f0_();
    float4 _e3 = vpl_vertex_s1_;
    const VplOutputvertex vploutputvertex = ConstructVplOutputvertex(_e3);
    const VertexOutput_vpl_vertex_main vploutputvertex_1 = { vploutputvertex.vpl_out1_0_ };
    return vploutputvertex_1;
}

VplOutputfragment ConstructVplOutputfragment(float4 arg0) {
    VplOutputfragment ret = (VplOutputfragment)0;
    ret.vpl_out0_0_ = arg0;
    return ret;
}

VplOutputfragment vpl_fragment_main()
{
    vpl_fragment_f0_();
    float4 _e1 = vpl_fragment_s0_;
    const VplOutputfragment vploutputfragment = ConstructVplOutputfragment(_e1);
    return vploutputfragment;
}
