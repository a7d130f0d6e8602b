//! structured-tensor's two JSON readers: `from_json_str` on the text and `from_json` on the
//! value serde_json parses from it must agree (the same tensor, or both an error); a tensor
//! that was read survives `to_json` / `to_json_string` and a second read.

use structured_tensor::StructuredTensor;

/// Inputs longer than this are ignored.
pub const MAX_LEN: usize = 4096;

/// Both readers on the text, compared; then the write-read round trips.
pub fn json(data: &[u8]) {
    if data.len() > MAX_LEN {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let direct = StructuredTensor::from_json_str(text);
    let via_value = serde_json::from_str::<serde_json::Value>(text)
        .map_err(|e| e.to_string())
        .and_then(|value| StructuredTensor::from_json(&value).map_err(|e| e.to_string()));
    // `-0` stays apart (issue 17, item 11): `from_json_str` reads it as Python's json module
    // does (int64 0, TensorFlow's rule), but serde_json's value holds float -0.0 for it, so
    // `from_json` sees a float; the guide documents the difference. (serde_json's floats
    // now round correctly: its `float_roundtrip` feature is on, after this target found
    // one-ulp disagreements.)
    // Integers beyond int64 stay apart for the same reason: Python's json keeps them as
    // ints, which TensorFlow cannot hold (so `from_json_str` refuses them), while
    // serde_json's value turns them into floats.
    if !has_negative_zero_integer(text) && !has_integer_beyond_int64(text) {
        match (&direct, &via_value) {
            (Ok(a), Ok(b)) => assert!(a == b, "the readers disagree on {text:?}:\n{a}\n{b}"),
            (Err(_), Err(_)) => {}
            (a, b) => {
                panic!("the readers disagree on {text:?}:\nfrom_json_str {a:?}\nfrom_json {b:?}")
            }
        }
    }
    for st in [direct.ok(), via_value.ok()].into_iter().flatten() {
        let value = st.to_json();
        let again = StructuredTensor::from_json(&value).unwrap_or_else(|e| {
            panic!("to_json of a tensor read from {text:?} does not read back: {e}")
        });
        assert!(
            again == st,
            "to_json round trip of {text:?}:\n{st}\n{again}"
        );
        let printed = st.to_json_string();
        let again = StructuredTensor::from_json_str(&printed)
            .unwrap_or_else(|e| panic!("to_json_string {printed:?} does not read back: {e}"));
        assert!(
            again == st,
            "to_json_string round trip through {printed:?}:\n{st}\n{again}"
        );
        let _ = st.to_string();
    }
}

/// Whether the text holds the integer token `-0` (with any number of zeros), which item 11
/// of issue 17 reads differently in the two readers.
fn has_negative_zero_integer(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        if b != b'-' {
            return false;
        }
        let zeros = bytes[i + 1..].iter().take_while(|&&c| c == b'0').count();
        zeros > 0
            && !matches!(
                bytes.get(i + 1 + zeros),
                Some(b'0'..=b'9' | b'.' | b'e' | b'E')
            )
    })
}

/// Whether the text holds an integer token (digits, no fraction or exponent) outside
/// int64, which the two readers treat differently (see [`has_negative_zero_integer`]).
fn has_integer_beyond_int64(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_number = bytes[i].is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.'));
        if !starts_number {
            i += 1;
            continue;
        }
        let start = if i > 0 && bytes[i - 1] == b'-' {
            i - 1
        } else {
            i
        };
        let mut end = i;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        let is_integer = !matches!(bytes.get(end), Some(b'.' | b'e' | b'E'));
        if is_integer && text[start..end].parse::<i64>().is_err() {
            return true;
        }
        i = end;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_integers_are_spotted() {
        assert!(has_negative_zero_integer("[-0]"));
        assert!(has_negative_zero_integer("{\"a\": -0}"));
        assert!(!has_negative_zero_integer("[-0.0]"));
        assert!(!has_negative_zero_integer("[-0e1, 10, -1]"));
    }

    #[test]
    fn integers_beyond_int64_are_spotted() {
        assert!(has_integer_beyond_int64("[9223372036854775808]"));
        assert!(has_integer_beyond_int64(
            "{\"a\": [1, -9223372036854775809]}"
        ));
        assert!(!has_integer_beyond_int64(
            "[9223372036854775807, -9223372036854775808]"
        ));
        // fractions and exponents are floats, whatever their digits
        assert!(!has_integer_beyond_int64(
            "[99999999999999999999.5, 1e400, 1.5e30]"
        ));
    }
}
