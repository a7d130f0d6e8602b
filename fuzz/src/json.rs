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
    // Issue 17, item 11: `from_json_str` reads `-0` as int64 0, `from_json` as float64 -0.0.
    // New (found by this target, see docs/RELIABILITY.md): numbers that serde_json's default
    // float parsing may round one ulp off, where `from_json_str` rounds correctly.
    if !has_negative_zero_integer(text) && !may_round_differently(text) {
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

/// Whether the text holds a number that serde_json's default float parsing (its
/// `float_roundtrip` feature off) may round differently from a correctly rounded parse: a
/// float with more than 15 significant digits or a decimal exponent beyond 22 once the
/// fraction is folded in, or an integer too long for `i64`. Outside that range serde_json
/// computes the value with one rounding, so both readers must agree exactly.
fn may_round_differently(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let (mut digits, mut fraction_digits, mut seen_dot, mut is_float) =
            (0i64, 0i64, false, false);
        let mut leading_zero = true;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || (bytes[i] == b'.' && !seen_dot)) {
            if bytes[i] == b'.' {
                seen_dot = true;
                is_float = true;
            } else {
                if !(leading_zero && bytes[i] == b'0') {
                    leading_zero = false;
                    digits += 1;
                }
                if seen_dot {
                    fraction_digits += 1;
                }
            }
            i += 1;
        }
        let mut exponent = 0i64;
        if i < bytes.len() && matches!(bytes[i], b'e' | b'E') {
            is_float = true;
            i += 1;
            let negative = bytes.get(i) == Some(&b'-');
            if matches!(bytes.get(i), Some(b'-' | b'+')) {
                i += 1;
            }
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                exponent = (exponent * 10 + i64::from(bytes[i] - b'0')).min(1 << 20);
                i += 1;
            }
            if negative {
                exponent = -exponent;
            }
        }
        let inexact = if is_float {
            digits > 15 || (exponent - fraction_digits).abs() > 22
        } else {
            digits > 18
        };
        if inexact {
            return true;
        }
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
    fn long_numbers_are_spotted() {
        // The inputs the campaign found, and numbers one rounding reads exactly.
        assert!(may_round_differently(
            "[[{\"x\": 111.11111111111111511111113}]]"
        ));
        assert!(may_round_differently(
            "[[{\"x\": 111111111111111111111111E13}]]"
        ));
        assert!(may_round_differently("[1e-30]"));
        assert!(may_round_differently("[12345678901234567890]"));
        assert!(!may_round_differently(
            "[1.5, 2.25e10, -0.125, 123456789012345678]"
        ));
        assert!(!may_round_differently("{\"a\": [0.000001, 1e22]}"));
    }
}
