//! Columns found by the names a header line gives them, for the formats
//! whose releases print a header and differ in column order between
//! copies (Thesios, Tectonic): a reader asks for a column by name, never
//! by position.

use crate::num::{quoted, Bad};

/// Where each wanted column is in a row, found from its header.
pub(crate) struct Columns {
    /// For each wanted name (in the order asked), its index in a row.
    at: Vec<Option<usize>>,
    /// How many columns the header names: every row must have as many.
    pub width: usize,
}

impl Columns {
    /// The columns of `header` (its names, trimmed, compared without
    /// regard to case), for the `wanted` names; `Err` naming the first
    /// `required` name the header lacks.
    pub fn new(header: &[&str], wanted: &[&str], required: &[&str]) -> Result<Columns, Bad> {
        let find = |name: &str| header.iter().position(|h| h.eq_ignore_ascii_case(name));
        if let Some(missing) = required.iter().find(|r| find(r).is_none()) {
            return Err(Bad::new(
                "header",
                format!(
                    "names no {} column (the header read: {})",
                    quoted(missing),
                    quoted(&header.join(","))
                ),
            ));
        }
        Ok(Columns {
            at: wanted.iter().map(|w| find(w)).collect(),
            width: header.len(),
        })
    }

    /// The columns at fixed positions, `wanted[i]` at `positions[i]`.
    pub fn fixed(positions: &[Option<usize>], width: usize) -> Columns {
        Columns {
            at: positions.to_vec(),
            width,
        }
    }

    /// Row `row`'s value of wanted column `k`, `None` when the header has
    /// no such column or the value is empty.
    pub fn get<'a>(&self, row: &[&'a str], k: usize) -> Option<&'a str> {
        self.at[k].map(|i| row[i]).filter(|v| !v.is_empty())
    }

    /// Like [`Columns::get`] for a required column: empty is an error.
    pub fn need<'a>(&self, row: &[&'a str], k: usize, name: &'static str) -> Result<&'a str, Bad> {
        self.get(row, k).ok_or_else(|| Bad::new(name, "empty"))
    }

    /// `Err` unless `row` has as many columns as the header.
    pub fn check_width(&self, row: &[&str]) -> Result<(), Bad> {
        if row.len() == self.width {
            Ok(())
        } else {
            Err(Bad::new(
                "line",
                format!(
                    "expected {} columns (as the header names), found {}",
                    self.width,
                    row.len()
                ),
            ))
        }
    }
}
