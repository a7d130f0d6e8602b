//! The structured-tensor benchmark schema: `n` records `{"age", "nicknames", "shoes":
//! {"sizes"}}` from seed 7, as `benches/peers/structured-tensor.py`'s `records` makes them.

use serde_json::{json, Value};

use crate::SplitMix64;

/// `n` records of the benchmark schema as one JSON array.
pub fn records(n: usize) -> Value {
    let mut rng = SplitMix64::new(7);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let age = rng.below(100);
        let k = rng.below(4);
        let nicknames: Vec<String> = (0..k).map(|_| format!("n{}", rng.below(1000))).collect();
        let m = rng.below(4);
        let sizes: Vec<f64> = (0..m).map(|_| 5.0 + rng.below(20) as f64 * 0.5).collect();
        out.push(json!({"age": age, "nicknames": nicknames, "shoes": {"sizes": sizes}}));
    }
    Value::Array(out)
}
