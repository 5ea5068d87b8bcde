#version 420 core
layout(location = 5) in mat2 vpl_varying5;
layout(location = 4) in vec4 vpl_varying4;
layout(location = 0) in float vpl_varying0[3];
layout(location = 2) out vec4 vpl_output2;
layout(location = 0) out ivec4 vpl_output0;
void vpl_f0();
void vpl_f0() {
    vec4 vpl_r0;
    ivec4 vpl_r1;
    vpl_r0 = vpl_varying4;
    vpl_output2 = vpl_r0;
    vpl_r1 = ivec4(1);
    vpl_output0 = vpl_r1;
    return;
}
void main() {
    vpl_f0();
}
