-- A release nested in dperm.train's read (a function the relation's view
-- calls runs dp_logreg on a budgeted table) is a release of its own, charged
-- like any: nothing of dperm.train's release reaches it.
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE nr_rows AS
  SELECT i, ARRAY[sin(i), cos(i)]::float8[] AS f, (i % 2 = 0) AS y FROM generate_series(1, 20) i;
CREATE TABLE nr_secret AS
  SELECT i, ARRAY[sin(3 * i), cos(5 * i)]::float8[] AS f, (i % 3 = 0) AS y FROM generate_series(1, 3) i;
SELECT dperm.set_budget('nr_secret', 1000, 0);
CREATE TABLE nr_models (m text);
CREATE FUNCTION nr_inner() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.nr_models
    SELECT public.dp_logreg(f, y, public.dp_options(epsilon => 1, dimension => 2))::text FROM public.nr_secret;
  RETURN true;
END $$;
-- three rows: n as nr_secret's, which the nested releases once inherited uncharged
CREATE VIEW nr_view AS SELECT f, y FROM nr_rows WHERE i <= 3 AND nr_inner();
SELECT dperm.train('nr_view', 'f', 'y', 'logistic', dp_options(epsilon => 1, dimension => 2), mode => 'in_memory') IS NOT NULL AS trained;
SELECT count(*) > 0 AS nested_models,
       count(*) = (SELECT count(*) FROM dperm.ledger WHERE relations = ARRAY['nr_secret'::regclass]) AS every_one_charged
  FROM nr_models;
SELECT count(*) AS charged_to_view FROM dperm.ledger WHERE 'nr_view'::regclass = ANY (relations);
