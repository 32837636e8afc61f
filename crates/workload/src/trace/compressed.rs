//! Compressed traces, read as they are decompressed.
//!
//! Published traces come compressed (SNIA's MSR Cambridge files are
//! `.csv.gz`; others ship as `.bz2` or `.zst`), and a day of blktrace
//! output is tens of GiB before it is. A trace file that starts with the
//! magic bytes of gzip, bzip2 or zstd is decompressed on the fly, by its
//! content and not its name, on every pass the replay makes: nothing is
//! written to disk and memory stays flat, as for a plain trace. Line numbers
//! in messages count the decompressed text.
//!
//! Concatenated members (pigz, `cat a.gz b.gz`, several zstd frames) are
//! read one after the other, as `zcat` reads them. A stream cut short or
//! corrupt is an error naming the file, never a shorter trace.
//!
//! What is recognised and not read (xz, lz4, zip, 7-Zip, and a tar
//! archive, compressed or not) is an error that says how to unpack it.

use std::io::{self, BufRead, BufReader, Read};

use super::{io_error, TraceError};

/// A trace's text or records, decompressed if they were compressed.
pub(crate) type Content = Box<dyn BufRead + Send>;

/// Buffer between a decoder and the line reader.
const BUFFER: usize = 1 << 16;

/// Where tar's `ustar` magic stands in an archive's first header.
const TAR_MAGIC_AT: usize = 257;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compression {
    Gzip,
    Bzip2,
    Zstd,
}

impl Compression {
    fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
        }
    }
}

/// What a file's first bytes say it is.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Plain,
    Compressed(Compression),
    /// Recognised and not read: what it is, and the command that unpacks it.
    Packed {
        what: &'static str,
        unpack: &'static str,
    },
}

fn sniff(head: &[u8]) -> Kind {
    let packed = |what, unpack| Kind::Packed { what, unpack };
    match head {
        [0x1f, 0x8b, ..] => Kind::Compressed(Compression::Gzip),
        [b'B', b'Z', b'h', b'1'..=b'9', ..] => Kind::Compressed(Compression::Bzip2),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Kind::Compressed(Compression::Zstd),
        [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => packed("xz-compressed", "xz -dk FILE"),
        [0x04, 0x22, 0x4d, 0x18, ..] => packed("lz4-compressed", "lz4 -d FILE"),
        [b'P', b'K', 0x03, 0x04, ..] => packed("a zip archive", "unzip FILE"),
        [b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c, ..] => packed("a 7-Zip archive", "7z x FILE"),
        _ if is_tar(head) => packed("a tar archive", "tar -xf FILE"),
        _ => Kind::Plain,
    }
}

fn is_tar(head: &[u8]) -> bool {
    head.get(TAR_MAGIC_AT..TAR_MAGIC_AT + 5) == Some(b"ustar")
}

/// `source` as the trace's content: decompressed when its first bytes are
/// gzip, bzip2 or zstd; an error when they are an archive or a compression
/// not read here.
pub(crate) fn decompressed<R>(file: &str, mut source: R) -> Result<Content, TraceError>
where
    R: BufRead + Send + 'static,
{
    let packed = |what: &str, unpack: &str| TraceError::Packed {
        file: file.to_string(),
        what: what.to_string(),
        unpack: unpack.replace("FILE", file),
    };
    let head = source.fill_buf().map_err(|e| io_error(file, &e))?;
    let compression = match sniff(head) {
        Kind::Plain => return Ok(Box::new(source)),
        Kind::Packed { what, unpack } => return Err(packed(what, unpack)),
        Kind::Compressed(compression) => compression,
    };
    let decoder: Box<dyn Read + Send> = match compression {
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(source)),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(source)),
        Compression::Zstd => Box::new(ZstdFrames::new(source)),
    };
    let mut content = BufReader::with_capacity(BUFFER, Named::new(compression, decoder));
    let head = content.fill_buf().map_err(|e| io_error(file, &e))?;
    if is_tar(head) {
        let what = format!("a tar archive ({}-compressed)", compression.name());
        return Err(packed(&what, "tar -xf FILE"));
    }
    Ok(Box::new(content))
}

/// A decoder whose errors say which compression they are about.
struct Named {
    compression: Compression,
    decoder: Box<dyn Read + Send>,
}

impl Named {
    fn new(compression: Compression, decoder: Box<dyn Read + Send>) -> Named {
        Named {
            compression,
            decoder,
        }
    }
}

impl Read for Named {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.decoder.read(buf).map_err(|e| {
            let problem = match e.kind() {
                io::ErrorKind::UnexpectedEof => "the compressed stream is cut short".to_string(),
                _ => e.to_string(),
            };
            io::Error::new(
                e.kind(),
                format!("{} data: {problem}", self.compression.name()),
            )
        })
    }
}

/// zstd frames one after the other (`zstd` writes one; `pzstd` and `cat`
/// make several).
struct ZstdFrames<R: BufRead> {
    state: Frames<R>,
}

enum Frames<R: BufRead> {
    /// No frame started yet, or the last one ended: the source.
    Between(R),
    Frame(Box<ruzstd::decoding::StreamingDecoder<R, ruzstd::decoding::FrameDecoder>>),
    /// A frame header failed to decode (the error was returned).
    Failed,
}

impl<R: BufRead> ZstdFrames<R> {
    fn new(source: R) -> Self {
        ZstdFrames {
            state: Frames::Between(source),
        }
    }
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match std::mem::replace(&mut self.state, Frames::Failed) {
                Frames::Failed => return Err(io::Error::other("after an earlier error")),
                Frames::Between(mut source) => {
                    if source.fill_buf()?.is_empty() {
                        self.state = Frames::Between(source);
                        return Ok(0);
                    }
                    let frame = ruzstd::decoding::StreamingDecoder::new(source)
                        .map_err(|e| cut_short_or(io::Error::other(e)))?;
                    self.state = Frames::Frame(Box::new(frame));
                }
                Frames::Frame(mut frame) => {
                    let n = frame.read(buf).map_err(cut_short_or)?;
                    self.state = match n {
                        0 => Frames::Between(frame.into_inner()),
                        _ => Frames::Frame(frame),
                    };
                    if n > 0 {
                        return Ok(n);
                    }
                }
            }
        }
    }
}

/// `e` as the end of input it comes from, when one of its causes is one
/// (ruzstd wraps a short read in its own errors).
fn cut_short_or(e: io::Error) -> io::Error {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|c| c as _);
    while let Some(c) = cause {
        let io = c.downcast_ref::<io::Error>();
        if io.is_some_and(|io| io.kind() == io::ErrorKind::UnexpectedEof) {
            return io::ErrorKind::UnexpectedEof.into();
        }
        cause = c.source();
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TEXT: &str = "0 0 8 8 1\n1000 0 16 8 0\n2000 0 24 8 1\n";

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    fn bzip2(text: &[u8]) -> Vec<u8> {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        e.write_all(text).unwrap();
        e.finish().unwrap()
    }

    fn zstd(text: &[u8]) -> Vec<u8> {
        ruzstd::encoding::compress_to_vec(text, ruzstd::encoding::CompressionLevel::Fastest)
    }

    fn read_all(bytes: Vec<u8>) -> Result<String, TraceError> {
        let mut source = decompressed("t", io::Cursor::new(bytes))?;
        let mut text = String::new();
        source
            .read_to_string(&mut text)
            .map_err(|e| io_error("t", &e))?;
        Ok(text)
    }

    #[test]
    fn each_compression_gives_back_the_text_and_plain_text_passes_through() {
        for bytes in [TEXT.as_bytes().to_vec(), gzip(TEXT.as_bytes())] {
            assert_eq!(read_all(bytes).unwrap(), TEXT);
        }
        assert_eq!(read_all(bzip2(TEXT.as_bytes())).unwrap(), TEXT);
        assert_eq!(read_all(zstd(TEXT.as_bytes())).unwrap(), TEXT);
    }

    #[test]
    fn concatenated_members_are_read_one_after_the_other() {
        let (first, second) = TEXT.split_at(13);
        for pack in [gzip, bzip2, zstd] {
            let mut bytes = pack(first.as_bytes());
            bytes.extend(pack(second.as_bytes()));
            assert_eq!(read_all(bytes).unwrap(), TEXT);
        }
    }

    #[test]
    fn a_stream_cut_short_is_an_error_not_a_shorter_trace() {
        let long = TEXT.repeat(2000);
        for (name, pack) in [
            ("gzip", gzip as fn(&[u8]) -> Vec<u8>),
            ("bzip2", bzip2),
            ("zstd", zstd),
        ] {
            let mut bytes = pack(long.as_bytes());
            bytes.truncate(bytes.len() * 2 / 3);
            let err = read_all(bytes).unwrap_err().to_string();
            assert_eq!(
                err,
                format!("t: {name} data: the compressed stream is cut short")
            );
        }
    }

    #[test]
    fn archives_and_other_compressions_say_how_to_unpack_them() {
        let mut tar = vec![0u8; 1024];
        tar[..7].copy_from_slice(b"hm0.csv");
        tar[TAR_MAGIC_AT..TAR_MAGIC_AT + 6].copy_from_slice(b"ustar\0");
        let cases = [
            (
                vec![0xfd, b'7', b'z', b'X', b'Z', 0, 1],
                "is xz-compressed",
                "xz -dk t",
            ),
            (b"PK\x03\x04rest".to_vec(), "is a zip archive", "unzip t"),
            (tar.clone(), "is a tar archive", "tar -xf t"),
            (
                gzip(&tar),
                "is a tar archive (gzip-compressed)",
                "tar -xf t",
            ),
        ];
        for (bytes, what, unpack) in cases {
            let err = read_all(bytes).unwrap_err().to_string();
            assert!(err.contains(what) && err.contains(unpack), "{err}");
        }
    }
}
