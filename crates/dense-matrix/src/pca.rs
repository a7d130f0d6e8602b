//! Kaldi's `ComputePca` (`matrix-functions.h`): principal directions of the rows of a data
//! matrix, without mean removal (Kaldi leaves centring to the caller).
//!
//! With `N` points of dimension `D` in the rows of `X` and `G` directions asked for (the
//! rows of `U`):
//! - `D < N` ("conventional" PCA): the eigenvectors of the `D x D` scatter `X^T X`, the
//!   largest first, become the rows of `U`; `A = X U^T`.
//! - `D >= N` ("inner-product" PCA): the eigenvectors `v_g` of the `N x N` Gram matrix
//!   `X X^T`, with eigenvalues `l_g`, give `U_g = X^T v_g / sqrt(l_g)` and
//!   `A[n][g] = sqrt(l_g) v_g[n]`; a zero eigenvalue gives the unit vector `e_g`, and the
//!   rows of `U` are orthogonalised at the end, as in Kaldi.
//!
//! Kaldi's inexact route (`exact = false`) takes the top `G` eigenpairs with
//! `SpMatrix::TopEigs`, a randomised Lanczos method. Here both routes take the full
//! symmetric eigendecomposition (LAPACK `syevd`), which is exact and, for the dimensions
//! PCA is used at, cheaper than the products that form the scatter matrix.
//!
//! At the AVX-512 level the `D < N` scatter `X^T X` of tall data comes from the tiled
//! kernel below rather than BLAS `syrk` (one thread's `syrk` took 12 ms of the 25 ms of
//! 100,000 x 80; the kernel splits over rayon, where OpenBLAS kept one thread).

use cpu_features::{at_level, simd_level, SimdLevel};
use rand::SeedableRng;
use rayon::prelude::*;

use crate::error::{dim_mismatch, shape_mismatch};
use crate::{Error, Matrix, MatrixBase, Real, Trans, Vector};

/// Rows of the register tile of the scatter kernel below: each step broadcasts this many
/// scalars of a row of `X`.
const TILE_ROWS: usize = 8;
/// Columns of the register tile: one AVX-512 vector of `f32` (two of `f64`), so that the
/// tile's 8 accumulators leave room in the 32 vector registers.
const TILE_COLS: usize = 16;
/// Rows of `X` per partial scatter matrix; the partials are added in order, so the result
/// does not depend on the thread count.
const SCATTER_BLOCK: usize = 4096;
/// Rows of `X` per pass of the scatter's tiles (80 KB at `D = 80` in `f32`: the pass
/// re-reads them from the L2 cache once per tile).
const SCATTER_CHUNK: usize = 256;

/// Whether the scatter kernel below runs instead of BLAS `syrk` (issue 35): at the AVX-512
/// level only (with AVX2's 16 registers the tile would spill), and for data of at least
/// 65,536 elements with `N >= 4 D`, the tall shape it was measured on; other data stays
/// on `syrk`.
fn own_kernels(n: usize, d: usize) -> bool {
    simd_level() == SimdLevel::Avx512 && n >= 4 * d && n * d >= 1 << 16
}

/// `s[a][b] += sum over rows i of x[i][a] x[i][b]` for the tile of `ROWS` rows from `a0`
/// and [`TILE_COLS`] columns from `b0` (`s` row-major `d x d`).
#[inline(always)]
fn scatter_tile<R: Real, const ROWS: usize>(
    rows: &[&[R]],
    d: usize,
    a0: usize,
    b0: usize,
    s: &mut [R],
) {
    let mut acc = [[R::ZERO; TILE_COLS]; ROWS];
    for row in rows {
        let lhs: &[R; ROWS] = row[a0..a0 + ROWS].try_into().expect("ROWS elements");
        let rhs: &[R; TILE_COLS] = row[b0..b0 + TILE_COLS].try_into().expect("a tile");
        for (acc, &l) in acc.iter_mut().zip(lhs) {
            for (acc, &r) in acc.iter_mut().zip(rhs) {
                *acc = l.mul_add(r, *acc);
            }
        }
    }
    for (r, acc) in acc.iter().enumerate() {
        let out = &mut s[(a0 + r) * d + b0..][..TILE_COLS];
        for (o, &v) in out.iter_mut().zip(acc) {
            *o += v;
        }
    }
}

/// The lower triangle (and some of the upper one, tile by tile) of `X[rows]^T X[rows]`
/// into `s` (row-major `d x d`, zeroed by the caller), in passes of [`SCATTER_CHUNK`]
/// rows.
#[inline(always)]
fn scatter_block<R: Real>(x: &MatrixBase<R>, rows: std::ops::Range<usize>, s: &mut [R]) {
    let d = x.num_cols();
    let full_cols = d / TILE_COLS * TILE_COLS;
    for c0 in rows.clone().step_by(SCATTER_CHUNK) {
        let chunk: Vec<&[R]> = (c0..(c0 + SCATTER_CHUNK).min(rows.end))
            .map(|i| x.row_data(i))
            .collect();
        let mut a0 = 0;
        while a0 < d {
            let nr = (d - a0).min(TILE_ROWS);
            // tiles that reach the diagonal (column < a0 + nr) and lie in whole vectors
            for b0 in (0..(a0 + nr).min(full_cols)).step_by(TILE_COLS) {
                if nr == TILE_ROWS {
                    scatter_tile::<R, TILE_ROWS>(&chunk, d, a0, b0, s);
                } else {
                    for a in a0..a0 + nr {
                        scatter_tile::<R, 1>(&chunk, d, a, b0, s);
                    }
                }
            }
            a0 += nr;
        }
        // the columns past the last whole vector, on and below the diagonal
        for b in full_cols..d {
            for a in b..d {
                let mut acc = R::ZERO;
                for row in &chunk {
                    acc = row[a].mul_add(row[b], acc);
                }
                s[a * d + b] += acc;
            }
        }
    }
}

/// The lower triangle of `X^T X` into `scatter` (`d x d`), as `sym_add_mat2(1, X, Trans,
/// 0)` would, by [`scatter_block`] on blocks of [`SCATTER_BLOCK`] rows in parallel.
fn scatter_own<R: Real>(x: &MatrixBase<R>, scatter: &mut MatrixBase<R>) {
    let (n, d) = x.shape();
    let level = simd_level();
    let partials: Vec<Vec<R>> = (0..n.div_ceil(SCATTER_BLOCK))
        .into_par_iter()
        .map(|b| {
            let mut partial = vec![R::ZERO; d * d];
            let rows = b * SCATTER_BLOCK..((b + 1) * SCATTER_BLOCK).min(n);
            let s: &mut [R] = &mut partial;
            at_level!(
                level,
                [R: Real],
                (x: &MatrixBase<R>, rows: std::ops::Range<usize>, s: &mut [R]) -> (),
                scatter_block(x, rows, s)
            );
            partial
        })
        .collect();
    for a in 0..d {
        let out = &mut scatter.row_data_mut(a)[..=a];
        out.fill(R::ZERO);
        for p in &partials {
            for (o, &v) in out.iter_mut().zip(&p[a * d..=a * d + a]) {
                *o += v;
            }
        }
    }
}

/// Rows of `A` per tile of [`project_rows`].
const PROJECT_ROWS: usize = 4;
/// Rows of `A` per task of [`project_own`].
const PROJECT_BLOCK: usize = 2048;

/// `ROWS` rows of `A = X U^T` from the rows `x` of `X` and `ut` (`U^T`, `D x TILES * 16`,
/// row-major, zero past `G`), as `TILES` tiles of 16 columns per row: for each `k`, every
/// accumulator adds `x[i][k] * ut[k][c]`, so `A[i][c]` is the sum over `k` in order
/// (fused), whatever the tile.
#[inline(always)]
fn project_tile<R: Real, const ROWS: usize, const TILES: usize>(
    x: [&[R]; ROWS],
    ut: &[R],
) -> [[[R; TILE_COLS]; TILES]; ROWS] {
    let width = TILES * TILE_COLS;
    let mut acc = [[[R::ZERO; TILE_COLS]; TILES]; ROWS];
    for (k, u) in ut.chunks_exact(width).enumerate() {
        for (acc, x) in acc.iter_mut().zip(&x) {
            let xk = x[k];
            for (acc, u) in acc.iter_mut().zip(u.chunks_exact(TILE_COLS)) {
                let u: &[R; TILE_COLS] = u.try_into().expect("a tile");
                for (acc, &u) in acc.iter_mut().zip(u) {
                    *acc = xk.mul_add(u, *acc);
                }
            }
        }
    }
    acc
}

/// Writes one row's tiles to `out` (its `G` columns).
#[inline(always)]
fn store_row<R: Real, const TILES: usize>(acc: &[[R; TILE_COLS]; TILES], out: &mut [R]) {
    for (out, acc) in out.chunks_mut(TILE_COLS).zip(acc) {
        out.copy_from_slice(&acc[..out.len()]);
    }
}

/// Rows `row0..row0 + a.num_rows()` of `A = X U^T` into `a`, `PROJECT_ROWS` at a time.
#[inline(always)]
fn project_rows<R: Real, const TILES: usize>(
    x: &MatrixBase<R>,
    row0: usize,
    ut: &[R],
    a: &mut MatrixBase<R>,
) {
    let rows = a.num_rows();
    let mut r = 0;
    while r + PROJECT_ROWS <= rows {
        let xs: [&[R]; PROJECT_ROWS] = std::array::from_fn(|i| x.row_data(row0 + r + i));
        let acc = project_tile::<R, PROJECT_ROWS, TILES>(xs, ut);
        for (i, acc) in acc.iter().enumerate() {
            store_row(acc, a.row_data_mut(r + i));
        }
        r += PROJECT_ROWS;
    }
    for r in r..rows {
        let acc = project_tile::<R, 1, TILES>([x.row_data(row0 + r)], ut);
        store_row(&acc[0], a.row_data_mut(r));
    }
}

/// `A = X U^T` by the crate's own tiles, over rayon in blocks of `PROJECT_BLOCK` rows
/// (each element one sum over `k` in order, so the result does not depend on the thread
/// count), for `G <= 64`; `false` (nothing written) for a wider `U`.
fn project_own<R: Real>(x: &MatrixBase<R>, u: &MatrixBase<R>, a: &mut MatrixBase<R>) -> bool {
    let (g, d) = u.shape();
    let tiles = g.div_ceil(TILE_COLS);
    if !(1..=4).contains(&tiles) {
        return false;
    }
    let width = tiles * TILE_COLS;
    let mut ut = vec![R::ZERO; d * width];
    for (r, row) in u.rows().enumerate() {
        for (k, &v) in row.iter().enumerate() {
            ut[k * width + r] = v;
        }
    }
    let level = simd_level();
    fn split<R: Real>(
        x: &MatrixBase<R>,
        row0: usize,
        ut: &[R],
        tiles: usize,
        level: SimdLevel,
        a: &mut MatrixBase<R>,
    ) {
        let rows = a.num_rows();
        if rows > PROJECT_BLOCK {
            let mid = rows / 2;
            let (mut top, mut bottom) = a.split_rows_at_mut(mid);
            rayon::join(
                || split(x, row0, ut, tiles, level, &mut top),
                || split(x, row0 + mid, ut, tiles, level, &mut bottom),
            );
            return;
        }
        at_level!(
            level,
            [R: Real],
            (x: &MatrixBase<R>, row0: usize, ut: &[R], tiles: usize, a: &mut MatrixBase<R>) -> (),
            match tiles {
                1 => project_rows::<R, 1>(x, row0, ut, a),
                2 => project_rows::<R, 2>(x, row0, ut, a),
                3 => project_rows::<R, 3>(x, row0, ut, a),
                _ => project_rows::<R, 4>(x, row0, ut, a),
            }
        );
    }
    split(x, 0, &ut, tiles, level, a);
    true
}

/// Kaldi's `ComputePca(X, &U, &A, print_eigs, exact)`: fills the rows of `u` (`G x D`)
/// with the top `G` principal directions of the rows of `x` (`N x D`, not centred) and,
/// if given, `a` (`N x G`) with the projections `X U^T`. Returns the eigenvalues of the
/// scatter (`X^T X` if `D < N`, else `X X^T`; negative ones set to zero in the second
/// case), largest first; `print_eigs` also prints them to stderr, as Kaldi logs them.
/// `exact = false` takes the exact route too (see the module documentation).
///
/// # Errors
/// [`Error::NotFinite`] if `x` holds a NaN or infinity (found in the scatter matrix), or
/// [`Error::Lapack`] if the eigensolver fails.
///
/// # Panics
/// If `u.num_cols() != D`, `G > min(N, D)`, or `a` is not `N x G`.
#[track_caller]
#[doc(alias = "ComputePca")]
pub fn compute_pca<R: Real>(
    x: &MatrixBase<R>,
    u: &mut MatrixBase<R>,
    a: Option<&mut MatrixBase<R>>,
    print_eigs: bool,
    exact: bool,
) -> Result<Vector<R>, Error> {
    let (n, d) = x.shape();
    let g = u.num_rows();
    if u.num_cols() != d && g != 0 {
        dim_mismatch("compute_pca", "U's columns", u.num_cols(), "X's columns", d);
    }
    if g > n || g > d {
        shape_mismatch("compute_pca (U vs X: G <= min(N, D))", u.shape(), x.shape());
    }
    if let Some(a) = &a {
        if a.shape() != (n, g) {
            shape_mismatch("compute_pca (A vs N x G)", a.shape(), (n, g));
        }
    }
    let _ = exact; // both routes are exact here
    if d < n {
        let own = own_kernels(n, d);
        let mut scatter = Matrix::new(d, d);
        if own {
            scatter_own(x, &mut scatter);
        } else {
            scatter.sym_add_mat2(R::ONE, x, Trans::Trans, R::ZERO);
        }
        let eig = scatter.sym_eig()?;
        // syevd sorts ascending: the largest eigenvalue is the last column
        let l = Vector::from_vec(eig.s.data().iter().rev().copied().collect());
        for row in 0..g {
            u.row_mut(row).copy_col_from_mat(&eig.p, d - 1 - row);
        }
        if print_eigs {
            eprintln!("PCA eigenvalues are {l}");
        }
        if let Some(a) = a {
            // with the scatter's tiles and more than one rayon thread, the projection's
            // tiles too: no OpenBLAS call between two rayon passes, whose idle threads
            // spin beside rayon's (on one thread OpenBLAS's gemm is the faster)
            let parallel = rayon::current_num_threads() > 1;
            if g > 0 && !(own && parallel && project_own(x, u, a)) {
                a.add_mat_mat(R::ONE, x, Trans::NoTrans, u, Trans::Trans, R::ZERO);
            }
        }
        Ok(l)
    } else {
        let mut gram = Matrix::new(n, n);
        gram.sym_add_mat2(R::ONE, x, Trans::NoTrans, R::ZERO);
        let eig = gram.sym_eig()?;
        let l = Vector::from_vec(
            eig.s
                .data()
                .iter()
                .rev()
                .map(|&v| if v < R::ZERO { R::ZERO } else { v })
                .collect(),
        );
        // an eigenvalue at the Gram matrix's roundoff level (below N ulps of the largest)
        // is a zero that LAPACK could not resolve: dividing by its root would turn noise
        // into a direction, so it counts as zero (Kaldi tests `l(g) != 0.0` only)
        let roundoff =
            l.data().first().copied().unwrap_or(R::ZERO) * R::from_f64(n as f64) * R::EPSILON;
        let mut l = l;
        for v in l.data_mut() {
            if *v <= roundoff {
                *v = R::ZERO;
            }
        }
        let mut a = a;
        for row in 0..g {
            let col = n - 1 - row;
            let mut v = Vector::new(n);
            v.copy_col_from_mat(&eig.p, col);
            let lg = l[row];
            let sqrt_lg = lg.sqrt();
            if lg != R::ZERO {
                u.row_mut(row)
                    .add_mat_vec(R::ONE / sqrt_lg, x, Trans::Trans, &v, R::ZERO);
            } else {
                u.row_mut(row).set_zero();
                u[(row, row)] = R::ONE;
            }
            if let Some(a) = a.as_deref_mut() {
                for point in 0..n {
                    a[(point, row)] = sqrt_lg * v[point];
                }
            }
        }
        // the sort above put zero eigenvalues last, so their arbitrary unit rows are the
        // ones Gram-Schmidt replaces; a fixed seed keeps the result reproducible
        if g > 0 {
            u.orthogonalize_rows(&mut rand::rngs::StdRng::seed_from_u64(0x9ca));
        }
        if print_eigs {
            eprintln!("(inner-product) PCA eigenvalues are {l}");
        }
        Ok(l)
    }
}
