#version 420 core
struct vpl_R0 {
    vec3 vpl_m0;
    float vpl_m1;
};
struct vpl_R1 {
    vpl_R0 vpl_m0[3];
    int vpl_m1;
};
layout(location = 0) in vec4 vpl_attribute0;
void vpl_f0();
void vpl_f0() {
    vec4 vpl_r0;
    vpl_r0 = vpl_attribute0;
    gl_Position = vpl_r0;
    return;
}
void main() {
    vpl_f0();
}
