#version 420 core
layout(location = 0) in vec2 vpl_attribute0;
void vpl_f0();
void vpl_f0() {
    vec2 vpl_r1;
    vec4 vpl_r2;
    vpl_r1 = vpl_attribute0;
    vpl_r2 = vec4(vpl_r1, 0.00000000e0, 1.00000000e0);
    gl_Position = vpl_r2;
    return;
}
void main() {
    vpl_f0();
}
