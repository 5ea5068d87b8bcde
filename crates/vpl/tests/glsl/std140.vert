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
layout(location = 0) in vec2 vpl_attribute0;
void vpl_f0();
void vpl_f0() {
    vec4 vpl_r0;
    vec2 vpl_r1;
    vpl_r1 = vpl_attribute0;
    vpl_r0 = vec4(vpl_r1, 0.00000000e0, 1.00000000e0);
    gl_Position = vpl_r0;
    return;
}
void main() {
    vpl_f0();
}
