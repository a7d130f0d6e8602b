//! A tour of kaldi-io: writes a small feature archive with its scp (`ark,scp:`), reads it
//! back sequentially and by key, compresses it with each of Kaldi's automatic methods,
//! and prints the sizes and the largest decompression errors. Writes `feats.ark`,
//! `feats.scp`, `feats_cm.ark` (SpeechFeature) and `feats.txt` (text form) under
//! `DEMO_OUT_DIR` (default `target/demo/kaldi-io`).

use std::path::PathBuf;

use dense_matrix::{CompressedMatrix, CompressionMethod, Matrix};
use kaldi_io::{RandomAccessTableReader, SequentialTableReader, TableWriter};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A feature-like matrix: 80 log-mel-ish columns with their own means and spreads.
fn features(frames: usize, rng: &mut StdRng) -> Matrix<f32> {
    let mut m = Matrix::new(frames, 80);
    for c in 0..80 {
        let mean = 8.0 - c as f32 * 0.05;
        let spread = 1.0 + (c % 7) as f32 * 0.3;
        for r in 0..frames {
            let noise: f32 = (0..4).map(|_| rng.random::<f32>() - 0.5).sum();
            m[(r, c)] = mean + spread * noise + (r as f32 * 0.1).sin();
        }
    }
    m
}

fn max_abs_diff(a: &Matrix<f32>, b: &Matrix<f32>) -> f32 {
    a.rows()
        .zip(b.rows())
        .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs()))
        .fold(0.0, f32::max)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::var_os("DEMO_OUT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/demo/kaldi-io"));
    std::fs::create_dir_all(&dir)?;
    let (ark, scp) = (dir.join("feats.ark"), dir.join("feats.scp"));

    // 1. Five utterances through `ark,scp:`, as Kaldi's compute-*-feats write them.
    let mut rng = StdRng::seed_from_u64(15);
    let utterances: Vec<(String, Matrix<f32>)> = (1..=5)
        .map(|i| (format!("spk1-utt{i}"), features(100 + 37 * i, &mut rng)))
        .collect();
    let mut writer = TableWriter::<Matrix<f32>>::create(&format!(
        "ark,scp:{},{}",
        ark.display(),
        scp.display()
    ))?;
    for (key, m) in &utterances {
        writer.write(key, m)?;
    }
    writer.finish()?;
    println!("wrote {} utterances:", utterances.len());
    print!("{}", std::fs::read_to_string(&scp)?);

    // 2. Read back: sequentially through the scp, and by key.
    let rspecifier = format!("scp:{}", scp.display());
    for entry in SequentialTableReader::<Matrix<f32>>::open(&rspecifier)? {
        let (key, m) = entry?;
        let original = &utterances.iter().find(|(k, _)| *k == key).unwrap().1;
        println!(
            "  {key}: {} x {}, equal to what was written: {}",
            m.num_rows(),
            m.num_cols(),
            &m == original
        );
    }
    let mut by_key = RandomAccessTableReader::<Matrix<f64>>::open(&rspecifier)?;
    let utt3 = by_key.get("spk1-utt3")?.expect("spk1-utt3 is in the scp");
    println!(
        "by key: spk1-utt3 as f64 is {} x {}, first value {:.4}",
        utt3.num_rows(),
        utt3.num_cols(),
        utt3[(0, 0)]
    );
    println!(
        "by key: spk1-utt9 present: {}",
        by_key.get("spk1-utt9")?.is_some()
    );

    // 3. Compress with each automatic method: sizes and largest errors.
    let plain = std::fs::metadata(&ark)?.len();
    println!("\nfloat archive: {plain} bytes");
    for method in [
        CompressionMethod::SpeechFeature,
        CompressionMethod::TwoByteAuto,
        CompressionMethod::OneByteAuto,
    ] {
        // SpeechFeature's archive is kept: it is what `copy-feats --compress=true` writes
        let keep = method == CompressionMethod::SpeechFeature;
        let path = dir.join(if keep { "feats_cm.ark" } else { "feats_cm.tmp" });
        let mut writer =
            TableWriter::<CompressedMatrix>::create(&format!("ark:{}", path.display()))?;
        let mut worst: f32 = 0.0;
        for (key, m) in &utterances {
            let cm = CompressedMatrix::compress(m, method)?;
            worst = worst.max(max_abs_diff(&cm.to_matrix::<f32>(), m));
            writer.write(key, &cm)?;
        }
        writer.finish()?;
        let size = std::fs::metadata(&path)?.len();
        println!(
            "{method:?} ({}): {size} bytes ({:.1}% of the float archive), max abs error {worst:.5}",
            method.kaldi_code(),
            100.0 * size as f64 / plain as f64
        );
        if !keep {
            std::fs::remove_file(&path)?;
        }
    }

    // 4. The same table in Kaldi's text form.
    let text = dir.join("feats.txt");
    let mut writer = TableWriter::<Matrix<f32>>::create(&format!("ark,t:{}", text.display()))?;
    writer.write(&utterances[0].0, &utterances[0].1)?;
    writer.finish()?;
    let shown: String = std::fs::read_to_string(&text)?
        .lines()
        .take(3)
        .map(|line| line.chars().take(90).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n");
    println!("\ntext form (first lines):\n{shown}\n  ...");

    for name in ["feats.ark", "feats.scp", "feats_cm.ark", "feats.txt"] {
        println!("artefact: {}", dir.join(name).display());
    }
    Ok(())
}
