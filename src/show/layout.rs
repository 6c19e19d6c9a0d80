//! A tensor's values as nested rows, the way numpy prints an array: one bracket per axis, the
//! last axis on one line, a blank line between blocks of rank 3 and more, every value padded to
//! the same width. Beyond [`SUMMARY_THRESHOLD`] values a summary shows the first and last
//! [`EDGE_ITEMS`] along each long axis with `...` between (numpy's `threshold` and `edgeitems`).

use onnx_idx_check::pending::{short_value, PREVIEW_VALUES};
use onnx_idx_check::tensor::{value, DType, Tensor};

/// Tensors with more values than this are summarized unless every value is asked for.
pub const SUMMARY_THRESHOLD: usize = 1000;

/// Values kept at each end of a summarized axis.
pub const EDGE_ITEMS: usize = 3;

/// The most values a summary shows: with many axes, the outer ones keep one value at each end,
/// and a tensor whose axes are all too short to cut (`[2, 2, ..., 2]`) shows its first values flat.
const SUMMARY_BUDGET: usize = 2000;

/// The rendered values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The lines, without a trailing newline.
    pub text: String,
    /// Whether values were left out.
    pub summarized: bool,
}

/// The values of `t`: every one when `full`, else a summary of large tensors (long strings are
/// cut too).
pub fn render(t: &Tensor, full: bool) -> Layout {
    let shape = t.shape();
    let n = t.numel();
    let cell = |i: usize| {
        if full {
            value::display(t, i)
        } else {
            short_value(t, i)
        }
    };
    if shape.is_empty() {
        return Layout {
            text: cell(0),
            summarized: false,
        };
    }
    if n == 0 {
        return Layout {
            text: "[]".to_string(),
            summarized: false,
        };
    }
    let summarize = !full && n > SUMMARY_THRESHOLD;
    let mut edges: Vec<Option<usize>> = shape
        .iter()
        .map(|&d| (summarize && d > 2 * EDGE_ITEMS).then_some(EDGE_ITEMS))
        .collect();
    let shown = |edges: &[Option<usize>]| {
        shape
            .iter()
            .zip(edges)
            .try_fold(1usize, |acc, (&d, e)| {
                acc.checked_mul(e.map_or(d, |e| 2 * e))
            })
            .unwrap_or(usize::MAX)
    };
    if summarize {
        for axis in 0..shape.len() {
            if shown(&edges) <= SUMMARY_BUDGET {
                break;
            }
            if edges[axis].is_some() {
                edges[axis] = Some(1);
            }
        }
        if shown(&edges) > SUMMARY_BUDGET {
            let first: Vec<String> = (0..PREVIEW_VALUES.min(n)).map(cell).collect();
            return Layout {
                text: format!(
                    "[{}, ...] (the first {} values, flattened)",
                    first.join(", "),
                    first.len()
                ),
                summarized: true,
            };
        }
    }
    let strides = strides(shape);
    let grid = Grid {
        shape,
        strides: &strides,
        edges: &edges,
    };
    let mut offsets = Vec::new();
    grid.visit(0, 0, &mut |o| offsets.push(o));
    let cells: Vec<String> = offsets.into_iter().map(cell).collect();
    let width = cells.iter().map(|c| c.chars().count()).max().unwrap_or(0);
    let left = t.dtype() == DType::String;
    let mut padded = cells.into_iter().map(|c| {
        if left {
            format!("{c:<width$}")
        } else {
            format!("{c:>width$}")
        }
    });
    let mut text = String::new();
    grid.write(&mut text, 0, &mut padded);
    Layout {
        text,
        summarized: edges.iter().any(Option::is_some),
    }
}

/// Row-major strides of `shape`, in elements (the shape's element count is known to fit).
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1].saturating_mul(shape[axis + 1]);
    }
    strides
}

/// The positions shown along each axis.
struct Grid<'a> {
    shape: &'a [usize],
    strides: &'a [usize],
    /// `Some(e)`: only the first and last `e` positions, with a gap between.
    edges: &'a [Option<usize>],
}

impl Grid<'_> {
    /// The positions shown along `axis`, `None` standing for the gap.
    fn positions(&self, axis: usize) -> Vec<Option<usize>> {
        let d = self.shape[axis];
        match self.edges[axis] {
            Some(e) => (0..e)
                .map(Some)
                .chain([None])
                .chain((d - e..d).map(Some))
                .collect(),
            None => (0..d).map(Some).collect(),
        }
    }

    /// Calls `f` with the flat offset of every value shown, in the order [`Grid::write`] writes
    /// them.
    fn visit(&self, axis: usize, offset: usize, f: &mut impl FnMut(usize)) {
        for i in self.positions(axis).into_iter().flatten() {
            let at = offset + i * self.strides[axis];
            if axis + 1 == self.shape.len() {
                f(at);
            } else {
                self.visit(axis + 1, at, f);
            }
        }
    }

    /// Writes the block of `axis` (starting at the column of its bracket, `axis`), taking the
    /// values from `cells` in [`Grid::visit`]'s order.
    fn write(&self, out: &mut String, axis: usize, cells: &mut impl Iterator<Item = String>) {
        let last = axis + 1 == self.shape.len();
        // Rows end with a comma; a blank line more between blocks for each axis below the rows.
        let separator = if last {
            ", ".to_string()
        } else {
            format!(
                ",\n{}{}",
                "\n".repeat(self.shape.len() - axis - 2),
                " ".repeat(axis + 1)
            )
        };
        out.push('[');
        for (j, i) in self.positions(axis).into_iter().enumerate() {
            if j > 0 {
                out.push_str(&separator);
            }
            match i {
                None => out.push_str("..."),
                Some(_) if last => out.push_str(&cells.next().unwrap_or_default()),
                Some(_) => self.write(out, axis + 1, cells),
            }
        }
        out.push(']');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec(shape.to_vec(), (0..n as i64).collect()).unwrap()
    }

    #[test]
    fn a_scalar_is_its_value_and_a_vector_one_line() {
        assert_eq!(render(&Tensor::scalar(2.5f32), false).text, "2.5");
        assert_eq!(render(&ints(&[3]), false).text, "[0, 1, 2]");
        assert_eq!(render(&ints(&[0, 3]), false).text, "[]");
    }

    #[test]
    fn a_matrix_has_one_row_per_line_with_padded_values() {
        let l = render(&ints(&[2, 6]), false);
        assert_eq!(
            l.text,
            "[[ 0,  1,  2,  3,  4,  5],\n [ 6,  7,  8,  9, 10, 11]]"
        );
        assert!(!l.summarized);
    }

    #[test]
    fn blocks_of_rank_three_are_separated_by_a_blank_line() {
        // numpy: print(np.arange(8).reshape(2, 2, 2)) (with commas).
        assert_eq!(
            render(&ints(&[2, 2, 2]), false).text,
            "[[[0, 1],\n  [2, 3]],\n\n [[4, 5],\n  [6, 7]]]"
        );
    }

    #[test]
    fn large_tensors_keep_three_values_at_each_end_of_long_axes() {
        // numpy: print(np.arange(1001)) -> [   0    1    2 ...  998  999 1000]
        let l = render(&ints(&[1001]), false);
        assert_eq!(l.text, "[   0,    1,    2, ...,  998,  999, 1000]");
        assert!(l.summarized);
        // The whole thing with `full`.
        let l = render(&ints(&[1001]), true);
        assert!(!l.summarized);
        assert_eq!(l.text.matches(", ").count(), 1000);
        // Rows: the gap is a line of its own; a short axis is kept whole.
        let l = render(&ints(&[200, 2, 10]), false);
        let lines: Vec<&str> = l.text.lines().collect();
        assert_eq!(lines[0], "[[[   0,    1,    2, ...,    7,    8,    9],");
        assert_eq!(lines[1], "  [  10,   11,   12, ...,   17,   18,   19]],");
        assert_eq!(lines[2], "");
        assert!(lines.contains(&" ...,"));
        assert_eq!(
            lines.last().copied(),
            Some("  [3990, 3991, 3992, ..., 3997, 3998, 3999]]]")
        );
    }

    #[test]
    fn many_axes_stay_within_the_budget() {
        // 7^5 = 16807 values; 6^5 = 7776 shown would be over the budget, so outer axes keep one.
        let l = render(&ints(&[7, 7, 7, 7, 7]), false);
        assert!(l.summarized);
        let values = l
            .text
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .count();
        assert_eq!(values, 2 * 2 * 6 * 6 * 6);
        // Axes too short to cut: the first values, flat.
        let l = render(&ints(&[2; 12]), false);
        assert!(l.summarized);
        assert_eq!(
            l.text,
            "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, ...] (the first 16 values, flattened)"
        );
    }

    #[test]
    fn strings_are_quoted_left_aligned_and_cut_unless_full() {
        let long = "x".repeat(100);
        let t = Tensor::from_vec(vec![2], vec![b"a".to_vec(), long.as_bytes().to_vec()]).unwrap();
        let l = render(&t, false);
        assert!(l.text.starts_with("[\"a\" "), "{}", l.text);
        assert!(l.text.contains("..."));
        assert!(render(&t, true).text.contains(&long));
    }
}
