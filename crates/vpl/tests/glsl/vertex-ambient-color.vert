#version 420 core
layout(location = 0) in vec3 vpl_attribute0;
layout(location = 1) in vec4 vpl_attribute1;
layout(location = 0) out vec4 vpl_varying0;
void vpl_f0();
void vpl_f0() {
    vec3 vpl_r0;
    vec4 vpl_r1;
    vpl_r0 = vpl_attribute0;
    vpl_r1 = vec4(vpl_r0, 1.00000000e0);
    gl_Position = vpl_r1;
    vpl_r1 = vpl_attribute1;
    vpl_varying0 = vpl_r1;
    return;
}
void main() {
    vpl_f0();
}
