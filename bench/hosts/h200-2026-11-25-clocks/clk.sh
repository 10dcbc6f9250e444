O=$1; mkdir -p $O
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,clocks_throttle_reasons.active --format=csv,noheader,nounits -lms 20 > $O/smi.csv &
p=$!
ts() { while IFS= read -r l; do echo "$(date '+%H:%M:%S.%N') $l"; done; }
for pass in 1 2 3; do
  echo "== pass $pass" >> $O/runs.txt
  stdbuf -oL -eL bundle/run.sh bench ops --ops add,exp,sum --dtype f32,f64 --sizes 16M,64M --min-time 0.3 --warmup 0.3 --cpu-limit 0.5 2>&1 | ts | grep -E ' (add|exp|sum) ' >> $O/runs.txt
done
kill $p
