#version 420 core
struct vpl_R0 {
    vec3 vpl_m0;
    float vpl_m1;
};
struct vpl_R1 {
    vpl_R0 vpl_m0[3];
    int vpl_m1;
};
layout(location = 0) out vec4 vpl_output0;
void vpl_f0();
void vpl_f0() {
    vec3 vpl_r0;
    vpl_R0 vpl_r1;
    vpl_R0 vpl_r2[3];
    vpl_R1 vpl_r3;
    int vpl_r4;
    float vpl_r5;
    vec4 vpl_r6;
    vpl_r0 = vec3(1.00000000e0, 0.00000000e0, 0.00000000e0);
    vpl_r1 = vpl_R0(vpl_r0, 1.00000000e0);
    vpl_r2 = vpl_R0[3](vpl_r1, vpl_r1, vpl_r1);
    vpl_r3 = vpl_R1(vpl_r2, 0);
    vpl_r4 = 2;
    vpl_r3.vpl_m1 = vpl_r4;
    vpl_r4 = vpl_r3.vpl_m1;
    vpl_r0 = vec3(0.00000000e0, 1.00000000e0, 0.00000000e0);
    vpl_r3.vpl_m0[vpl_r4].vpl_m0 = vpl_r0;
    vpl_r0 = vpl_r3.vpl_m0[vpl_r4].vpl_m0;
    vpl_r5 = vpl_r3.vpl_m0[2].vpl_m1;
    vpl_r6 = vec4(vpl_r0, vpl_r5);
    vpl_output0 = vpl_r6;
    return;
}
void main() {
    vpl_f0();
}
