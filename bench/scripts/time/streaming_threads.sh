#!/usr/bin/env bash
# Streaming dp_newton (the delta > 0 default) on 10^6 x 8 rows: 1 and 2 training
# threads over the spill file, 0 and 2 parallel workers without it (docs/scale.md).
# Usage: flock /tmp/dperm-install.lock make install; N=1000000 pg_virtualenv -t -o shared_preload_libraries=dperm -o max_worker_processes=16 bash bench/scripts/time/streaming_threads.sh
set -e
N=${N:-1000000}
psql -X -q -c "CREATE EXTENSION dperm CASCADE" >/dev/null
feats=$(python3 -c "print(', '.join(f'0.3 * sin({k} * i + {k*k})' for k in range(1,9)))")
psql -X -q -c "SELECT setseed(0.25); CREATE TABLE s AS SELECT i AS id, ARRAY[$feats]::float8[] AS features, random() < 1 / (1 + exp(-(3 * sin(i + 1) - 2 * sin(2 * i + 4) + 1.5 * sin(3 * i + 9) - 0.5))) AS label FROM generate_series(1, $N) i" >/dev/null
psql -X -q -c "VACUUM ANALYZE s"
for r in 1 2 3; do
  for c in "scan|SELECT count(features) FROM s" \
           "newton_stream_1thread|SET dperm.training_threads = 1; SELECT dperm.train('s','features','label','logistic',dp_options(epsilon=>1,delta=>1e-6),mode=>'streaming') IS NULL" \
           "newton_stream_2threads|SELECT dperm.train('s','features','label','logistic',dp_options(epsilon=>1,delta=>1e-6),mode=>'streaming') IS NULL" \
           "newton_nospill_0workers|SET dperm.streaming_spill = off; SET max_parallel_workers_per_gather = 0; SELECT dperm.train('s','features','label','logistic',dp_options(epsilon=>1,delta=>1e-6),mode=>'streaming') IS NULL" \
           "newton_nospill_2workers|SET dperm.streaming_spill = off; SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET min_parallel_table_scan_size = 0; SELECT dperm.train('s','features','label','logistic',dp_options(epsilon=>1,delta=>1e-6),mode=>'streaming') IS NULL"; do
    name=${c%%|*}; sql=${c#*|}
    t=$(psql -X -q -At -c '\timing on' -c "$sql" | grep Time: | tail -1 | awk '{print $2}')
    echo "$r $name $t"
  done
done
