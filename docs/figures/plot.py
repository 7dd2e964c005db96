#!/usr/bin/env python3
"""Draws the course's figures from the calibration CSVs in docs/data with gnuplot.

  docs/figures/plot.py     (no GPU needed; docs/figures/measure.sh measures first)

Writes docs/figures/<chapter>*.svg; every title names the GPU and the date of the measurement
(docs/data/measured-on.txt).
"""
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data")


def rows(name):
    with open(os.path.join(DATA, name), newline="") as f:
        return list(csv.DictReader(f))


def measured_on(csv_name=None):
    """The GPU and date of the measurement: <csv stem>.measured-on.txt when a chapter's data was
    measured apart from the others (measure.sh run whole removes those), else measured-on.txt."""
    own = os.path.join(DATA, os.path.splitext(csv_name)[0] + ".measured-on.txt") if csv_name else ""
    with open(own if own and os.path.exists(own) else os.path.join(DATA, "measured-on.txt")) as f:
        return f.read().strip()


def gnuplot(name, script, data):
    """Runs `script` with $data (a gnuplot datablock) and writes <name>.svg."""
    out = os.path.join(HERE, name + ".svg")
    text = (f"$data << EOD\n{data}EOD\n"
            f"set terminal svg size 820,440 dynamic enhanced font 'Helvetica,13' background rgb 'white'\n"
            f"set output '{out}'\n"
            f"set key top left\nset grid ytics lc rgb '#dddddd'\nset border 3\nset tics nomirror\n"
            + script)
    with tempfile.NamedTemporaryFile("w", suffix=".gp", delete=False) as f:
        f.write(text)
    try:
        subprocess.run(["gnuplot", f.name], check=True)
    finally:
        os.unlink(f.name)
    print("wrote", os.path.relpath(out))


def title(text, csv_name=None):
    return f"set title \"{text}\\n{{/*0.8 {measured_on(csv_name)}}}\"\n"


def labelled_bars(name, heading, ylabel, bars, fmt, offset, extra="", csv_name=None):
    """A single-series bar chart of (label, value) pairs, each bar with its value on top."""
    lines = "".join(f'"{label}" {value}\n' for label, value in bars)
    gnuplot(name, title(heading, csv_name) + f"""
set style data histograms
set style fill solid 0.85 border -1
set boxwidth 0.7
set key off
set ylabel "{ylabel}"
{extra}plot $data using 2:xtic(1) lc rgb '#3070c0', '' using 0:({offset}):(sprintf("{fmt}",$2)) with labels notitle
""", lines)


def transpose():
    data = rows("06-transpose.csv")
    sizes = sorted({int(r["n"]) for r in data})
    variants = ["naive", "32x32 tile unpadded", "32x32 tile padded", "64x64 tile padded"]
    lines = ""
    for n in sizes:
        values = {r["variant"]: float(r["fraction_of_memcpy"]) for r in data if int(r["n"]) == n}
        lines += f'"{n} x {n}" ' + " ".join(f"{values[v]:.3f}" for v in variants) + "\n"
    gnuplot("06-transpose", title("Transpose: effective bandwidth as a fraction of cudaMemcpy") + """
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set yrange [0:1.3]
set key top center horizontal
set ylabel "fraction of the device-to-device copy"
set arrow from graph 0, first 0.75 to graph 1, first 0.75 nohead dt 2 lw 2 lc rgb '#aa0000'
set label "test threshold 0.75" at graph 0.01, first 0.78 tc rgb '#aa0000'
plot $data using 2:xtic(1) title "naive" lc rgb '#bbbbbb', '' using 3 title "32x32, no padding" lc rgb '#f0a030', \\
     '' using 4 title "32x32, padded" lc rgb '#80a8e0', '' using 5 title "64x64, padded (reference)" lc rgb '#3070c0'
""", lines)


def matmul():
    data = rows("05-matmul.csv")
    labelled_bars("05-matmul-gemm", "C = A·B, 4096^3, FP32: TFLOP/s", "TFLOP/s",
                  [(r["variant"], f'{float(r["tflops"]):.2f}') for r in data
                   if r["problem"] == "C=AB 4096^3" and "K step" not in r["variant"] and "stages" not in r["variant"]],
                  "%.1f", "$2+1.5", "set yrange [0:*]\n")
    labelled_bars("05-matmul-aat", "C = A·A^T, A of 8192 x 1024, FP32: TFLOP/s", "TFLOP/s (log scale)",
                  [(r["variant"], f'{float(r["tflops"]):.2f}') for r in data if r["problem"] == "C=AAT 8192x1024"],
                  "%.2f", "$2*1.25", "set logscale y\nset yrange [0.2:100]\n")


def pipeline():
    data = rows("07-async-pipeline.csv")
    staged = [r for r in data if r["variant"].startswith("memcpy_async")]
    lines = "".join(f'{r["stages"]} {float(r["fraction_of_memcpy"]):.3f}\n' for r in staged)
    sync = next(float(r["fraction_of_memcpy"]) for r in data if r["variant"].startswith("synchronous"))
    # The reference's row first (older data files have only one bulk row).
    bulk = [float(r["fraction_of_memcpy"]) for r in sorted(data, key=lambda r: "reference" not in r["variant"])
            if r["variant"].startswith("bulk")]
    extra = f"set arrow from graph 0, first {sync} to graph 1, first {sync} nohead dt 3 lw 2 lc rgb '#888888'\n"
    extra += f"set label 'synchronous loads {sync:.2f}' at graph 0.55, first {sync - 0.04} tc rgb '#666666'\n"
    if bulk:
        extra += f"set arrow from graph 0, first {bulk[0]} to graph 1, first {bulk[0]} nohead dt 4 lw 2 lc rgb '#2a8a2a'\n"
        extra += f"set label 'bulk copies (TMA) {bulk[0]:.2f}' at graph 0.55, first {bulk[0] + 0.03} tc rgb '#2a8a2a'\n"
    gnuplot("07-async-pipeline", title("One block of 256 threads per SM: bandwidth against pipeline stages") + extra + """
set xrange [0.5:12.5]
set yrange [0:1.05]
set xtics (1,2,3,4,6,8,10,12)
set xlabel "stages (4 KiB each)"
set ylabel "fraction of the device-to-device copy"
set arrow from graph 0, first 0.70 to graph 1, first 0.70 nohead dt 2 lw 2 lc rgb '#aa0000'
set label "test threshold 0.70" at graph 0.02, first 0.73 tc rgb '#aa0000'
plot $data using 1:2 with linespoints lw 2 pt 7 lc rgb '#3070c0' title "cuda::memcpy\\\\_async pipeline"
""", lines)


def transfers():
    data = rows("02-transfers.csv")
    sequential = next(float(r["ms"]) for r in data if r["what"] == "sequential")
    staged = [r for r in data if r["what"].startswith("staged")]
    lines = "".join(f'{r["chunks"]} {float(r["ms"]) / sequential:.3f}\n' for r in staged)
    gnuplot("02-transfers-chunks", title("256 MiB up, light kernel, 256 MiB down: staged time / sequential time") + """
set logscale x 2
set xrange [3:80]
set yrange [0:1.1]
set xlabel "chunks (over 4 streams)"
set ylabel "time relative to one stream"
set arrow from graph 0, first 0.8 to graph 1, first 0.8 nohead dt 2 lw 2 lc rgb '#aa0000'
set label "test threshold 0.8" at graph 0.02, first 0.83 tc rgb '#aa0000'
plot $data using 1:2 with linespoints lw 2 pt 7 lc rgb '#3070c0' title "staged, 4 streams", 1 with lines dt 3 lc rgb '#888888' title "sequential"
""", lines)
    timeline = rows("02-transfers-timeline.csv")
    colours = {"upload": "0x3070c0", "kernel": "0xf0a030", "download": "0x2a8a2a"}
    lines = "".join(
        f'{float(r["start_ms"]):.4f} {float(r["end_ms"]):.4f} {int(r["stream"])} {colours[r["operation"]]} {r["chunk"]}\n'
        for r in timeline)
    gnuplot("02-transfers-timeline", title("Timeline of one staged run: 8 chunks over 4 streams") + """
set xlabel "time (ms)"
set ylabel "stream"
set yrange [-0.6:3.6]
set ytics 1
set key off
set label "upload" at graph 0.80, graph 1.03 tc rgb '#3070c0'
set label "kernel" at graph 0.88, graph 1.03 tc rgb '#f0a030'
set label "download" at graph 0.94, graph 1.03 tc rgb '#2a8a2a'
plot $data using (($1+$2)/2):3:(($2-$1)/2):(0.35):4 with boxxyerror fs solid 0.85 border lc rgb 'black' lc rgb variable, \\
     '' using (($1+$2)/2):3:5 with labels font ',9' tc rgb 'white'
""", lines)


def zero_copy():
    labelled_bars("03-zero-copy", "Reading 256 MiB of host memory: GB/s", "GB/s over the host link",
                  [(r["variant"], f'{float(r["gbps"]):.1f}') for r in rows("03-zero-copy.csv")],
                  "%.1f", "$2+1.5", "set yrange [0:*]\n")


def measuring():
    lines = "".join(f'{r["kernel_ms"]} {r["host_ms"]} {r["event_ms"]} {r["unsynchronised_ms"]}\n'
                    for r in rows("01-measuring.csv"))
    gnuplot("01-measuring", title("What each timer reports for a kernel of known duration") + """
set logscale xy
set xlabel "the kernel runs (ms)"
set ylabel "the timer reports (ms)"
set format x "%g"
set format y "%g"
set key top left
plot $data using 1:1 with lines dt 2 lc rgb '#888888' title "the kernel's duration", \\
     '' using 1:2 with linespoints pt 7 lc rgb '#3070c0' title "host clock, stream synchronised", \\
     '' using 1:3 with linespoints pt 5 lc rgb '#2a8a2a' title "CUDA events", \\
     '' using 1:4 with linespoints pt 9 lc rgb '#c03030' title "host clock, no synchronisation"
""", lines)


def coalescing():
    data = rows("04-coalescing.csv")
    copies = [(r["variant"], r["fraction_of_copy"]) for r in data if r["group"] in ("offset", "stride")]
    labelled_bars("04-coalescing-copies", "Copy kernels: offsets and strides, as a fraction of cudaMemcpy",
                  "useful bytes / copy peak", copies, "%.2f", "$2+0.03",
                  "set yrange [0:1]\nset xtics rotate by -35\n", "04-coalescing.csv")
    names = {"array of structures": "particles, AoS (given)", "structure of arrays": "particles, SoA (float4)",
             "structure of arrays: one per thread": "particles, SoA, 1/thread",
             "a thread per row": "row sums, thread/row (given)", "a warp per row: 1 sum per lane": "warp/row, 1 sum",
             "a warp per row: 1 sum per lane (__ldg)": "warp/row, 1 sum, ldg",
             "a warp per row: 4 sums per lane": "warp/row, 4 sums"}
    kernels = [(names.get(r["variant"], r["variant"]), r["fraction_of_copy"]) for r in data
               if r["group"] in ("particles", "row sums")]
    labelled_bars("04-coalescing-kernels", "The exercises' kernels, as a fraction of cudaMemcpy",
                  "useful bytes / copy peak", kernels, "%.2f", "$2+0.04",
                  "set yrange [0:1.2]\nset xtics rotate by -25\n"
                  "set arrow from graph 0, first 0.70 to graph 1, first 0.70 nohead dt 2 lw 2 lc rgb '#aa0000'\n"
                  "set label 'test thresholds 0.70' at graph 0.02, first 0.74 tc rgb '#aa0000'\n", "04-coalescing.csv")


def l2_persistence():
    data = rows("10-l2-persistence.csv")
    planned = [r for r in data if r["planned"] == "1"]
    lines = "".join(f'{r["hot_mib"]} {r["speedup"]}\n' for r in planned if r["access"] == "in order")
    lines += "\n\n" + "".join(f'{r["hot_mib"]} {r["speedup"]}\n' for r in planned if r["access"] == "at random")
    gnuplot("10-l2-persistence-planned",
            title("1 GiB streamed in and out while a hot table is swept: time without / with the planned window",
                  "10-l2-persistence.csv") + """
set xlabel "hot table (MiB)"
set ylabel "speed-up from the window"
set yrange [0.8:1.2]
set xrange [0:100]
set key bottom left
set arrow from 25, graph 0 to 25, graph 1 nohead dt 3 lc rgb '#888888'
set label "carve-out capped at half the L2" at 26, first 1.18 tc rgb '#666666'
set arrow from graph 0, first 0.95 to graph 1, first 0.95 nohead dt 2 lw 2 lc rgb '#aa0000'
set label "test guard 0.95 (at 16 MiB)" at graph 0.55, first 0.965 tc rgb '#aa0000'
plot 1 with lines dt 3 lc rgb '#888888' notitle, \\
     $data index 0 using 1:2 with linespoints lw 2 pt 7 lc rgb '#3070c0' title "table swept in order (the given kernel)", \\
     $data index 1 using 1:2 with linespoints lw 2 pt 5 lc rgb '#f0a030' title "table read at random"
""", lines)
    seen, blocks = set(), []
    for hot in ("16", "24"):
        points = []
        for r in data:
            if (r["hot_mib"] == hot and r["planned"] == "0" and r["miss"] == "streaming" and r["window_mib"] == hot
                    and abs(float(r["hit_ratio"]) - min(1.0, float(r["carve_out_mib"]) / float(hot))) < 0.01
                    and (hot, r["carve_out_mib"]) not in seen):
                seen.add((hot, r["carve_out_mib"]))
                points.append((float(r["carve_out_mib"]), r["speedup"]))
        blocks.append("".join(f"{c} {v}\n" for c, v in sorted(points)))
    gnuplot("10-l2-persistence-carve-out",
            title("The same work against the carve-out's size (hit ratio min(1, carve-out / table))",
                  "10-l2-persistence.csv") + """
set xlabel "persisting carve-out (MiB of the 50 MiB L2)"
set ylabel "speed-up from the window"
set yrange [0.4:1.2]
set key bottom left
set arrow from 25, graph 0 to 25, graph 1 nohead dt 3 lc rgb '#888888'
set label "half the L2" at 25.3, first 1.15 tc rgb '#666666'
plot 1 with lines dt 3 lc rgb '#888888' notitle, \\
     $data index 0 using 1:2 with linespoints lw 2 pt 7 lc rgb '#3070c0' title "16 MiB table", \\
     $data index 1 using 1:2 with linespoints lw 2 pt 5 lc rgb '#2a8a2a' title "24 MiB table"
""", "\n\n".join(blocks))


def instructions():
    data = rows("09-instructions.csv")
    bars = [(r["variant"], f'{float(r["rate"]):.0f}') for r in data if r["section"] == "math"]
    labelled_bars("09-instructions-math", "Math functions and their intrinsics: evaluations per second (G/s)", "G/s",
                  bars, "%.0f", "$2+120", "set yrange [0:4000]\nset xtics noenhanced rotate by -30\n", "09-instructions.csv")


def execution_config():
    data = rows("08-execution-config.csv")
    occupancy = [(f'{r["x"]} ({float(r["variant"]):.2f})', f'{float(r["value"]):.1f}') for r in data
                 if r["section"] == "occupancy"]
    labelled_bars("08-execution-config-occupancy",
                  "Chasing 2^{20} chains: rate against block size (occupancy), 48 KiB of shared memory per block",
                  "G links/s", occupancy, "%.1f", "$2+2", "set yrange [0:65]\nset xlabel 'threads per block (occupancy)'\n"
                  "set xtics rotate by -30\n", "08-execution-config.csv")
    tasks = {}
    for r in data:
        if r["section"] == "tasks":
            tasks.setdefault(int(r["x"]), {})[r["variant"]] = float(r["value"])
    lines = "".join(f'{n} {v["serial"]} {v["concurrent"]}\n' for n, v in sorted(tasks.items()))
    gnuplot("08-execution-config-tasks", title("Small kernels: one stream against eight", "08-execution-config.csv") + """
set logscale xy
set xlabel "tasks (4 blocks each)"
set ylabel "time (ms)"
set format x "%g"
set format y "%g"
plot $data using 1:2 with linespoints lw 2 pt 7 lc rgb '#bbbbbb' title "one stream (given)", \\
     '' using 1:3 with linespoints lw 2 pt 5 lc rgb '#3070c0' title "eight streams, joined by events"
""", lines)


def main():
    drawn = 0
    for name, draw in (("01-measuring.csv", measuring), ("04-coalescing.csv", coalescing),
                       ("08-execution-config.csv", execution_config),
                       ("09-instructions.csv", instructions),
                       ("10-l2-persistence.csv", l2_persistence),
                       ("06-transpose.csv", transpose), ("05-matmul.csv", matmul), ("07-async-pipeline.csv", pipeline),
                       ("02-transfers.csv", transfers), ("03-zero-copy.csv", zero_copy)):
        if os.path.exists(os.path.join(DATA, name)):
            draw()
            drawn += 1
        else:
            print("no data for", name, "(run docs/figures/measure.sh on a GPU)", file=sys.stderr)
    return 0 if drawn else 1


if __name__ == "__main__":
    sys.exit(main())
