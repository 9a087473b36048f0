//! Test helper shared by the chart tests: what an SVG document says.

/// The text of each `<text>` element of an SVG document, in order.
pub(super) fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            Some(
                t.split_once('>')?
                    .1
                    .split_once("</text>")?
                    .0
                    .trim()
                    .to_string(),
            )
        })
        .collect()
}
