# SPDX-License-Identifier: GPL-2.0
"""PNG charts of `make bench`, written beside results.md (python3-matplotlib;
without it the charts are skipped and the log says so).

  bench-reads.png    MiB/s per read row, one panel per workload and cache state
  bench-writes.png   MiB/s per write row, one panel per workload and sync mode
  bench-tree.png     seconds per tree step, and operations/s in one directory

Grouped bars, one colour per target throughout, log scale (the targets span
two orders of magnitude); the value is printed on each bar.
"""
import os

COLORS = {"tmpfs": "#9e9e9e", "ceiling": "#4c72b0", "ceiling-x": "#8da0cb",
          "fuse2fs": "#dd8452", "uf2fs": "#2ca02c", "uf2fs-wbc": "#98df8a",
          "uf2fs-nowbc": "#d62728",
          "uf2fs-o0": "#bcbd22", "uf2fs-dio": "#17becf", "uf2fs-uring": "#9467bd",
          "uf2fs-2dev": "#8c564b"}
LABELS = {"tmpfs": "tmpfs", "ceiling": "FUSE ceiling (passthrough_ll)",
          "ceiling-x": "passthrough_ll +xattr", "fuse2fs": "fuse2fs",
          "uf2fs": "uf2fs (default)", "uf2fs-wbc": "uf2fs writeback_cache",
          "uf2fs-nowbc": "uf2fs no_writeback_cache",
          "uf2fs-o0": "uf2fs order 0", "uf2fs-dio": "uf2fs direct_io",
          "uf2fs-uring": "uf2fs uring", "uf2fs-2dev": "uf2fs 2 devices"}


def _fmt(v):
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 1 else "%.2f" % v


def _bars(ax, groups, series, title, ylabel, log=True, horizontal=False):
    """groups: x labels; series: [(target, [value or None per group])]."""
    n = max(1, len(series))
    width = 0.8 / n
    for i, (name, vals) in enumerate(series):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        pts = [(x, v) for x, v in zip(xs, vals) if v]
        if not pts:
            continue
        px, pv = zip(*pts)
        bar = ax.barh if horizontal else ax.bar
        bars = bar(px, pv, width * 0.95, color=COLORS.get(name, None),
                   label=LABELS.get(name, name))
        for b, v in zip(bars, pv):
            if horizontal:
                ax.annotate(_fmt(v), (b.get_width(), b.get_y() + b.get_height() / 2),
                            xytext=(2, 0), textcoords="offset points", va="center",
                            fontsize=6)
            else:
                ax.annotate(_fmt(v), (b.get_x() + b.get_width() / 2, b.get_height()),
                            xytext=(0, 1), textcoords="offset points", ha="center",
                            fontsize=5.5, rotation=90)
    if horizontal:
        ax.set_yticks(range(len(groups)))
        ax.set_yticklabels(groups)
        ax.invert_yaxis()
        if log:
            ax.set_xscale("log")
        ax.set_xlabel(ylabel)
        ax.margins(x=0.15)
    else:
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups)
        if log:
            ax.set_yscale("log")
        ax.set_ylabel(ylabel)
        ax.margins(y=0.25)
    ax.set_title(title, fontsize=9)
    ax.grid(axis="x" if horizontal else "y", which="major", alpha=0.3)


def _panels(plt, keys, ncols=2):
    nrows = (len(keys) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(6 * ncols, 3.2 * nrows), squeeze=False)
    for ax in axes.flat[len(keys):]:
        ax.set_visible(False)
    return fig, list(axes.flat)


def _legend(fig, axes):
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    fig.legend(list(seen.values()), list(seen.keys()), loc="lower center",
               ncol=min(4, len(seen)), fontsize=8, frameon=False)


def _rows_plot(plt, rows, group_key, title_of, value_key, path, ylabel):
    """One panel per group of rows (bs on the x axis), one bar per target."""
    panels = {}
    for r in rows:
        panels.setdefault(group_key(r), []).append(r)
    if not panels:
        return None
    keys = list(panels)
    fig, axes = _panels(plt, keys)
    for ax, k in zip(axes, keys):
        rs = panels[k]
        names = [n for n in rs[0][value_key] if any(r[value_key].get(n) for r in rs)]
        _bars(ax, [r["bs"] for r in rs], [(n, [r[value_key].get(n) for r in rs])
                                          for n in names], title_of(k), ylabel)
    _legend(fig, axes)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_all(out, rows, wrows, trows, drows, log):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("python3-matplotlib is missing: no charts")
        return []
    paths = []
    try:
        p = _rows_plot(plt, rows, lambda r: (r["workload"], r["cache"]),
                       lambda k: "%s, %s (MiB/s, higher is better)" % k, "mib_s",
                       os.path.join(out, "bench-reads.png"), "MiB/s")
        paths += [p] if p else []
        p = _rows_plot(plt, wrows, lambda r: (r["workload"], r["sync"]),
                       lambda k: "%s, %s (MiB/s, higher is better)" % k, "mib_s",
                       os.path.join(out, "bench-writes.png"), "MiB/s")
        paths += [p] if p else []
        if trows or drows:
            panels = [x for x in (trows, drows) if x]
            fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2),
                                     squeeze=False)
            axes = list(axes.flat)
            i = 0
            if trows:
                names = [n for n in trows[0]["seconds"]
                         if any(r["seconds"].get(n) for r in trows)]
                _bars(axes[i], [r["step"] for r in trows],
                      [(n, [r["seconds"].get(n) for r in trows]) for n in names],
                      "Tree steps (seconds, lower is better)", "seconds", horizontal=True)
                i += 1
            if drows:
                names = [n for n in drows[0]["ops_s"]
                         if any(r["ops_s"].get(n) for r in drows)]
                _bars(axes[i], [r["op"] for r in drows],
                      [(n, [r["ops_s"].get(n) for r in drows]) for n in names],
                      "One directory (operations/s, higher is better)", "operations/s",
                      horizontal=True)
            _legend(fig, axes)
            fig.tight_layout(rect=(0, 0.08, 1, 1))
            p = os.path.join(out, "bench-tree.png")
            fig.savefig(p, dpi=110)
            plt.close(fig)
            paths.append(p)
    except Exception as e:      # a chart never fails the run
        log("charts: %s" % e)
    for p in paths:
        log("wrote %s" % p)
    return paths
