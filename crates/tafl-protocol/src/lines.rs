//! Lines from a peer, for every server and client of this crate: nothing a peer writes is
//! trusted. A line is kept up to [`MAX_LINE`] bytes (the rest of a longer one is read to its
//! end and dropped, so that a peer that never ends a line cannot fill our memory), and bytes
//! that are not UTF-8 spoil one line, not the stream.
//!
//! The servers read with [`read_line`], which tells a line from one to refuse; the HTP
//! client reads an engine's output through [`CappedLines`], which keeps what it can of each.

use std::io::{self, BufRead};

/// Longest line kept from a peer, in bytes.
pub const MAX_LINE: usize = 64 * 1024;

/// Why a line from a peer is refused (it was read to its end and dropped; the next one is
/// read as usual).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// Bytes that are not UTF-8.
    #[error("the line is not valid UTF-8")]
    NotUtf8,
    /// Longer than the cap.
    #[error("the line is {length} bytes long, more than {max}")]
    TooLong {
        /// The line's length in bytes.
        length: usize,
        /// The cap.
        max: usize,
    },
}

/// Reads one line of at most `max` bytes (its `\r\n` or `\n` aside): `None` at the end of the
/// input, else the line without its end or why it is refused.
///
/// # Errors
/// The input failed.
pub fn read_line<R: BufRead + ?Sized>(input: &mut R, max: usize) -> io::Result<Option<Result<String, LineError>>> {
    let mut kept = Vec::new();
    let Some(length) = read_capped(input, max, &mut kept)? else { return Ok(None) };
    if length > max {
        return Ok(Some(Err(LineError::TooLong { length, max })));
    }
    Ok(Some(String::from_utf8(kept).map_err(|_| LineError::NotUtf8)))
}

/// Reads one line into `kept`, at most `max` bytes of it, and consumes the rest up to its end.
/// Returns the line's whole length (its `\r\n` or `\n` aside), or `None` at the end of the
/// input.
fn read_capped<R: BufRead + ?Sized>(input: &mut R, max: usize, kept: &mut Vec<u8>) -> io::Result<Option<usize>> {
    let mut length = 0usize;
    let mut last = None;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if length == 0 {
                return Ok(None);
            }
            break;
        }
        let (chunk, used, ended) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = max.saturating_sub(kept.len());
        kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
        length = length.saturating_add(chunk.len());
        last = chunk.last().copied().or(last);
        input.consume(used);
        if ended {
            break;
        }
    }
    // `\r\n` ends a line too: its `\r` is not part of it (nor of its length).
    if last == Some(b'\r') {
        length -= 1;
        kept.truncate(length);
    }
    Ok(Some(length))
}

/// A peer's output as lines, as [`BufRead::lines`] splits them (`\n` or `\r\n`), but each cut
/// at [`MAX_LINE`] bytes and with invalid UTF-8 replaced rather than ending the stream. A read
/// error ends the lines.
pub struct CappedLines<R> {
    source: R,
    done: bool,
}

impl<R: BufRead> CappedLines<R> {
    /// Lines of `source`.
    pub fn new(source: R) -> CappedLines<R> {
        CappedLines { source, done: false }
    }
}

impl<R: BufRead> Iterator for CappedLines<R> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        if self.done {
            return None;
        }
        let mut kept = Vec::new();
        match read_capped(&mut self.source, MAX_LINE, &mut kept) {
            Ok(Some(_)) => Some(String::from_utf8_lossy(&kept).into_owned()),
            Ok(None) | Err(_) => {
                self.done = true;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    #[test]
    fn capped_lines_split_like_lines_and_cut_what_is_too_long() {
        let lines = |bytes: &[u8]| CappedLines::new(bytes).collect::<Vec<_>>();
        assert_eq!(lines(b"= a\r\n\n? b\nlast"), ["= a", "", "? b", "last"]);
        assert_eq!(lines(b""), Vec::<String>::new());
        assert_eq!(lines(b"x\n"), ["x"]);
        // Invalid UTF-8 is replaced, and the next line still arrives.
        assert_eq!(lines(b"= \xff\n= d1 d4\n"), ["= \u{fffd}", "= d1 d4"]);
        // A line longer than the cap (through a small buffer, so it comes in many pieces) is cut,
        // and the line after it is whole.
        let mut long = vec![b'a'; MAX_LINE * 3];
        long.extend_from_slice(b"\n= done\n");
        let got: Vec<String> = CappedLines::new(BufReader::with_capacity(1000, long.as_slice())).collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), MAX_LINE);
        assert_eq!(got[1], "= done");
    }

    #[test]
    fn read_line_refuses_long_and_broken_lines_and_goes_on() {
        let mut long = vec![b'x'; 10 * MAX_LINE];
        long.extend_from_slice(b"\nname\r\n\xff\xfe\nlast");
        let mut input = BufReader::with_capacity(1000, long.as_slice());
        let mut read = || read_line(&mut input, MAX_LINE).unwrap();
        assert_eq!(read(), Some(Err(LineError::TooLong { length: 10 * MAX_LINE, max: MAX_LINE })));
        assert_eq!(read(), Some(Ok("name".into())));
        assert_eq!(read(), Some(Err(LineError::NotUtf8)));
        assert_eq!(read(), Some(Ok("last".into())));
        assert_eq!(read(), None);
        assert_eq!(read(), None);
    }

    #[test]
    fn the_cap_itself_is_a_line() {
        for end in ["\n", "\r\n"] {
            let text = format!("{}{end}{}{end}", "y".repeat(8), "z".repeat(9));
            let mut input = text.as_bytes();
            assert_eq!(read_line(&mut input, 8).unwrap(), Some(Ok("y".repeat(8))), "{end:?}");
            assert_eq!(
                read_line(&mut input, 8).unwrap(),
                Some(Err(LineError::TooLong { length: 9, max: 8 })),
                "{end:?}"
            );
            assert_eq!(read_line(&mut input, 8).unwrap(), None, "{end:?}");
        }
        let mut input: &[u8] = b"\n\r\n";
        assert_eq!(read_line(&mut input, 8).unwrap(), Some(Ok(String::new())));
        assert_eq!(read_line(&mut input, 8).unwrap(), Some(Ok(String::new())));
        assert_eq!(read_line(&mut input, 8).unwrap(), None);
    }
}
