# SPDX-License-Identifier: GPL-2.0
# bench.gp: bandwidth bar chart of a `make bench` run (optional step;
# gnuplot comes from the Debian package gnuplot-nox).
#   gnuplot -e "outdir='out/bench/latest/local'" selftests/bench/bench.gp
if (!exists("outdir")) outdir = "out/bench/latest/local"
set terminal png size 1800,700 noenhanced
set output outdir."/bench.png"
set title "eroce vs rdma_rxe vs TCP over the same veth (medians, Gb/s, log scale; TCG guest)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "Gb/s"
set xtics rotate by -60 font ",8"
set key top left
set grid ytics
plot outdir."/plot.dat" using 2:xtic(1) title "eroce", \
     "" using 3 title "rdma_rxe", \
     "" using 4 title "TCP (iperf3)"
