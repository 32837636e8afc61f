//! The mutation engine every target shares: inputs are either arbitrary
//! bytes or a valid seed with a few edits, so that both the tokenizers
//! (bytes) and the deeper checks behind them (near-valid documents) are hit.

use proptest::collection::vec;
use proptest::prelude::*;

/// Values that have broken parsers before: zero, signs, overflow edges,
/// floats that are not numbers, huge sizes with suffixes, nothing at all,
/// and characters outside ASCII.
pub const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "-0",
    "1e308",
    "-1e308",
    "1e-308",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "4294967295",
    "4294967296",
    "340282366920938463463374607431768211456",
    "99999999999999999999999999999",
    "16384p",
    "18446744073709551615k",
    "9999999999g",
    "1e20t",
    "0.0000000001",
    "0x",
    "0xffffffffffffffff",
    "1..18446744073709551615/1",
    "0..0/0",
    "1:2:3",
    "100%",
    "101%",
    "-5%",
    "${HOME}",
    "$ncpus",
    "",
    " ",
    "=",
    "[",
    "]",
    "\"",
    "#",
    ";",
    ",",
    "é",
    "\u{202e}",
    "\u{feff}",
    "日本",
    "\0",
    "\t",
    "\r",
];

/// Where a mutation lands; indices are reduced modulo the length of what
/// they index, so any generated value applies to any input.
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Pieces are lines, or comma-separated items (`by_item`) for one-line
    /// grammars such as scheduler specs.
    DeletePiece {
        by_item: bool,
        at: usize,
    },
    DuplicatePiece {
        by_item: bool,
        at: usize,
    },
    SwapPieces {
        by_item: bool,
        a: usize,
        b: usize,
    },
    /// A line of another seed, so options meet sections they never share.
    SpliceLine {
        from_seed: usize,
        from_line: usize,
        at: usize,
    },
    /// A token is a run of letters, digits and `._+-%$`: a number, a key,
    /// a size with its suffix.
    ReplaceToken {
        at: usize,
        extreme: usize,
    },
    DeleteToken {
        at: usize,
    },
    /// Everything after the first `=` (or `:` if none) on a line.
    ReplaceValue {
        line: usize,
        extreme: usize,
    },
    InsertExtreme {
        at: usize,
        extreme: usize,
    },
    FlipByte {
        at: usize,
        mask: u8,
    },
    InsertBytes {
        at: usize,
        bytes: Vec<u8>,
    },
    /// A fixed-width integer over the bytes at `at`, for binary records
    /// (blktrace) whose fields are not text.
    OverwriteInteger {
        at: usize,
        value: u64,
        width: u8,
        big_endian: bool,
    },
    Truncate {
        at: usize,
    },
    /// Repeats a chunk, growing the input toward the limits of line and
    /// record counts without making it heavy.
    RepeatChunk {
        at: usize,
        len: usize,
        times: usize,
    },
}

/// One fuzz input, before it is turned into bytes by [`Input::bytes`].
#[derive(Clone, Debug)]
pub enum Input {
    Bytes(Vec<u8>),
    Mutated {
        seed: usize,
        mutations: Vec<Mutation>,
    },
}

/// Bytes repeated by [`Mutation::RepeatChunk`] at most, so a case stays
/// cheap; timing bugs show up well below this.
const REPEAT_LIMIT: usize = 1 << 16;

fn integer() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(u64::MAX),
        Just(u64::from(u32::MAX)),
        Just(i64::MAX as u64),
        Just(1u64 << 63),
        0u64..4096,
        any::<u64>(),
    ]
}

pub fn mutation() -> impl Strategy<Value = Mutation> {
    let index = || any::<usize>();
    prop_oneof![
        1 => (any::<bool>(), index()).prop_map(|(by_item, at)| Mutation::DeletePiece { by_item, at }),
        1 => (any::<bool>(), index()).prop_map(|(by_item, at)| Mutation::DuplicatePiece { by_item, at }),
        1 => (any::<bool>(), index(), index())
            .prop_map(|(by_item, a, b)| Mutation::SwapPieces { by_item, a, b }),
        1 => (index(), index(), index()).prop_map(|(from_seed, from_line, at)| {
            Mutation::SpliceLine {
                from_seed,
                from_line,
                at,
            }
        }),
        3 => (index(), index()).prop_map(|(at, extreme)| Mutation::ReplaceToken { at, extreme }),
        1 => index().prop_map(|at| Mutation::DeleteToken { at }),
        2 => (index(), index()).prop_map(|(line, extreme)| Mutation::ReplaceValue { line, extreme }),
        1 => (index(), index()).prop_map(|(at, extreme)| Mutation::InsertExtreme { at, extreme }),
        1 => (index(), 1u8..=255).prop_map(|(at, mask)| Mutation::FlipByte { at, mask }),
        1 => (index(), vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Mutation::InsertBytes { at, bytes }),
        1 => (index(), integer(), prop_oneof![Just(2u8), Just(4u8), Just(8u8)], any::<bool>())
            .prop_map(|(at, value, width, big_endian)| Mutation::OverwriteInteger {
                at,
                value,
                width,
                big_endian
            }),
        1 => index().prop_map(|at| Mutation::Truncate { at }),
        1 => (index(), 1usize..256, 2usize..512)
            .prop_map(|(at, len, times)| Mutation::RepeatChunk { at, len, times }),
    ]
}

/// Arbitrary bytes one time in four, a mutated seed otherwise (bytes only
/// when there are no seeds).
pub fn input(seed_count: usize) -> BoxedStrategy<Input> {
    let bytes = vec(any::<u8>(), 0..512).prop_map(Input::Bytes);
    if seed_count == 0 {
        return bytes.boxed();
    }
    let mutated = (0..seed_count, vec(mutation(), 1..6))
        .prop_map(|(seed, mutations)| Input::Mutated { seed, mutations });
    prop_oneof![1 => bytes, 3 => mutated].boxed()
}

impl Input {
    pub fn bytes(&self, seeds: &[Vec<u8>]) -> Vec<u8> {
        match self {
            Input::Bytes(bytes) => bytes.clone(),
            Input::Mutated { seed, mutations } => {
                let mut data = seeds[*seed].clone();
                for m in mutations {
                    apply(&mut data, m, seeds);
                }
                data
            }
        }
    }
}

fn separator(by_item: bool) -> u8 {
    if by_item {
        b','
    } else {
        b'\n'
    }
}

/// Byte ranges of `data`'s pieces between separators.
fn pieces(data: &[u8], sep: u8) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in data.iter().enumerate() {
        if b == sep {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, data.len()));
    out
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._+-%$".contains(&b)
}

fn tokens(data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        if is_token_byte(data[i]) {
            let start = i;
            while i < data.len() && is_token_byte(data[i]) {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

fn extreme(index: usize) -> &'static [u8] {
    EXTREMES[index % EXTREMES.len()].as_bytes()
}

/// Applies `m` to `data`; `seeds` feed [`Mutation::SpliceLine`].
pub fn apply(data: &mut Vec<u8>, m: &Mutation, seeds: &[Vec<u8>]) {
    match *m {
        Mutation::DeletePiece { by_item, at } => {
            let sep = separator(by_item);
            let p = pieces(data, sep);
            let (start, end) = p[at % p.len()];
            // The separator after the piece goes with it.
            let end = (end + 1).min(data.len());
            data.drain(start..end);
        }
        Mutation::DuplicatePiece { by_item, at } => {
            let sep = separator(by_item);
            let p = pieces(data, sep);
            let (start, end) = p[at % p.len()];
            let mut copy = data[start..end].to_vec();
            copy.push(sep);
            data.splice(start..start, copy);
        }
        Mutation::SwapPieces { by_item, a, b } => {
            let sep = separator(by_item);
            let p = pieces(data, sep);
            let (a, b) = (a % p.len(), b % p.len());
            let (first, second) = (p[a.min(b)], p[a.max(b)]);
            if first == second {
                return;
            }
            let mut out = data[..first.0].to_vec();
            out.extend_from_slice(&data[second.0..second.1]);
            out.extend_from_slice(&data[first.1..second.0]);
            out.extend_from_slice(&data[first.0..first.1]);
            out.extend_from_slice(&data[second.1..]);
            *data = out;
        }
        Mutation::SpliceLine {
            from_seed,
            from_line,
            at,
        } => {
            if seeds.is_empty() {
                return;
            }
            let source = &seeds[from_seed % seeds.len()];
            let lines = pieces(source, b'\n');
            let (start, end) = lines[from_line % lines.len()];
            let mut line = source[start..end].to_vec();
            line.push(b'\n');
            let targets = pieces(data, b'\n');
            let at = targets[at % targets.len()].0;
            data.splice(at..at, line);
        }
        Mutation::ReplaceToken { at, extreme: e } => {
            let t = tokens(data);
            if let Some(&(start, end)) = t.get(at % t.len().max(1)) {
                data.splice(start..end, extreme(e).iter().copied());
            }
        }
        Mutation::DeleteToken { at } => {
            let t = tokens(data);
            if let Some(&(start, end)) = t.get(at % t.len().max(1)) {
                data.drain(start..end);
            }
        }
        Mutation::ReplaceValue { line, extreme: e } => {
            let lines = pieces(data, b'\n');
            let (start, end) = lines[line % lines.len()];
            let text = &data[start..end];
            let Some(mark) = text
                .iter()
                .position(|&b| b == b'=')
                .or_else(|| text.iter().position(|&b| b == b':'))
            else {
                return;
            };
            data.splice(start + mark + 1..end, extreme(e).iter().copied());
        }
        Mutation::InsertExtreme { at, extreme: e } => {
            let at = at % (data.len() + 1);
            data.splice(at..at, extreme(e).iter().copied());
        }
        Mutation::FlipByte { at, mask } => {
            if !data.is_empty() {
                let at = at % data.len();
                data[at] ^= mask;
            }
        }
        Mutation::InsertBytes { at, ref bytes } => {
            let at = at % (data.len() + 1);
            data.splice(at..at, bytes.iter().copied());
        }
        Mutation::OverwriteInteger {
            at,
            value,
            width,
            big_endian,
        } => {
            let width = usize::from(width);
            if data.len() < width {
                return;
            }
            let at = at % (data.len() - width + 1);
            let bytes = if big_endian {
                value.to_be_bytes()[8 - width..].to_vec()
            } else {
                value.to_le_bytes()[..width].to_vec()
            };
            data[at..at + width].copy_from_slice(&bytes);
        }
        Mutation::Truncate { at } => {
            let at = at % (data.len() + 1);
            data.truncate(at);
        }
        Mutation::RepeatChunk { at, len, times } => {
            if data.is_empty() {
                return;
            }
            let start = at % data.len();
            let end = (start + len).min(data.len());
            let chunk = data[start..end].to_vec();
            let times = times.min(REPEAT_LIMIT / chunk.len().max(1));
            let repeated: Vec<u8> = chunk
                .iter()
                .copied()
                .cycle()
                .take(chunk.len() * times)
                .collect();
            data.splice(end..end, repeated);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(text: &str, m: Mutation) -> String {
        let mut data = text.as_bytes().to_vec();
        apply(&mut data, &m, &[b"x=1\ny=2".to_vec()]);
        String::from_utf8(data).unwrap()
    }

    #[test]
    fn line_edits_keep_the_other_lines() {
        let text = "a=1\nb=2\nc=3";
        assert_eq!(
            applied(
                text,
                Mutation::DeletePiece {
                    by_item: false,
                    at: 1
                }
            ),
            "a=1\nc=3"
        );
        assert_eq!(
            applied(
                text,
                Mutation::SwapPieces {
                    by_item: false,
                    a: 2,
                    b: 0
                }
            ),
            "c=3\nb=2\na=1"
        );
        assert_eq!(
            applied(
                text,
                Mutation::DuplicatePiece {
                    by_item: false,
                    at: 0
                }
            ),
            "a=1\na=1\nb=2\nc=3"
        );
        assert_eq!(
            applied(
                text,
                Mutation::SpliceLine {
                    from_seed: 0,
                    from_line: 1,
                    at: 1
                }
            ),
            "a=1\ny=2\nb=2\nc=3"
        );
    }

    #[test]
    fn values_and_tokens_take_extremes() {
        assert_eq!(
            applied(
                "bs=4k",
                Mutation::ReplaceValue {
                    line: 0,
                    extreme: 1
                }
            ),
            "bs=-1"
        );
        assert_eq!(
            applied(
                "fifo:depth=4,x=2",
                Mutation::ReplaceToken { at: 3, extreme: 6 }
            ),
            "fifo:depth=4,NaN=2"
        );
    }

    #[test]
    fn repeated_chunks_stay_bounded() {
        let m = Mutation::RepeatChunk {
            at: 0,
            len: 1,
            times: usize::MAX,
        };
        assert!(applied("ab", m).len() <= REPEAT_LIMIT + 2);
    }
}
