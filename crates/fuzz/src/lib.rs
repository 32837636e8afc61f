//! Fuzzing for iosteer's input surfaces, on stable Rust: proptest draws
//! either arbitrary bytes or a valid seed with structured mutations
//! ([`mutate`]), and [`run::fuzz`] calls a target on each, counting panics,
//! hangs and broken promises. The targets are in `tests/fuzz/`; CI runs a
//! short slice of each, `scripts/fuzz.sh` a long run.

pub mod mutate;
pub mod run;

pub use run::{fuzz, Outcome, Totals};

/// Reads a file of the repository by its path from the root, for seeds.
pub fn repo_file(path: &str) -> Vec<u8> {
    let full = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("seed {full}: {e}"))
}

/// Seeds written in the test: each text as bytes.
pub fn text_seeds(texts: &[&str]) -> Vec<Vec<u8>> {
    texts.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// The first `lines` lines of a text seed: big sample traces make slow
/// cases without reaching more of the parser.
pub fn head(text: &[u8], lines: usize) -> Vec<u8> {
    let end = text
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(lines.saturating_sub(1))
        .map_or(text.len(), |(i, _)| i + 1);
    text[..end].to_vec()
}
