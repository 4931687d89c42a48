# Guest side of scripts/run-conformance.sh (docs/conformance.md): every
# client nobody here wrote, run once on /dev/sda, the ncq-disk drive.  Each
# step is "run NAME COMMAND...": its output lands in $RESULTS/NAME.txt and a
# line "step NAME exit N" in the run's output, which the host prints.  The
# steps run in this order, one boot; a step never stops the run.
D=/dev/sda
SYS=/sys/block/sda/device
n=0
run() {
    name=$1; shift
    n=$((n + 1))
    { echo "\$ $*"; "$@"; } > "$RESULTS/$name.txt" 2>&1
    echo "step $name exit $?"
}
# the guest clock (virtual time) around a command, in ms
now_ms() { awk '{printf "%d\n", $1 * 1000}' /proc/uptime; }
timed() {
    name=$1; shift
    t0=$(now_ms); run "$name" "$@"; t1=$(now_ms)
    echo "took $name $((t1 - t0)) ms"
}
# fio: 4 KiB random reads, libaio, O_DIRECT, in region $1 (GiB), depth $2
fio_job() {
    cat > /tmp/job.fio <<EOF
[global]
filename=$D
direct=1
ioengine=libaio
bs=4k
randrepeat=1
rw=randread
offset=$1g
size=1g
number_ios=$3
iodepth=$2
[randread-qd$2]
EOF
    echo /tmp/job.fio
}
dmesg_bad() { dmesg | grep -Ei 'NCQ disabled|failed command|exception Emask|hard resetting|limiting SATA|timeout' ; }
echo "boot_queue_depth $(cat $SYS/queue_depth)"
dmesg -c > "$RESULTS/dmesg-boot.txt"
echo "libata: $(grep -o 'ata[0-9.]*: [0-9]* sectors.*' "$RESULTS/dmesg-boot.txt" | head -1)"

# ---- hdparm
run hdparm-I hdparm -I $D
run hdparm-i hdparm -i $D
run hdparm-W hdparm -W $D
run hdparm-W0 hdparm -W0 $D
run hdparm-W1 hdparm -W1 $D
run hdparm-C-active hdparm -C $D
run hdparm-y hdparm -y $D
run hdparm-C-standby hdparm -C $D
timed read-after-standby dd if=$D of=/dev/null bs=4k count=1 skip=100000 iflag=direct
run hdparm-C-after-read hdparm -C $D
run hdparm-S1 hdparm -S 1 $D
sleep 7
run hdparm-C-after-S1 hdparm -C $D
timed read-after-timer dd if=$D of=/dev/null bs=4k count=1 skip=200000 iflag=direct
run hdparm-S0 hdparm -S 0 $D

# ---- smartctl
run smartctl-i smartctl -i $D
run smartctl-a smartctl -a $D
run smartctl-x smartctl -x $D
run smartctl-directory smartctl -l directory $D
run smartctl-gplog0 smartctl -l gplog,0x00 $D
run smartctl-smartlog0 smartctl -l smartlog,0x00 $D
run smartctl-gplog30 smartctl -l gplog,0x30,1 $D
run smartctl-sataphy smartctl -l sataphy $D
run smartctl-devstat smartctl -l devstat $D
run smartctl-xerror smartctl -l xerror $D
run smartctl-scterc smartctl -l scterc $D
run smartctl-scterc-set smartctl -l scterc,70,70 $D
run smartctl-scterc-after smartctl -l scterc $D
run smartctl-scttempsts smartctl -l scttempsts $D
run smartctl-scttemp smartctl -l scttemp $D
run smartctl-selftest smartctl -l selftest $D
# every log of the SMART directory, read through SMART READ LOG
for a in $(awk '/^0x[0-9a-f]{2} +[^ ]*S/ {print $1}' "$RESULTS/smartctl-directory.txt"); do
    smartctl -l smartlog,$a $D > /tmp/sl 2>&1; r=$?
    echo "smartlog $a exit $r $(grep -c 'failed\|not supported' /tmp/sl)"
done

# ---- sg3-utils
run sg_inq sg_inq $D
run sg_vpd sg_vpd $D
run sg_vpd-ata sg_vpd -p ai $D
run sg_vpd-bdc sg_vpd -p bdc $D
run sg_readcap sg_readcap -l $D
run sg_sat_identify sg_sat_identify $D
run sg_sat_identify-r sg_sat_identify -r $D
# every log and page the GP directory lists, READ LOG EXT and READ LOG DMA
# EXT: "gplog LOG PAGE PIO-EXIT DMA-EXIT same|differ"
sg_sat_read_gplog -H --log=0 $D > "$RESULTS/gpdir.txt"; echo "gpdir exit $?"
set -- $(awk '{for (i = 2; i <= 17 && i <= NF; i++) if ($i ~ /^[0-9a-f][0-9a-f]$/) print $i}' "$RESULTS/gpdir.txt")
a=0
while [ $# -ge 2 ]; do
    np=$((0x$1 + 256 * 0x$2)); shift 2
    if [ $a -gt 0 ] && [ $np -gt 0 ]; then
        p=0
        while [ $p -lt $np ]; do
            sg_sat_read_gplog -H --log=$a --page=$p $D > /tmp/pio 2>&1; r1=$?
            sg_sat_read_gplog -H --dma --log=$a --page=$p $D > /tmp/dma 2>&1; r2=$?
            cmp -s /tmp/pio /tmp/dma && same=same || same=differ
            printf 'gplog %02xh %d %d %d %s\n' $a $p $r1 $r2 $same
            p=$((p + 1))
        done
    fi
    a=$((a + 1))
done

# ---- fio: 4 KiB random reads at iodepth 1, 8 and 32 (queue_depth 32)
echo none > /sys/block/sda/queue/scheduler
g=1
for qd in 1 8 32; do
    run fio-qd$qd fio --output-format=normal $(fio_job $g $qd 300)
    g=$((g + 1))
done

# ---- blktrace: 200 reads at iodepth 8 under blktrace, D and C events
mount -t debugfs none /sys/kernel/debug 2>/dev/null
blktrace -d $D -o - > /tmp/bt.bin 2> "$RESULTS/blktrace-err.txt" &
bt=$!
sleep 1
fio --output-format=terse $(fio_job 4 8 200) > /dev/null
sleep 1
kill -INT $bt; wait $bt
blkparse -i - < /tmp/bt.bin > "$RESULTS/blkparse.txt" 2>&1
# D: issued to the driver, C: completed; the most issued and not yet
# completed at once is the queue depth the drive saw
awk '$6 == "D" {d++; q++; if (q > m) m = q} $6 == "C" {c++; q--}
     END {print "blkparse D " d " C " c " most in flight " m}' "$RESULTS/blkparse.txt"

# ---- libata at queue_depth 1, 8, 32: fio asks 32 deep, libata keeps N
g=5
for qd in 1 8 32; do
    echo $qd > $SYS/queue_depth
    echo "queue_depth $qd -> $(cat $SYS/queue_depth)"
    run libata-qd$qd fio --output-format=normal $(fio_job $g 32 300)
    g=$((g + 1))
done
dmesg > "$RESULTS/dmesg-libata.txt"
echo "dmesg_bad $(dmesg_bad | wc -l)"
dmesg_bad | head -5

# ---- SLEEP last: libata resets the link to wake the drive
run hdparm-Y hdparm -Y $D
timed read-after-sleep dd if=$D of=/dev/null bs=4k count=1 skip=300000 iflag=direct
run hdparm-C-after-sleep hdparm -C $D
dmesg > "$RESULTS/dmesg-end.txt"
echo "conformance done: $n steps"
