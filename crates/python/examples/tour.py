"""A tour of the arrays package: arrays.k2 icefall-style (build HLG, a CTC loss with
backward, decode), arrays.kaldi kaldiio-style (an archive and its scp, compressed), and
arrays.image cv2-style (Canny edges of a synthetic picture), and arrays.structured
(TensorFlow's StructuredTensor from Python values).

Run by `cargo xtask demo` (in the venv with torch); writes HLG.dot (and .svg when Graphviz
is installed), feats.ark/feats.scp and edges.pgm under $DEMO_OUT_DIR.
"""

import os
import pathlib

import numpy as np

import arrays.image as image
import arrays.k2 as k2
import arrays.kaldi as kaldiio
from arrays.structured import StructuredTensor

# tokens: blank 0, a=1 b=2 c=3 d=4, #0=5; words: w1 = "a b", w2 = "b c", w3 = "a d", #0=4
L_TEXT = """0 1 1 1 -0.5
0 2 2 2 -0.25
0 3 1 3 -1.5
0 0 5 4 0
0 4 -1 -1 0
1 0 2 0 0
2 0 3 0 0
3 0 4 0 0
4
"""
G_TEXT = """0 1 1 1.25
0 2 2 0.75
0 3 3 2.0
1 0 4 0.25
1 2 3 0.5
2 0 4 0.125
3 0 4 0.5
0 0.5
1 1.0
"""
FIRST_TOKEN_DISAMBIG_ID, FIRST_WORD_DISAMBIG_ID, MAX_TOKEN = 5, 4, 4

out_dir = pathlib.Path(os.environ.get("DEMO_OUT_DIR", "target/demo/arrays-python"))
out_dir.mkdir(parents=True, exist_ok=True)

# ---- graph building, as icefall's compile_hlg
L = k2.arc_sort(k2.Fsa.from_str(L_TEXT, acceptor=False))
G = k2.arc_sort(k2.Fsa.from_openfst(G_TEXT, acceptor=True))
LG = k2.connect(k2.compose(L, G))
LG = k2.connect(k2.determinize(LG))
LG.labels[LG.labels >= FIRST_TOKEN_DISAMBIG_ID] = 0
LG.aux_labels.values[LG.aux_labels.values >= FIRST_WORD_DISAMBIG_ID] = 0
LG = k2.connect(k2.remove_epsilon(LG))
LG.aux_labels = LG.aux_labels.remove_values_eq(0)
LG = k2.arc_sort(LG)
H = k2.ctc_topo(MAX_TOKEN)
HLG = k2.arc_sort(k2.connect(k2.compose(H, LG, inner_labels="tokens")))
print(f"L: {L.shape[0]} states, {L.num_arcs} arcs; LG: {LG.shape[0]} states, {LG.num_arcs} arcs")
print(f"HLG: {HLG.shape[0]} states, {HLG.num_arcs} arcs, {HLG.properties_str}")
dot = out_dir / "HLG.dot"
dot.write_text(HLG.to_dot("HLG"))
print(f"artefact: {dot}")

# ---- CTC loss with backward
rng = np.random.default_rng(0)
logits_np = rng.standard_normal((2, 10, MAX_TOKEN + 1)).astype(np.float32)
segments = np.array([[0, 0, 10], [1, 0, 8]], dtype=np.int32)
graph = k2.ctc_graph([[1, 2, 2], [3, 4]])
try:
    import torch

    logits = torch.from_numpy(logits_np).requires_grad_(True)
    dense = k2.DenseFsaVec(logits.log_softmax(-1), torch.from_numpy(segments))
    loss = k2.ctc_loss(graph, dense, reduction="sum")
    loss.backward()
    print(f"CTC loss {loss.item():.4f}, |d loss / d logits| = {logits.grad.norm().item():.4f}")
except ImportError:
    lp = logits_np - np.log(np.exp(logits_np).sum(-1, keepdims=True))
    dense = k2.DenseFsaVec(lp.astype(np.float32), segments)
    loss, grad = k2.ctc_loss_with_grad(graph, dense)
    print(f"CTC loss {loss.sum():.4f} (numpy), |d loss / d log_probs| = {np.linalg.norm(grad):.4f}")

# ---- decoding
lp = rng.standard_normal((2, 12, MAX_TOKEN + 1)).astype(np.float32)
lp = (lp - np.log(np.exp(lp).sum(-1, keepdims=True))).astype(np.float32)
dense = k2.DenseFsaVec(lp, np.array([[0, 0, 12], [1, 0, 10]], dtype=np.int32))
lattice = k2.intersect_dense_pruned(HLG, dense, 20.0, 8.0, 30, 10000)
best = k2.shortest_path(lattice, use_double_scores=True)
for i in range(best.shape[0]):
    words = [w for w in np.asarray(best[i].aux_labels.values).tolist() if w > 0]
    print(f"utterance {i}: words {words}")

# ---- Kaldi archives, kaldiio's calls: features and alignments, an scp, compression
feats = {f"utt{i}": rng.standard_normal((50 + 10 * i, 13)).astype(np.float32) for i in range(3)}
ark, scp = out_dir / "feats.ark", out_dir / "feats.scp"
with kaldiio.WriteHelper(f"ark,scp:{ark},{scp}") as writer:
    for key, mat in feats.items():
        writer(key, mat)
    writer("ali", np.array([3, 3, 4, 1], dtype=np.int32))
table = kaldiio.load_scp(str(scp))
print(f"scp: {len(table)} entries, utt2 {table['utt2'].shape}, ali {table['ali'].tolist()}")
cm = kaldiio.CompressedMatrix(feats["utt2"], kaldiio.kSpeechFeature)
error = np.abs(cm.decompress() - feats["utt2"]).max()
print(f"compressed utt2: {len(cm.to_bytes())} bytes for {feats['utt2'].nbytes}, largest error {error:.4f}")
print(f"artefact: {ark}")
print(f"artefact: {scp}")

# ---- images, cv2's calls: blur then Canny on a synthetic picture
y, x = np.mgrid[0:240, 0:320]
picture = np.where((x - 160) ** 2 + (y - 120) ** 2 < 80**2, 200, 40).astype(np.uint8)
picture = (picture + rng.integers(0, 30, size=picture.shape)).astype(np.uint8)
edges = image.canny(image.gaussian_blur(picture, (5, 5), 0), 50, 150)
print(f"canny: {int((edges > 0).sum())} edge pixels of {edges.size}")
pgm = out_dir / "edges.pgm"
pgm.write_bytes(b"P5 %d %d 255\n" % (edges.shape[1], edges.shape[0]) + edges.tobytes())
print(f"artefact: {pgm}")

# ---- StructuredTensor, TensorFlow's from_pyval
people = [
    {"age": 12, "nicknames": ["Josaphine"], "shoes": {"sizes": [8.0, 7.5, 7.5]}},
    {"age": 82, "nicknames": ["Bob", "Bobby"], "shoes": {"sizes": [11.0, 11.5, 12.0]}},
    {"age": 42, "nicknames": ["Elmo"], "shoes": {"sizes": [9.0, 9.5, 10.0]}},
]
st = StructuredTensor.from_pyval(people)
print(f"StructuredTensor: shape {st.shape}, fields {sorted(st.field_names())}, ages {st['age']}")
print(f"  shoe sizes {st.field_value(('shoes', 'sizes'))}; gathered [2, 0]: {st.gather([2, 0])['nicknames']}")
