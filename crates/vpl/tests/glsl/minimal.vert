#version 420 core
void vpl_f0();
void vpl_f0() {
    vec4 vpl_r0;
    vpl_r0 = vec4(0.00000000e0, 0.00000000e0, 0.00000000e0, 1.00000000e0);
    gl_Position = vpl_r0;
    return;
}
void main() {
    vpl_f0();
}
