#!/bin/sh
# scratch: fence vs timeline semaphore, with the GPU interrupt on the polling CPU and away
B=bundle/run.sh
irq=$(awk '/nvidia/ {sub(":","",$1); print $1; exit}' /proc/interrupts)
cnt() { awk -v q="$irq:" '$1 == q {s = 0; for (i = 2; i <= 17; i++) s += $i; print s}' /proc/interrupts; }
e2e() { # sync cpu
  a=$(cnt); r=$(NXVK_SYNC=$1 taskset -c $2 $B bench ops --ops add --sizes 1K --dtype f32 --min-time 0.3 2>&1 | awk '/^add/ {print $13, $14, "kernel", $7, $8}'); b=$(cnt)
  echo "$1 cpu $2: e2e $r, interrupts $((b - a))"
}
echo 3 > /proc/irq/$irq/smp_affinity_list
echo "irq $irq on $(cat /proc/irq/$irq/smp_affinity_list)"
for p in 1 2; do for s in fence timeline; do e2e $s 3; e2e $s 8; done; done
for s in fence timeline; do
  a=$(cnt); NXVK_SYNC=$s taskset -c 8 $B bench ops --ops add --sizes 1K --dtype f32 --repeat 1000 > /dev/null 2>&1; b=$(cnt)
  echo "$s: --repeat 1000 process: $((b - a)) interrupts"
done
for s in fence timeline; do
  echo "$s: $(NXVK_SYNC=$s $B bench ops --ops add,exp,sum --sizes 1K,16M --dtype f32,f64 --min-time 0.2 2>&1 | grep -E '^(add|exp|sum)' | awk '{print $1, $2, $3, $7 $8, "e2e", $13 $14}' | tr '\n' ';')"
done
echo "== quick conformance with timeline"
NXVK_SYNC=timeline $B conformance --quick 2>&1 | tail -n 1
NXVK_SYNC=timeline $B stress race --quick 2>&1 | tail -n 2
