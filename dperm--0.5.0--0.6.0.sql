-- dperm 0.5.0 -> 0.6.0. Each section below belongs to one change; keep them
-- independent (every statement must also run on a fresh 0.1.0 -> 0.6.0 chain).
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.6.0'" to load this file. \quit
