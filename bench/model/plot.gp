# make model: model.csv -> model.png, predicted _s time against batch for each channel
# count, with the DDR floor (dashed, a dot per shape: a count of one shape has no
# line), per storage type, at the largest core count predicted: the
# vendor's calls (the extensions' rows are in the CSV and the table).
# gnuplot -e "csv='...'; png='...'" bench/model/plot.gp
set terminal pngcairo size 1200,1000 font "sans,10" noenhanced
set output png
set datafile separator ","
channels = system(sprintf("sed -n 's/^# channels: //p' '%s'", csv))
dtypes = system(sprintf("cut -d, -f2 '%s' | sed -n '3,$p' | sort -u | tr '\\n' ' '", csv))
cores = system(sprintf("cut -d, -f5 '%s' | sed -n '3,$p' | sort -n | tail -1", csv))
set multiplot layout words(dtypes),1 title sprintf("make model: predicted DSP time of _s " \
    . "on %s cores (a prediction from targets.yaml part:, not a measurement); " \
    . "dashed, dots: the DDR floor", cores)
set logscale xy
set xlabel "batch (rows: N*H*W)"
set ylabel "microseconds"
set key outside right
set grid
# one channel count's vendor calls (the last five columns, spatial, relu, forward, bits
# and accumulate_dx, 0) of one storage type, in batch order
calls(dt, c) = sprintf("< awk -F, '$2 == \"%s\" && $4 == %s && $5 == %s " \
    . "&& $(NF-4) == 0 && $(NF-3) == 0 && $(NF-2) == 0 && $(NF-1) == 0 && $NF == 0' '%s' " \
    . "| sort -t, -k3,3n", dt, c, cores, csv)
do for [dt in dtypes] {
    set title dt
    plot for [i=1:words(channels)] calls(dt, word(channels, i)) using 3:7 \
             with linespoints lc i title sprintf("C=%s", word(channels, i)), \
         for [i=1:words(channels)] calls(dt, word(channels, i)) using 3:8 \
             with linespoints lc i dt 2 pt 7 ps 0.4 notitle, \
         NaN with linespoints lc black dt 2 pt 7 ps 0.4 title "DDR floor"
}
unset multiplot
