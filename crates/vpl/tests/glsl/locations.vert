#version 420 core
layout(location = 2) in vec4 vpl_attribute2;
layout(location = 3) in mat3 vpl_attribute3;
layout(location = 0) in float vpl_attribute0;
layout(location = 1) in vec2 vpl_attribute1;
layout(location = 0) out float vpl_varying0[3];
layout(location = 4) out vec4 vpl_varying4;
layout(location = 3) out vec2 vpl_varying3;
layout(location = 5) out mat2 vpl_varying5;
void vpl_f0();
void vpl_f0() {
    vec4 vpl_r0;
    mat3 vpl_r1;
    float vpl_r2;
    vec2 vpl_r3;
    float vpl_r4[3];
    mat2 vpl_r5;
    vpl_r0 = vpl_attribute2;
    gl_Position = vpl_r0;
    vpl_varying4 = vpl_r0;
    vpl_r1 = vpl_attribute3;
    vpl_r2 = vpl_attribute0;
    vpl_r4 = float[3](vpl_r2, vpl_r2, vpl_r2);
    vpl_varying0 = vpl_r4;
    vpl_r3 = vpl_attribute1;
    vpl_varying3 = vpl_r3;
    vpl_r5 = mat2(vpl_r2);
    vpl_varying5 = vpl_r5;
    return;
}
void main() {
    vpl_f0();
}
