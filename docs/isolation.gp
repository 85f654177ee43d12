set terminal pngcairo size 1000,600 noenhanced
set output 'docs/isolation.png'
set title 'tandem-bench isolation: point-lookup peek latency (client round trip)'
set xlabel 'latency (microseconds, log scale)'
set ylabel 'fraction of peeks <= x'
set logscale x
set grid
set key center center box
set yrange [0:1.0]
plot 'docs/isolation.dat' index 0 using 1:2 with lines lw 2 title 'solo/idle', 'docs/isolation.dat' index 1 using 1:2 with lines lw 2 title 'solo/loaded', 'docs/isolation.dat' index 2 using 1:2 with lines lw 2 title 'two-runtime/idle', 'docs/isolation.dat' index 3 using 1:2 with lines lw 2 title 'two-runtime/loaded'
