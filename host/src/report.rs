//! What a command prints as its result: one report value, written as JSON under `--json`
//! and as text otherwise, by [`emit`] alone. Commands build the value; each report type says
//! once how it reads as text. Progress and notes are not results: they go to standard error
//! through [`crate::ui`], which `-q/--quiet` silences; a result is printed either way.

use serde::Serialize;
use std::fmt;

/// A command's result: serializable for `--json`, [`fmt::Display`] for text (whole lines,
/// each ending in a newline).
pub trait Report: Serialize + fmt::Display {}

impl<T: Serialize + fmt::Display> Report for T {}

/// How a command prints its result: `--json` or text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Text,
    Json,
}

impl Format {
    pub fn json(json: bool) -> Format {
        if json {
            Format::Json
        } else {
            Format::Text
        }
    }
}

/// Prints `r` on standard output as `format` asks. JSON objects come out with their keys in
/// order, whatever order the report's fields are in.
pub fn emit(r: &impl Report, format: Format) {
    print!("{}", render(r, format));
}

/// [`emit`]'s output, as a string.
pub fn render(r: &impl Report, format: Format) -> String {
    match format {
        Format::Json => {
            let v = serde_json::to_value(r).expect("reports serialize");
            let mut s = serde_json::to_string_pretty(&v).expect("JSON values serialize");
            s.push('\n');
            s
        }
        Format::Text => r.to_string(),
    }
}

/// A report whose JSON was assembled as it was worked out (a tool's report passed on) and
/// whose text is written beside it.
#[derive(Serialize)]
#[serde(transparent)]
pub struct Written<T: Serialize> {
    pub value: T,
    #[serde(skip)]
    pub text: String,
}

impl<T: Serialize> Written<T> {
    pub fn new(value: T, text: String) -> Self {
        Written { value, text }
    }
}

impl<T: Serialize> fmt::Display for Written<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Writes `lines` of text, one per line, for a [`fmt::Display`] of a report.
pub fn lines(f: &mut fmt::Formatter, lines: &[String]) -> fmt::Result {
    lines.iter().try_for_each(|l| writeln!(f, "{l}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct R {
        z: u32,
        a: Option<String>,
    }

    impl fmt::Display for R {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            writeln!(f, "z is {}", self.z)
        }
    }

    #[test]
    fn one_value_two_forms() {
        let r = R { z: 3, a: None };
        assert_eq!(render(&r, Format::Text), "z is 3\n");
        assert_eq!(
            render(&r, Format::Json),
            "{\n  \"a\": null,\n  \"z\": 3\n}\n"
        );
        let w = Written {
            value: serde_json::json!({"k": [1, 2]}),
            text: "k has two\n".into(),
        };
        assert_eq!(render(&w, Format::Text), "k has two\n");
        assert_eq!(
            render(&w, Format::Json),
            "{\n  \"k\": [\n    1,\n    2\n  ]\n}\n"
        );
    }
}
