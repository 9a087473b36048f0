-- A synthetic fleet cloned from the one seed run in the database, inside the
-- database: :hosts hosts × :runs nightly runs, every case of the seed in each.
-- Written for both SQLite and PostgreSQL (the two lines marked DIALECT differ;
-- run.sh substitutes them). Deterministic: noise comes from an integer hash of
-- (host, run, case, series), not from random().
--
-- Each host h has a speed factor: 0.98–1.02 by its hash, and every 97th host
-- at 0.8 (the outliers the fleet must name). Kernels: h % 3 of three; CPU
-- models: h % 2 of two. A throughput is multiplied by the factor, a latency
-- divided; each series gets its own ±2%.
--
-- What is copied verbatim: each case's record (JSON) and the run's machine
-- (JSON); `fleet` and `trend` read the runs' columns, `series` and
-- `case_figures`, which are scaled.

CREATE TABLE synth_hosts AS
WITH RECURSIVE n(h) AS (SELECT 1 UNION ALL SELECT h + 1 FROM n WHERE h < :hosts)
SELECT h,
       CASE WHEN h % 97 = 0 THEN 0.8
            ELSE 0.98 + 0.04 * ((h * 2654435761) % 1000) / 1000.0 END AS k
FROM n;

CREATE TABLE synth_runs AS
WITH RECURSIVE n(r) AS (SELECT 1 UNION ALL SELECT r + 1 FROM n WHERE r < :runs)
SELECT h.h, n.r, h.k FROM synth_hosts h CROSS JOIN n;

INSERT INTO runs (started_ms, finished_ms, complete, ipcperf_version, command_line,
                  hostname, kernel, machine, label, cpu_model)
SELECT s.started_ms - (:runs - x.r) * 86400000 - x.h * 1000,
       s.finished_ms - (:runs - x.r) * 86400000 - x.h * 1000,
       1, s.ipcperf_version, s.command_line,
       'node' || x.h,
       CASE x.h % 3 WHEN 0 THEN '6.1.0-28-amd64' WHEN 1 THEN '6.8.0-45-generic'
                    ELSE '6.10.1' END,
       s.machine, 'scale',
       CASE x.h % 2 WHEN 0 THEN 'Xeon 8480' ELSE 'EPYC 9654' END
FROM synth_runs x CROSS JOIN runs s
WHERE s.id = 1
ORDER BY x.h, x.r;

-- The new runs' ids, by host and night.
CREATE TABLE synth_ids AS
SELECT r.id, x.h, x.r, x.k
FROM runs r JOIN synth_runs x
  ON r.hostname = 'node' || x.h
 AND r.started_ms = (SELECT started_ms FROM runs WHERE id = 1)
                    - (:runs - x.r) * 86400000 - x.h * 1000
WHERE r.id <> 1;

INSERT INTO cases (run_id, seq, workload, mechanism, mode, block_size, placement, payload,
                   status, median_bytes_per_sec, record)
SELECT i.id, c.seq, c.workload, c.mechanism, c.mode, c.block_size, c.placement, c.payload,
       c.status, c.median_bytes_per_sec * i.k, c.record
FROM synth_ids i CROSS JOIN cases c
WHERE c.run_id = 1;

INSERT INTO series (run_id, seq, n, blocks, bytes, elapsed_ns)
SELECT i.id, s.seq, s.n, s.blocks, s.bytes,
       CAST(s.elapsed_ns / i.k
            / (0.98 + 0.04 * ((i.id * 2654435761 + s.seq * 40503 + s.n * 9973) % 1000) / 1000.0)
            AS BIGINT)
FROM synth_ids i CROSS JOIN series s
WHERE s.run_id = 1;

-- DIALECT: the figures, each element scaled (a latency divided by the factor).
INSERT INTO case_figures (run_id, seq, class_key, workload, mechanism, block_size, figure_values)
SELECT i.id, f.seq, f.class_key, f.workload, f.mechanism, f.block_size,
       SCALED_FIGURES
FROM synth_ids i CROSS JOIN case_figures f
WHERE f.run_id = 1;

DROP TABLE synth_ids;
DROP TABLE synth_runs;
DROP TABLE synth_hosts;
