#version 420 core
struct vpl_R0 {
    vec4 vpl_m0;
    float vpl_m1;
};
layout(std140, binding = 0) uniform vpl_Block0 {
    vec4 vpl_m0;
    float vpl_m1;
} vpl_u0;
layout(location = 0) out vec4 vpl_output0;
void vpl_f0();
void vpl_f0() {
    vec4 vpl_r0;
    float vpl_r1;
    vpl_r0 = vpl_u0.vpl_m0;
    vpl_r1 = vpl_u0.vpl_m1;
    vpl_r0 = vpl_r0 * vpl_r1;
    vpl_output0 = vpl_r0;
    return;
}
void main() {
    vpl_f0();
}
