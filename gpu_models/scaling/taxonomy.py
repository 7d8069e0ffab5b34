"""Scaling taxonomy of Greathouse & Loh (ICCAD 2018, Sec. 3, Fig. 3): which kernels scale alike.

1. Normalised performance matrix: one row per kernel, one column per configuration, performance
   ``1/time`` divided by the kernel's best performance over the grid (values in (0, 1]).
2. PCA of that matrix (columns centred), keeping the fewest components that explain
   ``variance`` of the total variance, but at least ``min_components`` (default 6): the Spearman
   correlation of step 3 ranks a kernel's scores, and with only 3 values it can take just 4 values, too
   coarse to separate behaviours (on the synthetic archetypes 3 components merged compute-bound with
   balanced kernels for 5 of 6 seeds; 6 components separated all six archetypes for every seed tried).
3. Hierarchical agglomerative clustering of the kernels' PCA scores with the Spearman rank correlation
   as similarity (distance ``1 - rho``) and Ward's linkage criterion (SciPy's Lance-Williams update on
   that distance matrix; Ward is defined for Euclidean distances, so heights are not variances here).
4. The tree is cut into ``n_clusters`` groups, and each group is named by its behaviour from the mean
   elasticities of its members' performance (:func:`elasticities`).

Naming rule (elasticity = d log perf / d log resource, over the whole grid range, at the top of the
other two resources): ``e_core``, ``e_mem``, ``e_cu``.

- ``insensitive``: ``max(|e_core|, |e_mem|, |e_cu|) < 0.15``;
- ``cache-thrashing``: ``e_cu < -0.15`` (more CUs make it slower);
- ``compute-bound``: ``e_core >= 0.5`` and ``e_mem < 0.2``, and (if CUs vary) ``e_cu >= 0.5``;
- ``parallelism-limited``: ``e_core >= 0.5``, ``e_mem < 0.2`` and ``e_cu < 0.5`` (CUs vary);
- ``bandwidth-bound``: ``e_mem >= 0.5`` and ``e_core < 0.2``;
- ``balanced``: anything else with ``e_core + e_mem >= 0.3`` (scales with both, a roofline knee);
- ``weakly-sensitive`` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform
from scipy.stats import spearmanr

from gpu_models.scaling.dataset import Grid


def performance_matrix(cube: np.ndarray) -> np.ndarray:
    """Normalised performance per kernel and configuration.

    Parameters
    ----------
    cube:
        Times (n_kernels, n_cu, n_core, n_mem).

    Returns
    -------
    numpy.ndarray
        (n_kernels, n_configs): ``(1/t) / max(1/t)`` per kernel, configurations in C order.
    """
    t = np.asarray(cube, dtype=float).reshape(len(cube), -1)
    perf = 1.0 / t
    return perf / perf.max(axis=1, keepdims=True)


def pca_scores(P: np.ndarray, variance: float = 0.95, min_components: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Principal-component scores of the rows of ``P`` (columns centred) via SVD.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Scores (n, n_kept) and the explained-variance ratio of every component.
    """
    Z = P - P.mean(axis=0)
    U, S, _ = np.linalg.svd(Z, full_matrices=False)
    var = S ** 2
    ratio = var / var.sum() if var.sum() > 0 else np.zeros_like(var)
    n_keep = int(np.searchsorted(np.cumsum(ratio), variance) + 1)
    n_keep = max(min(min_components, len(S)), min(n_keep, len(S)))
    return U[:, :n_keep] * S[:n_keep], ratio


def spearman_distance(scores: np.ndarray) -> np.ndarray:
    """Square matrix ``1 - rho`` of Spearman rank correlations between rows (ties get average ranks)."""
    if scores.shape[1] < 2:
        raise ValueError("Spearman correlation needs at least 2 values per kernel")
    rho = spearmanr(scores, axis=1).statistic
    rho = np.atleast_2d(rho)
    rho = np.nan_to_num(rho, nan=0.0)
    D = 1.0 - rho
    np.fill_diagonal(D, 0.0)
    return np.clip((D + D.T) / 2, 0.0, 2.0)


def elasticities(cube: np.ndarray, grid: Grid) -> np.ndarray:
    """Per kernel (e_core, e_mem, e_cu): log performance change over log resource change, grid-wide.

    Each is measured with the other two resources at their largest grid value; ``e_cu`` is 0 when the
    grid has one CU count.

    Returns
    -------
    numpy.ndarray
        (n_kernels, 3).
    """
    t = np.asarray(cube, dtype=float)
    out = np.zeros((len(t), 3))
    if len(grid.core_mhz) > 1:
        out[:, 0] = np.log(t[:, -1, 0, -1] / t[:, -1, -1, -1]) / np.log(grid.core_mhz[-1] / grid.core_mhz[0])
    if len(grid.mem_mhz) > 1:
        out[:, 1] = np.log(t[:, -1, -1, 0] / t[:, -1, -1, -1]) / np.log(grid.mem_mhz[-1] / grid.mem_mhz[0])
    if len(grid.sm_counts) > 1:
        out[:, 2] = np.log(t[:, 0, -1, -1] / t[:, -1, -1, -1]) / np.log(grid.sm_counts[-1] / grid.sm_counts[0])
    return out


def behaviour_name(e_core: float, e_mem: float, e_cu: float, cu_varies: bool) -> str:
    """Name a scaling behaviour from mean elasticities (rule in the module docstring)."""
    if max(abs(e_core), abs(e_mem), abs(e_cu)) < 0.15:
        return "insensitive"
    if cu_varies and e_cu < -0.15:
        return "cache-thrashing"
    if e_core >= 0.5 and e_mem < 0.2:
        if cu_varies and e_cu < 0.5:
            return "parallelism-limited"
        return "compute-bound"
    if e_mem >= 0.5 and e_core < 0.2:
        return "bandwidth-bound"
    if e_core + e_mem >= 0.3:
        return "balanced"
    return "weakly-sensitive"


@dataclass
class Taxonomy:
    """Result of :func:`build_taxonomy`."""

    kernels: list[str]
    linkage: np.ndarray          # SciPy linkage matrix
    labels: np.ndarray           # cluster id per kernel, 1..n_clusters
    names: dict[int, str]        # cluster id -> behaviour name (made unique with a suffix)
    elasticities: np.ndarray     # (n_kernels, 3)
    explained_variance: np.ndarray
    n_components: int

    def table(self):
        """One row per kernel: cluster, name, elasticities (a pandas DataFrame)."""
        import pandas as pd

        return pd.DataFrame({"kernel": self.kernels, "cluster": self.labels,
                             "behaviour": [self.names[c] for c in self.labels],
                             "e_core": self.elasticities[:, 0], "e_mem": self.elasticities[:, 1],
                             "e_cu": self.elasticities[:, 2]})


def build_taxonomy(cube: np.ndarray, grid: Grid, kernels, n_clusters: int = 5, variance: float = 0.95,
                   min_components: int = 6) -> Taxonomy:
    """PCA + Spearman/Ward hierarchical clustering of scaling behaviour, clusters named by behaviour.

    Parameters
    ----------
    cube:
        Times (n_kernels, n_cu, n_core, n_mem).
    grid:
        Their grid.
    kernels:
        Kernel names.
    n_clusters:
        Where to cut the tree.
    variance, min_components:
        PCA retention (see :func:`pca_scores`).

    Returns
    -------
    Taxonomy
    """
    kernels = list(kernels)
    if len(kernels) != len(cube) or len(kernels) < 2:
        raise ValueError(f"need at least 2 kernels and one name per kernel; got {len(cube)} and {len(kernels)} names")
    P = performance_matrix(cube)
    scores, ratio = pca_scores(P, variance, min_components)
    D = spearman_distance(scores)
    Z = linkage(squareform(D, checks=False), method="ward")
    labels = fcluster(Z, t=min(n_clusters, len(kernels)), criterion="maxclust")
    el = elasticities(cube, grid)
    cu_varies = len(grid.sm_counts) > 1
    names: dict[int, str] = {}
    used: dict[str, int] = {}
    for c in sorted(set(labels)):
        m = el[labels == c].mean(axis=0)
        base = behaviour_name(m[0], m[1], m[2], cu_varies)
        used[base] = used.get(base, 0) + 1
        names[int(c)] = base if used[base] == 1 else f"{base} ({used[base]})"
    return Taxonomy(kernels, Z, labels, names, el, ratio, scores.shape[1])


def plot_dendrogram(tax: Taxonomy, path, title: str = "Scaling taxonomy") -> None:
    """Draw the dendrogram with leaves coloured by cluster and a legend of behaviour names (PNG/SVG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.cluster.hierarchy import dendrogram

    from gpu_models.scaling.figures import save_figure

    cmap = plt.get_cmap("tab10")
    ids = sorted(tax.names)
    colour = {c: matplotlib.colors.to_hex(cmap(i % 10)) for i, c in enumerate(ids)}
    leaf_cluster = dict(zip(range(len(tax.kernels)), tax.labels))
    n = len(tax.kernels)
    # colour each link by its cluster when both sides belong to the same one, grey otherwise
    node_cluster = {i: leaf_cluster[i] for i in range(n)}
    for j, (a, b, _, _) in enumerate(tax.linkage):
        ca, cb = node_cluster.get(int(a)), node_cluster.get(int(b))
        node_cluster[n + j] = ca if ca == cb else None
    fig, ax = plt.subplots(figsize=(8, max(4, 0.16 * n + 1)))
    dendrogram(tax.linkage, labels=tax.kernels, orientation="left", ax=ax, leaf_font_size=6,
               link_color_func=lambda k: colour.get(node_cluster.get(k), "#999999"))
    for lbl in ax.get_yticklabels():
        i = tax.kernels.index(lbl.get_text())
        lbl.set_color(colour[tax.labels[i]])
    handles = []
    for c in ids:
        e = tax.elasticities[tax.labels == c].mean(axis=0)
        cu = f", e_cu {e[2]:.2f}" if np.any(tax.elasticities[:, 2] != 0) else ""
        handles.append(matplotlib.patches.Patch(
            color=colour[c], label=f"{c}: {tax.names[c]} ({int((tax.labels == c).sum())} kernels; "
                                   f"e_core {e[0]:.2f}, e_mem {e[1]:.2f}{cu})"))
    ax.legend(handles=handles, loc="lower left", fontsize=7)
    ax.set_xlabel("Ward linkage height on 1 - Spearman rho of PCA scores")
    ax.set_title(title)
    save_figure(fig, path)
