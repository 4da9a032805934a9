//! Whatever the server sends, parsing and following it never panics (the fuzz target
//! `server_line` in fuzz/ does the same at length).

use proptest::prelude::*;
use tafl_online::ServerLine;
use tafl_online::protocol::{Read, read_line};
use tafl_online::referee::Refereed;

proptest! {
    #[test]
    fn any_bytes_read_and_parse(data in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut input = std::io::Cursor::new(&data);
        while let Ok(read) = read_line(&mut input, 32) {
            match read {
                Read::Closed => break,
                Read::TooLong(n) => prop_assert!(n > 32),
                Read::Line(line) => { let _ = ServerLine::parse(&line); }
            }
        }
    }

    #[test]
    fn protocol_like_lines_parse(line in "(= |\\? |game |request_draw )?(game|join_game|game_over|game_time|resume_game_json|new_game|login|play|generate_move)? ?[0-9a-zA-Z{}\":,_ -]{0,60}") {
        let _ = ServerLine::parse(&line);
    }

    #[test]
    fn move_lists_replay_or_fail_cleanly(moves in "([a-mA-M][0-9]{1,2}-[a-mA-M][0-9]{1,2}(x[a-m][0-9])? |--- ){0,12}") {
        let _ = Refereed::from_moves(11, &moves);
        let _ = Refereed::from_moves(13, &moves);
    }
}
