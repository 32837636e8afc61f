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
//! Concatenated members (`cat a.gz b.gz`, bgzip's blocks, pzstd's frames
//! and its skippable ones) are read one after the other, as `zcat` reads
//! them. A stream cut short or corrupt (zstd's frame checksums are checked)
//! is an error naming the file, never a shorter trace.
//!
//! A tar archive, compressed or not, is read for its one file
//! ([`super::archive`]). What is recognised and not read (xz, lz4, zip,
//! 7-Zip) is an error that says how to unpack it.

use std::io::{self, BufRead, BufReader, Read};

use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

use super::archive::{is_tar_header, TarMember};
use super::{io_error, TraceError};

/// A trace's text or records, decompressed if they were compressed.
pub(crate) type Content = Box<dyn BufRead + Send>;

/// A trace file opened for its content.
pub(crate) struct Opened {
    pub(crate) content: Content,
    /// The file read inside it, when it is a tar archive.
    pub(crate) member: Option<String>,
}

impl Opened {
    /// The name messages give the trace: the file's, and the member's.
    pub(crate) fn name(&self, file: &str) -> String {
        match &self.member {
            Some(member) => format!("{file} ({member})"),
            None => file.to_string(),
        }
    }
}

/// Buffer between a file or a decoder and the line reader.
pub(crate) const BUFFER: usize = 1 << 16;

/// Bytes read ahead to tell what a file is: a tar header's block.
const HEAD: usize = 512;

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
        // A skippable frame (pzstd's first, the seekable format's index).
        [0x50..=0x5f, 0x2a, 0x4d, 0x18, ..] => Kind::Compressed(Compression::Zstd),
        [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => packed("xz-compressed", "xz -dk FILE"),
        [0x04, 0x22, 0x4d, 0x18, ..] => packed("lz4-compressed", "lz4 -d FILE"),
        [b'P', b'K', 0x03, 0x04, ..] => packed("a zip archive", "unzip FILE"),
        [b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c, ..] => packed("a 7-Zip archive", "7z x FILE"),
        _ => Kind::Plain,
    }
}

/// What a file starting with `head` is when it is compressed or an archive,
/// and the command that unpacks FILE: for files read only as text (job
/// files), where a trace's compression would be read through.
pub(crate) fn packed(head: &[u8]) -> Option<(&'static str, &'static str)> {
    match sniff(head) {
        Kind::Plain if is_tar_header(head) => Some(("a tar archive", "tar -xf FILE")),
        Kind::Plain => None,
        Kind::Compressed(Compression::Gzip) => Some(("gzip-compressed", "gunzip -k FILE")),
        Kind::Compressed(Compression::Bzip2) => Some(("bzip2-compressed", "bunzip2 -k FILE")),
        Kind::Compressed(Compression::Zstd) => Some(("zstd-compressed", "zstd -d FILE")),
        Kind::Packed { what, unpack } => Some((what, unpack)),
    }
}

/// `source` as the trace's content: decompressed when its first bytes are
/// gzip, bzip2 or zstd, and the one file inside when it is a tar archive;
/// an error when it is an archive or a compression not read here.
pub(crate) fn decompressed<R>(file: &str, source: R) -> Result<Opened, TraceError>
where
    R: BufRead + Send + 'static,
{
    let source = peeked(source).map_err(|e| io_error(file, &e))?;
    let content: Content = match sniff(source.get_ref().0.get_ref()) {
        Kind::Plain => Box::new(source),
        Kind::Packed { what, unpack } => {
            return Err(TraceError::Packed {
                file: file.to_string(),
                what: what.to_string(),
                unpack: unpack.replace("FILE", file),
            })
        }
        Kind::Compressed(compression) => {
            let decoder: Box<dyn Read + Send> = match compression {
                Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(source)),
                Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(source)),
                Compression::Zstd => Box::new(ZstdFrames::new(source)),
            };
            let data = format!("{} data", compression.name());
            Box::new(BufReader::with_capacity(BUFFER, Named::new(data, decoder)))
        }
    };
    let content = peeked(content).map_err(|e| io_error(file, &e))?;
    if !is_tar_header(content.get_ref().0.get_ref()) {
        let content = Box::new(content);
        return Ok(Opened {
            content,
            member: None,
        });
    }
    let tarred =
        TarMember::open(file, content).map_err(|e| io_error(file, &named("tar archive", e)))?;
    let member = Some(tarred.name().to_string());
    let reader = Named::new("tar archive".to_string(), Box::new(tarred));
    Ok(Opened {
        content: Box::new(BufReader::with_capacity(BUFFER, reader)),
        member,
    })
}

/// `source` with its first [`HEAD`] bytes (fewer at its end) read ahead,
/// so that a pipe's short first read cannot hide what the file is.
fn peeked<R: BufRead>(mut source: R) -> io::Result<io::Chain<io::Cursor<Vec<u8>>, R>> {
    let mut head = Vec::with_capacity(HEAD);
    (&mut source).take(HEAD as u64).read_to_end(&mut head)?;
    Ok(io::Cursor::new(head).chain(source))
}

/// A reader whose errors say what they are about ("gzip data: ...").
struct Named {
    what: String,
    reader: Box<dyn Read + Send>,
}

impl Named {
    fn new(what: String, reader: Box<dyn Read + Send>) -> Named {
        Named { what, reader }
    }
}

impl Read for Named {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf).map_err(|e| named(&self.what, e))
    }
}

/// `e` prefixed with `what` it is about; an end of input a decoder or the
/// archive met is a stream cut short, whatever its own words.
fn named(what: &str, e: io::Error) -> io::Error {
    let kind = e.kind();
    let problem = match e.get_ref().and_then(|r| r.downcast_ref::<Said>()) {
        Some(said) => said.0.clone(),
        None if kind == io::ErrorKind::UnexpectedEof => {
            "cut short: the file ends before the stream does".to_string()
        }
        None => e.to_string(),
    };
    io::Error::new(kind, Said(format!("{what}: {problem}")))
}

/// An error message already said in the trace's terms.
#[derive(Debug)]
struct Said(String);

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Said {}

/// zstd frames one after the other (`zstd` writes one; `cat` and `pzstd`
/// make several, pzstd with skippable frames between), each frame's
/// checksum checked at its end when it has one (zstd writes one by
/// default): damaged data is an error, not a different trace.
struct ZstdFrames<R: BufRead> {
    source: R,
    decoder: Box<FrameDecoder>,
    in_frame: bool,
}

impl<R: BufRead> ZstdFrames<R> {
    fn new(source: R) -> Self {
        ZstdFrames {
            source,
            decoder: Box::new(FrameDecoder::new()),
            in_frame: false,
        }
    }

    /// Starts the next frame; `false` at the end of input.
    fn start_frame(&mut self) -> io::Result<bool> {
        loop {
            if self.source.fill_buf()?.is_empty() {
                return Ok(false);
            }
            match self.decoder.reset(&mut self.source) {
                Ok(()) => return Ok(true),
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    let skipped =
                        io::copy(&mut (&mut self.source).take(length.into()), &mut io::sink())?;
                    if skipped != u64::from(length) {
                        return Err(io::ErrorKind::UnexpectedEof.into());
                    }
                }
                Err(e) => return Err(zstd_error(e)),
            }
        }
    }
}

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame {
                if !self.start_frame()? {
                    return Ok(0);
                }
                self.in_frame = true;
            }
            while self.decoder.can_collect() == 0 && !self.decoder.is_finished() {
                self.decoder
                    .decode_blocks(&mut self.source, BlockDecodingStrategy::UptoBlocks(1))
                    .map_err(zstd_error)?;
            }
            let n = self.decoder.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            let stored = self.decoder.get_checksum_from_data();
            if stored.is_some() && stored != self.decoder.get_calculated_checksum() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a frame's checksum does not match its data (the file is damaged)",
                ));
            }
            self.in_frame = false;
        }
    }
}

/// A zstd decoder's error as an I/O error: an end of input where one of
/// its causes is one, else damaged data in the decoder's words.
fn zstd_error(e: FrameDecoderError) -> io::Error {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(c) = cause {
        let io = c.downcast_ref::<io::Error>();
        if io.is_some_and(|io| io.kind() == io::ErrorKind::UnexpectedEof) {
            return io::ErrorKind::UnexpectedEof.into();
        }
        cause = c.source();
    }
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("not valid zstd data ({e})"),
    )
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
        let mut source = decompressed("t", io::Cursor::new(bytes))?.content;
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
            let cut = format!("t: {name} data: cut short: the file ends before the stream does");
            assert_eq!(err, cut);
        }
    }

    /// A tar archive of `files` (name, content), with a directory first.
    fn tar_of(files: &[(&str, &str)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        let mut dir = tar::Header::new_gnu();
        dir.set_entry_type(tar::EntryType::Directory);
        dir.set_size(0);
        dir.set_cksum();
        builder
            .append_data(&mut dir, "traces/", io::empty())
            .unwrap();
        for (name, text) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(text.len() as u64);
            header.set_cksum();
            builder
                .append_data(&mut header, name, text.as_bytes())
                .unwrap();
        }
        builder.into_inner().unwrap()
    }

    #[test]
    fn a_tar_archive_of_one_file_is_read_for_it_and_of_two_is_refused() {
        let long_name = format!("traces/{}.csv", "x".repeat(150));
        for archive in [
            tar_of(&[("traces/a.csv", TEXT)]),
            tar_of(&[(&long_name, TEXT)]),
        ] {
            for bytes in [archive.clone(), gzip(&archive), zstd(&archive)] {
                let opened = decompressed("t.tgz", io::Cursor::new(bytes)).unwrap();
                assert!(opened.name("t.tgz").starts_with("t.tgz (traces/"));
                let mut text = String::new();
                let mut content = opened.content;
                content.read_to_string(&mut text).unwrap();
                assert_eq!(text, TEXT);
            }
        }
        // A pax record names the member (POSIX tar's long names).
        let mut builder = tar::Builder::new(Vec::new());
        let path: &[u8] = b"pax/named.csv";
        builder.append_pax_extensions([("path", path)]).unwrap();
        let mut header = tar::Header::new_ustar();
        header.set_size(TEXT.len() as u64);
        header.set_cksum();
        builder
            .append_data(&mut header, "short", TEXT.as_bytes())
            .unwrap();
        let pax = builder.into_inner().unwrap();
        let opened = decompressed("p.tar", io::Cursor::new(pax)).unwrap();
        assert_eq!(opened.name("p.tar"), "p.tar (pax/named.csv)");
        let two = tar_of(&[("a.csv", TEXT), ("b.csv", "0 0 0 8 1\n")]);
        let err = read_all(gzip(&two)).unwrap_err().to_string();
        assert_eq!(
            err,
            "t: tar archive: holds more than one file (a.csv, b.csv, ...): extract the one to \
             replay first (tar -xf t b.csv)"
        );
        let mut cut = tar_of(&[("a.csv", &TEXT.repeat(100))]);
        cut.truncate(1500);
        let err = read_all(cut).unwrap_err().to_string();
        assert_eq!(
            err,
            "t: tar archive: cut short: the file ends before the stream does"
        );
        let mut damaged = tar_of(&[("a.csv", TEXT)]);
        damaged[512 + 10] ^= 1;
        let err = read_all(damaged).unwrap_err().to_string();
        assert!(err.contains("checksum does not match"), "{err}");
    }

    /// A reader that hands out one byte a read, as a slow pipe may.
    struct Trickle(io::Cursor<Vec<u8>>);

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let one = buf.len().min(1);
            self.0.read(&mut buf[..one])
        }
    }

    #[test]
    fn damaged_zstd_skippable_frames_and_short_reads() {
        let long = TEXT.repeat(200);
        // A byte flipped in a frame with a checksum: an error, whatever
        // the byte (the data, or what decodes it).
        let packed = zstd(long.as_bytes());
        let mut flipped = 0;
        for at in 12..packed.len() - 4 {
            let mut bytes = packed.clone();
            bytes[at] ^= 0x10;
            match read_all(bytes) {
                Ok(text) => assert_eq!(text, long, "byte {at} flipped read as other data"),
                Err(_) => flipped += 1,
            }
        }
        assert!(flipped > 0);
        // Skippable frames before and between frames are passed over.
        let skip = |n: u8| [[0x50 + n, 0x2a, 0x4d, 0x18, 3, 0, 0, 0].as_slice(), b"abc"].concat();
        let (first, second) = TEXT.split_at(13);
        let bytes = [
            skip(0),
            zstd(first.as_bytes()),
            skip(15),
            zstd(second.as_bytes()),
        ]
        .concat();
        assert_eq!(read_all(bytes).unwrap(), TEXT);
        // A pipe handing out a byte at a time is still known for what it is.
        let slow = BufReader::with_capacity(1, Trickle(io::Cursor::new(gzip(TEXT.as_bytes()))));
        let mut text = String::new();
        let opened = decompressed("t", slow).unwrap();
        opened
            .content
            .take(1 << 20)
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, TEXT);
        // Text with `ustar` where a tar header's magic stands is text.
        let mustard = format!("{}mustard\n", "#".repeat(255));
        assert_eq!(read_all(mustard.clone().into_bytes()).unwrap(), mustard);
    }

    #[test]
    fn other_compressions_and_archives_say_how_to_unpack_them() {
        let cases = [
            (
                vec![0xfd, b'7', b'z', b'X', b'Z', 0, 1],
                "is xz-compressed",
                "xz -dk t",
            ),
            (b"PK\x03\x04rest".to_vec(), "is a zip archive", "unzip t"),
        ];
        for (bytes, what, unpack) in cases {
            let err = read_all(bytes).unwrap_err().to_string();
            assert!(err.contains(what) && err.contains(unpack), "{err}");
        }
    }
}
