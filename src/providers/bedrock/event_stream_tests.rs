use super::*;
use crate::providers::bedrock::test_frames::{event, exception, frame, raw, string_header};
use serde_json::json;

fn decode_whole(bytes: &[u8]) -> Result<Vec<Frame>, FrameError> {
    FrameDecoder::default().push(bytes)
}

#[test]
fn crc32_is_the_ieee_reflected_checksum() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn the_smallest_frame_as_aws_publishes_it_decodes_to_nothing_but_itself() {
    let empty = [
        0, 0, 0, 0x10, 0, 0, 0, 0, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98, 0xc8, 0xff,
    ];
    assert_eq!(raw(&[], &[]), empty);
    assert_eq!(decode_whole(&empty), Ok(vec![Frame::default()]));
}

#[test]
fn every_header_type_is_walked_and_only_the_string_headers_read_are_kept() {
    let mut h = Vec::new();
    for (name, ty, value) in [
        ("t", 0u8, &[][..]),
        ("f", 1, &[]),
        ("b", 2, &[7]),
        ("s", 3, &[0, 7]),
        ("i", 4, &[0, 0, 0, 7]),
        ("l", 5, &[0; 8]),
        ("ts", 8, &[1; 8]),
        ("u", 9, &[2; 16]),
    ] {
        h.push(name.len() as u8);
        h.extend_from_slice(name.as_bytes());
        h.push(ty);
        h.extend_from_slice(value);
    }
    h.extend_from_slice(&[5, b'b', b'y', b't', b'e', b's', 6, 0, 3, 1, 2, 3]);
    h.extend(string_header(":event-type", "messageStart"));
    h.extend(string_header("other", "ignored"));
    h.extend(string_header(":message-type", "event"));
    let frames = decode_whole(&raw(&h, b"{}")).unwrap();
    assert_eq!(
        frames,
        vec![Frame {
            message_type: Some("event".into()),
            event_type: Some("messageStart".into()),
            payload: b"{}".to_vec(),
            ..Frame::default()
        }]
    );
}

#[test]
fn frames_split_at_every_byte_offset_decode_the_same() {
    let mut bytes = event("messageStart", json!({"role": "assistant"}));
    bytes.extend(event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "Hé"}}),
    ));
    bytes.extend(exception("throttlingException", "slow down"));
    let whole = decode_whole(&bytes).unwrap();
    assert_eq!(whole.len(), 3);
    assert_eq!(
        whole[2].exception_type.as_deref(),
        Some("throttlingException")
    );
    for cut in 0..=bytes.len() {
        let mut d = FrameDecoder::default();
        let mut got = d.push(&bytes[..cut]).unwrap();
        got.extend(d.push(&bytes[cut..]).unwrap());
        assert_eq!(got, whole, "cut at {cut}");
        assert_eq!(d.pending(), 0);
    }
    let mut d = FrameDecoder::default();
    let byte_by_byte: Vec<Frame> = bytes.iter().flat_map(|b| d.push(&[*b]).unwrap()).collect();
    assert_eq!(byte_by_byte, whole);
}

#[test]
fn a_flipped_bit_in_either_crc_or_the_covered_bytes_is_refused() {
    let good = frame(&[(":event-type", "x")], b"payload");
    let len = good.len();
    for (at, want) in [
        (9, FrameError::PreludeCrc),
        (2, FrameError::PreludeCrc),
        (len - 1, FrameError::MessageCrc),
        (len - 6, FrameError::MessageCrc),
        (13, FrameError::MessageCrc),
    ] {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        assert_eq!(decode_whole(&bad), Err(want), "bit flipped at {at}");
    }
}

/// A prelude with a valid CRC, so the length checks are what refuse it.
fn prelude(total: u32, headers: u32) -> Vec<u8> {
    let mut p = total.to_be_bytes().to_vec();
    p.extend_from_slice(&headers.to_be_bytes());
    let crc = crc32(&p);
    p.extend_from_slice(&crc.to_be_bytes());
    p
}

#[test]
fn a_length_out_of_bounds_is_refused_as_soon_as_the_prelude_is_in() {
    assert_eq!(decode_whole(&prelude(15, 0)), Err(FrameError::Length));
    let too_big = u32::try_from(MAX_FRAME_BYTES + 1).unwrap();
    assert_eq!(decode_whole(&prelude(too_big, 0)), Err(FrameError::Length));
    assert_eq!(decode_whole(&prelude(u32::MAX, 0)), Err(FrameError::Length));
    // A frame at the bound is held until it completes.
    let mut d = FrameDecoder::default();
    let at_bound = u32::try_from(MAX_FRAME_BYTES).unwrap();
    assert_eq!(d.push(&prelude(at_bound, 0)), Ok(vec![]));
    assert_eq!(d.pending(), 12);
}

#[test]
fn headers_overrunning_their_frame_or_their_own_length_are_refused() {
    assert_eq!(decode_whole(&prelude(20, 5)), Err(FrameError::Headers));
    // A string header whose length runs past the headers.
    let mut h = string_header(":event-type", "abc");
    h.truncate(h.len() - 1);
    assert_eq!(decode_whole(&raw(&h, b"xy")), Err(FrameError::Headers));
    // An unknown value type.
    assert_eq!(
        decode_whole(&raw(&[1, b'a', 10], b"")),
        Err(FrameError::Headers)
    );
}

#[test]
fn after_an_error_the_decoder_reads_nothing_more() {
    let mut d = FrameDecoder::default();
    let mut bad = event("messageStart", json!({}));
    bad[9] ^= 1;
    assert_eq!(d.push(&bad), Err(FrameError::PreludeCrc));
    assert_eq!(
        d.push(&event("messageStart", json!({}))),
        Err(FrameError::PreludeCrc)
    );
    assert_eq!(d.pending(), 0);
}
