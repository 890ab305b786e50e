//! The documentation as a newcomer meets it: a README short enough to read, links that lead
//! somewhere, no development history, and every generated table equal to what
//! `docs/tables.sh` makes of its JSON today (so no number is typed by hand or left stale).

mod common;

use common::{have, root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The README is a front page: its prose (outside ``` blocks) stays under this many words.
const README_MAX_WORDS: usize = 1500;

/// Every Markdown file of the repository, outside build output and hidden folders.
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else if name.ends_with(".md") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &mut out);
    out.sort();
    out
}

/// The lines of a Markdown file outside ``` blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The anchor a Markdown renderer gives a heading: lower case, punctuation dropped, spaces
/// as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn the_readme_is_a_front_page() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let words: usize = prose(&text)
        .iter()
        .map(|l| l.split_whitespace().count())
        .sum();
    assert!(
        words <= README_MAX_WORDS,
        "README.md has {words} words of prose, more than {README_MAX_WORDS}: move detail into docs/"
    );
}

#[test]
fn every_markdown_link_leads_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in prose(&text) {
            for (i, _) in line.match_indices("](") {
                let rest = &line[i + 2..];
                let Some(end) = rest.find(')') else { continue };
                let link = &rest[..end];
                if link.contains("://") || link.starts_with("mailto:") {
                    continue;
                }
                let (path, frag) = link.split_once('#').unwrap_or((link, ""));
                let target = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path)
                };
                let ok = target.exists()
                    && (frag.is_empty()
                        || !path.is_empty() && !path.ends_with(".md")
                        || prose(&std::fs::read_to_string(&target).unwrap())
                            .iter()
                            .filter_map(|l| l.strip_prefix('#'))
                            .any(|h| anchor(h.trim_start_matches('#')) == frag));
                if !ok {
                    broken.push(format!("{}: ({link})", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn docs_describe_the_product_not_its_history() {
    // Markdown and board files as they are; in code, comment lines only.
    let mut found = Vec::new();
    let words = [
        "issue ",
        "issues ",
        "session ",
        "sessions ",
        "round ",
        "rounds ",
    ];
    let mut files = markdown_files();
    for dir in [
        "boards",
        "core",
        "flow",
        "fuzz",
        "hdl",
        "host",
        "kernels",
        "opencl",
        "planner",
        "reference",
        "tests",
    ] {
        let mut stack = vec![root().join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if ["rs", "cl", "toml"]
                    .iter()
                    .any(|x| p.extension().is_some_and(|e| e == *x))
                {
                    files.push(p);
                }
            }
        }
    }
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = !file.extension().is_some_and(|e| e == "md");
        for (n, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if code && !(t.starts_with("//") || t.starts_with('#')) {
                continue;
            }
            // one of these words followed by a digit names a piece of development history
            let lower = t.to_lowercase();
            let numbered = words.iter().any(|w| {
                lower
                    .match_indices(w)
                    .any(|(i, _)| lower[i + w.len()..].starts_with(|c: char| c.is_ascii_digit()))
            });
            // the founders' document outside the repository, spelled in two parts so this
            // check does not cite it itself
            let outside = concat!("DESIGN", ".md");
            if numbered || t.contains(outside) || lower.contains("this round") {
                found.push(format!("{}:{}: {t}", file.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the docs speak of development history or cite a document outside the repository:\n{}",
        found.join("\n")
    );
}

#[test]
fn generated_tables_are_what_their_json_gives() {
    if !(have("bash", "bash") && have("jq", "jq")) {
        return;
    }
    let mut stale = Vec::new();
    let mut blocks = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let Some(args) = line
                .strip_prefix("<!-- generated: ")
                .and_then(|l| l.strip_suffix(" -->"))
            else {
                continue;
            };
            let kept: Vec<&str> = lines
                .by_ref()
                .take_while(|l| *l != "<!-- end generated -->")
                .collect();
            let out = Command::new("bash")
                .arg("docs/tables.sh")
                .args(args.split_whitespace())
                .current_dir(root())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}: docs/tables.sh {args} failed: {}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            blocks += 1;
            if String::from_utf8_lossy(&out.stdout).lines().ne(kept) {
                stale.push(format!("{}: {args}", file.display()));
            }
        }
    }
    assert!(blocks > 0, "no generated tables found");
    assert!(
        stale.is_empty(),
        "tables that differ from their JSON (run docs/tables.sh update FILE):\n{}",
        stale.join("\n")
    );
}
