//! A PNG drawn in memory and written as a file by us: a file that cannot be
//! written (a disk that filled) is said as the I/O error it is, "cannot write
//! FILE: No space left on device", not the drawing library's debug text
//! ("backend error: Drawing backend error: ImageError(IoError(Custom { … }))").

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

/// Draw a `(width, height)` picture with `draw` and write it to `path` as PNG.
pub fn write(
    path: &Path,
    (w, h): (u32, u32),
    draw: impl for<'a> FnOnce(DrawingArea<BitMapBackend<'a>, Shift>) -> Result<(), String>,
) -> Result<(), String> {
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        draw(root).map_err(|e| format!("cannot draw {}: {e}", path.display()))?;
    }
    let mut png = std::io::Cursor::new(Vec::new());
    image::write_buffer_with_format(
        &mut png,
        &pixels,
        w,
        h,
        image::ColorType::Rgb8,
        image::ImageOutputFormat::Png,
    )
    .map_err(|e| format!("cannot encode {}: {e}", path.display()))?;
    std::fs::write(path, png.into_inner())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
