//! The game server's lines (`tafl online`): parsing any bytes as server lines, reading them
//! with the length cap, and replaying any move list from a resumed game must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tafl_online::ServerLine;
use tafl_online::protocol::{Read, read_line};
use tafl_online::referee::Refereed;

fuzz_target!(|data: &[u8]| {
    let mut input = std::io::Cursor::new(data);
    while let Ok(read) = read_line(&mut input, 64) {
        match read {
            Read::Closed => break,
            Read::TooLong(_) => {}
            Read::Line(line) => {
                let _ = ServerLine::parse(&line);
            }
        }
    }
    let text = String::from_utf8_lossy(data);
    let _ = ServerLine::parse(&text);
    for size in [11, 13] {
        let _ = Refereed::from_moves(size, &text);
    }
});
