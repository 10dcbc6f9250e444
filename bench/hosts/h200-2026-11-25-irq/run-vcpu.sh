#!/bin/sh
# scratch: is vCPU 14 slow for CPU work too, or only around the GPU?
B=bundle/run.sh
O=$OUT
grep -iE "CPU0|nvidia|vfio|msi" /proc/interrupts | cut -c1-220 > $O/interrupts-before.txt
for pass in 1 2; do for cpu in 0 7 14 15; do
  taskset -c $cpu $B bench ops --ops add,exp --sizes 1K,64K,1M --dtype f32 --min-time 0.3 > $O/ops-$cpu-$pass.txt 2>&1
  echo "pass $pass cpu $cpu:"; grep -E "^(add|exp) " $O/ops-$cpu-$pass.txt
done; done
grep -iE "CPU0|nvidia|vfio|msi" /proc/interrupts | cut -c1-220 > $O/interrupts-after.txt
cat $O/interrupts-after.txt
head -3 $O/ops-0-1.txt
