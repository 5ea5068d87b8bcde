#version 420 core
struct vpl_R0 {
    vec4 vpl_m0;
    float vpl_m1;
};
layout(std140, binding = 0) uniform vpl_Block0 {
    vec4 vpl_m0;
    float vpl_m1;
} vpl_u0;
layout(location = 0) in vec3 vpl_attribute0;
void vpl_f0();
void vpl_f0() {
    vec3 vpl_r0;
    vec4 vpl_r1;
    vpl_r0 = vpl_attribute0;
    vpl_r1 = vec4(vpl_r0, 1.00000000e0);
    gl_Position = vpl_r1;
    return;
}
void main() {
    vpl_f0();
}
