//! Pixel comparison for the driver tests: one definition that the test
//! crates of `vpl_gl`, `vpl_vk` and `vpl_web` include with
//! `#[path = ".../vpl_gl/tests/support/pixels.rs"] mod pixels;`.
// Each including test crate uses a part of it.
#![allow(dead_code)]

use vpl_gl::Image;

/// Whether every channel of `actual` is within `tolerance` of `expected`.
pub fn close(actual: [u8; 4], expected: [u8; 4], tolerance: u8) -> bool {
    actual
        .iter()
        .zip(expected)
        .all(|(a, e)| a.abs_diff(e) <= tolerance)
}

/// Every pixel position of `image`, row by row from the top.
pub fn positions(image: &Image) -> impl Iterator<Item = (u32, u32)> + use<> {
    let (width, height) = (image.width, image.height);
    (0..height).flat_map(move |y| (0..width).map(move |x| (x, y)))
}

/// The first pixel of `image` (row by row) not within `tolerance` of
/// `expected`: its position and colour.
pub fn first_mismatch(
    image: &Image,
    expected: [u8; 4],
    tolerance: u8,
) -> Option<(u32, u32, [u8; 4])> {
    positions(image)
        .map(|(x, y)| (x, y, image.pixel(x, y)))
        .find(|&(_, _, p)| !close(p, expected, tolerance))
}

/// The first position where `a` and `b` differ by more than `tolerance`
/// in a channel, with both colours (`a`'s size is walked; the images must
/// have the same size).
pub fn first_difference(
    a: &Image,
    b: &Image,
    tolerance: u8,
) -> Option<(u32, u32, [u8; 4], [u8; 4])> {
    positions(a)
        .map(|(x, y)| (x, y, a.pixel(x, y), b.pixel(x, y)))
        .find(|&(_, _, p, q)| !close(p, q, tolerance))
}

/// The largest channel difference between two images (`u8::MAX` when
/// their sizes differ).
pub fn largest_difference(a: &Image, b: &Image) -> u8 {
    if (a.width, a.height) != (b.width, b.height) {
        return u8::MAX;
    }
    a.rgba
        .iter()
        .zip(&b.rgba)
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

/// Asserts that pixel (`x`, `y`) is within `tolerance` of `expected`.
#[track_caller]
pub fn assert_pixel(image: &Image, x: u32, y: u32, expected: [u8; 4], tolerance: u8) {
    let actual = image.pixel(x, y);
    assert!(
        close(actual, expected, tolerance),
        "pixel ({x}, {y}) is {actual:?}, expected {expected:?} ± {tolerance}"
    );
}

/// Asserts that every pixel is within `tolerance` of `expected`.
#[track_caller]
pub fn assert_uniform(image: &Image, expected: [u8; 4], tolerance: u8) {
    if let Some((x, y, actual)) = first_mismatch(image, expected, tolerance) {
        panic!("pixel ({x}, {y}) is {actual:?}, expected {expected:?} ± {tolerance}");
    }
}
