#version 420 core
struct vpl_R1 {
    vec4 vpl_m0;
    float vpl_m1[4];
};
struct vpl_R0 {
    mat4 vpl_m0;
    vpl_R1 vpl_m1;
    int vpl_m2;
    vec3 vpl_m3;
};
struct vpl_R2 {
    int vpl_m0;
    vec3 vpl_m1;
};
layout(std140, binding = 0) uniform vpl_Block0 {
    mat4 vpl_m0;
    vpl_R1 vpl_m1;
    int vpl_m2;
    vec3 vpl_m3;
} vpl_u0;
uniform vpl_R1 vpl_u1[2];
uniform float vpl_u2;
layout(location = 0) in vec2 vpl_attribute0;
layout(location = 0) flat out vpl_R2 vpl_varying0;
layout(location = 5) flat out int vpl_varying5;
void vpl_f0();
void vpl_f0() {
    vec2 vpl_r0;
    vec4 vpl_r1;
    mat4 vpl_r2;
    vpl_R2 vpl_r3;
    int vpl_r4;
    vec3 vpl_r5;
    vpl_R0 vpl_r6;
    vpl_r0 = vpl_attribute0;
    vpl_r1 = vec4(vpl_r0, 0.00000000e0, 1.00000000e0);
    vpl_r6 = vpl_R0(vpl_u0.vpl_m0, vpl_u0.vpl_m1, vpl_u0.vpl_m2, vpl_u0.vpl_m3);
    vpl_r2 = vpl_r6.vpl_m0;
    vpl_r1 = vpl_r2 * vpl_r1;
    gl_Position = vpl_r1;
    vpl_r4 = vpl_u0.vpl_m2;
    vpl_r5 = vpl_u0.vpl_m3;
    vpl_r3 = vpl_R2(vpl_r4, vpl_r5);
    vpl_varying0 = vpl_r3;
    vpl_varying5 = 1;
    return;
}
void main() {
    vpl_f0();
}
