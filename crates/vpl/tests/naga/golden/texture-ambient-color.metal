// language: metal2.0
#include <metal_stdlib>
#include <simd/simd.h>

using metal::uint;

struct VplOutputvertex {
    metal::float4 vpl_out2_0_;
    metal::float2 vpl_out3_0_;
    char _pad2[8];
};
struct VplOutputfragment {
    metal::float4 vpl_out1_0_;
};

void vpl_vertex_f0_(
    thread metal::float3& vpl_vertex_s0_,
    thread metal::float2& vpl_vertex_s1_,
    thread metal::float4& vpl_vertex_s2_,
    thread metal::float2& vpl_vertex_s3_
) {
    metal::float3 _e1 = vpl_vertex_s0_;
    vpl_vertex_s2_ = metal::float4(_e1, 1.0);
    metal::float2 _e6 = vpl_vertex_s1_;
    vpl_vertex_s3_ = _e6;
    return;
}

void vpl_fragment_f0_(
    metal::texture2d<float, metal::access::sample> vpl_texture0_,
    metal::sampler vpl_sampler0_,
    thread metal::float2& vpl_fragment_s0_,
    thread metal::float4& vpl_fragment_s1_
) {
    metal::float2 _e1 = vpl_fragment_s0_;
    metal::float4 _e4 = vpl_texture0_.sample(vpl_sampler0_, _e1);
    vpl_fragment_s1_ = _e4;
    return;
}

struct vpl_vertex_mainInput {
    metal::float3 vpl_in0_0_ [[attribute(0)]];
    metal::float2 vpl_in1_0_ [[attribute(1)]];
};
struct vpl_vertex_mainOutput {
    metal::float4 vpl_out2_0_ [[position]];
    metal::float2 vpl_out3_0_ [[user(loc0), center_perspective]];
};
vertex vpl_vertex_mainOutput vpl_vertex_main(
  vpl_vertex_mainInput varyings [[stage_in]]
) {
    metal::float3 vpl_vertex_s0_ = {};
    metal::float2 vpl_vertex_s1_ = {};
    metal::float4 vpl_vertex_s2_ = {};
    metal::float2 vpl_vertex_s3_ = {};
    const auto vpl_in0_0_ = varyings.vpl_in0_0_;
    const auto vpl_in1_0_ = varyings.vpl_in1_0_;
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_s1_ = vpl_in1_0_;
    vpl_vertex_f0_(vpl_vertex_s0_, vpl_vertex_s1_, vpl_vertex_s2_, vpl_vertex_s3_);
    metal::float4 _e5 = vpl_vertex_s2_;
    metal::float2 _e7 = vpl_vertex_s3_;
    const auto _tmp = VplOutputvertex {_e5, _e7};
    return vpl_vertex_mainOutput { _tmp.vpl_out2_0_, _tmp.vpl_out3_0_ };
}


struct vpl_fragment_mainInput {
    metal::float2 vpl_in0_0_1 [[user(loc0), center_perspective]];
};
struct vpl_fragment_mainOutput {
    metal::float4 vpl_out1_0_ [[color(0)]];
};
fragment vpl_fragment_mainOutput vpl_fragment_main(
  vpl_fragment_mainInput varyings_1 [[stage_in]]
, metal::texture2d<float, metal::access::sample> vpl_texture0_ [[texture(0)]]
, metal::sampler vpl_sampler0_ [[sampler(0)]]
) {
    metal::float2 vpl_fragment_s0_ = {};
    metal::float4 vpl_fragment_s1_ = {};
    const auto vpl_in0_0_1 = varyings_1.vpl_in0_0_1;
    vpl_fragment_s0_ = vpl_in0_0_1;
    vpl_fragment_f0_(vpl_texture0_, vpl_sampler0_, vpl_fragment_s0_, vpl_fragment_s1_);
    metal::float4 _e3 = vpl_fragment_s1_;
    const auto _tmp_1 = VplOutputfragment {_e3};
    return vpl_fragment_mainOutput { _tmp_1.vpl_out1_0_ };
}
