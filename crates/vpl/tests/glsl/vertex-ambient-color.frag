#version 420 core
layout(location = 0) in vec4 vpl_varying0;
layout(location = 0) out vec4 vpl_output0;
void vpl_f0();
void vpl_f0() {
    vec4 vpl_r0;
    vpl_r0 = vpl_varying0;
    vpl_output0 = vpl_r0;
    return;
}
void main() {
    vpl_f0();
}
