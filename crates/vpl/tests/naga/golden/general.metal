// language: metal2.0
#include <metal_stdlib>
#include <simd/simd.h>

using metal::uint;

struct type_3 {
    metal::float4 inner[4];
};
struct VplHostRecord1_ {
    metal::float4 m0_;
    type_3 m1_;
};
struct VplHostRecord0_ {
    metal::float4x4 m0_;
    VplHostRecord1_ m1_;
    int m2_;
    uint pad0_;
    uint pad1_;
    uint pad2_;
    metal::packed_float3 m3_;
    uint pad3_;
};
struct type_6 {
    VplHostRecord1_ inner[2];
};
struct VplUniform1_ {
    type_6 value;
};
struct VplUniform2_ {
    float value;
    uint pad0_;
    uint pad1_;
    uint pad2_;
};
struct VplRecord2_ {
    int m0_;
    char _pad1[12];
    metal::float3 m1_;
};
struct type_9 {
    float inner[4];
};
struct VplRecord1_ {
    metal::float4 m0_;
    type_9 m1_;
};
struct VplRecord0_ {
    metal::float4x4 m0_;
    VplRecord1_ m1_;
    int m2_;
    char _pad3[12];
    metal::float3 m3_;
};
struct type_10 {
    VplRecord1_ inner[2];
};
struct VplOutputvertex {
    metal::float4 vpl_out1_0_;
    int vpl_out2_0_;
    char _pad2[12];
    metal::float3 vpl_out2_1_;
    int vpl_out3_0_;
    char _pad4[12];
};
struct VplOutputfragment {
    metal::float4 vpl_out2_0_;
};

void vpl_vertex_f0_(
    constant VplHostRecord0_& vpl_uniform0_,
    thread metal::float2& vpl_vertex_s0_,
    thread metal::float4& vpl_vertex_s1_,
    thread VplRecord2_& vpl_vertex_s2_,
    thread int& vpl_vertex_s3_
) {
    metal::float2 _e1 = vpl_vertex_s0_;
    metal::float4x4 _e7 = vpl_uniform0_.m0_;
    metal::float4 _e10 = vpl_uniform0_.m1_.m0_;
    metal::float4 _e13 = vpl_uniform0_.m1_.m1_.inner[0];
    metal::float4 _e16 = vpl_uniform0_.m1_.m1_.inner[1];
    metal::float4 _e19 = vpl_uniform0_.m1_.m1_.inner[2];
    metal::float4 _e22 = vpl_uniform0_.m1_.m1_.inner[3];
    int _e27 = vpl_uniform0_.m2_;
    metal::float3 _e29 = vpl_uniform0_.m3_;
    vpl_vertex_s1_ = VplRecord0_ {_e7, VplRecord1_ {_e10, type_9 {{_e13.x, _e16.x, _e19.x, _e22.x}}}, _e27, {}, _e29}.m0_ * metal::float4(_e1, 0.0, 1.0);
    int _e35 = vpl_uniform0_.m2_;
    metal::float3 _e37 = vpl_uniform0_.m3_;
    vpl_vertex_s2_ = VplRecord2_ {_e35, {}, _e37};
    vpl_vertex_s3_ = 1;
    return;
}

metal::float4 vpl_fragment_f1_(
    metal::float4 vpl_p0_,
    float vpl_p1_,
    constant VplUniform2_& vpl_uniform2_
) {
    float _e4 = vpl_uniform2_.value;
    return vpl_p0_ * (vpl_p1_ * _e4);
}

void vpl_fragment_f0_(
    constant VplUniform1_& vpl_uniform1_,
    constant VplUniform2_& vpl_uniform2_,
    thread VplRecord2_& vpl_fragment_s0_,
    thread int& vpl_fragment_s1_,
    thread metal::float4& vpl_fragment_s2_
) {
    metal::float4 vpl_r1_ = {};
    type_10 vpl_r5_ = {};
    int vpl_block = {};
    vpl_block = 0;
    uint2 loop_bound = uint2(4294967295u);
    while(true) {
        if (metal::all(loop_bound == uint2(0u))) { break; }
        loop_bound -= uint2(loop_bound.y == 0u, 1u);
        int _e2 = vpl_block;
        switch(_e2) {
            case 0: {
                int _e4 = vpl_fragment_s1_;
                metal::float4 _e9 = vpl_uniform1_.value.inner[_e4].m0_;
                metal::float4 _e14 = vpl_uniform1_.value.inner[_e4].m1_.inner[2];
                metal::float4 _e16 = vpl_fragment_f1_(_e9, _e14.x, vpl_uniform2_);
                VplRecord2_ _e18 = vpl_fragment_s0_;
                vpl_r1_ = _e16;
                vpl_block = (_e18.m0_ < 0) ? 1 : 2;
                break;
            }
            case 1: {
                metal::discard_fragment();
            }
            case 2: {
                metal::float4 _e28 = vpl_uniform1_.value.inner[0].m0_;
                metal::float4 _e31 = vpl_uniform1_.value.inner[0].m1_.inner[0];
                metal::float4 _e34 = vpl_uniform1_.value.inner[0].m1_.inner[1];
                metal::float4 _e37 = vpl_uniform1_.value.inner[0].m1_.inner[2];
                metal::float4 _e40 = vpl_uniform1_.value.inner[0].m1_.inner[3];
                metal::float4 _e46 = vpl_uniform1_.value.inner[1].m0_;
                metal::float4 _e49 = vpl_uniform1_.value.inner[1].m1_.inner[0];
                metal::float4 _e52 = vpl_uniform1_.value.inner[1].m1_.inner[1];
                metal::float4 _e55 = vpl_uniform1_.value.inner[1].m1_.inner[2];
                metal::float4 _e58 = vpl_uniform1_.value.inner[1].m1_.inner[3];
                type_10 _e62 = type_10 {{VplRecord1_ {_e28, type_9 {{_e31.x, _e34.x, _e37.x, _e40.x}}}, VplRecord1_ {_e46, type_9 {{_e49.x, _e52.x, _e55.x, _e58.x}}}}};
                metal::float4 _e64 = vpl_r1_;
                vpl_r5_ = _e62;
                vpl_r5_.inner[1].m0_ = _e64;
                metal::float4 _e70 = vpl_r5_.inner[1].m0_;
                vpl_fragment_s2_ = _e70;
                return;
            }
            default: {
                return;
            }
        }
    }
}

struct vpl_vertex_mainInput {
    metal::float2 vpl_in0_0_ [[attribute(0)]];
};
struct vpl_vertex_mainOutput {
    metal::float4 vpl_out1_0_ [[position]];
    int vpl_out2_0_ [[user(loc0), flat]];
    metal::float3 vpl_out2_1_ [[user(loc1), center_perspective]];
    int vpl_out3_0_ [[user(loc5), flat]];
};
vertex vpl_vertex_mainOutput vpl_vertex_main(
  vpl_vertex_mainInput varyings [[stage_in]]
, constant VplHostRecord0_& vpl_uniform0_ [[buffer(0)]]
) {
    metal::float2 vpl_vertex_s0_ = {};
    metal::float4 vpl_vertex_s1_ = {};
    VplRecord2_ vpl_vertex_s2_ = {};
    int vpl_vertex_s3_ = {};
    const auto vpl_in0_0_ = varyings.vpl_in0_0_;
    vpl_vertex_s0_ = vpl_in0_0_;
    vpl_vertex_f0_(vpl_uniform0_, vpl_vertex_s0_, vpl_vertex_s1_, vpl_vertex_s2_, vpl_vertex_s3_);
    metal::float4 _e3 = vpl_vertex_s1_;
    int _e6 = vpl_vertex_s2_.m0_;
    metal::float3 _e9 = vpl_vertex_s2_.m1_;
    int _e11 = vpl_vertex_s3_;
    const auto _tmp = VplOutputvertex {_e3, _e6, {}, _e9, _e11};
    return vpl_vertex_mainOutput { _tmp.vpl_out1_0_, _tmp.vpl_out2_0_, _tmp.vpl_out2_1_, _tmp.vpl_out3_0_ };
}


struct vpl_fragment_mainInput {
    int vpl_in0_0_1 [[user(loc0), flat]];
    metal::float3 vpl_in0_1_ [[user(loc1), center_perspective]];
    int vpl_in1_0_ [[user(loc5), flat]];
};
struct vpl_fragment_mainOutput {
    metal::float4 vpl_out2_0_ [[color(0)]];
};
fragment vpl_fragment_mainOutput vpl_fragment_main(
  vpl_fragment_mainInput varyings_1 [[stage_in]]
, constant VplUniform1_& vpl_uniform1_ [[buffer(1)]]
, constant VplUniform2_& vpl_uniform2_ [[buffer(2)]]
) {
    VplRecord2_ vpl_fragment_s0_ = {};
    int vpl_fragment_s1_ = {};
    metal::float4 vpl_fragment_s2_ = {};
    const auto vpl_in0_0_1 = varyings_1.vpl_in0_0_1;
    const auto vpl_in0_1_ = varyings_1.vpl_in0_1_;
    const auto vpl_in1_0_ = varyings_1.vpl_in1_0_;
    vpl_fragment_s0_.m0_ = vpl_in0_0_1;
    vpl_fragment_s0_.m1_ = vpl_in0_1_;
    vpl_fragment_s1_ = vpl_in1_0_;
    vpl_fragment_f0_(vpl_uniform1_, vpl_uniform2_, vpl_fragment_s0_, vpl_fragment_s1_, vpl_fragment_s2_);
    metal::float4 _e9 = vpl_fragment_s2_;
    const auto _tmp_1 = VplOutputfragment {_e9};
    return vpl_fragment_mainOutput { _tmp_1.vpl_out2_0_ };
}
