# make bench: bench/results.csv -> bench/results.png, GB/s per shape and contender.
set terminal pngcairo size 1200,800 font "sans,10" noenhanced
set output "bench/results.png"
set datafile separator ","
set multiplot layout 2,1 title "batchnormgrad, one call, GB/s of the 5 streams (median; higher is better)"
set style data linespoints
set ylabel "GB/s"
set key outside right
set grid ytics
set xtics ("4x64" 0, "4096x64" 1, "2048x256" 2, "65536x64" 3, "16384x256" 4, "262144x64" 5)
shape_index(b, c) = (b == 4 ? 0 : b == 4096 ? 1 : b == 2048 ? 2 : b == 65536 ? 3 : b == 16384 ? 4 : 5)
name(i) = i == 1 ? "specialized _p" : i == 2 ? "generic _p" : i == 3 ? "_s all cores" : i == 4 ? "naive loop" : i == 5 ? "oneDNN" : i == 6 ? "roofline (plain stores)" : "roofline (streaming)"
do for [dt in "f32 f16"] {
    set title sprintf("mt7004, gnu backend, %s", dt)
    # smooth unique joins one contender's points in shape order (the other rows are NaN)
    plot for [i=1:7] "bench/results.csv" using (strcol(1) eq "mt7004" && strcol(2) eq "gnu" && strcol(3) eq dt && strcol(6) eq name(i) ? shape_index($4, $5) : NaN):8 smooth unique with linespoints title name(i)
}
unset multiplot
