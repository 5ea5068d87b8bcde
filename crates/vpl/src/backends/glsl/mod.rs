//! GLSL 4.20 core backend (spec section 12).
