//! A hollow ring that looks the same in SVG and PNG.

use plotters::element::Circle;
use plotters::style::{Color, ShapeStyle};

/// A ring `width` pixels thick drawn as one-pixel circles, each half a pixel
/// inside the last: plotters' bitmap backend draws a thicker stroke of a
/// circle with holes (the PNG's firm p99.9 rings read dotted), where its SVG
/// backend draws either as a ring.
pub(crate) fn ring<C: Clone>(
    at: C,
    radius: i32,
    width: u32,
    color: &impl Color,
) -> impl Iterator<Item = Circle<C, f64>> {
    let style: ShapeStyle = color.stroke_width(1);
    // Half a pixel apart: a whole pixel apart, an SVG viewer's anti-aliasing
    // left a seam between them, two rings.
    (0..2 * width as i32 - 1)
        .map(move |k| Circle::new(at.clone(), f64::from(radius) - f64::from(k) / 2.0, style))
}

#[cfg(test)]
mod tests {
    use plotters::prelude::*;

    /// The rays from the centre, out of 720, that cross no ink on the ring, or
    /// cross ink, a hole, then ink again: gaps in a ring drawn into a PNG.
    fn gaps(draw: impl Fn(&DrawingArea<BitMapBackend, plotters::coord::Shift>)) -> usize {
        let (w, h) = (41u32, 41u32);
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            draw(&root);
            root.present().unwrap();
        }
        let ink = |x: f64, y: f64| {
            let (x, y) = (x.round() as usize, y.round() as usize);
            buf[(y * w as usize + x) * 3..][..3] != [255, 255, 255]
        };
        (0..720)
            .filter(|&step| {
                let a = (step as f64 / 2.0).to_radians();
                let along: String = (0..=50)
                    .map(|i| {
                        let r = 6.5 + f64::from(i) * 0.1;
                        if ink(20.0 + r * a.cos(), 20.0 + r * a.sin()) {
                            '#'
                        } else {
                            '.'
                        }
                    })
                    .collect();
                // No ink at all, or ink, then none, then ink again.
                let t = along.trim_matches('.');
                t.is_empty() || t.contains('.')
            })
            .count()
    }

    /// A ring three pixels thick in a PNG has no gap; plotters' own thick
    /// stroke of a circle had some, the ring drawn dotted.
    #[test]
    fn a_png_ring_is_whole() {
        let ours = gaps(|root| {
            for c in super::ring((20, 20), 10, 3, &RED) {
                root.draw(&c).unwrap();
            }
        });
        assert_eq!(ours, 0);
        let stroke = gaps(|root| {
            root.draw(&Circle::new((20, 20), 10, RED.stroke_width(3)))
                .unwrap();
        });
        assert!(
            stroke > 0,
            "plotters draws a thick circle whole now: {stroke}"
        );
    }
}
