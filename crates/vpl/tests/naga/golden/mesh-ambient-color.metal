// language: metal2.0
#include <metal_stdlib>
#include <simd/simd.h>

using metal::uint;

struct VplHostRecord0_ {
    metal::float4 m0_;
    float m1_;
    uint pad0_;
    uint pad1_;
    uint pad2_;
};
struct VplOutputvertex {
    metal::float4 vpl_out1_0_;
};
struct VplOutputfragment {
    metal::float4 vpl_out0_0_;
};

void vpl_vertex_f0_(
    thread metal::float3& vpl_vertex_s0_,
    thread metal::float4& vpl_vertex_s1_
) {
    metal::float3 _e1 = vpl_vertex_s0_;
    vpl_vertex_s1_ = metal::float4(_e1, 1.0);
    return;
}

void vpl_fragment_f0_(
    constant VplHostRecord0_& vpl_uniform0_,
    thread metal::float4& vpl_fragment_s0_
) {
    metal::float4 _e2 = vpl_uniform0_.m0_;
    float _e4 = vpl_uniform0_.m1_;
    vpl_fragment_s0_ = _e2 * _e4;
    return;
}

struct vpl_vertex_mainInput {
    metal::float3 vpl_in0_0_ [[attribute(0)]];
};
struct vpl_vertex_mainOutput {
    metal::float4 vpl_out1_0_ [[position]];
};
vertex vpl_vertex_mainOutput vpl_vertex_main(
  vpl_vertex_mainInput varyings [[stage_in]]
) {
    metal::float3 vpl_vertex_s0_ = {};
    metal::float4 vpl_vertex_s1_ = {};
    const auto vpl_in0_0_ = varyings.vpl_in0_0_;
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_f0_(vpl_vertex_s0_, vpl_vertex_s1_);
    metal::float4 _e3 = vpl_vertex_s1_;
    const auto _tmp = VplOutputvertex {_e3};
    return vpl_vertex_mainOutput { _tmp.vpl_out1_0_ };
}


struct vpl_fragment_mainOutput {
    metal::float4 vpl_out0_0_ [[color(0)]];
};
fragment vpl_fragment_mainOutput vpl_fragment_main(
  constant VplHostRecord0_& vpl_uniform0_ [[buffer(0)]]
) {
    metal::float4 vpl_fragment_s0_ = {};
    vpl_fragment_f0_(vpl_uniform0_, vpl_fragment_s0_);
    metal::float4 _e1 = vpl_fragment_s0_;
    const auto _tmp_1 = VplOutputfragment {_e1};
    return vpl_fragment_mainOutput { _tmp_1.vpl_out0_0_ };
}
