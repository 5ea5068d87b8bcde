#version 420 core
struct vpl_R1 {
    float vpl_m0;
    vec3 vpl_m1;
};
struct vpl_R0 {
    float vpl_m0;
    vec3 vpl_m1;
    float vpl_m2;
    vec2 vpl_m3;
    int vpl_m4[3];
    mat3x2 vpl_m5;
    vpl_R1 vpl_m6;
    vpl_R1 vpl_m7[2];
    bool vpl_m8;
    vec4 vpl_m9;
};
layout(std140, binding = 0) uniform vpl_Block0 {
    float vpl_m0;
    vec3 vpl_m1;
    float vpl_m2;
    vec2 vpl_m3;
    int vpl_m4[3];
    mat3x2 vpl_m5;
    vpl_R1 vpl_m6;
    vpl_R1 vpl_m7[2];
    bool vpl_m8;
    vec4 vpl_m9;
} vpl_u0;
layout(location = 0) out vec4 vpl_output0;
void vpl_f0();
void vpl_f0() {
    vec4 vpl_r0;
    vpl_R0 vpl_r1;
    vpl_r1 = vpl_R0(vpl_u0.vpl_m0, vpl_u0.vpl_m1, vpl_u0.vpl_m2, vpl_u0.vpl_m3, vpl_u0.vpl_m4, vpl_u0.vpl_m5, vpl_u0.vpl_m6, vpl_u0.vpl_m7, vpl_u0.vpl_m8, vpl_u0.vpl_m9);
    vpl_r0 = vpl_r1.vpl_m9;
    vpl_output0 = vpl_r0;
    return;
}
void main() {
    vpl_f0();
}
