-- dperm 0.6.0 -> 0.7.0: the guarantee at the database boundary. Each section
-- below belongs to one change; keep them independent (every statement must
-- also run on a fresh 0.1.0 -> 0.7.0 chain). dperm--0.7.0.sql is the complete
-- script of this version (CREATE EXTENSION): what a section adds here goes
-- there too; test/upgrade.sh fails, naming the object, when the two catalogs
-- differ.
\echo Use "ALTER EXTENSION dperm UPDATE TO '0.7.0'" to load this file. \quit
