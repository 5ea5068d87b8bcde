#version 420 core
layout(location = 0) out vec4 vpl_output0;
void vpl_f0();
int vpl_f1(int vpl_p0);
void vpl_f0() {
    int vpl_r0;
    int vpl_r1;
    bool vpl_r2;
    float vpl_r3;
    vec4 vpl_r4;
    int vpl_block = 0;
    for (;;) {
        switch (vpl_block) {
        case 0: {
            vpl_r0 = 0;
            vpl_r1 = 1;
            vpl_block = 1;
            break;
        }
        case 1: {
            vpl_r2 = vpl_r0 < 4;
            vpl_block = vpl_r2 ? 2 : 3;
            break;
        }
        case 2: {
            vpl_r1 = vpl_f1(vpl_r1);
            vpl_r0 = vpl_r0 + 1;
            vpl_block = 1;
            break;
        }
        case 3: {
            vpl_r3 = float(vpl_r1);
            vpl_r3 = vpl_r3 / 1.60000000e1;
            vpl_r4 = vec4(0.00000000e0, vpl_r3, 0.00000000e0, 1.00000000e0);
            vpl_output0 = vpl_r4;
            return;
        }
        default:
            return;
        }
    }
}
int vpl_f1(int vpl_p0) {
    int vpl_r0;
    vpl_r0 = vpl_p0;
    vpl_r0 = vpl_r0 * 2;
    return vpl_r0;
}
void main() {
    vpl_f0();
}
