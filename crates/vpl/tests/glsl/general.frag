#version 420 core
struct vpl_R1 {
    vec4 vpl_m0;
    float vpl_m1[4];
};
struct vpl_R0 {
    mat4 vpl_m0;
    vpl_R1 vpl_m1;
    int vpl_m2;
    vec3 vpl_m3;
};
struct vpl_R2 {
    int vpl_m0;
    vec3 vpl_m1;
};
layout(std140, binding = 0) uniform vpl_Block0 {
    mat4 vpl_m0;
    vpl_R1 vpl_m1;
    int vpl_m2;
    vec3 vpl_m3;
} vpl_u0;
uniform vpl_R1 vpl_u1[2];
uniform float vpl_u2;
layout(location = 0) flat in vpl_R2 vpl_varying0;
layout(location = 5) flat in int vpl_varying5;
layout(location = 0) out vec4 vpl_output0;
void vpl_f0();
vec4 vpl_f1(vec4 vpl_p0, float vpl_p1);
void vpl_f0() {
    int vpl_r0;
    vec4 vpl_r1;
    bool vpl_r2;
    vpl_R2 vpl_r3;
    float vpl_r4;
    vpl_R1 vpl_r5[2];
    vpl_R1 vpl_r6;
    int vpl_block = 0;
    for (;;) {
        switch (vpl_block) {
        case 0: {
            vpl_r0 = vpl_varying5;
            vpl_r1 = vpl_u1[vpl_r0].vpl_m0;
            vpl_r4 = vpl_u1[vpl_r0].vpl_m1[2];
            vpl_r1 = vpl_f1(vpl_r1, vpl_r4);
            vpl_r3 = vpl_varying0;
            vpl_r0 = vpl_r3.vpl_m0;
            vpl_r2 = vpl_r0 < 0;
            vpl_block = vpl_r2 ? 1 : 2;
            break;
        }
        case 1: {
            discard;
            return;
        }
        case 2: {
            vpl_r5 = vpl_u1;
            vpl_r6 = vpl_r5[0];
            vpl_r5[1].vpl_m0 = vpl_r1;
            vpl_r1 = vpl_r5[1].vpl_m0;
            vpl_output0 = vpl_r1;
            return;
        }
        default:
            return;
        }
    }
}
vec4 vpl_f1(vec4 vpl_p0, float vpl_p1) {
    vec4 vpl_r0;
    float vpl_r1;
    float vpl_r2;
    vpl_r0 = vpl_p0;
    vpl_r1 = vpl_p1;
    vpl_r2 = vpl_u2;
    vpl_r1 = vpl_r1 * vpl_r2;
    vpl_r0 = vpl_r0 * vpl_r1;
    return vpl_r0;
}
void main() {
    vpl_f0();
}
