#version 420 core
layout(binding = 0) uniform sampler2D vpl_u0;
layout(location = 0) in vec2 vpl_varying0;
layout(location = 1) in vec4 vpl_varying1;
layout(location = 0) out vec4 vpl_output0;
void vpl_f0();
void vpl_f0() {
    vec2 vpl_r1;
    vec4 vpl_r2;
    vec4 vpl_r3;
    vpl_r1 = vpl_varying0;
    vpl_r2 = texture(vpl_u0, vpl_r1);
    vpl_r3 = vpl_varying1;
    vpl_r2 = vpl_r2 * vpl_r3;
    vpl_output0 = vpl_r2;
    return;
}
void main() {
    vpl_f0();
}
